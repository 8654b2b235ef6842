"""A kernel launch as records: its buffers, scalars and tensor-map arguments (:class:`Launch`, as
:mod:`ptxmm.kernel.launch` reads it from ``K<<<G, B>>>(ARGS)``), and what a kernel Program keeps of
its origin (:class:`KernelInfo`, ``Program.kernel``): the kernel, its launch and layout, the CUDA
source and the expected findings."""

from __future__ import annotations

from dataclasses import field

from .._infra.records import record
from ..errors import SourcePos
from .layout import Layout


@record
class Buffer:
    ctype: str
    type: str  # PTX element type
    name: str
    count: int
    init: tuple[int, ...] = ()
    pos: SourcePos | None = None
    per_gpu: bool = False  # `T name[N] per gpu`: one copy in each GPU's memory (kernel/multigpu.py)


@record
class Scalar:
    value: int
    pos: SourcePos | None = None


@record
class TensorMapArg:
    """``CUtensorMap tm = tensormap(a, dims {8, 2}, box {4, 2})``: a tiled tensor map over the launch
    buffer ``array`` (its element 0 the tensor's origin, dimension 0 innermost and contiguous, rows
    packed: globalStrides[0] = dims[0] * the element size), tensor size ``dims`` and bounding box
    ``box``, dimension 0 first, as ``cuTensorMapEncodeTiled`` takes them (interleave, swizzle, L2
    promotion and OOB fill NONE; every element stride 1). ``tensormap(int a[16] = {...}, …)``
    declares the buffer itself: a host allocation only the map points to. ``dtype`` is its
    ``CUtensorMapDataType`` and ``esize`` the element size in bytes, from the buffer's C type
    (:func:`check_tensormap`)."""

    name: str
    array: str
    dims: tuple[int, ...]
    box: tuple[int, ...]
    pos: SourcePos | None = None
    dims_pos: SourcePos | None = None
    box_pos: SourcePos | None = None
    array_pos: SourcePos | None = None
    # `tensormap(int a[16] = {...}, ...)`: the map's own buffer (no kernel parameter points to it)
    buffer: Buffer | None = None
    dtype: int = -1
    esize: int = 0

    @property
    def strides(self) -> tuple[int, ...]:
        """cuTensorMapEncodeTiled's globalStrides (bytes, rank - 1 of them): packed rows."""
        out, s = [], self.esize
        for d in self.dims[:-1]:
            s *= d
            out.append(s)
        return tuple(out)

    @property
    def box_bytes(self) -> int:
        return self.esize * prod(self.box)


@record
class RankArg:
    """``rank``: a scalar argument whose value is the index of the GPU the kernel runs on (each
    rank of a multi-GPU launch passes its own, as vLLM's ``int rank``)."""

    pos: SourcePos | None = None


@record
class PeersArg:
    """``RankSignals sg = peers(sig)``: a struct passed by value holding one pointer per GPU, entry
    g the address of GPU g's copy of the ``per gpu`` buffer ``array`` (vLLM's ``RankSignals``, the
    peer pointers cudaIpcOpenMemHandle gives each rank)."""

    ctype: str  # the struct's name as written (a label: the kernel's parameter gives its size)
    name: str
    array: str
    pos: SourcePos | None = None
    array_pos: SourcePos | None = None
    # `peers(int in[2] = {...})`: the per-GPU buffer declared in place (no parameter points to it)
    buffer: Buffer | None = None


@record
class Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] | None
    args: tuple[Buffer | Scalar | TensorMapArg | RankArg | PeersArg, ...]
    text: str = ""
    pos: SourcePos | None = None
    shared: tuple[Buffer, ...] = ()  # dynamic shared memory: the extern __shared__ arrays it holds
    # `cooperative k<<<...>>>(...)`: cudaLaunchCooperativeKernel (cudaLaunchAttributeCooperative):
    # the grid's CTAs co-resident and the driver's grid workspace given (ir/sregs.py)
    cooperative: bool = False
    # `nonportable k<<<...>>>(...)`: cudaFuncAttributeNonPortableClusterSizeAllowed set to 1
    nonportable: bool = False
    # where the cluster comes from: "launch" (the launch line's), "reqnctapercluster" (the
    # kernel's __cluster_dims__, applied by kernel.launch.apply_directives), None: no cluster
    cluster_from: str | None = None
    gpus: int = 1  # `... on N gpus`: every GPU runs the grid (kernel/multigpu.py)
    gpus_pos: SourcePos | None = None

    @property
    def n_threads(self) -> int:
        """Every thread of the launch, on every GPU."""
        return prod(self.grid) * prod(self.block) * self.gpus

    @property
    def tensormaps(self) -> tuple[TensorMapArg, ...]:
        return tuple(a for a in self.args if isinstance(a, TensorMapArg))

    @property
    def buffers(self) -> tuple[Buffer, ...]:
        """Every global buffer of the launch: the arguments' and the tensor maps' own, in order."""
        out: list[Buffer] = []
        for a in self.args:
            if isinstance(a, Buffer):
                out.append(a)
            elif isinstance(a, (TensorMapArg, PeersArg)) and a.buffer is not None:
                out.append(a.buffer)
        return tuple(out)

    def __str__(self) -> str:
        return self.text


@record
class KernelInfo:
    """What a kernel Program keeps of its origin (``Program.kernel``)."""

    kernel: str  # the PTX name
    source: str  # the demangled name
    launch: Launch
    layout: Layout
    source_file: str | None = None  # the .cu
    expect: tuple[str, ...] | None = None  # `// ptxmm: expect ...` finding kinds (sorted)
    expect_pos: SourcePos | None = None
    notes: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict, compare=False)  # CUDA file → its lines


def prod(d: tuple[int, ...]) -> int:
    out = 1
    for x in d:
        out *= x
    return out
