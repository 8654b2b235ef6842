""":mod:`ptxmm.ir.floats` operations as Z3 bit-vector terms, through Z3's floating-point theory:
each operand's bits are read as an IEEE float (``fpBVToFP``), the operation is the theory's (whose
rounding, zero signs and special cases are IEEE 754's), and the result goes back to bits with
``fpToIEEEBV`` — except a NaN, whose bits the theory leaves open: it is :func:`ptxmm.ir.floats.qnan`
here as in the Python evaluation (the event builder never lets those bits be observed, see
ir/floats.py). tests/ir/test_float.py holds this translation equal to the Python one."""

from __future__ import annotations

import z3

from ...ir import floats as F

_RM = {"rn": z3.RNE, "rz": z3.RTZ, "rm": z3.RTN, "rp": z3.RTP}


def _sort(w: int) -> z3.FPSortRef:
    return z3.Float32() if w == 32 else z3.Float64()


def _fp(x: z3.BitVecRef, w: int) -> z3.FPRef:
    return z3.fpBVToFP(x, _sort(w))


def _bits(f: z3.FPRef, w: int) -> z3.BitVecRef:
    return z3.If(z3.fpIsNaN(f), z3.BitVecVal(F.qnan(w), w), z3.fpToIEEEBV(f))


def _flush(f: z3.FPRef, w: int) -> z3.FPRef:
    s = _sort(w)
    return z3.If(z3.fpIsSubnormal(f), z3.If(z3.fpIsNegative(f), z3.fpMinusZero(s), z3.fpPlusZero(s)), f)


def _sat(f: z3.FPRef, w: int) -> z3.FPRef:
    s = _sort(w)
    one = z3.FPVal(1.0, s)
    return z3.If(z3.Or(z3.fpIsNaN(f), z3.fpLEQ(f, z3.fpPlusZero(s))), z3.fpPlusZero(s),
                 z3.If(z3.fpGT(f, one), one, f))


def _less(a: z3.FPRef, b: z3.FPRef) -> z3.BoolRef:
    """a < b with -0.0 < +0.0 (min/max)."""
    return z3.Or(z3.fpLT(a, b), z3.And(z3.fpIsZero(a), z3.fpIsZero(b), z3.fpIsNegative(a),
                                       z3.fpIsPositive(b)))


def _minmax(kind: str, a: z3.FPRef, b: z3.FPRef, w: int) -> z3.BitVecRef:
    pick = _less(a, b) if kind == "min" else _less(b, a)
    ab, bb = _bits(a, w), _bits(b, w)
    return z3.If(z3.And(z3.fpIsNaN(a), z3.fpIsNaN(b)), z3.BitVecVal(F.qnan(w), w),
                 z3.If(z3.fpIsNaN(a), bb, z3.If(z3.fpIsNaN(b), ab, z3.If(pick, ab, bb))))


def _compare(cmp: str, a: z3.FPRef, b: z3.FPRef) -> z3.BoolRef:
    nan = z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b))
    if cmp == "num":
        return z3.Not(nan)
    if cmp == "nan":
        return nan
    base = cmp[:-1] if cmp in F.UNORDERED else cmp
    rel = {"eq": z3.fpEQ, "ne": z3.fpNEQ, "lt": z3.fpLT, "le": z3.fpLEQ, "gt": z3.fpGT,
           "ge": z3.fpGEQ}[base](a, b)
    return z3.Or(nan, rel) if cmp in F.UNORDERED else z3.And(z3.Not(nan), rel)


def _testp(kind: str, f: z3.FPRef) -> z3.BoolRef:
    nan, inf = z3.fpIsNaN(f), z3.fpIsInf(f)
    return {"finite": z3.Not(z3.Or(nan, inf)), "infinite": inf, "number": z3.Not(nan), "notanumber": nan,
            "normal": z3.Or(z3.fpIsNormal(f), z3.fpIsZero(f)), "subnormal": z3.fpIsSubnormal(f)}[kind]


def _bit(c: z3.BoolRef) -> z3.BitVecRef:
    return z3.If(c, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1))


def _to_int(f: z3.FPRef, aw: int, w: int, rnd: str, signed: bool) -> z3.BitVecRef:
    s = _sort(aw)
    r = z3.fpRoundToIntegral(_RM[rnd](), f)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    top = z3.FPVal(float(hi + 1), s)  # 2^(w-1) or 2^w: exact in both formats
    low = z3.FPVal(float(lo), s)
    conv = z3.fpToSBV(z3.RTZ(), r, z3.BitVecSort(w)) if signed else z3.fpToUBV(z3.RTZ(), r, z3.BitVecSort(w))
    nan = 1 << (w - 1) if aw == 64 or w == 64 else 0  # PTX ISA, cvt (ir/floats.py, to_int)
    return z3.If(z3.fpIsNaN(f), z3.BitVecVal(nan, w),
                 z3.If(z3.fpGEQ(r, top), z3.BitVecVal(hi, w),
                       z3.If(z3.fpLEQ(r, low), z3.BitVecVal(lo & ((1 << w) - 1), w), conv)))


def _mknan(u: z3.BitVecRef, w: int) -> z3.BitVecRef:
    eb, sb = F.FORMATS[w]
    frac = u & z3.BitVecVal((1 << (sb - 1)) - 1, w)
    return (u & z3.BitVecVal(1 << (w - 1), w)) | z3.BitVecVal(((1 << eb) - 1) << (sb - 1), w) | \
        z3.If(frac == 0, z3.BitVecVal(1, w), frac)


def term(op: str, args: list, ws: tuple[int, ...], w: int, fps: list | None = None) -> z3.BitVecRef:
    """The bit-vector term of ``f.…`` operation ``op`` on ``args`` (bit-vectors of widths ``ws``);
    ``fps``: the floats some of them already are (None where not known)."""
    return fp_term(op, args, ws, w, fps)[0]


def fp_term(op: str, args: list, ws: tuple[int, ...], w: int,  # noqa: C901 — one case per op
            fps: list | None = None) -> tuple[z3.BitVecRef, z3.FPRef | None]:
    """:func:`term`, and the float the result is before it becomes bits (None: not a float, or
    a min/max, which picks an operand's bits): a later operation on it takes the float as it is
    rather than reading its bits back (every NaN behaves alike in the operations, so a NaN whose
    bits the event builder left unspecified is the same operand)."""
    _, name, *parts = op.split(".")
    rnd = next((p for p in parts if p in F.ROUNDINGS or p in F.INT_ROUNDINGS), "rn")
    rnd = F.INT_ROUNDINGS.get(rnd, rnd)
    ftz, sat = "ftz" in parts, "sat" in parts
    aw = ws[0] if ws else w
    if name == "mknan":
        return _mknan(args[0], w), None
    if name == "copysign":
        m = z3.BitVecVal((1 << (w - 1)) - 1, w)
        return (args[0] & ~m) | (args[1] & m), None
    if name == "cvt" and parts[-1] in ("s", "u"):
        conv = z3.fpSignedToFP if parts[-1] == "s" else z3.fpUnsignedToFP
        r = conv(_RM[rnd](), args[0], _sort(w))
        return _bits(r, w), r
    fs = [f if f is not None else _fp(a, aw) for a, f in zip(args, fps or [None] * len(args))]
    if ftz and aw == 32 and name != "isnan":  # .ftz: single-precision operands and results only
        fs = [_flush(f, aw) for f in fs]
    ftz = ftz and w == 32
    r = None
    if name in ("add", "sub", "mul", "div", "fma"):
        rm = _RM[rnd]()
        r = {"add": lambda: z3.fpAdd(rm, fs[0], fs[1]), "sub": lambda: z3.fpSub(rm, fs[0], fs[1]),
             "mul": lambda: z3.fpMul(rm, fs[0], fs[1]), "div": lambda: z3.fpDiv(rm, fs[0], fs[1]),
             "fma": lambda: z3.fpFMA(rm, fs[0], fs[1], fs[2])}[name]()
        r = _flush(r, w) if ftz else r
        r = _sat(r, w) if sat else r
    elif name in ("min", "max"):
        return _minmax(name, fs[0], fs[1], w), None
    elif name in ("neg", "abs"):
        r = z3.fpNeg(fs[0]) if name == "neg" else z3.fpAbs(fs[0])
    elif name in ("cmp", "testp", "isnan"):
        c = {"cmp": lambda: _compare(parts[0], fs[0], fs[1]), "testp": lambda: _testp(parts[0], fs[0]),
             "isnan": lambda: z3.fpIsNaN(fs[0])}[name]()
        return _bit(c), None
    elif name == "toint":
        return _to_int(fs[0], aw, w, rnd, parts[-1] == "s"), None
    elif name in ("cvt", "rint"):
        rm = _RM[rnd]()
        r = z3.fpFPToFP(rm, fs[0], _sort(w)) if name == "cvt" else z3.fpRoundToIntegral(rm, fs[0])
        r = _flush(r, w) if ftz else r
    if r is None:
        raise ValueError(f"unknown floating-point operation {op}")
    return _bits(r, w), r


__all__ = ["fp_term", "term"]
