"""A kernel's memory layout: where every buffer lies (:class:`Region`) and what an address names
(:class:`Layout`) — an element, a tensor map, ``__constant__`` data, or nothing (out of bounds).
An address computed from loaded data is resolved by the address oracle the layout was given: what
it asks about an address under a path's conditions (:class:`AddressQuery`), answered by whoever
instantiates the kernel (an engine's: :class:`ptxmm.engines.addresses.Z3Addresses`); nothing here
solves."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Protocol

from .._infra.records import record
from ..errors import SemanticError, UnsupportedError
from .instructions import (
    TENSORMAP_BYTES,
    AsyncStore,
    BulkCopy,
    CpAsync,
    CpAsyncGroup,
    Instruction,
    Load,
    Mapa,
    MBarrier,
    TensorCopy,
    TensorMap,
    type_width,
)
from .values import Expr

GLOBAL_BASE = 0x1000_0000
SHARED_BASE = 0x0100_0000
CONST_BASE = 0x0800_0000
PARAM_BASE = 0x0400_0000  # the tensor maps the launch passes by value (`__grid_constant__ CUtensorMap`)
SLOT = 0x10_0000  # each buffer's address range; the gap catches small out-of-bounds offsets
LOCAL_BASE = 0x0C00_0000  # .local arrays: the same addresses in every thread, each its own copy
# `mapa` addresses: the copy in the CTA of rank k of the shared byte at SHARED_BASE + o is at
# MAPA_BASE + k * SHARED_SPAN + o (32-bit, as a .shared::cluster address must be; above every
# global buffer's range)
SHARED_SPAN = 0x0100_0000
MAPA_BASE = 0x2000_0000
MAX_CLUSTER = 16


MAX_TARGETS = 64  # elements one access whose address is computed from loaded data may name


class AddressQuery(Protocol):
    """Questions about one address expression under a path's conditions (``known``)."""

    def possible(self, *conds: Expr) -> bool:
        """Whether some values of the reads satisfy ``known`` and every 1-bit ``conds``."""
        ...

    def values(self, cond: Expr, limit: int) -> list[int] | None:
        """Every value the address takes where ``known`` and ``cond`` hold; None when more than
        ``limit``."""
        ...


# the oracle: (address, known) → its query
AddressOracle = Callable[[Expr, Sequence[Expr]], AddressQuery]

__all__ = ["MAX_TARGETS", "AddressOracle", "AddressQuery"]


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
    # answers the questions of :meth:`targets` (an engine's: ptxmm.engines.addresses); None: a
    # layout that cannot resolve addresses computed from loaded data
    oracle: AddressOracle | None = field(default=None, compare=False)

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
                if not r.located or not allows(r, ins):
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

    def remote(self, addr: int, rank: int, ins: Instruction) -> int:
        """``mapa``: the address of the byte at ``addr`` (in a ``.shared`` variable) in the copy
        of the CTA of ``rank`` (:data:`MAPA_BASE`); anything else a located error."""
        if MAPA_BASE <= addr < MAPA_BASE + MAX_CLUSTER * SHARED_SPAN:
            raise UnsupportedError(f"`{ins.text}` maps an address mapa already mapped", ins.pos,
                                   "map the CTA's own shared address")
        r = next((r for r in self.regions if r.base <= addr < r.base + r.n * r.size), None)
        if r is None or r.space != "shared":
            what = f"an address of {r.name} (.{r.space})" if r is not None else f"address {addr:#x}"
            raise SemanticError(f"`{ins.text}` maps {what}: mapa maps .shared variables", ins.pos,
                                "pass the address of a __shared__ variable")
        return MAPA_BASE + rank * SHARED_SPAN + (addr - SHARED_BASE)

    @staticmethod
    def unmapped(addr: int) -> tuple[int, int | None]:
        """A ``mapa`` address as (the CTA's own address, the rank it names); another address as
        (itself, None)."""
        if MAPA_BASE <= addr < MAPA_BASE + MAX_CLUSTER * SHARED_SPAN:
            rank, off = divmod(addr - MAPA_BASE, SHARED_SPAN)
            return SHARED_BASE + off, rank
        return addr, None

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
        of an element is a located "not supported yet". The layout's oracle answers whether an
        address may satisfy a condition and which values it may take."""
        from ..ir.values import Const, mk

        if self.oracle is None:
            raise UnsupportedError(f"`{ins.text}` computes its address from loaded data, and the kernel was "
                                   "loaded without an address oracle", ins.pos,
                                   "load kernels through ptxmm.loading, which gives the engines' oracle")
        q = self.oracle(addr, known)
        out: list = []
        outside = []
        for r in self.regions:
            inside = mk("land", mk("uge", addr, Const(r.base, 64)),
                        mk("ult", addr, Const(r.base + r.n * r.size, 64)))
            if r.located and allows(r, ins):
                outside.append(mk("lnot", inside))
            if not r.located or not allows(r, ins) or not q.possible(inside):
                continue
            bad = mk("ne", mk("urem", mk("sub", addr, Const(r.base, 64)), Const(r.size, 64)), Const(0, 64))
            if width != 8 * r.size or q.possible(inside, bad):
                raise UnsupportedError(
                    f"`{ins.text}` computes its address from loaded data, and it may access {width // 8} "
                    f"byte(s) at a byte of {r.name} that is not an element's start or of another size "
                    f"({r.size}-byte {r.type} elements)", ins.pos,
                    "mixed-size accesses are not modelled yet: access whole elements")
            out += self._enumerate(q, inside, r, ins)
        cond = outside[0] if outside else Const(1, 1)
        for c in outside[1:]:
            cond = mk("land", cond, c)
        oob = cond if q.possible(*outside) else None
        return out, oob

    def _enumerate(self, q: AddressQuery, inside, r: Region, ins: Instruction) -> list:
        values = q.values(inside, MAX_TARGETS)
        if values is None:
            raise UnsupportedError(
                f"`{ins.text}` computes its address from loaded data and may access more than "
                f"{MAX_TARGETS} elements of {r.name}", ins.pos,
                "bound the index before the access (e.g. `if (i < N)`), or use a smaller buffer")
        return sorted(((r.element_name((v - r.base) // r.size), v) for v in values), key=lambda x: x[1])


def _operand_widths(ins: Instruction, width: int) -> set[int]:
    """The widths (bits) an access of ``ins`` may have at one of its addresses. An mbarrier
    operation accesses its object, a 64-bit word, whatever register it writes (a wait's ``.pred``);
    a bulk copy, ``st.async`` or ``cp.async``'s operands are 32-bit words and a 64-bit mbarrier —
    which operand is which the event builder checks on the location it gets (a copy's word must be
    32-bit, its mbarrier a .shared .b64). Anything else: the width of its type."""
    if isinstance(ins, MBarrier):
        return {64}
    if isinstance(ins, Mapa):  # maps an address, accesses nothing: whatever its element's width
        return {8, 16, 32, 64}
    if isinstance(ins, (BulkCopy, AsyncStore, CpAsync, CpAsyncGroup, TensorCopy)):
        return {32, 64}
    return {width}


def allows(r: Region, ins: Instruction) -> bool:
    """Whether ``ins`` may access an element of ``r``: ``__constant__`` data only by loads (the
    kernel cannot write it), and ``ld.const`` only constant data; a tensor map none (it is opaque)."""
    if r.tensormap is not None:
        return False
    if r.space == "const":
        return isinstance(ins, Load)
    return getattr(ins, "space", None) != "const"


__all__ = ["CONST_BASE", "GLOBAL_BASE", "LOCAL_BASE", "MAPA_BASE", "PARAM_BASE", "SHARED_BASE", "SHARED_SPAN",
           "SLOT", "Layout", "Region", "allows"]
