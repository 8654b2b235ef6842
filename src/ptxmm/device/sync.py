"""How the device runs a test's synchronization (docs/hopper.md, "On the device"): CTA execution
barriers (``bar.sync``/``barrier.sync``/``bar.arrive``), cluster barriers, mbarrier objects,
``mapa`` (DSMEM) and the bulk asynchronous copies (tensor copies too: tensor.py). Pure Python (no
CuPy).

Such a test runs on a *step schedule* instead of the free role rotation: a CTA of the program gets
``mw`` warp slots (a power of two >= its roles), a cluster ``cs`` CTA ranks, and the testing thread
in warp w of block rank rho plays, at step (jg, jr, jw), the slot (cluster group jg, rank
(jr + rho) % cs, warp offset (jw + w) % mw). Every role of one instance in one cluster then runs
in the same step, in warps (base .. base + mw - 1) of its blocks: the partners a barrier waits for
are there. Slots with no role are *pad* warps: they take the cluster barriers' phases and rescue
quorum barriers (below).

CTA barriers: each warp group of mw warps (one instance group, 32 instances of it, one per lane)
gets its own hardware barrier per barrier id of the program (``1 + g * nids + u``; 0 stays
``__syncthreads``, which separates steps), with the thread count of the program times 32 (one warp
per role: the hardware counts whole warps). A barrier with a quorum smaller than its arrivals
(Dat3M's ``quorum*`` tests) leaves arrivals that no phase completes; the model lets such a thread
finish only when nothing follows its barrier. A pad warp waits until the completed phases have
passed, then arrives for the missing threads; a role released that way with events after its
barrier makes its instance "did not finish" (the execution the model says never ends), so it is
never compared."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedError
from ..ir.program import (
    MEMORY_INSTRS,
    Alu,
    AsyncStore,
    Barrier,
    Branch,
    BulkCopy,
    BulkGroup,
    ClusterBarrier,
    CpAsync,
    CpAsyncGroup,
    Elect,
    Imm,
    Label,
    Mapa,
    MBarrier,
    Mov,
    Program,
    ProxyFence,
    Reg,
    Ret,
    Selp,
    Setp,
    Sym,
    TensorCopy,
    Wgmma,
)
from .env import pow2

HOPPER = (ClusterBarrier, MBarrier, Mapa, BulkCopy, BulkGroup, CpAsync, CpAsyncGroup, AsyncStore,
          Wgmma, Elect, TensorCopy)
COPIES = (BulkCopy, TensorCopy)  # 16-byte chunks for the model words they move (BULK_BYTES)
SYNC = (Barrier, *HOPPER)
BULK_BYTES = 16  # the hardware's unit: one model word (4 bytes) of a bulk copy is 16 bytes here
TX_SCALE = BULK_BYTES // 4
NO_EVENT = (Mov, Alu, Setp, Selp, Label, Ret, Branch)  # instructions that make no memory event


@dataclass(frozen=True)
class BarUse:
    """One CTA barrier instruction as the device runs it."""

    u: int  # index of its barrier id in SyncPlan.bar_ids
    threads: int  # hardware thread count (32 per participating role)
    sync: bool  # bar.sync (else bar.arrive)
    rescue_at: int = -1  # quorum rescue: passing lanes counted at or beyond this were rescued
    dnf_after: bool = False  # ... and a rescued role has events after the barrier


@dataclass(frozen=True)
class Rescue:
    """A pad warp of CTA (cg, rank) arrives once at barrier id u after ``wait_for`` lanes passed."""

    cg: int
    rank: int
    u: int
    wait_for: int
    threads: int
    pads: int  # how many pad warps arrive (each once)


@dataclass(frozen=True)
class SyncPlan:
    mw: int  # warp slots per CTA (power of two)
    bar_ids: tuple[tuple[int, ...], ...]  # CTA barrier ids (values), index u
    bars: dict  # (role, instruction index) -> BarUse
    rescues: tuple[Rescue, ...]
    cluster_phases: int  # barrier.cluster arrive/wait pairs every role (and pad) takes per step
    dsmem: bool  # mapa, multicast: cluster-wide sync around the test (peers' shared memory live)
    bulk: bool  # bulk copies: 16-byte chunks for the locations involved

    @property
    def tx_scale(self) -> int:
        """Hardware bytes per model byte of a tx-count: 4 beside bulk copies (a model word is a
        16-byte chunk there), else 1 (st.async / red.async complete the 4 bytes they write)."""
        return TX_SCALE if self.bulk else 1

    @property
    def max_threads(self) -> int:
        """Threads per block such that every warp group has its own hardware barriers (<= 15)."""
        if not self.bar_ids:
            return 1024
        groups = 15 // len(self.bar_ids)
        p = 1
        while p * 2 <= groups:
            p *= 2
        return min(1024, 32 * self.mw * p)

    @property
    def needs_dnf(self) -> bool:
        return any(b.dnf_after for b in self.bars.values())


def _unsupported(what: str, hint: str, pos=None):
    raise UnsupportedError(f"{what} on the device", pos, hint)


CTARANK = "%cluster_ctarank"


def reads_ctarank(ins) -> bool:
    """Whether an instruction reads the special register ``%cluster_ctarank``."""
    from ..ir.program import value_operands

    return any(isinstance(o, Reg) and o.name == CTARANK for o in value_operands(ins))


def synchronized(prog: Program) -> bool:
    """Whether the test needs the step schedule (any barrier or Hopper synchronization, or a read
    of ``%cluster_ctarank``: the step schedule knows which test rank a block plays)."""
    return any(isinstance(i, SYNC) or reads_ctarank(i) for t in prog.threads for i in t.instrs)


def _imm(o, ins, what: str) -> int:
    if not isinstance(o, Imm):
        _unsupported(f"{what} from a register in `{ins.text}`", "write it as a constant", ins.pos)
    return o.value


def _straight_prefix(t) -> int:
    """Index of a thread's first branch or ret: barriers must come before it (each runs once)."""
    for k, ins in enumerate(t.instrs):
        if isinstance(ins, (Branch, Ret)):
            return k
    return len(t.instrs)


@dataclass(frozen=True)
class _Thread:
    """What the form checks need to know of the thread an instruction is in."""

    prog: Program
    t: object
    first_branch: int
    mapas: dict  # register -> the mapa.shared::cluster that writes it (the only writer)
    ranks: int  # CTAs of the thread's cluster in the test
    bulk: bool  # the test has bulk copies (tx-counts in 16-byte units)


def _mapa_regs(t) -> dict:
    """Registers that only ``mapa.shared::cluster`` writes, in thread ``t``."""
    from .operands import dst

    writers: dict[str, list] = {}
    for ins in t.instrs:
        d = ins.dst if isinstance(ins, (Mapa, MBarrier, Elect)) else dst(ins)
        if isinstance(d, Reg):
            writers.setdefault(d.name, []).append(ins)
    return {r: ws[0] for r, ws in writers.items()
            if all(isinstance(w, Mapa) and "shared::cluster" in w.text for w in ws)}


def _cluster_address(th: _Thread, a, ins, what: str) -> None:
    """An operand that names another CTA's shared memory: a location by name (the thread's own
    CTA) or a register only mapa.shared::cluster writes, without an offset."""
    if a.offset or not (isinstance(a.base, Sym) or a.base.name in th.mapas):
        _unsupported(f"{what} address `{ins.text}`", "name the location, or use a register that "
                     "only mapa.shared::cluster writes", ins.pos)


def _check_barrier(th: _Thread, k: int, ins) -> None:
    if ins.guard is not None:
        _unsupported(f"predicated barrier `{ins.text}`", "barriers run unpredicated", ins.pos)
    if k > th.first_branch:
        _unsupported(f"barrier after a branch `{ins.text}`", "the device runs barriers that come "
                     "before every branch of their thread (each runs once)", ins.pos)


ARRIVE_TYPE = ("arrive", "arrive_drop", "expect_tx", "complete_tx")


def _check_mbarrier(th: _Thread, k: int, ins: MBarrier) -> None:
    remote = "shared::cluster" in ins.text
    if isinstance(ins.addr.base, Reg) or remote:
        if ins.op not in ARRIVE_TYPE:  # the ISA: only arrive-type operations on another CTA's
            _unsupported(f"mbarrier of another CTA `{ins.text}`", "the PTX ISA allows only "
                         "arrive-type operations (arrive, arrive_drop, expect_tx, complete_tx) "
                         "on another CTA's mbarrier; use the CTA's own (.shared::cta)", ins.pos)
        if not remote:
            _unsupported(f"mbarrier through a register `{ins.text}`", "a mapa address is a "
                         ".shared::cluster address: write .shared::cluster", ins.pos)
        _cluster_address(th, ins.addr, ins, "mbarrier")
    elif ins.addr.offset:
        _unsupported(f"mbarrier address `{ins.text}`", "name the mbarrier", ins.pos)
    for o in (ins.count, ins.tx):
        if o is not None:
            _imm(o, ins, "count")
    if ins.op in ("test_wait", "try_wait") and not ins.parity and not isinstance(ins.state, Reg):
        _unsupported(f"wait on a constant state `{ins.text}`",
                     "use .parity, or the state an arrive returned", ins.pos)


def _check_mapa(th: _Thread, k: int, ins: Mapa) -> None:
    if "shared::cluster" not in ins.text:
        _unsupported(f"generic `{ins.text}`", "use mapa.shared::cluster", ins.pos)
    if not isinstance(ins.src, Sym):
        _unsupported(f"mapa of a register `{ins.text}`", "name the location", ins.pos)
    if isinstance(ins.rank, Imm) and not 0 <= ins.rank.value < th.ranks:
        _unsupported(f"mapa to rank {ins.rank.value} `{ins.text}`", f"the cluster has "
                     f"{th.ranks} CTA(s) in the test", ins.pos)


def _check_multicast(th: _Thread, ins: BulkCopy | TensorCopy) -> None:
    """A multicast copy's constant ctaMask names ranks of the test's cluster only."""
    if ins.multicast is not None:
        mask = _imm(ins.multicast, ins, "ctaMask")
        if not 0 < mask < 1 << th.ranks:
            _unsupported(f"multicast to ctaMask {mask:#x} `{ins.text}`", f"the cluster has "
                         f"{th.ranks} CTA(s) in the test: name ranks 0..{th.ranks - 1}", ins.pos)


def _check_bulk(th: _Thread, k: int, ins: BulkCopy) -> None:
    for a in (ins.dst, ins.src) + ((ins.mbar,) if ins.mbar else ()):
        if not isinstance(a.base, Sym) or a.offset:
            _unsupported(f"bulk copy address `{ins.text}`", "name the locations", ins.pos)
    if _imm(ins.size, ins, "size") != 4:
        _unsupported(f"bulk copy of {ins.size.value} bytes `{ins.text}`",
                     "the device runs one-word copies", ins.pos)
    _check_multicast(th, ins)


def _check_tensor(th: _Thread, k: int, ins: TensorCopy) -> None:
    """cp.async.bulk.tensor: its box start and map are checked by tensor.plan; here the
    mbarrier (named, no offset) and a multicast mask of the test's ranks."""
    if ins.mbar is not None and (not isinstance(ins.mbar.base, Sym) or ins.mbar.offset):
        _unsupported(f"tensor copy mbarrier `{ins.text}`", "name the mbarrier", ins.pos)
    _check_multicast(th, ins)


def _check_async_store(th: _Thread, k: int, ins: AsyncStore) -> None:
    _cluster_address(th, ins.addr, ins, "st.async/red.async")
    _cluster_address(th, ins.mbar, ins, "st.async/red.async mbarrier")
    ranks = {_rank_of(th, a) for a in (ins.addr, ins.mbar)}
    if len(ranks) > 1:
        _unsupported(f"`{ins.text}` with its word and its mbarrier in different CTAs", "the PTX "
                     "ISA needs both in one CTA: mapa both to the same rank", ins.pos)
    if th.bulk and ins.op is not None:
        _unsupported(f"`{ins.text}` beside bulk copies", "a bulk copy moves 16 bytes on the "
                     "device, so its tx-counts are scaled by 4; red.async completes 4 bytes and "
                     "has no 16-byte form: run it in a test without bulk copies", ins.pos)


def _rank_of(th: _Thread, a) -> object:
    """The CTA rank an address names: None (the thread's own) or the mapa's rank operand."""
    if isinstance(a.base, Sym):
        return None
    r = th.mapas[a.base.name].rank
    return r.value if isinstance(r, Imm) else r.name


def _check_cp_async(th: _Thread, k: int, ins) -> None:
    addrs = (ins.dst, ins.src) if isinstance(ins, CpAsync) else (
        (ins.mbar,) if ins.mbar is not None else ())
    for a in addrs:
        if not isinstance(a.base, Sym) or a.offset:
            _unsupported(f"cp.async address `{ins.text}`", "name the locations", ins.pos)
    if isinstance(ins, CpAsync) and _imm(ins.size, ins, "size") != 4:
        _unsupported(f"cp.async of {ins.size.value} bytes `{ins.text}`",
                     "the device runs one-word copies", ins.pos)


def _check_elect(th: _Thread, k: int, ins: Elect) -> None:
    """elect.sync waits for every lane of its membermask; the harness runs a test thread as a
    whole warp (32 instances, one per lane), each of which executes it."""
    if ins.guard is not None or k > th.first_branch:
        _unsupported(f"`{ins.text}` predicated or after a branch", "the device runs elect.sync "
                     "where every lane of the warp reaches it (unpredicated, before every branch)",
                     ins.pos)
    if not isinstance(ins.mask, Imm) or ins.mask.value & 0xffffffff != 0xffffffff:
        _unsupported(f"`{ins.text}` with a partial membermask", "the harness runs each test "
                     "thread as a full warp of 32 instances, all of which execute it, and the ISA "
                     "leaves a lane outside membermask undefined: use 0xffffffff", ins.pos)


def _check_wgmma(th: _Thread, k: int, ins: Wgmma) -> None:
    _unsupported(f"wgmma `{ins.text}`", WGMMA_WHY, ins.pos)


WGMMA_WHY = (
    "the litmus mma has no hardware counterpart: it reads one 32-bit word of A and one of B "
    "(a descriptor naming one word) and computes d0 = A*B, while wgmma.mma_async.m64nNk32 reads "
    "whole 64x32 and 32xN byte tiles in the descriptor's layout and gives each lane a dot "
    "product over 32 bytes of many words; and it is .sync.aligned over a warpgroup (4 warps "
    "acting as one), whereas the harness runs each test thread as one warp of 32 independent "
    "instances")


def _check_proxy_fence(th: _Thread, k: int, ins: ProxyFence) -> None:
    if ins.kind not in ("async", "tensormap"):  # the tensormap acquire form: layout refuses it
        _unsupported(f"proxy: proxy fence `{ins.text}`",
                     "only fence.proxy.async and fence.proxy.tensormap::generic.release run on "
                     "the device", ins.pos)


_CHECKS = {Barrier: _check_barrier, ClusterBarrier: _check_barrier, MBarrier: _check_mbarrier,
           Mapa: _check_mapa, BulkCopy: _check_bulk, AsyncStore: _check_async_store,
           CpAsync: _check_cp_async, CpAsyncGroup: _check_cp_async, Elect: _check_elect,
           Wgmma: _check_wgmma, ProxyFence: _check_proxy_fence, TensorCopy: _check_tensor}


def _check_forms(prog: Program) -> None:
    """Forms the device runs; everything else a located 'not supported … on the device'."""
    bulk = any(isinstance(i, COPIES) for t in prog.threads for i in t.instrs)
    for t in prog.threads:
        ranks = len({u.placement.cta_key for u in prog.threads
                     if u.placement.cluster_key == t.placement.cluster_key})
        th = _Thread(prog, t, _straight_prefix(t), _mapa_regs(t), ranks, bulk)
        for k, ins in enumerate(t.instrs):
            check = _CHECKS.get(type(ins))
            if check is not None:
                check(th, k, ins)
    if any(isinstance(i, MBarrier) and i.op == "inval" for t in prog.threads for i in t.instrs):
        _check_inval(prog)


def _check_inval(prog: Program) -> None:
    """An mbarrier operation on an invalidated object is undefined behaviour (PTX ISA,
    mbarrier.inval): a test whose executions may do one (the model's finding
    ``mbarrier-use-after-inval``) has no defined hardware behaviour to compare."""
    from ..queries.checker import check

    res = check(prog, "ptx", flags=True)
    for f in res.findings:
        if f.name == "mbarrier-use-after-inval":
            ev = f.events[0]
            use = next((i for t in prog.threads if t.name == ev.thread for i in t.instrs
                        if i.pos is not None and i.pos.line == ev.line), None)
            text = use.text if use is not None else ev.text
            _unsupported(f"an mbarrier operation after mbarrier.inval `{text}`", "the PTX ISA "
                         "leaves an operation on an invalidated mbarrier undefined, and the model "
                         "finds an execution with one (mbarrier-use-after-inval): check it with "
                         "the model only", use.pos if use is not None else prog.threads[0].pos)


def _cluster_phases(prog: Program) -> int:
    """Every thread takes the same number of arrive/wait pairs, in that order (the hardware
    barrier counts every thread of the cluster)."""
    counts = set()
    for t in prog.threads:
        seq = [i for i in t.instrs if isinstance(i, ClusterBarrier)]
        for n, ins in enumerate(seq):
            if ins.kind != ("arrive" if n % 2 == 0 else "wait"):
                _unsupported(f"cluster barrier order at `{ins.text}`",
                             "alternate barrier.cluster.arrive and .wait, arrive first", ins.pos)
        if len(seq) % 2:
            _unsupported(f"thread {t.name} ends without barrier.cluster.wait",
                         "close every arrive with a wait", t.pos)
        counts.add(len(seq) // 2)
    if len(counts) > 1:
        _unsupported("threads taking different numbers of cluster-barrier phases",
                     "the hardware barrier waits for every thread of the cluster: give every "
                     "thread the same arrive/wait pairs", prog.threads[0].pos)
    return counts.pop() if counts else 0


def _events_after(t, k: int) -> bool:
    return any(not isinstance(i, NO_EVENT) for i in t.instrs[k + 1:])


def _cta_barriers(prog: Program, roles, mw: int):  # noqa: C901 - per CTA, per barrier id
    """Barrier ids, each barrier instruction's BarUse, and the quorum rescues."""
    bar_ids: list[tuple[int, ...]] = []
    uses: dict = {}
    rescues: list[Rescue] = []
    by_cta: dict = {}
    for r in roles:
        by_cta.setdefault((r.cg, r.rank), []).append(r)
    for (cg, rank), rs in by_cta.items():
        found: dict[tuple, list] = {}  # barrier id -> [(role, index, instruction)]
        for r in rs:
            t = prog.threads[r.index]
            for k, ins in enumerate(t.instrs):
                if isinstance(ins, Barrier):
                    ident = tuple(_imm(o, ins, "barrier id") for o in ins.ids)
                    found.setdefault(ident, []).append((r, k, ins))
        for ident, items in found.items():
            if ident not in bar_ids:
                bar_ids.append(ident)
            u = bar_ids.index(ident)
            parts = {r.index for r, _, _ in items}
            counts = {None if ins.count is None else _imm(ins.count, ins, "thread count")
                      for _, _, ins in items}
            first = items[0][2]
            if len(counts) > 1:
                _unsupported(f"barrier {ident} with different thread counts", "give every "
                             "instruction of one barrier the same count", first.pos)
            c = counts.pop()
            per_role = {p: sum(1 for r, _, _ in items if r.index == p) for p in parts}
            if c is None or c == len(parts):  # every participant, every phase
                mixed = max(per_role.values()) > 1 and any(i.kind != "sync" for _, _, i in items)
                if len(set(per_role.values())) > 1 or mixed:
                    _unsupported(f"barrier {ident} taken a different number of times by its threads",
                                 "every thread of the CTA takes it equally often", first.pos)
                for r, k, ins in items:
                    uses[(r.index, k)] = BarUse(u, 32 * len(parts), ins.kind == "sync")
                continue
            if max(per_role.values()) > 1:
                _unsupported(f"barrier {ident} with a quorum, taken twice by one thread",
                             "one quorum barrier per thread", first.pos)
            arrivals = len(items)
            if c > arrivals or c < 1:
                _unsupported(f"barrier {ident} waiting for {c} threads of {arrivals}",
                             "no phase of it can complete: the test can only hang", first.pos)
            left = arrivals % c
            if not left:
                for r, k, ins in items:
                    uses[(r.index, k)] = BarUse(u, 32 * c, ins.kind == "sync")
                continue
            pads = mw - len(rs)
            if any(ins.kind != "sync" for _, _, ins in items) or c - left > pads or any(
                    x.cg == cg and x.rank == rank for x in rescues):
                _unsupported(f"quorum barrier {ident} ({c} of {arrivals} threads) leaving "
                             f"{left} thread(s) waiting", "the device rescues one such barrier "
                             "of bar.sync per CTA when it has enough spare warps", first.pos)
            at = 32 * (arrivals - left)
            rescues.append(Rescue(cg, rank, u, at, 32 * c, c - left))
            for r, k, _ins in items:
                t = prog.threads[r.index]
                uses[(r.index, k)] = BarUse(u, 32 * c, True, at, _events_after(t, k))
    return tuple(bar_ids), uses, tuple(rescues)


def plan(prog: Program, roles, warps_per_cta: int) -> SyncPlan | None:
    """The synchronization plan of a test, or None when it has no barrier and no Hopper form."""
    if not synchronized(prog):
        return None
    _check_forms(prog)
    mw = pow2(warps_per_cta)
    bar_ids, uses, rescues = _cta_barriers(prog, roles, mw)
    ins_all = [i for t in prog.threads for i in t.instrs]
    peers = any(isinstance(i, Mapa) or isinstance(i, COPIES) and i.multicast is not None
                for i in ins_all)
    return SyncPlan(mw, bar_ids, uses, rescues, _cluster_phases(prog), peers,
                    any(isinstance(i, COPIES) for i in ins_all))


def _mbar_operands(ins) -> list:
    if isinstance(ins, MBarrier):
        return [ins.addr]
    if isinstance(ins, (BulkCopy, TensorCopy, CpAsyncGroup, AsyncStore)) and ins.mbar is not None:
        return [ins.mbar]
    return []


def mbarrier_locations(prog: Program) -> tuple[str, ...]:
    """The .shared .b64 locations used as mbarrier objects."""
    names: list[str] = []
    for t in prog.threads:
        mapas = {i.dst.name: i.src.name for i in t.instrs if isinstance(i, Mapa)
                 and isinstance(i.src, Sym)}
        for ins in t.instrs:
            for a in _mbar_operands(ins):  # by name, or through a mapa of it (another CTA's)
                name = a.base.name if isinstance(a.base, Sym) else mapas.get(a.base.name)
                if name is not None and name not in names:
                    names.append(name)
    return tuple(n for n in (loc.name for loc in prog.locations) if n in names)


def mbarrier_only(prog: Program, name: str) -> bool:
    """Whether every access to location ``name`` is an mbarrier operation."""
    for t in prog.threads:
        for ins in t.instrs:
            if isinstance(ins, MEMORY_INSTRS) and isinstance(ins.addr.base, Sym) \
                    and ins.addr.base.name == name:
                return False
            if isinstance(ins, BulkCopy) and any(isinstance(a.base, Sym) and a.base.name == name
                                                 for a in (ins.dst, ins.src)):
                return False
            if isinstance(ins, TensorCopy) and ins.smem.base == Sym(name):
                return False
    return True
