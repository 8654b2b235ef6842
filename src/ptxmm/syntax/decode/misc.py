"""Decoders of the PTX ISA's miscellaneous instructions: ``nanosleep``."""

from __future__ import annotations

from ...ir.program import Instruction, Nanosleep
from .operands import operands
from .qualifiers import Quals
from .registry import register


def _nanosleep(base: str, q: Quals, ops: list, c: dict) -> Instruction:
    """``nanosleep.u32 t`` (PTX ISA, nanosleep; sm_70): ``t`` a .u32 register or an immediate
    (ptxas: "Unexpected instruction types specified for 'nanosleep'" without .u32, "Instruction
    'nanosleep' requires '.u32' type" for another type)."""
    form = "nanosleep.u32 t"
    if q.take_if({"u32"}) is None:
        q.fail("nanosleep needs .u32", f"expected form: {form}", typo=True)
    q.done(form)
    (t,) = operands(ops, "v", q, form)
    return Nanosleep(t=t, **c)


register(["nanosleep"], _nanosleep, {"u32"})
