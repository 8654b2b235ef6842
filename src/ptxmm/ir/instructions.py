"""The typed instruction IR: operands (registers, immediates, symbols, addresses), every PTX
instruction family's record (``Load`` … ``Ret``; a new form is one record here) and the operand
accessors the checks and the builder share. Plain frozen records (``@record``)."""

from __future__ import annotations

from typing import Union

from .._infra.records import record
from ..errors import SourcePos
from .stops import Stop

SCOPES = ("cta", "cluster", "gpu", "sys")
SEMS = ("weak", "relaxed", "acquire", "release", "acq_rel", "sc")
# Memory proxies (PTX ISA "Memory Consistency Model" › proxies): the generic proxy, and the
# texture, surface and constant proxies through which tld/tex, suld/sust and ld.const access memory,
# and the async proxy of the bulk asynchronous copies (cp.async.bulk, docs/hopper.md).
PROXIES = ("generic", "texture", "surface", "constant", "async")


# ----- the IR: records (``@dataclass(frozen=True)``, cheaper to create: records.py) ------------


TENSORMAP_BYTES = 128  # sizeof(CUtensorMap): the opaque object a tensor map is (cuda.h)


@record
class TensorMap:
    """A litmus tensor map (``.global .tensormap tm = tensormap(a, dims {4, 2}, box {2, 2});``,
    docs/hopper.md): a tiled map of 32-bit elements over the global array ``array`` (its element
    0 the tensor's origin, dimension 0 contiguous, rows packed), ``dims`` the tensor's size and
    ``box`` the bounding box a copy moves, dimension 0 first. What the tensor map location holds
    is the map's global address (the address of ``array``'s element 0): ``tensormap.replace
    .global_address`` changes it; dims and box are fixed (CUTLASS encodes them on the host with
    cuTensorMapEncodeTiled)."""

    array: str
    dims: tuple[int, ...]
    box: tuple[int, ...]


@record
class Reg:
    name: str


@record
class Imm:
    value: int


@record
class Sym:
    """A location name used as a value (its address), e.g. ``mov.u64 %rd1, x;``."""

    name: str


@record
class Addr:
    """A memory operand ``[base]``; base is a location name (Sym) or a register."""

    base: Union[Sym, Reg]
    offset: int = 0


Operand = Union[Reg, Imm, Sym, Addr]


# ----- types ------------------------------------------------------------------------------------
# PTX scalar types: .b/.u/.s/.f of 8..64 bits, and .pred (1 bit). Values are machine integers of
# the type's width; .s types compare and print as two's complement.


def type_width(t: str) -> int:
    """Bits of a PTX type name without its dot (``u32`` → 32, ``pred`` → 1)."""
    return 1 if t == "pred" else int(t[1:])


def type_signed(t: str) -> bool:
    return t.startswith("s")


# ----- the typed instruction IR ------------------------------------------------------------------
# One small frozen dataclass per instruction class. Qualifiers are normalised by the front ends:
# ``ld`` → sem "weak"; ``membar.gl`` → Fence(sem "sc", scope "gpu"); ``ld.volatile`` → relaxed sys
# with volatile=True; ``atom`` without sem/scope → relaxed gpu.

Guard = tuple[Reg, bool]  # (predicate register, negated): ``@%p`` / ``@!%p``


@record(kw_only=True)
class Instr:
    pos: SourcePos | None = None
    text: str = ""
    guard: Guard | None = None

    @property
    def opcode(self) -> str:
        return type(self).__name__.lower()


@record(kw_only=True)
class Load(Instr):
    dst: Reg
    addr: Addr
    type: str = "u32"
    sem: str = "weak"  # weak relaxed acquire
    scope: str | None = None
    space: str | None = None  # "global" | "shared" | None (generic addressing)
    proxy: str = "generic"  # generic texture surface constant (tld/tex, suld, ld.const/cold)
    volatile: bool = False


@record(kw_only=True)
class Store(Instr):
    addr: Addr
    src: Operand
    type: str = "u32"
    sem: str = "weak"  # weak relaxed release
    scope: str | None = None
    space: str | None = None
    proxy: str = "generic"  # generic surface (sust)
    volatile: bool = False


@record(kw_only=True)
class Atom(Instr):
    """``atom.op``: read, then write op(old, srcs...); ``dst`` receives the old value. A failed
    ``cas`` performs no write."""

    op: str  # add inc dec exch cas and or xor min max
    dst: Reg
    addr: Addr
    srcs: tuple[Operand, ...]
    type: str = "u32"
    sem: str = "relaxed"  # relaxed acquire release acq_rel
    scope: str = "gpu"
    space: str | None = None
    proxy: str = "generic"  # generic surface (suatom)


@record(kw_only=True)
class Red(Instr):
    """``red.op``: an atomic read-modify-write whose read is not a read operation (8.11.1)."""

    op: str  # add inc dec and or xor min max
    addr: Addr
    src: Operand
    type: str = "u32"
    sem: str = "relaxed"  # relaxed release
    scope: str = "gpu"
    space: str | None = None
    proxy: str = "generic"  # generic surface (sured)


@record(kw_only=True)
class Fence(Instr):
    sem: str  # sc acq_rel acquire release
    scope: str
    # fence.mbarrier_init.release.cluster: a release fence whose effect is limited to the thread's
    # prior mbarrier.init operations (models/ptx-async.cat)
    restrict: str | None = None


@record(kw_only=True)
class ProxyFence(Instr):
    """``fence.proxy.alias`` (virtual aliases of one physical location) or
    ``fence.proxy.texture|surface|constant`` (that proxy and the generic proxy)."""

    kind: str  # "alias" | "texture" | "surface" | "constant" | "async" | "tensormap"
    # fence.proxy.async.global / .shared::cta / .shared::cluster: the state space it covers
    # ("global" | "shared"; None: every state space)
    space: str | None = None
    # the uni-directional fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster /
    # .acquire.sync_restrict::shared::cluster.cluster: "release" | "acquire" (None: bi-directional)
    sem: str | None = None
    restrict: str | None = None  # "shared::cta" | "shared::cluster"
    # fence.proxy.tensormap::generic.release.scope / .acquire.scope [addr], 128: its scope, and
    # the acquire's address operand (the tensor map [addr, addr+127] it covers)
    scope: str | None = None
    addr: Addr | None = None


@record(kw_only=True)
class Barrier(Instr):
    """CTA execution barrier ``bar{.cta}.sync|arrive a{, b}``: ids compared by value, ``count``
    the number of participating threads (None: all threads of the CTA — or, with ``instance``,
    the Dat3M dialect's ``bar.cta.sync c{, id}``: the threads of the CTA whose code holds a
    barrier of the same constant and id, Dat3M's barrier *instance*)."""

    kind: str  # "sync" | "arrive"
    ids: tuple[Operand, ...]
    count: Operand | None = None
    instance: bool = False


@record(kw_only=True)
class ClusterBarrier(Instr):
    """``barrier.cluster.arrive{.release|.relaxed}{.aligned}`` / ``barrier.cluster.wait{.acquire}
    {.aligned}`` (PTX ISA, barrier.cluster): every thread of the cluster arrives once per phase;
    a wait completes once all non-exited threads of the cluster arrived (docs/hopper.md)."""

    kind: str  # "arrive" | "wait"
    sem: str  # arrive: "release" (default) | "relaxed"; wait: "acquire"
    aligned: bool = False


@record(kw_only=True)
class MBarrier(Instr):
    """An mbarrier operation on a ``.shared .b64`` location (PTX ISA, mbarrier; docs/hopper.md):
    ``init [a], count``; ``arrive`` / ``arrive_drop`` ``state, [a]{, count}`` (``expect_tx``:
    ``state, [a], txCount``); ``expect_tx`` / ``complete_tx`` ``[a], txCount``; ``test_wait`` /
    ``try_wait`` ``p, [a], state`` (``parity``: ``p, [a], phaseParity``)."""

    op: str  # init arrive arrive_drop expect_tx complete_tx test_wait try_wait
    addr: Addr
    dst: Reg | None = None  # arrive: the state (None for `_`); waits: the predicate
    count: Operand | None = None  # init: expected count; arrive: arrival count (None: 1)
    tx: Operand | None = None  # expect_tx / complete_tx / arrive.expect_tx: transaction bytes
    state: Operand | None = None  # waits: the state operand, or the phase parity
    parity: bool = False
    sem: str = "release"  # arrive: release | relaxed; waits: acquire | relaxed; tx ops: relaxed
    scope: str = "cta"
    space: str | None = "shared"

    @property
    def type(self) -> str:
        """The type of the register it writes: the waits' predicate, the arrives' state."""
        return "pred" if self.op in ("test_wait", "try_wait") else "b64"


@record(kw_only=True)
class Mapa(Instr):
    """``mapa{.shared::cluster}.type d, a, rank``: the address of location ``a`` (a name, or a
    register holding its address) in the shared memory of CTA ``rank`` of the cluster."""

    dst: Reg
    src: Operand
    rank: Operand
    type: str = "u64"


@record(kw_only=True)
class BulkCopy(Instr):
    """``cp.async.bulk`` of one word (litmus-sized; PTX ISA, cp.async.bulk): an asynchronous read
    of ``src`` and write of ``dst`` through the async proxy, performed by the async agent on the
    thread's behalf; ``mbar`` (global→shared) receives the complete-tx of ``size`` bytes,
    without it (shared→global) completion is tracked by bulk async-groups."""

    dst: Addr
    src: Addr
    size: Operand
    mbar: Addr | None = None
    dst_space: str = "shared"
    src_space: str = "global"
    # .multicast::cluster: the ctaMask operand (bit k: CTA rank k of the cluster receives the word
    # at dst's CTA-relative offset, and the complete-tx on its mbarrier at mbar's offset)
    multicast: Operand | None = None
    # cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type: the reduction (add min max inc
    # dec and or xor) the agent applies to dst with the word read from src, at ``type``
    op: str | None = None
    type: str = "b32"


@record(kw_only=True)
class TensorCopy(Instr):
    """``cp.async.bulk.tensor.{1d,2d}`` in tile mode (PTX ISA, cp.async.bulk.tensor): the async
    agent reads the tensor map ``tmap`` through the tensormap proxy, then copies the box at
    ``coords`` word by word between the map's global array and the shared words at ``smem``;
    a load (``load``: global → shared::cluster/cta) completes on ``mbar`` with a complete-tx of
    the box's bytes (``.multicast::cluster``: ``multicast`` is the ctaMask), a store (shared::cta →
    global) in bulk async-groups."""

    dims: int
    smem: Addr
    tmap: Addr
    coords: tuple[Operand, ...]
    load: bool = True
    mbar: Addr | None = None
    multicast: Operand | None = None
    dst_space: str = "shared"

    def reads(self) -> tuple[Operand, ...]:
        return self.coords if self.multicast is None else (*self.coords, self.multicast)


@record(kw_only=True)
class TensorMapReplace(Instr):
    """``tensormap.replace.tile.global_address{.global}.b1024.b64 [tmap], new_val`` (PTX ISA,
    tensormap.replace): "treated as a weak memory operation, on the entire 1024-bit opaque
    tensor-map object": a weak generic write of the map location, the map's new global address."""

    addr: Addr
    src: Operand

    def reads(self) -> tuple[Operand, ...]:
        return (self.src,)


@record(kw_only=True)
class BulkGroup(Instr):
    """``cp.async.bulk.commit_group`` / ``cp.async.bulk.wait_group{.read} N``."""

    kind: str  # "commit" | "wait"
    n: int = 0
    read: bool = False


@record(kw_only=True)
class CpAsync(Instr):
    """Ampere ``cp.async.ca.shared{::cta}.global [dst], [src], 4`` (one word; PTX ISA, cp.async): a
    weak read of ``src`` and weak write of ``dst`` through the generic proxy, performed
    asynchronously for the thread; completion by cp.async groups or cp.async.mbarrier.arrive."""

    dst: Addr
    src: Addr
    size: Operand


@record(kw_only=True)
class CpAsyncGroup(Instr):
    """``cp.async.commit_group``, ``cp.async.wait_group N``, ``cp.async.wait_all``, and
    ``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar]`` (kind "arrive")."""

    kind: str  # "commit" | "wait" | "wait_all" | "arrive"
    n: int = 0
    mbar: Addr | None = None
    noinc: bool = False


@record(kw_only=True)
class AsyncStore(Instr):
    """``st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes.type [a], b, [mbar]`` and
    ``red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type [a], b,
    [mbar]`` (PTX ISA, st.async / red.async): a store (or reduction, ``op``) into the shared
    memory of a CTA of the cluster, performed asynchronously, then a complete-tx of its bytes on
    the mbarrier ``mbar`` of that CTA."""

    addr: Addr
    src: Operand
    mbar: Addr
    type: str = "b32"
    op: str | None = None  # red.async: add inc dec min max and or xor


@record(kw_only=True)
class Wgmma(Instr):
    """``wgmma.fence.sync.aligned``, ``wgmma.commit_group.sync.aligned``,
    ``wgmma.wait_group.sync.aligned N`` and, litmus-sized (PTX ISA, wgmma.mma_async),
    ``wgmma.mma_async.sync.aligned.shape.s32.atype.btype {d0, ...}, a-desc, b-desc, scale-d``: the
    descriptors are registers holding the address of a ``.shared`` word (``mov.u64 %rd, x;``),
    which the asynchronous agent reads through the async proxy; the first accumulator register
    ``dst`` becomes ``(scale-d ? dst : 0) + A * B`` once a ``wgmma.wait_group`` waits for the
    operation (docs/hopper.md)."""

    kind: str  # "fence" | "mma" | "commit" | "wait"
    dst: Reg | None = None  # mma: the first accumulator register (the one the litmus mma computes)
    accs: tuple[Reg, ...] = ()  # mma: the whole accumulator vector as written
    a: Operand | None = None  # mma: the A and B matrix descriptors
    b: Operand | None = None
    scale_d: Operand | None = None  # mma: 0 (D = A*B) or not (D = A*B + D); an immediate or predicate
    n: int = 0  # wait: the number of most recent groups left pending
    shape: str = ""
    type: str = "s32"

    def reads(self) -> tuple[Operand, ...]:
        """The value operands: the descriptors, scale-d and (unless scale-d is 0) the accumulator."""
        if self.kind != "mma":
            return ()
        acc = () if isinstance(self.scale_d, Imm) and self.scale_d.value == 0 else (self.dst,)
        return (self.a, self.b, self.scale_d, *acc)


@record(kw_only=True)
class Elect(Instr):
    """``elect.sync _|p, membermask`` (PTX ISA, elect.sync): ``p`` is True in the lane the
    instruction elects among the membermask's lanes, False in the others.  A litmus thread is one
    lane whose warp-mates are not in the test: whether it is the elected one is the execution's
    choice (docs/hopper.md)."""

    dst: Reg
    mask: Operand
    type: str = "pred"

    def reads(self) -> tuple[Operand, ...]:
        return (self.mask,)


@record(kw_only=True)
class Nanosleep(Instr):
    """``nanosleep.u32 t`` (PTX ISA, Miscellaneous Instructions › nanosleep): the thread is
    suspended for a duration in [0, 2t] nanoseconds. A delay and nothing more: no memory access,
    no ordering (the model has no time), so an execution is the same with or without it; ``t`` is
    read (a register or an immediate)."""

    t: Operand
    type: str = "u32"


@record(kw_only=True)
class Halt(Instr):
    """The thread stops here, and why (:class:`~ptxmm.ir.stops.Stop`): a kernel's failing
    ``assert()``, nvcc's call of ``__assertfail``, as the kernel front end lowers it; ``trap``
    (a litmus test's or a kernel's ``__trap()``)."""

    stop: Stop


@record(kw_only=True)
class Mov(Instr):
    dst: Reg
    src: Operand
    type: str = "u32"


@record(kw_only=True)
class Alu(Instr):
    """Register arithmetic, wrapping at the type's width: add sub mul and or xor not neg shl shr
    min max (signedness from ``type``)."""

    op: str
    dst: Reg
    srcs: tuple[Operand, ...]
    type: str = "u32"


@record(kw_only=True)
class Setp(Instr):
    """``setp.cmp.type p, a, b``; cmp in eq ne lt le gt ge lo ls hi hs (lt..ge signed for .s
    types, unsigned for .u/.b; lo ls hi hs always unsigned)."""

    cmp: str
    dst: Reg
    a: Operand
    b: Operand
    type: str = "u32"


@record(kw_only=True)
class Selp(Instr):
    dst: Reg
    a: Operand
    b: Operand
    p: Operand
    type: str = "u32"


@record(kw_only=True)
class Branch(Instr):
    target: str


@record(kw_only=True)
class Label(Instr):
    name: str


@record(kw_only=True)
class VectorOrder(Label):
    """Made by the kernel front end (kernel/module/lowering.py), put before the ``n`` element
    accesses of an acquire or release vector access: the execution runs them in an order it
    chooses (semantics/vectors.py forks the path once per order). A label no branch names, so
    analyses that read a loop body (awaits) see no side effect in it."""

    n: int = 0


@record(kw_only=True)
class Ret(Instr):
    pass


Instruction = Union[Load, Store, Atom, Red, Fence, ProxyFence, Barrier, ClusterBarrier, MBarrier,
                    Mapa, BulkCopy, TensorCopy, TensorMapReplace, BulkGroup, CpAsync, CpAsyncGroup,
                    AsyncStore, Wgmma, Elect, Nanosleep, Halt, Mov,
                    Alu, Setp, Selp, Branch, Label, Ret]
MEMORY_INSTRS = (Load, Store, Atom, Red)


def value_operands(ins: Instruction) -> tuple[Operand, ...]:
    """The value operands an instruction reads, in source order (not its memory operand)."""
    match ins:
        case Store() | Red() | Mov():
            return (ins.src,)
        case Atom() | Alu():
            return ins.srcs
        case Setp():
            return (ins.a, ins.b)
        case Selp():
            return (ins.a, ins.b, ins.p)
        case Barrier():
            return ins.ids if ins.count is None else (*ins.ids, ins.count)
        case MBarrier():
            return tuple(o for o in (ins.count, ins.tx, ins.state) if o is not None)
        case Mapa():
            return (ins.src, ins.rank)
        case BulkCopy():
            return (ins.size,) if ins.multicast is None else (ins.size, ins.multicast)
        case CpAsync():
            return (ins.size,)
        case AsyncStore():
            return (ins.src,)
        case Nanosleep():
            return (ins.t,)
        case Elect() | Wgmma() | TensorCopy() | TensorMapReplace() | WarpOp():
            return ins.reads()
    return ()


def memory_operands(ins: Instruction) -> tuple[Addr, ...]:
    """The memory operands ``[a]`` an instruction reads or writes through."""
    if isinstance(ins, (*MEMORY_INSTRS, MBarrier)):
        return (ins.addr,)
    if isinstance(ins, BulkCopy):
        return (ins.dst, ins.src) + ((ins.mbar,) if ins.mbar is not None else ())
    if isinstance(ins, CpAsync):
        return (ins.dst, ins.src)
    if isinstance(ins, TensorCopy):
        return (ins.smem, ins.tmap) + ((ins.mbar,) if ins.mbar is not None else ())
    if isinstance(ins, TensorMapReplace):
        return (ins.addr,)
    if isinstance(ins, ProxyFence) and ins.addr is not None:
        return (ins.addr,)
    if isinstance(ins, AsyncStore):
        return (ins.addr, ins.mbar)
    if isinstance(ins, CpAsyncGroup) and ins.mbar is not None:
        return (ins.mbar,)
    return ()


def operands(ins: Instruction) -> tuple[Operand, ...]:
    """Every operand an instruction reads, in source order (its memory operands first)."""
    return memory_operands(ins) + value_operands(ins)


# ----- warp collectives (kernels: semantics/warp_collectives.py) ------------------------------------


@record(kw_only=True)
class WarpOp(Instr):
    """A warp collective of a kernel (PTX ISA, Parallel Synchronization and Communication
    Instructions: shfl.sync, vote.sync, match.sync, redux.sync, activemask, bar.warp.sync).
    ``form``: the opcode and qualifiers that must agree for lanes to meet at it ("executed
    ... with the same qualifiers and same membermask value"); ``mode``: any all uni ballot
    (vote), up down bfly idx (shfl), any all (match), add min max and or xor (redux);
    ``dst``/``pdst``: the destinations (``d|p``); ``a``: the lane's source, ``b``/``c``:
    shfl's lane operand and clamp/segment mask; ``neg``: vote's source predicate is ``!a``."""

    form: str
    mode: str = ""
    type: str = "b32"
    dst: Reg | None = None
    pdst: Reg | None = None
    a: Operand | None = None
    b: Operand | None = None
    c: Operand | None = None
    mask: Operand | None = None
    neg: bool = False

    def reads(self) -> tuple[Operand, ...]:
        return tuple(o for o in (self.a, self.b, self.c, self.mask) if o is not None)


Instruction = Union[Instruction, WarpOp]  # noqa: UP007 — the warp collectives join the IR's instructions
