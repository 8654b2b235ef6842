"""PTX floating point, bit-exact: IEEE 754 binary32 (``.f32``) and binary64 (``.f64``) values as
bit patterns, and the value operations of the floating-point instructions (PTX ISA 9.7.3) on them.

A float is its bit pattern (a :class:`ptxmm.ir.values.Expr` of width 32 or 64); each operation
is an ``Op`` whose name starts with ``f.`` and carries its modifiers: ``f.add.rn``,
``f.mul.rz.ftz.sat``, ``f.fma.rm``, ``f.div.rp``, ``f.min.ftz``, ``f.max``, ``f.neg``, ``f.abs``,
``f.cmp.ltu.ftz`` (a 1-bit result), ``f.cvt.rn.s`` / ``f.cvt.rz.u`` (a signed / unsigned integer
to a float), ``f.toint.rzi.s`` (a float to an integer of the result's width), ``f.cvt.rn``
(a float to a float of another width), ``f.rint.rni`` (to an integral float), ``f.testp.normal``,
``f.copysign``, ``f.isnan`` and ``f.mknan``. :func:`evaluate` is the exact semantics in Python
integers and fractions; the Z3 engine translates the same names into its floating-point theory
(engines/z3/floats.py), and tests/ir/test_float.py holds the two equal on random bit patterns.

What the ISA says, and what ptxmm does with it:

* "Instructions that support rounding modifiers are IEEE-754 compliant" (9.7.3): ``.rn`` ties to
  even, ``.rz``, ``.rm`` (toward -inf), ``.rp`` (toward +inf), exact intermediate results, one
  rounding (``fma``: one rounding of a*b+c), the zero signs of IEEE 754 6.3. An ``add``/``sub``/
  ``mul`` without a modifier is ``.rn`` (the ISA's default; ptxas "may" fold a mul/add pair
  without modifiers into an fma — ptxmm evaluates the instructions as written).
* ``.ftz``: "flushes subnormal inputs and results to sign-preserving zero": operands first, then
  the rounded result.
* ``.sat``: "clamps the result to [0.0, 1.0]. NaN results are flushed to +0.0f". ptxmm reads the
  interval's lower end as +0.0: a -0.0 result becomes +0.0 as a NaN does.
* NaN results: "Single-precision instructions return an unspecified NaN" (9.7.3), and ``neg``/
  ``abs``: "NaN inputs yield an unspecified NaN". The core operations here return the quiet NaN
  :func:`qnan`; the event builder replaces a NaN result by a NaN it leaves unspecified
  (:func:`float_value`: ``f.mknan`` of a fresh unspecified value), so no verdict depends on a
  NaN's bits. Double precision "supports NaN payloads"; ptxmm lets an f64 NaN result be any
  NaN too (a superset of the payload rule).
* ``min``/``max`` (9.7.3.11/12): a NaN operand yields the other operand, two NaNs a NaN, and
  "-0.0 < +0.0 here".
* ``setp`` (9.7.4): ``eq ne lt le gt ge`` are false when an operand is NaN, ``equ neu ltu leu
  gtu geu`` true; ``num``: neither is NaN, ``nan``: either is; -0.0 equals +0.0.
* ``cvt`` (9.7.9.21): integer → float rounds by ``.rn .rz .rm .rp``; float → integer rounds to an
  integral value by ``.rni .rzi .rmi .rpi`` and saturates to the integer's range ("the result is
  clamped to the destination range by default"), a NaN converting to 0 (to ``1 << (w - 1)`` from
  .f64 or to a 64-bit integer); f32 → f64 is exact, f64 → f32 rounds; ``.ftz`` flushes .f32
  operands and results only."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: fractions (and decimal) cost ~3 ms of every start
    from fractions import Fraction

FORMATS = {32: (8, 24), 64: (11, 53)}  # width → exponent bits, significand bits (hidden bit included)
ROUNDINGS = ("rn", "rz", "rm", "rp")
INT_ROUNDINGS = {"rni": "rn", "rzi": "rz", "rmi": "rm", "rpi": "rp"}
ORDERED = ("eq", "ne", "lt", "le", "gt", "ge")
UNORDERED = ("equ", "neu", "ltu", "leu", "gtu", "geu")
TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")
# operations whose result may be a NaN the ISA leaves unspecified
MAY_BE_NAN = ("add", "sub", "mul", "div", "fma", "min", "max", "neg", "abs", "cvt", "rint")


def _fmt(w: int) -> tuple[int, int, int]:
    eb, sb = FORMATS[w]
    return eb, sb, (1 << (eb - 1)) - 1


def qnan(w: int) -> int:
    """The quiet NaN the core operations return (its bits are never observed: see module doc)."""
    return (1 << (w - 1)) - 1


def one(w: int) -> int:
    eb, sb, bias = _fmt(w)
    return bias << (sb - 1)


def sign_of(x: int, w: int) -> int:
    return x >> (w - 1) & 1


def is_nan(x: int, w: int) -> bool:
    eb, sb, _ = _fmt(w)
    return (x >> (sb - 1)) & ((1 << eb) - 1) == (1 << eb) - 1 and x & ((1 << (sb - 1)) - 1) != 0


def is_inf(x: int, w: int) -> bool:
    eb, sb, _ = _fmt(w)
    return (x >> (sb - 1)) & ((1 << eb) - 1) == (1 << eb) - 1 and x & ((1 << (sb - 1)) - 1) == 0


def is_subnormal(x: int, w: int) -> bool:
    eb, sb, _ = _fmt(w)
    return (x >> (sb - 1)) & ((1 << eb) - 1) == 0 and x & ((1 << (sb - 1)) - 1) != 0


def is_zero(x: int, w: int) -> bool:
    return x & ((1 << (w - 1)) - 1) == 0


def magnitude(x: int, w: int) -> Fraction:
    """The absolute value of a finite float."""
    from fractions import Fraction
    eb, sb, bias = _fmt(w)
    e = (x >> (sb - 1)) & ((1 << eb) - 1)
    m = x & ((1 << (sb - 1)) - 1)
    if e == 0:
        return Fraction(m) * Fraction(2) ** (1 - bias - (sb - 1))
    return Fraction(m | (1 << (sb - 1))) * Fraction(2) ** (e - bias - (sb - 1))


def value(x: int, w: int) -> Fraction:
    """The value of a finite float (a zero's sign dropped)."""
    v = magnitude(x, w)
    return -v if sign_of(x, w) else v


def flush(x: int, w: int) -> int:
    """``.ftz``: a subnormal becomes the zero of its sign."""
    return (x >> (w - 1)) << (w - 1) if is_subnormal(x, w) else x


def zero(sign: int, w: int) -> int:
    return sign << (w - 1)


def inf(sign: int, w: int) -> int:
    eb, sb, _ = _fmt(w)
    return sign << (w - 1) | ((1 << eb) - 1) << (sb - 1)


def round_to(v: Fraction, w: int, rnd: str, zero_sign: int = 0) -> int:
    """The float of width ``w`` nearest ``v`` by rounding ``rnd`` (rn rz rm rp): IEEE 754's
    rounding of an exact value, overflow to infinity or the largest finite number by the
    direction, subnormal results kept. An exact zero is the zero of ``zero_sign``."""
    from fractions import Fraction
    if v == 0:
        return zero(zero_sign, w)
    sign = int(v < 0)
    mag = -v if sign else v
    eb, sb, bias = _fmt(w)
    emin = 1 - bias
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    elif Fraction(2) ** (e + 1) <= mag:
        e += 1
    e = max(e, emin)
    scaled = mag / Fraction(2) ** (e - (sb - 1))
    n, rem = divmod(scaled.numerator, scaled.denominator)
    if rem:
        half = Fraction(rem, scaled.denominator)
        up = {"rn": half > Fraction(1, 2) or (half == Fraction(1, 2) and n & 1 == 1),
              "rz": False, "rm": sign == 1, "rp": sign == 0}[rnd]
        n += int(up)
    if n == 1 << sb:
        n, e = n >> 1, e + 1
    if e > bias:  # overflow
        to_inf = rnd == "rn" or (rnd == "rp" and not sign) or (rnd == "rm" and sign)
        return inf(sign, w) if to_inf else inf(sign, w) - 1
    if n < 1 << (sb - 1):  # subnormal (or zero)
        return sign << (w - 1) | n
    return sign << (w - 1) | (e + bias) << (sb - 1) | (n - (1 << (sb - 1)))


def _exact_zero_sign(rnd: str) -> int:
    """IEEE 754 6.3: an exact zero sum of operands of opposite signs is +0, -0 rounding to -inf."""
    return 1 if rnd == "rm" else 0


def add(a: int, b: int, w: int, rnd: str) -> int:
    if is_nan(a, w) or is_nan(b, w):
        return qnan(w)
    if is_inf(a, w) or is_inf(b, w):
        if is_inf(a, w) and is_inf(b, w) and sign_of(a, w) != sign_of(b, w):
            return qnan(w)
        return a if is_inf(a, w) else b
    if is_zero(a, w) and is_zero(b, w) and sign_of(a, w) == sign_of(b, w):
        return a
    return round_to(value(a, w) + value(b, w), w, rnd, _exact_zero_sign(rnd))


def mul(a: int, b: int, w: int, rnd: str) -> int:
    if is_nan(a, w) or is_nan(b, w):
        return qnan(w)
    s = sign_of(a, w) ^ sign_of(b, w)
    if is_inf(a, w) or is_inf(b, w):
        return qnan(w) if is_zero(a, w) or is_zero(b, w) else inf(s, w)
    return round_to(value(a, w) * value(b, w), w, rnd, s)


def div(a: int, b: int, w: int, rnd: str) -> int:
    if is_nan(a, w) or is_nan(b, w):
        return qnan(w)
    s = sign_of(a, w) ^ sign_of(b, w)
    if is_inf(a, w):
        return qnan(w) if is_inf(b, w) else inf(s, w)
    if is_inf(b, w):
        return zero(s, w)
    if is_zero(b, w):
        return qnan(w) if is_zero(a, w) else inf(s, w)
    return round_to(value(a, w) / value(b, w), w, rnd, s)


def fma(a: int, b: int, c: int, w: int, rnd: str) -> int:
    if is_nan(a, w) or is_nan(b, w) or is_nan(c, w):
        return qnan(w)
    s = sign_of(a, w) ^ sign_of(b, w)
    if is_inf(a, w) or is_inf(b, w):
        if is_zero(a, w) or is_zero(b, w) or (is_inf(c, w) and sign_of(c, w) != s):
            return qnan(w)
        return inf(s, w)
    if is_inf(c, w):
        return c
    p = value(a, w) * value(b, w)
    if p == 0 and is_zero(c, w):
        return zero(s, w) if s == sign_of(c, w) else zero(_exact_zero_sign(rnd), w)
    return round_to(p + value(c, w), w, rnd, _exact_zero_sign(rnd))


def saturate(x: int, w: int) -> int:
    """``.sat``: NaN and everything up to 0.0 (-0.0 included) → +0.0, above 1.0 → 1.0."""
    if is_nan(x, w) or is_zero(x, w) or sign_of(x, w):
        return 0
    if is_inf(x, w) or value(x, w) > 1:
        return one(w)
    return x


def _less(a: int, b: int, w: int) -> bool:
    """a < b for non-NaN floats, with -0.0 < +0.0 (min/max)."""
    if is_zero(a, w) and is_zero(b, w):
        return sign_of(a, w) > sign_of(b, w)
    return _key(a, w) < _key(b, w)


def _key(x: int, w: int) -> Fraction | float:
    if is_inf(x, w):
        return float("-inf") if sign_of(x, w) else float("inf")
    return value(x, w)


def minmax(kind: str, a: int, b: int, w: int) -> int:
    na, nb = is_nan(a, w), is_nan(b, w)
    if na and nb:
        return qnan(w)
    if na or nb:
        return b if na else a
    if kind == "min":
        return a if _less(a, b, w) else b
    return a if _less(b, a, w) else b


def compare(cmp: str, a: int, b: int, w: int) -> bool:
    nan = is_nan(a, w) or is_nan(b, w)
    if cmp == "num":
        return not nan
    if cmp == "nan":
        return nan
    if nan:
        return cmp in UNORDERED
    x, y = _key(a, w), _key(b, w)
    base = cmp[:-1] if cmp in UNORDERED else cmp
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[base]


def testp(kind: str, x: int, w: int) -> bool:
    nan, inf_ = is_nan(x, w), is_inf(x, w)
    return {"finite": not (nan or inf_), "infinite": inf_, "number": not nan, "notanumber": nan,
            "normal": not (nan or inf_ or is_subnormal(x, w)), "subnormal": is_subnormal(x, w)}[kind]


def from_int(v: int, w: int, rnd: str) -> int:
    from fractions import Fraction
    return round_to(Fraction(v), w, rnd)


def _round_integral(v: Fraction, rnd: str) -> int:
    from fractions import Fraction
    fl = v.numerator // v.denominator
    frac = v - fl
    if frac == 0:
        return fl
    if rnd == "rn":
        return fl + (1 if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl & 1) else 0)
    return {"rz": fl + (1 if v < 0 else 0), "rm": fl, "rp": fl + 1}[rnd]


def to_int(x: int, aw: int, w: int, rnd: str, signed: bool) -> int:
    """A float of width ``aw`` to an integer of width ``w`` (two's complement bits): rounded to an
    integral value, clamped to the type's range; a NaN is 0 unless the source is .f64 or the
    destination 64-bit, then ``1 << (w - 1)`` (PTX ISA, cvt: "Zero if source is not .f64 and
    destination is not .s64, .u64. Otherwise 1 << (BitWidth(dst) - 1)")."""
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    if is_nan(x, aw):
        return 1 << (w - 1) if aw == 64 or w == 64 else 0
    if is_inf(x, aw):
        n = lo if sign_of(x, aw) else hi
    else:
        n = min(max(_round_integral(value(x, aw), rnd), lo), hi)
    return n & ((1 << w) - 1)


def rint(x: int, w: int, rnd: str) -> int:
    """``cvt.rni.f32.f32``: the integral float by ``rnd``; a zero result keeps the input's sign."""
    from fractions import Fraction
    if is_nan(x, w):
        return qnan(w)
    if is_inf(x, w) or is_zero(x, w):
        return x
    return round_to(Fraction(_round_integral(value(x, w), rnd)), w, "rn", sign_of(x, w))


def convert(x: int, aw: int, w: int, rnd: str) -> int:
    """A float of width ``aw`` to width ``w`` (exact when widening)."""
    if is_nan(x, aw):
        return qnan(w)
    if is_inf(x, aw):
        return inf(sign_of(x, aw), w)
    return round_to(value(x, aw), w, rnd, sign_of(x, aw))


def mknan(u: int, w: int) -> int:
    """A NaN made of the bits of ``u``: its sign and fraction (a zero fraction made 1). Every NaN
    is ``mknan`` of some ``u``."""
    eb, sb, _ = _fmt(w)
    frac = u & ((1 << (sb - 1)) - 1)
    return (u >> (w - 1) << (w - 1)) | ((1 << eb) - 1) << (sb - 1) | (frac or 1)


def _mods(parts: list[str]) -> tuple[str, bool, bool]:
    rnd = next((p for p in parts if p in ROUNDINGS or p in INT_ROUNDINGS), "rn")
    return rnd, "ftz" in parts, "sat" in parts


def evaluate(op: str, vals: list[int], ws: tuple[int, ...], w: int) -> int:  # noqa: C901 — one case per op
    """The value of ``f.…`` operation ``op`` on bit patterns ``vals`` (of widths ``ws``), as a
    ``w``-bit pattern."""
    _, name, *parts = op.split(".")
    rnd, ftz, sat = _mods(parts)
    aw = ws[0] if ws else w
    # .ftz flushes single-precision operands and results only (cvt: "applies only to single
    # precision (.f32) inputs and results")
    if ftz and aw == 32 and name not in ("isnan", "mknan", "copysign") and \
            not (name == "cvt" and parts[-1] in "su"):
        vals = [flush(v, aw) for v in vals]
    ftz = ftz and w == 32
    if name in ("add", "sub", "mul", "div", "fma"):
        a = vals[0]
        if name == "add":
            r = add(a, vals[1], w, rnd)
        elif name == "sub":
            r = add(a, vals[1] ^ (1 << (w - 1)), w, rnd)
        elif name == "mul":
            r = mul(a, vals[1], w, rnd)
        elif name == "div":
            r = div(a, vals[1], w, rnd)
        else:
            r = fma(a, vals[1], vals[2], w, rnd)
        r = flush(r, w) if ftz else r
        return saturate(r, w) if sat else r
    if name in ("min", "max"):
        return minmax(name, vals[0], vals[1], w)
    if name == "neg":
        return qnan(w) if is_nan(vals[0], w) else vals[0] ^ (1 << (w - 1))
    if name == "abs":
        return qnan(w) if is_nan(vals[0], w) else vals[0] & ((1 << (w - 1)) - 1)
    if name == "cmp":
        return int(compare(parts[0], vals[0], vals[1], aw))
    if name == "testp":
        return int(testp(parts[0], vals[0], aw))
    if name == "isnan":
        return int(is_nan(vals[0], aw))
    if name == "mknan":
        return mknan(vals[0], w)
    if name == "copysign":  # copysign d, a, b: the sign of a, the rest of b
        return (vals[0] >> (w - 1) << (w - 1)) | (vals[1] & ((1 << (w - 1)) - 1))
    if name == "cvt" and parts[-1] in ("s", "u"):  # integer → float
        v = vals[0] - (1 << aw) if parts[-1] == "s" and vals[0] >> (aw - 1) else vals[0]
        return from_int(v, w, rnd)
    if name == "cvt":
        r = convert(vals[0], aw, w, rnd)
        return flush(r, w) if ftz else r
    if name == "toint":
        return to_int(vals[0], aw, w, INT_ROUNDINGS.get(rnd, rnd), parts[-1] == "s")
    if name == "rint":
        r = rint(vals[0], w, INT_ROUNDINGS.get(rnd, rnd))
        return flush(r, w) if ftz else r
    raise ValueError(f"unknown floating-point operation {op}")


def may_be_nan(op: str) -> bool:
    """Whether operation ``op`` can return a NaN (then the ISA leaves its bits unspecified)."""
    parts = op.split(".")
    int_source = parts[1] == "cvt" and parts[-1] in ("s", "u")
    return parts[1] in MAY_BE_NAN and "sat" not in parts and not int_source


def split_source(op: str) -> tuple[str, str | None]:
    """An instruction's operation ``f.cvt.rn.s:s64`` → (``f.cvt.rn.s``, the type its source is
    read at, ``s64``); without ``:``, the instruction's own type (None)."""
    name, _, src = op.partition(":")
    return name, src or None


def float_bits(text: float | str, w: int) -> int:
    """The bits of a decimal literal rounded to nearest at width ``w`` (Python's exact parse of
    the decimal text, then one rounding)."""
    from fractions import Fraction
    s = str(text).strip().lower()
    if s in ("inf", "+inf", "infinity", "+infinity"):
        return inf(0, w)
    if s in ("-inf", "-infinity"):
        return inf(1, w)
    neg = s.startswith("-")
    v = Fraction(s.lstrip("+-"))
    return round_to(-v if neg else v, w, "rn", int(neg))


__all__ = ["FORMATS", "ORDERED", "UNORDERED", "evaluate", "float_bits", "may_be_nan", "qnan", "round_to",
           "split_source"]
