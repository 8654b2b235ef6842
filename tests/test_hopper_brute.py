"""The brute-force engine's pruned rf search (executions.pruned_rf_choices, issue 27): it yields
exactly the candidate executions the plain product yields and the well-formedness check keeps —
on random programs (hypothesis, against the unpruned enumeration) and on every small Hopper
example — and it brings the Hopper examples within the brute-force engine's reach."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import ROOT
from grammar_gen import valid_ptx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.engines import candidate_space
from ptxmm.events import build
from ptxmm.executions import ExecutionSpace
from ptxmm.vocab import candidates

SLOW = os.environ.get("PTXMM_SLOW") == "1"
HOPPER = sorted((ROOT / "examples" / "hopper").glob("*.ptx"))


def _space(eg, prune: bool) -> list:
    cand = candidates(eg)
    fin = sorted({e.loc for e in eg.events if e.loc is not None})
    return [c.execution for c in ExecutionSpace(eg, cand, fin_locs=fin, prune=prune)]


def _same_candidates(eg) -> None:
    plain, pruned = _space(eg, False), _space(eg, True)
    assert pruned == plain  # the same candidates, in the same order


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.data_too_large])
@given(case=st.integers(1, 2).flatmap(lambda k: st.tuples(st.just(k), valid_ptx(max_threads=3,
                                                                                    max_events=8,
                                                                                    unroll=k))))
def test_pruned_search_yields_the_same_candidates_on_random_programs(case):
    unroll, src = case
    eg = build(ptxmm.parse(src, "t.ptx"), unroll=unroll)
    if candidate_space(eg, candidates(eg), 3000) is None:
        return
    _same_candidates(eg)


SMALL = [p for p in HOPPER if candidate_space(build(ptxmm.load(p)), candidates(build(ptxmm.load(p))),
                                              20000) is not None]


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name)
def test_pruned_search_yields_the_same_candidates_on_small_hopper_examples(path: Path):
    _same_candidates(build(ptxmm.load(path)))


PIPELINES = ["pipeline-tma-async.ptx", "pipeline-tma-async-no-empty-wait.ptx",
             "pipeline-tma-async-no-consumer-fence.ptx"]


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="set PTXMM_SLOW=1 for the brute-force run of the pipelines")
@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_examples_brute_force_equals_z3(name):
    prog = ptxmm.load(ROOT / "examples" / "hopper" / name)
    t = time.time()
    b = ptxmm.check(prog, engine="brute", flags=False, timeout=3600)
    z = ptxmm.check(prog, engine="z3", flags=False)
    assert b.status != "timeout", f"brute force did not finish in {time.time() - t:.0f} s"
    assert z.outcome_set == b.outcome_set and z.holds == b.holds == prog.expect
