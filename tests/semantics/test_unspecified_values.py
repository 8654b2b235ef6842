"""Values the PTX ISA leaves unspecified stay unspecified (issue 24, item 2).

PTX ISA, integer ``div`` and ``rem``: "Division by zero yields an unspecified, machine-specific
value." ptxmm lets each execution choose that value freely (a fresh solver constant per dynamic
instance), warns at the instruction, and never answers with a made-up value: a condition on the
result is allowed whenever some value satisfies it. The brute-force engine has no finite set of
values to try and refuses such programs; ``auto`` picks Z3."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.ir.values import unspec_key

SLOW = os.environ.get("PTXMM_SLOW") == "1"  # PTXMM_SLOW=1: the properties run 500 examples

DIV0 = """.test DIV0
.global .u32 x = 0;
.thread T0 {
    ld.global.u32 %r1, [x];
    OP.u32 %r2, %r1, 0;
}
COND
"""


def _div0(op: str, cond: str) -> ptxmm.Program:
    return ptxmm.parse(DIV0.replace("OP", op).replace("COND", cond), "div0.ptx")


@pytest.mark.parametrize("op", ["div", "rem"])
def test_issue_input_is_allowed_with_a_warning(op):
    """The issue's input: `div.u32` (`rem.u32`) by 0, then `exists (T0:%r2 == 7)`: ALLOWED (it
    was FORBIDDEN: div gave 0xFFFFFFFF and rem the dividend), with a warning at line 5."""
    res = ptxmm.check(_div0(op, "exists (T0:%r2 == 7)"))
    assert res.holds is True and res.engine == "z3"
    msgs = [(w.pos.line if w.pos else None, w.message) for w in res.program.warnings]
    assert (5, f"`{op}.u32 %r2, %r1, 0` divides by zero: the PTX ISA leaves the result "
               "unspecified, so ptxmm lets it be any value") in msgs
    # %r2 may be any of 2^32 values: it is not listed; the condition is decided by one query
    assert res.observables == ("T0:%r1",) and [o.satisfies for o in res.outcomes] == [None]


@pytest.mark.parametrize("op", ["div", "rem"])
@pytest.mark.parametrize("v", [0, 7, 0xFFFFFFFF, 0x80000000])
def test_no_value_is_made_up(op, v):
    """Whatever value a condition asks for, some execution gives it, and none is forced."""
    assert ptxmm.check(_div0(op, f"exists (T0:%r2 == {v})")).holds is True
    assert ptxmm.check(_div0(op, f"~exists (T0:%r2 == {v})")).holds is False
    assert ptxmm.check(_div0(op, f"forall (T0:%r2 == {v})")).holds is False
    fast = ptxmm.check(_div0(op, f"exists (T0:%r2 == {v})"), observe="condition", verdict_only=True)
    assert fast.holds is True and [str(o.outcome) for o in fast.outcomes] == [f"T0:%r2={v}"]


def test_brute_force_refuses_and_auto_picks_z3():
    p = _div0("div", "exists (T0:%r2 == 7)")
    with pytest.raises(ptxmm.UnsupportedError, match="cannot enumerate a value the PTX ISA leaves "
                       r"unspecified: the result of `div.u32 %r2, %r1, 0` \(line 5; division by "
                       r"zero\)"):
        ptxmm.check(p, engine="brute")
    assert ptxmm.check(p).engine == "z3"


LOADED = """.test DIV1
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 {
    st.global.u32 [y], 5;
}
.thread T1 {
    ld.global.u32 %r3, [y];
    div.u32 %r2, 35, %r3;
    setp.eq.u32 %p0, %r2, 7;
    @%p0 st.global.u32 [x], 1;
}
exists (x == 1 /\\ T1:%r3 == 0)
"""


def test_a_divisor_that_may_be_zero():
    """35 / %r3 with %r3 read from y (0 or 5): 7 when it reads 5; any value when it reads 0. The
    outcomes that depend only on the branch it decides are listed exactly."""
    res = ptxmm.check(ptxmm.parse(LOADED, "div1.ptx"))
    assert res.holds is True
    assert {str(o.outcome) for o in res.outcomes} == {"T1:%r3=0 y=5 x=0", "T1:%r3=0 y=5 x=1",
                                                      "T1:%r3=5 y=5 x=1"}
    assert [w.message.split(":")[0] for w in res.program.warnings] == \
        ["`div.u32 %r2, 35, %r3` may divide by zero"]
    # with y never 0 there is no division by zero, and the answer is exact
    never0 = LOADED.replace(".global .u32 y = 0;", ".global .u32 y = 7;")
    res = ptxmm.check(ptxmm.parse(never0.replace("T1:%r3 == 0", "T1:%r3 == 7"), "div1.ptx"))
    assert res.holds is False


def test_unspecified_value_stored_and_read():
    """An unspecified value stored to x and read by another thread: x and the register that
    reads it are left out of the listing; the condition is still decided exactly."""
    src = """.global .u32 x = 0;
.thread T0 { mov.u32 %r3, 0; div.s32 %r2, 35, %r3; st.global.u32 [x], %r2; }
.thread T1 { ld.global.u32 %r1, [x]; }
~exists (T1:%r1 == 12345)
"""
    res = ptxmm.check(ptxmm.parse(src, "div2.ptx"))
    assert res.holds is False and res.observables == ()
    assert "T1:%r1, x may hold a value the PTX ISA leaves unspecified" in \
        " ".join(w.message for w in res.program.warnings)


def test_two_instances_are_independent():
    """Each dynamic instance chooses its own value: two divisions by zero may differ, and one
    value used twice is equal to itself."""
    src = """.global .u32 x = 0;
.thread T0 { .reg .u32 %r1 = 9; div.u32 %r2, %r1, 0; div.u32 %r3, %r1, 0; sub.u32 %r4, %r2, %r2; }
exists (COND)
"""
    assert ptxmm.check(ptxmm.parse(src.replace("COND", "T0:%r2 != T0:%r3"))).holds is True
    assert ptxmm.check(ptxmm.parse(src.replace("COND", "T0:%r4 != 0"))).holds is False


PROP = """.global .u32 x = 0;
.thread T0 {
    .reg .TY %r1 = A;
    DIV
    TAIL
}
.thread T1 { ld.global.u32 %r5, [x]; }
exists (T1:%r5 == V)
"""
TAILS = ["st.global.u32 [x], %r2;", "setp.eq.TY %p0, %r2, K;\n    @%p0 st.global.u32 [x], 1;",
         "and.b32 %r6, %r2, 3;\n    st.global.u32 [x], %r6;"]


def _prop(ty, op, a, d, tail, k, v, div=None):
    text = (PROP.replace("TAIL", tail).replace("DIV", div or f"{op}.TY %r2, %r1, {d};")
            .replace("TY", ty).replace("A", str(a)).replace("K", str(k)).replace("V", str(v)))
    return ptxmm.parse(text, "prop.ptx")


small = st.sampled_from([0, 1, 2, 3, 7, -1, -7, 0x7FFFFFFF, -(2**31)])


@settings(max_examples=500 if SLOW else 40, deadline=None)
@given(ty=st.sampled_from(["u32", "s32"]), op=st.sampled_from(["div", "rem"]), a=small,
       d=st.sampled_from([0, 0, 1, 3, -2]), tail=st.sampled_from(TAILS), k=small,
       v=st.sampled_from([0, 1, 2, 3, 7]), c=small)
def test_unspecified_is_the_union_of_every_choice(ty, op, a, d, tail, k, v, c):
    """Z3 with the free value agrees with brute force over concrete choices: a program that
    divides by 0 allows the condition exactly when the same program with ``mov %r2, c`` allows
    it for some c — every c's verdict implies the free one's, and the free one's witness names
    a c that allows it. With a nonzero divisor both engines give the same exact answer."""
    if ty == "u32":
        a, k, d = a & 0xFFFFFFFF, k & 0xFFFFFFFF, d & 0xFFFFFFFF
    if d != 0:
        p = _prop(ty, op, a, d, tail, k, v)
        z, b = ptxmm.check(p, engine="z3"), ptxmm.check(p, engine="brute")
        assert z.holds == b.holds and z.outcome_set == b.outcome_set
        return
    free = ptxmm.check(_prop(ty, op, a, d, tail, k, v), engine="z3")
    cval = c & 0xFFFFFFFF if ty == "u32" else c
    fixed = ptxmm.check(_prop(ty, op, a, d, tail, k, v, div=f"mov.TY %r2, {cval};"), engine="brute")
    if fixed.holds:
        assert free.holds
    wit = ptxmm.check(_prop(ty, op, a, d, tail, k, v), engine="z3", observe="condition",
                      verdict_only=True)
    assert wit.holds == free.holds
    if wit.holds:
        chosen = dict(wit.outcomes[0].witness.values)[unspec_key(0)]
        chosen = chosen - (1 << 32) if ty == "s32" and chosen >> 31 else chosen
        again = _prop(ty, op, a, d, tail, k, v, div=f"mov.TY %r2, {chosen};")
        assert ptxmm.check(again, engine="brute").holds


def test_device_crossval_refuses_a_value_the_model_leaves_free():
    """Cross-validation would find every device value of %r2 outside the model's (unlisted)
    values and call it a violation: it refuses the program instead (no GPU needed to plan)."""
    from ptxmm.device.crossval import prepare

    with pytest.raises(ptxmm.UnsupportedError, match="T0:%r2: a value the PTX ISA leaves unspecified"):
        prepare(_div0("div", "exists (T0:%r2 == 7)"))


MP_DIV = """.global .u32 data = 0;
.global .u32 flag = 0;
.global .u32 out = 0;
.thread T0 { st.global.u32 [data], 42; st.global.u32 [flag], 1; }
.thread T1 {
    ld.global.u32 %r0, [flag];
    ld.global.u32 %r1, [data];
    div.u32 %r2, 84, %r1;
    st.global.u32 [out], %r2;
}
exists (COND)
"""


def test_explain_and_fix_with_an_unspecified_value():
    """The witness carries the value the solver chose; --fix maps it onto the fixed program
    (it raised KeyError). Explaining a forbidden outcome enumerates concrete candidates: where
    one would need the free value, a typed "not supported yet", never a traceback."""
    from ptxmm.explanation.explain import explain

    x = explain(ptxmm.parse(MP_DIV.replace("COND", "T1:%r0 == 1 /\\ T1:%r1 == 0"), "mp.ptx"), fix=True)
    assert x.allowed and x.fixes.solutions
    fixed = MP_DIV.replace("st.global.u32 [flag]", "st.release.gpu.global.u32 [flag]").replace(
        "ld.global.u32 %r0", "ld.acquire.gpu.global.u32 %r0")
    with pytest.raises(ptxmm.UnsupportedError, match="cannot leave it free"):
        explain(ptxmm.parse(fixed.replace("COND", "T1:%r0 == 1 /\\ T1:%r1 == 0 /\\ out == 5"), "mp.ptx"))


def test_cli_names_the_line_and_says_how_it_decided(tmp_path):
    from click.testing import CliRunner

    from ptxmm.cli.main import main

    f = tmp_path / "div0.ptx"
    f.write_text(DIV0.replace("OP", "div").replace("COND", "exists (T0:%r2 == 7)"))
    r = CliRunner().invoke(main, ["check", str(f)])
    assert r.exit_code == 0
    assert f"{f}:5:5: warning: `div.u32 %r2, %r1, 0` divides by zero" in r.output
    assert "ALLOWED — decided by one solver query" in r.output
    assert "T0:%r2 may hold a value the PTX ISA leaves unspecified" in r.output
    r = CliRunner().invoke(main, ["check", "--engine", "brute", str(f)])
    assert r.exit_code == 2 and "not supported yet: the brute-force engine cannot enumerate" in r.output
