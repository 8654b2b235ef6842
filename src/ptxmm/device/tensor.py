"""Tensor copies on the device (``cp.async.bulk.tensor`` tile mode over litmus tensor maps;
docs/hopper.md, "On the device"). Pure Python except :func:`encode_tiled`, which reaches the CUDA
driver through ctypes (``libcuda.so.1``, already loaded by CuPy's process; no new dependency) and
serves the kernel harness's per-instance maps too (kernel_run.driver_encoder), and
:func:`kernel_arg`, the map as CuPy passes it by value.

The harness keeps the bulk copies' scaling (sync.py ``BULK_BYTES``): one model word is a 16-byte
chunk whose first u32 holds its value. A litmus tensor of dims {d0, d1} model words is a device
tensor of .b32 elements with dims {4·d0, d1}; box {b0, b1} becomes {4·b0, b1} (the inner box is
16·b0 bytes, a multiple of 16 as cuTensorMapEncodeTiled requires); coordinate c0 becomes 4·c0.
Device element 4·x + r (r < 4) lies inside the tensor exactly when model element x does, so a box
crossing the boundary zero-fills the same words the model's does.

Instances. A tensor array (the global array a map describes) is not scattered word by word over
the location slots: each instance has its own contiguous copy, ``K`` chunks (its elements) at
instance slot ``q = perm(i)`` of a region after the slots — the permutation of the array's first
element (``ptxmm_slot``'s), so the instance's array still sits at a fresh distance from its other
locations every iteration. ONE map per tensor map location covers all instances: it has an extra
outermost dimension of size n (the instances of an iteration) with stride ``16·K`` bytes, and a
copy's coordinate in it is ``q`` (a ``.1d`` copy runs as ``.2d``, a ``.2d`` one as ``.3d``; its box
is 1 there, so a copy never leaves its instance's array). One map rather than one per instance:
the map is encoded once per launch configuration on the host and passed as a kernel parameter,
where n maps would be n driver calls and a global-memory table, which the copy could only read
through the tensormap proxy after a ``fence.proxy.tensormap::generic.acquire`` the test does not
have.

Alignment (requirements, each from its source): the map's global address 16-byte aligned, every
global stride a multiple of 16 and below 2^40, each dimension at most 2^32, each box dimension at
most 256, the inner box a multiple of 16 bytes, the map object (host buffer) 64-byte aligned
(cuda.h, cuTensorMapEncodeTiled); the shared box address 128-byte aligned (CUDA C++ Programming
Guide, TMA: multi-dimensional copies), which the harness meets by laying every shared array a box
starts at out as one row per (region, lane), its width padded to a multiple of ``BOX_ALIGN`` bytes
(8 chunks), and by rounding the dynamic shared memory base up to 128 bytes; a box must start at
such an array's first element. The mbarrier: 8-byte aligned (as for bulk copies).

Initial values. The model's initial writes are visible to every proxy. The harness writes a shared
location's initial word with a generic store in the kernel's prologue, so a test with tensor copies
gets a ``fence.proxy.async.shared::cta`` after those stores, before the prologue's barrier: a box
stored without the test's own proxy fence then reads the initial word or the test's, as in the
model, never a stale one. The tensor region's words are reset by the check kernel, a launch earlier."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import PtxmmError, UnsupportedError
from ..ir.program import TENSORMAP_BYTES, Location, Program, Sym, TensorCopy
from .sync import BULK_BYTES as CHUNK  # bytes per model word

BOX_ALIGN = 128  # bytes: the shared address of a tensor copy's box
BOX_CHUNKS = BOX_ALIGN // CHUNK
MAX_BOX = 256  # elements per box dimension (cuTensorMapEncodeTiled)
U32 = 2  # CU_TENSOR_MAP_DATA_TYPE_UINT32 (cuda.h, CUtensorMapDataType)
# bytes per element of each CUtensorMapDataType (cuda.h: UINT8, UINT16, UINT32, INT32, UINT64, INT64,
# FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ)
DTYPE_BYTES = (1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4)
MAP_BYTES = TENSORMAP_BYTES
_ELEMENT = re.compile(r"^(.*)\[(\d+)\]$")


def element_of(name: str) -> tuple[str, int] | None:
    """``a[3]`` → ("a", 3): an array element (arrays are declared word by word, docs/hopper.md);
    None for a plain location."""
    m = _ELEMENT.match(name)
    return (m.group(1), int(m.group(2))) if m else None


def array_elements(prog: Program, array: str) -> list[str]:
    """The element locations of ``array`` in order (``a[0]`` …)."""
    return [loc.name for loc in prog.locations
            if (e := element_of(loc.name)) is not None and e[0] == array]


@dataclass(frozen=True)
class TensorArray:
    """A global array some tensor map describes: per instance, ``elements`` chunks in a row of
    the tensor region, ``offset`` words (per instance) after the arrays before it."""

    name: str
    elements: int
    offset: int  # words per instance before this array's rows (times n: the array's start)
    perm_slot: int  # the global slot whose permutation places an instance's row (element 0's)

    @property
    def words(self) -> int:
        return 4 * self.elements

    @property
    def pitch(self) -> int:
        """Bytes between two instances' rows: the map's outermost stride (a multiple of 16)."""
        return CHUNK * self.elements

    def start(self, slots: int, n: int) -> int:
        """Index in ``mem`` (words) of the row of instance slot 0: after the ``slots`` words of
        the location slots and the n rows of every array before it (codegen's ``ptxmm_tword``)."""
        return slots + n * self.offset

    def word(self, slots: int, n: int, q: int, k: int) -> int:
        """Index in ``mem`` of element ``k`` of the row at instance slot ``q`` (its first u32)."""
        return self.start(slots, n) + q * self.words + 4 * k


@dataclass(frozen=True)
class DeviceMap:
    """A tensor map location as the device encodes it (one map for all instances)."""

    name: str
    array: str
    dims: tuple[int, ...]  # the litmus tensor's dims, in model words (dimension 0 first)
    box: tuple[int, ...]

    def encoding(self, arr: TensorArray, n: int, address: int) -> MapArgs:
        """cuTensorMapEncodeTiled's arguments for ``n`` instances whose rows start at ``address``:
        dimension 0 scaled to 16-byte chunks of .b32 elements, the instance dimension last."""
        dims = (4 * self.dims[0], *self.dims[1:], n)
        strides = (CHUNK * self.dims[0],)[:len(self.dims) - 1] + (arr.pitch,)
        box = (4 * self.box[0], *self.box[1:], 1)
        return MapArgs(address, dims, strides, box)


@dataclass(frozen=True)
class MapArgs:
    """cuTensorMapEncodeTiled's arguments (no interleave, no swizzle, no L2 promotion, zero fill
    out of bounds): .b32 elements with element strides all 1 unless ``dtype`` / ``elem_strides``
    say otherwise (a kernel's map: the launch's element type)."""

    address: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]  # bytes, dimensions 1 .. rank-1
    box: tuple[int, ...]
    dtype: int = U32
    elem_strides: tuple[int, ...] = ()  # () = all 1

    def check(self) -> None:
        """The driver's requirements (cuda.h, cuTensorMapEncodeTiled), checked before the call
        so that a violation is ptxmm's located bug, never a device fault."""
        rank = len(self.dims)
        ok = (1 <= rank <= 5 and len(self.strides) == rank - 1 and len(self.box) == rank
              and 0 <= self.dtype < len(DTYPE_BYTES) and len(self.elem_strides) in (0, rank)
              and self.address % 16 == 0 and all(0 < d <= 1 << 32 for d in self.dims)
              and all(s % 16 == 0 and 0 < s < 1 << 40 for s in self.strides)
              and all(0 < b <= MAX_BOX for b in self.box)
              and (DTYPE_BYTES[self.dtype] * self.box[0]) % 16 == 0)
        if not ok:
            raise PtxmmError(f"internal error: tensor map arguments {self} break "
                             "cuTensorMapEncodeTiled's requirements", None, "report this bug")


@dataclass(frozen=True)
class TensorPlan:
    """What the device needs for a test's tensor copies: the arrays (global tensor region), the
    maps (kernel parameters), and each shared array a box lands in or leaves from (its row width
    in chunks, padded to BOX_CHUNKS)."""

    arrays: tuple[TensorArray, ...]
    maps: tuple[DeviceMap, ...]
    boxes: tuple[tuple[str, int, int], ...]  # (shared array, elements, padded width in chunks)

    @property
    def words(self) -> int:
        """Words of the tensor region per instance."""
        return sum(a.words for a in self.arrays)

    def array(self, name: str) -> TensorArray:
        return next(a for a in self.arrays if a.name == name)

    def map(self, name: str) -> DeviceMap:
        return next(m for m in self.maps if m.name == name)

    def global_element(self, loc: str) -> tuple[TensorArray, int] | None:
        e = element_of(loc)
        if e is None:
            return None
        arr = next((a for a in self.arrays if a.name == e[0]), None)
        return (arr, e[1]) if arr is not None else None

    def shared_box(self, loc: str) -> tuple[int, int, int] | None:
        """(box row index, element, padded width) of a shared location in a box array."""
        e = element_of(loc)
        if e is None:
            return None
        for b, (name, _, width) in enumerate(self.boxes):
            if name == e[0]:
                return b, e[1], width
        return None


def _unsupported(what: str, hint: str, pos=None) -> None:
    raise UnsupportedError(f"{what} on the device", pos, hint)


def _copies(prog: Program) -> list[TensorCopy]:
    return [i for t in prog.threads for i in t.instrs if isinstance(i, TensorCopy)]


def _check_map(prog: Program, loc: Location) -> None:
    tm = loc.tensormap
    arr = prog.location(f"{tm.array}[0]") if array_elements(prog, tm.array) else None
    if arr is None or arr.space == "shared":
        _unsupported(f"tensor map `{loc.name}` over `{tm.array}`", "the device runs maps over a "
                     "global array of words", loc.pos)
    if 4 * tm.box[0] > MAX_BOX or any(b > MAX_BOX for b in tm.box[1:]):
        _unsupported(f"tensor map `{loc.name}` with box {{{', '.join(map(str, tm.box))}}}",
                     f"a model word is 4 .b32 elements on the device and a box dimension holds at "
                     f"most {MAX_BOX} (cuTensorMapEncodeTiled): keep box[0] <= {MAX_BOX // 4}", loc.pos)


def _check_box_start(ins: TensorCopy) -> str:
    """The shared array a copy's box starts at (its first element), else a located refusal."""
    if not isinstance(ins.smem.base, Sym):
        _unsupported(f"tensor copy through a register address `{ins.text}`", "name the shared "
                     "array (a multicast copy reaches the other CTAs of its mask)", ins.pos)
    e = element_of(ins.smem.base.name)
    if e is None or e[1] != 0 or ins.smem.offset:
        _unsupported(f"tensor copy box at `{ins.smem.base.name}` in `{ins.text}`",
                     f"the box's shared address must be {BOX_ALIGN}-byte aligned (CUDA C++ "
                     "Programming Guide, TMA), which the device gives the first element of a "
                     "shared array: start the box at an array's first element", ins.pos)
    return e[0]


def plan(prog: Program, globals_: tuple[str, ...]) -> TensorPlan | None:
    """The tensor plan of a test, or None when it has no tensor copy. Refuses (located) what
    the device cannot encode."""
    copies = _copies(prog)
    if not copies:
        return None
    names = list(dict.fromkeys(c.tmap.base.name for c in copies))
    maps, arrays, boxes = [], [], []
    offset = 0
    for name in names:
        loc = prog.location(name)
        _check_map(prog, loc)
        tm = loc.tensormap
        maps.append(DeviceMap(name, tm.array, tm.dims, tm.box))
        if all(a.name != tm.array for a in arrays):
            k = len(array_elements(prog, tm.array))
            arrays.append(TensorArray(tm.array, k, offset, globals_.index(f"{tm.array}[0]")))
            offset += 4 * k
    for c in copies:
        s = _check_box_start(c)
        if all(b[0] != s for b in boxes):
            k = len(array_elements(prog, s))
            boxes.append((s, k, -(-k // BOX_CHUNKS) * BOX_CHUNKS))
    return TensorPlan(tuple(arrays), tuple(maps), tuple(boxes))


# -- the CUDA driver (ctypes; only on a machine with a GPU) ------------------------------------------

class MapBuffer:
    """A 128-byte CUtensorMap in host memory, 128-byte aligned (cuTensorMapEncodeTiled requires
    64; cuda.h declares the type with alignas(128)), kept alive as long as a launch may read it."""

    def __init__(self) -> None:
        self._raw = (ctypes.c_ubyte * (2 * MAP_BYTES))()
        base = ctypes.addressof(self._raw)
        self.address = base + (-base) % MAP_BYTES

    def bytes(self) -> bytes:
        return ctypes.string_at(self.address, MAP_BYTES)


def _driver():
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise PtxmmError(f"cannot load the CUDA driver for tensor maps: {e}", None,
                         "run on a machine with an NVIDIA driver") from None


def encode_tiled(a: MapArgs, encoder: Callable[..., int] | None = None, check: bool = True) -> MapBuffer:
    """Encode a map with the driver's cuTensorMapEncodeTiled (``encoder``: a stand-in with the
    same signature, for tests). ``check=False`` leaves the requirements to the driver (a kernel's
    maps were validated by the launch's own rules, which a GPU test holds against the driver's)."""
    if check:
        a.check()
    f = encoder
    if f is None:
        f = _driver().cuTensorMapEncodeTiled
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                      ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                      ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    rank = len(a.dims)
    buf = MapBuffer()
    res = f(ctypes.c_void_p(buf.address), a.dtype, rank, ctypes.c_void_p(a.address),
            (ctypes.c_uint64 * rank)(*a.dims), (ctypes.c_uint64 * max(1, rank - 1))(*a.strides),
            (ctypes.c_uint32 * rank)(*a.box), (ctypes.c_uint32 * rank)(*(a.elem_strides or [1] * rank)),
            0, 0, 0, 0)
    if res != 0:
        raise PtxmmError(f"cuTensorMapEncodeTiled failed (CUresult {res}) for {a}", None,
                         "the arguments meet cuda.h's requirements: check the driver version")
    return buf


def kernel_arg(raw: bytes):
    """A map's 128 bytes as CuPy passes a kernel argument by value: a one-element numpy array of
    a 128-byte void type (the ``const __grid_constant__ CUtensorMap`` parameter; numpy comes with
    CuPy)."""
    import numpy as np

    if len(raw) != MAP_BYTES:
        raise PtxmmError(f"a tensor map has {MAP_BYTES} bytes, not {len(raw)}", None, "report this bug")
    return np.frombuffer(raw, dtype=np.dtype((np.void, MAP_BYTES))).copy()


__all__ = ["CHUNK", "BOX_ALIGN", "TensorPlan", "TensorArray", "DeviceMap", "MapArgs", "plan",
           "element_of", "encode_tiled", "kernel_arg", "MapBuffer"]
