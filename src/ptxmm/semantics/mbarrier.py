"""mbarrier (PTX ISA, mbarrier; docs/hopper.md): init and inval are weak writes of the object's
64-bit word, arrive / arrive_drop / expect_tx / complete_tx one atomic update of it (the
encoding of :mod:`ptxmm.ir.mbarrier`), test_wait / try_wait a read whose value condition "the
phase completed" is ``Event.ok``. ``mbar_place`` and ``mbar_rmw`` also serve the asynchronous
copies' complete-tx."""

from __future__ import annotations

from ..errors import SemanticError, UnsupportedError
from ..ir import mbarrier as mb
from ..ir.program import (
    Addr,
    MBarrier,
    Placement,
    Thread,
    type_width,
)
from ..ir.values import Const, Expr, ReadVal, mk
from .builder import Builder, State, handles
from .events import Kind
from .memory import RMW_SEMS


def _mbar_count(ins: MBarrier, what: str, v: Expr) -> None:
    """A constant count of an mbarrier instruction fits the object's 16-bit fields (mbarrier.py;
    the ISA's limit is 2^20 - 1: a larger count would wrap around and complete phases early), and
    an expected count is at least 1 (as the declaration ``mbarrier.init(N)`` requires)."""
    if not isinstance(v, Const):
        return
    if ins.op == "init" and v.v == 0:
        raise SemanticError(f"`{ins.text}`: expected arrival count 0", ins.pos,
                            "an mbarrier phase completes after 1 or more arrivals")
    if v.v >= 1 << 16:
        raise UnsupportedError(f"`{ins.text}`: {what} {v.v} (ptxmm counts an mbarrier's arrivals "
                               "and transaction bytes in 16 bits)", ins.pos,
                               "use counts up to 65535 (the ISA allows up to 2^20 - 1)")


@handles(MBarrier)
def mbarrier(b: Builder, t: Thread, ins: MBarrier, st: State, guard, gdeps) -> None:
    where, adeps = mbar_place(b, ins, ins.addr, st, t)
    tags = frozenset({"GEN", "MBAR", "SHM"})
    one = lambda o: b.val(o, st, "b64") if o is not None else (Const(1, 64), frozenset())  # noqa: E731
    for what, o in (("arrival count", ins.count), ("transaction count", ins.tx)):
        if o is not None:
            _mbar_count(ins, what, one(o)[0])
    if ins.op == "init":
        (n, ndeps) = one(ins.count)
        e = b.new_event(st, t, Kind.W, ins, guard, sem="weak", value=mb.init_word(n), tags=tags,
                        **where)
        b.dep(ndeps, e, "data")
        events = [e]
    elif ins.op == "inval":  # a weak write of a word no initialised object holds (MBINV)
        events = [b.new_event(st, t, Kind.W, ins, guard, sem="weak", value=Const(0, 64),
                              tags=tags | {"MBINV"}, **where)]
    elif ins.op in ("test_wait", "try_wait"):
        e = b.new_event(st, t, Kind.R, ins, guard, sem=ins.sem, scope=ins.scope,
                        tags=tags | {"MBWAIT"}, **where)
        sv, sdeps = one(ins.state)
        ok = mb.wait_complete(ReadVal(e, 64), sv, ins.parity)
        b.events[e].ok = ok
        b.set_reg(st, ins.dst, ok, "pred", frozenset({e}) | sdeps, guard)
        events = [e]
    else:
        arrive = ins.op in ("arrive", "arrive_drop")
        n, ndeps = one(ins.count) if arrive else (Const(0, 64), frozenset())
        tx, txdeps = one(ins.tx) if ins.tx is not None else (Const(0, 64), frozenset())
        if ins.op == "complete_tx":
            tx = mk("neg", tx)
        r, w = mbar_rmw(b, st, t, ins, guard, where, RMW_SEMS[ins.sem], ins.scope,
                           (n, ins.op == "arrive_drop", tx))
        b.dep(ndeps | txdeps, w, "data")
        if ins.dst is not None:
            b.set_reg(st, ins.dst, ReadVal(r, 64), "b64", frozenset({r}), guard)
        events = [r, w]
    for e in events:
        b.dep(adeps, e, "addr")
        b.dep(gdeps, e, "ctrl")


def mbar_place(b: Builder, ins, a: Addr, st: State, t: Thread,
                     multicast: int | None = None) -> tuple[dict, frozenset[int]]:
    """Location fields of an mbarrier operand (a .shared .b64 location; ``multicast``: its
    copy in that CTA rank)."""
    name, rank, adeps = b.resolve(a, st, ins)
    rank = rank if multicast is None else multicast
    loc = b.locs[b.p.physical(name)]
    if loc.space != "shared" or type_width(loc.type) != 64:
        raise SemanticError(f"`{ins.text}`: mbarrier object {name} must be a .shared .b64 location",
                            ins.pos, f"declare `.shared .b64 {name};`")
    if rank is not None and isinstance(ins, MBarrier) and ins.op in ("init", "inval", "test_wait",
                                                                     "try_wait"):
        raise UnsupportedError(f"`{ins.text}` on another CTA's mbarrier", ins.pos,
                               "init and waits act on the thread's own CTA's mbarrier (PTX ISA)")
    vl, pl = b.place(name, t, rank)
    return dict(loc=pl, vloc=vl, w=64), adeps


def mbar_rmw(b: Builder, st: State, t: Thread, ins, guard, where: dict, sems: tuple[str, str],
                   scope: str, change: tuple[Expr, bool, Expr], agent: int = -1,
                   at: Placement | None = None) -> tuple[int, int]:
    """One atomic update of an mbarrier word: (arrivals, drop, tx-count change)."""
    tags = {"GEN", "MBAR", "SHM"} | ({"AOP"} if agent >= 0 else set())
    r = b.new_event(st, t, Kind.R, ins, guard, sem=sems[0], scope=scope, agent=agent, at=at,
                    tags=frozenset(tags | {"RMW_R"}), **where)
    new = mb.update(ReadVal(r, 64), *change)
    w = b.new_event(st, t, Kind.W, ins, guard, sem=sems[1], scope=scope, value=new, agent=agent,
                    at=at, tags=frozenset(tags | {"RMW_W"}), **where)
    b.edges |= {(r, w, "rmw"), (r, w, "data")}
    return r, w
