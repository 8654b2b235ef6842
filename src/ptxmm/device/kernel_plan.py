"""Planning a kernel's cross-validation on the CPU (no GPU, no CuPy): ``ptxmm crossval KERNEL.cu``.

A kernel file (a ``.cu`` nvcc compiles, or nvcc's PTX module) and its launch become a
:class:`KernelPlan`:

* **the model's answer** — every final state over every element of every launch buffer the model
  allows (the checker's outcomes over the written elements, every other element keeps its initial
  value), whether an allowed execution fails an ``assert()`` or accesses out of bounds, and the
  check's bounds (loops cut at ``--unroll``). A kernel the model lets **hang** (a ``hang`` finding of
  the liveness check) or that no execution finishes within ``--unroll`` is refused: on the GPU it
  would spin until the watchdog (:func:`.kernel_run.run_isolated`) kills its process, which tells
  nothing.
* **the code to run** — nvcc's PTX for the kernel, unchanged except the module's
  ``.extern .func __assertfail`` declaration, which becomes a definition of the harness's own:
  it adds 1 to the calling instance's assertion counter (``red.global.add`` on
  ``ptxmm_assert_count[%dynamic_smem_size]``: each launch of the graph is given its own dynamic
  shared memory size, its instance number, which the kernel itself never reads) and ends the thread
  (``exit``), as the model ends a thread at a failing ``assert()``. CUDA's own ``__assertfail``
  traps, which aborts the CUDA context and every instance with it. ``vprintf`` becomes a stub
  that prints nothing. The rewritten module is assembled with ``ptxas -arch=sm_90`` (cached).
* **the instance's memory** — the launch's buffers at fixed offsets in one block per instance,
  each surrounded by guard bytes (:data:`SENTINEL`): a write outside every buffer lands in a guard
  and shows as an out-of-bounds write in the final state (a read out of bounds is not seen).
* **tensor maps** — a ``CUtensorMap tm = tensormap(a, dims {…}, box {…})`` argument is a
  :class:`MapPlan`: what ``cuTensorMapEncodeTiled`` is given for instance i (its data type, rank,
  dims, packed strides, box, element strides 1; interleave, swizzle, L2 promotion and OOB fill
  NONE) with ``a``'s address in instance i's block as the global address. The run encodes one map
  per instance and passes its 128 bytes as the by-value parameter (:func:`.kernel_run.instance_args`).

* **module-scope ``__device__`` variables** — one copy per instance, in the instance's block after
  the launch's buffers, its address an added kernel parameter (:mod:`.kernel_vars`).

* **a launch on N GPUs** (``... on 2 gpus``, :mod:`ptxmm.kernel.multigpu`) — rank g runs on GPU g:
  each ``per gpu`` buffer has one copy per GPU (``gpu0.sig``, ``gpu1.sig``: the model's names), GPU
  g's in GPU g's block of the instance (:attr:`BufferPlan.gpu`); a buffer without ``per gpu`` (one
  address every GPU reaches) lies in GPU 0's block, which the other GPUs reach by peer access; the
  arguments are per rank (:attr:`KernelPlan.ranks`): ``rank`` is g, a pointer given a ``per gpu``
  buffer gets GPU g's copy, ``peers(buf)`` a struct (the parameter's size, by value) whose entry h
  is the address of GPU h's copy *of the same instance* — instance i of every rank forms one
  run of the kernel, and the final state compared is every GPU's block of instance i.
  The device run is :mod:`.kernel_ranks`.

Refused on the device (rows "not supported on the device", with the reason): a module variable
named outside the kernel's body, pointers passed as integers, cluster and cooperative launches,
tensor maps in a launch on several GPUs, external functions other than ``__assertfail`` and
``vprintf``."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import PtxmmError, UnsupportedError
from ..ir.program import Program, type_width
from ..ir.sregs import WORKSPACE
from ..semantics.result import CheckResult, FindingKind
from .kernel_vars import ModuleVar, per_instance, used_vars
from .tensor import MapArgs

GUARD = 128  # bytes of guard before, between and after the buffers of one instance
ALIGN = 128  # each buffer starts on a 128-byte boundary
SENTINEL = 0xA5  # the guard bytes' value
FREE = -1  # in an allowed state: an element whose value is not compared (see KernelPlan.free)
MAX_SLOTS = 1 << 14  # assertion counters: instances in flight at once (two graphs' worth)
ON_DEVICE = "on the device"  # batch.py files an UnsupportedError whose message says this as such


@dataclass(frozen=True)
class BufferPlan:
    """One launch buffer in an instance's memory block."""

    name: str
    type: str  # PTX element type (s32, u64, b32 for float, ...)
    count: int
    init: tuple[int, ...]
    offset: int  # bytes from the instance's base (in its GPU's block)
    scalar: bool = False  # a module variable that is no array: its one element is its name
    gpu: int = 0  # the GPU whose memory holds it (a launch `on N gpus`: see KernelPlan.gpus)

    @property
    def size(self) -> int:
        return type_width(self.type) // 8

    def element(self, i: int) -> str:
        return self.name if self.scalar else f"{self.name}[{i}]"

    def initial(self, i: int) -> int:
        w = type_width(self.type)
        return (self.init[i] if i < len(self.init) else 0) & ((1 << w) - 1)


@dataclass(frozen=True)
class Arg:
    """A kernel argument: a buffer's address in the instance's block, a tensor map (128 bytes by
    value, encoded per instance), a struct of peer pointers (``peers(buf)``: ``width`` bits by
    value, entry g the address of buffer ``peers[g]``, the rest zero), or a scalar of ``width``
    bits."""

    width: int
    buffer: int | None = None  # index into KernelPlan.buffers
    value: int = 0
    tensormap: int | None = None  # index into KernelPlan.maps
    peers: tuple[int, ...] | None = None  # indexes into KernelPlan.buffers, one per GPU


@dataclass(frozen=True)
class MapPlan:
    """A tensor map argument: cuTensorMapEncodeTiled's arguments but the global address, which is
    buffer ``buffer``'s in each instance's block (launch.TensorMapArg, validated by its rules)."""

    name: str
    buffer: int  # index into KernelPlan.buffers
    dtype: int  # CUtensorMapDataType
    dims: tuple[int, ...]
    strides: tuple[int, ...]  # bytes, rank - 1 of them
    box: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def element_strides(self) -> tuple[int, ...]:
        return (1,) * len(self.dims)

    def at(self, address: int) -> MapArgs:
        """cuTensorMapEncodeTiled's arguments for the buffer at ``address``."""
        return MapArgs(address, self.dims, self.strides, self.box, self.dtype, self.element_strides)


@dataclass(frozen=True)
class KernelPlan:
    prog: Program
    check: CheckResult
    entry: str  # the PTX name of the kernel
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[Arg, ...]
    buffers: tuple[BufferPlan, ...]
    stride: int  # bytes per instance
    allowed: frozenset[tuple[int, ...]]  # final states, one unsigned value per element (elements order)
    assert_allowed: bool
    oob_allowed: bool
    ptx: str  # what runs: nvcc's PTX with the harness's __assertfail
    uses_assert: bool
    maps: tuple[MapPlan, ...] = ()  # the launch's tensor maps (Arg.tensormap)
    # element positions whose final value the PTX ISA may leave unspecified: not compared (FREE in
    # ``allowed``; an observed state is judged by ``masked``)
    free: frozenset[int] = frozenset()
    # launched as cudaLaunchCooperativeKernel launches (the driver's grid workspace for grid sync)
    cooperative: bool = False
    # a launch `on N gpus` (kernel/multigpu.py; N may be 1): every instance has one block of
    # ``stride`` bytes in each GPU's memory (BufferPlan.gpu), and rank g is launched on GPU g with
    # ``ranks[g]`` (run by kernel_ranks); () for a plain launch
    gpus: int = 1
    ranks: tuple[tuple[Arg, ...], ...] = ()

    def rank_args(self, rank: int) -> tuple[Arg, ...]:
        """The arguments of the kernel launched on GPU ``rank``."""
        return self.ranks[rank] if self.ranks else self.args

    def describe(self, rank: int = 0) -> tuple[str, ...]:
        """Rank ``rank``'s arguments by name: a buffer's name, ``{gpu0.sig, gpu1.sig}`` for a
        struct of peer pointers, ``tensormap(a)``, a scalar's value."""
        out = []
        for a in self.rank_args(rank):
            if a.buffer is not None:
                out.append(self.buffers[a.buffer].name)
            elif a.peers is not None:
                out.append("{" + ", ".join(self.buffers[k].name for k in a.peers) + "}")
            elif a.tensormap is not None:
                out.append(f"tensormap({self.buffers[self.maps[a.tensormap].buffer].name})")
            else:
                out.append(str(a.value))
        return tuple(out)

    @property
    def span(self) -> int:
        """Bytes of one instance on every GPU: its blocks side by side, GPU 0's first."""
        return self.stride * self.gpus

    def masked(self, values: tuple[int, ...]) -> tuple[int, ...]:
        """An observed state as ``allowed`` holds it: FREE where the value is not compared."""
        if not self.free:
            return values
        return tuple(FREE if i in self.free else v for i, v in enumerate(values))

    @property
    def elements(self) -> tuple[str, ...]:
        return tuple(b.element(i) for b in self.buffers for i in range(b.count))

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(b.type for b in self.buffers for _ in range(b.count))

    @property
    def launch(self) -> str:
        return str(self.prog.kernel.launch)

    def element_bytes(self) -> list[int]:
        """The byte offsets, in an instance's ``span`` (its blocks on every GPU side by side), of
        every element's bytes (elements order)."""
        out: list[int] = []
        for b in self.buffers:
            o = b.gpu * self.stride + b.offset
            out += range(o, o + b.count * b.size)
        return out

    def image(self, gpu: int | None = None) -> bytes:
        """One instance's block on GPU ``gpu`` as it starts: guards, then the initial values of the
        buffers that GPU holds; ``None``: the blocks of every GPU side by side (``span`` bytes)."""
        if gpu is None:
            return b"".join(self.image(g) for g in range(self.gpus))
        img = bytearray([SENTINEL]) * self.stride
        for b in self.buffers:
            if b.gpu != gpu:
                continue
            for i in range(b.count):
                o = b.offset + i * b.size
                img[o:o + b.size] = b.initial(i).to_bytes(b.size, "little")
        return bytes(img)

    def typed(self, values: tuple[int, ...]) -> tuple[int, ...]:
        """Unsigned element values as their types read (a signed type's high bit is negative)."""
        out = []
        for v, t in zip(values, self.types):
            if v == FREE:
                out.append(v)
                continue
            w = type_width(t)
            out.append(v - (1 << w) if t.startswith("s") and v >> (w - 1) else v)
        return tuple(out)


def is_kernel_file(path: Path) -> bool:
    """A ``.cu`` file, or a PTX module (nvcc's output) rather than a litmus test."""
    from ..loading import _is_kernel

    if path.suffix == ".cu":
        return True
    if path.suffix != ".ptx":
        return False
    try:
        return _is_kernel(path.read_text(), str(path))
    except (OSError, UnicodeDecodeError, ValueError):
        return False


def _refuse(message: str, hint: str | None = None) -> UnsupportedError:
    return UnsupportedError(f"{message}: not run {ON_DEVICE}", None, hint)


def plan_kernel(prog: Program, ptx: str, model: str = "ptx", unroll: int = 2,
                allow_undecided: bool = False, allow_hang: bool = False) -> KernelPlan:
    """The plan for a kernel Program (``ptxmm.load`` of a kernel file) and the PTX nvcc made of it.
    Raises UnsupportedError (its message says "on the device") for a kernel it does not run: one the
    model lets hang, unless ``allow_hang`` (``crossval --allow-hang``), and, unless
    ``allow_undecided`` (``crossval --allow-undecided``), one whose liveness the model did not
    decide. Either, when run, may spin on the GPU until its process's --timeout (a ``timeout``
    row); the instances that end are judged against the model's outcomes, which are the final
    states of the executions that end."""
    from ..queries.checker import check

    info = prog.kernel
    launch = info.launch
    _refuse_shape(info)
    res = check(prog, model, unroll=unroll, observe="all", liveness=True)
    kinds = {f.kind for f in res.findings}
    if FindingKind.HANG in kinds and not allow_hang:
        hang = next(f for f in res.findings if f.kind == FindingKind.HANG)
        raise _refuse(f"the model lets this kernel hang ({hang})",
                      "on the GPU it would spin until the watchdog kills its process, which tells "
                      "nothing: check it with the model only (ptxmm check), or run the executions "
                      "that end with crossval --allow-hang (bounded by --timeout)")
    if res.status != "ok" or not res.outcomes:
        raise _refuse(f"the model's check did not finish ({res.status_text or 'no execution finishes'})",
                      "raise --unroll: the device run needs the model's whole answer")
    if res.liveness not in ("terminates", "hangs") and not (allow_undecided and res.liveness == "undecided"):
        raise _refuse(f"the liveness check did not decide that every execution ends ({res.liveness})",
                      "check it with the model only (ptxmm check --liveness), or run it with "
                      "crossval --allow-undecided (a kernel that spins is then a timeout row)")
    entry = _entry(ptx, info)
    variables = used_vars(ptx, entry, _module_vars(info))
    buffers, stride = _buffers(_places(launch, variables))
    free = _unspecified(res)
    allowed = _allowed(res, buffers, free)
    names = [b.element(i) for b in buffers for i in range(b.count)]
    free_at = frozenset(k for k, e in enumerate(names) if e in free)
    text, uses_assert = rewrite_ptx(ptx)
    text = per_instance(text, entry, variables)
    maps = _maps(launch, buffers)
    n = len(buffers) - len(variables)
    var_args = tuple(Arg(64, buffer=n + k) for k in range(len(variables)))
    ranks = tuple(_args(ptx, info, buffers, maps, g) + var_args for g in range(launch.gpus))
    return KernelPlan(prog, res, info.kernel, launch.grid, launch.block, ranks[0],
                      buffers, stride, allowed, FindingKind.ASSERT_FAILS in kinds,
                      FindingKind.OUT_OF_BOUNDS in kinds, text, uses_assert, maps, free_at,
                      bool(launch.cooperative), launch.gpus, ranks if launch.gpus_pos is not None else ())


def _entry(ptx: str, info) -> str:
    from ..kernel import module as ptx_module
    from ..kernel.instantiate import find_kernel

    return find_kernel(ptx_module.parse(ptx, "<kernel>"), info.kernel, None).name


def _module_vars(info) -> list[ModuleVar]:
    """The module's ``__device__`` variables as the model lays them out (not nvcc's string
    constants, not the launch's buffers)."""
    args = {a.name for a in _bufs(info)}
    return [ModuleVar(r.ptx, r.name, r.type, r.n, tuple(r.init), r.count is None)
            for r in info.layout.regions
            if r.space == "global" and r.located and r.tensormap is None and r.ptx not in args
            and r.name != WORKSPACE]


def _maps(launch, buffers: tuple[BufferPlan, ...]) -> tuple[MapPlan, ...]:
    index = {b.name: k for k, b in enumerate(buffers)}
    return tuple(MapPlan(tm.name, index[tm.array], tm.dtype, tm.dims, tm.strides, tm.box)
                 for tm in launch.tensormaps)


def _refuse_shape(info) -> None:
    if info.launch.cluster is not None:
        raise _refuse("a cluster launch", "launch it without a cluster")
    if info.launch.gpus > 1 and info.launch.tensormaps:
        raise UnsupportedError(f"a tensor map in a launch on {info.launch.gpus} GPUs: not run {ON_DEVICE}",
                               info.launch.tensormaps[0].pos, "run tensor-map kernels on one GPU")


def _places(launch, variables: list[ModuleVar]) -> list[tuple]:
    """Every buffer of an instance as ``(buffer, name, gpu)``, in ``launch.buffers`` order, then
    the module variables (on GPU 0): a ``per gpu`` buffer is one buffer per GPU (``gpu0.sig``,
    ``gpu1.sig``: GPU g's copy in GPU g's block), any other launch buffer one buffer on GPU 0
    (the other GPUs reach it through peer access)."""
    from ..kernel.multigpu import region_names

    out = [(b, name, g if b.per_gpu else 0) for b in launch.buffers
           for g, name in enumerate(region_names(b, launch.gpus))]
    return out + [(v, v.name, 0) for v in variables]


def _bufs(info) -> list:
    return list(info.launch.buffers)


def _buffers(items: list[tuple]) -> tuple[tuple[BufferPlan, ...], int]:
    """The buffers (``(buffer, name, gpu)``: :func:`_places`) at their offsets in their GPU's
    block, each after a guard, and the blocks' stride (the largest GPU's)."""
    out, off = [], {}
    for b, name, g in items:
        scalar = isinstance(b, ModuleVar) and b.scalar
        at = off.get(g, GUARD)
        out.append(BufferPlan(name, b.type, b.count, tuple(b.init), at, scalar, g))
        off[g] = at + -(-b.count * type_width(b.type) // 8 // ALIGN) * ALIGN + GUARD
    return tuple(out), -(-max(off.values(), default=GUARD) // ALIGN) * ALIGN


def _unspecified(res: CheckResult) -> set[str]:
    """The elements whose final value may be one the PTX ISA leaves unspecified (the check leaves
    them out of its listed outcomes): the device's values there are not compared with the model's."""
    eg = res.graph
    if eg is None or not eg.unspecified:
        return set()
    from ..queries import sites
    from ..semantics.outcomes import unspecified_observables

    return unspecified_observables(eg, sites.observables(eg, "all"))


def _allowed(res: CheckResult, buffers: tuple[BufferPlan, ...], free: set[str]) -> frozenset[tuple[int, ...]]:
    """Every allowed outcome as a state over every element (unsigned; FREE for an element in
    ``free``); an element no outcome lists is never written, so it keeps its initial value."""
    out = set()
    for o in res.outcomes:
        vals = o.outcome.as_dict()
        state = []
        for b in buffers:
            mask = (1 << type_width(b.type)) - 1
            for i in range(b.count):
                if b.element(i) in free:
                    state.append(FREE)
                    continue
                v = vals.get(b.element(i))
                if v is None and b.element(i) in vals:
                    raise _refuse(f"{b.element(i)} has a value the PTX ISA leaves unspecified")
                state.append((b.initial(i) if v is None else int(v)) & mask)
        out.add(tuple(state))
    return frozenset(out)


def _args(ptx: str, info, buffers: tuple[BufferPlan, ...], maps: tuple[MapPlan, ...] = (),
          rank: int = 0) -> tuple[Arg, ...]:
    """The arguments of the kernel launched on GPU ``rank`` (the only one of a one-GPU launch)."""
    from ..ir.program import TENSORMAP_BYTES
    from ..kernel import module as ptx_module
    from ..kernel.demangle import param_types
    from ..kernel.instantiate import find_kernel
    from ..kernel.launch import Buffer, TensorMapArg

    fn = find_kernel(ptx_module.parse(ptx, "<kernel>"), info.kernel, None)
    codes = param_types(fn.name)
    index = {b.name: k for k, b in enumerate(buffers)}
    map_index = {m.name: k for k, m in enumerate(maps)}
    out = []
    for k, (p, a) in enumerate(zip(fn.params, info.launch.args)):
        w = type_width(p.type) if p.type[1:].isdigit() else 64
        ranked = _rank_arg(a, p, w, rank, info.launch.gpus, index)
        if ranked is not None:
            out.append(ranked)
            continue
        if isinstance(a, Buffer):
            out.append(Arg(64, buffer=index[a.name]))
            continue
        if isinstance(a, TensorMapArg):
            out.append(Arg(8 * TENSORMAP_BYTES, tensormap=map_index[a.name]))
            continue
        if codes is not None and k < len(codes) and codes[k].startswith("P"):
            raise _refuse(f"argument {k + 1} is the integer {a.value} for a pointer parameter",
                          "pass a buffer: an integer address would point anywhere on the GPU")
        out.append(Arg(w, value=a.value & ((1 << w) - 1)))
    return tuple(out)


def _rank_arg(a, p, width: int, rank: int, gpus: int, index: dict[str, int]) -> Arg | None:
    """A multi-GPU argument (kernel/multigpu.py) on GPU ``rank``: ``rank``; a pointer to a ``per
    gpu`` buffer, which gets that GPU's copy; ``peers(buf)``, a struct of ``p.size`` bytes by
    value whose entry g points to GPU g's copy of ``buf`` (as the model binds it: the launch was
    checked against the parameters when the kernel was loaded). None for any other argument."""
    from ..ir.launch import PeersArg, RankArg
    from ..kernel.launch import Buffer
    from ..kernel.multigpu import copy_name

    if isinstance(a, RankArg):
        return Arg(width, value=rank)
    if isinstance(a, PeersArg):
        return Arg(8 * p.size, peers=tuple(index[copy_name(a.array, g)] for g in range(gpus)))
    if isinstance(a, Buffer) and a.per_gpu:
        return Arg(64, buffer=index[copy_name(a.name, rank)])
    return None


# ----- the PTX that runs ----------------------------------------------------------------------------

_EXTERN = re.compile(r"\.extern\s+\.func\s*(\((?:[^()]*)\))?\s*([\w$]+)\s*\(([^()]*)\)\s*;", re.S)
_PARAM = re.compile(r"\.param\s+\.(\w+)\s+([\w$]+)")

ASSERT_COUNT = "ptxmm_assert_count"


def rewrite_ptx(ptx: str) -> tuple[str, bool]:
    """nvcc's PTX with the harness's ``__assertfail`` (count, then end the thread) and a silent
    ``vprintf``; everything else unchanged. Returns (PTX, whether it calls ``__assertfail``)."""
    uses_assert = False
    out, last = [], 0
    for m in _EXTERN.finditer(ptx):
        name = m.group(2)
        if name == "__assertfail":
            body = _assertfail(m.group(3))
            uses_assert = True
        elif name == "vprintf":
            body = _vprintf(m.group(1) or "", m.group(3))
        else:
            raise _refuse(f"a call of the external function {name}",
                          "only assert() and printf() are provided by the harness")
        out += [ptx[last:m.start()], body]
        last = m.end()
    out.append(ptx[last:])
    return "".join(out), uses_assert


def _assertfail(params: str) -> str:
    return (f".global .align 4 .u32 {ASSERT_COUNT}[{MAX_SLOTS}];\n"
            f"// ptxmm: the harness's __assertfail: counts the failure for its instance, ends the thread\n"
            f".func __assertfail({params.strip()})\n{{\n"
            "\t.reg .b32 %ptxmm_r<1>;\n\t.reg .b64 %ptxmm_rd<3>;\n"
            "\tmov.u32 %ptxmm_r0, %dynamic_smem_size;\n"
            f"\tmov.u64 %ptxmm_rd0, {ASSERT_COUNT};\n"
            "\tmul.wide.u32 %ptxmm_rd1, %ptxmm_r0, 4;\n"
            "\tadd.s64 %ptxmm_rd2, %ptxmm_rd0, %ptxmm_rd1;\n"
            "\tred.relaxed.gpu.global.add.u32 [%ptxmm_rd2], 1;\n"
            "\texit;\n}\n")


def _vprintf(rets: str, params: str) -> str:
    ret = _PARAM.search(rets)
    store = f"\tst.param.{ret.group(1)} [{ret.group(2)}], 0;\n" if ret else ""
    return (f"// ptxmm: printf prints nothing on the device (millions of instances)\n"
            f".func {rets.strip()} vprintf({params.strip()})\n{{\n{store}\tret;\n}}\n")


def assemble(ptx: str, timeout: float | None = 300.0) -> Path:
    """``ptxas -arch=sm_90`` of the rewritten module: the cubin that runs (cached by the PTX's hash)."""
    from .build import ARCH, CompileTimeout, cache_dir

    exe = shutil.which("ptxas")
    if exe is None:
        raise PtxmmError("ptxas is not on PATH", None, "install the CUDA toolkit")
    out = cache_dir() / f"kernel-{hashlib.sha256((ptx + ARCH).encode()).hexdigest()[:20]}.cubin"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory() as td:
        src, tmp = Path(td) / "kernel.ptx", Path(td) / "kernel.cubin"
        src.write_text(ptx)
        try:
            r = subprocess.run([exe, f"-arch={ARCH}", str(src), "-o", str(tmp)], capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CompileTimeout(f"ptxas took longer than {timeout:g} s", None, None) from None
        if r.returncode != 0:
            raise PtxmmError("ptxas could not assemble the kernel's PTX:\n" + r.stderr.strip()[:2000], None,
                             "a ptxmm bug if nvcc's own PTX assembles: please report it")
        shutil.move(str(tmp), out)
    return out


def kernel_ptx(path: Path, nvcc_flags: str | None = None) -> str:
    """The PTX of a kernel file: nvcc's (cached) for a ``.cu``, the file itself for a module."""
    if path.suffix == ".cu":
        from ..kernel.nvcc import compile_cu

        return compile_cu(path, nvcc_flags)[0]
    return path.read_text()
