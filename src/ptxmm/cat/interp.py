"""Interpret a parsed cat Model over a base environment of guarded sets and relations.

The interpreter never knows which model it runs, nor whether guards are static (brute force,
explanations) or Z3 terms (the SMT engine): that is the relation algebra's business."""

from __future__ import annotations

import operator

from .._infra.records import record
from ..errors import ModelError, SourcePos
from .ast import (
    Axiom,
    Cart,
    Complement,
    Diff,
    Domain,
    EmptyRel,
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
    names,
)
from .demand import closure_demands
from .fence_order import fence_closure, licensed
from .parser import Model
from .relalg import ESet, Rel, cartesian, identity, lift

Value = ESet | Rel

# run(..., demand=True) (the Z3 engine's problems): each closure computes the guards of the pairs
# the axioms and flags can read only (cat/demand.py); False: every closure whole (the property
# tests compare the two: tests/engines/test_grid_demand.py).
DEMAND_CLOSURES = True
# Past this many executable events the demand is not computed (every closure whole): its bitset
# algebra composes through every event, and on big graphs it costs more than the closure work it
# saves. Measured (session 20, the lead, after the merge of s20-grid): the __syncthreads exchange
# (static closures, nothing to save) at 256 / 512 / 1,024 threads, 2,560 / 4,096 / 7,168 events:
# the whole check 1.2 → 4.3 s, 2.7 → 16.5 s, 7.0 → 69 s with the demand; the grid barrier at 16
# blocks (274 events), where it pays, is far below.
DEMAND_MAX_EVENTS = 1024


@record(frozen=False)
class Evaluation:
    env: dict[str, Value]
    axioms: list[tuple[Axiom, Value]]
    flags: list[tuple[Flag, Value]]
    # the fence.sc fences a closure was computed through (cat/fence_order.py), 0: none
    fenced: int = 0


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
        if isinstance(st, Axiom) and axioms:
            keep.append(st)
            need |= names(st.expr)
        elif isinstance(st, (Let, LetRec)) and need & set(st.names):
            keep.append(st)
            need -= set(st.names)
            for e in st.exprs:
                need |= names(e)
    return list(reversed(keep))


def evaluate_expr(model: Model, base: dict[str, Value], expr: Expr, at: int) -> Value:
    """The value of one expression of statement ``at`` of the model (e.g. an axiom's operand),
    evaluating only the definitions before it that it needs."""
    env = Scope(base)
    ev = Eval(env, model)
    for st in _backward(model.stmts[:at], names(expr), axioms=False):
        run_stmt(ev, env, st)
    return ev.eval(expr)


def run_stmt(ev: Eval, env: Scope, st: Stmt) -> None:
    """Bind the names a ``let`` or ``let rec`` defines (other statements bind nothing)."""
    ev.file = st.pos.file if st.pos else ev.model.path
    match st:
        case Let():
            for b in st.bindings:
                env[b.name] = ev.eval(b.expr)
        case LetRec():
            letrec(ev, st)


class Scope(dict):
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


def run(model: Model, base: dict[str, Value], flags: bool = True, demand: bool = False,
        fence_order: bool = False) -> Evaluation:
    """Evaluate the model; ``flags=False`` evaluates only what the axioms need. ``demand`` (with
    :data:`DEMAND_CLOSURES`): the closures compute only the guarded pairs the axioms and flags can
    read (the values of the axioms and flags are the same; cat/demand.py). ``fence_order``: the
    caller asserts every axiom of the model, so a closure Fence-SC collapses may be computed
    through the fence order (the same allowed executions and flags; cat/fence_order.py)."""
    env = Scope(base)
    axioms: list[tuple[Axiom, Value]] = []
    flag_vals: list[tuple[Flag, Value]] = []
    ev = Eval(env, model)
    ev.fence_order = fence_order
    stmts = model.stmts if flags else _needed(model)
    if demand and DEMAND_CLOSURES:
        ev.demand = _demands(model, stmts, base)
    for st in stmts:
        run_stmt(ev, env, st)
        if isinstance(st, Axiom):
            axioms.append((st, ev.eval(st.expr)))
        elif isinstance(st, Flag):
            flag_vals.append((st, ev.eval(st.expr)))
    return Evaluation(env, axioms, flag_vals, ev.fenced)


def _demands(model: Model, stmts: list[Stmt], base) -> dict | None:
    """Each closure node's demand (cat/demand.py); None (every pair everywhere) where the model
    cannot be read so (an unknown name, a set where a relation is needed: the evaluation itself
    then says what is wrong) or the graph is past :data:`DEMAND_MAX_EVENTS`."""
    try:
        live = base["_"].u.live
        return closure_demands(stmts, base, live) if live.bit_count() <= DEMAND_MAX_EVENTS else None
    except (KeyError, TypeError, AttributeError, ValueError):
        return None


def _fence_or_plain(ev: Eval, node: Plus, r: Rel) -> Rel:
    out = fence_closure(ev, r, ev.wanted(node)) if ev.fence_order else None
    if out is None:
        return r.closure(ev.wanted(node))
    if out.may:  # guarded pairs through the fence order (none: po alone, nothing saved)
        ev.fenced = max(ev.fenced, ev.env["Fsc"].must.bit_count())
    return out


def _same(a: Value, b: Value) -> bool:
    if type(a) is not type(b) or a.must != b.must or a.may.keys() != b.may.keys():
        return False
    lg = a.u.lg
    return all(g is b.may[k] or lg.equivalent(g, b.may[k]) for k, g in a.may.items())


def letrec(ev: Eval, st: LetRec) -> None:
    """Bind the names of a ``let rec`` to their least fixed point."""
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


class Eval:
    """Expressions evaluated over an environment, each compiled once per model to a closure."""

    def __init__(self, env: dict[str, Value], model: Model):
        self.env = env
        self.model = model
        self.file = model.path
        self.demand: dict | None = None  # id(closure node) → its demand (run's demand)
        self.fence_order = False  # run(..., fence_order=True): every axiom is asserted
        self.fenced = 0  # the fences of a closure computed through their order (Evaluation.fenced)

    def wanted(self, node: Expr):
        """The demand of a closure node (None: every pair)."""
        if self.demand is None:
            return None
        d = self.demand.get(id(node))
        return d if isinstance(d, dict) else None

    def err(self, node: Expr, msg: str, hint: str | None = None) -> ModelError:
        pos = None if node.pos is None else SourcePos(self.file, *node.pos)
        return ModelError(msg, pos, hint)

    def rel(self, node, v: Value) -> Rel:
        return lift(v) if isinstance(v, ESet) else v

    def eval(self, node: Expr) -> Value:
        cache = self.model.compiled  # the model owns its expressions, so node ids are stable
        fn = cache.get(id(node))
        if fn is None:
            fn = cache[id(node)] = self.compile(node)
        return fn(self)

    def compile(self, node: Expr):
        """A closure evaluating ``node``: the expression is dispatched on once per model, not per
        run."""
        match node:
            case Name(name=name):
                return self._name(node, name)
            case Union() | Inter() | Diff():
                return _setop(node, [self.compile(c) for c in node.args])
            case Seq():
                return _seq(node, [self.compile(c) for c in node.args])
            case Cart():
                return _cart(node, [self.compile(c) for c in node.args])
            case EmptyRel():
                return lambda ev: Rel(ev.env["_"].u)
        sub = self.compile(node.arg)
        match node:
            case Lift():
                return _lifted(node, sub)
            case Inverse():
                return lambda ev: ev.rel(node, sub(ev)).inverse()
            case Plus():
                if id(node) in licensed(self.model):  # Fence-SC collapses it (cat/fence_order.py)
                    return lambda ev: _fence_or_plain(ev, node, ev.rel(node, sub(ev)))
                return lambda ev: ev.rel(node, sub(ev)).closure(ev.wanted(node))
            case Star():
                return lambda ev: ev.rel(node, sub(ev)).closure(ev.wanted(node)) | identity(ev.env["_"].u)
            case Opt():
                return lambda ev: ev.rel(node, sub(ev)) | identity(ev.env["_"].u)
            case Complement():
                return _complement(sub)
            case Domain():
                return lambda ev: ev.rel(node, sub(ev)).domain()
            case Range():
                return lambda ev: ev.rel(node, sub(ev)).range()
        raise self.err(node, f"unsupported construct {type(node).__name__}")

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


_SETOPS = {Union: operator.or_, Inter: operator.and_, Diff: operator.sub}


def _setop(node: Union | Inter | Diff, subs: list):
    op = _SETOPS[type(node)]

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


def _seq(node: Seq, subs: list):
    def seq(ev):
        out = ev.rel(node, subs[0](ev))
        for f in subs[1:]:
            out = out.seq(ev.rel(node, f(ev)))
        return out
    return seq


def _cart(node: Cart, subs: list):
    def cart(ev):
        vals = [f(ev) for f in subs]
        if not all(isinstance(v, ESet) for v in vals) or len(vals) != 2:
            raise ev.err(node, "cartesian product needs two sets", "write [S] ; r for a relation")
        return cartesian(vals[0], vals[1])
    return cart


def _lifted(node: Lift, sub):
    def lifted(ev):
        v = sub(ev)
        if not isinstance(v, ESet):
            raise ev.err(node, "[...] needs a set")
        return lift(v)
    return lifted


def _complement(sub):
    def complement(ev):
        v = sub(ev)
        u = ev.env["_"]
        return (u - v) if isinstance(v, ESet) else cartesian(u, u) - v
    return complement


__all__ = ["run", "run_stmt", "evaluate_expr", "Evaluation", "Scope", "Eval", "letrec"]
