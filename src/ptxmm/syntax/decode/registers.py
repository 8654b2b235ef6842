"""Decoders of the register instructions: ``mov``, the ALU operations, ``setp``, ``selp`` and
``mapa`` (a cluster address into a register)."""

from __future__ import annotations

from ...errors import ParseError
from ...ir.program import (
    Alu,
    Imm,
    Instruction,
    Mapa,
    Mov,
    Operand,
    Selp,
    Setp,
)
from .operands import operands
from .qualifiers import TYPES, Quals, take_type
from .registry import register

ALU_OPS = {"add", "sub", "mul", "div", "rem", "and", "or", "xor", "not", "shl", "shr", "min", "max",
           "neg"}
CMP_OPS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}

def _mov(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "mov.type d, a"
    ty = take_type(q, form)
    q.done(form)
    d, a = operands(ops, "rv", q, form)
    return Mov(type=ty, dst=d, src=a, **c)


def _alu(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    unary = base in ("not", "neg")
    form = f"{base}.type d, a" + ("" if unary else ", b")
    if base == "mul":
        form = "mul.lo.type d, a, b"
        if q.peek() in ("hi", "wide"):
            q.fail(f"`mul.{q.peek()}`", "the value language has the low half of a product only: "
                   "mul.lo", unsupported=True)
        if q.take_if({"lo"}) is None and q.peek() in TYPES and q.peek()[0] in "usb":
            q.fail(f"`mul.{q.peek()}` needs .lo", f"write mul.lo.{q.peek()} (the low half of "
                   "the product; .hi and .wide are not modelled)")
    if base in ("add", "sub") and q.peek() == "sat":
        q.fail(f"`{base}.sat` (saturating arithmetic)", f"use {base}.s32 (wraps around)",
               unsupported=True)
    ty = take_type(q, form)
    q.done(form)
    d, *srcs = operands(ops, "rv" if unary else "rvv", q, form)
    return Alu(op=base, type=ty, dst=d, srcs=tuple(srcs), **c)


def _setp(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "setp.cmp.type p, a, b"
    cmp = q.take_if(CMP_OPS)
    if cmp is None:
        q.fail("setp needs a comparison", "one of .eq .ne .lt .le .gt .ge (.lo .ls .hi .hs)",
               typo=True)
    ty = take_type(q, form)
    q.done(form)
    p, a, b = operands(ops, "rvv", q, form)
    return Setp(cmp=cmp, type=ty, dst=p, a=a, b=b, **c)


def _selp(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "selp.type d, a, b, p"
    ty = take_type(q, form)
    q.done(form)
    d, a, b, p = operands(ops, "rvvv", q, form)  # check/operands.py: a constant selector
    return Selp(type=ty, dst=d, a=a, b=b, p=p, **c)

def _mapa(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "mapa{.shared::cluster}.u32|.u64 d, a, rank"
    q.take_if({"shared::cluster"})
    ty = q.take_if({"u32", "u64"})
    if ty is None:
        q.fail("mapa needs .u32 or .u64", f"expected form: {form}")
    q.done(form)
    d, a, r = operands(ops, "rvv", q, form)
    if isinstance(a, Imm):
        raise ParseError("mapa maps an address: name a .shared location or a register holding one",
                         q.pos, f"expected form: {form}")
    return Mapa(dst=d, src=a, rank=r, type=ty, **c)


register(["mov"], _mov, TYPES)
register(["setp"], _setp, CMP_OPS | TYPES)
register(["selp"], _selp, TYPES)
register(["mapa"], _mapa, {"shared::cluster", "u32", "u64"})
register(sorted(ALU_OPS), _alu, TYPES | {"lo", "hi", "wide", "sat"})
