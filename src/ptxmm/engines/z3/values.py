""":mod:`ptxmm.ir.values` expressions and test conditions as Z3 bit-vector terms, wrapping as PTX
does (comparisons and logic as Bools)."""

from __future__ import annotations

from collections.abc import Callable

import z3

from ...ir.program import And, Cmp, CondExpr, Not, Or
from ...ir.values import BOOL_OPS, Const, Expr, Op, ReadVal, Unspec, unspec_key
from .floats import fp_term


class Values:
    """:mod:`ptxmm.ir.values` expressions as Z3 bit-vectors (comparisons and logic as Bools). An
    unspecified value is a fresh constant, unconstrained: the solver chooses it (``unspec``)."""

    def __init__(self, read: Callable[[int], z3.BitVecRef]):
        self.read = read
        self._bv: dict[Expr, z3.ExprRef] = {}
        self._bools: dict[Expr, z3.BoolRef] = {}
        self._fps: dict[Expr, z3.FPRef] = {}  # float operations' results as floats
        self.unspec: dict[int, z3.BitVecRef] = {}  # Unspec.uid → its constant

    def chosen(self, m: z3.ModelRef) -> tuple[tuple[int, int], ...]:
        """The unspecified values model ``m`` chose, as an execution's values
        (:func:`ptxmm.ir.values.unspec_key` → value)."""
        return tuple((unspec_key(u), m.eval(c, model_completion=True).as_long())
                     for u, c in sorted(self.unspec.items()))

    def bv(self, e: Expr) -> z3.BitVecRef:
        t = self._bv.get(e)
        if t is None:
            t = self._bv[e] = self._bv_of(e)
        return t

    def bool(self, e: Expr) -> z3.BoolRef:
        if isinstance(e, Const):
            return z3.BoolVal(e.v != 0)
        t = self._bools.get(e)  # a thread's paths share their assumptions' prefixes
        if t is None:
            t = self._bools[e] = self._cmp(e) if isinstance(e, Op) and e.op in BOOL_OPS else self.bv(e) != 0
        return t

    def _bv_of(self, e: Expr) -> z3.BitVecRef:
        if isinstance(e, Const):
            return z3.BitVecVal(e.v, e.w)
        if isinstance(e, ReadVal):
            return self.read(e.eid)
        if isinstance(e, Unspec):
            c = self.unspec[e.uid] = z3.BitVec(f"unspec{e.uid}", e.w)
            return c
        if e.op in BOOL_OPS:
            return z3.If(self._cmp(e), z3.BitVecVal(1, 1), z3.BitVecVal(0, 1))
        if e.op == "ite":
            return z3.If(self.bool(e.args[0]), self.bv(e.args[1]), self.bv(e.args[2]))
        if e.op.startswith("f."):
            return self._float(e)
        a = [self.bv(x) for x in e.args]
        return _ARITH[e.op](e, *a)

    def _float(self, e: Op) -> z3.BitVecRef:
        """A floating-point operation (ir/floats.py); its operands that are themselves float
        results taken as floats (:func:`.floats.fp_term`), not read back from their bits."""
        fps = [self._fp_of(x) for x in e.args]
        a = [self.bv(x) for x in e.args]
        t, f = fp_term(e.op, a, tuple(x.w for x in e.args), e.w, fps)
        if f is not None:
            self._fps[e] = f
        return t

    def _fp_of(self, x: Expr):
        """The float ``x`` is when it is a float operation's result, or that result with a NaN of
        unspecified bits for a NaN (``ite(f.isnan(r), f.mknan(u), r)``: the same float); else None."""
        if isinstance(x, Op) and x.op == "ite" and isinstance(x.args[0], Op) and x.args[0].op == "f.isnan" \
                and x.args[0].args[0] == x.args[2]:
            x = x.args[2]
        if not (isinstance(x, Op) and x.op.startswith("f.")):
            return None
        self.bv(x)
        return self._fps.get(x)

    def _cmp(self, e: Op) -> z3.BoolRef:
        if e.op == "land":
            return z3.And(self.bool(e.args[0]), self.bool(e.args[1]))
        if e.op == "lor":
            return z3.Or(self.bool(e.args[0]), self.bool(e.args[1]))
        if e.op == "lnot":
            return z3.Not(self.bool(e.args[0]))
        a, b = (self.bv(x) for x in e.args)
        return _CMPS[e.op](a, b)


def _shift(kind: str):
    def f(e: Op, a, b):
        w, bw = e.w, b.size()
        if bw < w:
            b = z3.ZeroExt(w - bw, b)
        big = z3.UGE(b, z3.BitVecVal(w, b.size()))
        if bw > w:
            b = z3.Extract(w - 1, 0, b)
        zero = z3.BitVecVal(0, w)
        if kind == "shl":
            return z3.If(big, zero, a << b)
        if kind == "shr":
            return z3.If(big, zero, z3.LShR(a, b))
        return z3.If(big, z3.If(a < 0, z3.BitVecVal(-1, w), zero), a >> b)
    return f


def _popc(e, a):
    return z3.Sum([z3.ZeroExt(e.w - 1, z3.Extract(i, i, a)) for i in range(a.size())])


def _msb(e, x, shiftamt: bool):
    """The position of x's most significant 1 bit (as bfind: 0xFFFFFFFF when x is 0), or with
    ``shiftamt`` the shift that moves it to the top."""
    w, out = x.size(), z3.BitVecVal(0xFFFFFFFF, e.w)
    for i in range(w):  # the highest set bit wins: the last If applied is bit w-1's
        out = z3.If(z3.Extract(i, i, x) == 1, z3.BitVecVal(w - 1 - i if shiftamt else i, e.w), out)
    return out


def _bfind(signed: bool, shiftamt: bool):
    def f(e, a):
        x = z3.If(a < 0, ~a, a) if signed else a
        return _msb(e, x, shiftamt)
    return f


def _clz(e, a):
    w = a.size()
    return z3.If(a == 0, z3.BitVecVal(w, e.w), _msb(e, a, True))


_ARITH: dict[str, Callable] = {
    "popc": _popc,
    "clz": _clz,
    "brev": lambda e, a: z3.Concat(*[z3.Extract(i, i, a) for i in range(a.size())]) if a.size() > 1 else a,
    "ubfind": _bfind(False, False), "sbfind": _bfind(True, False),
    "ubfind.shiftamt": _bfind(False, True), "sbfind.shiftamt": _bfind(True, True),
    "add": lambda e, a, b: a + b,
    "sub": lambda e, a, b: a - b,
    "mul": lambda e, a, b: a * b,
    "udiv": lambda e, a, b: z3.UDiv(a, b),
    "sdiv": lambda e, a, b: a / b,  # bvsdiv: truncates toward zero
    "urem": lambda e, a, b: z3.URem(a, b),
    "srem": lambda e, a, b: z3.SRem(a, b),  # the dividend's sign, as PTX rem.s
    "and": lambda e, a, b: a & b,
    "or": lambda e, a, b: a | b,
    "xor": lambda e, a, b: a ^ b,
    "not": lambda e, a: ~a,
    "neg": lambda e, a: -a,
    "shl": _shift("shl"),
    "shr": _shift("shr"),
    "sar": _shift("sar"),
    "smin": lambda e, a, b: z3.If(a <= b, a, b),
    "smax": lambda e, a, b: z3.If(a >= b, a, b),
    "umin": lambda e, a, b: z3.If(z3.ULE(a, b), a, b),
    "umax": lambda e, a, b: z3.If(z3.UGE(a, b), a, b),
    "inc": lambda e, r, b: z3.If(z3.UGE(r, b), z3.BitVecVal(0, e.w), r + 1),
    "dec": lambda e, r, b: z3.If(z3.Or(r == 0, z3.UGT(r, b)), b, r - 1),
    "cas": lambda e, r, b, c: z3.If(r == b, c, r),
    "zext": lambda e, a: z3.ZeroExt(e.w - a.size(), a),
    "sext": lambda e, a: z3.SignExt(e.w - a.size(), a),
    "trunc": lambda e, a: z3.Extract(e.w - 1, 0, a),
}
_CMPS: dict[str, Callable] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
    "ult": z3.ULT, "ule": z3.ULE, "ugt": z3.UGT, "uge": z3.UGE,
}


def _fit(t: z3.BitVecRef, w: int) -> z3.BitVecRef:
    if t.size() == w:
        return t
    return z3.Extract(w - 1, 0, t) if t.size() > w else z3.ZeroExt(w - t.size(), t)


def _cond(e: CondExpr, term: Callable) -> z3.BoolRef:
    """A condition as a Z3 formula; ``term(ref)`` gives (Observable, bit-vector)."""
    if isinstance(e, Cmp):
        o, a = term(e.lhs)
        if isinstance(e.rhs, int):
            b = z3.BitVecVal(e.rhs & ((1 << o.width) - 1), o.width)
            signed = o.signed
        else:
            o2, b = term(e.rhs)
            w = max(o.width, o2.width)
            a = z3.SignExt(w - o.width, a) if o.signed else z3.ZeroExt(w - o.width, a)
            b = z3.SignExt(w - o2.width, b) if o2.signed else z3.ZeroExt(w - o2.width, b)
            signed = o.signed or o2.signed
        if e.op in ("==", "!="):
            return a == b if e.op == "==" else a != b
        ops = {"<": (z3.ULT, "slt"), "<=": (z3.ULE, "sle"), ">": (z3.UGT, "sgt"), ">=": (z3.UGE, "sge")}
        return _CMPS[ops[e.op][1]](a, b) if signed else ops[e.op][0](a, b)
    if isinstance(e, And):
        return z3.And([_cond(a, term) for a in e.args])
    if isinstance(e, Or):
        return z3.Or([_cond(a, term) for a in e.args])
    if isinstance(e, Not):
        return z3.Not(_cond(e.arg, term))
    return z3.BoolVal(True)
