"""A kernel launch as the user writes it: ``KERNEL<<<GRID, BLOCK[, CLUSTER][, T name[N]]>>>(ARG, ...)``.

GRID, BLOCK and CLUSTER are integers or ``(x, y{, z})``; ``T name[N]`` inside ``<<< >>>`` is the
dynamic shared memory of the kernel's ``extern __shared__ T name[]`` (CUDA's third launch
argument, given as the array it holds: N elements of C type T, N * sizeof(T) bytes); an ARG is
``T name[N]`` (a fresh global buffer of N zero-filled elements of C type T), ``T name[N] = {v,
...}`` (the first elements given, the rest 0), an integer literal (a scalar parameter), or
``CUtensorMap tm = tensormap(a, dims {8, 2}, box {4, 2})`` (a ``const __grid_constant__
CUtensorMap`` parameter: the tiled map cuTensorMapEncodeTiled would encode for the launch buffer
``a``, validated by that function's rules: :func:`check_tensormap`). Every mistake is a located
error.

Words before KERNEL are launch attributes (``LAUNCH_ATTRIBUTES``): ``cooperative`` (launched as
cudaLaunchCooperativeKernel does: cooperative groups' grid workspace given, ir/sregs.py) and
``nonportable`` (cudaFuncAttributeNonPortableClusterSizeAllowed: clusters of up to 16 CTAs). Once
the kernel is found, :func:`apply_directives` checks the launch against its header's directives as
CUDA does (``__launch_bounds__``, ``__cluster_dims__``) and gives it the cluster of
``__cluster_dims__`` when the launch line names none. ``on N gpus`` after the arguments runs the grid
on each of N GPUs, with ``T name[N] per gpu`` buffers, ``rank`` and ``S name = peers(buf)``
arguments (:mod:`ptxmm.kernel.multigpu`)."""

from __future__ import annotations

import math
import re
from dataclasses import replace as _replace

from ..errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir.launch import Buffer, Launch, PeersArg, RankArg, Scalar, TensorMapArg
from ..ir.launch import prod as _prod
from . import multigpu

# C types → PTX element types
C_TYPES = {
    "int": "s32", "signed": "s32", "signed int": "s32", "unsigned": "u32", "unsigned int": "u32",
    "long long": "s64", "long long int": "s64", "unsigned long long": "u64",
    "unsigned long long int": "u64", "long": "s64", "unsigned long": "u64",
    "short": "s16", "unsigned short": "u16", "char": "s8", "signed char": "s8", "unsigned char": "u8",
    "int8_t": "s8", "int16_t": "s16", "int32_t": "s32", "int64_t": "s64",
    "uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
    "size_t": "u64", "bool": "u8", "float": "f32", "double": "f64",
}
# How many threads a launch may have. There is no fixed small limit: what a check of a launch may
# cost is its --timeout and --max-memory (honoured in every phase: building the events, encoding,
# solving, enumerating, liveness), and a check past them is reported unknown. Two ceilings remain:
# CUDA's own (a block of at most MAX_BLOCK_THREADS threads; the CUDA C++ Programming Guide, "Compute
# Capabilities", maximum number of threads per block), and MAX_THREADS, which protects the machine:
# every CUDA thread is a thread of the model, unrolled into events before any limit on time can
# judge the program, and the relations over the events grow with their square; 16 blocks of 1024
# threads build within a few hundred MB, more would not be checked within any usual budget.
MAX_BLOCK_THREADS = 1024
MAX_THREADS = 16 * MAX_BLOCK_THREADS
MAX_ELEMENTS = 1024  # per buffer
MAX_TOTAL_ELEMENTS = 4096  # all buffers of a launch


class _Reader:
    def __init__(self, text: str, pos: SourcePos | None):
        self.text, self.base, self.i = text, pos, 0

    def at(self, i: int | None = None) -> SourcePos | None:
        i = self.i if i is None else i
        if self.base is None:
            return SourcePos("<launch>", 1, i + 1)
        return SourcePos(self.base.file, self.base.line, self.base.col + i)

    def ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def expect(self, s: str, what: str) -> None:
        self.ws()
        if not self.text.startswith(s, self.i):
            got = self.text[self.i:self.i + 10] or "the end"
            raise ParseError(f"expected `{s}` {what}, found `{got}`", self.at(), FORM)
        self.i += len(s)

    def peek(self, s: str) -> bool:
        self.ws()
        return self.text.startswith(s, self.i)

    def integer(self, what: str) -> int:
        self.ws()
        m = re.compile(r"-?\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*").match(self.text, self.i)
        if not m:
            raise ParseError(f"expected an integer for {what}", self.at(), FORM)
        self.i = m.end()
        txt = m.group(1)
        v = int(txt, 16) if txt.lower().startswith("0x") else int(txt)
        return -v if m.group(0).lstrip().startswith("-") else v

    def real(self, what: str, w: int) -> int:
        """A float or double initialiser as the bits of a ``w``-bit float (ir/floats.py): a
        C literal (``1.5``, ``-0.0``, ``1e-3``, ``2``; a ``1.1f`` rounded once to float, a
        ``1.1`` through double as C converts it), ``inf``, ``nan``, or exact bits ``0f3F800000``
        / ``0d3FF0000000000000``."""
        from ..ir.floats import convert, float_bits

        self.ws()
        m = _REAL.match(self.text, self.i)
        if not m:
            raise ParseError(f"expected a number for {what}", self.at(), FORM)
        self.i = m.end()
        neg, body, suffix = m.group(1) == "-", m.group(2).lower(), m.group(3)
        if body.startswith(("0f", "0d")):
            bits, bw = int(body[2:], 16), 32 if body[1] == "f" else 64
            if bw != w:
                raise SemanticError(f"{body} is a {bw}-bit float, {what} a {w}-bit one", self.at(), None)
            return bits ^ (int(neg) << (w - 1))
        if body == "nan":
            return (0x7FC00000 if w == 32 else 0x7FF8000000000000) | (int(neg) << (w - 1))
        if body.startswith("inf"):
            return float_bits("-inf" if neg else "inf", w)
        if suffix or w == 64:
            return float_bits(("-" if neg else "") + body, w)
        return convert(float_bits(("-" if neg else "") + body, 64), 64, 32, "rn")  # C: a double, to float


_REAL = re.compile(r"([+-]?)\s*(0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|inf(?:inity)?|nan|"
                   r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([fF]?)(?![\w.])", re.IGNORECASE)
FORM = ("[cooperative] [nonportable] KERNEL<<<GRID, BLOCK[, CLUSTER][, T shared[N]]>>>(T name[N], "
        "T name[N] = {v, ...}, 5, CUtensorMap tm = tensormap(name, dims {8, 2}, box {4, 2}), ...)")
TM_FORM = "CUtensorMap tm = tensormap(a, dims {8, 2}, box {4, 2})"


def parse_launch(text: str, pos: SourcePos | None = None) -> Launch:
    r = _Reader(text, pos)
    r.ws()
    attrs = _attributes(r)
    m = re.compile(r"[A-Za-z_$][\w$:]*").match(text, r.i)
    if not m:
        raise ParseError("a launch starts with the kernel's name", r.at(), FORM)
    kernel = m.group(0)
    r.i = m.end()
    r.expect("<<<", "after the kernel's name")
    dims = [_dim(r, "the grid")]
    shared: list[Buffer] = []
    while r.peek(","):
        r.i += 1
        if len(dims) >= 2 and not r.peek("(") and _BUFFER.match(r.text, r.i):
            shared.append(_dynamic(r, shared))
            continue
        if shared:
            raise ParseError("the dynamic shared memory comes last in <<< >>>", r.at(), FORM)
        dims.append(_dim(r, ["the grid", "the block", "the cluster"][min(len(dims), 2)]))
    if not 2 <= len(dims) <= 3:
        raise ParseError(f"a launch gives the grid and the block (and a cluster), not {len(dims)} "
                         "dimension(s)", r.at(), FORM)
    r.expect(">>>", "after the launch configuration")
    r.expect("(", "before the arguments")
    args: list[Buffer | Scalar | TensorMapArg | RankArg | PeersArg] = []
    if not r.peek(")"):
        args.append(_arg(r))
        while r.peek(","):
            r.i += 1
            args.append(_arg(r))
    r.expect(")", "after the arguments")
    gpus, gpus_pos = multigpu.read_gpus(r)  # `on N gpus`
    r.ws()
    if r.i < len(text) and text[r.i] != ";":
        raise ParseError(f"unexpected `{text[r.i:r.i + 10]}` after the launch", r.at(), FORM)
    launch = Launch(kernel, dims[0][0], dims[1][0], dims[2][0] if len(dims) > 2 else None, tuple(args),
                    " ".join(text.split()).rstrip(";"), pos, tuple(shared), gpus=gpus, gpus_pos=gpus_pos)
    return _check(_with_attributes(launch, attrs), dims, r)


def _dim(r: _Reader, what: str) -> tuple[tuple[int, int, int], SourcePos | None]:
    r.ws()
    at = r.at()
    if r.peek("("):
        r.i += 1
        xs = [r.integer(what)]
        while r.peek(","):
            r.i += 1
            xs.append(r.integer(what))
        r.expect(")", f"closing {what}")
        if len(xs) > 3:
            raise ParseError(f"{what} has at most 3 dimensions", at, FORM)
    elif r.peek("dim3"):
        raise ParseError("write a dimension as an integer or (x, y, z)", at, "e.g. <<<(2, 1, 1), 32>>>")
    else:
        xs = [r.integer(what)]
    xs += [1] * (3 - len(xs))
    for x in xs:
        if x <= 0:
            raise SemanticError(f"{what} has a dimension of {x}", at, "every dimension is at least 1")
    return (xs[0], xs[1], xs[2]), at


_BUFFER = re.compile(r"((?:const\s+)?(?:unsigned|signed)?\s*(?:long\s+long|long|short|char|int|float|double|"
                     r"bool|u?int(?:8|16|32|64)_t|size_t)?(?:\s+int)?)\s+([A-Za-z_]\w*)\s*\[")


_TENSORMAP = re.compile(r"(?:const\s+)?(?:__grid_constant__\s+)?(?:const\s+)?CUtensorMap(?:_st)?\b\s*")


def _arg(r: _Reader) -> Buffer | Scalar | TensorMapArg | RankArg | PeersArg:
    r.ws()
    at = r.at()
    if r.peek("-") or (r.i < len(r.text) and r.text[r.i].isdigit()):
        return Scalar(r.integer("a scalar argument"), at)
    tm = _TENSORMAP.match(r.text, r.i)
    if tm:
        r.i = tm.end()
        return _tensormap_arg(r, at)
    mg = multigpu.read_arg(r, lambda at: _buffer(r, at, "expected a buffer's name or `T name[N]`",
                                                 multigpu.FORM))  # `rank`, `S name = peers(buf)`
    if mg is not None:
        return mg
    b = _buffer(r, at, "an argument is `T name[N]`, `T name[N] = {...}`, an integer or "
                f"`{TM_FORM}`", FORM)
    return multigpu.read_per_gpu(r, b)  # `T name[N] per gpu`


def _buffer(r: _Reader, at: SourcePos | None, what: str, form: str) -> Buffer:
    m = _BUFFER.match(r.text, r.i)
    if not m or not m.group(1).strip():
        raise ParseError(what, at, form)
    ctype = " ".join(m.group(1).replace("const", "").split())
    if ctype not in C_TYPES:
        raise SemanticError(f"unknown element type `{ctype}`", at,
                            "types: " + ", ".join(sorted(C_TYPES)))
    name = m.group(2)
    r.i = m.end()
    count = r.integer(f"the size of {name}")
    r.expect("]", f"after the size of {name}")
    init: list[int] = []
    if r.peek("="):
        r.i += 1
        r.expect("{", f"before the values of {name}")
        ty = C_TYPES.get(ctype, "")
        value = (lambda what: r.real(what, int(ty[1:]))) if ty.startswith("f") else r.integer
        if not r.peek("}"):
            init.append(value(f"a value of {name}"))
            while r.peek(","):
                r.i += 1
                init.append(value(f"a value of {name}"))
        r.expect("}", f"after the values of {name}")
    buf = Buffer(ctype, C_TYPES[ctype], name, count, tuple(init), at)
    _check_buffer(buf)
    return buf


def _name(r: _Reader, what: str, form: str) -> str:
    r.ws()
    m = re.compile(r"[A-Za-z_]\w*").match(r.text, r.i)
    if not m:
        raise ParseError(f"expected {what}", r.at(), form)
    r.i = m.end()
    return m.group(0)


def _sizes(r: _Reader, key: str) -> tuple[tuple[int, ...], SourcePos | None]:
    """``dims {8, 2}`` / ``box {4, 2}``: the keyword, then integers in braces."""
    r.ws()
    at = r.at()
    if not r.text.startswith(key, r.i):
        raise ParseError(f"expected `{key} {{...}}` in tensormap(...)", at, TM_FORM)
    r.i += len(key)
    r.expect("{", f"after `{key}`")
    xs = [r.integer(f"a size of {key}")]
    while r.peek(","):
        r.i += 1
        xs.append(r.integer(f"a size of {key}"))
    r.expect("}", f"closing {key}")
    return tuple(xs), at


def _tensormap_arg(r: _Reader, at: SourcePos | None) -> TensorMapArg:
    """``CUtensorMap tm = tensormap(a, dims {8, 2}, box {4, 2})`` (``CUtensorMap`` already read)."""
    name = _name(r, "the tensor map's name after CUtensorMap", TM_FORM)
    r.expect("=", f"after CUtensorMap {name} (a tensor map is given as `{TM_FORM}`)")
    r.ws()
    if not r.text.startswith("tensormap", r.i):
        raise ParseError(f"expected `tensormap(...)` for CUtensorMap {name}", r.at(), TM_FORM)
    r.i += len("tensormap")
    r.expect("(", "after tensormap")
    r.ws()
    array_pos = r.at()
    inline = None
    if _BUFFER.match(r.text, r.i):  # `tensormap(int a[16] = {...}, ...)`: a buffer of its own
        inline = _buffer(r, array_pos, "expected a launch buffer's name or `T name[N]`", TM_FORM)
        array = inline.name
    else:
        array = _name(r, "the name of the launch buffer the tensor map describes (or `T name[N]`)", TM_FORM)
    r.expect(",", f"after {array}")
    dims, dims_pos = _sizes(r, "dims")
    r.expect(",", "after dims {...}")
    box, box_pos = _sizes(r, "box")
    r.expect(")", "closing tensormap(...)")
    return TensorMapArg(name, array, dims, box, at, dims_pos, box_pos, array_pos, inline)


# cuTensorMapEncodeTiled's CUtensorMapDataType (cuda.h) of each element type. CHOICE: the signed
# 8- and 16-bit types have no enum of their own; a tiled copy with no OOB NaN fill moves the bytes
# unchanged, so they are UINT8 / UINT16 (bool too).
TENSOR_DTYPES = {"u8": 0, "s8": 0, "u16": 1, "s16": 1, "u32": 2, "s32": 3, "u64": 4, "s64": 5,
                 "f32": 7, "f64": 8}
MAX_BOX_ELEMENTS = 64  # ptxmm's limit: every element of a box is a read and a write of the model
MAX_TENSOR_RANK = 2  # ptxmm models cp.async.bulk.tensor.1d and .2d


def check_tensormap(tm: TensorMapArg, buffers: dict[str, Buffer]) -> TensorMapArg:
    """The map with its data type and element size, after cuTensorMapEncodeTiled's rules (cuda.h,
    its documentation) for what a launch can give — "tensorRank must be non-zero and less than or
    equal to the maximum supported dimensionality of 5"; "globalAddress ... must be 16 byte aligned"
    (a launch buffer is: kernels.Layout and the device harness align each to 128 bytes); "globalDim
    array ... must be non-zero and less than or equal to 2^32"; "globalStrides ... must be a
    multiple of 16 and less than 2^40" (the packed row: dims[0] × the element size); "boxDim array
    ... must be non-zero and less than or equal to 256" and, with interleave NONE, "boxDim[0] *
    elementSizeInBytes(tensorDataType) must be a multiple of 16 bytes" — then ptxmm's own limits,
    each a located "not supported yet": the tensor within its buffer, rank 1 or 2, 4-byte elements
    (the model copies 32-bit words), at most MAX_BOX_ELEMENTS elements per box."""
    b = buffers.get(tm.array)
    if b is None:
        raise SemanticError(f"tensor map {tm.name} describes {tm.array}, which is no buffer of the launch",
                            tm.array_pos, "buffers: " + (", ".join(sorted(buffers)) or "none") +
                            f"; write `int {tm.array}[N]` among the arguments")
    esize = int(b.type[1:]) // 8
    dtype = TENSOR_DTYPES[b.type]
    if len(tm.dims) != len(tm.box):
        raise SemanticError(f"tensor map {tm.name} has {len(tm.dims)} dims but {len(tm.box)} box sizes",
                            tm.box_pos, "give one box size per dimension, dimension 0 first")
    if not 1 <= len(tm.dims) <= 5:
        raise SemanticError(f"tensor map {tm.name} has rank {len(tm.dims)}", tm.dims_pos,
                            "cuTensorMapEncodeTiled takes 1 to 5 dimensions")
    for d in tm.dims:
        if not 1 <= d <= 1 << 32:
            raise SemanticError(f"tensor map {tm.name}: dimension size {d}", tm.dims_pos,
                                "cuTensorMapEncodeTiled: every globalDim is 1 .. 2^32")
    for x in tm.box:
        if not 1 <= x <= 256:
            raise SemanticError(f"tensor map {tm.name}: box size {x}", tm.box_pos,
                                "cuTensorMapEncodeTiled: every boxDim is 1 .. 256")
    if tm.box[0] * esize % 16:
        raise SemanticError(f"tensor map {tm.name}: the box's inner dimension is {tm.box[0]} × {esize} = "
                            f"{tm.box[0] * esize} bytes, not a multiple of 16", tm.box_pos,
                            f"cuTensorMapEncodeTiled: boxDim[0] × the element size is a multiple of 16 "
                            f"bytes (here box[0] a multiple of {16 // math.gcd(16, esize)})")
    out = _replace(tm, dtype=dtype, esize=esize)
    for k, s in enumerate(out.strides):
        if s % 16 or s >= 1 << 40:
            raise SemanticError(f"tensor map {tm.name}: the stride of dimension {k + 1} is {s} bytes (rows "
                                "packed), not a multiple of 16", tm.dims_pos,
                                "cuTensorMapEncodeTiled: globalStrides are multiples of 16 bytes; "
                                f"make dims[0] × {esize} a multiple of 16")
    return _model_limits(out, b)


def _model_limits(tm: TensorMapArg, b: Buffer) -> TensorMapArg:
    need = _prod(tm.dims)
    if need > b.count:
        raise SemanticError(f"tensor map {tm.name} has {need} elements, but {b.name} holds {b.count}",
                            tm.array_pos, f"declare `{b.ctype} {b.name}[{need}]` or shrink dims")
    if len(tm.dims) > MAX_TENSOR_RANK:
        raise UnsupportedError(f"a {len(tm.dims)}-dimensional tensor map {tm.name}", tm.dims_pos,
                               "ptxmm models 1d and 2d tensor maps and copies")
    if tm.esize != 4:
        raise UnsupportedError(f"tensor map {tm.name} over {b.ctype} ({tm.esize}-byte elements)",
                               tm.array_pos, "ptxmm's tensor copies move 32-bit words: map a buffer of "
                               "int, unsigned, float, int32_t or uint32_t")
    if _prod(tm.box) > MAX_BOX_ELEMENTS:
        raise UnsupportedError(f"tensor map {tm.name}: a box of {_prod(tm.box)} elements", tm.box_pos,
                               f"every box element is two events of the model: at most {MAX_BOX_ELEMENTS}")
    return tm


def _dynamic(r: _Reader, shared: list[Buffer]) -> Buffer:
    """``T name[N]`` in ``<<< >>>``: the dynamic shared memory of ``extern __shared__ T name[]``."""
    at = r.at()
    b = _arg(r)
    if not isinstance(b, Buffer):
        raise ParseError("the dynamic shared memory is `T name[N]`", at, FORM)
    if b.init:
        raise SemanticError(f"values for the dynamic shared array {b.name}", at,
                            "shared memory has no initial values: write `T name[N]`")
    if shared:
        raise SemanticError("a second dynamic shared array", at,
                            "a launch gives one block of dynamic shared memory: size one extern __shared__ "
                            "array; the kernel's others start at the same address")
    return b


def _check_buffer(b: Buffer) -> None:
    """Sizes within the limits; the values fit the element type."""
    name, count, init, at, ctype, ty = b.name, b.count, b.init, b.pos, b.ctype, b.type
    if count <= 0:
        raise SemanticError(f"buffer {name} has {count} elements", at, "a buffer has at least 1 element")
    if count > MAX_ELEMENTS:
        raise SemanticError(f"buffer {name} has {count} elements, more than the limit of {MAX_ELEMENTS}",
                            at, "every element is a location of the model: keep buffers small")
    if len(init) > count:
        raise SemanticError(f"{len(init)} values for the {count} elements of {name}", at, None)
    w = int(ty[1:])  # a float buffer's values are its elements' bits (_Reader.real)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if ty[0] == "s" else (0, (1 << w) - 1)
    for v in init:
        if not lo <= v <= hi and not (ty[0] == "s" and 0 <= v < 1 << w):
            raise SemanticError(f"value {v} does not fit {ctype}", at, f"range {lo}..{hi}")


def _check(launch: Launch, dims, r: _Reader) -> Launch:
    multigpu.check_multigpu(launch, MAX_TOTAL_ELEMENTS)
    named = [*launch.buffers, *launch.tensormaps]
    names = [a.name for a in named]
    for a in named:
        if names.count(a.name) > 1:
            what = "buffers" if all(isinstance(x, Buffer) for x in named if x.name == a.name) else \
                "arguments (buffers or tensor maps)"
            raise SemanticError(f"two {what} are named {a.name}", a.pos, "give each its own name")
    buffers = {b.name: b for b in launch.buffers}
    args = tuple(check_tensormap(a, buffers) if isinstance(a, TensorMapArg) else a for a in launch.args)
    total = sum(b.count for b in launch.buffers) + sum(b.count for b in launch.shared)
    if total > MAX_TOTAL_ELEMENTS:
        raise SemanticError(f"the buffers have {total} elements, more than the limit of "
                            f"{MAX_TOTAL_ELEMENTS}", launch.pos or r.at(0), "keep buffers small")
    per_block = _prod(launch.block)
    if per_block > MAX_BLOCK_THREADS:
        raise SemanticError(f"the block has {per_block} threads, more than CUDA's limit of "
                            f"{MAX_BLOCK_THREADS} threads per block", dims[1][1],
                            "CUDA refuses such a launch (cudaErrorInvalidConfiguration): shrink the block")
    n = launch.n_threads
    if n > MAX_THREADS:
        raise SemanticError(f"the launch has {n} threads, more than the limit of {MAX_THREADS} "
                            "(a ceiling that protects the machine: every CUDA thread is a thread of the "
                            "model, built into events before --timeout or --max-memory can judge the "
                            "check)", dims[0][1], "shrink the grid or the block; below the ceiling, "
                            "--timeout and --max-memory bound what a check may cost")
    check_cluster(launch, dims[2][1] if len(dims) > 2 else None)
    return _replace(launch, args=args)


# ----- launch attributes and the kernel's directives: the launch as CUDA validates it ------------

# Words before the kernel's name, each a launch attribute of cudaLaunchKernelEx:
# `cooperative` (cudaLaunchAttributeCooperative, as cudaLaunchCooperativeKernel launches) and
# `nonportable` (cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)).
LAUNCH_ATTRIBUTES = ("cooperative", "nonportable")
MAX_PORTABLE_CLUSTER = 8  # CUDA programming guide, thread block clusters: "portable" cluster size
MAX_NONPORTABLE_CLUSTER = 16  # sm_90, with cudaFuncAttributeNonPortableClusterSizeAllowed


def _attributes(r: _Reader) -> dict[str, SourcePos | None]:
    """The launch attributes written before the kernel's name (``cooperative k<<<...>>>``): a word
    of LAUNCH_ATTRIBUTES followed by another name (a kernel may itself be named ``cooperative``)."""
    out: dict[str, SourcePos | None] = {}
    word = re.compile(r"([A-Za-z_]\w*)\s+(?=[A-Za-z_$])")
    while (m := word.match(r.text, r.i)) and m.group(1) in LAUNCH_ATTRIBUTES:
        if m.group(1) in out:
            raise ParseError(f"`{m.group(1)}` twice", r.at(), FORM)
        out[m.group(1)] = r.at()
        r.i = m.end()
    return out


def _with_attributes(launch: Launch, attrs: dict[str, SourcePos | None]) -> Launch:
    return _replace(launch, cooperative="cooperative" in attrs, nonportable="nonportable" in attrs,
                    cluster_from="launch" if launch.cluster is not None else None)


def check_cluster(launch: Launch, at: SourcePos | None, why: str = "") -> None:
    """The cluster's rules as cudaLaunchKernelEx applies them (cudaErrorInvalidClusterSize, seen
    on an H200): every grid dimension a multiple of the cluster's; at most 8 CTAs (the portable
    size), or 16 with cudaFuncAttributeNonPortableClusterSizeAllowed (``nonportable``: 16
    launched, 32 refused on an H200). ``why``: where the cluster comes from, for the message."""
    cl = launch.cluster
    if cl is None:
        return
    for k, (g, c) in enumerate(zip(launch.grid, cl)):
        if g % c:
            raise SemanticError(f"the grid's dimension {'xyz'[k]} ({g}) is not a multiple of the "
                                f"cluster's ({c}){why}", at,
                                "CUDA refuses the launch (cudaErrorInvalidClusterSize): make the grid "
                                "a whole number of clusters")
    n = _prod(cl)
    limit = MAX_NONPORTABLE_CLUSTER if launch.nonportable else MAX_PORTABLE_CLUSTER
    if n > limit:
        hint = (f"sm_90 runs at most {MAX_NONPORTABLE_CLUSTER} CTAs a cluster" if launch.nonportable else
                f"portable clusters have at most {MAX_PORTABLE_CLUSTER} CTAs; up to "
                f"{MAX_NONPORTABLE_CLUSTER} on sm_90 after cudaFuncSetAttribute(k, "
                "cudaFuncAttributeNonPortableClusterSizeAllowed, 1): write `nonportable k<<<...>>>`")
        raise SemanticError(f"a cluster of {n} CTAs{why}", at,
                            f"CUDA refuses the launch (cudaErrorInvalidClusterSize): {hint}")


# each directive → the CUDA C++ that makes nvcc emit it (nvcc 13, sm_90)
CUDA_SPELLING = {"maxntid": "__launch_bounds__", "minnctapersm": "__launch_bounds__",
                 "maxclusterrank": "__launch_bounds__", "reqntid": "__block_size__",
                 "blocksareclusters": "__block_size__", "reqnctapercluster": "__cluster_dims__",
                 "explicitcluster": "__cluster_dims__", "maxnreg": "__maxnreg__"}


def apply_directives(launch: Launch, kernel: str, directives: tuple, cuda_line=None) -> Launch:
    """``launch`` as CUDA runs kernel ``kernel`` with its header's ``directives``
    (:class:`~ptxmm.kernel.module.records.EntryDirective`), or a located error at the launch
    line where CUDA refuses it (PTX ISA 11.4 Performance-Tuning Directives, 11.7 Cluster
    Dimension Directives; each rule also seen on an H200 through the CUDA runtime):

    * ``.reqntid`` (``__block_size__``): "The size of each CTA dimension specified in any
      invocation of the kernel is required to be equal to that specified in this directive";
    * ``.maxntid`` (``__launch_bounds__(N)``): the block's thread count, "the product of the maximum
      extent specified for each dimension, is guaranteed not to be exceeded" (the total only:
      ``.maxntid 4, 1, 1`` runs a (1, 4, 1) block and refuses (2, 3, 1));
    * ``.reqnctapercluster`` (``__cluster_dims__``): the launch's cluster when the launch line gives
      none ("runtime will use the specified values for configuring the launch if the same are not
      specified at launch time"); a launch line's cluster that differs is refused;
    * ``.explicitcluster``: a cluster is given (by the launch or ``.reqnctapercluster``);
    * ``.maxclusterrank`` (``__launch_bounds__(N, M, K)``): the cluster's CTA count at most K;
    * ``.blocksareclusters`` (``__block_size__``'s grid counted in clusters): not supported yet;
    * ``.maxnreg``, ``.minnctapersm``, ``.maxnctapersm``: register allocation and occupancy hints,
      no effect on the model.

    ``cuda_line``: directive name → where the CUDA attribute is written (``k.cu:12``), or None."""
    d = {x.name: x for x in directives}
    name = kernel

    def refuse(what: str, key: str, error: str, hint: str) -> SemanticError:
        x = d[key]
        ptx = f"`.{key}{' ' + ', '.join(map(str, x.values)) if x.values else ''}`"
        where = [f"PTX line {x.pos.line}"] if x.pos is not None else []
        cuda = cuda_line(key) if cuda_line else None
        if key in CUDA_SPELLING:
            where.append(CUDA_SPELLING[key] + (f" at {cuda}" if cuda else ""))
        src = f" ({'; '.join(where)})" if where else ""
        return SemanticError(f"{what}: kernel {name} has {ptx}{src}", launch.pos,
                             f"CUDA refuses this launch ({error}): {hint}")

    if "blocksareclusters" in d:
        x = d["blocksareclusters"]
        line = x.pos.line if x.pos else "?"
        raise UnsupportedError(f"kernel {name} has `.blocksareclusters` (line {line}; __block_size__): its "
                               "grid counts clusters", launch.pos,
                               "not supported yet: use __launch_bounds__ and __cluster_dims__")
    block = launch.block
    if "reqntid" in d and block != d["reqntid"].values:
        req = d["reqntid"].values
        raise refuse(f"the block is {_fmt(block)}", "reqntid", "cudaErrorInvalidValue",
                     f"launch it with a block of {_fmt(req)}: every dimension as .reqntid gives it")
    if "maxntid" in d and _prod(block) > _prod(d["maxntid"].values):
        raise refuse(f"the block has {_prod(block)} threads", "maxntid", "cudaErrorInvalidValue",
                     f"at most {_prod(d['maxntid'].values)} threads a block (PTX ISA: the product of "
                     ".maxntid's extents; any shape)")
    cluster, source = launch.cluster, launch.cluster_from
    if "reqnctapercluster" in d:
        req = d["reqnctapercluster"].values
        if cluster is None:
            cluster, source = req, "reqnctapercluster"
        elif cluster != req:
            raise refuse(f"the launch's cluster is {_fmt(cluster)}", "reqnctapercluster",
                         "cudaErrorInvalidClusterSize",
                         f"give no cluster (CUDA then uses {_fmt(req)}) or the same one")
    if "explicitcluster" in d and cluster is None:
        raise refuse("the launch gives no cluster", "explicitcluster", "a launch error",
                     "give the cluster in <<<GRID, BLOCK, CLUSTER>>>")
    if "maxclusterrank" in d and cluster is not None and _prod(cluster) > d["maxclusterrank"].values[0]:
        raise refuse(f"the launch's cluster has {_prod(cluster)} CTAs", "maxclusterrank",
                     "cudaErrorInvalidClusterSize",
                     f"at most {d['maxclusterrank'].values[0]} CTAs a cluster")
    out = _replace(launch, cluster=cluster, cluster_from=source)
    if source == "reqnctapercluster":
        x = d["reqnctapercluster"]
        check_cluster(out, launch.pos, f" (kernel {name}'s `.reqnctapercluster`, PTX line "
                                       f"{x.pos.line if x.pos else '?'}: its __cluster_dims__)")
    return out


def _fmt(d: tuple[int, ...]) -> str:
    return str(d[0]) if all(x == 1 for x in d[1:]) else "(" + ", ".join(map(str, d)) + ")"


__all__ = ["Buffer", "C_TYPES", "LAUNCH_ATTRIBUTES", "Launch", "Scalar", "TensorMapArg", "apply_directives",
           "check_cluster", "check_tensormap", "parse_launch"]
