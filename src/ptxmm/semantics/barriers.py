"""bar / barrier (an arrive and, but for bar.arrive, a wait event: the k-th use of one barrier id
in a thread is its phase k) and barrier.cluster.arrive / wait (the k-th arrive and wait of every
thread of a cluster belong to phase k). In liveness graphs each wait also forks the path that
blocks there (:func:`.control.blocked_at`)."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir.program import (
    Barrier,
    ClusterBarrier,
    Thread,
)
from ..ir.values import Const, convert
from .builder import Builder, State, handles
from .control import blocked_at
from .events import Kind


@handles(Barrier)
def barrier(b: Builder, t: Thread, ins: Barrier, st: State, guard, gdeps) -> None:
    ident = [b.val(o, st, None) for o in ins.ids]
    cnt = b.val(ins.count, st, None)[0] if ins.count is not None else None
    if cnt is not None and not isinstance(cnt, Const):
        raise UnsupportedError("barrier thread count depends on a loaded value", ins.pos)
    key = tuple(repr(o) for o in ins.ids)
    k = st.bars.get(key, 0)
    st.bars[key] = k + 1
    info = (tuple(convert(x[0], 64) for x in ident), None if cnt is None else cnt.v, k)
    bdeps = frozenset().union(*(x[1] for x in ident))
    for part in ("ARRIVE", "WAIT") if ins.kind != "arrive" else ("ARRIVE",):
        e = b.new_event(st, t, Kind.B, ins, guard, scope="cta", barrier=info,
                        tags=frozenset({"BAR", part} | ({"INSTANCE"} if ins.instance else set())))
        b.dep(bdeps, e, "addr")
        b.dep(gdeps, e, "ctrl")
        blocked_at(b, st, e, part, guard)


@handles(ClusterBarrier)
def cluster_barrier(b: Builder, t: Thread, ins: ClusterBarrier, st: State, guard, gdeps) -> None:
    """The k-th arrive and the k-th wait of every thread of a cluster belong to phase k; a
    wait in a thread that has not arrived in its phase waits for itself (HANG)."""
    if guard is not None:
        raise UnsupportedError(f"predicated `{ins.text}`", ins.pos,
                               "every thread of the cluster arrives and waits unconditionally")
    k = st.bars.get(("cluster", ins.kind), 0)
    st.bars[("cluster", ins.kind)] = k + 1
    tags = {"CBAR", "ARRIVE" if ins.kind == "arrive" else "WAIT"}
    if ins.kind == "wait" and st.bars.get(("cluster", "arrive"), 0) <= k:
        tags.add("HANG")
    e = b.new_event(st, t, Kind.B, ins, None, sem=ins.sem, scope="cluster", barrier=((), None, k),
                    tags=frozenset(tags))
    b.dep(gdeps, e, "ctrl")
    blocked_at(b, st, e, "WAIT" if ins.kind == "wait" else "ARRIVE", None)
