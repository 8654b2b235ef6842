"""Ampere cp.async (PTX ISA, cp.async): one 32-bit word copied from .global to .shared by an
asynchronous agent; cp.async.commit_group / wait_group / wait_all; cp.async.mbarrier.arrive
(.noinc) (models/ptx-async.cat)."""

from __future__ import annotations

from ..errors import SemanticError, UnsupportedError
from ..ir.program import (
    CpAsync,
    CpAsyncGroup,
    Thread,
    type_width,
)
from ..ir.values import Const, ReadVal
from .builder import Builder, State, handles
from .events import Kind
from .mbarrier import mbar_place, mbar_rmw


@handles(CpAsync)
def cp_async(b: Builder, t: Thread, ins: CpAsync, st: State, guard, gdeps) -> None:
    """Ampere cp.async (PTX ISA, cp.async): an asynchronous agent's weak read of src and weak
    write of dst through the generic proxy, ordered after the thread's earlier instructions
    (issue) and with nothing later but through a cp.async group wait or a
    cp.async.mbarrier.arrive."""
    agent = b.agents
    b.agents += 1
    evs = []
    for a, kind, space in ((ins.src, Kind.R, "global"), (ins.dst, Kind.W, "shared")):
        name, rank, adeps = b.resolve(a, st, ins)
        vl, pl = b.place(name, t, rank)
        loc = b.locs[b.p.physical(name)]
        if type_width(loc.type) != 32 or loc.space != space:
            raise SemanticError(f"`{ins.text}`: {name} must be a .{space} 32-bit location",
                                ins.pos, "cp.async copies one 32-bit word from .global to .shared")
        extra = dict(value=ReadVal(evs[0], 32)) if kind == Kind.W else {}
        e = b.new_event(st, t, kind, ins, guard, sem="weak", agent=agent, loc=pl, vloc=vl, w=32,
                        tags=frozenset({"GEN", "AOP"} | b.space_tag(name)), **extra)
        b.dep(adeps, e, "addr")
        b.dep(gdeps, e, "ctrl")
        evs.append(e)
    r, w = evs
    b.edges |= {(r, w, "data"), (r, w, "aint")}
    for key in (("cpasync", "open"), ("cpasync", "all")):
        st.bars[key] = st.bars.get(key, ()) + (w,)


@handles(CpAsyncGroup)
def cp_async_group(b: Builder, t: Thread, ins: CpAsyncGroup, st: State, guard, gdeps) -> None:
    """commit_group closes the open cp.async operations into a group; wait_group N waits for
    all groups but the N most recent (wait_all: commit, then wait_group 0); the wait is an
    event after the writes it waited for (bulk_done).  cp.async.mbarrier.arrive: an arrive-on
    the asynchronous agent performs on the mbarrier after all the thread's prior cp.async
    operations (async_int), a release at CTA scope (models/ptx-async.cat); without .noinc the
    thread first raises the pending count by one, so the arrive-on does not count as one of
    the expected arrivals."""
    if ins.kind == "arrive":
        cp_async_arrive(b, t, ins, st, guard, gdeps)
        return
    if guard is not None:
        raise UnsupportedError(f"predicated `{ins.text}`", ins.pos)
    groups = st.bars.get(("cpasync", "groups"), ())
    if ins.kind in ("commit", "wait_all"):
        groups += (st.bars.get(("cpasync", "open"), ()),)
        st.bars[("cpasync", "open")] = ()
    if ins.kind == "commit":
        st.bars[("cpasync", "groups")] = groups
        return
    n = 0 if ins.kind == "wait_all" else ins.n
    done = groups[:max(len(groups) - n, 0)]
    e = b.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "CPWAIT"}))
    for grp in done:
        for w in grp:
            b.edges.add((w, e, "done"))
    st.bars[("cpasync", "groups")] = groups[len(done):]


def cp_async_arrive(b: Builder, t: Thread, ins: CpAsyncGroup, st: State, guard, gdeps) -> None:
    where, adeps = mbar_place(b, ins, ins.mbar, st, t)
    events = []
    if not ins.noinc:  # pending count + 1 (an arrival of -1), by the thread
        events += mbar_rmw(b, st, t, ins, guard, where, ("relaxed", "relaxed"), "cta",
                              (Const((1 << 64) - 1, 64), False, Const(0, 64)))
    agent = b.agents
    b.agents += 1
    cr, cw = mbar_rmw(b, st, t, ins, guard, where, ("relaxed", "release"), "cta",
                         (Const(1, 64), False, Const(0, 64)), agent)
    b.edges.add((cr, cw, "aint"))
    for w in st.bars.get(("cpasync", "all"), ()):
        b.edges.add((w, cr, "aint"))
    for e in events + [cr, cw]:
        b.dep(adeps, e, "addr")
        b.dep(gdeps, e, "ctrl")
