""":mod:`ptxmm.ir.values` expressions as Z3 *integer* terms, exactly, where an interval analysis
shows that no operation wraps: a term's integer is the bit-vector's unsigned value.

Index arithmetic of a kernel (``blockIdx.x * blockDim.x + threadIdx.x``, scaled by the element
size) multiplies two unknowns; bit-blasted, the question "can two distinct threads compute the same
index" defeats the SAT solver even at 11 bits, while Z3's nonlinear integer arithmetic answers it
at once. With the launch bounded (ids below 2^31), such terms do not wrap: each operation's result
interval is computed from its operands' and the integer term is used only when the whole interval
fits the width (and, for the signed operations, stays non-negative). Anything else — an operation
that may wrap, a bit operation, a float — is the bit-vector term (:class:`.values.Values`) read as
an integer (``BV2Int``), its leaves the same integer unknowns (``Int2BV``): exact either way."""

from __future__ import annotations

from collections.abc import Callable

import z3

from ...ir.values import BOOL_OPS, Const, Expr, Op, ReadVal
from .values import Values

Interval = tuple[int, int]
_UNSIGNED = {"ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}
_SIGNED = {"slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}


def _cmp(op: str, a, b):
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _signed(x, hi: int, half: int):
    """The two's complement value of an unsigned ``x`` (below ``2 * half``, at most ``hi``)."""
    return x if hi < half else z3.If(x >= half, x - 2 * half, x)


class IntTerms:
    """``leaf(ReadVal)`` → (integer unknown, its interval); :meth:`bool` and :meth:`val` translate."""

    def __init__(self, leaf: Callable[[ReadVal], tuple[z3.ArithRef, Interval]]):
        self.leaf = leaf
        self.bvs = Values(lambda i: self._bv_leaf(i))
        self._widths: dict[int, int] = {}
        self._cache: dict[Expr, tuple] = {}

    def _bv_leaf(self, i: int) -> z3.BitVecRef:
        w = self._widths[i]
        return z3.Int2BV(self.leaf(ReadVal(i, w))[0], w)

    def bool(self, e: Expr) -> z3.BoolRef:
        if isinstance(e, Const):
            return z3.BoolVal(e.v != 0)
        if isinstance(e, Op) and e.op in BOOL_OPS:
            return self._bool_op(e)
        return self.val(e)[0] != 0

    def _bool_op(self, e: Op) -> z3.BoolRef:
        if e.op == "land":
            return z3.And(*[self.bool(a) for a in e.args])
        if e.op == "lor":
            return z3.Or(*[self.bool(a) for a in e.args])
        if e.op == "lnot":
            return z3.Not(self.bool(e.args[0]))
        (x, lx, hx), (y, ly, hy) = self.val(e.args[0]), self.val(e.args[1])
        if e.op in ("eq", "ne"):
            apart = hx < ly or hy < lx  # disjoint intervals: a division by %ntid.x is never by zero
            if apart:
                return z3.BoolVal(e.op == "ne")
            return x == y if e.op == "eq" else x != y
        if e.op in _UNSIGNED:
            return _cmp(_UNSIGNED[e.op], x, y)
        half = 1 << (e.args[0].w - 1)
        if hx < half and hy < half:  # both non-negative: signed order is the unsigned one
            return _cmp(_SIGNED[e.op], x, y)
        return _cmp(_SIGNED[e.op], _signed(x, hx, half), _signed(y, hy, half))

    def _bv_bool(self, e: Expr) -> z3.BoolRef:
        self._note_leaves(e)
        return self.bvs.bool(e)

    def _note_leaves(self, e: Expr) -> None:
        if isinstance(e, ReadVal):
            self._widths[e.eid] = e.w
        elif isinstance(e, Op):
            for a in e.args:
                self._note_leaves(a)

    def val(self, e: Expr) -> tuple[z3.ArithRef, int, int]:
        """(integer term, lowest, highest value) of ``e``'s unsigned value."""
        t = self._cache.get(e)
        if t is None:
            t = self._cache[e] = self._val(e)
        return t

    def _fallback(self, e: Expr) -> tuple[z3.ArithRef, int, int]:
        self._note_leaves(e)
        return z3.BV2Int(self.bvs.bv(e)), 0, (1 << e.w) - 1

    def _val(self, e: Expr) -> tuple[z3.ArithRef, int, int]:
        if isinstance(e, Const):
            return z3.IntVal(e.v), e.v, e.v
        if isinstance(e, ReadVal):
            term, (lo, hi) = self.leaf(e)
            return term, lo, hi
        if not isinstance(e, Op):
            return self._fallback(e)
        if e.op in BOOL_OPS:
            return z3.If(self.bool(e), z3.IntVal(1), z3.IntVal(0)), 0, 1
        if e.op == "ite":
            c = self.bool(e.args[0])
            if z3.is_true(c) or z3.is_false(c):  # decided by the intervals: one side only
                return self.val(e.args[1] if z3.is_true(c) else e.args[2])
            (x, lx, hx), (y, ly, hy) = self.val(e.args[1]), self.val(e.args[2])
            return z3.If(c, x, y), min(lx, ly), max(hx, hy)
        out = self._arith(e)
        return out if out is not None else self._fallback(e)

    def _arith(self, e: Op):  # noqa: C901 — one case per operation, each with its no-wrap test
        top, half = (1 << e.w) - 1, 1 << (e.w - 1)
        a = e.args
        if e.op in ("zext", "sext", "trunc"):
            x, lx, hx = self.val(a[0])
            same = e.op == "zext" or (e.op == "sext" and hx < 1 << (a[0].w - 1)) \
                or (e.op == "trunc" and hx <= top)
            if same:
                return x, lx, hx
            if e.op == "trunc":
                return x % (top + 1), 0, top
            half_in = 1 << (a[0].w - 1)  # sext of a value that may be negative: add 2^w - 2^w_in
            return z3.If(x >= half_in, x + (top + 1 - 2 * half_in), x), lx, top
        if len(a) != 2:
            return None
        (x, lx, hx) = self.val(a[0])
        k = a[1].v if isinstance(a[1], Const) else None
        if e.op in ("shl", "shr", "sar") and k is not None:
            if k >= e.w:
                return None
            if e.op == "shl":
                return (x * (1 << k), lx << k, hx << k) if hx << k <= top else None
            if e.op == "shr" or hx < half:
                return x / (1 << k), lx >> k, hx >> k
            return None
        if e.op == "and" and k is not None and k & (k + 1) == 0:  # a mask 2^n - 1
            return (x, lx, hx) if hx <= k else (x % (k + 1), 0, k)
        (y, ly, hy) = self.val(a[1])
        if e.op == "add":
            return (x + y, lx + ly, hx + hy) if hx + hy <= top else None
        if e.op == "sub":
            return (x - y, lx - hy, hx - ly) if lx - hy >= 0 else None
        if e.op == "mul":
            return (x * y, lx * ly, hx * hy) if hx * hy <= top else None
        signed_ok = hx < half and hy < half
        if e.op in ("urem", "srem") and (e.op == "urem" or signed_ok):
            # a zero divisor is guarded by values.division's ite: its value here is never used
            return x % y, 0, (min(hx, hy - 1) if ly >= 1 else hx)
        if e.op in ("udiv", "sdiv") and (e.op == "udiv" or signed_ok):
            return x / y, 0, hx
        if e.op in ("umin", "smin") and (e.op == "umin" or signed_ok):
            return z3.If(x <= y, x, y), min(lx, ly), min(hx, hy)
        if e.op in ("umax", "smax") and (e.op == "umax" or signed_ok):
            return z3.If(x >= y, x, y), max(lx, ly), max(hx, hy)
        return None


__all__ = ["IntTerms"]
