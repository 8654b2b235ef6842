"""The fix search's judge keeps a graph's candidate pairs (rf, co) by its shape (explanation/
fixjudge.py SHARED_CANDIDATES): a candidate whose graph is patched from another's (semantics,
scopes changed) reuses them, its fence.sc events read again. The candidates are those computed
anew, and the proposals (text and JSON) are the same with and without the sharing, on random
small programs and on a program whose fix makes its fences sc."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from test_fix_witness_search import litmus

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation import fixjudge
from ptxmm.explanation.fix import search
from ptxmm.explanation.targets import target_of


def _json(report) -> dict:
    return {k: v for k, v in report.to_json().items() if k not in ("time_s", "engine_checks")}


def _fresh(c) -> tuple:
    return c.rf, c.co, c.scf, c.writes_at


def _both(prog, max_size: int = 2):
    """The fix search with the shared candidates (each compared with those computed anew) and
    without; the comparisons."""
    m, t = load_model("ptx"), target_of(prog, None)
    seen: list[bool] = []
    real = fixjudge.Judge._candidates

    def checked(self, eg2):
        got = real(self, eg2)
        seen.append(_fresh(got) == _fresh(fixjudge.candidates(eg2)))
        return got

    try:
        fixjudge.Judge._candidates = checked
        shared = search(prog, m, t, bound=60, max_size=max_size, budget_s=None)
        fixjudge.SHARED_CANDIDATES = False
        plain = search(prog, m, t, bound=60, max_size=max_size, budget_s=None)
    finally:
        fixjudge.Judge._candidates = real
        fixjudge.SHARED_CANDIDATES = True
    return shared, plain, seen


SB_ACQREL = """.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.relaxed.gpu.global.u32 [x], 1; fence.acq_rel.gpu; ld.relaxed.gpu.global.u32 %r0, [y]; }
.thread T1 .cta 1 { st.relaxed.gpu.global.u32 [y], 1; fence.acq_rel.gpu; ld.relaxed.gpu.global.u32 %r0, [x]; }
exists (T0:%r0 == 0 && T1:%r0 == 0)"""


def test_fences_made_sc_are_found_with_shared_candidates():
    """Store buffering with acq_rel fences: the fix makes both fences sc, a candidate whose graph
    is the original's patched, its scf read again (not the original's, which has none)."""
    prog = ptxmm.parse(SB_ACQREL)
    shared, plain, seen = _both(prog)
    assert seen and all(seen)
    assert _json(shared) == _json(plain)
    assert any("fence.sc" in s.text for s in shared.solutions)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(litmus())
def test_random_litmus_tests_get_the_same_fixes_with_shared_candidates(text):
    shared, plain, seen = _both(ptxmm.parse(text))
    assert all(seen)
    assert _json(shared) == _json(plain)
    assert [s.text for s in shared.solutions] == [s.text for s in plain.solutions]
