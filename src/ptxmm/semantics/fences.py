"""fence (membar as the front ends read it) and the proxy fences: one F event each. fence.mbarrier_init
is no memory fence (PROXY keeps it out of Fm, MBI); fence.proxy.<kind> carries the tag of the proxy
it bridges with the generic one (``PROXY_TAG``; .async.<space> covers one state space, and the
uni-directional generic→async halves are restricted releases or acquires at .cluster,
models/ptx-async.cat); fence.proxy.tensormap::generic orders generic writes of a tensor map
before the copies that read it through the tensormap proxy (models/ptx-proxy.cat)."""

from __future__ import annotations

from ..ir.program import (
    Fence,
    ProxyFence,
    Thread,
)
from .builder import PROXY_TAG, Builder, State, handles
from .events import Kind
from .tensor import tmap_place


@handles(Fence)
def fence(b: Builder, t: Thread, ins: Fence, st: State, guard, gdeps) -> None:
    # fence.mbarrier_init: no memory fence (PROXY keeps it out of Fm), only MBI
    tags = frozenset({"PROXY", "MBI"}) if ins.restrict == "mbarrier_init" else frozenset()
    e = b.new_event(st, t, Kind.F, ins, guard, sem=ins.sem, scope=ins.scope, tags=tags)
    b.dep(gdeps, e, "ctrl")


@handles(ProxyFence)
def proxy_fence(b: Builder, t: Thread, ins: ProxyFence, st: State, guard, gdeps) -> None:
    if ins.kind == "tensormap":
        tensormap_fence(b, t, ins, st, guard, gdeps)
        return
    space = {"global": {"PFG"}, "shared": {"PFS"}}.get(ins.space or "", set())
    # the uni-directional generic→async fences (UNI) with their restricted release
    # (RSR) or acquire (ASR) half at .cluster (models/ptx-async.cat)
    uni = {"release": {"UNI", "RSR"}, "acquire": {"UNI", "ASR"}}.get(ins.sem or "", set())
    e = b.new_event(st, t, Kind.F, ins, guard, sem=ins.sem,
                    scope="cluster" if uni else None,
                    tags=frozenset({"PROXY", PROXY_TAG[ins.kind]} | space | uni))
    b.dep(gdeps, e, "ctrl")


def tensormap_fence(b: Builder, t: Thread, ins: ProxyFence, st: State, guard, gdeps) -> None:
    """fence.proxy.tensormap::generic.release|acquire: a uni-directional generic → tensormap
    proxy fence with its release or acquire half at its scope (TMREL / TMACQ); the acquire's
    [addr, addr+127] is the tensor map its operand names: tm_range relates the fence to that
    map's tensormap-proxy reads by the copies the thread issues after it."""
    tags = {"PROXY", "TMAP", "TMREL" if ins.sem == "release" else "TMACQ"}
    e = b.new_event(st, t, Kind.F, ins, guard, sem=ins.sem, scope=ins.scope, tags=frozenset(tags))
    b.dep(gdeps, e, "ctrl")
    if ins.addr is not None:
        name, _, deps = tmap_place(b, ins, ins.addr, st, t)
        st.bars[("tmacq", name)] = st.bars.get(("tmacq", name), ()) + (e,)
