"""The concrete side of explanations: a cat model evaluated on ONE candidate execution, with the
value of every named relation at every point of the model (a name may be redefined), the shortest
witness of each violated axiom, and each witness edge decomposed into the model's named relations.

Everything here is model-blind: names, definitions and their comments come from the cat file.

How a pair (a, b) of an expression is written as a chain of named edges (:meth:`Concrete.steps`):
 - ``r1 ; r2`` goes through an intermediate event, ``r1 | r2`` takes the alternative with the
   shortest chain, ``r1 & r2`` / ``r1 \\ r2`` follow their most structured operand (the others are
   conditions), ``[S]`` is no step, ``r^-1`` a reversed step;
 - a transitive closure ``r+`` / ``r*`` becomes a shortest path of ``r`` steps, and inside it the
   names of ``r``'s alternatives are the edges (``bco = (po | sync)+`` gives po and sync edges);
 - outside closures, a derived name is unfolded when its definition leads to a closure
   (cause → ppcb → bco); one that does not (fr, sync-pat, obs1) is an edge of its own, and a name
   defined as a plain union of names (com = rf | co | fr, dep) is the alternative that holds.
Each derived edge can then be unfolded one level (:meth:`Concrete.unfold`) for the words."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from .._infra.records import record
from ..cat import axioms as ax
from ..cat.ast import (
    Axiom,
    Complement,
    Diff,
    Domain,
    Expr,
    Flag,
    Inter,
    Inverse,
    Let,
    LetRec,
    Lift,
    Name,
    Opt,
    Plus,
    Range,
    Seq,
    Star,
    Stmt,
    Union,
    children,
    name_of,
    text_of,
)
from ..cat.interp import Eval, Scope, run_stmt
from ..cat.parser import Model
from ..cat.relalg import ESet, Rel, bits

Pair = tuple[int, int]

# Words for the engine's base vocabulary (every model gets these names, vocab.py).
BASE_WORDS = {
    "po": "program order", "rf": "reads from", "co": "coherence order", "rmw": "read-modify-write",
    "addr": "address dependency", "data": "data dependency", "ctrl": "control dependency",
    "loc": "same location", "vloc": "same virtual address", "int": "same thread",
    "ext": "different threads", "sr": "strong, in each other's scope", "scta": "same CTA",
    "scluster": "same cluster", "sgpu": "same GPU", "scorder": "the order of fence.sc events",
    "sync_fence": "fence.sc order in scope", "sync_barrier": "barrier arrive before wait",
    "exit_barrier": "an exiting thread's events before the barrier wait its exit releases",
    "id": "the same event",
}
# Short readings of names the bundled PTX models define (used only when a model defines the name;
# a user model's own comments are used otherwise).
KNOWN_WORDS = {
    "fr": "from-read: reads a value co-before", "com": "communication", "ms": "morally strong",
    "obs": "observation", "obs1": "observation (one step)", "relpat": "release pattern",
    "acqpat": "acquire pattern", "sync": "synchronizes with", "sync-pat": "release pattern "
    "synchronizes with an acquire pattern", "sc": "Fence-SC order", "bco": "base causality order",
    "cause": "causality order", "ppcb": "proxy-preserved base causality", "po-loc":
    "program order, same address", "dep": "dependency", "conflict": "conflicting accesses",
    "sync-bar": "barrier synchronization",
}


@cache
def _file_lines(path: str) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text().splitlines())
    except OSError:
        return ()


def comment_before(st: Stmt) -> str:
    """The comment right above a statement in its cat file (decorations stripped), or ''."""
    if st.pos is None:
        return ""
    lines = _file_lines(st.pos.file)
    i = st.pos.line - 2
    if i < 0 or i >= len(lines) or not lines[i].rstrip().endswith("*)"):
        return ""
    block = [lines[i]]
    while "(*" not in block[0] and i > 0:
        i -= 1
        block.insert(0, lines[i])
    text = " ".join(x.strip() for x in block)
    text = text[text.rfind("(*") + 2:]
    text = text.replace("*)", "").strip(" -")
    return re.sub(r"\s+", " ", text).strip(" -")


@record
class Step:
    """One edge of a chain: ``src —rel→ dst`` (``rel`` a name of the model or its base vocabulary,
    or ``name^-1``); ``via`` lists the derived relations unfolded to reach it (outermost first);
    ``node``/``at`` locate the expression it was read from (for re-checking)."""

    src: int
    dst: int
    rel: str
    via: tuple[str, ...] = ()
    node: Expr | None = None
    at: int = 0


class Concrete:
    """A model evaluated on one concrete execution (its base environment ``base``)."""

    def __init__(self, model: Model, base):
        self.model, self.base = model, base
        self.defs: dict[str, list[int]] = {}  # name → statement indices defining it
        self.values: dict[tuple[str, int], object] = {}
        self.axioms: list[tuple[int, Axiom, object]] = []
        self.flags: list[tuple[int, Flag, object]] = []
        env = Scope(base)
        ev = Eval(env, model)
        for i, st in enumerate(model.stmts):
            run_stmt(ev, env, st)
            match st:
                case Let() | LetRec():
                    for name in st.names:
                        self.defs.setdefault(name, []).append(i)
                        self.values[(name, i)] = env[name]
                case Axiom():
                    self.axioms.append((i, st, ev.eval(st.expr)))
                case Flag():
                    self.flags.append((i, st, ev.eval(st.expr)))
        self._scopes: dict[int, Scope] = {}
        self._memo: dict[tuple[int, int], object] = {}
        self._grows: dict[str, bool] = {}

    # -- names and scopes ----------------------------------------------------------------------
    def def_at(self, name: str, at: int) -> int | None:
        """The statement defining ``name`` as seen from statement ``at`` (None: a base name)."""
        best = None
        for i in self.defs.get(name, ()):
            st = self.model.stmts[i]
            if i < at or (i == at and isinstance(st, LetRec)):
                best = i
        return best

    def scope(self, at: int) -> Scope:
        sc = self._scopes.get(at)
        if sc is None:
            sc = Scope(self.base)
            for (name, i), v in self.values.items():
                if i < at and (self.def_at(name, at) == i):
                    dict.__setitem__(sc, name, v)
            self._scopes[at] = sc
        return sc

    def value(self, node, at: int):
        key = (id(node), at)
        v = self._memo.get(key)
        if v is None:
            n = name_of(node)
            if n is not None and n != "id":
                d = self.def_at(n, at)
                v = self.values[(n, d)] if d is not None else self.base[n]
            else:
                v = Eval(self.scope(at), self.model).eval(node)
            self._memo[key] = v
        return v

    def definition(self, name: str, at: int):
        d = self.def_at(name, at)
        if d is None:
            return None, None
        st = self.model.stmts[d]
        return st.exprs[st.names.index(name)], d

    def doc(self, name: str, at: int) -> str:
        """Words for a name: the comment above its definition, a known reading, or ''."""
        d = self.def_at(name, at)
        if d is None:
            return BASE_WORDS.get(name, "")
        return KNOWN_WORDS.get(name) or comment_before(self.model.stmts[d])

    # -- membership ----------------------------------------------------------------------------
    def has(self, node, at: int, a: int, b: int) -> bool:
        v = self.value(node, at)
        if isinstance(v, ESet):
            return a == b and v.guard(a) is True
        return v.guard(a, b) is True

    def succ(self, node, at: int) -> dict[int, list[int]]:
        v = self.value(node, at)
        if isinstance(v, ESet):
            return {e: [e] for e in bits(v.must)}
        return {a: list(bits(r)) for a, r in v.must.items()}

    def _grows_to_closure(self, name: str, at: int, seen: frozenset = frozenset()) -> bool:
        """Whether a derived name's definition leads (through names) to a transitive closure."""
        key = f"{name}@{at}"
        if key in self._grows:
            return self._grows[key]
        expr, d = self.definition(name, at)
        out = False
        if expr is not None and name not in seen:
            for sub in _subtrees(expr):
                if isinstance(sub, (Plus, Star)):
                    out = True
                    break
                n = name_of(sub)
                if n is not None and n != name and self.def_at(n, d) is not None and \
                        self._grows_to_closure(n, d, seen | {name}):
                    out = True
                    break
        self._grows[key] = out
        return out

    def _plain_union(self, name: str, at: int) -> bool:
        expr, _ = self.definition(name, at)
        return isinstance(expr, Union) and all(isinstance(c, Name) for c in expr.args)

    # -- decomposition -------------------------------------------------------------------------
    def steps(self, node, at: int, a: int, b: int, inside: bool = False,
              via: tuple[str, ...] = ()) -> list[Step] | None:
        """(a, b) of expression ``node`` (evaluated at statement ``at``) as a chain of named
        steps; None when the pair is not in it. ``inside``: within a closure's body."""
        if not self.has(node, at, a, b):
            return None
        match node:
            case Name(name=n):
                return self._name_steps(node, n, at, a, b, inside, via)
            case Lift():
                return []
            case Union(args=ch):
                return self._union_steps(ch, at, a, b, inside, via)
            case Seq(args=ch):
                return self._seq_steps(ch, at, a, b, inside, via)
            case Diff(args=ch):
                return self.steps(ch[0], at, a, b, inside, via)
            case Inter(args=ch):
                return self.steps(max(ch, key=_weight), at, a, b, inside, via)
            case Plus() | Star() | Opt():
                if a == b and not isinstance(node, Plus):
                    return []
                return self._closure_steps(node.arg, at, a, b, isinstance(node, Opt), via)
            case Inverse(arg=inner_expr):
                inner = self.steps(inner_expr, at, b, a, inside, via)
                return None if inner is None else \
                    [Step(s.dst, s.src, s.rel + "^-1", s.via, node, at) for s in reversed(inner)]
        return [Step(a, b, text_of(node), via, node, at)]

    def _union_steps(self, ch: list, at: int, a: int, b: int, inside: bool,
                     via: tuple[str, ...]) -> list[Step] | None:
        """The shortest chain of any branch of a union."""
        best = None
        for c in ch:
            s = self.steps(c, at, a, b, inside, via)
            if s is not None and (best is None or len(s) < len(best)):
                best = s
        return best

    def _name_steps(self, t, n: str, at: int, a: int, b: int, inside: bool,
                    via: tuple[str, ...]) -> list[Step]:
        if n == "id":
            return []
        expr, d = self.definition(n, at)
        if expr is None:  # base vocabulary
            return [Step(a, b, n, via, t, at)]
        if not inside and self._plain_union(n, at):
            for c in expr.args:
                s = self.steps(c, d, a, b, inside, via)
                if s is not None:
                    return s
        if inside or not self._grows_to_closure(n, at):
            if a == b and isinstance(self.value(t, at), ESet):
                return []
            return [Step(a, b, n, via, t, at)]
        s = self.steps(expr, d, a, b, False, via + (n,))
        assert s is not None
        return s

    def _seq_steps(self, ch: list, at: int, a: int, b: int, inside: bool,
                   via: tuple[str, ...]) -> list[Step] | None:
        """A shortest chain through ``r1 ; r2 ; ...``: forward layers from a, backward from b."""
        k = len(ch)
        back = [set() for _ in range(k + 1)]
        back[k] = {b}
        for i in range(k - 1, -1, -1):
            sc = self.succ(ch[i], at)
            back[i] = {x for x, ys in sc.items() if any(y in back[i + 1] for y in ys)}
        if a not in back[0]:
            return None
        out: list[Step] = []
        cur = a
        for i in range(k):
            sc = self.succ(ch[i], at)
            opts = [y for y in sc.get(cur, ()) if y in back[i + 1]]
            best = None
            for y in sorted(opts, key=lambda y: (y != cur, y)):
                s = self.steps(ch[i], at, cur, y, inside, via)
                if s is not None and (best is None or len(s) < len(best[1])):
                    best = (y, s)
            assert best is not None
            cur = best[0]
            out += best[1]
        return out

    def _closure_steps(self, body, at: int, a: int, b: int, once: bool,
                       via: tuple[str, ...]) -> list[Step] | None:
        sc = self.succ(body, at)
        path = [a, b] if once else _shortest_path(sc, a, b)
        if path is None:
            return None
        out: list[Step] = []
        for x, y in zip(path, path[1:]):
            s = self.steps(body, at, x, y, True, via)
            assert s is not None
            out += s
        return out

    # -- witnesses -----------------------------------------------------------------------------
    def violated(self) -> list[tuple[int, Axiom, object]]:
        return [(i, st, v) for i, st, v in self.axioms if not ax.holds(st.check, v)]

    def witness(self, i: int, st: Axiom, v) -> tuple[str, list[Step]]:
        """The shortest witness of a violated axiom: (kind, chain of steps). Kinds: cycle
        (acyclic), reflexive (irreflexive), pair / element (empty)."""
        expr = st.expr
        if isinstance(v, ESet):
            e = next(iter(bits(v.must)))
            return "element", [Step(e, e, text_of(expr), (), expr, i)]
        if st.check == "empty":
            cands = [p for p in v.pairs()]
            kind = "pair"
        elif st.check == "irreflexive":
            cands = [(a, a) for a in v.must if (v.must[a] >> a) & 1]
            kind = "reflexive"
        else:
            return "cycle", self._cycle(expr, i, v)
        best = None
        for a, b in cands:
            s = self.steps(expr, i, a, b)
            if s is not None and (best is None or len(s) < len(best)):
                best = s
        return kind, best or []

    def _cycle(self, expr, at: int, v: Rel) -> list[Step]:
        succ = {a: list(bits(r)) for a, r in v.must.items()}
        best: list[int] | None = None
        for a in succ:
            if a in succ.get(a, ()):
                best = [a, a]
                break
            p = _shortest_cycle(succ, a)
            if p is not None and (best is None or len(p) < len(best)):
                best = p
        assert best is not None
        out: list[Step] = []
        for x, y in zip(best, best[1:]):
            s = self.steps(expr, at, x, y)
            assert s is not None
            out += s
        return out

    def unfold(self, step: Step) -> tuple[str, list[Step]] | None:
        """A derived edge one level down: (its definition's text, the chain through it with the
        definition's own names as edges); None for base relations."""
        name = step.rel[:-3] if step.rel.endswith("^-1") else step.rel
        expr, d = self.definition(name, step.at)
        if expr is None:
            return None
        a, b = (step.dst, step.src) if step.rel.endswith("^-1") else (step.src, step.dst)
        s = self.steps(expr, d, a, b, inside=True)
        return text_of(expr), s or []


def _weight(t: Expr) -> int:
    """How much structure an operand has (the main operand of an intersection)."""
    if isinstance(t, Name):
        return 1
    if isinstance(t, Lift):
        return 0
    # the operator's written token (~, the postfix *, domain, range) counted as a name, as ever
    token = isinstance(t, (Complement, Star, Domain, Range))
    return 2 + token + sum(_weight(c) for c in children(t))


def _subtrees(t: Expr):
    """``t`` and its subexpressions, not looking inside ``[S]``."""
    yield t
    if not isinstance(t, Lift):
        for c in children(t):
            yield from _subtrees(c)


def _graph(succ: dict[int, list[int]]):
    import networkx as nx  # lazily: only explanations walk paths

    g = nx.DiGraph()
    g.add_nodes_from(succ)
    g.add_edges_from((a, b) for a, bs in succ.items() for b in bs)
    return g


def _shortest_path(succ: dict[int, list[int]], a: int, b: int) -> list[int] | None:
    """A shortest path of at least one edge from ``a`` to ``b`` (a cycle when ``a == b``)."""
    import networkx as nx

    g = _graph(succ)
    if a != b:
        return nx.shortest_path(g, a, b) if a in g and b in g and nx.has_path(g, a, b) else None
    best = None
    for y in sorted(succ.get(a, ())):
        if nx.has_path(g, y, a):
            p = [a] + nx.shortest_path(g, y, a)
            if best is None or len(p) < len(best):
                best = p
    return best


def _shortest_cycle(succ: dict[int, list[int]], a: int) -> list[int] | None:
    return _shortest_path(succ, a, a)


def pairs_of(v) -> list[Pair]:
    if isinstance(v, ESet):
        return [(e, e) for e in bits(v.must)]
    return list(v.pairs())
