"""Value expressions of a litmus execution: constants, the value a read event returns, and PTX
arithmetic over them. One small AST, two interpretations: concrete (Python ints, 64-bit wrap) for
the brute-force engine and Z3 bit-vectors for the SMT engine."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

import z3

WIDTH = 64
MASK = (1 << WIDTH) - 1


@dataclass(frozen=True)
class Const:
    v: int


@dataclass(frozen=True)
class ReadVal:
    eid: int


@dataclass(frozen=True)
class Op:
    op: str
    args: tuple[Expr, ...]


Expr = Union[Const, ReadVal, Op]

BOOL_OPS = {"eq", "ne", "lt", "le", "gt", "ge", "ltu", "leu", "gtu", "geu", "land", "lor", "lnot",
            "ltrue"}


def reads_of(e: Expr) -> frozenset[int]:
    if isinstance(e, ReadVal):
        return frozenset({e.eid})
    if isinstance(e, Op):
        out: frozenset[int] = frozenset()
        for a in e.args:
            out |= reads_of(a)
        return out
    return frozenset()


def _signed(v: int) -> int:
    v &= MASK
    return v - (1 << WIDTH) if v >> (WIDTH - 1) else v


def mk(op: str, *args: Expr) -> Expr:
    """Build an expression, folding constants and the identities used to write fake dependencies
    (``xor r,r`` = 0, ``sub r,r`` = 0, ``and r,0`` = 0, ``mul r,0`` = 0, ``add r,0`` = r)."""
    if all(isinstance(a, Const) for a in args):
        return Const(evaluate(Op(op, args), {}))
    if op in ("xor", "sub") and len(args) == 2 and args[0] == args[1]:
        return Const(0)
    if op in ("and", "mul") and any(a == Const(0) for a in args):
        return Const(0)
    if op in ("add", "or", "xor") and len(args) == 2:
        if args[1] == Const(0):
            return args[0]
        if args[0] == Const(0):
            return args[1]
    if op == "exch":
        return args[1]
    if op == "ite" and isinstance(args[0], Const):
        return args[1] if args[0].v else args[2]
    return Op(op, args)


def _inc(r: int, b: int) -> int:
    return 0 if r >= b else r + 1


def _dec(r: int, b: int) -> int:
    return b if (r == 0 or r > b) else r - 1


_CONCRETE: dict[str, Callable[..., int]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b if b < WIDTH else 0,
    "shr": lambda a, b: a >> b if b < WIDTH else 0,
    "not": lambda a: ~a,
    "neg": lambda a: -a,
    "min": lambda a, b: a if _signed(a) <= _signed(b) else b,
    "max": lambda a, b: a if _signed(a) >= _signed(b) else b,
    "minu": lambda a, b: min(a, b),
    "maxu": lambda a, b: max(a, b),
    "inc": _inc,
    "dec": _dec,
    "exch": lambda a, b: b,
    "cas": lambda r, b, c: c if r == b else r,
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "lt": lambda a, b: int(_signed(a) < _signed(b)),
    "le": lambda a, b: int(_signed(a) <= _signed(b)),
    "gt": lambda a, b: int(_signed(a) > _signed(b)),
    "ge": lambda a, b: int(_signed(a) >= _signed(b)),
    "ltu": lambda a, b: int(a < b),
    "leu": lambda a, b: int(a <= b),
    "gtu": lambda a, b: int(a > b),
    "geu": lambda a, b: int(a >= b),
    "land": lambda a, b: int(bool(a) and bool(b)),
    "lor": lambda a, b: int(bool(a) or bool(b)),
    "lnot": lambda a: int(not a),
    "ite": lambda c, a, b: a if c else b,
}


def evaluate(e: Expr, reads: dict[int, int]) -> int:
    """Concrete value of an expression, given the values returned by reads."""
    if isinstance(e, Const):
        return e.v & MASK
    if isinstance(e, ReadVal):
        return reads[e.eid] & MASK
    return _CONCRETE[e.op](*(evaluate(a, reads) for a in e.args)) & MASK


def _bv(x: z3.ExprRef) -> z3.BitVecRef:
    return z3.If(x, z3.BitVecVal(1, WIDTH), z3.BitVecVal(0, WIDTH)) if z3.is_bool(x) else x


def _b(x: z3.ExprRef) -> z3.BoolRef:
    return x if z3.is_bool(x) else x != 0


_Z3: dict[str, Callable[..., z3.ExprRef]] = {
    "add": lambda a, b: _bv(a) + _bv(b),
    "sub": lambda a, b: _bv(a) - _bv(b),
    "mul": lambda a, b: _bv(a) * _bv(b),
    "and": lambda a, b: z3.And(a, b) if z3.is_bool(a) and z3.is_bool(b) else _bv(a) & _bv(b),
    "or": lambda a, b: z3.Or(a, b) if z3.is_bool(a) and z3.is_bool(b) else _bv(a) | _bv(b),
    "xor": lambda a, b: z3.Xor(a, b) if z3.is_bool(a) and z3.is_bool(b) else _bv(a) ^ _bv(b),
    "shl": lambda a, b: z3.If(b < WIDTH, a << b, 0),
    "shr": lambda a, b: z3.If(z3.ULT(b, WIDTH), z3.LShR(a, b), 0),
    "not": lambda a: z3.Not(a) if z3.is_bool(a) else ~a,
    "neg": lambda a: -a,
    "min": lambda a, b: z3.If(a <= b, a, b),
    "max": lambda a, b: z3.If(a >= b, a, b),
    "minu": lambda a, b: z3.If(z3.ULE(a, b), a, b),
    "maxu": lambda a, b: z3.If(z3.UGE(a, b), a, b),
    "inc": lambda r, b: z3.If(z3.UGE(r, b), z3.BitVecVal(0, WIDTH), r + 1),
    "dec": lambda r, b: z3.If(z3.Or(r == 0, z3.UGT(r, b)), b, r - 1),
    "exch": lambda a, b: b,
    "cas": lambda r, b, c: z3.If(r == b, c, r),
    "eq": lambda a, b: _bv(a) == _bv(b),
    "ne": lambda a, b: _bv(a) != _bv(b),
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "ltu": lambda a, b: z3.ULT(a, b),
    "leu": lambda a, b: z3.ULE(a, b),
    "gtu": lambda a, b: z3.UGT(a, b),
    "geu": lambda a, b: z3.UGE(a, b),
    "land": lambda a, b: z3.And(_b(a), _b(b)),
    "lor": lambda a, b: z3.Or(_b(a), _b(b)),
    "lnot": lambda a: z3.Not(_b(a)),
    "ite": lambda c, a, b: z3.If(_b(c), _bv(a), _bv(b)),
}


@functools.cache
def _const(v: int) -> z3.BitVecRef:
    return z3.BitVecVal(v, WIDTH)


def to_z3(e: Expr, readvar: Callable[[int], z3.BitVecRef]) -> z3.ExprRef:
    """Z3 term of an expression; comparisons give Bool terms, everything else 64-bit vectors."""
    if isinstance(e, Const):
        return _const(e.v & MASK)
    if isinstance(e, ReadVal):
        return readvar(e.eid)
    return _Z3[e.op](*(to_z3(a, readvar) for a in e.args))


def to_z3_value(e: Expr, readvar: Callable[[int], z3.BitVecRef]) -> z3.BitVecRef:
    return _bv(to_z3(e, readvar))


def to_z3_bool(e: Expr, readvar: Callable[[int], z3.BitVecRef]) -> z3.BoolRef:
    return _b(to_z3(e, readvar))


def signed(v: int) -> int:
    """Value as printed in outcomes: small negatives shown as negatives."""
    return _signed(v)
