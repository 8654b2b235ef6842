"""The integer translation of value expressions (ptxmm.engines.z3.intterms) is exact: for random
expressions over bounded leaves and random leaf values within the bounds, the integer term's value
is the bit-vector expression's unsigned value (ptxmm.ir.values.evaluate), comparisons included —
whether the interval analysis chose the integer form or the bit-vector fallback."""

from __future__ import annotations

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxmm.engines.z3.intterms import IntTerms
from ptxmm.ir.values import Const, Op, ReadVal, evaluate, mk

# leaf id → (width, lowest, highest): a thread id below 1024, a CTA id below 2^20, a full-range
# 32-bit loaded value, a 16-bit one
LEAVES = {0: (32, 0, 1023), 1: (32, 0, (1 << 20) - 1), 1000: (32, 0, (1 << 32) - 1), 1001: (16, 0, 65535)}


def _values(data) -> dict[int, int]:
    """Leaf values within the bounds, often at their edges (where a wrap shows)."""
    return {i: data.draw(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, hi // 2 + 1, hi - 1])))
            for i, (_, lo, hi) in LEAVES.items()}


def _leaf(w: int):
    return st.sampled_from([ReadVal(i, lw) for i, (lw, _, _) in LEAVES.items() if lw == w])


def _exprs(w: int, depth: int):
    base = st.one_of(_leaf(w), st.integers(0, (1 << w) - 1).map(lambda v: Const(v, w)))
    if depth == 0:
        return base
    sub = _exprs(w, depth - 1)
    k = st.integers(0, w - 1).map(lambda v: Const(v, 32 if w >= 32 else w))
    return st.one_of(
        base,
        st.tuples(st.sampled_from(["add", "sub", "mul", "umin", "smax"]), sub, sub)
        .map(lambda t: mk(t[0], t[1], t[2], w=w)),
        st.tuples(st.sampled_from(["shl", "shr", "sar"]), sub, k).map(lambda t: mk(t[0], t[1], t[2], w=w)),
        st.tuples(sub, st.integers(1, 12)).map(lambda t: mk("and", t[0], Const((1 << t[1]) - 1, w), w=w)),
        st.tuples(st.sampled_from(["urem", "udiv"]), sub, st.integers(1, 100))
        .map(lambda t: mk(t[0], t[1], Const(t[2], w), w=w)),
        st.tuples(st.sampled_from(["slt", "ult", "eq", "sge"]), sub, sub, sub, sub)
        .map(lambda t: mk("ite", mk(t[0], t[1], t[2]), t[3], t[4])),
    )


def _widened(depth: int):
    """64-bit expressions built on 32-bit ones by zext/sext (address arithmetic), and 16→32."""
    return st.one_of(
        _exprs(32, depth),
        st.tuples(st.sampled_from(["zext", "sext"]), _exprs(32, depth))
        .map(lambda t: mk(t[0], t[1], w=64)),
        st.tuples(st.sampled_from(["zext", "sext"]), _exprs(16, depth))
        .map(lambda t: mk(t[0], t[1], w=32)),
        st.tuples(st.sampled_from(["zext", "sext"]), _exprs(32, depth))
        .map(lambda t: mk("trunc", mk(t[0], t[1], w=64), w=32)),
    )


@settings(max_examples=300, deadline=None)
@given(e=_widened(3), data=st.data())
def test_integer_term_equals_bit_vector_value(e, data):
    values = _values(data)
    ints = {i: z3.Int(f"v{i}") for i in LEAVES}
    terms = IntTerms(lambda r: (ints[r.eid], LEAVES[r.eid][1:]))
    term, lo, hi = terms.val(e)
    want = evaluate(e, values)
    assert lo <= want <= hi, (e, values)
    s = z3.Solver()
    s.add(*[ints[i] == v for i, v in values.items()])
    s.add(term != want)
    assert s.check() == z3.unsat, (e, values, want)


@settings(max_examples=150, deadline=None)
@given(a=_exprs(32, 2), b=_exprs(32, 2), op=st.sampled_from(["slt", "sle", "ult", "uge", "eq", "ne"]),
       data=st.data())
def test_integer_comparison_equals_bit_vector_comparison(a, b, op, data):
    values = _values(data)
    ints = {i: z3.Int(f"v{i}") for i in LEAVES}
    terms = IntTerms(lambda r: (ints[r.eid], LEAVES[r.eid][1:]))
    e = Op(op, (a, b), 1)
    s = z3.Solver()
    s.add(*[ints[i] == v for i, v in values.items()])
    s.add(terms.bool(e) != bool(evaluate(e, values)))
    assert s.check() == z3.unsat, (e, values)
