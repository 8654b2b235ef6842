"""Decoders of control flow: ``bra``, ``ret`` and ``exit``."""

from __future__ import annotations

from ...ir.program import (
    Branch,
    Instruction,
    Operand,
    Ret,
)
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


register(["bra"], _bra, {"uni"})
register(["ret", "exit"], _ret, set())
