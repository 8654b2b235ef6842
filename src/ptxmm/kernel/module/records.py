"""The records of a PTX module as nvcc emits it: its functions (parameters, registers, decoded
body), variables, calls and parameter stores, and the positions that carry a CUDA line."""

from __future__ import annotations

from dataclasses import field, replace
from pathlib import Path

from ..._infra.records import record
from ...errors import SourcePos
from ...ir.program import Operand


@record
class KernelPos(SourcePos):
    """A PTX position and, where the module has line information, the CUDA source line it came
    from (``.loc``; for inlined code the line in the kernel's own file)."""

    src: SourcePos | None = None

    def __str__(self) -> str:
        ptx = f"{self.file}:{self.line}:{self.col}"
        return ptx if self.src is None else f"{ptx} ({Path(self.src.file).name}:{self.src.line})"


@record
class Variable:
    """A ``.global``/``.shared``/``.const`` declaration: ``count`` elements of ``type`` (None: a
    scalar), initial values (missing ones are 0)."""

    name: str
    space: str  # global shared const
    type: str  # element type without its dot (a .b8 array with .align A: A-byte words)
    count: int | None
    init: tuple[int, ...] = ()
    align: int = 0
    pos: SourcePos | None = None
    dynamic: bool = False  # `.extern .shared .b8 s[]` (extern __shared__): sized by the launch
    # declared `.b8 name[N]` (how nvcc declares every array): ptxmm.kernel gives it the element width
    # its accesses use (Variable.as_width); ``type`` is the alignment's guess
    byte_array: bool = False

    def as_width(self, nbytes: int) -> Variable:
        """A byte array as an array of ``nbytes``-byte words (its initial bytes little-endian, the
        missing ones 0, as the ISA fills them); itself when that does not divide its size."""
        if not self.byte_array or not self.count or self.dynamic:
            return self
        size = self.count * type_width_bytes(self.type)
        if size % nbytes:
            return self
        raw = self.bytes()
        init = tuple(int.from_bytes(bytes(raw[i:i + nbytes]), "little") for i in range(0, len(raw), nbytes))
        return replace(self, type=f"b{8 * nbytes}", count=size // nbytes, init=init)

    def bytes(self) -> list[int]:
        """The initial bytes (little-endian elements, the missing ones 0)."""
        w = type_width_bytes(self.type)
        n = self.count or 1
        vals = list(self.init) + [0] * (n - len(self.init))
        return [b for v in vals for b in (v & ((1 << 8 * w) - 1)).to_bytes(w, "little")]


def type_width_bytes(ty: str) -> int:
    return 1 if ty == "pred" else int(ty[1:]) // 8


@record
class Param:
    name: str
    type: str  # u64 s32 ... (no dot)
    pos: SourcePos | None = None
    # an aggregate passed by value (`.param .align 128 .b8 k_param_0[128]`, a `const __grid_constant__
    # CUtensorMap`): its size in bytes; None for a scalar or pointer
    size: int | None = None


@record
class Call:
    """``call{.uni} (rets), callee, (args);`` before inlining."""

    callee: str
    rets: tuple[str, ...]
    args: tuple[str, ...]
    pos: SourcePos | None = None
    text: str = ""
    guard: tuple | None = None


@record
class ParamStore:
    """``st.param.T [name+off], v`` (an argument of a call or a function's return value)."""

    name: str
    src: Operand
    type: str
    pos: SourcePos | None = None
    text: str = ""


@record
class EntryDirective:
    """A performance-tuning or cluster directive between a kernel's header and its body (PTX ISA
    11.4, 11.7, 11.8): ``.maxntid 4, 1, 1`` is ``EntryDirective("maxntid", (4, 1, 1), pos)``."""

    name: str  # without its dot
    values: tuple[int, ...]
    pos: SourcePos | None = None


@record
class Function:
    name: str
    entry: bool
    params: tuple[Param, ...]
    rets: tuple[Param, ...]
    body: tuple  # Instruction | Call | ParamStore
    regs: tuple[tuple[str, str, int | None], ...]  # (name or prefix, type, range size or None)
    pos: SourcePos | None = None
    directives: tuple[EntryDirective, ...] = ()  # .maxntid, .reqnctapercluster, ... (bodies.py)

    def declares(self, reg: str) -> bool:
        for name, _ty, n in self.regs:
            if n is None and reg == name:
                return True
            if n is not None and reg.startswith(name) and reg[len(name):].isdigit() \
                    and int(reg[len(name):]) < n:
                return True
        return False

    def reg_types(self) -> dict[str, str]:
        """The declared type of each declared register (ranges expanded)."""
        out: dict[str, str] = {}
        for name, ty, n in self.regs:
            if n is None:
                out[name] = ty
            else:
                out.update({f"{name}{i}": ty for i in range(n)})
        return out


@record
class Module:
    file: str
    functions: dict[str, Function]
    variables: tuple[Variable, ...]
    version: str = ""
    target: str = ""
    address_size: int = 64
    directives: tuple[tuple[str, SourcePos], ...] = ()  # `// ptxmm: ...` lines
    notes: tuple = field(default=(), compare=False)

    @property
    def entries(self) -> list[Function]:
        return [f for f in self.functions.values() if f.entry]
