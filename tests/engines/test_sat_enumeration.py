"""The Z3 engine's enumeration on a SAT solver (engines/z3/satenum.py): the formula as clauses once,
every outcome one SAT call, blocked over the observables' digits.

Every outcome it yields must be one brute force (and the SMT enumeration) finds, none twice, none
missed; every witness an execution the model allows that shows its outcome, with the flags the
model raises on it. The SAT path is forced on small programs by lowering ``_SAT_AFTER`` (and
``_SPLIT_AFTER`` raised, so that a formula in parts still goes there)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support import ROOT
from support.grammar_gen import valid_ptx

import ptxmm
import ptxmm.engines.z3.problem as z3engine
from ptxmm.engines import candidate_space
from ptxmm.engines.z3 import satenum
from ptxmm.semantics.builder import build
from ptxmm.semantics.vocab import candidates

pytest.importorskip("pysat.solvers")  # a dependency; skipped where an install lacks it

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "engines"))
from test_enumeration_in_parts import _witnesses_hold  # noqa: E402


class _Forced:
    """Force the SAT path after ``after`` outcomes; ``ran`` counts the SAT enumerations that
    applied (the spy sees sat_enumerator's answer), ``small`` those that went on from the
    preprocessed formula (satenum._preprocessed's answer)."""

    def __init__(self, after: int = 1):
        self.after, self.ran, self.small = after, 0, 0

    def __enter__(self):
        self.old = z3engine._SAT_AFTER, z3engine._SPLIT_AFTER, z3engine.sat_enumerator, satenum._preprocessed
        real, pre = self.old[2], self.old[3]

        def spy(pb, seen, packed):
            it = real(pb, seen, packed)
            if it is not None:
                self.ran += 1
            return it

        def spy_pre(*args):
            out = pre(*args)
            self.small += out is not None
            return out

        z3engine._SAT_AFTER, z3engine._SPLIT_AFTER, z3engine.sat_enumerator = self.after, 10 ** 9, spy
        satenum._preprocessed = spy_pre
        return self

    def __exit__(self, *exc):
        z3engine._SAT_AFTER, z3engine._SPLIT_AFTER, z3engine.sat_enumerator, satenum._preprocessed = self.old


def _smt(prog, model, **kw):
    """The check with the SAT enumeration switched off."""
    old = satenum.ENABLED
    satenum.ENABLED = False
    try:
        return ptxmm.check(prog, model, engine="z3", **kw)
    finally:
        satenum.ENABLED = old


@pytest.mark.parametrize("model", ["ptx", "sc"])
def test_one_location_outcomes_are_the_smt_enumerations(model):
    """Two threads of 2 stores + 2 loads to one x: nothing splits; acyclicity's integer ranks
    become bit-vectors in the clauses."""
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    with _Forced(8) as f:
        sat = ptxmm.check(prog, model, engine="z3")
    assert f.ran == 1
    smt = _smt(prog, model)
    assert sat.outcome_set == smt.outcome_set
    assert len(sat.outcomes) == len(sat.outcome_set) > 8
    assert sat.holds == smt.holds
    _witnesses_hold(prog, sat, model)


@pytest.mark.parametrize("model", ["ptx", "sc"])
def test_the_preprocessed_formula_gives_the_same_outcomes(monkeypatch, model):
    """The clauses preprocessed with the varying digits frozen (the rest eliminated, renumbered):
    the same outcomes, each once, with witnesses the model allows, as the formula as blasted;
    PTXMM_SAT_PREPROCESS=0 (or satenum.PREPROCESS) switches the preprocessing off."""
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    with _Forced(8) as f:
        pre = ptxmm.check(prog, model, engine="z3")
    assert f.ran == f.small == 1
    monkeypatch.setenv("PTXMM_SAT_PREPROCESS", "0")
    with _Forced(8) as f:
        plain = ptxmm.check(prog, model, engine="z3")
    assert f.ran == 1 and f.small == 0
    assert pre.outcome_set == plain.outcome_set
    assert len(pre.outcomes) == len(pre.outcome_set) > 8
    assert [o.flags for o in sorted(pre.outcomes, key=lambda o: o.outcome.values)] == \
        [o.flags for o in sorted(plain.outcomes, key=lambda o: o.outcome.values)]
    _witnesses_hold(prog, pre, model)
    monkeypatch.delenv("PTXMM_SAT_PREPROCESS")
    monkeypatch.setattr(satenum, "PREPROCESS", False)
    with _Forced(8) as f:
        ptxmm.check(prog, model, engine="z3")
    assert f.ran == 1 and f.small == 0


def test_the_switch_keeps_the_smt_enumeration(monkeypatch):
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    monkeypatch.setenv("PTXMM_SAT_ENUM", "0")
    assert not satenum.enabled()
    with _Forced(1) as f:
        res = ptxmm.check(prog, "ptx", engine="z3")
    assert f.ran == 0
    assert len(res.outcomes) == len(res.outcome_set) == 162


def test_stopping_early_inside_the_sat_enumeration():
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    with _Forced(2) as f:
        res = ptxmm.check(prog, "ptx", engine="z3", max_outcomes=10)
    assert f.ran == 1
    assert len(res.outcomes) == len(res.outcome_set) == 10
    assert res.status == "stopped" and res.stopped_at == 10


def test_iriw_readers_under_the_sat_enumeration_equal_brute_force():
    """Symmetry breaking (interchangeable readers) is assumed in the clauses too."""
    prog = ptxmm.parse(shapes.iriw(3).ptx(), "iriw3.ptx")
    with _Forced(1) as f:
        sat = ptxmm.check(prog, "ptx", engine="z3")
    assert f.ran == 1
    assert sat.outcome_set == ptxmm.check(prog, "ptx", engine="brute").outcome_set
    assert len(sat.outcomes) == len(sat.outcome_set) == 4 ** 3
    _witnesses_hold(prog, sat, "ptx")


_RAN: list[int] = []  # per example: whether the SAT path ran (the last test checks it did)
_SMALL: list[int] = []  # per example: whether it ran on the preprocessed formula

_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.data_too_large])


@settings(max_examples=60, **_SETTINGS)
@given(case=st.tuples(st.sampled_from(["ptx", "ptx", "ptx-v6.0", "sc"]),
                      valid_ptx(max_threads=3, max_events=7, unroll=1)))
def test_sat_enumeration_equals_brute_force_and_smt_on_random_programs(case):
    model, src = case
    prog = ptxmm.parse(src, "t.ptx")
    eg = build(prog, unroll=1)
    assume(candidate_space(eg, candidates(eg), 800) is not None)
    with _Forced(1) as f:
        z = ptxmm.check(prog, model, engine="z3", unroll=1)
    _RAN.append(f.ran)
    _SMALL.append(f.small)
    b = ptxmm.check(prog, model, engine="brute", flags=False, unroll=1)
    assert z.outcome_set == b.outcome_set, f"{model}:\n{src}"
    assert z.outcome_set == _smt(prog, model, unroll=1).outcome_set
    assert len(z.outcomes) == len(z.outcome_set)
    assert z.holds == b.holds
    _witnesses_hold(prog, z, model, unroll=1)


def test_the_random_programs_reached_the_sat_enumeration():
    """Most random programs have more than one outcome and no value read from a model: the SAT
    path must have run on many of them (else the property above tests nothing)."""
    if not _RAN:
        pytest.skip("run with the property test")
    assert sum(_RAN) >= len(_RAN) // 3, _RAN
    # on the preprocessed formula: each time one outcome is not all there is (a program whose
    # observables have one value ends before it; 13 of 36 in these examples)
    assert 4 * sum(_SMALL) >= sum(_RAN) > 0, (_SMALL, _RAN)


class _Cubed:
    """The enumeration goes on in cubes after ``after`` outcomes of one solver (at most ``most``
    values); ``cubes`` lists the number of cubes of each enumeration that split."""

    def __init__(self, monkeypatch, after: int = 1, most: int | None = None):
        self.cubes: list[int] = []
        real = satenum._cubes

        def spy(*args):
            out = real(*args)
            if out is not None:
                self.cubes.append(len(out))
            return out

        monkeypatch.setattr(satenum, "_cubes", spy)
        monkeypatch.setattr(satenum, "_CUBE_AFTER", after)
        if most is not None:
            monkeypatch.setattr(satenum, "_CUBE_MAX", most)


def _by_values(res) -> list:
    return [(o.outcome, o.satisfies, tuple(o.flags))
            for o in sorted(res.outcomes, key=lambda o: o.outcome.values)]


@pytest.mark.parametrize("model", ["ptx", "sc"])
@pytest.mark.parametrize("after", [1, 5, 40])
def test_the_cubes_give_the_outcomes_of_one_solver(monkeypatch, model, after):
    """Past ``_CUBE_AFTER`` outcomes the rest is enumerated per value of one observable, a solver
    each: the same outcomes (each once, judged and flagged the same) as one solver gives, with
    witnesses the model allows; PTXMM_SAT_CUBES=0 (or satenum.CUBES) keeps one solver. (Under
    sc two threads have 12 outcomes: three threads, 468.)"""
    n = 2 if model == "ptx" else 3
    prog = ptxmm.parse(shapes.one_location(n).ptx(), f"x1l{n}.ptx")
    with _Forced(8):
        one = ptxmm.check(prog, model, engine="z3")
    c = _Cubed(monkeypatch, after)
    with _Forced(8) as f:
        cubed = ptxmm.check(prog, model, engine="z3")
    assert f.small == 1 and len(c.cubes) == 1 and c.cubes[0] >= 2, c.cubes
    assert len(cubed.outcomes) == len(cubed.outcome_set) == len(one.outcomes) > 8 + after
    assert _by_values(cubed) == _by_values(one)
    _witnesses_hold(prog, cubed, model)
    for off in ("env", "switch"):
        with monkeypatch.context() as mp:
            if off == "env":
                mp.setenv("PTXMM_SAT_CUBES", "0")
            else:
                mp.setattr(satenum, "CUBES", False)
            with _Forced(8):
                plain = ptxmm.check(prog, model, engine="z3")
        assert len(c.cubes) == 1  # not called again
        assert _by_values(plain) == _by_values(one)


def test_too_many_values_to_split_on_keep_one_solver(monkeypatch):
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    with _Forced(8):
        one = ptxmm.check(prog, "ptx", engine="z3")
    c = _Cubed(monkeypatch, 1, most=1)
    with _Forced(8):
        res = ptxmm.check(prog, "ptx", engine="z3")
    assert c.cubes == []
    assert _by_values(res) == _by_values(one)


def test_stopping_early_inside_the_cubes(monkeypatch):
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    c = _Cubed(monkeypatch, 1)
    with _Forced(2):
        res = ptxmm.check(prog, "ptx", engine="z3", max_outcomes=30)
    assert len(c.cubes) == 1
    assert len(res.outcomes) == len(res.outcome_set) == 30
    assert res.status == "stopped"


_CUBES_RAN: list[int] = []


@settings(max_examples=60, **_SETTINGS)
@given(case=st.tuples(st.sampled_from(["ptx", "ptx-v6.0", "sc"]),
                      valid_ptx(max_threads=3, max_events=8, unroll=1)), after=st.sampled_from([1, 1, 3]))
def test_cubes_equal_brute_force_on_random_programs(case, after):
    model, src = case
    prog = ptxmm.parse(src, "t.ptx")
    eg = build(prog, unroll=1)
    assume(candidate_space(eg, candidates(eg), 800) is not None)
    with pytest.MonkeyPatch.context() as mp:
        c = _Cubed(mp, after)
        with _Forced(1):
            z = ptxmm.check(prog, model, engine="z3", unroll=1)
    _CUBES_RAN.append(len(c.cubes))
    b = ptxmm.check(prog, model, engine="brute", flags=False, unroll=1)
    assert z.outcome_set == b.outcome_set, f"{model}:\n{src}"
    assert len(z.outcomes) == len(z.outcome_set)
    assert z.holds == b.holds
    _witnesses_hold(prog, z, model, unroll=1)


def test_the_random_programs_reached_the_cubes():
    """Few random programs have outcomes enough, in two observables or more, to split: some must
    have (else the property above tests nothing)."""
    if not _CUBES_RAN:
        pytest.skip("run with the property test")
    assert sum(1 for n in _CUBES_RAN if n) >= 4, _CUBES_RAN


_RMW3 = """.test RMW3
.global .u32 x = 0;
.thread T0 { atom.global.add.u32 %r0, [x], 1; }
.thread T1 { atom.global.add.u32 %r0, [x], 2; }
.thread T2 { atom.global.add.u32 %r0, [x], 4; ld.global.u32 %r1, [x]; }
exists (T0:%r0 == 0)
"""


@pytest.mark.parametrize("chains", [False, True])
def test_rmw_chains_integer_positions_stay_on_smt(monkeypatch, chains):
    """RMW chains number their writes with integers the tactics cannot blast: DIMACS would make
    such atoms free Booleans (found: 20,000 outcomes for 12), so the SAT path must decline;
    without chains it applies. Both give brute force's outcomes."""
    import ptxmm.queries.checker as checker

    monkeypatch.setattr(checker, "RMW_CHAINS", chains)
    prog = ptxmm.parse(_RMW3, "rmw3.ptx")
    with _Forced(1) as f:
        res = ptxmm.check(prog, "ptx", engine="z3")
    assert f.ran == (0 if chains else 1)
    assert res.outcome_set == ptxmm.check(prog, "ptx", engine="brute").outcome_set
    assert len(res.outcomes) == len(res.outcome_set) == 12
