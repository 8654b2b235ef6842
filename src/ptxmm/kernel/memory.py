"""A launch's memory: where its buffers, tensor maps and the module's variables lie
(:func:`layout_of`; a function's ``.local`` arrays too — PTX ISA 5.1.5, "the local state space
(.local) is private memory for each thread": the same addresses in every thread, each thread's own
locations), the widths a byte array's accesses give its elements (:func:`access_widths`),
the ``extern __shared__`` arrays the launch sizes, and the model's locations (one per element)."""

from __future__ import annotations

import re

from ..errors import SemanticError
from ..ir.layout import (
    CONST_BASE,
    GLOBAL_BASE,
    LOCAL_BASE,
    PARAM_BASE,
    SHARED_BASE,
    SLOT,
    AddressOracle,
    Layout,
    Region,
)
from ..ir.program import (
    Addr,
    Alu,
    AsyncStore,
    BulkCopy,
    CpAsync,
    CpAsyncGroup,
    Location,
    Mapa,
    MBarrier,
    Mov,
    Reg,
    Selp,
    Sym,
    TensorCopy,
    TensorMap,
    operands,
    type_width,
)
from .demangle import demangle
from .launch import Launch, TensorMapArg
from .module import Function, Module, Variable
from .multigpu import region_names

# nvcc's string constants (assert messages, printf formats): addresses, no locations
_STRINGS = re.compile(r"^(\$str|__unnamed_)")


def layout_of(module: Module, launch: Launch, widths: dict[str, set[int]] | None = None,
              fn: Function | None = None, oracle: AddressOracle | None = None) -> Layout:
    """``widths``: the access widths (bytes) :func:`access_widths` found for each byte array;
    ``fn``: the kernel, whose by-value parameters the launch's tensor maps are; ``oracle``: what
    the layout asks about addresses computed from loaded data (:meth:`Layout.targets`)."""
    regions: list[Region] = []
    g = s = 0
    for a in launch.buffers:
        for name in region_names(a, launch.gpus):  # a `per gpu` buffer: one copy per GPU
            regions.append(Region(name, name, "global", a.type, a.count, GLOBAL_BASE + g * SLOT, a.init))
            g += 1
    for k, (p, a) in enumerate(zip(fn.params if fn is not None else (), launch.args)):
        if isinstance(a, TensorMapArg):
            regions.append(Region(a.name, p.name, "param", "b64", None, PARAM_BASE + k * SLOT,
                                  tensormap=TensorMap(a.array, a.dims, a.box)))
    taken = {r.name for r in regions}
    c = loc = 0
    dynamic = _dynamic_shared(module, launch)
    aliases: list[Variable] = []
    for v in module.variables:
        if v.space not in ("global", "shared", "const", "local"):
            continue
        if v.dynamic:
            if v.name not in dynamic:
                aliases.append(v)  # another extern __shared__ array: the same dynamic region
                continue
            v = dynamic[v.name]
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
        elif v.space == "local":  # one copy per thread (the event builder's place())
            base = LOCAL_BASE + loc * SLOT
            loc += 1
        else:
            base = SHARED_BASE + s * SLOT
            s += 1
        regions.append(Region(name, v.name, v.space, v.type, v.count, base, v.init, located,
                              tuple(found) if len(found) > 1 else ()))
    return Layout(tuple(regions + _aliases(aliases, regions, dynamic)), oracle)


def _aliases(externs: list[Variable], regions: list[Region], dynamic: dict[str, Variable]) -> list[Region]:
    """Every ``extern __shared__`` array the launch does not name starts where the one it names
    does: CUDA gives a kernel one block of dynamic shared memory, and all its extern __shared__
    arrays begin at its start (CUDA C++ Programming Guide, "__shared__": "all variables declared
    in this fashion start at the same address in memory"). Each is that region's address under its
    own name, with no elements of its own: an access through it names the launch's array's
    elements (of the launch's type; another width is the layout's located mixed-size error)."""
    if not dynamic:
        return []
    real = next(r for r in regions if r.ptx in dynamic)
    return [Region(v.name, v.name, "shared", real.type, 0, real.base, (), False) for v in externs]


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
            out[v.name] = replace(v, type=loc_type(ty), count=b.count, dynamic=False)
    return out


def locations(layout: Layout) -> tuple[Location, ...]:
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
            out.append(Location(r.element_name(i), r.space, loc_type(r.type), v & ((1 << w) - 1)))
    return tuple(out)


def loc_type(t: str) -> str:
    return "b" + t[1:] if t.startswith("f") else t



__all__ = ["access_widths", "layout_of", "loc_type", "locations"]
