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

from .._infra import larkrt
from .._infra.records import record
from ..cat import axioms as ax
from ..cat.interp import _Eval, _letrec, _Scope
from ..cat.parser import Model, Stmt
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


def _unwrap(t):
    while isinstance(t, larkrt.Tree) and t.data in ("union", "seq", "diff", "inter", "cart") \
            and len(t.children) == 1:
        t = t.children[0]
    return t


def _name_of(t) -> str | None:
    t = _unwrap(t)
    if isinstance(t, larkrt.Token):
        return str(t)
    if isinstance(t, larkrt.Tree) and t.data == "name":
        return str(t.children[0])
    return None


def _kids(t) -> list:
    return [c for c in t.children if isinstance(c, (larkrt.Tree, larkrt.Token))]


def text_of(t) -> str:
    """The cat text of an expression tree (re-printed, fully parenthesised where needed)."""
    t = _unwrap(t)
    n = _name_of(t)
    if n is not None:
        return n
    k = t.data
    ch = _kids(t)
    ops = {"union": " | ", "seq": " ; ", "diff": " \\ ", "inter": " & ", "cart": " * "}
    if k in ops:
        return ops[k].join(_paren(c) for c in ch)
    post = {"inverse": "^-1", "plus": "+", "star": "*", "opt": "?"}
    if k in post:
        return _paren(ch[0]) + post[k]
    if k == "lift":
        return f"[{text_of(ch[0])}]"
    if k == "complement":
        return "~" + _paren(ch[-1])
    if k == "empty_rel":
        return "0"
    if k == "call":
        return f"{ch[0]}({text_of(ch[1])})"
    return k


def _paren(t) -> str:
    t = _unwrap(t)
    s = text_of(t)
    if _name_of(t) is not None or t.data in ("lift", "call", "empty_rel", "inverse", "plus", "star",
                                              "opt"):
        return s
    return f"({s})"


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
    node: object = None
    at: int = 0


class Concrete:
    """A model evaluated on one concrete execution (its base environment ``base``)."""

    def __init__(self, model: Model, base):
        self.model, self.base = model, base
        self.defs: dict[str, list[int]] = {}  # name → statement indices defining it
        self.values: dict[tuple[str, int], object] = {}
        self.axioms: list[tuple[int, Stmt, object]] = []
        self.flags: list[tuple[int, Stmt, object]] = []
        env = _Scope(base)
        ev = _Eval(env, model)
        for i, st in enumerate(model.stmts):
            ev.file = st.pos.file if st.pos else model.path
            if st.kind == "let":
                for name, expr in zip(st.names, st.exprs):
                    env[name] = ev.eval(expr)
            elif st.kind == "letrec":
                _letrec(ev, st)
            if st.kind in ("let", "letrec"):
                for name in st.names:
                    self.defs.setdefault(name, []).append(i)
                    self.values[(name, i)] = env[name]
            elif st.kind == "axiom":
                self.axioms.append((i, st, ev.eval(st.exprs[0])))
            elif st.kind == "flag":
                self.flags.append((i, st, ev.eval(st.exprs[0])))
        self._scopes: dict[int, _Scope] = {}
        self._memo: dict[tuple[int, int], object] = {}
        self._grows: dict[str, bool] = {}

    # -- names and scopes ----------------------------------------------------------------------
    def def_at(self, name: str, at: int) -> int | None:
        """The statement defining ``name`` as seen from statement ``at`` (None: a base name)."""
        best = None
        for i in self.defs.get(name, ()):
            st = self.model.stmts[i]
            if i < at or (i == at and st.kind == "letrec"):
                best = i
        return best

    def scope(self, at: int) -> _Scope:
        sc = self._scopes.get(at)
        if sc is None:
            sc = _Scope(self.base)
            for (name, i), v in self.values.items():
                if i < at and (self.def_at(name, at) == i):
                    dict.__setitem__(sc, name, v)
            self._scopes[at] = sc
        return sc

    def value(self, node, at: int):
        key = (id(node), at)
        v = self._memo.get(key)
        if v is None:
            n = _name_of(node)
            if n is not None and n != "id":
                d = self.def_at(n, at)
                v = self.values[(n, d)] if d is not None else self.base[n]
            else:
                v = _Eval(self.scope(at), self.model).eval(node)
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
                if isinstance(sub, larkrt.Tree) and sub.data in ("plus", "star"):
                    out = True
                    break
                n = _name_of(sub)
                if n is not None and n != name and self.def_at(n, d) is not None and \
                        self._grows_to_closure(n, d, seen | {name}):
                    out = True
                    break
        self._grows[key] = out
        return out

    def _plain_union(self, name: str, at: int) -> bool:
        expr, _ = self.definition(name, at)
        if expr is None:
            return False
        e = _unwrap(expr)
        return isinstance(e, larkrt.Tree) and e.data == "union" and \
            all(_name_of(c) is not None for c in _kids(e))

    # -- decomposition -------------------------------------------------------------------------
    def steps(self, node, at: int, a: int, b: int, inside: bool = False,
              via: tuple[str, ...] = ()) -> list[Step] | None:
        """(a, b) of expression ``node`` (evaluated at statement ``at``) as a chain of named
        steps; None when the pair is not in it. ``inside``: within a closure's body."""
        if not self.has(node, at, a, b):
            return None
        t = _unwrap(node)
        n = _name_of(t)
        if n is not None:
            return self._name_steps(t, n, at, a, b, inside, via)
        k = t.data
        ch = _kids(t)
        if k == "lift":
            return []
        if k == "union":
            return self._union_steps(ch, at, a, b, inside, via)
        if k == "seq":
            return self._seq_steps(ch, at, a, b, inside, via)
        if k in ("inter", "diff"):
            main = ch[0] if k == "diff" else max(ch, key=_weight)
            return self.steps(main, at, a, b, inside, via)
        if k in ("plus", "star", "opt"):
            if a == b and k != "plus":
                return []
            return self._closure_steps(ch[0], at, a, b, k == "opt", via)
        if k == "inverse":
            inner = self.steps(ch[0], at, b, a, inside, via)
            return None if inner is None else \
                [Step(s.dst, s.src, s.rel + "^-1", s.via, t, at) for s in reversed(inner)]
        return [Step(a, b, text_of(t), via, t, at)]

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
            for c in _kids(_unwrap(expr)):
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
    def violated(self) -> list[tuple[int, Stmt, object]]:
        return [(i, st, v) for i, st, v in self.axioms if not ax.holds(st.check, v)]

    def witness(self, i: int, st: Stmt, v) -> tuple[str, list[Step]]:
        """The shortest witness of a violated axiom: (kind, chain of steps). Kinds: cycle
        (acyclic), reflexive (irreflexive), pair / element (empty)."""
        expr = st.exprs[0]
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


def _weight(t) -> int:
    """How much structure an operand has (the main operand of an intersection)."""
    t = _unwrap(t)
    if _name_of(t) is not None:
        return 1
    if t.data == "lift":
        return 0
    return 2 + sum(_weight(c) for c in _kids(t))


def _subtrees(t):
    yield t
    if isinstance(t, larkrt.Tree):
        if t.data == "lift":
            return
        for c in _kids(t):
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
