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


_NEEDED: dict[int, list[Stmt]] = {}


def _needed(model: Model) -> list[Stmt]:
    """The statements the axioms depend on (flags and what only they use left out), found by a
    backward pass that respects redefinitions. Cached per model."""
    key = id(model)
    if key not in _NEEDED:
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
        _NEEDED[key] = list(reversed(keep))
    return _NEEDED[key]


def run(model: Model, base: dict[str, Value], flags: bool = True) -> Evaluation:
    """Evaluate the model; ``flags=False`` evaluates only what the axioms need."""
    env = dict(base)
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
        if isinstance(node, lark.Token):
            return self.lookup(node, str(node))
        k = node.data
        ch = node.children
        if k == "name":
            return self.lookup(node, str(ch[0]))
        if k in ("union", "inter", "diff", "seq", "cart") and len(ch) == 1:
            return self.eval(ch[0])
        if k in ("union", "inter", "diff"):
            vals = [self.eval(c) for c in ch]
            if len({type(v) for v in vals}) > 1:
                vals = [self.rel(node, v) for v in vals]
            out = vals[0]
            for v in vals[1:]:
                out = out | v if k == "union" else out & v if k == "inter" else out - v
            return out
        if k == "seq":
            vals = [self.rel(node, self.eval(c)) for c in ch]
            out = vals[0]
            for v in vals[1:]:
                out = out.seq(v)
            return out
        if k == "cart":
            vals = [self.eval(c) for c in ch]
            if not all(isinstance(v, ESet) for v in vals) or len(vals) != 2:
                raise self.err(node, "cartesian product needs two sets", "write [S] ; r for a relation")
            return cartesian(vals[0], vals[1])
        if k == "lift":
            v = self.eval(ch[0])
            if not isinstance(v, ESet):
                raise self.err(node, "[...] needs a set")
            return lift(v)
        if k == "inverse":
            return self.rel(node, self.eval(ch[0])).inverse()
        if k == "plus":
            return self.rel(node, self.eval(ch[0])).closure()
        if k == "star":
            return self.rel(node, self.eval(ch[0])).closure() | lift(self.env["_"])
        if k == "opt":
            return self.rel(node, self.eval(ch[0])) | lift(self.env["_"])
        if k == "complement":
            v = self.eval(ch[1])
            u = self.env["_"]
            return (u - v) if isinstance(v, ESet) else cartesian(u, u) - v
        if k == "empty_rel":
            return Rel()
        if k == "call":
            fn = str(ch[0])
            v = self.rel(node, self.eval(ch[1]))
            return v.domain() if fn == "domain" else v.range()
        raise self.err(node, f"unsupported construct {k}")

    def lookup(self, node, name: str) -> Value:
        if name == "id":
            return lift(self.env["_"])
        if name in self.env:
            return self.env[name]
        import difflib

        close = difflib.get_close_matches(name, list(self.env), n=3)
        raise self.err(node, f"unknown name '{name}'",
                       f"did you mean {', '.join(close)}?" if close else None)


__all__ = ["run", "Evaluation"]
