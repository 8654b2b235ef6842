"""Spin loops reduced to awaits: side-effect-free loops, and CAS retry loops whose repeated
iterations wrote nothing (the CAS failed)."""

from __future__ import annotations

import functools
import os

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm

SLOW = os.environ.get("PTXMM_SLOW") == "1"  # PTXMM_SLOW=1: the properties run 500 examples

# two threads take a CAS spin lock, increment a counter and unlock with st.release
LOCK = (ROOT / "examples" / "spinlock-cas.ptx").read_text()


def test_cas_retry_loop_is_an_await():
    res = ptxmm.check(ptxmm.parse(LOCK, "lock.ptx"))
    assert res.holds and res.awaits == 2 and res.cut_paths == 0 and res.n_events == 12


@pytest.mark.parametrize("branch", ["setp.eq.u32 %p0, %r0, 0;\n    @!%p0 bra ACQ;",  # not (eq)
                                    "setp.ne.u32 %p0, 0, %r0;\n    @%p0 bra ACQ;"])  # operands swapped
def test_cas_retry_spellings(branch):
    text = LOCK.replace("setp.ne.u32 %p0, %r0, 0;\n    @%p0 bra ACQ;", branch)
    res = ptxmm.check(ptxmm.parse(text, "lock.ptx"))
    assert res.holds and res.awaits == 2 and res.cut_paths == 0


@pytest.mark.parametrize("change", [
    # goes back when the CAS succeeded: a repeated iteration wrote, so it is unrolled
    ("setp.ne.u32 %p0, %r0, 0;", "setp.eq.u32 %p0, %r0, 0;"),
    # compares with another value than the CAS expected: a repeated iteration may have written
    ("setp.ne.u32 %p0, %r0, 0;", "setp.ne.u32 %p0, %r0, 5;"),
    # an exchange always writes
    ("atom.acquire.gpu.global.cas.b32 %r0, [lock], 0, 1;",
     "atom.acquire.gpu.global.exch.b32 %r0, [lock], 1;"),
])
def test_loops_that_write_when_repeating_are_unrolled(change):
    text = LOCK.replace(*change)
    res = ptxmm.check(ptxmm.parse(text, "lock.ptx"))
    assert res.awaits == 0 and res.cut_paths > 0


# ----- the reduction changes no outcome (issue 24, item 3) --------------------------------------

COUNTER = """.test COUNT "a spin loop that also counts its iterations"
.global .u32 flag = 0;
.thread T0 {
    st.global.u32 [flag], 1;
}
.thread T1 {
    mov.u32 %r2, 0;
$L:
    ld.global.u32 %r0, [flag];
    add.u32 %r2, %r2, 1;
    setp.ne.u32 %p0, %r0, 1;
    @%p0 bra $L;
}
exists (T1:%r2 == 2)
"""
BY_HAND = """.test COUNT "the same loop unrolled by hand"
.global .u32 flag = 0;
.thread T0 {
    st.global.u32 [flag], 1;
}
.thread T1 {
    mov.u32 %r2, 0;
    ld.global.u32 %r0, [flag];
    add.u32 %r2, %r2, 1;
    setp.ne.u32 %p0, %r0, 1;
    @!%p0 bra $DONE;
    ld.global.u32 %r0, [flag];
    add.u32 %r2, %r2, 1;
$DONE:
}
exists (T1:%r2 == 2)
"""


def test_a_loop_that_counts_is_not_an_await():
    """The issue's input: the counter carries from one iteration to the next, so the loop is
    unrolled and `exists (T1:%r2 == 2)` is ALLOWED, as in the loop unrolled by hand (it was
    FORBIDDEN: the await kept one iteration, %r2 == 1)."""
    res = ptxmm.check(ptxmm.parse(COUNTER, "count.ptx"))
    assert res.holds is True and res.awaits == 0 and res.cut_paths == 1
    assert ptxmm.check(ptxmm.parse(BY_HAND, "hand.ptx")).holds is True


def test_a_bounded_counting_loop_runs():
    """A loop with no load at all that counts to 2: it was reduced to an await whose exit
    condition (%r2 + 1 >= 2 on the first iteration) no execution meets — "no execution"."""
    src = """.global .u32 x = 0;
.thread T0 { mov.u32 %r2, 0;
L:  add.u32 %r2, %r2, 1; setp.lt.u32 %p0, %r2, 2; @%p0 bra L;
    st.global.u32 [x], %r2; }
exists (x == 2)
"""
    res = ptxmm.check(ptxmm.parse(src))
    assert res.holds is True and res.awaits == 0 and [str(o.outcome) for o in res.outcomes] == ["x=2"]


def test_a_loop_entered_in_its_middle_is_not_an_await():
    """Entered at MID the first time, the loop's first pass checks a value read before it: an
    await would assume that pass exits."""
    src = """.global .u32 flag = 0;
.thread T0 { st.global.u32 [flag], 1; }
.thread T1 { mov.u32 %r0, 0; bra MID;
L:  ld.global.u32 %r0, [flag];
MID: setp.ne.u32 %p0, %r0, 1; @%p0 bra L; }
exists (T1:%r0 == 1)
"""
    res = ptxmm.check(ptxmm.parse(src))
    assert res.holds is True and res.awaits == 0


def test_registers_written_afresh_each_iteration_keep_the_await():
    """Registers the body writes before reading them (the loaded value, a copy, a sum with it)
    do not carry between iterations: the loop stays an await."""
    src = COUNTER.replace("add.u32 %r2, %r2, 1;", "add.u32 %r2, %r0, 1;")
    res = ptxmm.check(ptxmm.parse(src.replace("T1:%r2 == 2", "T1:%r2 == 2 /\\ T1:%r0 == 1"), "c.ptx"))
    assert res.holds is True and res.awaits == 1 and res.cut_paths == 0


# body statements: (text, carries a register or has an effect an await would drop)
BODY = [
    ("mov.u32 %r3, %r0;", False),
    ("add.u32 %r4, %r0, 1;", False),
    ("ld.global.u32 %r5, [data];", False),
    ("add.u32 %r2, %r2, 1;", True),  # counts iterations
    ("xor.b32 %r7, %r7, %r0;", True),  # accumulates the values read
    ("st.global.u32 [data], 9;", True),
    ("fence.sc.gpu;", True),
    ("atom.global.add.u32 %r6, [data], 1;", True),
    ("red.global.add.u32 [data], 1;", True),
]
WRITER = ["st.global.u32 [flag], 1;", "st.release.gpu.global.u32 [flag], 1;",
          "st.global.u32 [data], 5;", "fence.sc.gpu;", "st.global.u32 [flag], 2;"]


def _spin(writer: list[str], head: str, body: list[str], exit_: str, after: list[str],
          cas: bool) -> str:
    load = ("atom.acquire.gpu.global.cas.b32 %r0, [flag], 1, 3;" if cas else head)
    back = "setp.ne.u32 %p0, %r0, 1;" if cas else exit_
    return "\n".join([
        ".global .u32 flag = 0;", ".global .u32 data = 0;",
        ".thread T0 {", *writer, "}",
        ".thread T1 {", ".reg .u32 %r2 = 0;", ".reg .u32 %r7 = 0;", "L:", load, *body, back,
        "@%p0 bra L;", *after, "}",
        "exists (T1:%r2 == 2 \\/ T1:%r7 == 1)", ""])  # the counter and the accumulator are observed


@settings(max_examples=500 if SLOW else 30, deadline=None)
@given(writer=st.lists(st.sampled_from(WRITER), min_size=1, max_size=3),
       head=st.sampled_from(["ld.global.u32 %r0, [flag];", "ld.acquire.gpu.global.u32 %r0, [flag];",
                             "ld.relaxed.gpu.global.u32 %r0, [flag];"]),
       body=st.lists(st.sampled_from(BODY), max_size=2),
       exit_=st.sampled_from(["setp.ne.u32 %p0, %r0, 1;", "setp.eq.u32 %p0, %r0, 0;"]),
       after=st.lists(st.sampled_from(["ld.global.u32 %r1, [data];", "st.global.u32 [data], %r2;",
                                       "st.global.u32 [data], %r3;"]), max_size=1),
       cas=st.booleans())
def test_reduction_equals_plain_unrolling(writer, head, body, exit_, after, cas):
    """Every program the reduction applies to has the outcomes of its plain unrolling: the await
    keeps the executions that exit at once (the unrolling with bound 0), and an execution that
    iterates more ends as one of those (the proof in semantics.control.await_sound), so the two
    outcome sets are equal at any bound. Loops whose body carries a register or has an effect
    are generated too: the reduction must leave them alone (else their outcomes differ, as the
    counter's did)."""
    from ptxmm.queries import checker
    from ptxmm.semantics.builder import build

    if "%r3" in " ".join(after) and "mov.u32 %r3, %r0;" not in [b for b, _ in body]:
        after = []
    text = _spin(writer, head, [b for b, _ in body], exit_, after, cas)
    prog = ptxmm.parse(text, "spin.ptx")
    reduced = ptxmm.check(prog, unroll=2)
    plain_build = functools.partial(build, awaits=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checker, "build", lambda p, unroll=2, **k: plain_build(p, unroll=unroll, **k))
        plain = ptxmm.check(prog, unroll=2)
    assert plain.awaits == 0
    if any(effect for _, effect in body):
        assert reduced.awaits == 0, text
    event(f"awaits={reduced.awaits}")
    assert reduced.outcome_set == plain.outcome_set, text
    if reduced.outcomes:
        assert reduced.holds == plain.holds


NEVER = """.global .u32 flag = 0;
.global .u32 x = 0;
.thread T0 { st.global.u32 [x], 1; }
.thread T1 {
L:  ld.global.u32 %r0, [flag];
    setp.ne.u32 %p0, %r0, 1;
    @%p0 bra L;
    ld.global.u32 %r1, [x];
}
exists (T1:%r1 == 0)
"""


@pytest.mark.parametrize("verdict_only", [False, True])
def test_an_await_that_never_exits_has_no_execution(verdict_only):
    """Nobody sets the flag: the await drops the executions that spin forever, as the unrolling
    bound cuts them, so the answer is the plain unrolling's "no execution finishes" (unknown),
    not FORBIDDEN over an empty set."""
    from ptxmm.queries import checker
    from ptxmm.semantics.builder import build

    prog = ptxmm.parse(NEVER, "never.ptx")
    kw = dict(observe="condition", verdict_only=True) if verdict_only else {}
    res = ptxmm.check(prog, **kw)
    assert res.awaits == 1 and res.status == "no-execution" and res.holds is None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checker, "build", lambda p, unroll=2, **k: build(p, unroll=unroll, awaits=False, **k))
        plain = ptxmm.check(prog, **kw)
    assert plain.awaits == 0 and (plain.status, plain.holds) == (res.status, res.holds)



@pytest.mark.parametrize("name", ["atomic-ref-wait", "atomic-ref-wait-relaxed", "atomic-ref-wait-block-scope",
                                  "atomic-flag-wait", "barrier-arrive-wait"])
def test_libcu_waits_reduced_equal_plain_unrolling(name):
    """libcu++'s waits (issue 39): the repeated polls are not built and the back-off loops are
    awaits (their spin count and timer decide nothing) — the outcomes and the findings are those
    of the plain unrolling, from a fraction of the events."""
    from ptxmm.queries import checker
    from ptxmm.semantics.builder import build

    prog = ptxmm.load(ROOT / "examples" / "kernels" / f"{name}.ptx")
    reduced = ptxmm.check(prog, unroll=2)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checker, "build", lambda p, unroll=2, **k: build(p, unroll=unroll, awaits=False, **k))
        plain = ptxmm.check(prog, unroll=2)
    assert plain.awaits == 0 and reduced.awaits >= 2 and reduced.n_events < plain.n_events
    assert reduced.outcome_set == plain.outcome_set and reduced.holds == plain.holds
    kinds = [sorted({(str(f.kind), f.where) for f in r.findings}) for r in (reduced, plain)]
    assert kinds[0] == kinds[1]
