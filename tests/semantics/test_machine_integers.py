"""Values are machine integers: registers have the width of their type, arithmetic wraps, `.s`
compares and shifts signed, `.u`/`.b` unsigned, and outcomes print as the type reads. Each value
below is what the PTX ISA prescribes; both engines must produce it."""

from __future__ import annotations

import pytest

import ptxmm

BODY = """
  mov.u32 %r0, 0xFFFFFFFF;
  add.u32 %r1, %r0, 1;
  sub.u32 %r2, 0, 1;
  setp.lt.s32 %p0, %r0, 0;
  setp.lt.u32 %p1, %r0, 0;
  selp.u32 %r4, 1, 0, %p0;
  selp.u32 %r5, 1, 0, %p1;
  mov.s32 %r6, -8;
  shr.s32 %r7, %r6, 1;
  shr.u32 %r8, %r6, 1;
  shl.b32 %r9, 1, 40;
  mov.u64 %rd0, 0xFFFFFFFF;
  add.u64 %rd1, %rd0, 1;
  min.s32 %r11, %r6, 3;
  min.u32 %r12, %r6, 3;
  mul.lo.u32 %r13, %r0, %r0;
  atom.global.inc.u32 %r14, [x], 2;
  atom.global.inc.u32 %r15, [x], 2;
  atom.global.inc.u32 %r16, [x], 2;
  atom.global.dec.u32 %r17, [x], 5;
  setp.hi.u32 %p2, %r0, 1;
  selp.u32 %r18, 1, 0, %p2;
"""
EXPECTED = {
    "T0:%r1": 0,  # 0xFFFFFFFF + 1 wraps
    "T0:%r2": 4294967295,  # 0 - 1 in .u32
    "T0:%r4": 1,  # -1 < 0 signed
    "T0:%r5": 0,  # 0xFFFFFFFF < 0 unsigned: false
    "T0:%r6": -8,
    "T0:%r7": -4,  # shr.s32 sign-fills
    "T0:%r8": 2147483644,  # shr.u32 zero-fills
    "T0:%r9": 0,  # shift by >= 32 gives 0
    "T0:%rd1": 4294967296,  # .u64 keeps the carry
    "T0:%r11": -8,
    "T0:%r12": 3,  # min.u32 of 0xFFFFFFF8 and 3
    "T0:%r13": 1,  # (2^32-1)^2 mod 2^32
    "T0:%r14": 0, "T0:%r15": 1, "T0:%r16": 2,  # inc wraps to 0 once the old value reaches 2
    "T0:%r17": 0,  # dec of 0 gives the bound (x = 5 after it)
    "x": 5,
    "T0:%r18": 1,  # .hi: unsigned greater
}


def _program(cond: str) -> ptxmm.Program:
    return ptxmm.parse(f".global .u32 x = 0;\n.thread T0 {{{BODY}}}\nexists ({cond})\n")


ATOMS = {"T0:%r14", "T0:%r15", "T0:%r16", "T0:%r17", "x"}


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_machine_integers(engine):
    body = BODY
    expected = dict(EXPECTED)
    if engine == "brute":  # four RMWs on one location are slow to enumerate by brute force
        body = "\n".join(ln for ln in BODY.splitlines() if "atom" not in ln)
        expected = {k: v for k, v in expected.items() if k not in ATOMS}
    cond = " && ".join(f"{k} != 123456789" for k in expected)  # names every register
    prog = ptxmm.parse(f".global .u32 x = 0;\n.thread T0 {{{body}}}\nexists ({cond})\n")
    res = ptxmm.check(prog, engine=engine)
    assert len(res.outcomes) == 1
    assert res.outcomes[0].outcome.as_dict() == expected


def test_condition_constants_read_at_the_register_type():
    """`T0:%r2 == -1` on a .u32 register means 0xFFFFFFFF; `<` on .s32 is signed."""
    assert ptxmm.check(_program("T0:%r2 == -1")).holds is True
    assert ptxmm.check(_program("T0:%r2 == 4294967295")).holds is True
    assert ptxmm.check(_program("T0:%r6 < 0")).holds is True  # .s32
    assert ptxmm.check(_program("T0:%r2 < 0")).holds is False  # .u32: never negative
    fast = ptxmm.check(_program("T0:%r2 == -1"), observe="condition", verdict_only=True)
    assert fast.holds is True


def test_store_truncates_to_the_location_width():
    src = """.global .u16 h = 0;
.thread T0 { mov.u32 %r0, 0x12345; st.global.u16 [h], %r0; ld.global.u16 %r1, [h]; }
exists (T0:%r1 == 0x2345)"""
    for engine in ("z3", "brute"):
        assert ptxmm.check(ptxmm.parse(src), engine=engine).holds is True


@pytest.mark.parametrize("op, a, b, want", [
    ("udiv", 7, 2, 3), ("sdiv", -7, 2, -3), ("sdiv", 7, -2, -3), ("sdiv", -7, -2, 3),
    ("urem", 7, 2, 1), ("srem", -7, 2, -1), ("srem", 7, -2, 1),
    ("udiv", 0xFFFFFFFF, 2, 0x7FFFFFFF), ("sdiv", -(2**31), -1, -(2**31)),  # wraps
    # the value of an Op with divisor 0 (SMT-LIB's, as Z3's) only keeps evaluate total: the event
    # builder never selects it — a division by zero gives an unspecified value (test_unspecified)
    ("udiv", 7, 0, 0xFFFFFFFF), ("sdiv", 7, 0, -1), ("sdiv", -7, 0, 1), ("urem", 7, 0, 7),
    ("srem", -7, 0, -7),
])
def test_division_truncates_toward_zero(op, a, b, want):
    """div.s/rem.s truncate toward zero, the remainder takes the dividend's sign (as C)."""
    from ptxmm.ir.values import Const, Op, evaluate, mask

    got = evaluate(Op(op, (Const(mask(a, 32), 32), Const(mask(b, 32), 32)), 32), {})
    assert got == mask(want, 32)


@pytest.mark.parametrize("engine", ["z3", "brute"])
@pytest.mark.parametrize("ins, r1, want", [
    ("div.s32 %r2, %r1, -2", 0xFFFFFFF9, 3),  # -7 / -2 = 3
    ("div.u32 %r2, %r1, 3", 0xFFFFFFF9, 0xFFFFFFF9 // 3),
    ("rem.s32 %r2, %r1, 3", 0xFFFFFFF9, 0xFFFFFFFF),  # -7 rem 3 = -1: the dividend's sign
    ("rem.u32 %r2, %r1, 5", 12, 2),
])
def test_ptx_div_rem(engine, ins, r1, want):
    p = ptxmm.parse(f".global .u32 x = 0;\n.thread T0 {{ .reg .u32 %r1 = {r1}; {ins}; "
                    f"st.global.u32 [x], %r2; }}\nexists (x == {want})\n")
    res = ptxmm.check(p, engine=engine)
    assert [str(o.outcome) for o in res.outcomes] == [f"x={want}"]


@pytest.mark.parametrize("ins, what", [("mul.hi.u32 %r2, %r1, 3", "mul.hi"),
                                       ("mul.wide.u32 %rd2, %r1, 3", "mul.wide"),
                                       ("add.sat.s32 %r2, %r1, 1", "add.sat")])
def test_arithmetic_not_modelled_is_refused(ins, what):
    """Forms whose result differs from the low-half, wrapping one are refused, never approximated."""
    with pytest.raises(ptxmm.UnsupportedError, match=what):
        ptxmm.parse(f".global .u32 x = 0;\n.thread T0 {{ .reg .u32 %r1 = 1; {ins}; }}\n")
