"""The Program: the one shared vocabulary between front ends, the event builder, the solver and the
device harness. Plain frozen dataclasses; every front end (``.ptx``, herd/Dat3M ``.litmus``)
produces exactly these objects."""

from __future__ import annotations

from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Literal, Union

from .._infra.records import record
from ..errors import SourcePos
from .instructions import (  # the IR is part of the Program's vocabulary: re-exported
    MEMORY_INSTRS,
    PROXIES,
    SCOPES,
    SEMS,
    TENSORMAP_BYTES,
    Addr,
    Alu,
    AsyncStore,
    Atom,
    Barrier,
    Branch,
    BulkCopy,
    BulkGroup,
    ClusterBarrier,
    CpAsync,
    CpAsyncGroup,
    Elect,
    Fence,
    Guard,
    Halt,
    Imm,
    Instr,
    Instruction,
    Label,
    Load,
    Mapa,
    MBarrier,
    Mov,
    Nanosleep,
    Operand,
    ProxyFence,
    Red,
    Reg,
    Ret,
    Selp,
    Setp,
    Store,
    Sym,
    TensorCopy,
    TensorMap,
    TensorMapReplace,
    VectorOrder,
    WarpOp,
    Wgmma,
    memory_operands,
    operands,
    type_signed,
    type_width,
    value_operands,
)

if TYPE_CHECKING:  # a kernel launch's records
    from .launch import KernelInfo
    from .layout import Layout


@record
class Location:
    name: str
    space: str = "global"  # "global" | "shared"
    type: str = "u32"
    init: int = 0
    alias_of: str | None = None  # a virtual alias of another location (same physical memory)
    # the proxy of an alias declaration (``s @ surface aliases x``): "generic" gives a new virtual
    # address; any other proxy names the target's own virtual address through that proxy
    proxy: str = "generic"
    pos: SourcePos | None = None
    # a tensor map object (``.tensormap``): its contents; the location holds its global address
    tensormap: TensorMap | None = None


@record
class Placement:
    """Where a thread runs. ``cluster=None`` means the implicit 1x1x1 cluster of its CTA."""

    gpu: int = 0
    cluster: int | None = None
    cta: int = 0

    @property
    def cluster_key(self) -> tuple:
        return (self.gpu, ("implicit", self.cta) if self.cluster is None else self.cluster)

    @property
    def cta_key(self) -> tuple:
        return (*self.cluster_key, self.cta)

    def level_with(self, other: Placement) -> str:
        """The narrowest scope whose instance contains both threads (threads assumed distinct)."""
        if self.cta_key == other.cta_key:
            return "cta"
        if self.cluster_key == other.cluster_key:
            return "cluster"
        if self.gpu == other.gpu:
            return "gpu"
        return "sys"

    def __str__(self) -> str:
        clu = "" if self.cluster is None else f" cluster {self.cluster}"
        return f"gpu {self.gpu}{clu} cta {self.cta}"


# ----- operands ---------------------------------------------------------------------------------


@record
class Thread:
    name: str
    index: int
    placement: Placement
    instrs: tuple[Instruction, ...]
    init_regs: tuple[tuple[str, int | str], ...] = ()  # register → value or location name (address)
    pos: SourcePos | None = None
    reg_types: tuple[tuple[str, str], ...] = ()  # declared registers (``.reg .u32 %r<2>;``) → type


# ----- conditions -------------------------------------------------------------------------------


@record
class RegRef:
    thread: str
    reg: str


@record
class MemRef:
    loc: str


Ref = Union[RegRef, MemRef]


@record
class Cmp:
    op: str  # == != < <= > >=
    lhs: Ref
    rhs: Union[Ref, int]


@record
class And:
    args: tuple[CondExpr, ...]


@record
class Or:
    args: tuple[CondExpr, ...]


@record
class Not:
    arg: CondExpr


@record
class TrueC:
    pass


CondExpr = Union[Cmp, And, Or, Not, TrueC]
Quantifier = Literal["exists", "~exists", "forall"]


@record
class Condition:
    quantifier: Quantifier
    expr: CondExpr
    text: str = ""


def cond_refs(e: CondExpr) -> list[Ref]:
    if isinstance(e, Cmp):
        return [e.lhs] + ([e.rhs] if isinstance(e.rhs, (RegRef, MemRef)) else [])
    if isinstance(e, (And, Or)):
        return [r for a in e.args for r in cond_refs(a)]
    if isinstance(e, Not):
        return cond_refs(e.arg)
    return []


def format_ref(r: Ref) -> str:
    return f"{r.thread}:{r.reg}" if isinstance(r, RegRef) else r.loc


@record
class Program:
    name: str
    threads: tuple[Thread, ...]
    locations: tuple[Location, ...]
    condition: Condition | None
    description: str = ""
    expect: bool | None = None  # expected truth of the condition (herd's sense), if declared
    file: str = "<string>"
    format: str = "ptx"
    # `.expect-liveness terminates|hangs` (.ptx): whether no execution hangs, if declared
    expect_liveness: bool | None = field(default=None, compare=False)
    # a Dat3M .litmus test's `locations [...]` (what herd lists) and `filter` clause, as written
    observed: tuple[Ref, ...] | None = field(default=None, compare=False)
    filter: CondExpr | None = field(default=None, compare=False)
    # non-fatal diagnostics of the front end's checks (errors.Diagnostic): unreachable code, ...
    warnings: tuple = field(default=(), compare=False)
    # a kernel launch: where its buffers lie (what an address names), and its origin
    layout: Layout | None = field(default=None, compare=False)
    kernel: KernelInfo | None = field(default=None, compare=False)

    def location(self, name: str) -> Location | None:
        return self._by_name.get(name)

    @cached_property
    def _by_name(self) -> dict[str, Location]:
        """Name → the first location of that name (a launch of 1,024 threads has some 2,000
        locations and looks one up per access; not a field: no part of equality or repr)."""
        out: dict[str, Location] = {}
        for loc in self.locations:
            out.setdefault(loc.name, loc)
        return out

    def physical(self, name: str) -> str:
        """The original location that ``name`` names, following alias declarations."""
        loc = self.location(name)
        seen = set()
        while loc is not None and loc.alias_of is not None and loc.name not in seen:
            seen.add(loc.name)
            loc = self.location(loc.alias_of)
        return loc.name if loc is not None else name

    def virtual(self, name: str) -> str:
        """The virtual (generic) address that ``name`` denotes: a generic alias is an address
        of its own; a texture/surface/constant alias reaches its target's address through
        that proxy (Dat3M's ``VirtualMemoryObject.genericAddress``)."""
        loc = self.location(name)
        if loc is not None and loc.alias_of is not None and loc.proxy != "generic":
            return loc.alias_of
        return name

    def thread(self, name: str) -> Thread | None:
        return next((t for t in self.threads if t.name == name), None)


__all__ = ["Addr", "Alu", "And", "AsyncStore", "Atom", "Barrier", "Branch", "BulkCopy", "BulkGroup",
           "ClusterBarrier", "Cmp", "CondExpr", "Condition", "CpAsync", "CpAsyncGroup", "Elect",
           "Fence", "Guard", "Halt", "Imm", "Instr", "Instruction", "Label", "Load", "Location", "MBarrier",
           "MEMORY_INSTRS", "Mapa", "MemRef", "Mov", "Nanosleep", "Not", "Operand", "Or", "PROXIES",
           "Placement",
           "Program", "ProxyFence", "Quantifier", "Red", "Ref", "Reg", "RegRef", "Ret", "SCOPES",
           "SEMS", "Selp", "Setp", "Store", "Sym", "TENSORMAP_BYTES", "TensorCopy", "TensorMap",
           "TensorMapReplace", "Thread", "TrueC", "VectorOrder", "WarpOp", "Wgmma", "cond_refs", "format_ref",
           "memory_operands", "operands", "type_signed", "type_width", "value_operands"]
