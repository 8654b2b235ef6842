"""Issue 37: one barrier semantics for safety and liveness (src/ptxmm/semantics/barrier_waits.py).
A count-less ``bar.sync a`` / ``barrier.cluster.wait`` completes iff every other thread of its CTA
(cluster) arrives in its phase or exits (PTX ISA, exit: the exit releases it); a failed assertion
or ``trap`` ends the grid, so no thread hangs after it."""

from __future__ import annotations

import pytest
from support import ROOT

import ptxmm
from ptxmm import check, parse
from ptxmm.errors import ParseError
from ptxmm.ir.program import Halt
from ptxmm.ir.stops import StopKind
from ptxmm.queries.hangs import find_hangs, terminates

KERNELS = ROOT / "tests" / "data" / "kernels"

EXIT_BAR = """.global .u32 x = 0;
.thread T0 .cta 0 { exit; }
.thread T1 .cta 0 { st.global.u32 [x], 1; bar.sync 0; }
.thread T2 .cta 0 { bar.sync 0; ld.global.u32 %r0, [x]; }
exists (T2:%r0 == 0)"""

# T1 leaves the loop after one round and exits; T0 keeps using the barrier: its second phase is
# released by T1's exit
EXIT_LOOP = """.global .u32 x = 0;
.thread T0 .cta 0 { mov.u32 %r1, 0;
  L: bar.sync 0; add.u32 %r1, %r1, 1; setp.lt.u32 %p, %r1, 2; @%p bra L; st.global.u32 [x], %r1; }
.thread T1 .cta 0 { bar.sync 0; exit; }
exists (x == 2)"""

DIFFERENT_IDS = """.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; bar.sync 1; }
.thread T1 .cta 0 { bar.sync 2; ld.global.u32 %r0, [x]; }
exists (T1:%r0 == 1)"""

CLUSTER_UNARRIVED = """.global .u32 x = 0;
.thread T0 .cta 0 .cluster 0 { barrier.cluster.arrive; barrier.cluster.wait; }
.thread T1 .cta 1 .cluster 0 { barrier.cluster.wait; }
exists (x == 0)"""

CLUSTER_EXIT = """.global .u32 x = 0;
.thread T0 .cta 0 .cluster 0 { barrier.cluster.arrive; barrier.cluster.wait; st.global.u32 [x], 1; }
.thread T1 .cta 1 .cluster 0 { exit; }
exists (x == 1)"""

TRAP = """.global .u32 x = 0;
.thread T0 .cta 0 { bar.sync 0; st.global.u32 [x], 1; }
.thread T1 .cta 0 { ld.global.u32 %r0, [x]; trap; bar.sync 0; }
exists (x == 1)"""


def test_exit_releases_a_cta_barrier():
    prog = parse(EXIT_BAR)
    assert terminates(prog, "ptx") == (True, None)
    res = check(prog)
    assert res.holds is False and len(res.outcomes) == 1  # T1's store is before the barrier


def test_exit_inside_a_barrier_loop():
    prog = parse(EXIT_LOOP)
    assert terminates(prog, "ptx", unroll=3)[0] is True
    assert check(prog, unroll=3).holds is True


@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5", "ptx-v6.0"])
def test_different_barrier_ids_deadlock_in_safety_and_liveness(model):
    prog = parse(DIFFERENT_IDS)
    assert not check(prog, model).outcomes  # "the model allows no execution"
    (h,) = find_hangs(prog, model)
    d = h.finding.detail
    assert "T0 waits at `bar.sync 1` (line 2) forever: T1 of its CTA never arrives in its phase " \
           "(T1 waits at `bar.sync 2` (line 3))" in d
    assert "T1 waits at `bar.sync 2` (line 3) forever: T0 of its CTA never arrives" in d


def test_cluster_wait_in_a_phase_never_arrived_in_hangs():
    (h,) = find_hangs(parse(CLUSTER_UNARRIVED), "ptx")
    assert h.threads == (0, 1)
    d = h.finding.detail
    assert "T0 waits at `barrier.cluster.wait` (line 2) forever: T1 of its cluster never arrives" in d
    assert "T1 waits at `barrier.cluster.wait` (line 3) forever: it waits in a phase it has not " \
           "arrived in" in d


def test_cluster_wait_does_not_wait_for_exited_threads():
    prog = parse(CLUSTER_EXIT)
    assert terminates(prog, "ptx") == (True, None)
    assert check(prog).holds is True


def test_trap_is_a_halt_and_a_finding_and_ends_the_grid():
    prog = parse(TRAP)
    (ins,) = [i for i in prog.threads[1].instrs if isinstance(i, Halt)]
    assert ins.stop.kind is StopKind.TRAP and ins.stop.line == 3
    res = check(prog, liveness=True)
    kinds = {str(f.kind) for f in res.findings}
    assert "trap" in kinds and "hang" not in kinds


@pytest.mark.parametrize("text", ["trap.uni;", "trap 1;"])
def test_trap_takes_no_qualifier_and_no_operand(text):  # as ptxas: both are errors
    with pytest.raises(ParseError):
        parse(f".thread T0 {{ {text} }}\nexists (T0:%r0 == 0)")


def kernel(name: str):
    return ptxmm.load(KERNELS / f"{name}.ptx")


def test_kernel_thread_returning_early_releases_syncthreads():
    res = check(kernel("exit_bar"), liveness=True)
    assert res.findings == ()


def test_kernel_cluster_wait_without_arrive_hangs_both_ctas():
    """tests/data/kernels/cluster_wait.cu: CTA 1 only waits at the cluster barrier, CTA 0 runs
    cluster.sync(): both block (before issue 37 this was "no execution hangs")."""
    res = check(kernel("cluster_wait"), liveness=True)
    (h,) = [f for f in res.findings if str(f.kind) == "hang"]
    assert "b0t0 waits at `barrier.cluster.wait  [cluster_wait.cu:14]`" in h.detail
    assert "b1t0 waits at `barrier.cluster.wait  [cluster_wait.cu:16]`" in h.detail
    assert "b1t0 of its cluster never arrives" in h.detail


def test_kernel_failed_assert_is_no_hang_at_syncwarp():
    res = check(kernel("assert_syncwarp"), liveness=True)
    assert {str(f.kind) for f in res.findings} == {"assert-fails"}


def test_kernel_trap_is_a_finding_and_no_hang():
    res = check(kernel("trap_bar"), liveness=True)
    assert {str(f.kind) for f in res.findings} == {"trap"}
    assert "__trap()" in res.findings[0].events[0].text


TRAP_BEFORE_FLAG = """.global .u32 x = 0;
.global .u32 flag = 0;
.thread T0 .cta 0 { L: ld.relaxed.gpu.global.u32 %r0, [flag]; setp.eq.u32 %p, %r0, 0; @%p bra L; }
.thread T1 .cta 1 { ld.global.u32 %r1, [x]; setp.eq.u32 %q, %r1, 0; @%q trap;
  st.relaxed.gpu.global.u32 [flag], 1; }
exists (T0:%r0 == 1)"""


def test_no_thread_spins_after_a_trap():
    """T1 traps before it sets the flag T0 spins on: the grid has ended, so T0 does not hang."""
    prog = parse(TRAP_BEFORE_FLAG)
    assert terminates(prog, "ptx") == (True, None)
    ok, f = terminates(parse(TRAP_BEFORE_FLAG.replace("@%q trap;", "")), "ptx")
    assert ok  # and without the trap T0 sees the flag
