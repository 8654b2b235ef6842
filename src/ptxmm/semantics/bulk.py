"""cp.async.bulk and its bulk groups (PTX ISA, cp.async.bulk; models/ptx-async.cat, D1–D4): an
asynchronous agent's reads of the source words and writes of the destination's, the implicit
proxy fences of the copy's reads and of its completion, the complete-tx on its mbarrier, the
copies of a multicast into each CTA of its ctaMask; cp.reduce.async.bulk's read-modify-writes;
commit_group / wait_group; and st.async / red.async, the one-word asynchronous store that
completes a transaction on the owning CTA's mbarrier."""

from __future__ import annotations

from ..errors import SemanticError, UnsupportedError
from ..ir.program import (
    Addr,
    AsyncStore,
    BulkCopy,
    BulkGroup,
    Imm,
    TensorCopy,
    Thread,
    type_width,
)
from ..ir.values import Const, ReadVal, mk
from .builder import Builder, State, handles
from .events import Kind
from .mbarrier import mbar_place, mbar_rmw
from .registers import alu_op


@handles(BulkCopy)
def bulk_copy(b: Builder, t: Thread, ins: BulkCopy, st: State, guard, gdeps) -> None:
    """The async agent's events (agent = a fresh id, not in po): the reads of src's words and
    the writes of dst's through the async proxy (a copy of 4k bytes moves k consecutive
    words, each read → its write), then one implicit generic-async proxy fence of the copy's
    completion after all the writes; with an mbarrier, one complete-tx of the whole size
    (release, cluster scope) on it after that fence; in a bulk group, also one implicit fence
    after all the reads, which a cp.async.bulk.wait_group.read waits for
    (models/ptx-async.cat, D1). The writes, their fence and the complete-tx are performed in
    the CTA that owns the destination and the mbarrier (``at``, models/ptx-async.cat, D4); a
    multicast copy writes, fences and completes in each CTA of its ctaMask, at dst's and
    mbar's CTA-relative offsets."""
    agent = b.agents
    b.agents += 1
    srcs = [async_place(b, ins, ins.src, ins.src_space, st, t, k=k)
            for k in range(copy_words(b, ins))]
    fence = frozenset({"PROXY", "ASYNC", "AOP"})
    reads = []
    for src, stag, sdeps, _ in srcs:
        r = b.new_event(st, t, Kind.R, ins, guard, sem="weak",
                        tags=frozenset({"ASYNC", "AOP"}) | stag, agent=agent, **src)
        b.dep(sdeps, r, "addr")
        b.dep(gdeps, r, "ctrl")
        reads.append(r)
    for rank in copy_ranks(b, t, ins, st):
        f = copy_write(b, t, ins, st, guard, gdeps, reads, rank, agent)
        if ins.mbar is None:
            fr = b.new_event(st, t, Kind.F, ins, guard, tags=fence, agent=agent)
            b.edges |= {(r, fr, "aint") for r in reads}
            b.dep(gdeps, fr, "ctrl")
            st.bars[("bulk", "open")] = st.bars.get(("bulk", "open"), ()) + ((fr, f),)
            continue
        where, bdeps = mbar_place(b, ins, ins.mbar, st, t, rank)
        size, _ = b.val(ins.size, st, "b64")
        brank = rank if ins.multicast is not None else b.resolve(ins.mbar, st, ins)[1]
        cr, cw = mbar_rmw(b, st, t, ins, guard, where, ("relaxed", "release"), "cluster",
                             (Const(0, 64), False, mk("neg", size)), agent, b.owner(t, brank))
        b.edges |= {(f, cr, "aint"), (cr, cw, "aint")}
        for e in (cr, cw):
            b.dep(bdeps, e, "addr")


def copy_ranks(b: Builder, t: Thread, ins: BulkCopy, st: State) -> list[int | None]:
    """The destination CTAs of a copy: the operand's (None: the thread's own), or the ranks of
    a multicast's ctaMask."""
    if ins.multicast is None:
        return [None]
    mask, _ = b.val(ins.multicast, st, "b16")
    n = len(b.ranks[t.placement.cluster_key])
    ranks = [k for k in range(16) if isinstance(mask, Const) and mask.v >> k & 1]
    if not ranks or ranks[-1] >= n:
        raise SemanticError(f"`{ins.text}`: ctaMask names CTA ranks {ranks} of a cluster of {n}",
                            ins.pos, "place a thread in each CTA the mask names (.cluster C .cta K)")
    return ranks


def copy_write(b: Builder, t: Thread, ins: BulkCopy | TensorCopy, st: State, guard, gdeps,
                     reads: list[int | None], rank: int | None, agent: int, zero: int | None = None) -> int:
    """The copy's writes of its destination's words (in CTA ``rank`` for a multicast), word k
    from read k (a tensor load's word with no read: 0, after the map read ``zero``), and the
    implicit fence of its completion after them all; returns the fence."""
    src = ins.smem if isinstance(ins, TensorCopy) else ins.dst
    dsts = [async_place(b, ins, src, ins.dst_space, st, t, rank, k) for k in range(len(reads))]
    writes = []
    for r, (dst, dtag, ddeps, dat) in zip(reads, dsts):
        if getattr(ins, "op", None) is not None:  # cp.reduce.async.bulk: a read-modify-write of dst
            w = bulk_reduce(b, t, ins, st, guard, gdeps, r, agent, dst, dtag, ddeps)
        else:
            w = b.new_event(st, t, Kind.W, ins, guard, sem="weak",
                            value=Const(0, 32) if r is None else ReadVal(r, 32),
                            tags=frozenset({"ASYNC", "AOP"}) | dtag, agent=agent, at=dat, **dst)
        b.edges |= {(zero, w, "aint")} if r is None else {(r, w, "data"), (r, w, "aint")}
        b.dep(ddeps, w, "addr")
        b.dep(gdeps, w, "ctrl")
        writes.append(w)
    f = b.new_event(st, t, Kind.F, ins, guard, tags=frozenset({"PROXY", "ASYNC", "AOP"}),
                    agent=agent, at=dsts[0][3])
    b.edges |= {(w, f, "aint") for w in writes}
    b.dep(gdeps, f, "ctrl")
    return f


def bulk_reduce(b: Builder, t: Thread, ins: BulkCopy, st: State, guard, gdeps, r: int, agent: int,
                      dst: dict, dtag: frozenset, ddeps) -> int:
    """cp.reduce.async.bulk's reduction of dst: the agent's read and write of dst through the
    async proxy, a read-modify-write whose read is no read operation (RedR, as red's), each
    .relaxed at .gpu scope (PTX ISA, cp.reduce.async.bulk: "Each reduction operation performed
    by cp.reduce.async.bulk has individually .relaxed.gpu memory ordering semantics"); returns
    the write."""
    base = dict(sem="relaxed", scope="gpu", agent=agent, **dst)
    rr = b.new_event(st, t, Kind.R, ins, guard, tags=frozenset({"ASYNC", "AOP", "RMW_R", "RedR"})
                     | dtag, **base)
    new = mk(alu_op(ins.op, ins.type), ReadVal(rr, 32), ReadVal(r, 32), w=32)
    w = b.new_event(st, t, Kind.W, ins, guard, value=new,
                    tags=frozenset({"ASYNC", "AOP", "RMW_W"}) | dtag, **base)
    b.edges |= {(rr, w, "rmw"), (rr, w, "data"), (r, rr, "aint"), (rr, w, "aint")}
    b.dep(ddeps, rr, "addr")
    b.dep(gdeps, rr, "ctrl")
    return w


@handles(BulkGroup)
def bulk_group(b: Builder, t: Thread, ins: BulkGroup, st: State, guard, gdeps) -> None:
    """commit_group closes the open bulk copies into a group; wait_group N waits for all
    groups but the N most recent: for the implicit proxy fence of each copy's completion
    (``.read``: of each copy's read). The wait is an event ordered after those fences; it
    is no proxy fence itself (a wait with nothing to wait for orders nothing: D2)."""
    if guard is not None:
        raise UnsupportedError(f"predicated `{ins.text}`", ins.pos)
    groups = st.bars.get(("bulk", "groups"), ())
    if ins.kind == "commit":
        st.bars[("bulk", "groups")] = groups + (st.bars.get(("bulk", "open"), ()),)
        st.bars[("bulk", "open")] = ()
        return
    done = groups[:max(len(groups) - ins.n, 0)]
    e = b.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "BULKWAIT"}))
    for grp in done:
        for fr, f in grp:
            b.edges.add((fr if ins.read else f, e, "done"))
    if not ins.read:
        st.bars[("bulk", "groups")] = groups[len(done):]


def async_place(b: Builder, ins: BulkCopy, a: Addr, space: str, st: State, t: Thread,
                      multicast: int | None = None, k: int = 0):
    """Location fields of word ``k`` of a copy operand (``multicast``: the copy in that CTA
    rank)."""
    name, rank, deps = copy_word(b, ins, a, k, st)
    rank = rank if multicast is None else multicast
    loc = b.locs[b.p.physical(name)]
    if loc.space != space or type_width(loc.type) != 32:
        raise SemanticError(f"`{ins.text}`: {name} must be a .{space} 32-bit location",
                            ins.pos, "cp.async.bulk copies 32-bit words between the state "
                            "spaces its qualifiers name")
    vl, pl = b.place(name, t, rank)
    return dict(loc=pl, vloc=vl, w=32), frozenset(b.space_tag(name)), deps, b.owner(t, rank)


def copy_word(b: Builder, ins: BulkCopy | TensorCopy, a: Addr, k: int,
                    st: State) -> tuple[str, int | None, frozenset[int]]:
    """The location of word ``k`` (bytes 4k..4k+3) of a copy operand: the operand's own
    location, then the consecutive words of its array (``.shared .u32 s[4]``: s[1], s[2], …;
    in a kernel, the element at the address 4k bytes on); a copy that runs off the end of its
    location is a located error."""
    if k == 0:
        return b.resolve(a, st, ins)
    if b.layout is not None:
        name, deps = b.element(Addr(a.base, a.offset + 4 * k), st, ins)
        if name is None:
            raise SemanticError(f"`{ins.text}`: its {copy_words(b, ins)} words run off the end "
                                "of the buffer", ins.pos, "copy no more bytes than the buffer holds")
        return name, None, deps
    name, rank, deps = b.resolve(a, st, ins)
    base, _, i = name[:-1].partition("[") if name.endswith("]") else (name, "", "")
    nxt = f"{base}[{int(i) + k}]" if i.isdigit() else None
    if nxt is None or nxt not in b.locs:
        n = copy_words(b, ins)
        have = "is one word" if nxt is None else f"ends {k - 1} word(s) after it"
        raise SemanticError(f"`{ins.text}` copies {n} words from {name} on, but {base} {have}",
                            ins.pos, f"declare an array of at least {n} words, e.g. "
                            f"`.{b.locs[name].space} .u32 {base}[{n}];`, and copy from its start")
    return nxt, rank, deps


def copy_words(b: Builder, ins: BulkCopy | TensorCopy) -> int:
    """The 32-bit words a bulk copy moves: its size (a constant, syntax/decode/bulk.py) / 4; a tensor
    copy: its box's elements (the copy being built)."""
    if isinstance(ins, TensorCopy):
        return b.box_n
    assert isinstance(ins.size, Imm)
    return max(1, ins.size.value // 4)


@handles(AsyncStore)
def async_store(b: Builder, t: Thread, ins: AsyncStore, st: State, guard, gdeps) -> None:
    """st.async / red.async (PTX ISA): the asynchronous agent's weak store (red.async: a
    relaxed .cluster read-modify-write) of the word through the generic proxy, performed in
    the CTA that owns it, then the complete-tx of its 4 bytes on that CTA's mbarrier (release,
    .cluster; models/ptx-async.cat)."""
    agent = b.agents
    b.agents += 1
    name, rank, adeps = b.resolve(ins.addr, st, ins)
    loc = b.locs[b.p.physical(name)]
    if loc.space != "shared" or type_width(loc.type) != 32:
        raise SemanticError(f"`{ins.text}`: {name} must be a .shared 32-bit location", ins.pos,
                            "st.async and red.async write one word of a CTA's shared memory")
    vl, pl = b.place(name, t, rank)
    at = b.owner(t, rank)
    v, vdeps = b.val(ins.src, st, ins.type)
    base = dict(loc=pl, vloc=vl, w=32, agent=agent, at=at)
    evs = []
    if ins.op is None:
        w = b.new_event(st, t, Kind.W, ins, guard, sem="weak", value=v,
                        tags=frozenset({"GEN", "AOP", "SHM"}), **base)
    else:
        r = b.new_event(st, t, Kind.R, ins, guard, sem="relaxed", scope="cluster",
                        tags=frozenset({"GEN", "AOP", "SHM", "RMW_R", "RedR"}), **base)
        new = mk(alu_op(ins.op, ins.type), ReadVal(r, 32), v, w=32)
        w = b.new_event(st, t, Kind.W, ins, guard, sem="relaxed", scope="cluster", value=new,
                        tags=frozenset({"GEN", "AOP", "SHM", "RMW_W"}), **base)
        b.edges |= {(r, w, "rmw"), (r, w, "data"), (r, w, "aint")}
        evs.append(r)
    b.dep(vdeps, w, "data")
    where, bdeps = mbar_place(b, ins, ins.mbar, st, t)
    cr, cw = mbar_rmw(b, st, t, ins, guard, where, ("relaxed", "release"), "cluster",
                         (Const(0, 64), False, Const((1 << 64) - 4, 64)), agent,
                         b.owner(t, b.resolve(ins.mbar, st, ins)[1]))
    b.edges |= {(w, cr, "aint"), (cr, cw, "aint")}
    for e in evs + [w]:
        b.dep(adeps, e, "addr")
    for e in (cr, cw):
        b.dep(bdeps, e, "addr")
    for e in evs + [w, cr, cw]:
        b.dep(gdeps, e, "ctrl")
