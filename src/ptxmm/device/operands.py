"""The register an instruction of the typed IR writes, as the device side reads it (register
declarations); the operands it reads are :func:`ptxmm.ir.program.value_operands`."""

from __future__ import annotations

from ..ir.program import Alu, Atom, Instruction, Load, Mov, Reg, Selp, Setp


def dst(ins: Instruction) -> Reg | None:
    """The register an instruction writes, if any."""
    return ins.dst if isinstance(ins, (Load, Atom, Mov, Alu, Setp, Selp)) else None
