"""Floating point (ir/floats.py): the Python evaluation is IEEE 754 bit-exact (checked against the
host's binary32/binary64 arithmetic where Python has it), and the Z3 translation
(engines/z3/floats.py) gives the same bits on random patterns — NaNs, infinities, subnormals,
signed zeros and ordinary numbers alike — for every operation, rounding mode and modifier."""

from __future__ import annotations

import math
import struct

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxmm.engines.z3.values import Values
from ptxmm.ir import floats as F
from ptxmm.ir.values import Const, Op, evaluate


def bits32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f64(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def special(w: int):
    """Bit patterns weighted to the interesting ones: zeros, subnormals, the largest finite, one,
    infinities, NaNs, and anything."""
    eb, sb = F.FORMATS[w]
    top = ((1 << eb) - 1) << (sb - 1)
    picks = [0, 1, (1 << (sb - 1)) - 1, 1 << (sb - 1), top - 1, top, top | 1, top | (1 << (sb - 2)),
             F.one(w), F.one(w) + 1, F.one(w) - 1]
    signed = [p | s for p in picks for s in (0, 1 << (w - 1))]
    return st.one_of(st.sampled_from(signed), st.integers(0, (1 << w) - 1),
                     st.integers(0, (1 << w) - 1).map(lambda x: x & ~(top)))  # subnormals


def z3_value(op: str, args: list[int], ws: tuple[int, ...], w: int) -> int:
    e = Op(op, tuple(Const(a, aw) for a, aw in zip(args, ws)), w)
    t = z3.simplify(Values(lambda eid: None).bv(e))
    assert z3.is_bv_value(t), t
    return t.as_long()


def py_value(op: str, args: list[int], ws: tuple[int, ...], w: int) -> int:
    return evaluate(Op(op, tuple(Const(a, aw) for a, aw in zip(args, ws)), w), {})


ARITH = [f"f.{name}.{rnd}{mod}" for name in ("add", "sub", "mul", "div") for rnd in F.ROUNDINGS
         for mod in ("", ".ftz", ".ftz.sat", ".sat")]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(ARITH), special(32), special(32))
def test_f32_arithmetic_python_equals_z3(op, a, b):
    assert py_value(op, [a, b], (32, 32), 32) == z3_value(op, [a, b], (32, 32), 32)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([f"f.fma.{r}{m}" for r in F.ROUNDINGS for m in ("", ".ftz", ".sat")]),
       special(32), special(32), special(32))
def test_f32_fma_python_equals_z3(op, a, b, c):
    assert py_value(op, [a, b, c], (32,) * 3, 32) == z3_value(op, [a, b, c], (32,) * 3, 32)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([f"f.{n}.{r}" for n in ("add", "mul", "div", "fma") for r in F.ROUNDINGS]),
       special(64), special(64), special(64))
def test_f64_arithmetic_python_equals_z3(op, a, b, c):
    n = 3 if ".fma." in op else 2
    assert py_value(op, [a, b, c][:n], (64,) * n, 64) == z3_value(op, [a, b, c][:n], (64,) * n, 64)


OTHERS = ["f.min", "f.max", "f.min.ftz", "f.max.ftz", "f.neg", "f.abs", "f.neg.ftz", "f.abs.ftz",
          "f.copysign", "f.isnan", "f.mknan"]
OTHERS += [f"f.cmp.{c}{m}" for c in F.ORDERED + F.UNORDERED + ("num", "nan") for m in ("", ".ftz")]
OTHERS += [f"f.testp.{k}" for k in F.TESTP] + [f"f.rint.{r}" for r in F.INT_ROUNDINGS]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(OTHERS), special(32), special(32))
def test_f32_other_operations_python_equals_z3(op, a, b):
    two = op.split(".")[1] in ("min", "max", "cmp", "copysign")
    args, ws = ([a, b], (32, 32)) if two else ([a], (32,))
    w = 1 if op.split(".")[1] in ("cmp", "testp", "isnan") else 32
    assert py_value(op, args, ws, w) == z3_value(op, args, ws, w)


INT_TO_FLOAT = [(f"f.cvt.{r}.{s}", iw, fw) for r in F.ROUNDINGS for s in "su" for iw in (32, 64)
                for fw in (32, 64)]
FLOAT_TO_INT = [(f"f.toint.{r}.{s}", fw, iw) for r in F.INT_ROUNDINGS for s in "su" for iw in (16, 32, 64)
                for fw in (32, 64)]
FLOAT_TO_FLOAT = [(f"f.cvt.{r}{m}", 64, 32) for r in F.ROUNDINGS for m in ("", ".ftz")] + \
    [("f.cvt.rn", 32, 64), ("f.cvt.rn.ftz", 32, 64)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(INT_TO_FLOAT + FLOAT_TO_INT + FLOAT_TO_FLOAT), st.data())
def test_conversions_python_equal_z3(conv, data):
    op, aw, w = conv
    x = data.draw(st.integers(0, (1 << aw) - 1) if conv in INT_TO_FLOAT else special(aw))
    assert py_value(op, [x], (aw,), w) == z3_value(op, [x], (aw,), w)


# ----- against the host's IEEE binary64 (Python floats) ---------------------------------------------

finite64 = st.floats(allow_nan=False, allow_infinity=True, width=64)


@settings(max_examples=300, deadline=None)
@given(finite64, finite64)
def test_f64_round_to_nearest_is_the_hosts(a, b):
    for op, ref in (("f.add.rn", a + b), ("f.mul.rn", a * b), ("f.sub.rn", a - b)):
        if math.isnan(ref):
            assert F.is_nan(py_value(op, [bits64(a), bits64(b)], (64, 64), 64), 64)
        else:
            assert py_value(op, [bits64(a), bits64(b)], (64, 64), 64) == bits64(ref)
    if b != 0 and not (math.isinf(a) and math.isinf(b)):
        assert py_value("f.div.rn", [bits64(a), bits64(b)], (64, 64), 64) == bits64(a / b)


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32, allow_nan=False), st.floats(width=32, allow_nan=False))
def test_f32_round_to_nearest_is_double_rounded_exactly(a, b):
    # a float sum/product of two binary32 values is exact in binary64 (products: 48 bits), so
    # rounding the binary64 result once to binary32 is the correctly rounded binary32 result
    for op, ref in (("f.add.rn", a + b), ("f.mul.rn", a * b)):
        got = py_value(op, [bits32(a), bits32(b)], (32, 32), 32)
        if math.isnan(ref):
            assert F.is_nan(got, 32)
        elif abs(ref) >= 2.0 ** 128 * (1 - 2.0 ** -25):  # past the largest float + half an ulp
            assert got == F.inf(int(ref < 0), 32)
        elif math.isinf(ref) or abs(ref) <= 3.4028234663852886e38:
            assert got == bits32(ref)


@pytest.mark.parametrize("text, w, bits", [("1.5", 32, 0x3FC00000), ("0.1", 32, 0x3DCCCCCD),
                                            ("-0.0", 32, 0x80000000), ("1e39", 32, 0x7F800000),
                                            ("0.1", 64, 0x3FB999999999999A), ("1.4e-45", 32, 1)])
def test_decimal_literals_round_to_nearest(text, w, bits):
    assert F.float_bits(text, w) == bits


def test_zero_signs_follow_ieee():
    pz, nz, one = 0, 0x80000000, F.one(32)
    assert py_value("f.add.rn", [pz, nz], (32, 32), 32) == pz
    assert py_value("f.add.rm", [pz, nz], (32, 32), 32) == nz
    assert py_value("f.sub.rn", [one, one], (32, 32), 32) == pz
    assert py_value("f.sub.rm", [one, one], (32, 32), 32) == nz
    assert py_value("f.add.rn", [nz, nz], (32, 32), 32) == nz


def test_min_max_follow_the_isa():
    nan, one, pz, nz = 0x7FC00000, F.one(32), 0, 0x80000000
    assert py_value("f.min", [nan, one], (32, 32), 32) == one  # a NaN operand: the other one
    assert py_value("f.max", [one, nan], (32, 32), 32) == one
    assert F.is_nan(py_value("f.min", [nan, nan], (32, 32), 32), 32)
    assert py_value("f.min", [pz, nz], (32, 32), 32) == nz  # "-0.0 < +0.0 here"
    assert py_value("f.max", [nz, pz], (32, 32), 32) == pz


def test_ftz_flushes_subnormal_operands_and_results():
    tiny = 1  # the smallest subnormal
    assert py_value("f.add.rn", [tiny, tiny], (32, 32), 32) == 2
    assert py_value("f.add.rn.ftz", [tiny, tiny], (32, 32), 32) == 0
    assert py_value("f.add.rn.ftz", [0x80000001, 0], (32, 32), 32) == 0  # -sub + +0 → -0 + +0 = +0
    half_min = bits32(2.0 ** -126)
    assert py_value("f.mul.rn.ftz", [half_min, bits32(0.5)], (32, 32), 32) == 0


def test_float_to_int_saturates_and_nan_is_zero():
    assert py_value("f.toint.rzi.s", [bits32(3e9)], (32,), 32) == 0x7FFFFFFF
    assert py_value("f.toint.rzi.s", [bits32(-3e9)], (32,), 32) == 0x80000000
    assert py_value("f.toint.rni.s", [bits32(2.5)], (32,), 32) == 2
    assert py_value("f.toint.rni.s", [bits32(3.5)], (32,), 32) == 4
    assert py_value("f.toint.rmi.s", [bits32(-0.5)], (32,), 32) == 0xFFFFFFFF
    assert py_value("f.toint.rzi.u", [bits32(-7.0)], (32,), 32) == 0
    assert py_value("f.toint.rzi.s", [0x7FC00000], (32,), 32) == 0


def test_comparisons_with_nan():
    nan, one = 0x7FC00000, F.one(32)
    assert py_value("f.cmp.lt", [nan, one], (32, 32), 1) == 0
    assert py_value("f.cmp.ltu", [nan, one], (32, 32), 1) == 1
    assert py_value("f.cmp.ne", [nan, one], (32, 32), 1) == 0
    assert py_value("f.cmp.neu", [nan, nan], (32, 32), 1) == 1
    assert py_value("f.cmp.eq", [0, 0x80000000], (32, 32), 1) == 1


def test_every_nan_is_mknan_of_some_value():
    for nan in (0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0xFF800001):
        assert F.mknan(nan, 32) == nan
        assert F.is_nan(F.mknan(nan & 0x807FFFFF, 32), 32)
    assert F.is_nan(F.mknan(0, 32), 32)


# ----- chains of operations on read values: the Z3 side takes a result as a float ---------------------

CHAIN_OPS = ["f.add.rn", "f.mul.rz", "f.sub.rm.ftz", "f.div.rp", "f.min", "f.neg", "f.add.rn.sat"]


@settings(max_examples=120, deadline=None)
@given(st.lists(st.sampled_from(CHAIN_OPS), min_size=1, max_size=3),
       st.lists(special(32), min_size=4, max_size=4), st.integers(0, (1 << 32) - 1))
def test_chains_of_float_results_python_equals_z3(ops, inputs, nan_bits):
    from ptxmm.ir.values import ReadVal, Unspec, float_result, unspec_key

    unspecs: list[Unspec] = []

    def fresh() -> Unspec:
        unspecs.append(Unspec(len(unspecs), 32))
        return unspecs[-1]

    e = ReadVal(0, 32)
    for k, op in enumerate(ops):
        args = [e] if op == "f.neg" else [e, ReadVal(k + 1, 32)]
        e = float_result(op, args, 32, fresh)
    reads = {i: v for i, v in enumerate(inputs)} | {unspec_key(u.uid): nan_bits for u in unspecs}
    vals = Values(lambda eid: z3.BitVecVal(inputs[eid], 32))
    t = vals.bv(e)
    if vals.unspec:
        t = z3.substitute(t, *[(c, z3.BitVecVal(nan_bits, 32)) for c in vals.unspec.values()])
    t = z3.simplify(t)
    assert t.as_long() == evaluate(e, reads)
