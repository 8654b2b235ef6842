"""Interpret a parsed cat Model over a base environment of guarded sets and relations.

The interpreter never knows which model it runs, nor whether guards are static (brute force,
explanations) or Z3 terms (the SMT engine): that is the relation algebra's business."""

from __future__ import annotations

from dataclasses import dataclass

import lark
import z3

from ..errors import ModelError, SourcePos
from .parser import Model, Stmt
from .relalg import ESet, Rel, cartesian, lift

Value = ESet | Rel


@dataclass
class Evaluation:
    env: dict[str, Value]
    axioms: list[tuple[Stmt, Value]]
    flags: list[tuple[Stmt, Value]]


def _names(tree) -> set[str]:
    if isinstance(tree, lark.Token):
        return {str(tree)}
    return {str(t) for t in tree.scan_values(lambda v: isinstance(v, lark.Token))}




def _needed(model: Model) -> list[Stmt]:
    """The statements the axioms depend on (flags and what only they use left out), found by a
    backward pass that respects redefinitions. Cached on the model."""
    if model.needed is None:
        need: set[str] = set()
        keep: list[Stmt] = []
        for st in reversed(model.stmts):
            if st.kind == "axiom":
                keep.append(st)
                need |= _names(st.exprs[0])
            elif st.kind in ("let", "letrec") and need & set(st.names):
                keep.append(st)
                need -= set(st.names)
                for e in st.exprs:
                    need |= _names(e)
        model.needed = list(reversed(keep))
    return model.needed


class _Scope(dict):
    """The model's definitions over the base environment (which may compute entries lazily)."""

    def __init__(self, base: dict) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, k):
        return self.base[k]

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
        ev.file = st.pos.file if st.pos else model.path
        if st.kind == "let":
            for name, expr in zip(st.names, st.exprs):
                env[name] = ev.eval(expr)
        elif st.kind == "letrec":
            _letrec(ev, st)
        elif st.kind == "axiom":
            axioms.append((st, ev.eval(st.exprs[0])))
        elif st.kind == "flag":
            flag_vals.append((st, ev.eval(st.exprs[0])))
    return Evaluation(env, axioms, flag_vals)


def _same(a: Value, b: Value) -> bool:
    if type(a) is not type(b) or a.m.keys() != b.m.keys():
        return False
    for k, g in a.m.items():
        h = b.m[k]
        if g is h:
            continue
        if isinstance(g, bool) or isinstance(h, bool):
            return False
        if not g.eq(h):  # structurally different: ask whether they are equivalent
            s = z3.Solver()
            s.add(g != h)
            if s.check() != z3.unsat:
                return False
    return True


def _letrec(ev: _Eval, st: Stmt) -> None:
    for n in st.names:
        ev.env[n] = Rel()
    n_events = len(ev.env["_"].m)
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
    out = {}
    for k, g in v.m.items():
        if not isinstance(g, bool):
            g = z3.simplify(g)
            g = True if z3.is_true(g) else False if z3.is_false(g) else g
        out[k] = g
    return type(v)(out)


class _Eval:
    def __init__(self, env: dict[str, Value], model: Model):
        self.env = env
        self.model = model
        self.file = model.path

    def err(self, node: lark.Tree, msg: str, hint: str | None = None) -> ModelError:
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

    def compile(self, node):
        """A closure evaluating ``node``: the tree is dispatched on once per model, not per run."""
        if isinstance(node, lark.Token):
            name = str(node)
            return lambda ev: ev.lookup(node, name)
        k = node.data
        ch = node.children
        if k == "name":
            name = str(ch[0])
            return lambda ev: ev.lookup(node, name)
        if k in ("union", "inter", "diff", "seq", "cart") and len(ch) == 1:
            return self.compile(ch[0])
        subs = [self.compile(c) if isinstance(c, (lark.Tree, lark.Token)) else None for c in ch]
        if k in ("union", "inter", "diff"):
            def setop(ev):
                vals = [f(ev) for f in subs]
                if len({type(v) for v in vals}) > 1:
                    vals = [ev.rel(node, v) for v in vals]
                out = vals[0]
                for v in vals[1:]:
                    out = out | v if k == "union" else out & v if k == "inter" else out - v
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
            return lambda ev: ev.rel(node, subs[0](ev)).closure() | lift(ev.env["_"])
        if k == "opt":
            return lambda ev: ev.rel(node, subs[0](ev)) | lift(ev.env["_"])
        if k == "complement":
            def complement(ev):
                v = subs[1](ev)
                u = ev.env["_"]
                return (u - v) if isinstance(v, ESet) else cartesian(u, u) - v
            return complement
        if k == "empty_rel":
            return lambda ev: Rel()
        if k == "call":
            fn = str(ch[0])
            return lambda ev: (lambda v: v.domain() if fn == "domain" else v.range())(
                ev.rel(node, subs[1](ev)))
        raise self.err(node, f"unsupported construct {k}")

    def lookup(self, node, name: str) -> Value:
        if name == "id":
            return lift(self.env["_"])
        if name in self.env:
            return self.env[name]
        import difflib

        close = difflib.get_close_matches(name, self.env.names(), n=3)
        raise self.err(node, f"unknown name '{name}'",
                       f"did you mean {', '.join(close)}?" if close else None)


__all__ = ["run", "Evaluation"]
