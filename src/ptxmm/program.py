"""The Program: the one shared vocabulary between front ends, the event builder, the solver and the
device harness. Plain frozen dataclasses; every front end (``.ptx``, herd/Dat3M ``.litmus``)
produces exactly these objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union

from .errors import SourcePos

SCOPES = ("cta", "cluster", "gpu", "sys")
SEMS = ("weak", "relaxed", "acquire", "release", "acq_rel", "sc")


@dataclass(frozen=True)
class Location:
    name: str
    space: str = "global"  # "global" | "shared"
    type: str = "u32"
    init: int = 0
    alias_of: str | None = None  # a virtual alias of another location (same physical memory)
    pos: SourcePos | None = None


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Reg:
    name: str


@dataclass(frozen=True)
class Imm:
    value: int


@dataclass(frozen=True)
class Sym:
    """A location name used as a value (its address), e.g. ``mov.u64 %rd1, x;``."""

    name: str


@dataclass(frozen=True)
class Addr:
    """A memory operand ``[base]``; base is a location name (Sym) or a register."""

    base: Union[Sym, Reg]
    offset: int = 0


Operand = Union[Reg, Imm, Sym, Addr]


@dataclass(frozen=True)
class Instruction:
    """One decoded instruction. ``op`` is the normalised opcode; qualifiers are normalised too
    (``ld`` → sem weak, ``membar.gl`` → fence sc gpu, ``ld.volatile`` → relaxed sys + volatile)."""

    op: str  # ld st atom red fence fence_proxy bar mov alu setp selp bra label ret nop
    pos: SourcePos | None = None
    text: str = ""
    sem: str | None = None
    scope: str | None = None
    space: str | None = None
    type: str | None = None
    aop: str | None = None  # atom/red/alu operation, setp comparison
    dst: Reg | None = None
    addr: Addr | None = None
    srcs: tuple[Operand, ...] = ()
    label: str | None = None  # for label pseudo-instructions and branch targets
    guard: tuple[Reg, bool] | None = None  # (predicate register, negated)
    volatile: bool = False
    proxy: str | None = None  # fence_proxy kind, e.g. "alias"
    barrier: tuple[tuple[Operand, ...], Operand | None] | None = None  # (id operands, count)
    bar_kind: str | None = None  # "sync" | "arrive" | "red"


@dataclass(frozen=True)
class Thread:
    name: str
    index: int
    placement: Placement
    instrs: tuple[Instruction, ...]
    init_regs: tuple[tuple[str, int | str], ...] = ()
    pos: SourcePos | None = None


# ----- conditions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegRef:
    thread: str
    reg: str


@dataclass(frozen=True)
class MemRef:
    loc: str


Ref = Union[RegRef, MemRef]


@dataclass(frozen=True)
class Cmp:
    op: str  # == != < <= > >=
    lhs: Ref
    rhs: Union[Ref, int]


@dataclass(frozen=True)
class And:
    args: tuple[CondExpr, ...]


@dataclass(frozen=True)
class Or:
    args: tuple[CondExpr, ...]


@dataclass(frozen=True)
class Not:
    arg: CondExpr


@dataclass(frozen=True)
class TrueC:
    pass


CondExpr = Union[Cmp, And, Or, Not, TrueC]
Quantifier = Literal["exists", "~exists", "forall"]


@dataclass(frozen=True)
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


_CMP = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def eval_cond(e: CondExpr, values: dict[Ref, int]) -> bool:
    """Evaluate a condition over an outcome (a map from references to final values)."""
    if isinstance(e, Cmp):
        rhs = e.rhs if isinstance(e.rhs, int) else values[e.rhs]
        return _CMP[e.op](values[e.lhs], rhs)
    if isinstance(e, And):
        return all(eval_cond(a, values) for a in e.args)
    if isinstance(e, Or):
        return any(eval_cond(a, values) for a in e.args)
    if isinstance(e, Not):
        return not eval_cond(e.arg, values)
    return True


def format_cond(e: CondExpr) -> str:
    if isinstance(e, Cmp):
        rhs = e.rhs if isinstance(e.rhs, int) else format_ref(e.rhs)
        return f"{format_ref(e.lhs)} {e.op} {rhs}"
    if isinstance(e, And):
        return " && ".join(_paren(a) for a in e.args)
    if isinstance(e, Or):
        return " || ".join(_paren(a) for a in e.args)
    if isinstance(e, Not):
        return f"!{_paren(e.arg)}"
    return "true"


def _paren(e: CondExpr) -> str:
    return f"({format_cond(e)})" if isinstance(e, (And, Or)) else format_cond(e)


def format_ref(r: Ref) -> str:
    return f"{r.thread}:{r.reg}" if isinstance(r, RegRef) else r.loc


@dataclass(frozen=True)
class Program:
    name: str
    threads: tuple[Thread, ...]
    locations: tuple[Location, ...]
    condition: Condition | None
    description: str = ""
    expect: bool | None = None  # expected truth of the condition (herd's sense), if declared
    file: str = "<string>"
    format: str = "ptx"
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    def location(self, name: str) -> Location | None:
        return next((loc for loc in self.locations if loc.name == name), None)

    def thread(self, name: str) -> Thread | None:
        return next((t for t in self.threads if t.name == name), None)
