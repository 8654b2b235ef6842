"""Engine agreement (the brute-force enumerator is the oracle of the Z3 engine), on random
programs under every bundled model."""

from __future__ import annotations

import pytest
from grammar_gen import valid_ptx
from hypothesis import HealthCheck, assume, given, settings

import ptxmm
from ptxmm.events import build


@pytest.mark.parametrize("model", ["ptx", "sc"])
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(src=valid_ptx(max_threads=3, max_events=4))
def test_z3_equals_brute_force(model, src):
    p = ptxmm.parse(src, "t.ptx")
    assume(len(build(p).events) <= 10)
    z = ptxmm.check(p, model, engine="z3", flags=False)
    b = ptxmm.check(p, model, engine="brute", flags=False)
    assert z.outcome_set == b.outcome_set, src


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(src=valid_ptx(max_threads=2, max_events=4))
def test_sc_outcomes_are_ptx_outcomes(src):
    """SC is stronger than PTX: every SC outcome is allowed by the PTX model (an SC-consistent
    execution of a program that runs to completion is PTX-consistent)."""
    p = ptxmm.parse(src, "t.ptx")
    sc = ptxmm.check(p, "sc", flags=False).outcome_set
    ptx = ptxmm.check(p, "ptx", flags=False).outcome_set
    assert sc and sc <= ptx, src
