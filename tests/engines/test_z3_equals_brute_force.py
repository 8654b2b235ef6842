"""Engine agreement (the brute-force enumerator is the oracle of the Z3 engine), on random
programs under every bundled model."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.grammar_gen import valid_ptx

import ptxmm
from ptxmm.semantics.builder import build


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


def _exhaustive_phase_groupings(keys: list[tuple]) -> set:
    """Every integer phase numbering (0..n-1) of the arrivals, a key's arrivals strictly
    increasing, as the set of groupings it gives (the Z3 engine's constraint, by brute force)."""
    import itertools

    n, out = len(keys), set()
    for choice in itertools.product(range(n), repeat=n):
        if all(choice[i] < choice[j] for i in range(n) for j in range(i + 1, n) if keys[i] == keys[j]):
            out.add(frozenset(frozenset(a for a in range(n) if choice[a] == p) for p in set(choice)))
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["a", "b"])), min_size=1, max_size=6))
def test_phase_choices_are_the_z3_engines_groupings_once_each(arrivals):
    """The enumerator's barrier phase choices: each grouping the Z3 engine's phase integers allow,
    exactly once, numbered in an order that keeps every thread's arrivals increasing."""
    from types import SimpleNamespace

    from ptxmm.semantics.executions import phase_choices

    evs = [SimpleNamespace(thread=t, barrier=((b,), 2, 0)) for t, b in arrivals]
    eg = SimpleNamespace(events=evs)
    ids = list(range(len(evs)))
    got = []
    for ph in phase_choices(eg, ids):
        assert all(ph[i] < ph[j] for i in ids for j in ids if i < j and arrivals[i] == arrivals[j])
        got.append(frozenset(frozenset(a for a in ids if ph[a] == p) for p in set(ph.values())))
    assert len(got) == len(set(got))
    assert set(got) == _exhaustive_phase_groupings(arrivals)
