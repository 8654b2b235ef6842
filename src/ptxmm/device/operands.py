"""Which registers and values an instruction of the typed IR names, as the device side reads them
(register declarations, kernel parameters, value codes)."""

from __future__ import annotations

from ..program import Alu, Atom, Barrier, Instruction, Load, Mov, Operand, Red, Reg, Selp, Setp, Store


def dst(ins: Instruction) -> Reg | None:
    """The register an instruction writes, if any."""
    return ins.dst if isinstance(ins, (Load, Atom, Mov, Alu, Setp, Selp)) else None


def values(ins: Instruction) -> tuple[Operand, ...]:
    """The value operands an instruction reads, in source order (not its memory operand)."""
    match ins:
        case Store() | Red() | Mov():
            return (ins.src,)
        case Atom() | Alu():
            return ins.srcs
        case Setp():
            return (ins.a, ins.b)
        case Selp():
            return (ins.a, ins.b, ins.p)
        case Barrier():
            return ins.ids if ins.count is None else (*ins.ids, ins.count)
    return ()
