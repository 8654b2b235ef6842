"""The Z3 engine's enumeration: blocking clauses, and a formula enumerated in parts that share no
variable (engines/z3/ ``outcomes``, ``_parts``, ``_product``).

Every outcome it yields must be one brute force finds, none twice, none missed; and every witness
must be an execution the model allows whose observables show that outcome, with the flags the
model raises on it. The parts path is forced on small programs by lowering ``_SPLIT_AFTER``."""

from __future__ import annotations

import sys

import pytest
import z3
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support import ROOT
from support.grammar_gen import valid_ptx

import ptxmm
import ptxmm.engines.z3.problem as z3engine
from ptxmm.cat import axioms as ax
from ptxmm.cat.parser import load_model
from ptxmm.engines import candidate_space
from ptxmm.explanation.explain import concrete
from ptxmm.semantics.builder import build
from ptxmm.semantics.outcomes import observables, outcome_of
from ptxmm.semantics.vocab import candidates

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402


def _witnesses_hold(prog, res, model: str, unroll: int = 2) -> None:
    """Each witness is allowed, shows its outcome, and raises exactly the flags reported."""
    eg = build(prog, unroll=unroll)
    m = load_model(model)
    obs = observables(eg, "all")
    cand = candidates(eg)
    for info in res.outcomes:
        assert outcome_of(eg, obs, info.witness) == info.outcome
        c = concrete(eg, m, info.witness, cand)
        assert c.violated() == [], (info.outcome, info.witness)
        raised = sorted({st.name for _, st, v in c.flags if ax.holds(st.check, v) != st.negated})
        assert sorted(set(info.flags)) == raised, (info.outcome, info.witness)


@pytest.fixture
def split_early(monkeypatch):
    """Look for parts after the first outcome; record whether the product ran."""
    ran = []
    monkeypatch.setattr(z3engine, "_SPLIT_AFTER", 1)
    product = z3engine.Z3Problem._product

    def spy(self, *a):
        ran.append(True)
        yield from product(self, *a)

    monkeypatch.setattr(z3engine.Z3Problem, "_product", spy)
    return ran


def test_iriw_readers_enumerate_in_parts_with_the_same_outcomes(split_early):
    prog = ptxmm.parse(shapes.iriw(3).ptx(), "iriw3.ptx")
    parts = ptxmm.check(prog, "ptx", engine="z3")
    assert split_early, "IRIW's readers under ptx share no variable: the product must run"
    brute = ptxmm.check(prog, "ptx", engine="brute")
    assert parts.outcome_set == brute.outcome_set
    assert len(parts.outcomes) == len(parts.outcome_set) == 4 ** 3
    assert parts.holds == brute.holds
    _witnesses_hold(prog, parts, "ptx")


def test_groups_join_terms_that_share_a_constant():
    x, y, z, w = (z3.BitVec(n, 8) for n in "xyzw")
    roots = [x + y == 1, y == 3, z == w, z3.BitVecVal(5, 8) == 5, w != 2, x == 0]
    ctx = z3.main_ctx().ref().value
    g = z3engine._groups(ctx, [r.as_ast().value for r in roots])
    assert g[0] == g[1] == g[5] and g[2] == g[4]
    assert g[0] != g[2] and g[0] is not None and g[2] is not None
    assert g[3] is None  # ground


def test_sc_iriw_in_parts_keeps_its_outcomes(split_early):
    """Under SC the reads are one part (the final values of x and y are parts of their own)."""
    prog = ptxmm.parse(shapes.iriw(2).ptx(), "iriw.ptx")
    res = ptxmm.check(prog, "sc", engine="z3")
    assert res.outcome_set == ptxmm.check(prog, "sc", engine="brute").outcome_set
    _witnesses_hold(prog, res, "sc")


def test_without_parts_the_same_outcomes(monkeypatch):
    prog = ptxmm.parse(shapes.sb(3, 2, 2).ptx(), "sb.ptx")
    monkeypatch.setattr(z3engine, "_SPLIT_AFTER", 10 ** 9)
    whole = ptxmm.check(prog, "ptx", engine="z3")
    monkeypatch.setattr(z3engine, "_SPLIT_AFTER", 1)
    parts = ptxmm.check(prog, "ptx", engine="z3")
    assert whole.outcome_set == parts.outcome_set
    assert len(parts.outcomes) == len(parts.outcome_set)
    _witnesses_hold(prog, parts, "ptx")


def test_stopping_early_leaves_the_problem_usable(monkeypatch):
    """max_outcomes stops inside the product; the check still reports what it found."""
    monkeypatch.setattr(z3engine, "_SPLIT_AFTER", 2)
    prog = ptxmm.parse(shapes.iriw(3).ptx(), "iriw3.ptx")
    res = ptxmm.check(prog, "ptx", engine="z3", max_outcomes=10)
    assert len(res.outcomes) == len(res.outcome_set) == 10
    assert res.status == "stopped" and res.stopped_at == 10


_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.data_too_large])


@settings(max_examples=60, **_SETTINGS)
@given(case=st.tuples(st.sampled_from(["ptx", "ptx", "ptx-v6.0", "sc"]),
                      valid_ptx(max_threads=3, max_events=7, unroll=1)))
def test_parts_equal_brute_force_on_random_programs(case):
    model, src = case
    prog = ptxmm.parse(src, "t.ptx")
    eg = build(prog, unroll=1)
    assume(candidate_space(eg, candidates(eg), 800) is not None)
    old = z3engine._SPLIT_AFTER
    z3engine._SPLIT_AFTER = 1  # hypothesis and function-scoped fixtures do not mix
    try:
        z = ptxmm.check(prog, model, engine="z3", unroll=1)
    finally:
        z3engine._SPLIT_AFTER = old
    b = ptxmm.check(prog, model, engine="brute", flags=False, unroll=1)
    assert z.outcome_set == b.outcome_set, f"{model}:\n{src}"
    assert len(z.outcomes) == len(z.outcome_set)
    assert z.holds == b.holds
    _witnesses_hold(prog, z, model, unroll=1)


def test_an_enumeration_closed_early_gives_back_a_clean_pooled_solver():
    """A consumer that stops and closes the problem before the generator ends: the solver goes
    back to the pool with no blocking clause, and serves the next problem rightly."""
    prog = ptxmm.parse(shapes.iriw(2).ptx(), "iriw.ptx")
    eg = build(prog)
    cand = candidates(eg)
    pb = z3engine.Z3Problem(eg, load_model("ptx"), observables(eg, "all"), cand)
    assert pb.pooled
    gen = pb.outcomes()
    next(gen)
    s = pb.s
    pb.close()
    gen.close()
    assert s.num_scopes() == 0 and len(s.assertions()) == 0
    pb2 = z3engine.Z3Problem(eg, load_model("ptx"), observables(eg, "all"), cand)
    assert len(list(pb2.outcomes())) == 16
    pb2.close()


def test_a_fresh_solver_enumerates_what_brute_force_finds():
    """Found by test_fuzz: the first problem of a process (a fresh solver) got 66 outcomes for 3
    when the enumeration switched Z3's relevancy off on a solver already holding assertions."""
    text = """PTX fuzz_1
"a generated test"
{ x = 01;
y = 0x0;
data = 16;
P0:r0 = -1 };
 0@cta 1,gpu 0 | P1@cta 0,gpu 1 ;
 ld.relaxed.gpu r0, y | ld r0, 0     ;
 st.mmio.relaxed.sys data, r0 | L0:          ;
              | st.weak data, r0 ;
              | add r0, r0, 1 ;
              | blt r0, 1, L0 ;
              | red.acquire.cta.dec y, r0 ;
              | mul r1, r0, 3 ;
              | beq r0, -2147483648, LC11 ;
              | tld r2, 3    ;
              | LC11:        ;
exists (x <= 1)
"""
    p = ptxmm.parse(text, "t.litmus", "litmus")
    z3engine._POOL.clear()  # the first problem of a process: a fresh solver
    z = ptxmm.check(p, engine="z3")
    assert z.outcome_set == ptxmm.check(p, engine="brute").outcome_set
    assert len(z.outcomes) == len(z.outcome_set)


def test_a_part_without_observables_does_not_split_the_enumeration(monkeypatch):
    """The race query asked before the enumeration (queries/races.EARLY) leaves a guarded clause
    over variables of its own: a second group, but one without an observable. Splitting there
    would enumerate the one group holding every observable a Z3 model per outcome and skip
    .satenum (x1l3 under ptx: 2.2 s → 21 s in session 20); the enumeration must go on in SAT."""
    import ptxmm.engines.z3.satenum as satenum
    import ptxmm.queries.races as races

    assert races.EARLY
    product, sat = [], []
    monkeypatch.setattr(z3engine.Z3Problem, "_product", lambda self, *a: product.append(1) or iter(()))
    real = satenum.sat_enumerator

    def spy(*a, **k):
        sat.append(1)
        return real(*a, **k)

    monkeypatch.setattr(z3engine, "sat_enumerator", spy)
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    res = ptxmm.check(prog, "ptx", engine="z3")
    assert not product and sat
    assert res.outcome_set == ptxmm.check(prog, "ptx", engine="brute").outcome_set
    assert len(res.outcome_set) == 162 and any(f for o in res.outcomes for f in o.flags)
