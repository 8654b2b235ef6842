"""A kernel launch as the user writes it: ``KERNEL<<<GRID, BLOCK[, CLUSTER][, T name[N]]>>>(ARG, ...)``.

GRID, BLOCK and CLUSTER are integers or ``(x, y{, z})``; ``T name[N]`` inside ``<<< >>>`` is the
dynamic shared memory of the kernel's ``extern __shared__ T name[]`` (CUDA's third launch
argument, given as the array it holds: N elements of C type T, N * sizeof(T) bytes); an ARG is
``T name[N]`` (a fresh global buffer of N zero-filled elements of C type T), ``T name[N] = {v,
...}`` (the first elements given, the rest 0), or an integer literal (a scalar parameter). Every
mistake is a located error."""

from __future__ import annotations

import re

from ..errors import ParseError, SemanticError, SourcePos
from ..records import record

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
MAX_THREADS = 32
MAX_ELEMENTS = 1024  # per buffer
MAX_TOTAL_ELEMENTS = 4096  # all buffers of a launch


@record
class Buffer:
    ctype: str
    type: str  # PTX element type
    name: str
    count: int
    init: tuple[int, ...] = ()
    pos: SourcePos | None = None


@record
class Scalar:
    value: int
    pos: SourcePos | None = None


@record
class Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] | None
    args: tuple[Buffer | Scalar, ...]
    text: str = ""
    pos: SourcePos | None = None
    shared: tuple[Buffer, ...] = ()  # dynamic shared memory: the extern __shared__ arrays it holds

    @property
    def n_threads(self) -> int:
        return _prod(self.grid) * _prod(self.block)

    def __str__(self) -> str:
        return self.text


def _prod(d: tuple[int, ...]) -> int:
    out = 1
    for x in d:
        out *= x
    return out


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


FORM = "KERNEL<<<GRID, BLOCK[, CLUSTER][, T shared[N]]>>>(T name[N], T name[N] = {v, ...}, 5, ...)"


def parse_launch(text: str, pos: SourcePos | None = None) -> Launch:
    r = _Reader(text, pos)
    r.ws()
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
    args: list[Buffer | Scalar] = []
    if not r.peek(")"):
        args.append(_arg(r))
        while r.peek(","):
            r.i += 1
            args.append(_arg(r))
    r.expect(")", "after the arguments")
    r.ws()
    if r.i < len(text) and text[r.i] != ";":
        raise ParseError(f"unexpected `{text[r.i:r.i + 10]}` after the launch", r.at(), FORM)
    launch = Launch(kernel, dims[0][0], dims[1][0], dims[2][0] if len(dims) > 2 else None, tuple(args),
                    " ".join(text.split()).rstrip(";"), pos, tuple(shared))
    _check(launch, dims, r)
    return launch


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


def _arg(r: _Reader) -> Buffer | Scalar:
    r.ws()
    at = r.at()
    if r.peek("-") or (r.i < len(r.text) and r.text[r.i].isdigit()):
        return Scalar(r.integer("a scalar argument"), at)
    m = _BUFFER.match(r.text, r.i)
    if not m or not m.group(1).strip():
        raise ParseError("an argument is `T name[N]`, `T name[N] = {...}` or an integer", at, FORM)
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
        if not r.peek("}"):
            init.append(r.integer(f"a value of {name}"))
            while r.peek(","):
                r.i += 1
                init.append(r.integer(f"a value of {name}"))
        r.expect("}", f"after the values of {name}")
    buf = Buffer(ctype, C_TYPES[ctype], name, count, tuple(init), at)
    _check_buffer(buf)
    return buf


def _dynamic(r: _Reader, shared: list[Buffer]) -> Buffer:
    """``T name[N]`` in ``<<< >>>``: the dynamic shared memory of ``extern __shared__ T name[]``."""
    at = r.at()
    b = _arg(r)
    assert isinstance(b, Buffer)
    if b.init:
        raise SemanticError(f"values for the dynamic shared array {b.name}", at,
                            "shared memory has no initial values: write `T name[N]`")
    if shared:
        raise SemanticError("a second dynamic shared array", at,
                            "a launch gives one block of dynamic shared memory: one extern __shared__ array")
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
    if ty.startswith("f") and any(init):
        raise SemanticError(f"non-zero values for the {ctype} buffer {name}", at,
                            "ptxmm models integer values; floating-point buffers start at 0")
    w = int(ty[1:])
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if ty[0] == "s" else (0, (1 << w) - 1)
    for v in init:
        if not lo <= v <= hi and not (ty[0] == "s" and 0 <= v < 1 << w):
            raise SemanticError(f"value {v} does not fit {ctype}", at, f"range {lo}..{hi}")


def _check(launch: Launch, dims, r: _Reader) -> None:
    names = [a.name for a in launch.args if isinstance(a, Buffer)]
    for a in launch.args:
        if isinstance(a, Buffer) and names.count(a.name) > 1:
            raise SemanticError(f"two buffers are named {a.name}", a.pos, "give each buffer its own name")
    total = sum(a.count for a in launch.args if isinstance(a, Buffer)) + sum(b.count for b in launch.shared)
    if total > MAX_TOTAL_ELEMENTS:
        raise SemanticError(f"the buffers have {total} elements, more than the limit of "
                            f"{MAX_TOTAL_ELEMENTS}", launch.pos or r.at(0), "keep buffers small")
    n = launch.n_threads
    if n > MAX_THREADS:
        raise SemanticError(f"the launch has {n} threads, more than the limit of {MAX_THREADS}",
                            dims[0][1], "ptxmm checks small launches: every CUDA thread is a thread "
                            "of the model; shrink the grid or the block")
    if launch.cluster is not None:
        for k, (g, c) in enumerate(zip(launch.grid, launch.cluster)):
            if g % c:
                raise SemanticError(f"the grid's dimension {'xyz'[k]} ({g}) is not a multiple of the "
                                    f"cluster's ({c})", dims[2][1], None)
        if _prod(launch.cluster) > 8:
            raise SemanticError(f"a cluster of {_prod(launch.cluster)} CTAs", dims[2][1],
                                "portable clusters have at most 8 CTAs")


__all__ = ["Buffer", "C_TYPES", "Launch", "Scalar", "parse_launch"]
