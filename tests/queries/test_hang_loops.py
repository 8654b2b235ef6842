"""Liveness that means what it says (issue 37): the stuck test follows loops on the control-flow
graph (nvcc's rotated loops), compares only the registers that matter to the loop, and the
verdict is "undecided", never "terminates", when a loop the unrolling cut is not exact."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT
from support.programs import ROTATED_WAIT as ROTATED

from ptxmm import check, load, parse
from ptxmm.cli.main import main
from ptxmm.ir.program import Thread
from ptxmm.queries.hangs import decide, find_hangs, terminates
from ptxmm.semantics.loops import analyse


def _loops(text: str) -> tuple[Thread, object]:
    t = parse(text).threads[-1]
    labels = {ins.name: i for i, ins in enumerate(t.instrs) if getattr(ins, "name", None)}
    return t, analyse(t, labels)


def test_rotated_loop_header_is_the_test():
    """The back edge is the body's fallthrough into COND; the textually backward branch is no
    back edge (BODY does not dominate it)."""
    t, lp = _loops(ROTATED)
    cond = next(i for i, ins in enumerate(t.instrs) if getattr(ins, "name", None) == "COND")
    assert lp.back == {(cond - 1, cond)} and set(lp.body) == {cond} and not lp.irreducible


def test_rotated_wait_loop_terminates():
    """Before issue 37 the iteration since BODY came out empty: a false hang "its iteration
    reads nothing that could change"."""
    assert terminates(parse(ROTATED), "ptx") == (True, None)


def test_rotated_wait_loop_that_really_hangs_still_hangs():
    prog = parse(ROTATED.replace("[flag], 1;", "[flag], 0;"))
    ok, f = terminates(prog, "ptx")
    assert ok is False and "T1 spins" in f.detail and "value 0" in f.detail


def _rotated_kernel(tmp_path, wait_for: str | None = None):
    """examples/kernels/splitk-semaphore as nvcc -O3 rotates such a loop: `bra COND; BODY:
    nanosleep; COND: ld.acquire; setp; @%p bra BODY` (``wait_for``: the value it waits for)."""
    src = ROOT / "examples" / "kernels"
    shutil.copy(src / "splitk-semaphore.cu", tmp_path / "splitk-semaphore.cu")
    text = (src / "splitk-semaphore.ptx").read_text()
    text = text.replace("$L__BB0_2:\n", "\tbra.uni \t$L__BB0_13;\n$L__BB0_2:\n\tnanosleep.u32 \t32;\n"
                        "$L__BB0_13:\n")
    if wait_for is not None:
        text = text.replace("setp.ne.s32 \t%p3, %r8, %r1;", f"setp.ne.s32 \t%p3, %r8, {wait_for};")
    (tmp_path / "splitk-semaphore.ptx").write_text(text)
    return load(tmp_path / "splitk-semaphore.ptx")


def test_rotated_semaphore_kernel_terminates(tmp_path):
    res = check(_rotated_kernel(tmp_path), "ptx", liveness=True)
    assert res.holds and res.liveness == "terminates" and not res.findings


def test_rotated_semaphore_kernel_waiting_for_a_value_never_released_hangs(tmp_path):
    res = check(_rotated_kernel(tmp_path, "7"), "ptx", liveness=True)
    assert res.liveness == "hangs" and any("spins" in f.detail for f in res.findings)


COUNTER_SPIN = """.test CountSpin "a spin that counts its iterations and never ends"
.global .u32 flag = 0;
.thread T0 .cta 0 {
    mov.u32 %r1, 0;
L:
    ld.relaxed.gpu.global.u32 %r0, [flag];
    add.u32 %r1, %r1, 1;
    setp.eq.u32 %p, %r0, 0;
    @%p bra L;
}
exists (T0:%r0 == 0)"""


def test_a_counter_that_matters_nothing_does_not_hide_a_hang():
    """The counter %r1 reaches no guard, address or stored value: it need not repeat. The report
    no longer says "no execution finishes" and "no execution hangs" together."""
    res = check(parse(COUNTER_SPIN), "ptx", liveness=True)
    assert res.status == "no-execution" and res.liveness == "hangs"
    assert find_hangs(parse(COUNTER_SPIN), "ptx", relevance=False) == []  # the test before


MEMLOOP = """.test MemLoop "a loop whose iterations change memory and never ends"
.global .u32 flag = 0;
.global .u32 y = 0;
.thread T0 .cta 0 {
L:
    atom.relaxed.gpu.global.add.u32 %r1, [y], 1;
    ld.relaxed.gpu.global.u32 %r0, [flag];
    setp.eq.u32 %p, %r0, 0;
    @%p bra L;
}
exists (T0:%r0 == 0)"""


def test_an_unobserved_counter_in_memory_is_an_honest_hang():
    """The atom's read feeds nothing and nobody reads y: its value may change every iteration."""
    ok, f = terminates(parse(MEMLOOP), "ptx")
    assert ok is False and "feeds nothing" in f.detail


def test_a_counter_in_memory_another_thread_reads_is_not_a_hang_nor_terminates():
    """T1 sets flag once it sees y >= 5: the loop really ends. The atom's write is seen, so its
    read must be co-maximal (no hang), and the loop writes memory, so it is not exact: the verdict
    is not decided, never a claim either way."""
    text = MEMLOOP.replace("exists", """.thread T1 .cta 1 {
W:
    ld.relaxed.gpu.global.u32 %r2, [y];
    setp.lt.u32 %q, %r2, 5;
    @%q bra W;
    st.relaxed.gpu.global.u32 [flag], 1;
}
exists""")
    hs, why = decide(parse(text), "ptx")
    assert hs == [] and "line 9 is not exact: an iteration writes memory" in why


COUNT5 = COUNTER_SPIN.replace("setp.eq.u32 %p, %r0, 0;", "setp.lt.u32 %p, %r1, 5;")


def test_no_execution_finishes_and_no_hang_is_not_decided():
    res = check(parse(COUNT5), "ptx", liveness=True)
    assert res.status == "no-execution" and res.liveness == "undecided"
    assert "line 9 is not exact: %r1 changes in each iteration" in res.liveness_why


def test_undecided_in_the_cli(tmp_path):
    f = tmp_path / "count5.ptx"
    f.write_text(COUNT5)
    out = CliRunner().invoke(main, ["check", "--liveness", str(f)]).output
    assert "liveness: not decided (progress fair)" in out and "line 9" in out
    assert "no execution hangs" not in out
    data = json.loads(CliRunner().invoke(main, ["check", "--liveness", "--json", str(f)]).output)
    assert data["liveness"]["verdict"] == "undecided" and "line 9" in data["liveness"]["why"]
    out = CliRunner().invoke(main, ["test", "--liveness", str(f)]).output
    assert "undecided" in out and "1 unknown" in out


def test_irreducible_loop_is_not_decided():
    """A cycle entered at two places has no back edge: the stuck test never looks at it."""
    prog = parse(""".global .u32 x = 0;
.thread T0 .cta 0 {
    mov.u32 %r1, 0;
    ld.relaxed.gpu.global.u32 %r0, [x];
    setp.eq.u32 %p, %r0, 0;
    @%p bra B;
A:
    add.u32 %r1, %r1, 1;
B:
    add.u32 %r1, %r1, 2;
    setp.lt.u32 %q, %r1, 9;
    @%q bra A;
}
exists (T0:%r0 == 0)""")
    hs, why = decide(prog, "ptx")
    assert hs == [] and "entered at two places" in why


# -- the shortcut finds every hang the exact-equality test found, and only real ones ---------------

# a spin on flag (T0 may set it) with extra carried registers: %r1 a counter that matters
# nothing (``decor``), or one that feeds the exit test or a stored value (it matters)
LOOP = """.global .u32 flag = 0;
.global .u32 out = 0;
.thread T0 .cta 0 {{
    {store}
}}
.thread T1 .cta 1 {{
    mov.u32 %r1, 0;
L:
    ld.{sem}.gpu.global.u32 %r0, [flag];
    add.u32 %r1, %r1, {step};
{use}    setp.eq.u32 %p, %r0, 0;
    @%p bra L;
}}
exists (T1:%r0 == 0)"""
USES = {"decor": "", "test": "    setp.gt.u32 %q, %r1, 1;\n    @%q bra X;\n",
        "value": "    st.relaxed.gpu.global.u32 [out], %r1;\n"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(use=st.sampled_from(sorted(USES)), sem=st.sampled_from(["relaxed", "acquire", "weak"]),
       step=st.sampled_from([0, 1]), store=st.sampled_from(["", "st.relaxed.gpu.global.u32 [flag], 1;"]))
def test_relevance_finds_every_old_hang_and_only_explained_new_ones(use, sem, step, store):
    text = LOOP.format(store=store, sem=sem if sem != "weak" else "relaxed", step=step, use=USES[use])
    if sem == "weak":
        text = text.replace("ld.relaxed.gpu.global.u32 %r0", "ld.global.u32 %r0")
    text = text.replace("    @%p bra L;\n}", "    @%p bra L;\nX:\n}")
    hs, why = decide(parse(text), "ptx", every=False)
    old = bool(find_hangs(parse(text), "ptx", every=False, relevance=False))
    assert hs or not old  # every hang the exact-equality test found
    if hs and not old:  # explained by a carried register that matters nothing to the loop
        assert use == "decor" and step == 1
    # the ground truth: T1 hangs iff nothing ends its spin — no store of 1 (or a weak read that
    # may stay stale), and the counter leaves no other exit (test: %r1 > 1 exits after 2 steps);
    # a hang found is real, and a real one not found leaves the verdict undecided
    real = (not store or sem == "weak") and not (use == "test" and step == 1)
    assert not hs or real
    assert hs or why is not None or not real


BACKOFF = """.test Backoff "a spin with an exponential back-off delay, as libcu++'s waits have"
.global .u32 flag = 0;
.thread T0 .cta 0 { st.release.gpu.global.u32 [flag], 1; }
.thread T1 .cta 1 {
    mov.u32 %r1, 8;
L:
    ld.acquire.gpu.global.u32 %r0, [flag];
    nanosleep.u32 %r1;
    shl.b32 %r1, %r1, 1;
    setp.eq.u32 %p, %r0, 0;
    @%p bra L;
}
exists (T1:%r0 == 1)"""


def test_a_backoff_that_changes_but_is_dead_after_the_loop_terminates():
    """%r1 doubles in each iteration, but it only feeds nanosleep (nothing) and nothing reads it
    after the loop: a longer run ends like one the unrolling has. The verdict is "terminates";
    read by the condition (observed at the thread's end) the same counter leaves it undecided."""
    assert terminates(parse(BACKOFF), "ptx") == (True, None)
    observed = BACKOFF.replace("exists (T1:%r0 == 1)", "exists (T1:%r1 == 8)")
    res = check(parse(observed), "ptx", liveness=True)
    assert res.liveness == "undecided" and "%r1 changes" in res.liveness_why


def test_kernel_wait_with_exponential_backoff_terminates():
    """tests/data/kernels/backoff_wait.cu (libcu++'s poll-with-backoff shape, nvcc -O3): the delay
    doubles up to a cap — it changes in each iteration, feeds only __nanosleep and is dead after
    the loop, so the wait is exact and the verdict is "terminates", not "undecided"."""
    res = check(load(ROOT / "tests" / "data" / "kernels" / "backoff_wait.ptx"), "ptx", liveness=True)
    assert res.liveness == "terminates" and res.holds is True and not res.findings


def test_a_capped_backoff_whose_update_is_predicated_terminates():
    """`@%p2 shl.b32 %r1, %r1, 1` with %p2 = %r1 < 256: the predicate only decides the value of
    %r1, which matters nothing to the loop — so neither does the predicate."""
    capped = BACKOFF.replace("    shl.b32 %r1, %r1, 1;\n",
                             "    setp.lt.u32 %p2, %r1, 256;\n    @%p2 shl.b32 %r1, %r1, 1;\n")
    assert capped != BACKOFF
    assert terminates(parse(capped), "ptx") == (True, None)


def test_kernel_loop_whose_iterations_change_memory_is_not_decided():
    """tests/data/kernels/ticks_loop.cu: block 0's loop adds to a counter block 1 watches — each
    iteration writes a new value another thread reads, so the loop is not exact and, no hang
    found, the verdict is "undecided" (before issue 37: "no execution hangs")."""
    res = check(load(ROOT / "tests" / "data" / "kernels" / "ticks_loop.ptx"), "ptx", liveness=True)
    assert res.liveness == "undecided" and "writes memory" in res.liveness_why
    assert not [f for f in res.findings if str(f.kind) == "hang"]


# -- back-offs judged by the value they await (issue 39) ------------------------------------------

# libcu++'s wait loop in litmus form: a spin count %r1 picks whether to sleep for a timer read
LIBCU_WAIT = """.global .u32 flag = 0;
.thread T0 .cta 0 {{ {store} }}
.thread T1 .cta 1 {{
    mov.u32 %r1, 0;
L:
    setp.lt.u32 %q, %r1, 16;
    @%q bra COUNT;
    mov.u32 %r2, %globaltimer_lo;
    nanosleep.u32 %r2;
    bra.uni POLL;
COUNT:
    add.u32 %r1, %r1, 1;
POLL:
    ld.acquire.gpu.global.u32 %r0, [flag];
    setp.eq.u32 %p, %r0, 0;
    @%p bra L;
}}
exists (T1:%r0 == 1)"""


def test_a_spin_count_and_timer_that_pick_the_sleep_decide_nothing():
    """The branch on %r1 < 16 has the poll on both sides: it is not deciding, %r1 and the timer
    read matter nothing, only the poll's branch decides the exit."""
    t, lp = _loops(LIBCU_WAIT.format(store=""))
    h = next(iter(lp.body))
    labels = {ins.name: i for i, ins in enumerate(t.instrs) if getattr(ins, "name", None)}
    from ptxmm.semantics.loops import deciding

    dec = deciding(t, labels, lp.body[h], h, lp.relevant[h])
    assert {t.instrs[i].text for i in dec} == {"@%p bra L"}
    assert lp.relevant[h] == {"%p", "%r0"} and h in lp.awaitable


def test_a_back_off_wait_terminates_when_the_value_comes_and_hangs_when_it_never_does():
    """Before issue 39 the carried spin count made the loop not exact ("not decided"), and its
    timer read made every iteration no stuck candidate, so no hang could be found either."""
    ok = parse(LIBCU_WAIT.format(store="st.release.gpu.global.u32 [flag], 1;"))
    assert terminates(ok, "ptx") == (True, None)
    never = parse(LIBCU_WAIT.format(store=""))
    done, f = terminates(never, "ptx")
    assert done is False and "T1 spins" in f.detail
    assert find_hangs(never, "ptx", relevance=False) == []  # the test before: no hang seen


def test_a_branch_that_picks_a_register_the_exit_reads_is_deciding():
    """%r1 < 1 picks %r3, which the exit test reads: that branch decides the exit (the fixpoint
    of deciding branches and registers that matter), so %r1 matters and the loop, which really
    leaves in its second iteration, is neither a hang nor an await of one iteration."""
    prog = parse(""".global .u32 flag = 0;
.thread T0 .cta 0 {
    mov.u32 %r1, 0;
L:
    mov.u32 %r3, 0;
    setp.lt.u32 %q, %r1, 1;
    @%q bra B;
    mov.u32 %r3, 1;
B:
    add.u32 %r1, %r1, 1;
    setp.eq.u32 %e, %r3, 1;
    @%e bra OUT;
    ld.relaxed.gpu.global.u32 %r0, [flag];
    setp.eq.u32 %p, %r0, 0;
    @%p bra L;
OUT:
}
exists (flag == 0)""")
    t = prog.threads[0]
    labels = {ins.name: i for i, ins in enumerate(t.instrs) if getattr(ins, "name", None)}
    lp = analyse(t, labels)
    h = next(iter(lp.body))
    assert "%r1" in lp.relevant[h] and h not in lp.awaitable
    assert terminates(prog, "ptx") == (True, None)


def test_a_timed_loop_is_no_await():
    """A loop whose exit reads the timer stays unrolled (its first iteration need not be able to
    leave): never reduced to one iteration, its verdict names the timer."""
    prog = parse(""".global .u32 flag = 0;
.thread T0 .cta 0 {
    mov.u32 %r9, %globaltimer_lo;
L:
    ld.relaxed.gpu.global.u32 %r0, [flag];
    mov.u32 %r2, %globaltimer_lo;
    sub.u32 %r3, %r2, %r9;
    setp.eq.u32 %p, %r0, 0;
    setp.lt.u32 %q, %r3, 100;
    or.pred %p, %p, %q;
    @%p bra L;
}
exists (flag == 0)""")
    hs, why = decide(prog, "ptx")
    assert hs == [] and "%globaltimer_lo" in why


def test_the_libcu_kernels_are_decided():
    """examples/kernels: libcu++'s atomic_ref and atomic_flag waits, cuda::barrier and cuda::latch
    terminate,
    the block-scope wait hangs, each a handful of paths."""
    for name, verdict in [("atomic-ref-wait", "terminates"), ("atomic-flag-wait", "terminates"),
                          ("barrier-arrive-wait", "terminates"), ("latch-arrive-wait", "terminates"),
                          ("atomic-ref-wait-block-scope", "hangs"),
                          ("binary-semaphore-lock", "undecided")]:  # its retry loop writes (exch)
        res = check(load(ROOT / "examples" / "kernels" / f"{name}.ptx"), "ptx", liveness=True)
        assert res.liveness == verdict, (name, res.liveness_why)


WAIT_CHANGE = """.global .u32 x = 0;
.thread T0 .cta 0 {{ {store} }}
.thread T1 .cta 1 {{
    mov.u32 %r1, 0;
L:
    ld.relaxed.gpu.global.u32 %r2, [x];
    setp.eq.u32 %p, %r2, %r1;
    mov.u32 %r1, %r2;
    @%p bra L;
}}
exists (T1:%r2 == 1)"""


def test_a_register_refreshed_from_the_iterations_own_read_keeps_the_loop_exact():
    """%r1 carries the last value read (libcu++'s latch waits for its count to change): it
    changes, but only to what the iteration itself read, so the loop is exact — it terminates
    when x changes and hangs when it never does. Before issue 39: "%r1 changes", not decided."""
    changed = parse(WAIT_CHANGE.format(store="st.relaxed.gpu.global.u32 [x], 1;"))
    assert terminates(changed, "ptx") == (True, None)
    done, f = terminates(parse(WAIT_CHANGE.format(store="")), "ptx")
    assert done is False and "T1 spins" in f.detail
    hs, why = decide(changed, "ptx", unroll=0)
    assert hs == [] and "%r1 changes" in why  # with no second iteration unrolled it is not exact
