"""Issue 40 (the grid barrier at 16 blocks): ``relalg.KEYS_ONLY`` — the guarded closure on pair
keys alone (``relalg.closure_keys``) under a Logic whose only term is one opaque value (the co
analysis's FreeLogic) — gives the guarded Warshall's result: the same static rows and the same
guarded pairs, each guarded by the opaque term.

By property: random relations over up to 30 events (static and guarded pairs, events that always,
sometimes or never execute, random ``implied`` rows and ``apart`` sets), the keys-only closure
against ``_closure_guarded``; and ``semantics.knowledge.co_must`` with the switch on and off on
the grid barrier at 2-4 blocks, on chain_gen's grid-barrier-shaped programs and on grammar_gen's
random programs (the same pairs; the keys-only closure is seen to run)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.chain_gen import program
from support.grammar_gen import valid_ptx

import ptxmm
from ptxmm.cat import relalg
from ptxmm.cat.parser import load_model
from ptxmm.cat.relalg import Rel, Universe
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.semantics.builder import build
from ptxmm.semantics.knowledge import _TERM, FreeLogic, co_must
from ptxmm.semantics.vocab import candidates

ROOT = Path(__file__).resolve().parents[2]


def _relation(seed: int) -> Rel:
    rnd = random.Random(seed)
    n = rnd.randint(1, 30)
    ex = [rnd.choice([True, True, _TERM, _TERM, False]) for _ in range(n)]
    implied = [sum(1 << j for j in range(n) if j == i or ex[j] is True or rnd.random() < 0.1)
               for i in range(n)]
    u = Universe(ex, FreeLogic(), implied)
    if rnd.random() < 0.7:
        away = [sum(1 << j for j in range(n) if j != i and rnd.random() < 0.15) for i in range(n)]
        u.apart = away.__getitem__
    density = rnd.choice([0.05, 0.1, 0.25])
    must: dict[int, int] = {}
    may = {}
    for a in range(n):
        for b in range(n):
            if rnd.random() < density:
                if rnd.random() < 0.4:
                    must[a] = must.get(a, 0) | (1 << b)
                else:
                    may[(a, b)] = _TERM
    for (a, b) in list(may):
        if (must.get(a, 0) >> b) & 1:
            del may[(a, b)]
    return Rel(u, must, may)


def _norm(r: Rel) -> tuple[dict[int, int], dict]:
    return {a: row for a, row in r.must.items() if row}, dict(r.may)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_keys_only_closure_is_the_guarded_closure(seed):
    rel = _relation(seed)
    nodes = 0
    for a, row in rel.must.items():
        nodes |= row | (1 << a)
    for a, b in rel.may:
        nodes |= (1 << a) | (1 << b)
    assert relalg.keys_only(rel) or not rel.may and all(g is True or g is False for g in rel.u.ex)
    keys = _norm(relalg.closure_keys(Rel(rel.u, dict(rel.must), dict(rel.may)), nodes))
    plain = _norm(Rel(rel.u, dict(rel.must), dict(rel.may))._closure_guarded(nodes))
    assert keys == plain
    assert all(g is _TERM for g in keys[1].values())


def test_keys_only_needs_the_opaque_term():
    """Another term (a solver's) or a Logic without ``opaque``: the guarded Warshall."""
    u = Universe([True, True], FreeLogic(), [3, 3])
    assert relalg.keys_only(Rel(u, {}, {(0, 1): _TERM}))
    assert not relalg.keys_only(Rel(u, {}, {(0, 1): object()}))
    plain = Universe([True, True], type("L", (), {})(), [3, 3])
    assert not relalg.keys_only(Rel(plain, {}, {(0, 1): _TERM}))


def _co_both(eg, model: str, monkeypatch) -> tuple[set, set, int]:
    m = load_model(model)
    cand = candidates(eg)
    calls = []
    keys = relalg.closure_keys

    def spy(rel, nodes):
        calls.append(1)
        return keys(rel, nodes)
    monkeypatch.setattr(relalg, "closure_keys", spy)
    monkeypatch.setattr(relalg, "KEYS_ONLY", True)
    on = co_must(eg, m, cand)
    monkeypatch.setattr(relalg, "KEYS_ONLY", False)
    off = co_must(eg, m, cand)
    return on, off, len(calls)


def _grid(n: int) -> tuple[str, str]:
    launch = f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])"
    cond = " && ".join(f"out[{b}] == {(b + 1) % n + 1}" for b in range(n))
    return launch, cond


@pytest.mark.parametrize("n", [2, 3, 4])
def test_co_analysis_of_the_grid_barrier(monkeypatch, n):
    launch, cond = _grid(n)
    prog = ptxmm.load(ROOT / "examples/kernels/grid-barrier.ptx",
                      kernel=KernelArgs(launch=launch, forall=cond))
    on, off, calls = _co_both(build(prog), "ptx", monkeypatch)
    assert on == off and on
    assert calls > 0


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_co_analysis_of_chain_programs(seed):
    with pytest.MonkeyPatch.context() as mp:
        eg = build(ptxmm.parse(program(seed), "t.ptx"), unroll=2)
        on, off, _ = _co_both(eg, "ptx", mp)
    assert on == off


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(src=valid_ptx(max_threads=3, max_events=6, max_writes=4))
def test_co_analysis_of_random_programs(src):
    with pytest.MonkeyPatch.context() as mp:
        eg = build(ptxmm.parse(src, "t.ptx"), unroll=1)
        for model in ("ptx", "sc"):
            on, off, _ = _co_both(eg, model, mp)
            assert on == off, model
