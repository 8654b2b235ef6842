"""popc, clz, brev and bfind{.shiftamt} in kernels (``__popc``, ``__clz``, ``__brev``, ``__ffs``):
the PTX ISA's definitions written out here independently, Python's evaluation and Z3's equal on
every operand, and nvcc's PTX of the intrinsics checked on both engines; ``mov.b64`` packing and
unpacking a vector of halves (the first element the least significant)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.errors import ParseError
from ptxmm.ir.values import BIT_OPS, Const, Op, evaluate

z3 = pytest.importorskip("z3")
from ptxmm.engines.z3.values import _ARITH  # noqa: E402  (after the skip)

DATA = Path(__file__).parent.parent / "data" / "bits"


def _spec(op: str, a: int, w: int) -> int:
    """The ISA's words: popc counts 1 bits; clz counts leading 0 bits (w for 0); brev reverses the
    bits; bfind finds the most significant 1 bit (signed: non-sign bit), 0xFFFFFFFF for none, and
    .shiftamt gives the shift that moves it to the top."""
    bits = [(a >> i) & 1 for i in range(w)]
    if op == "popc":
        return sum(bits)
    if op == "clz":
        n = 0
        for i in reversed(range(w)):
            if bits[i]:
                break
            n += 1
        return n
    if op == "brev":
        return sum(bits[w - 1 - i] << i for i in range(w))
    signed = op.startswith("s")
    want = 1 - bits[w - 1] if signed else 1
    for i in reversed(range(w - 1 if signed else w)):
        if bits[i] == want:
            return (w - 1 - i) if op.endswith("shiftamt") else i
    return 0xFFFFFFFF


def _z3(op: str, a: int, w: int) -> int:
    rw = w if op == "brev" else 32
    e = Op(op, (Const(a, w),), rw)
    t = _ARITH[op](e, z3.BitVecVal(a, w))
    return z3.simplify(t).as_long()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(BIT_OPS)), st.sampled_from([32, 64]), st.data())
def test_python_and_z3_follow_the_isa(op, w, data):
    edges = [0, 1, (1 << w) - 1, 1 << (w - 1)]
    a = data.draw(st.one_of(st.integers(0, (1 << w) - 1), st.sampled_from(edges)))
    want = _spec(op, a, w) & (((1 << w) - 1) if op == "brev" else 0xFFFFFFFF)
    rw = w if op == "brev" else 32
    assert evaluate(Op(op, (Const(a, w),), rw), {}) == want
    assert _z3(op, a, w) == want


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_the_intrinsics_in_a_kernel(engine):
    """``__popc``, ``__clz``, ``__brev``, ``__ffs`` on loaded values: the condition names every result."""
    res = ptxmm.check(ptxmm.load(str(DATA / "bits.ptx")), engine=engine)
    assert res.holds is True and len(res.outcomes) == 1


def test_a_wrong_type_is_a_located_error(tmp_path):
    text = (DATA / "bits.ptx").read_text().replace("popc.b32", "popc.u32", 1)
    (tmp_path / "bits.ptx").write_text(text)
    (tmp_path / "bits.cu").write_text((DATA / "bits.cu").read_text())
    with pytest.raises(ParseError, match="expected form: popc.type d, a"):
        ptxmm.check(ptxmm.load(str(tmp_path / "bits.ptx")))


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_mov_packs_and_unpacks_halves(engine):
    """``mov.b64 {lo, hi}, d`` and ``mov.b64 d, {hi, lo}`` on a loaded 0x0000000500000007: 7 and 5,
    then 0x0000000700000005 (PTX ISA, mov: "d = a.x | (a.y << 32)")."""
    res = ptxmm.check(ptxmm.load(str(DATA / "pack.ptx")), engine=engine)
    assert res.holds is True and len(res.outcomes) == 1


def test_a_mov_of_three_halves_is_a_located_error(tmp_path):
    text = re.sub(r"mov\.b64\s+\{%r1, %r2\}", "mov.b32 {%r1, %r2, %r1}", (DATA / "pack.ptx").read_text())
    assert "{%r1, %r2, %r1}" in text
    (tmp_path / "pack.ptx").write_text(text)
    (tmp_path / "pack.cu").write_text((DATA / "pack.cu").read_text())
    with pytest.raises(ptxmm.PtxmmError) as e:
        ptxmm.check(ptxmm.load(str(tmp_path / "pack.ptx")))
    assert e.value.pos is not None
