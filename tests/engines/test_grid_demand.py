"""Issue 40 (the grid barrier at 16 blocks): ``cat.interp.DEMAND_CLOSURES`` — each closure of a Z3
problem's evaluation computes only the guarded pairs the axioms and flags can read
(cat/demand.py) — changes no axiom's or flag's value.

By property: over one Z3 problem's own base environment (the same solver variables), the model is
evaluated with and without the demand; every axiom's and every flag's value has the same static
pairs, the same guarded pairs, and each guarded pair's two guards are equivalent (Z3 proves it) —
on the grid barrier at 2-3 blocks (where the demand is seen to cut base causality's closure), on
chain_gen's programs around an RMW chain, and on grammar_gen's random programs, under ptx, and sc
for the latter. And the whole check (status, verdict, outcomes, findings, liveness) with the switch
off and on, on the grid barrier at 2-4 blocks and chain_gen's programs."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.chain_gen import program
from support.grammar_gen import valid_ptx

import ptxmm
from ptxmm.cat import interp, relalg
from ptxmm.cat.parser import load_model
from ptxmm.engines.z3 import Z3Problem
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.semantics.builder import build
from ptxmm.semantics.vocab import base_env, candidates

ROOT = Path(__file__).resolve().parents[2]


def _grid(n: int):
    launch = f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])"
    cond = " && ".join(f"out[{b}] == {(b + 1) % n + 1}" for b in range(n))
    return ptxmm.load(ROOT / "examples/kernels/grid-barrier.ptx",
                      kernel=KernelArgs(launch=launch, forall=cond))


def _same_value(lg, a, b, s: z3.Solver) -> None:
    assert type(a) is type(b)
    if isinstance(a.must, dict):
        assert {k: r for k, r in a.must.items() if r} == {k: r for k, r in b.must.items() if r}
    else:
        assert a.must == b.must
    assert a.may.keys() == b.may.keys()
    for k, g in a.may.items():
        h = b.may[k]
        if g is not h:
            assert s.check(z3.Xor(lg.z3(g), lg.z3(h))) == z3.unsat, k


def _compare(eg, model: str, monkeypatch) -> int:
    """The axioms' and flags' values with and without the demand, over one problem's base
    environment; how many guarded pairs the demand left out of the closures."""
    m = load_model(model) if not model.startswith('"') else _model(model)
    cand = candidates(eg)
    pb = Z3Problem(eg, m, [], cand, flags=True, chains=True)
    cut = []
    closure = relalg.Rel._closure_guarded

    def spy(self, nodes, demand=None):
        out = closure(self, nodes, demand)
        if demand is not None:
            cut.append(len(closure(self, nodes)) - len(out))
        return out
    try:
        monkeypatch.setattr(relalg.Rel, "_closure_guarded", spy)
        env = base_env(eg, pb.ch, cand)
        monkeypatch.setattr(interp, "DEMAND_CLOSURES", True)
        on = interp.run(m, env, flags=True, demand=True)
        monkeypatch.setattr(interp, "DEMAND_CLOSURES", False)
        off = interp.run(m, env, flags=True, demand=True)
        s = z3.SimpleSolver()
        for (sa, a), (sb, b) in zip(on.axioms + on.flags, off.axioms + off.flags, strict=True):
            assert sa is sb
            _same_value(pb.ch.lg, a, b, s)
    finally:
        pb.close()
    return sum(cut)


@pytest.mark.parametrize("n", [2, 3])
def test_grid_barrier_axioms_unchanged(monkeypatch, n):
    assert _compare(build(_grid(n)), "ptx", monkeypatch) > 0  # base causality's closure is cut


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_chain_programs_axioms_unchanged(monkeypatch, seed):
    _compare(build(ptxmm.parse(program(seed), "generated.ptx"), unroll=2), "ptx", monkeypatch)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(src=valid_ptx(max_threads=3, max_events=6, max_writes=3))
def test_random_programs_axioms_unchanged(monkeypatch, src):
    eg = build(ptxmm.parse(src, "t.ptx"), unroll=1)
    for model in ("ptx", "sc"):
        _compare(eg, model, monkeypatch)


# A model whose closure is read through every operator's demand: a union's later operand, an
# intersection, a sequence with a relation before it, a flag.
DEMAND_MODEL = """"demand test model"
let c = (po | rf)+
let d = (c & loc) | (c & ext)
let e = rf ; c ; [W]
acyclic (d | co) as A
irreflexive (e ; co) as B
flag ~empty ((fr ; c ; [R]) & loc) as F
"""


def _model(text: str):
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".cat", delete=False) as f:
        f.write(text)
    return load_model(f.name)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(src=valid_ptx(max_threads=3, max_events=6, max_writes=3))
def test_random_programs_under_every_operator(monkeypatch, src):
    _compare(build(ptxmm.parse(src, "t.ptx"), unroll=1), DEMAND_MODEL, monkeypatch)


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_chain_programs_under_every_operator(monkeypatch, seed):
    _compare(build(ptxmm.parse(program(seed), "generated.ptx"), unroll=2), DEMAND_MODEL, monkeypatch)


def _answer(res) -> tuple:
    outs = sorted(tuple(o.outcome.values) for o in res.outcomes)
    finds = sorted({(str(f.kind), f.name, tuple(sorted(e.line or 0 for e in f.events)))
                    for f in res.findings})
    return res.status, res.holds, outs, finds, res.liveness


def _checks(prog, monkeypatch) -> tuple:
    monkeypatch.setattr(interp, "DEMAND_CLOSURES", False)
    off = _answer(ptxmm.check(prog, liveness=True))
    monkeypatch.setattr(interp, "DEMAND_CLOSURES", True)
    assert _answer(ptxmm.check(prog, liveness=True)) == off
    return off


@pytest.mark.parametrize("n", [2, 3, 4])
def test_grid_barrier_check_unchanged(monkeypatch, n):
    status, holds, _, _, liveness = _checks(_grid(n), monkeypatch)
    assert (status, holds, liveness) == ("ok", True, "terminates")


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_chain_programs_check_unchanged(monkeypatch, seed):
    _checks(ptxmm.parse(program(seed), "generated.ptx"), monkeypatch)


def test_past_the_event_bound_every_closure_is_whole(monkeypatch):
    """The demand is computed only up to interp.DEMAND_MAX_EVENTS executable events (past it, its
    bitset algebra costs more than it saves: the __syncthreads exchange at 1,024 threads took 69 s
    with it, 7 s without; the mutant demand-without-event-bound is killed here): the grid barrier
    at 3 blocks is cut under a bound it fits, and whole under one it passes."""
    assert interp.DEMAND_MAX_EVENTS >= 1024  # the grid barrier at 16 blocks has 274 events
    asked: list = []
    real = interp.closure_demands
    monkeypatch.setattr(interp, "closure_demands", lambda *a: asked.append(1) or real(*a))
    eg = build(_grid(3))
    assert _compare(eg, "ptx", monkeypatch) > 0 and asked
    asked.clear()
    monkeypatch.setattr(interp, "DEMAND_MAX_EVENTS", len(eg.events) - 1)
    assert _compare(eg, "ptx", monkeypatch) == 0 and not asked
