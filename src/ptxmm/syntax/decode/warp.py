"""Decoders of the warp-level instructions: ``elect.sync``."""

from __future__ import annotations

from ...errors import ParseError, UnsupportedError
from ...ir.program import (
    Elect,
    Imm,
    Instruction,
    Reg,
)
from .operands import SINK, operands
from .qualifiers import Quals
from .registry import register


def _elect(base: str, q: Quals, ops: list, c: dict) -> Instruction:
    """``elect.sync _|p, membermask`` (PTX ISA, elect.sync): p is True in the one lane of the
    membermask the instruction elects.  The elected lane's id (``d``) is not modelled: a litmus
    thread has no lane id (write ``_``)."""
    form = "elect.sync _|p, membermask"
    if q.take_if({"sync"}) is None:
        q.fail("elect needs .sync", f"expected form: {form}")
    q.done(form)
    dp, mask = operands(ops, "Vv", q, form)
    if not dp.pair or len(dp.items) != 2 or not isinstance(dp.items[1], Reg):
        raise ParseError("the destination of elect.sync is d|p: a register or `_`, `|`, and a "
                         "predicate register", q.pos, f"expected form: {form}")
    if dp.items[0] != SINK:
        raise UnsupportedError("the elected lane's id (elect.sync's d)", q.pos,
                               "a litmus thread has no lane id: write `_|%p`")
    if not isinstance(mask, Imm):
        raise UnsupportedError("a membermask held in a register", q.pos, "write the mask as a constant")
    return Elect(dst=dp.items[1], mask=mask, **c)


register(["elect"], _elect, {"sync"})
