"""Where models/ptx.cat deliberately departs from the other formal PTX models — Dat3M's
ptx-v7.5.cat / ptx-v6.0.cat (shipped here as models/ptx-v7.5.cat and models/ptx-v6.0.cat) and
NVIDIA's mixed-proxy Alloy model — one small program each whose verdict (or race report) differs,
named in the model file next to the definition it concerns. Where no program can differ, the model
file gives the argument instead (Fence-SC over base causality, SC-per-Location), and the mutants
that state those variants are listed as equivalent in tools/mutants.py.

A departure from the Alloy model is shown against a *variant* of ptx.cat that changes only the
definition in question (built in a scratch copy of models/ by a text substitution that must apply),
since the Alloy model itself does not run here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import ROOT
from support.programs import LAST_BLOCK_RESET

import ptxmm

MODELS = ROOT / "models"


def check(src: str, model: str):
    return ptxmm.check(ptxmm.parse(src), model)


def variant(tmp_path: Path, file: str, old: str, new: str) -> str:
    """A copy of models/ with ``old`` replaced by ``new`` in ``file`` (exactly once); returns the
    path of the copied ptx.cat."""
    for f in MODELS.glob("*.cat"):
        shutil.copy(f, tmp_path / f.name)
    text = (tmp_path / file).read_text()
    assert text.count(old) == 1, f"{file} no longer contains {old!r}"
    (tmp_path / file).write_text(text.replace(old, new))
    return str(tmp_path / "ptx.cat")


# ---- fence.sc is a release and an acquire fence (ptx-common.cat FRel / FAcq) --------------------

MP_FENCE_SC_RELEASE = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; fence.sc.gpu; st.relaxed.gpu.global.u32 [y], 1; }
.thread T1 .cta 1 { ld.acquire.gpu.global.u32 %r0, [y]; ld.global.u32 %r1, [x]; }
exists (T1:%r0 == 1 && T1:%r1 == 0)
"""

MP_FENCE_SC_ACQUIRE = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; st.release.gpu.global.u32 [y], 1; }
.thread T1 .cta 1 { ld.relaxed.gpu.global.u32 %r0, [y]; fence.sc.gpu; ld.global.u32 %r1, [x]; }
exists (T1:%r0 == 1 && T1:%r1 == 0)
"""


@pytest.mark.parametrize("src", [MP_FENCE_SC_RELEASE, MP_FENCE_SC_ACQUIRE], ids=["release", "acquire"])
def test_fence_sc_is_a_release_and_an_acquire_fence(src):
    """ISA "Release and Acquire Patterns": a release (acquire) pattern may start (end) with a
    fence.sc — the fence table lists fence.sc with release and acquire semantics. MP where one side's
    pattern is a lone fence.sc: in ptx.cat it synchronizes with the other side's release/acquire and
    the stale read of x is forbidden. Dat3M tags fence.sc SC only (ptx-v7.5.cat, ptx-v6.0.cat): no
    pattern, and one fence.sc has no fence-SC order partner, so the stale read is allowed there.
    (Also kills mutants fence-sc-no-release, fence-sc-no-acquire, v75-fence-sc-release.)"""
    assert check(src, "ptx").holds is False
    assert check(src, "ptx-v7.5").holds is True
    assert check(src, "ptx-v6.0").holds is True


# ---- memory fences are generic-proxy operations (ptx-common.cat same-proxy) ----------------------

MP_FENCES = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; fence.acq_rel.gpu; st.relaxed.gpu.global.u32 [y], 1; }
.thread T1 .cta 1 { ld.relaxed.gpu.global.u32 %r0, [y]; fence.acq_rel.gpu; ld.global.u32 %r1, [x]; }
exists (T1:%r0 == 1 && T1:%r1 == 0)
"""


def test_fences_are_generic_proxy_operations(tmp_path):
    """The ISA's own MP-with-fences litmus test (fence.acq_rel on both sides) is forbidden: the two
    fence patterns synchronize, which needs the fences to be morally strong with each other, hence
    of one proxy. The mixed-proxy Alloy model gives fences no proxy at all, so no pair involving a
    fence is morally strong and fence-based patterns never synchronize: the test becomes allowed.
    ptx.cat (and Dat3M, since its PR #594) treat memory fences as generic."""
    assert check(MP_FENCES, "ptx").holds is False
    assert check(MP_FENCES, "ptx-v7.5").holds is False
    alloy_like = variant(tmp_path, "ptx-common.cat",
                         "let same-proxy = (GEN * GEN) | (TEX * TEX) | (SUR * SUR) | (CON * CON)",
                         "let same-proxy = ((GEN * GEN) | (TEX * TEX) | (SUR * SUR) | (CON * CON))"
                         " \\ ((F * _) | (_ * F))")
    assert check(MP_FENCES, alloy_like).holds is True


# ---- observation is transitive through atomics inside causality (ptx.cat cause) ------------------

OBS_THROUGH_RMW = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.relaxed.gpu.global.u32 [x], 1; }
.thread T1 .cta 1 { atom.relaxed.gpu.global.exch.b32 %r0, [x], 2; }
.thread T2 .cta 2 { ld.relaxed.gpu.global.u32 %r1, [x]; ld.global.u32 %r2, [x]; }
exists (T1:%r0 == 1 && T2:%r1 == 2 && T2:%r2 == 2)
"""


def _race_flagged(model: str) -> bool:
    res = check(OBS_THROUGH_RMW, model)
    [sat] = [o for o in res.outcomes if o.satisfies]
    return "data-race" in sat.flags


def test_observation_through_an_atomic_orders_a_later_weak_read():
    """ISA "Causality Order": X obs Z and Z ppcb Y, where observation is recursive — W is observed
    by R if R reads W morally strongly, or reads an atomic that observed W. T0's store is observed
    by T2's relaxed load through T1's exchange, and that load is po-before T2's weak load, so
    the store is causally before the weak load: no data race between them in ptx.cat. Dat3M's
    ptx-v7.5.cat uses one observation step (obs1? ; ppcb) in causality and reports that pair as a
    race. No *verdict* can differ (argued in models/ptx.cat next to `cause`): the last write of
    the chain is one step from Z, and co orders the chain."""
    assert check(OBS_THROUGH_RMW, "ptx").holds is True
    assert check(OBS_THROUGH_RMW, "ptx-v7.5").holds is True
    assert not _race_flagged("ptx")
    assert _race_flagged("ptx-v7.5")


# ---- a data race is between operations: an atom's two halves are one operation (ptx-common.cat) --



def test_a_race_is_between_operations_not_rmw_halves(tmp_path):
    """Dat3M's cats state no data-race flag; the event-level reading `conflict \\ (ms | cause |
    cause^-1)` (what ptxmm reported before) lets the read half of the first block's atom race with
    the last block's reset, although the atom as one operation is observed by the last block's
    atom and so causality-ordered before the reset. ptx.cat lifts causality to operations."""
    races = lambda res: [f for f in res.findings if f.name == "data-race"]  # noqa: E731
    assert races(check(LAST_BLOCK_RESET, "ptx")) == []
    old = "flag ~empty (conflict \\ (ms | (same-op ; (cause | cause^-1) ; same-op))) as data-race"
    by_event = "flag ~empty (conflict \\ (ms | cause | cause^-1)) as data-race"
    events = variant(tmp_path, "ptx.cat", old, by_event)
    found = races(check(LAST_BLOCK_RESET, events))
    assert {(e.thread, e.line) for f in found for e in f.events} >= {("T0", 4), ("T1", 14)}


# ---- a count-less barrier waits for every thread of the CTA (ptx.cat Barrier-progress) ------------

# Dat3M's corpus test SB+bar-const-diff, in its dialect: `bar.cta.sync c` without a quorum
SB_BAR_CONST_DIFF = """PTX SB+bar-const-diff
{
x=0;
y=0;
}
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 st.weak x, 1   | st.weak y, 1   ;
 bar.cta.sync 0 | bar.cta.sync 1 ;
 ld.weak r0, y  | ld.weak r1, x  ;
forall
(P0:r0 == 1 \\/ P1:r1 == 1)
"""

# the same program in PTX syntax: `bar.sync a` without a count
SB_BAR_SYNC_DIFF = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; bar.sync 0; ld.global.u32 %r0, [y]; }
.thread T1 .cta 0 { st.global.u32 [y], 1; bar.sync 1; ld.global.u32 %r1, [x]; }
forall (T0:%r0 == 1 || T1:%r1 == 1)
"""


def _hangs(src: str, model: str):
    from ptxmm.queries.hangs import find_hangs

    return find_hangs(ptxmm.parse(src), model)


@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5"])
def test_countless_barriers_of_different_ids_in_ptx_deadlock(model):
    """PTX syntax follows the ISA: every non-exited thread of the CTA participates in `bar.sync a`
    (bar/barrier; exit releases the barrier only for threads that exit), so each thread waits for
    the other, which waits at another barrier: no execution in the safety check, and both threads
    blocked in the liveness check — one rule (semantics/barrier_waits.py)."""
    assert not check(SB_BAR_SYNC_DIFF, model).outcomes
    (h,) = _hangs(SB_BAR_SYNC_DIFF, model)
    assert h.threads == (0, 1) and "never arrives in its phase" in h.finding.detail


@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5"])
def test_countless_barriers_of_different_ids_in_dat3m_dialect_pass(model):
    """Dat3M's dialect is read as Dat3M reads it: its count-less `bar.cta.sync c` synchronizes the
    threads that arrive at it and waits for no other, so SB is allowed (expected.csv: the forall
    fails) and no thread blocks — again the same rule in both checks."""
    res = check(SB_BAR_CONST_DIFF, model)
    assert res.outcomes and res.holds is False
    assert _hangs(SB_BAR_CONST_DIFF, model) == []
