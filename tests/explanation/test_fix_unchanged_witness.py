"""A known witness that runs none of the events a candidate changes (explanation/fixjudge.py
UNCHANGED_WITNESSES): whether it is shown allowed on the candidate's patched graph is that of the
graph patched from, judged once. The verdicts, the witnesses' answers and the proposals (text and
JSON) are those of judging every witness again, on random kernels (fences, semantics and scopes in
the other blocks' code and in their own) and the bundled CUB tile state without fences."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from support import ROOT
from test_fix_unreached import branching_kernels
from test_fix_vector_witness import CASES, _both, _json, vector_kernels

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation import fixjudge
from ptxmm.explanation.fix import apply, single_changes
from ptxmm.explanation.fixjudge import Judge
from ptxmm.explanation.targets import target_of


def _verdicts(prog, on: bool):
    """Every single change of ``prog`` (fences, semantics, scopes), and pairs of them in one thread,
    judged with the witnesses, the shortcut on or off: the verdicts and the judge's stats."""
    old = fixjudge.UNCHANGED_WITNESSES
    fixjudge.UNCHANGED_WITNESSES = on
    try:
        judge = Judge(prog, load_model("ptx"), target_of(prog, None))
        cs = [c for c in single_changes(prog) if c.kind in ("fence", "sem", "scope")]
        sets = [(c,) for c in cs] + [(a, b) for a in cs for b in cs
                                     if a.thread == b.thread and a.index < b.index][:40]
        judge.forbids()
        got = [judge.forbids_changes(s, lambda s=s: apply(prog, s)) for s in sets]
    finally:
        fixjudge.UNCHANGED_WITNESSES = old
    return got, judge.stats


def _agree(prog) -> int:
    (a, sa), (b, sb) = _verdicts(prog, True), _verdicts(prog, False)
    assert a == b
    assert (sa.engine_checks, sa.by_witness) == (sb.engine_checks, sb.by_witness)
    assert sb.unchanged == 0
    return sa.unchanged


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_verdicts_are_those_of_judging_every_witness_again(name):
    assert _agree(CASES[name]) > 0


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(branching_kernels())
def test_random_kernels_verdicts(prog):
    _agree(prog)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vector_kernels())
def test_random_vector_kernels_get_the_same_fixes(prog):
    fast, _ = _both(prog, max_size=2, bound=40)
    old = fixjudge.UNCHANGED_WITNESSES
    fixjudge.UNCHANGED_WITNESSES = False
    try:
        slow, _ = _both(prog, max_size=2, bound=40)
    finally:
        fixjudge.UNCHANGED_WITNESSES = old
    assert _json(fast) == _json(slow)
    assert [s.text for s in fast.solutions] == [s.text for s in slow.solutions]


@pytest.mark.slow  # ~1 minute: explain twice
def test_the_unpacked_tile_state_without_fences_explanation_is_the_same(monkeypatch):
    from ptxmm.explanation.explain import explain

    prog = ptxmm.load(ROOT / "examples" / "kernels" / "real" / "cub-tile-state-unpacked-no-fence.ptx")

    def untimed(x) -> dict:
        return {k: v for k, v in x.to_json().items() if k != "time_s"}

    now = untimed(explain(prog, "ptx"))
    monkeypatch.setattr(fixjudge, "UNCHANGED_WITNESSES", False)
    assert now == untimed(explain(prog, "ptx"))
