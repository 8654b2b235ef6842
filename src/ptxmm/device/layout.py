"""How a Program is laid out on the GPU: roles, their placement groups, locations, and the outcome
key that the on-GPU histogram counts. Pure Python (no CuPy), shared by code generation and decoding.

Placement (a parallel test environment): a physical thread
plays every role, each for a different instance. Roles are grouped by cluster (``cg``), by CTA
rank inside the cluster (``rank``) and by warp inside the CTA (``warp``): roles of one instance that
the program puts in one CTA run in one block, in different warps; roles in different CTAs run in
different blocks; roles in one cluster run in one thread-block cluster."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedError
from ..ir.program import (
    MEMORY_INSTRS,
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Fence,
    Imm,
    Instruction,
    Label,
    Load,
    Mov,
    Nanosleep,
    Program,
    ProxyFence,
    Red,
    Reg,
    Ret,
    Selp,
    Setp,
    Store,
    Sym,
    TensorCopy,
    TensorMapReplace,
    operands,
    value_operands,
)
from ..semantics.builder import build
from ..semantics.outcomes import Observable, observables
from ..syntax.litmus import narrowed_to_32_bits
from .env import pow2
from .sync import HOPPER, SyncPlan, mbarrier_locations, mbarrier_only
from .sync import plan as sync_plan
from .tensor import TensorPlan
from .tensor import plan as tensor_plan

MAX_KEY_BITS = 22


@dataclass(frozen=True)
class Role:
    index: int
    name: str
    cg: int  # cluster group
    rank: int  # CTA rank inside the cluster
    warp: int  # warp offset inside the CTA


@dataclass(frozen=True)
class ObsSlot:
    """One observable of the outcome key: where the device finds it and how it is encoded."""

    obs: Observable
    values: tuple[int, ...]  # known values, coded 0..K-1; code K means "some other value"
    shift: int
    bits: int
    role: int = -1  # register observables: the role that records it
    reg: str = ""
    res_index: int = -1  # index in the per-instance register result row
    loc: int = -1  # memory observables: global location index
    shared_loc: int = -1  # or shared location index


@dataclass(frozen=True)
class Layout:
    program: Program
    roles: tuple[Role, ...]
    cluster_size: int  # CTAs per thread-block cluster (1 = no clusters)
    n_groups: int  # cluster groups (distinct block offsets needed)
    warps_per_cta: int
    globals_: tuple[str, ...]  # global locations, in address-slot order
    shared: tuple[str, ...]  # shared locations
    init: dict[str, int]
    slots: tuple[ObsSlot, ...]
    n_res: int  # registers recorded per instance
    key_bits: int  # bits of the outcome part of the key (flags come above it)
    observe: str = "all"  # which observables the key holds ("all" or "condition")
    mbars: tuple[str, ...] = ()  # .shared .b64 mbarrier objects (a u64 region after `shared`)
    sync: SyncPlan | None = None  # barriers / Hopper synchronization: the step schedule (sync.py)
    tensor: TensorPlan | None = None  # tensor copies: maps, tensor arrays, shared boxes (tensor.py)

    @property
    def chunk(self) -> int:
        """32-bit words per .shared slot: 4 (16 bytes, aligned) when bulk copies move them."""
        return 4 if self.sync is not None and self.sync.bulk else 1

    @property
    def max_threads(self) -> int:
        return self.sync.max_threads if self.sync is not None else 1024

    @property
    def min_stride(self) -> int:
        """Words between global slots: a bulk copy moves 16 aligned bytes, its own chunk."""
        return 4 if self.sync is not None and self.sync.bulk else 1

    @property
    def n_global_slots(self) -> int:
        """Location slots per instance in global memory (at least one)."""
        return max(1, len(self.globals_))

    @property
    def ctas(self) -> dict[tuple[int, int], int]:
        """(cluster group, rank) of each CTA of the program → its index (shared-memory copies)."""
        out: dict[tuple[int, int], int] = {}
        for r in self.roles:
            out.setdefault((r.cg, r.rank), len(out))
        return out

    @property
    def access_base(self) -> tuple[int, ...]:
        """Index of each role's first memory access in the table of zero offsets."""
        counts = [sum(1 for i in t.instrs if isinstance(i, MEMORY_INSTRS)) for t in self.program.threads]
        return tuple(sum(counts[:k]) for k in range(len(counts) + 1))

    @property
    def n_zero(self) -> int:
        """Zero offsets, one per memory access of the program (at least one)."""
        return max(1, self.access_base[-1])

    @property
    def params_words(self) -> int:
        """Size of the device-side Params struct in 32-bit words (see codegen)."""
        return 8 + 2 * self.n_global_slots + self.n_zero

    @property
    def shared_columns(self) -> int:
        """Shared words (chunks under bulk copies) per (region, lane): one per plain location, a
        padded row per tensor box array (tensor.py)."""
        if self.tensor is None:
            return len(self.shared)
        boxed = sum(1 for s in self.shared if self.tensor.shared_box(s) is not None)
        return len(self.shared) - boxed + sum(w for _, _, w in self.tensor.boxes)

    def shared_word(self, name: str, g: str, lane: str) -> str:
        """Index into ``sh`` (32-bit words) of shared location ``name`` for region ``g`` and lane
        slot ``lane`` (C expressions) in a synchronized test. Plain locations take one column
        each, in order; a tensor box array's elements lie in one row of ``width`` chunks per
        (region, lane), after the plain columns (a 128-byte aligned box start: tensor.py)."""
        mul = f" * {self.chunk}U" if self.chunk > 1 else ""
        box = self.tensor.shared_box(name) if self.tensor is not None else None
        plain = [s for s in self.shared if self.tensor is None or self.tensor.shared_box(s) is None]
        if box is None:
            return f"(({plain.index(name)} * NREG + {g}) * bsz + {lane}){mul}"
        b, j, width = box
        col = len(plain) + sum(w for _, _, w in self.tensor.boxes[:b])
        return f"({col}U * NREG * bsz + ({g} * bsz + {lane}) * {width}U + {j}U){mul}"

    def global_word(self, name: str, i: str = "i") -> str:
        """Index into ``mem`` (32-bit words) of global location ``name`` for instance ``i``: its
        permuted slot, or for an element of a tensor array its word in the instance's row of
        the tensor region (after the n·LG·stride slot words; tensor.py)."""
        m = self.globals_.index(name)
        el = self.tensor.global_element(name) if self.tensor is not None else None
        if el is None:
            return f"ptxmm_slot(p, {m}, {i}, n) * stride"
        arr, k = el
        return (f"ptxmm_tword(p, {arr.perm_slot}, {i}, n, stride, {arr.offset}U, {arr.words}U, "
                f"{4 * k}U)")

    def shared_bytes(self, threads: int) -> int:
        # synchronized tests: a region per (cluster group, instance rotation), codegen_sync.region
        regions = self.n_groups * self.cluster_size if self.sync is not None else len(self.ctas)
        align = 128 if self.tensor is not None else 0  # slack to round the base up (tensor.py)
        return (4 * self.chunk * self.shared_columns + 8 * len(self.mbars)) * regions * threads + align

    @property
    def dnf_bit(self) -> int:
        return self.key_bits

    @property
    def samesm_bit(self) -> int:
        return self.key_bits + 1

    @property
    def hist_size(self) -> int:
        return 1 << (self.key_bits + 2)

    @property
    def hist_copies(self) -> int:
        """Copies of the histogram the check kernel spreads its atomics over (summed at the end):
        a power of two, at most 64, and at most 2^22 counters in all."""
        return max(1, min(64, (1 << 22) // self.hist_size))


def _unsupported(what: str, hint: str, pos=None):
    raise UnsupportedError(f"{what} on the device", pos, hint)


def _check_supported(prog: Program) -> None:
    # instructions first: an mbarrier test's `.shared .b64 bar` is reported as the mbarrier it is
    for t in prog.threads:
        for ins in t.instrs:
            _check_instr(ins)
    mbars = mbarrier_locations(prog)
    for loc in prog.locations:
        if loc.tensormap is not None:  # a kernel parameter on the device, not a word (tensor.py)
            continue
        if loc.name in mbars:
            if loc.space != "shared" or loc.type != "b64" or not mbarrier_only(prog, loc.name):
                _unsupported(f"mbarrier location `{loc.name}`", "an mbarrier is a .shared .b64 "
                             "location that only mbarrier operations touch", loc.pos)
            continue
        if loc.alias_of is not None:
            _unsupported(f"proxy: location alias `{loc.name}`", "check it with the model only",
                         loc.pos)
        if loc.type not in ("u32", "s32", "b32"):
            _unsupported(f"{loc.type} location `{loc.name}`", "use 32-bit locations", loc.pos)
    for t in prog.threads:
        if t.placement.gpu != 0:
            _unsupported(f"thread {t.name} on gpu {t.placement.gpu}",
                         "the harness runs on one GPU; put every thread on gpu 0", t.pos)
    _check_tensormap_uses(prog)


TENSORMAP_REPLACE_WHY = (
    "tensormap.replace needs sm_90a (ptxas refuses it for sm_90, the harness's target), and it "
    "writes a map in .global or .shared::cta memory, while the harness's maps are kernel "
    "parameters (__grid_constant__) that nothing writes; a map in global memory, reset for every "
    "instance before each step, would need a fence.proxy.tensormap::generic.acquire in the "
    "copying thread to order that reset before its copy, ordering the test does not have: "
    "check it with the model only")
TENSORMAP_ACQUIRE_WHY = (
    "the PTX ISA leaves fence.proxy.tensormap::generic.acquire undefined unless its address is in "
    ".global memory, and the harness's tensor maps are kernel parameters (__grid_constant__, "
    "param space) that nothing writes during a test: check it with the model only")


def _check_tensormap_uses(prog: Program) -> None:
    """A tensor map location is a kernel parameter on the device: only tensor copies name it."""
    maps = {loc.name for loc in prog.locations if loc.tensormap is not None}
    if not maps:
        return
    for t in prog.threads:
        for name, v in t.init_regs:
            if v in maps:
                _unsupported(f"register {name} holding the address of tensor map `{v}`",
                             "the device's tensor maps are kernel parameters, not global words: "
                             "name the map only in cp.async.bulk.tensor", t.pos)
        for ins in t.instrs:
            for o in operands(ins):
                base = o.base if isinstance(o, Addr) else o
                if isinstance(ins, TensorCopy) and o is ins.tmap or not isinstance(base, Sym):
                    continue
                if base.name in maps:
                    _unsupported(f"tensor map `{base.name}` named by `{ins.text}`", "the device's "
                                 "tensor maps are kernel parameters, not global words: name the map "
                                 "only in cp.async.bulk.tensor", ins.pos)


# atom/red operations the generated CUDA can issue (Dat3M's `.sub` becomes `.add` of the negation)
DEVICE_RMW_OPS = ("add", "sub", "inc", "dec", "exch", "cas", "and", "or", "xor", "min", "max")


# what the generated CUDA can issue (codegen._EMIT); anything newer in the IR is "not supported yet"
DEVICE_INSTRS = (Load, Store, Atom, Red, Fence, Mov, Alu, Setp, Selp, Branch, Label, Ret, Nanosleep)


def _check_instr(ins: Instruction) -> None:
    if not isinstance(ins, (*DEVICE_INSTRS, Barrier, ProxyFence, TensorMapReplace, *HOPPER)):
        _unsupported(f"`{ins.text}`", "the device harness does not run this instruction; check it "
                     "with the model only", ins.pos)
    if isinstance(ins, TensorMapReplace):
        _unsupported(f"`{ins.text}`", TENSORMAP_REPLACE_WHY, ins.pos)
    if isinstance(ins, ProxyFence) and ins.kind == "tensormap" and ins.sem == "acquire":
        _unsupported(f"`{ins.text}`", TENSORMAP_ACQUIRE_WHY, ins.pos)
    if isinstance(ins, ProxyFence) and ins.kind not in ("async", "tensormap"):
        _unsupported(f"proxy: proxy fence `{ins.text}`",
                     "only fence.proxy.async and fence.proxy.tensormap::generic.release run on the "
                     "device; other proxy fences run only in the model", ins.pos)
    if isinstance(ins, MEMORY_INSTRS) and ins.proxy != "generic":
        _unsupported(f"proxy: {ins.proxy} access `{ins.text}`",
                     "texture, surface and constant accesses run only in the model", ins.pos)
    if isinstance(ins, (Atom, Red)) and ins.op not in DEVICE_RMW_OPS:
        _unsupported(f"atomic .{ins.op} `{ins.text}`", "PTX has no such atomic operation; "
                     f"the device runs {', '.join(DEVICE_RMW_OPS)}", ins.pos)
    if isinstance(ins, MEMORY_INSTRS) and ins.addr.offset:
        _unsupported(f"address offset in `{ins.text}`", "address locations by name", ins.pos)
    if isinstance(ins, (*MEMORY_INSTRS, Mov, Alu, Selp)) and ins.type[1:] not in ("32", "64"):
        _unsupported(f"type .{ins.type} in `{ins.text}`", "use 32- or 64-bit types", ins.pos)
    if isinstance(ins, MEMORY_INSTRS) and ins.type[1:] != "32":
        _unsupported(f"{ins.type} memory access `{ins.text}`", "test locations are 32-bit", ins.pos)


def _place(prog: Program) -> tuple[tuple[Role, ...], int, int, int]:
    clusters: dict = {}
    for t in prog.threads:
        ctas = clusters.setdefault(t.placement.cluster_key, {})
        ctas.setdefault(t.placement.cta_key, []).append(t)
    roles = []
    max_ranks = max(len(c) for c in clusters.values())
    cs = pow2(max_ranks)
    if cs > 8:
        _unsupported(f"a cluster of {max_ranks} CTAs", "at most 8 CTAs per cluster")
    warps = 1
    for cg, ctas in enumerate(clusters.values()):
        # ranks in the order of the .cta numbers (the model's mapa ranks, docs/hopper.md)
        for rank, (_, threads) in enumerate(sorted(ctas.items(), key=lambda kv: kv[0][-1])):
            warps = max(warps, len(threads))
            for w, t in enumerate(threads):
                roles.append(Role(t.index, t.name, cg, rank, w))
    roles.sort(key=lambda r: r.index)
    return tuple(roles), cs, len(clusters), warps


def _check_observable_reg(prog: Program, o: Observable) -> None:
    """An mbarrier state or a mapa address is the hardware's own encoding: not comparable with
    the model's value of it."""
    t = prog.threads[o.thread]
    for ins in t.instrs:
        waits = getattr(ins, "op", "") in ("test_wait", "try_wait")
        if isinstance(ins, HOPPER) and getattr(ins, "dst", None) == Reg(o.ref.reg) and not waits:
            _unsupported(f"observed register {o.ref.reg} holding `{ins.text}`", "the device's "
                         "mbarrier states and DSMEM addresses are encoded differently from the "
                         "model's: leave the register out of the condition", ins.pos)


def _constants(prog: Program) -> set[int]:
    vals = {0, 1} | {loc.init for loc in prog.locations}
    for t in prog.threads:
        for ins in t.instrs:
            for s in value_operands(ins):
                if isinstance(s, Imm):
                    vals.add(s.value)
    return vals


def make_layout(prog: Program, allowed: list[dict[str, int]] | None = None,
                observe: str = "all") -> Layout:
    """Plan the device layout. ``allowed`` (outcomes as dicts) seeds the value codes, so that every
    model-allowed value has its own code and anything else lands in the "other" code."""
    if prog.format == "litmus":  # Dat3M's 64-bit words, run as 32-bit ones
        prog = narrowed_to_32_bits(prog)
    _check_supported(prog)
    roles, cs, ngroups, warps = _place(prog)
    sync = sync_plan(prog, roles, warps)
    mbars = mbarrier_locations(prog)
    eg = build(prog, unroll=0)
    obs = observables(eg, observe)
    consts = _constants(prog)
    shared = tuple(loc.name for loc in prog.locations if loc.space == "shared" and loc.name not in mbars)
    globals_ = tuple(loc.name for loc in prog.locations if loc.space != "shared"
                     and loc.tensormap is None)
    tensor = tensor_plan(prog, globals_)
    slots: list[ObsSlot] = []
    shift = 0
    res_count = 0
    for o in obs:
        values = tuple(sorted(consts | {out[o.key] for out in allowed or [] if o.key in out}))
        bits = max(1, len(values).bit_length())  # codes 0..K (K = other)
        if o.loc is None:
            _check_observable_reg(prog, o)
            slots.append(ObsSlot(o, values, shift, bits, role=o.thread, reg=o.ref.reg,
                                 res_index=res_count))
            res_count += 1
        else:
            name = o.ref.loc
            loc = prog.location(name)
            if loc is not None and loc.tensormap is not None:
                _unsupported(f"observed tensor map `{name}`", "the device's tensor maps are "
                             "kernel parameters, not global words: leave it out of the condition",
                             loc.pos)
            if name in shared:  # recorded after the test by a thread of the (only) CTA
                slots.append(ObsSlot(o, values, shift, bits, shared_loc=shared.index(name)))
            else:
                slots.append(ObsSlot(o, values, shift, bits, loc=globals_.index(name)))
        shift += bits
    if shift > MAX_KEY_BITS:
        if observe == "all":
            return make_layout(prog, allowed, observe="condition")
        _unsupported(f"an outcome key of {shift} bits", f"at most {MAX_KEY_BITS} bits")
    init = {loc.name: loc.init for loc in prog.locations}
    return Layout(prog, roles, cs, ngroups, warps, globals_, shared, init, tuple(slots), res_count,
                  shift, observe, mbars, sync, tensor)
