"""wgmma (PTX ISA, wgmma; models/ptx-async.cat): wgmma.fence, wgmma.mma_async (an asynchronous
agent's reads of the A and B words and its completion fence; the accumulator is written when a
wait_group waits for it), commit_group and wait_group."""

from __future__ import annotations

from ..errors import SemanticError, UnsupportedError
from ..ir.program import (
    Addr,
    Imm,
    Thread,
    Wgmma,
    type_width,
)
from ..ir.values import Const, ReadVal, mk, truth
from .builder import Builder, State, handles
from .events import Kind


@handles(Wgmma)
def wgmma(b: Builder, t: Thread, ins: Wgmma, st: State, guard, gdeps) -> None:
    """wgmma.fence: the thread may issue mma operations (an mma before the first fence is
    undefined: a located error).  mma: an asynchronous agent reads the A and B words through
    the async proxy (issue orders them after the thread's earlier events), then the implicit
    generic-async proxy fence of its completion; the accumulator gets (scale-d ? D : 0) +
    A * B once a wgmma.wait_group waits for the operation's group (reading it before is
    undefined: a located error).  commit_group / wait_group N as the bulk groups: the wait
    is ordered after the completion fences of all groups but the N newest."""
    if guard is not None:
        raise UnsupportedError(f"predicated `{ins.text}`", ins.pos,
                               "every thread of the warpgroup executes wgmma instructions")
    if ins.kind == "fence":
        st.bars[("wgmma", "fenced")] = True
        return
    if ins.kind == "mma":
        wgmma_mma(b, t, ins, st, gdeps)
        return
    groups = st.bars.get(("wgmma", "groups"), ())
    if ins.kind == "commit":
        st.bars[("wgmma", "groups")] = groups + (st.bars.get(("wgmma", "open"), ()),)
        st.bars[("wgmma", "open")] = ()
        return
    done = groups[:max(len(groups) - ins.n, 0)]
    e = b.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "WGWAIT"}))
    pending = dict(st.bars.get(("wgmma", "pending"), {}))
    for grp in done:
        for f, reg, value, deps in grp:
            b.edges.add((f, e, "done"))
            pending.pop(reg.name, None)
            b.set_reg(st, reg, value, "s32", deps, None)
    st.bars[("wgmma", "pending")] = pending
    st.bars[("wgmma", "groups")] = groups[len(done):]


def wgmma_mma(b: Builder, t: Thread, ins: Wgmma, st: State, gdeps) -> None:
    if not st.bars.get(("wgmma", "fenced")):
        raise SemanticError(f"`{ins.text}` before any wgmma.fence", ins.pos,
                            "PTX ISA, wgmma.fence: it must be issued before the first "
                            "wgmma.mma_async of the warpgroup (otherwise undefined)")
    agent = b.agents
    b.agents += 1
    reads = []
    for desc in (ins.a, ins.b):
        name, rank, adeps = b.resolve(Addr(desc), st, ins)
        loc = b.locs[b.p.physical(name)]
        if loc.space != "shared" or type_width(loc.type) != 32 or rank is not None:
            raise SemanticError(f"`{ins.text}`: descriptor {desc.name} must hold the address of "
                                "a 32-bit .shared location of the thread's CTA", ins.pos,
                                "mov.u64 %rd0, x; where x is a .shared .u32 word")
        vl, pl = b.place(name, t, None)
        r = b.new_event(st, t, Kind.R, ins, None, sem="weak", loc=pl, vloc=vl, w=32,
                        tags=frozenset({"ASYNC", "AOP", "SHM"}), agent=agent)
        b.dep(adeps, r, "addr")
        b.dep(gdeps, r, "ctrl")
        reads.append(r)
    f = b.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "ASYNC", "AOP"}), agent=agent)
    b.edges |= {(r, f, "aint") for r in reads}
    prod = mk("mul", ReadVal(reads[0], 32), ReadVal(reads[1], 32), w=32)
    acc, deps = Const(0, 32), frozenset(reads)
    if not (isinstance(ins.scale_d, Imm) and ins.scale_d.value == 0):
        d, ddeps = b.val(ins.dst, st, "s32")
        p, pdeps = b.val(ins.scale_d, st, None)
        acc, deps = mk("ite", truth(p), d, Const(0, 32)), deps | ddeps | pdeps
    value = mk("add", prod, acc, w=32)
    st.bars[("wgmma", "open")] = st.bars.get(("wgmma", "open"), ()) + ((f, ins.dst, value, deps),)
    st.bars[("wgmma", "pending")] = dict(st.bars.get(("wgmma", "pending"), {})) | {ins.dst.name: ins}
