"""Decoders of control flow: ``bra``, ``ret``, ``exit`` and ``trap``."""

from __future__ import annotations

from ...ir.program import (
    Branch,
    Halt,
    Instruction,
    Operand,
    Ret,
)
from ...ir.stops import Stop, StopKind
from .operands import operands
from .qualifiers import Quals
from .registry import register


def _bra(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    q.take_if({"uni"})
    q.done("bra{.uni} LABEL")
    (lab,) = operands(ops, "l", q, "bra{.uni} LABEL")
    return Branch(target=lab.name, **c)


def _ret(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    q.done(base)
    operands(ops, "", q, base)
    return Ret(**c)


def _trap(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """trap (no operands, no qualifiers, as ptxas accepts it): aborts the kernel — a Halt."""
    q.done("trap")
    operands(ops, "", q, "trap")
    pos = c.get("pos")
    return Halt(stop=Stop(StopKind.TRAP, pos.line if pos is not None else 0), **c)


register(["bra"], _bra, {"uni"})
register(["ret", "exit"], _ret, set())
register(["trap"], _trap, set())
