"""Kernels: a PTX module (nvcc's output, :mod:`.syntax.ptx_module`) and a launch
(:mod:`.syntax.launch`) instantiated into a :class:`~ptxmm.program.Program`.

Every CUDA thread of the launch is a thread of the model (independent thread scheduling), placed in
its CTA and cluster, with its special registers (``%tid``, ``%ctaid``, ``%laneid``, ...) concrete
(initial register values). Buffers — the launch's ``T name[N]`` arguments and the module's
``.global``/``.shared`` variables — lie at fixed addresses (:class:`Layout`); every element is a
location of the model named ``name[i]``. A kernel parameter's value is its buffer's base address
(or the scalar). Addresses are 64-bit machine integers: the event builder computes each access's
address (constant once thread ids and parameters are known) and asks the layout which element it
names; an address outside every buffer is an *out-of-bounds* access: the thread stops there, and
the finding is a query on the formula (:func:`site_findings`), as a failing ``assert()``
(``__assertfail``) is. A generic address is resolved by the same layout (a global and a shared
buffer never share an address). An address computed from loaded data (``hist[in[t]]``) is split by
the event builder into one case per element it may name (:meth:`Layout.targets`, a sound
over-approximation) and one out-of-bounds case where it may lie outside every buffer.

Two registers of each thread record where it stopped, only along the paths that stop: ``%ptxmm.assert``
and ``%ptxmm.oob`` hold the PTX line of the failing ``assert`` call or of the out-of-bounds access."""

from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path

from .._infra.records import record
from ..errors import Diagnostic, ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir.program import (
    TENSORMAP_BYTES,
    Addr,
    Alu,
    AsyncStore,
    Branch,
    BulkCopy,
    Condition,
    CpAsync,
    CpAsyncGroup,
    Imm,
    Instruction,
    Label,
    Load,
    Location,
    Mapa,
    MBarrier,
    MemRef,
    Mov,
    Placement,
    Program,
    Reg,
    Ret,
    Selp,
    Setp,
    Sym,
    TensorCopy,
    TensorMap,
    TensorMapReplace,
    Thread,
    operands,
    type_width,
)
from .launch import Buffer, Launch, Scalar, TensorMapArg, parse_launch
from .module import PARAM, Call, Function, KernelPos, Module, ParamStore, Variable

ASSERT_REG = "%ptxmm.assert"
OOB_REG = "%ptxmm.oob"
GLOBAL_BASE = 0x1000_0000
SHARED_BASE = 0x0100_0000
CONST_BASE = 0x0800_0000
PARAM_BASE = 0x0400_0000  # the tensor maps the launch passes by value (`__grid_constant__ CUtensorMap`)
SLOT = 0x10_0000  # each buffer's address range; the gap catches small out-of-bounds offsets
# nvcc's string constants (assert messages, printf formats): addresses, no locations
_STRINGS = re.compile(r"^(\$str|__unnamed_)")


# ----- reading a kernel file --------------------------------------------------------------------

@record
class KernelArgs:
    """What the command line adds to a kernel file: the launch, nvcc's flags, a condition (each
    wins over the file's ``// ptxmm:`` line)."""

    launch: str | None = None
    nvcc_flags: str | None = None
    exists: str | None = None
    forall: str | None = None


FINDING_KINDS = ("assert-fails", "hang", "out-of-bounds", "race")


def parse_kernel(text: str, file: str = "<string>", args: KernelArgs | None = None) -> Program:
    """A ``.cu`` file (compiled by nvcc) or a PTX module, with its launch: the Program."""
    from . import module as ptx_module

    args = args or KernelArgs()
    path = Path(file)
    source_file = None
    if path.suffix == ".cu":
        from .nvcc import compile_cu

        source_file = file
        ptx, _cached = compile_cu(path, args.nvcc_flags)
        module = ptx_module.parse(ptx, file[:-3] + ".ptx" if file.endswith(".cu") else file)
        directives = list(ptx_module._Splitter(text, file).directives_only())
    else:
        module = ptx_module.parse(text, file)
        directives = list(module.directives)
        twin = path.with_suffix(".cu")
        if not directives and twin.is_file():
            directives = list(ptx_module._Splitter(twin.read_text(), str(twin)).directives_only())
        if twin.is_file():
            source_file = str(twin)
    d = _directives(directives)
    launch_text, launch_pos = (args.launch, None) if args.launch else d.get("launch", (None, None))
    if launch_text is None:
        raise SemanticError(f"{file} has no launch", SourcePos(file, 1, 1),
                            "add a line `// ptxmm: launch KERNEL<<<GRID, BLOCK>>>(int buf[N], ...)` or "
                            "give --launch")
    launch = parse_launch(launch_text, launch_pos)
    cond = None
    if args.exists or args.forall:
        if args.exists and args.forall:
            raise SemanticError("give --exists or --forall, not both", None, None)
        q = "exists" if args.exists else "forall"
        cond = parse_condition(q, args.exists or args.forall)
    else:
        for q in ("exists", "forall", "~exists"):
            if q in d:
                cond = parse_condition(q, *d[q])
    expect, expect_pos = None, None
    if "expect" in d:
        expect, expect_pos = _expect(*d["expect"])
    return instantiate(module, launch, cond, file, source_file, expect, expect_pos)


def _directives(lines: list[tuple[str, SourcePos]]) -> dict[str, tuple[str, SourcePos]]:
    out: dict[str, tuple[str, SourcePos]] = {}
    for text, pos in lines:
        word, _, rest = text.partition(" ")
        if word == "not" and rest.startswith("exists"):
            word, rest = "~exists", rest[len("exists"):]
        if word not in ("launch", "exists", "forall", "~exists", "expect"):
            raise ParseError(f"unknown ptxmm directive `{word}`", pos,
                             "directives: launch, exists, forall, ~exists, expect")
        if word in out:
            raise SemanticError(f"a second `ptxmm: {word}` line", pos,
                                f"the first is line {out[word][1].line}")
        off = text.find(rest.strip()) if rest.strip() else 0
        out[word] = (rest.strip(), SourcePos(pos.file, pos.line, pos.col + len("ptxmm: ") + off))
    return out


def _expect(text: str, pos: SourcePos) -> tuple[tuple[str, ...], SourcePos]:
    words = [w.strip() for w in text.split(",") if w.strip()]
    if words == ["ok"]:
        return (), pos
    for w in words:
        if w not in FINDING_KINDS:
            raise ParseError(f"unknown finding kind `{w}` in `expect`", pos,
                             "write `expect ok` or a list of: " + ", ".join(FINDING_KINDS))
    return tuple(sorted(set(words))), pos


# ----- names -------------------------------------------------------------------------------------

def demangle(name: str) -> str:
    """The source name of a simple Itanium-mangled name: ``_Z2mpPiS_`` → ``mp``,
    ``_ZN2ns4kernEv`` → ``ns::kern``, ``_ZZ4kernPiE3buf`` → ``buf`` (a static local); other
    names unchanged."""
    if name.startswith("_ZZ"):
        m = re.search(r"E(\d+)([A-Za-z_]\w*)$", name)
        if m and len(m.group(2)) == int(m.group(1)):
            return m.group(2)
        return name
    if name.startswith("_ZN"):
        parts, i = [], 3
        while i < len(name) and name[i].isdigit():
            m = re.match(r"\d+", name[i:])
            n = int(m.group(0))
            i += len(m.group(0))
            parts.append(name[i:i + n])
            i += n
        return "::".join(parts) if parts else name
    m = re.match(r"^_Z(\d+)", name)
    if m:
        n = int(m.group(1))
        return name[m.end():m.end() + n]
    return name


_BUILTIN = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
            "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
            "x": "long long", "y": "unsigned long long", "f": "float", "d": "double"}
# the mangling code of each C type a launch may name (x86-64 Linux: int64_t is long)
C_CODE = {"int": "i", "signed": "i", "signed int": "i", "unsigned": "j", "unsigned int": "j",
          "long long": "x", "long long int": "x", "unsigned long long": "y", "unsigned long long int": "y",
          "long": "l", "unsigned long": "m", "short": "s", "unsigned short": "t", "char": "c",
          "signed char": "a", "unsigned char": "h", "bool": "b", "float": "f", "double": "d",
          "int8_t": "a", "int16_t": "s", "int32_t": "i", "int64_t": "l", "uint8_t": "h", "uint16_t": "t",
          "uint32_t": "j", "uint64_t": "m", "size_t": "m"}


def param_types(name: str) -> list[str] | None:
    """The parameter types of a simply mangled function ``_Z<n><name><types>`` as mangling codes of
    pointers to builtins and builtins (``Pi``, ``PKj``, ``i``) and classes of the global namespace
    as ``N<name>`` (``NCUtensorMap_st``), substitutions ``S_``/``S<n>_`` resolved; None for
    anything else (templates, namespaces)."""
    m = re.match(r"^_Z(\d+)", name)
    if not m:
        return None
    i = m.end() + int(m.group(1))
    subs: list[str] = []
    out: list[str] = []
    while i < len(name):
        t, i = _one_type(name, i, subs)
        if t is None:
            return None
        out.append(t)
    return [] if out == ["v"] else out


def _one_type(name: str, i: int, subs: list[str]) -> tuple[str | None, int]:
    c = name[i]
    if c in _BUILTIN:
        return c, i + 1
    if c in "PKV":
        inner, j = _one_type(name, i + 1, subs)
        if inner is None:
            return None, j
        t = c + inner
        subs.append(t)
        return t, j
    m = re.match(r"S(\d*)_", name[i:])
    if m:
        k = int(m.group(1)) + 1 if m.group(1) else 0
        return (subs[k] if k < len(subs) else None), i + m.end()
    m = re.match(r"(\d+)", name[i:])
    if m:  # a class named in the global namespace (``14CUtensorMap_st``): N<name>, substitutable
        n = int(m.group(1))
        t = "N" + name[i + m.end():i + m.end() + n]
        subs.append(t)
        return t, i + m.end() + n
    return None, i


def _pointee(code: str) -> str | None:
    """``PKi`` → ``i``: the builtin a pointer type points to (qualifiers dropped), else None."""
    if not code.startswith("P"):
        return None
    rest = code[1:].lstrip("KV")
    return rest if rest in _BUILTIN else None


# ----- the layout --------------------------------------------------------------------------------

@record
class Region:
    """One buffer: ``count`` elements (None: a scalar variable) of ``type`` from ``base``."""

    name: str  # the name its elements carry (name[i])
    ptx: str  # the name the PTX uses (a module variable), or the launch argument's
    space: str  # global | shared
    type: str
    count: int | None
    base: int
    init: tuple[int, ...] = ()
    located: bool = True  # False: nvcc's string constants (no locations)
    mixed: tuple[int, ...] = ()  # a byte array accessed at several widths (bytes): not typed by them
    # a tensor map the launch passes by value (space "param"): one opaque 128-byte object, one
    # location of the model holding its global address (docs/kernels.md, "Tensor maps")
    tensormap: TensorMap | None = None

    @property
    def size(self) -> int:
        return TENSORMAP_BYTES if self.tensormap is not None else type_width(self.type) // 8

    def element_name(self, i: int) -> str:
        return self.name if self.count is None else f"{self.name}[{i}]"

    @property
    def n(self) -> int:
        return 1 if self.count is None else self.count


@record
class Layout:
    """Where every buffer lies; what an address names."""

    regions: tuple[Region, ...]

    @property
    def symbols(self) -> dict[str, int]:
        """Module variables' names → their base addresses (a ``mov.u64 %rd, var`` operand; a tensor
        map parameter's ``mov.b64 %rd, k_param_0``)."""
        return {r.ptx: r.base for r in self.regions}

    def base_of(self, name: str) -> int:
        """The address of buffer ``name``'s element 0 (a tensor map's global address)."""
        return next(r.base for r in self.regions if r.name == name)

    def tensormap_at(self, addr: int, ins: Instruction) -> str:
        """The tensor map whose object starts at ``addr`` (a copy's ``[tensorMap, …]`` operand);
        anything else a located error."""
        for r in self.regions:
            if not r.base <= addr < r.base + r.n * r.size:
                continue
            if r.tensormap is not None and addr == r.base:
                return r.name
            if r.tensormap is not None:
                raise SemanticError(f"`{ins.text}` names byte {addr - r.base} of tensor map {r.name}",
                                    ins.pos, "pass the map's own address (&tm)")
            if r.space == "const":
                break
            raise SemanticError(f"`{ins.text}`: its tensor map operand names {r.name}, which is no tensor "
                                "map the launch gives", ins.pos, "pass &tm of a `const __grid_constant__ "
                                "CUtensorMap tm` parameter, given in the launch as `CUtensorMap tm = "
                                "tensormap(a, dims {...}, box {...})` (a map in global memory is not "
                                "supported yet)")
        raise UnsupportedError(f"`{ins.text}`: a tensor map that is not a kernel parameter", ins.pos,
                               "tensor maps are modelled as `const __grid_constant__ CUtensorMap` "
                               "parameters; a map in __constant__ or global memory (or built or "
                               "modified on the device) is not supported yet")

    def element(self, addr: int, width: int, ins: Instruction) -> str | None:
        """The location an access of ``width`` bits at ``addr`` names; None: out of bounds (or an
        access the element does not allow: a write of ``__constant__`` data, ``ld.const`` of
        another space)."""
        widths = _operand_widths(ins, width)
        for r in self.regions:
            end = r.base + r.n * r.size
            if r.base <= addr < end:
                off = addr - r.base
                if r.tensormap is not None:
                    raise UnsupportedError(f"`{ins.text}` accesses the tensor map {r.name} as data", ins.pos,
                                           "a CUtensorMap is an opaque object: pass its address to "
                                           "cp.async.bulk.tensor")
                if not r.located or not _allows(r, ins):
                    return None
                width = 8 * r.size if 8 * r.size in widths else width
                if r.mixed and (off % r.size or width != 8 * r.size):
                    raise UnsupportedError(
                        f"`{ins.text}` accesses {width // 8} byte(s) at byte {off} of {r.name}, an array "
                        f"nvcc declares as bytes and the kernel accesses at several widths "
                        f"({', '.join(map(str, r.mixed))} bytes)", ins.pos,
                        "mixed-size accesses are not modelled yet: give each width an array of its own")
                if off % r.size or width != 8 * r.size:
                    raise UnsupportedError(
                        f"`{ins.text}` accesses {width // 8} byte(s) at byte {off} of {r.name}, whose "
                        f"elements are {r.size}-byte {r.type}", ins.pos,
                        "mixed-size accesses are not modelled yet: access whole elements")
                return r.element_name(off // r.size)
        return None

    def constant(self, name: str) -> tuple[int, str] | None:
        """A ``__constant__`` element's value and type (None: not a constant): the kernel cannot
        change it, so every read returns its initial value."""
        for r in self.regions:
            if r.space == "const" and name.startswith(r.name):
                for i in range(r.n):
                    if r.element_name(i) == name:
                        return (r.init[i] if i < len(r.init) else 0) & ((1 << 8 * r.size) - 1), r.type
        return None

    def targets(self, addr, known: list, width: int, ins: Instruction) -> tuple[list, object | None]:
        """An address computed from loaded data (a value expression over read values): the
        elements it may name, each as (element, its address), and the condition "outside every
        buffer" when it may be out of bounds (else None). A sound over-approximation: every read
        may return any value of its width, constrained only by ``known`` (the path's conditions so
        far); an element outside it is one no execution can access. An address that may name part
        of an element is a located "not supported yet"."""
        import z3

        from ..engines.z3 import Values
        from ..ir.values import Const, mk

        vals = Values(lambda eid: reads.setdefault(eid, z3.BitVec(f"read{eid}", widths[eid])))
        reads: dict = {}
        widths = _read_widths(addr, known)
        s = z3.Solver()
        for c in known:
            s.add(vals.bool(c))
        a = vals.bv(addr)
        out: list = []
        outside = []
        for r in self.regions:
            lo, hi = z3.BitVecVal(r.base, 64), z3.BitVecVal(r.base + r.n * r.size, 64)
            inside = z3.And(z3.ULE(lo, a), z3.ULT(a, hi))
            if r.located and _allows(r, ins):
                outside.append(mk("lnot", mk("land", mk("uge", addr, Const(r.base, 64)),
                                             mk("ult", addr, Const(r.base + r.n * r.size, 64)))))
            if not r.located or not _allows(r, ins) or s.check(inside) != z3.sat:
                continue
            bad = z3.URem(a - lo, z3.BitVecVal(r.size, 64)) != 0
            if width != 8 * r.size or s.check(inside, bad) == z3.sat:
                raise UnsupportedError(
                    f"`{ins.text}` computes its address from loaded data, and it may access {width // 8} "
                    f"byte(s) at a byte of {r.name} that is not an element's start or of another size "
                    f"({r.size}-byte {r.type} elements)", ins.pos,
                    "mixed-size accesses are not modelled yet: access whole elements")
            out += self._enumerate(s, a, inside, r, ins)
        cond = outside[0] if outside else Const(1, 1)
        for c in outside[1:]:
            cond = mk("land", cond, c)
        oob = cond if s.check(*[vals.bool(c) for c in outside]) == z3.sat else None
        return out, oob

    def _enumerate(self, s, a, inside, r: Region, ins: Instruction) -> list:
        import z3

        found: list = []
        s.push()
        s.add(inside)
        while s.check() == z3.sat:
            v = s.model().eval(a, model_completion=True).as_long()
            found.append((r.element_name((v - r.base) // r.size), v))
            if len(found) > MAX_TARGETS:
                raise UnsupportedError(
                    f"`{ins.text}` computes its address from loaded data and may access more than "
                    f"{MAX_TARGETS} elements of {r.name}", ins.pos,
                    "bound the index before the access (e.g. `if (i < N)`), or use a smaller buffer")
            s.add(a != v)
        s.pop()
        return sorted(found, key=lambda x: x[1])


MAX_TARGETS = 64  # elements one access whose address is computed from loaded data may name


def _operand_widths(ins: Instruction, width: int) -> set[int]:
    """The widths (bits) an access of ``ins`` may have at one of its addresses. An mbarrier
    operation accesses its object, a 64-bit word, whatever register it writes (a wait's ``.pred``);
    a bulk copy, ``st.async`` or ``cp.async``'s operands are 32-bit words and a 64-bit mbarrier —
    which operand is which the event builder checks on the location it gets (a copy's word must be
    32-bit, its mbarrier a .shared .b64). Anything else: the width of its type."""
    if isinstance(ins, MBarrier):
        return {64}
    if isinstance(ins, (BulkCopy, AsyncStore, CpAsync, CpAsyncGroup, TensorCopy)):
        return {32, 64}
    return {width}


def _allows(r: Region, ins: Instruction) -> bool:
    """Whether ``ins`` may access an element of ``r``: ``__constant__`` data only by loads (the
    kernel cannot write it), and ``ld.const`` only constant data; a tensor map none (it is opaque)."""
    if r.tensormap is not None:
        return False
    if r.space == "const":
        return isinstance(ins, Load)
    return getattr(ins, "space", None) != "const"


def _read_widths(*exprs) -> dict[int, int]:
    from ..ir.values import ReadVal

    out: dict[int, int] = {}
    todo = list(exprs)
    while todo:
        e = todo.pop()
        if isinstance(e, list):
            todo += e
        elif isinstance(e, ReadVal):
            out[e.eid] = e.w
        elif hasattr(e, "args"):
            todo += list(e.args)
    return out


def _layout(module: Module, launch: Launch, widths: dict[str, set[int]] | None = None,
            fn: Function | None = None) -> Layout:
    """``widths``: the access widths (bytes) :func:`access_widths` found for each byte array;
    ``fn``: the kernel, whose by-value parameters the launch's tensor maps are."""
    regions: list[Region] = []
    g = s = 0
    for a in launch.buffers:
        regions.append(Region(a.name, a.name, "global", a.type, a.count, GLOBAL_BASE + g * SLOT, a.init))
        g += 1
    for k, (p, a) in enumerate(zip(fn.params if fn is not None else (), launch.args)):
        if isinstance(a, TensorMapArg):
            regions.append(Region(a.name, p.name, "param", "b64", None, PARAM_BASE + k * SLOT,
                                  tensormap=TensorMap(a.array, a.dims, a.box)))
    taken = {r.name for r in regions}
    c = 0
    dynamic = _dynamic_shared(module, launch)
    for v in module.variables:
        if v.space not in ("global", "shared", "const"):
            continue
        if v.dynamic:
            v = dynamic.get(v.name)
            if v is None:
                continue  # another kernel's (this one's is in `dynamic`)
        found = sorted(widths.get(v.name, ())) if widths is not None and v.byte_array else []
        if len(found) == 1 and not _STRINGS.match(v.name):
            v = v.as_width(found[0])
        name = demangle(v.name)
        if name in taken:
            name = v.name
        taken.add(name)
        located = not _STRINGS.match(v.name)
        if v.space == "global":
            base = GLOBAL_BASE + g * SLOT
            g += 1
        elif v.space == "const":
            base = CONST_BASE + c * SLOT
            c += 1
        else:
            base = SHARED_BASE + s * SLOT
            s += 1
        regions.append(Region(name, v.name, v.space, v.type, v.count, base, v.init, located,
                              tuple(found) if len(found) > 1 else ()))
    return Layout(tuple(regions))


def access_widths(body, names: set[str]) -> dict[str, set[int]]:
    """For each variable of ``names`` (nvcc's ``.b8`` arrays), the widths in bytes of the accesses
    whose address is derived from it: registers carry the variables whose addresses flow into them
    (``mov``, ALU operations, ``selp``, ``mapa``, ``cvta`` — every instruction that computes a
    register from others; a flow-insensitive closure), and an access through a register or a
    ``[name+off]`` records its width for each. A byte array with one width is an array of elements
    of that width (:meth:`Variable.as_width`); with several, or none found, it keeps the alignment's
    guess, and an access of another width than its elements' is a located "mixed-size" error
    (:meth:`Layout.element` checks every access, so this guess can change no answer)."""
    taint: dict[str, set[str]] = {}

    def of(o) -> set[str]:
        if isinstance(o, Addr):
            o = o.base
        if isinstance(o, Sym):
            return {o.name} if o.name in names else set()
        if isinstance(o, Reg):
            return taint.get(o.name, set())
        return set()

    computes = [i for i in body if isinstance(i, (Mov, Alu, Selp, Mapa)) and isinstance(i.dst, Reg)]
    changed = bool(names)
    while changed:
        changed = False
        for ins in computes:
            new = set().union(*(of(o) for o in operands(ins)))
            if not new <= taint.get(ins.dst.name, set()):
                taint.setdefault(ins.dst.name, set()).update(new)
                changed = True
    out: dict[str, set[int]] = {}
    for ins in body:
        for a, w in _accesses(ins):
            for n in of(a):
                out.setdefault(n, set()).add(w)
    return out


def _accesses(ins) -> list[tuple[Addr, int]]:
    """The memory operands of ``ins`` with the width (bytes) of each access through them."""
    from ..ir.program import memory_operands

    if isinstance(ins, MBarrier):
        return [(ins.addr, 8)]
    if isinstance(ins, (BulkCopy, AsyncStore, CpAsync)):  # words, then the mbarrier (if any)
        ops = memory_operands(ins)
        has_mbar = getattr(ins, "mbar", None) is not None
        return [(a, 8 if has_mbar and k == len(ops) - 1 else 4) for k, a in enumerate(ops)]
    if isinstance(ins, CpAsyncGroup):
        return [(a, 8) for a in memory_operands(ins)]
    if isinstance(ins, TensorCopy):  # the box's words in shared memory, the mbarrier (the map: opaque)
        return [(ins.smem, 4)] + ([(ins.mbar, 8)] if ins.mbar is not None else [])
    ty = getattr(ins, "type", None)
    if not isinstance(ty, str) or not ty[1:].isdigit():
        return []
    return [(a, type_width(ty) // 8) for a in memory_operands(ins)]


def _dynamic_shared(module: Module, launch: Launch) -> dict[str, Variable]:
    """The ``extern __shared__`` arrays of the module, sized by the launch's ``T name[N]`` in
    ``<<< >>>`` (a located error when the launch gives none, or one the module does not declare)."""
    from dataclasses import replace

    from .launch import C_TYPES

    externs = [v for v in module.variables if v.dynamic]
    out: dict[str, Variable] = {}
    for b in launch.shared:
        hits = [v for v in externs if demangle(v.name) == b.name or v.name == b.name]
        if not hits:
            raise SemanticError(f"the launch gives dynamic shared memory {b.name}, but the module declares "
                                "no extern __shared__ array of that name", b.pos,
                                "extern __shared__ arrays: " + (", ".join(demangle(v.name) for v in externs)
                                                                or "none"))
        ty = C_TYPES[b.ctype]
        for v in hits:
            out[v.name] = replace(v, type=_loc_type(ty), count=b.count, dynamic=False)
    return out


def _locations(layout: Layout) -> tuple[Location, ...]:
    out = []
    for r in layout.regions:
        if r.tensormap is not None:  # the map's one location: its global address (events.init_value)
            out.append(Location(r.name, "global", "b64", 0, tensormap=r.tensormap))
            continue
        if not r.located or r.space == "const":  # constants: no locations (Layout.constant)
            continue
        w = type_width(r.type)
        for i in range(r.n):
            v = r.init[i] if i < len(r.init) else 0
            out.append(Location(r.element_name(i), r.space, _loc_type(r.type), v & ((1 << w) - 1)))
    return tuple(out)


def _loc_type(t: str) -> str:
    return "b" + t[1:] if t.startswith("f") else t


# ----- special registers -------------------------------------------------------------------------

def _dims(d: tuple[int, int, int], i: int) -> tuple[int, int, int]:
    return (i % d[0], i // d[0] % d[1], i // (d[0] * d[1]))


def special_registers(launch: Launch, cta: int, tid: int) -> dict[str, int]:
    """The values of the special registers for thread ``tid`` (linear) of CTA ``cta``."""
    grid, block = launch.grid, launch.block
    cl = launch.cluster or (1, 1, 1)
    c, t = _dims(grid, cta), _dims(block, tid)
    clid = tuple(c[k] // cl[k] for k in range(3))
    nclu = tuple(grid[k] // cl[k] for k in range(3))
    cc = tuple(c[k] % cl[k] for k in range(3))
    lane = tid % 32
    out = {"%laneid": lane, "%cluster_ctarank": cc[0] + cl[0] * (cc[1] + cl[1] * cc[2]),
           "%cluster_nctarank": cl[0] * cl[1] * cl[2],
           "%is_explicit_cluster": int(launch.cluster is not None),
           "%lanemask_eq": 1 << lane, "%lanemask_lt": (1 << lane) - 1, "%lanemask_le": (2 << lane) - 1,
           "%lanemask_gt": 0xFFFFFFFF & ~((2 << lane) - 1), "%lanemask_ge": 0xFFFFFFFF & ~((1 << lane) - 1)}
    for k, x in enumerate("xyz"):
        out |= {f"%tid.{x}": t[k], f"%ntid.{x}": block[k], f"%ctaid.{x}": c[k], f"%nctaid.{x}": grid[k],
                f"%clusterid.{x}": clid[k], f"%nclusterid.{x}": nclu[k], f"%cluster_ctaid.{x}": cc[k],
                f"%cluster_nctaid.{x}": cl[k]}
    return out


# ----- instantiation -----------------------------------------------------------------------------

@record
class KernelInfo:
    """What a kernel Program keeps of its origin (``Program.meta["kernel"]``)."""

    kernel: str  # the PTX name
    source: str  # the demangled name
    launch: Launch
    layout: Layout
    source_file: str | None = None  # the .cu
    expect: tuple[str, ...] | None = None  # `// ptxmm: expect ...` finding kinds (sorted)
    expect_pos: SourcePos | None = None
    notes: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict, compare=False)  # CUDA file → its lines


def find_kernel(module: Module, name: str, pos: SourcePos | None) -> Function:
    entries = module.entries
    for f in entries:
        if f.name == name:
            return f
    hits = [f for f in entries if demangle(f.name) == name or demangle(f.name).split("::")[-1] == name]
    if len(hits) == 1:
        return hits[0]
    listed = ", ".join(f"{demangle(f.name)} ({f.name})" for f in entries) or "none"
    if len(hits) > 1:
        raise SemanticError(f"kernel {name} is overloaded: " + ", ".join(f.name for f in hits), pos,
                            "name it by its PTX name")
    raise SemanticError(f"no kernel named {name} in {module.file}", pos, f"kernels: {listed}")


def instantiate(module: Module, launch: Launch, condition: Condition | None = None,
                file: str | None = None, source_file: str | None = None,
                expect: tuple[str, ...] | None = None, expect_pos: SourcePos | None = None) -> Program:
    """The Program of ``launch`` of a kernel of ``module``."""
    fn = find_kernel(module, launch.kernel, launch.pos)
    layout = _layout(module, launch, fn=fn)
    values = _param_values(fn, launch, layout)
    notes: list[str] = []
    ex = _Expander(module, layout, values, notes)
    body = ex.expand(fn)
    # the byte arrays' element widths from the accesses (the buffers' addresses do not change)
    layout = _layout(module, launch, access_widths(body, {v.name for v in module.variables if v.byte_array}),
                     fn)
    declared = ex.declared
    specials = _specials_used(body, declared)
    threads = []
    cta_n = launch.grid[0] * launch.grid[1] * launch.grid[2]
    tid_n = launch.block[0] * launch.block[1] * launch.block[2]
    reg_types = tuple(sorted((declared | {s: "u32" for s in specials}).items()))
    for cta in range(cta_n):
        cluster = None
        if launch.cluster is not None:
            c = _dims(launch.grid, cta)
            cl = launch.cluster
            nclu = tuple(launch.grid[k] // cl[k] for k in range(3))
            cid = tuple(c[k] // cl[k] for k in range(3))
            cluster = cid[0] + nclu[0] * (cid[1] + nclu[1] * cid[2])
        for tid in range(tid_n):
            sregs = special_registers(launch, cta, tid)
            init = tuple((s, sregs[s]) for s in specials)
            threads.append(Thread(f"b{cta}t{tid}", len(threads), Placement(0, cluster, cta), body,
                                  init_regs=init, pos=fn.pos, reg_types=reg_types))
    info = KernelInfo(fn.name, demangle(fn.name), launch, layout, source_file, expect, expect_pos,
                      tuple(notes))
    prog = Program(name=demangle(fn.name), threads=tuple(threads), locations=_locations(layout),
                   condition=condition, description=str(launch), file=file or module.file,
                   format="kernel", meta={"layout": layout, "kernel": info},
                   warnings=tuple(Diagnostic(n, launch.pos) for n in notes))
    if condition is not None:
        _check_condition(prog, condition)
    return prog


def _param_values(fn: Function, launch: Launch, layout: Layout) -> dict[str, int]:
    """Each scalar and pointer parameter's value (a buffer's base address, the scalar); a tensor map
    parameter has none (the kernel takes its address: Layout.symbols), an aggregate passed by
    value that is not one is a located "not supported yet"."""
    if len(launch.args) != len(fn.params):
        raise SemanticError(f"kernel {demangle(fn.name)} takes {len(fn.params)} argument(s), the launch "
                            f"gives {len(launch.args)}", launch.pos,
                            "parameters: " + ", ".join(f".{p.type} {p.name}" for p in fn.params))
    bases = {r.name: r.base for r in layout.regions}
    out = {}
    codes = param_types(fn.name)
    for k, (p, a) in enumerate(zip(fn.params, launch.args)):
        code = codes[k] if codes is not None and len(codes) == len(fn.params) else None
        if _by_value(p, a, code, k):
            continue
        w = type_width(p.type) if p.type[1:].isdigit() else 64
        if isinstance(a, Buffer) and code is not None:
            _buffer_type(a, code, k)
        if isinstance(a, Buffer):
            if w != 64:
                raise SemanticError(f"argument {k + 1} ({a.name}) is a buffer, but parameter {p.name} is a "
                                    f"{w}-bit .{p.type} value, not a pointer", a.pos,
                                    "pass an integer literal for a scalar parameter")
            out[p.name] = bases[a.name]
        else:
            assert isinstance(a, Scalar)
            if w == 64 and p.type.startswith("u") and a.value < 0:
                raise SemanticError(f"argument {k + 1} is {a.value}, parameter {p.name} is unsigned",
                                    a.pos, None)
            if not -(1 << (w - 1)) <= a.value < (1 << w):
                raise SemanticError(f"argument {k + 1} ({a.value}) does not fit parameter {p.name} "
                                    f"(.{p.type})", a.pos, None)
            out[p.name] = a.value & ((1 << w) - 1)
    return out


TENSORMAP_CODE = "NCUtensorMap_st"  # how `CUtensorMap` (typedef of struct CUtensorMap_st) mangles


def _by_value(p, a, code: str | None, k: int) -> bool:
    """Whether parameter ``p`` is a tensor map given by ``a`` (checked): nvcc declares a
    ``const __grid_constant__ CUtensorMap`` parameter ``.param .align 64|128 .b8 name[128]``. Any
    other aggregate by value, or a tensor map for another parameter, is a located error."""
    is_map = p.size == TENSORMAP_BYTES and code in (None, TENSORMAP_CODE)
    if isinstance(a, TensorMapArg):
        if not is_map:
            what = f"a {p.size}-byte aggregate" if p.size else f"a .{p.type} value"
            raise SemanticError(f"argument {k + 1} is the tensor map {a.name}, but parameter {p.name} is "
                                f"{what}, not a CUtensorMap", a.pos,
                                "the kernel takes it as `const __grid_constant__ CUtensorMap tm`")
        return True
    if p.size is not None:
        raise UnsupportedError(f"parameter {p.name}: {'a CUtensorMap' if is_map else 'a struct or array'} "
                               f"passed by value ({p.size} bytes), and argument {k + 1} is not a tensor map",
                               p.pos, "give a CUtensorMap parameter as `CUtensorMap tm = tensormap(a, dims "
                               "{8, 2}, box {4, 2})` in the launch; other aggregates: pass a pointer")
    return False


def _buffer_type(a: Buffer, code: str, k: int) -> None:
    """A buffer for a pointer parameter of its own element type (``int x[N]`` for ``int *``)."""
    shown = code[1:] if code.startswith("N") else _BUILTIN.get(code.lstrip("PKV"), "?")
    if not code.startswith("P"):
        raise SemanticError(f"argument {k + 1} ({a.ctype} {a.name}[{a.count}]) is a buffer, parameter "
                            f"{k + 1} is of type {shown}, not a pointer", a.pos, "pass an integer literal")
    pointee = _pointee(code)
    if pointee is not None and pointee != "v" and C_CODE.get(a.ctype) != pointee:
        raise SemanticError(f"argument {k + 1} is a buffer of {a.ctype}, parameter {k + 1} is of type "
                            f"{_BUILTIN[pointee]} *", a.pos, f"declare it `{_BUILTIN[pointee]} {a.name}[N]`")


_SPECIAL = re.compile(r"^%(tid|ntid|ctaid|nctaid|clusterid|nclusterid|cluster_ctaid|cluster_nctaid)\.[xyz]$"
                      r"|^%(laneid|cluster_ctarank|cluster_nctarank|is_explicit_cluster|"
                      r"lanemask_(eq|lt|le|gt|ge))$")


def _specials_used(body: tuple, declared: dict[str, str]) -> list[str]:
    """The special registers the body reads (each known one gets its value; any other register
    the function does not declare is a located error, never a silent 0)."""
    out: list[str] = []
    for ins in body:
        regs = [o.base if isinstance(o, Addr) else o for o in operands(ins)]
        if ins.guard is not None:
            regs.append(ins.guard[0])
        for r in regs:
            if not isinstance(r, Reg) or r.name.startswith("%ptxmm.") or r.name in declared \
                    or r.name in out:
                continue
            if _SPECIAL.match(r.name):
                out.append(r.name)
                continue
            raise UnsupportedError(f"register {r.name} in `{ins.text}`", ins.pos,
                                   "special registers modelled: %tid %ntid %ctaid %nctaid %laneid "
                                   "%clusterid %nclusterid %cluster_ctaid %cluster_nctaid "
                                   "%cluster_ctarank %cluster_nctarank %lanemask_*; %warpid, %nwarpid, "
                                   "clocks, %smid and timers are not (their values are the hardware's, "
                                   "and %warpid may change as the thread runs): compute %tid.x / 32")
    return out


class _Expander:
    """A function body with its calls expanded: ``__assertfail`` → the thread stops with
    ``%ptxmm.assert`` = the call's PTX line; ``vprintf`` → dropped (with a note); a ``.func`` of
    the module → inlined (registers and labels renamed per call); parameters → their values."""

    def __init__(self, module: Module, layout: Layout, values: dict[str, int], notes: list[str]):
        self.m, self.layout, self.values, self.notes = module, layout, values, notes
        self.calls = 0
        self.symbols = layout.symbols
        self.declared: dict[str, str] = {}  # every declared register (an inlined body's renamed) → type

    def expand(self, fn: Function) -> tuple[Instruction, ...]:
        out = self.body(fn, {}, None, depth=0)
        return tuple(thread_jumps(out))

    def body(self, fn: Function, params: dict[str, Reg], frame: str | None, depth: int) -> list:
        """``params``: (inlined function) parameter name → the caller's register holding it;
        ``frame``: the suffix of an inlined body's registers and labels."""
        out: list = []
        pending: dict[str, object] = {}
        self.declared |= {f"{r}{frame or ''}": ty for r, ty in fn.reg_types().items()}
        bound = dict(params)  # parameter and return-value names → the registers holding them
        for ins in fn.body:
            if isinstance(ins, ParamStore):
                if frame is not None and ins.name in {r.name for r in fn.rets}:
                    out.append(Mov(dst=Reg(f"%ptxmm.ret{frame}.{ins.name}"), src=self.rename(ins.src, frame),
                                   type=ins.type, pos=ins.pos, text=ins.text))
                else:
                    pending[ins.name] = (ins, self.rename(ins.src, frame))
                continue
            if isinstance(ins, Call):
                out += self.call(ins, pending, frame, depth, bound)
                pending = {}
                continue
            if isinstance(ins, Ret) and frame is not None:
                out.append(Branch(target=f"$ptxmm.end{frame}", pos=ins.pos, text=ins.text,
                                  guard=self.rg(ins, frame)))
                continue
            out.append(self.instr(ins, fn, bound, frame))
        return out

    def rg(self, ins, frame):
        if ins.guard is None or frame is None:
            return ins.guard
        return (self.rreg(ins.guard[0], frame), ins.guard[1])

    def rreg(self, r: Reg, frame: str | None) -> Reg:
        if frame is None or _SPECIAL.match(r.name):
            return r
        return Reg(f"{r.name}{frame}")

    def rename(self, o, frame: str | None):
        if isinstance(o, Reg):
            return self.rreg(o, frame)
        if isinstance(o, Addr) and isinstance(o.base, Reg):
            return Addr(self.rreg(o.base, frame), o.offset)
        return o

    def instr(self, ins: Instruction, fn: Function, params: dict[str, Reg], frame: str | None) -> Instruction:
        from dataclasses import replace

        if isinstance(ins, Load) and ins.proxy != "generic":
            raise UnsupportedError(f"`{ins.text}` (the {ins.proxy} proxy in a kernel)", ins.pos,
                                   "__constant__ and texture data are not modelled yet")
        if isinstance(ins, TensorMapReplace):
            raise UnsupportedError(f"`{ins.text}` in a kernel (a tensor map the kernel modifies)", ins.pos,
                                   "kernels take tensor maps as `const __grid_constant__ CUtensorMap` "
                                   "parameters; write a map updated on the device as a .ptx litmus test")
        self.check_symbols(ins)
        ch = self.renamed(ins, frame) if frame is not None else {}
        if isinstance(ins, Mov) and isinstance(ins.src, Sym) and ins.src.name.startswith(PARAM):
            ch["src"] = self.param(ins, ins.src.name[len(PARAM):], fn, params, frame)
        return replace(ins, **ch) if ch else ins

    def param(self, ins: Mov, p: str, fn: Function, params: dict[str, Reg], frame: str | None):
        """The value ``ld.param [p]`` reads: the caller's register (an inlined function's parameter,
        a call's return value), or the launch's argument."""
        if p in params:
            return params[p]
        if frame is None and p in self.values:
            return Imm(self.values[p])
        if frame is None and p in self.symbols:  # a tensor map parameter's bytes
            raise UnsupportedError(f"`{ins.text}` reads the bytes of a tensor map parameter", ins.pos,
                                   "a CUtensorMap is an opaque object: pass its address (&tm) to "
                                   "cp.async.bulk.tensor")
        raise SemanticError(f"`{ins.text}` reads {p}, which is not a parameter of "
                            f"{'the kernel' if frame is None else fn.name}", ins.pos, None)

    def check_symbols(self, ins: Instruction) -> None:
        for o in operands(ins):
            s = o.base if isinstance(o, Addr) else o
            if isinstance(s, Sym) and not s.name.startswith(PARAM):
                self.symbol(s, ins)

    def renamed(self, ins: Instruction, frame: str) -> dict:
        """An inlined instruction's registers and labels, suffixed with its call's frame."""
        from dataclasses import fields

        ch: dict = {"guard": self.rg(ins, frame)}
        for f in fields(ins):
            v = getattr(ins, f.name)
            if f.name in ("pos", "text", "guard"):
                continue
            if isinstance(v, (Reg, Addr)):
                ch[f.name] = self.rename(v, frame)
            elif isinstance(v, tuple) and f.name in ("srcs", "ids"):
                ch[f.name] = tuple(self.rename(o, frame) for o in v)
        if isinstance(ins, Label):
            ch["name"] = f"{ins.name}{frame}"
        if isinstance(ins, Branch):
            ch["target"] = f"{ins.target}{frame}"
        return ch

    def symbol(self, s: Sym, ins: Instruction) -> None:
        if any(v.dynamic and v.name == s.name for v in self.m.variables) and s.name not in self.symbols:
            name = demangle(s.name)
            raise SemanticError(f"`{ins.text}` uses the dynamic shared array {name}, and the launch does "
                                "not give its size", ins.pos,
                                f"give it as the last item of <<< >>>: <<<GRID, BLOCK, int {name}[N]>>>")
        if s.name not in self.symbols and s.name != "_":
            raise UnsupportedError(f"`{ins.text}` names {s.name}, which is not a .global or .shared "
                                   "variable", ins.pos,
                                   ".const, .local and function addresses are not modelled yet")

    def call(self, c: Call, pending: dict, frame: str | None, depth: int, bound: dict) -> list:
        g = self.rg(c, frame)
        if c.callee == "__assertfail":
            line = c.pos.line if c.pos is not None else 0
            return [Mov(dst=Reg(ASSERT_REG), src=Imm(line), type="u32", pos=c.pos, text=c.text, guard=g),
                    Ret(pos=c.pos, text=c.text, guard=g)]
        if c.callee == "vprintf":
            note = "printf is ignored: ptxmm models memory, not output"
            if note not in self.notes:
                self.notes.append(note)
            return []
        callee = self.callee(c, g, depth)
        self.calls += 1
        sub = f".c{self.calls}"
        out: list = []
        params: dict[str, Reg] = {}
        for name, p in zip(c.args, callee.params):
            if name not in pending:
                raise SemanticError(f"argument {name} of `{c.text}` is never stored (st.param)", c.pos, None)
            ps, src = pending[name]
            r = Reg(f"%ptxmm.arg{sub}.{p.name}")
            out.append(Mov(dst=r, src=src, type=ps.type, pos=ps.pos, text=ps.text))
            params[p.name] = r
        if g is not None:  # `@p call f` runs f's body only when p holds
            out.append(Branch(target=f"$ptxmm.skip{sub}", guard=(g[0], not g[1]), pos=c.pos, text=c.text))
        out += self.body(callee, params, sub, depth + 1)
        out.append(Label(name=f"$ptxmm.end{sub}", pos=c.pos, text=f"$ptxmm.end{sub}:"))
        if g is not None:
            out.append(Label(name=f"$ptxmm.skip{sub}", pos=c.pos, text=f"$ptxmm.skip{sub}:"))
        for caller_name, r in zip(c.rets, callee.rets):  # read by the caller's ld.param [retval0]
            bound[caller_name] = Reg(f"%ptxmm.ret{sub}.{r.name}")
        return out


    def callee(self, c: Call, g, depth: int) -> Function:
        """The module's .func a call inlines (located errors for what cannot be inlined)."""
        callee = self.m.functions.get(c.callee)
        if callee is None or callee.entry:
            raise UnsupportedError(f"a call of {c.callee}", c.pos,
                                   "calls of the module's own .func functions, assert and printf are "
                                   "modelled; other external functions are not")
        if depth > 8:
            raise UnsupportedError(f"calls nested deeper than 8 ({c.callee})", c.pos,
                                   "recursion is not modelled")
        if len(c.args) != len(callee.params) or len(c.rets) != len(callee.rets):
            raise SemanticError(f"`{c.text}` passes {len(c.args)} argument(s) to {c.callee}, which takes "
                                f"{len(callee.params)}", c.pos, None)
        if g is not None and c.rets:
            raise UnsupportedError(f"a predicated call with a return value `{c.text}`", c.pos,
                                   "the value read back is undefined when the call does not run: "
                                   "branch around the call instead")
        return callee


def thread_jumps(body: list) -> list:
    """nvcc's spin loop ``L: ...; @p bra X; bra.uni L; X:`` as ``L: ...; @!p bra L; X:`` — the same
    control flow (p: on to X, the next instruction; else back to L) with the loop's exit test on its
    backward branch, the shape the event builder reduces to an await where that is sound."""
    out = list(body)
    i = 0
    while i + 2 < len(out):
        a, b, c = out[i], out[i + 1], out[i + 2]
        if isinstance(a, Branch) and a.guard is not None and isinstance(b, Branch) and b.guard is None \
                and isinstance(c, Label) and c.name == a.target and b.target != a.target \
                and any(isinstance(x, Label) and x.name == b.target for x in out[:i]):
            out[i:i + 2] = [Branch(target=b.target, guard=(a.guard[0], not a.guard[1]), pos=b.pos,
                                   text=f"{a.text}; {b.text}")]
        i += 1
    return out


def _check_condition(prog: Program, cond: Condition) -> None:
    from ..ir.program import cond_refs

    names = {loc.name for loc in prog.locations}
    for r in cond_refs(cond.expr):
        if isinstance(r, MemRef) and r.loc not in names:
            shown = ", ".join(sorted(names)[:12])
            raise SemanticError(f"the condition names {r.loc}, which is no buffer element", None,
                                f"elements: {shown}")
        if isinstance(r, MemRef) and prog.location(r.loc).tensormap is not None:
            raise SemanticError(f"the condition names the tensor map {r.loc}", None,
                                "a tensor map is opaque: name buffer elements")
        if isinstance(r, MemRef) and prog.location(r.loc).space != "global":
            raise SemanticError(f"the condition names {r.loc}, a .shared element (one copy per CTA)", None,
                                "name global buffer elements")


# ----- what a check of a kernel observes and finds --------------------------------------------------

def observables(eg, scope: str = "all") -> list:
    """A kernel's outcome: the final value of every global buffer element some thread writes (in
    the layout's order), and whatever the condition names."""
    from ..semantics.outcomes import Observable
    from ..semantics.outcomes import observables as cond_observables

    out = []
    if scope == "all":
        written = {e.loc for e in eg.events if e.thread >= 0 and e.kind == "W"}
        for loc in eg.program.locations:
            if loc.space == "global" and loc.name in written:
                out.append(Observable(loc.name, MemRef(loc.name), loc.type, loc=loc.name))
    keys = {o.key for o in out}
    return out + [o for o in cond_observables(eg, "condition") if o.key not in keys]


_SITES = (("assert-fails", ASSERT_REG), ("out-of-bounds", OOB_REG))


def site_findings(eg, pb, outcome_of=None) -> tuple:
    """Assertion failures and out-of-bounds accesses: for every site (a PTX line where some path
    of some thread stops), one query on the check's own problem ``pb`` for an allowed execution in
    which a thread takes a path that stops there.
    (Hangs, ``FindingKind.HANG``, are the liveness checker's: its findings join these in
    ``checker.run``, and ``ptxmm test`` compares every kind with a kernel's `expect` line.)"""
    from ..ir.values import Const
    from ..semantics.result import EventRef, Finding, FindingKind

    sites: dict[tuple[str, int], dict[int, set[int]]] = {}
    for t, paths in enumerate(eg.paths):
        for kind, reg in _SITES:
            for k, p in enumerate(paths):
                v = p.regs.get(reg)
                if isinstance(v, Const):
                    sites.setdefault((kind, v.v), {}).setdefault(t, set()).add(k)
    found = []
    for (kind, line), where in sorted(sites.items()):
        wit = pb.find(pb.on_paths(where))
        if wit is None:
            continue
        who = [eg.program.threads[t].name for t, ks in sorted(where.items()) if wit.paths[t] in ks]
        ins = _site_instr(eg.program, line)
        found.append(Finding(FindingKind(kind), kind,
                             tuple(EventRef(-1, n, line, _site_text(eg.program, ins)) for n in who[:1]),
                             wit, outcome_of(wit) if outcome_of else None))
    return tuple(found)


def _site_instr(prog: Program, line: int):
    for ins in prog.threads[0].instrs:
        if ins.pos is not None and ins.pos.line == line and not isinstance(ins, (Label, Mov)):
            return ins
    return next((i for i in prog.threads[0].instrs if i.pos is not None and i.pos.line == line), None)


def _site_text(prog: Program, ins) -> str:
    if ins is None:
        return "?"
    return source_text(prog, ins.pos) or ins.text


def source_text(prog: Program, pos) -> str | None:
    """``mp.cu:13 assert(data[0] == 42);`` — the CUDA line of a kernel instruction, with its text
    when the source file is at hand."""
    src = getattr(pos, "src", None)
    if src is None:
        return None
    where = f"{Path(src.file).name}:{src.line}"
    info = prog.meta.get("kernel")
    cand = [Path(src.file)]
    if info is not None and info.source_file:
        cand.insert(0, Path(info.source_file))
    for f in cand:
        try:
            if f.name != Path(src.file).name:
                continue
            lines = f.read_text().splitlines()
            if 0 < src.line <= len(lines):
                return f"{where} {lines[src.line - 1].strip()}"
        except OSError:
            continue
    return where


# ----- conditions over buffer elements -------------------------------------------------------------

def parse_condition(quant: str, text: str, pos: SourcePos | None = None) -> Condition:
    """``out[0] == 1 && x[1] != 2`` under ``quant`` (exists, forall, ~exists, not exists): the
    ``.ptx`` grammar's condition (``&&`` ``||`` ``!``, parentheses, herd's ``/\\`` ``\\/`` ``~``)
    over buffer elements."""
    from ..ir.program import RegRef, cond_refs
    from ..syntax import ptx

    q = {"exists": "exists", "forall": "forall", "~exists": "~exists", "not exists": "~exists"}[quant]
    cond = ptx.condition(q, text, pos)
    reg = next((r for r in cond_refs(cond.expr) if isinstance(r, RegRef)), None)
    if reg is not None:
        raise ParseError(f"a kernel's condition names buffer elements, not registers "
                         f"({reg.thread}:{reg.reg})", pos, "e.g. out[0] == 1")
    return cond


__all__ = ["ASSERT_REG", "KernelInfo", "KernelPos", "Layout", "OOB_REG", "Variable", "demangle",
           "find_kernel", "instantiate", "parse_condition", "parse_launch", "special_registers",
           "Alu", "Selp", "Setp"]
