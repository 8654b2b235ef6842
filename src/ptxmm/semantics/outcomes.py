"""Observables, outcomes and verdicts: what an execution shows and what the test asks of it.

An outcome records registers loaded into and the final values of written locations (or only
what the condition names). Each observable has a PTX type: its value is shown unsigned for
.u/.b types and two's-complement signed for .s types, and the condition compares at that width
and signedness (``T0:%r0 == -1`` on a .u32 register means 0xFFFFFFFF)."""

from __future__ import annotations

from collections.abc import Callable

from .._infra.records import record
from ..errors import SemanticError
from ..ir.program import (
    And,
    Atom,
    Cmp,
    CondExpr,
    Load,
    MemRef,
    Not,
    Or,
    Program,
    Red,
    RegRef,
    Store,
    Sym,
    cond_refs,
    format_ref,
    type_signed,
    type_width,
)
from ..ir.values import BOOL_OPS, Expr, Op, ReadVal, Unspec, evaluate, mask, to_signed
from .events import EventGraph, Kind, final_reg, reg_type
from .result import Execution, Outcome


@record
class Observable:
    key: str
    ref: RegRef | MemRef
    type: str = "u32"
    thread: int = -1  # register observables: the thread's index
    loc: str | None = None  # memory observables: the physical location

    @property
    def width(self) -> int:
        return type_width(self.type)

    @property
    def signed(self) -> bool:
        return type_signed(self.type)

    def shown(self, v: int) -> int:
        """An unsigned machine value as the outcome shows it."""
        return to_signed(v, self.width) if self.signed else mask(v, self.width)


def _loaded_regs(p: Program) -> list[RegRef]:
    refs = []
    for t in p.threads:
        seen: list[str] = []
        for ins in t.instrs:
            if isinstance(ins, (Load, Atom)) and ins.dst.name not in seen:
                seen.append(ins.dst.name)
        refs += [RegRef(t.name, r) for r in seen]
    return refs


def _written_locs(p: Program, eg: EventGraph) -> list[MemRef]:
    written: list[str] = []
    for t in p.threads:
        for ins in t.instrs:
            if isinstance(ins, (Store, Atom, Red)) and isinstance(ins.addr.base, Sym):
                loc = p.location(ins.addr.base.name)
                name = p.physical(loc.name)
                if name not in written:
                    written.append(name)
    return [MemRef(n) for n in written if len(eg.loc_of_name.get(n, ())) == 1]


def observables(eg: EventGraph, scope: str = "all") -> list[Observable]:
    """What an outcome records: registers loaded into (ld/atom destinations) and final values of
    locations written by the program (``scope="all"``), plus everything the condition names."""
    p = eg.program
    refs: list = (_loaded_regs(p) + _written_locs(p, eg)) if scope == "all" else []
    if p.condition is not None:
        for r in cond_refs(p.condition.expr):
            r = canonical(p, eg, r)
            if r not in refs:
                refs.append(r)
    out = []
    for r in refs:
        if isinstance(r, RegRef):
            t = eg.thread_of(r.thread)
            out.append(Observable(format_ref(r), r, reg_type(eg, t, r.reg), thread=t))
            continue
        plocs = eg.loc_of_name.get(r.loc, ())
        if len(plocs) != 1:
            raise SemanticError(f"location {r.loc} has one copy per CTA; the condition cannot "
                                "name its final value", None,
                                "read it into a register in one thread instead")
        root = p.location(p.physical(r.loc))
        out.append(Observable(r.loc, r, root.type, loc=plocs[0]))
    return out


def _carries(e: Expr, tainted: set[int]) -> bool:
    """Whether the value of ``e`` may be (a function of) an unspecified value: through its data
    operands and the reads in ``tainted``. An ``ite``'s condition and a comparison only choose
    among finitely many values, so they do not carry one."""
    if isinstance(e, Unspec):
        return True
    if isinstance(e, ReadVal):
        return e.eid in tainted
    if not isinstance(e, Op) or e.op in BOOL_OPS:
        return False
    args = e.args[1:] if e.op == "ite" else e.args
    return any(_carries(a, tainted) for a in args)


def unspecified_observables(eg: EventGraph, obs: list[Observable]) -> set[str]:
    """The observables whose value may carry a value the PTX ISA leaves unspecified (division by
    zero) — possibly any of 2^w values, too many to list. An over-approximation: a read is
    tainted when some write to its location may carry one (followed to a fixed point), a
    register when its final value on some path may, a location when some write to it may."""
    if not eg.unspecified:
        return set()
    tainted: set[int] = set()
    writes = [e for e in eg.events if e.kind == Kind.W and e.value is not None]
    while True:
        locs = {w.loc for w in writes if _carries(w.value, tainted)}
        more = {e.eid for e in eg.events if e.kind == Kind.R and e.loc in locs} - tainted
        if not more:
            break
        tainted |= more
    out = set()
    for o in obs:
        if o.loc is not None:
            hit = o.loc in locs
        else:
            hit = any(_carries(final_reg(eg, o.thread, o.ref.reg, k), tainted)
                      for k in range(len(eg.paths[o.thread])))
        if hit:
            out.add(o.key)
    return out


def value_expr(eg: EventGraph, o: Observable, ex: Execution) -> Expr:
    """The expression whose value an observable shows in execution ``ex``."""
    if o.loc is not None:
        return eg.events[dict(ex.final)[o.loc]].value
    return final_reg(eg, o.thread, o.ref.reg, ex.paths[o.thread])


def outcome_of(eg: EventGraph, obs: list[Observable], ex: Execution) -> Outcome:
    vals = dict(ex.values)
    return Outcome(tuple((o.key, o.shown(evaluate(value_expr(eg, o, ex), vals))) for o in obs))


def verdict(quant: str, sat: list[bool]) -> bool:
    if quant == "exists":
        return any(sat)
    if quant == "~exists":
        return not any(sat)
    return all(sat)


def canonical(p: Program, eg: EventGraph, r: RegRef | MemRef) -> RegRef | MemRef:
    """A condition's reference with its thread named as the program names it (``1:r0`` →
    ``P1:r0``), i.e. as observables and outcomes key it."""
    return RegRef(p.threads[eg.thread_of(r.thread)].name, r.reg) if isinstance(r, RegRef) else r


_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def eval_cond(e: CondExpr, value, observable) -> bool:
    """Evaluate a condition; ``value(ref)`` gives a reference's shown value and
    ``observable(ref)`` its Observable (constants are read at the left side's type)."""
    if isinstance(e, Cmp):
        lhs = value(e.lhs)
        rhs = observable(e.lhs).shown(e.rhs) if isinstance(e.rhs, int) else value(e.rhs)
        return _CMP[e.op](lhs, rhs)
    if isinstance(e, And):
        return all(eval_cond(a, value, observable) for a in e.args)
    if isinstance(e, Or):
        return any(eval_cond(a, value, observable) for a in e.args)
    if isinstance(e, Not):
        return not eval_cond(e.arg, value, observable)
    return True


def satisfies(p: Program, eg: EventGraph, o: Outcome, obs: list[Observable] | None = None) -> bool | None:
    return satisfier(p, eg, obs)(o)


def satisfier(p: Program, eg: EventGraph,
              obs: list[Observable] | None = None) -> Callable[[Outcome], bool | None]:
    """:func:`satisfies` of ``p``'s condition for many outcomes (an enumeration's): the observables
    and the condition's references resolved once, not per outcome."""
    if p.condition is None:
        return lambda o: None
    by_key = {x.key: x for x in (obs if obs is not None else observables(eg, "condition"))}
    keys: dict[int, str] = {}  # id of a reference of the condition (kept alive by it) -> its key

    def key(r):
        k = keys.get(id(r))
        if k is None:
            k = keys[id(r)] = format_ref(canonical(p, eg, r))
        return k

    expr = p.condition.expr
    named = list(dict.fromkeys(key(r) for r in cond_refs(expr)))  # what the condition reads
    where: list[tuple[int, str]] = []  # (position in an outcome's values, key) of each, once seen
    memo: dict[tuple[int, ...], bool] = {}  # the verdict per value of what the condition reads

    def judge(o: Outcome) -> bool:
        vs = o.values
        if len(where) == len(named) and all(i < len(vs) and vs[i][0] == k for i, k in where):
            at = tuple([vs[i][1] for i, _ in where])
            hit = memo.get(at)
            if hit is None:
                hit = memo[at] = _judged(vs)
            return hit
        if not where:
            pos = {k: i for i, (k, _) in enumerate(vs)}
            where[:] = [(pos[k], k) for k in named if k in pos]
        return _judged(vs)

    def _judged(vs) -> bool:
        vals = dict(vs)
        return eval_cond(expr, lambda r: vals[key(r)], lambda r: by_key[key(r)])

    return judge
