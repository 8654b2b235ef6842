"""Interpret a parsed cat Model over a base environment of guarded sets and relations.

The interpreter never knows which model it runs, nor whether guards are static (brute force,
explanations) or Z3 terms (the SMT engine): that is the relation algebra's business."""

from __future__ import annotations

import operator

from .._infra import larkrt
from .._infra.larkrt import token_texts
from .._infra.records import record
from ..errors import ModelError, SourcePos
from .parser import Model, Stmt
from .relalg import ESet, Rel, cartesian, identity, lift

Value = ESet | Rel


@record(frozen=False)
class Evaluation:
    env: dict[str, Value]
    axioms: list[tuple[Stmt, Value]]
    flags: list[tuple[Stmt, Value]]


def _needed(model: Model) -> list[Stmt]:
    """The statements the axioms depend on (flags and what only they use left out). Cached."""
    if model.needed is None:
        model.needed = _backward(model.stmts, set(), axioms=True)
    return model.needed


def _backward(stmts: list[Stmt], need: set[str], axioms: bool) -> list[Stmt]:
    """The statements that the names in ``need`` (and, with ``axioms``, every axiom) depend on,
    found by a backward pass that respects redefinitions."""
    keep: list[Stmt] = []
    for st in reversed(stmts):
        if st.kind == "axiom" and axioms:
            keep.append(st)
            need |= token_texts(st.exprs[0])
        elif st.kind in ("let", "letrec") and need & set(st.names):
            keep.append(st)
            need -= set(st.names)
            for e in st.exprs:
                need |= token_texts(e)
    return list(reversed(keep))


def evaluate_expr(model: Model, base: dict[str, Value], expr, at: int) -> Value:
    """The value of one expression of statement ``at`` of the model (e.g. an axiom's operand),
    evaluating only the definitions before it that it needs."""
    env = _Scope(base)
    ev = _Eval(env, model)
    for st in _backward(model.stmts[:at], set(token_texts(expr)), axioms=False):
        _run_stmt(ev, env, st)
    return ev.eval(expr)


def _run_stmt(ev: _Eval, env: _Scope, st: Stmt) -> None:
    ev.file = st.pos.file if st.pos else ev.model.path
    if st.kind == "let":
        for name, expr in zip(st.names, st.exprs):
            env[name] = ev.eval(expr)
    elif st.kind == "letrec":
        _letrec(ev, st)


class _Scope(dict):
    """The model's definitions over the base environment (which may compute entries lazily)."""

    def __init__(self, base: dict) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, k):
        v = self[k] = self.base[k]  # kept: the next lookup of a base name is one dict hit
        return v

    def __contains__(self, k) -> bool:
        return dict.__contains__(self, k) or k in self.base

    def names(self) -> list[str]:
        base = self.base.names() if hasattr(self.base, "names") else list(self.base)
        return list(self.keys()) + base


def run(model: Model, base: dict[str, Value], flags: bool = True) -> Evaluation:
    """Evaluate the model; ``flags=False`` evaluates only what the axioms need."""
    env = _Scope(base)
    axioms: list[tuple[Stmt, Value]] = []
    flag_vals: list[tuple[Stmt, Value]] = []
    ev = _Eval(env, model)
    for st in model.stmts if flags else _needed(model):
        _run_stmt(ev, env, st)
        if st.kind == "axiom":
            axioms.append((st, ev.eval(st.exprs[0])))
        elif st.kind == "flag":
            flag_vals.append((st, ev.eval(st.exprs[0])))
    return Evaluation(env, axioms, flag_vals)


def _same(a: Value, b: Value) -> bool:
    if type(a) is not type(b) or a.must != b.must or a.may.keys() != b.may.keys():
        return False
    lg = a.u.lg
    return all(g is b.may[k] or lg.equivalent(g, b.may[k]) for k, g in a.may.items())


def _letrec(ev: _Eval, st: Stmt) -> None:
    u = ev.env["_"].u
    for n in st.names:
        ev.env[n] = Rel(u)
    n_events = len(ev.env["_"])
    # Kleene iteration; symbolic guards are simplified so that a semantic fixed point is seen as
    # a structural one. n^2 + 1 rounds always reach the least fixed point of a relation.
    for _ in range(n_events * n_events + 2):
        new = [_simplified(ev.eval(e)) for e in st.exprs]
        if all(_same(ev.env[n], v) for n, v in zip(st.names, new)):
            return
        for n, v in zip(st.names, new):
            ev.env[n] = v
    raise ModelError("let rec did not reach a fixed point", st.pos)


def _simplified(v: Value) -> Value:
    if not v.may:
        return v
    simp = v.u.lg.simplify
    return type(v).of(v.u, dict(v.items()) | {k: simp(g) for k, g in v.may.items()})


class _Eval:
    def __init__(self, env: dict[str, Value], model: Model):
        self.env = env
        self.model = model
        self.file = model.path

    def err(self, node: larkrt.Tree, msg: str, hint: str | None = None) -> ModelError:
        pos = None
        if not node.meta.empty:
            pos = SourcePos(self.file, node.meta.line, node.meta.column)
        return ModelError(msg, pos, hint)

    def rel(self, node, v: Value) -> Rel:
        return lift(v) if isinstance(v, ESet) else v

    def eval(self, node) -> Value:
        cache = self.model.compiled  # the model owns its trees, so node ids are stable
        fn = cache.get(id(node))
        if fn is None:
            fn = cache[id(node)] = self.compile(node)
        return fn(self)

    def compile(self, node):  # noqa: C901 — one branch per operator of the cat grammar, side by side
        """A closure evaluating ``node``: the tree is dispatched on once per model, not per run."""
        if isinstance(node, larkrt.Token) or node.data == "name":
            return self._name(node, str(node if isinstance(node, larkrt.Token) else node.children[0]))
        k = node.data
        ch = node.children
        if k in ("union", "inter", "diff", "seq", "cart") and len(ch) == 1:
            return self.compile(ch[0])
        subs = [self.compile(c) if isinstance(c, (larkrt.Tree, larkrt.Token)) else None for c in ch]
        if k in ("union", "inter", "diff"):
            op = {"union": operator.or_, "inter": operator.and_, "diff": operator.sub}[k]

            def setop(ev):
                vals = [f(ev) for f in subs]
                t = type(vals[0])
                if any(type(v) is not t for v in vals):
                    vals = [ev.rel(node, v) for v in vals]
                out = vals[0]
                for v in vals[1:]:
                    out = op(out, v)
                return out
            return setop
        if k == "seq":
            def seq(ev):
                out = ev.rel(node, subs[0](ev))
                for f in subs[1:]:
                    out = out.seq(ev.rel(node, f(ev)))
                return out
            return seq
        if k == "cart":
            def cart(ev):
                vals = [f(ev) for f in subs]
                if not all(isinstance(v, ESet) for v in vals) or len(vals) != 2:
                    raise ev.err(node, "cartesian product needs two sets", "write [S] ; r for a relation")
                return cartesian(vals[0], vals[1])
            return cart
        if k == "lift":
            def lifted(ev):
                v = subs[0](ev)
                if not isinstance(v, ESet):
                    raise ev.err(node, "[...] needs a set")
                return lift(v)
            return lifted
        if k == "inverse":
            return lambda ev: ev.rel(node, subs[0](ev)).inverse()
        if k == "plus":
            return lambda ev: ev.rel(node, subs[0](ev)).closure()
        if k == "star":
            return lambda ev: ev.rel(node, subs[0](ev)).closure() | identity(ev.env["_"].u)
        if k == "opt":
            return lambda ev: ev.rel(node, subs[0](ev)) | identity(ev.env["_"].u)
        if k == "complement":
            def complement(ev):
                v = subs[1](ev)
                u = ev.env["_"]
                return (u - v) if isinstance(v, ESet) else cartesian(u, u) - v
            return complement
        if k == "empty_rel":
            return lambda ev: Rel(ev.env["_"].u)
        if k == "call":
            fn = str(ch[0])
            return lambda ev: (lambda v: v.domain() if fn == "domain" else v.range())(
                ev.rel(node, subs[1](ev)))
        raise self.err(node, f"unsupported construct {k}")

    @staticmethod
    def _name(node, name: str):
        if name == "id":
            return lambda ev: identity(ev.env["_"].u)

        def lookup(ev):
            try:
                return ev.env[name]
            except KeyError:
                return ev.lookup(node, name)
        return lookup

    def lookup(self, node, name: str) -> Value:
        try:
            return self.env[name]
        except KeyError:
            pass
        import difflib

        close = difflib.get_close_matches(name, self.env.names(), n=3)
        raise self.err(node, f"unknown name '{name}'",
                       f"did you mean {', '.join(close)}?" if close else None)


__all__ = ["run", "evaluate_expr", "Evaluation"]
