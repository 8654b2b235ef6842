"""A chain write that does not execute has position -1 (engines/z3/chains.IDLE_POSITION, issue 40):
that changes no answer — the same status, verdict, outcomes, findings and liveness with the switch
on and off and as the plain rf/co encoding, on the grid barrier (its atomicExch reset runs in one
block only), on random programs around a grid barrier's arrival count (tests/support/chain_gen.py:
resets, skipped and doubled arrivals, wrong counts) in the check and in the liveness problem under
every progress model, and on random histogram launches. A position of 0 for a write that does not
run (the mutant chain-idle-position-zero) is killed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT
from support.chain_gen import program
from support.launches import SETTINGS
from support.launches import hist as _hist

import ptxmm
from ptxmm.engines.z3 import chains as z3chains
from ptxmm.queries import checker, hangs
from ptxmm.queries.hangs import MODELS, decide

GRID = ROOT / "examples" / "kernels" / "grid-barrier.ptx"


def _grid(n: int):
    from ptxmm.kernel.kernels import KernelArgs

    launch = f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])"
    want = " && ".join(f"out[{b}] == {(b + 1) % n + 1}" for b in range(n))
    return ptxmm.load(GRID, kernel=KernelArgs(launch=launch, forall=want))


def _answer(res) -> tuple:
    outs = sorted(tuple(sorted(o.outcome.values)) for o in res.outcomes)
    finds = sorted((f.kind.value, f.name, tuple(sorted((e.line, e.text) for e in f.events)))
                   for f in res.findings)
    return res.status, res.holds, outs, finds, res.liveness


def _check(prog, monkeypatch, chains: bool, idle: bool = True):
    monkeypatch.setattr(checker, "RMW_CHAINS", chains)
    monkeypatch.setattr(z3chains, "IDLE_POSITION", idle)
    return _answer(ptxmm.check(prog, engine="z3"))


def _three(prog, monkeypatch) -> tuple:
    """The plain encoding's answer, after asserting that chains with and without the idle
    positions give it too."""
    plain = _check(prog, monkeypatch, False)
    assert _check(prog, monkeypatch, True, idle=False) == plain
    assert _check(prog, monkeypatch, True, idle=True) == plain
    return plain


@pytest.mark.parametrize("n", [2, 3])
def test_the_grid_barrier_agrees(monkeypatch, n):
    """Its outcome fixed (each block reads its neighbour's slot), no finding, no hang; the mutant
    chain-idle-position-zero (a reset that does not run takes position 0, the first arrival's
    place) leaves no execution and is killed here."""
    status, holds, outs, finds, live = _three(_grid(n), monkeypatch)
    assert (status, holds, finds, live) == ("ok", True, [], "terminates")
    assert len(outs) == 1
    want = {f"out[{b}]": (b + 1) % n + 1 for b in range(n)}
    assert {k: v for k, v in outs[0] if k.startswith("out")} == want


@settings(max_examples=15, derandomize=True, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1))
def test_generated_chain_programs_agree(monkeypatch, seed):
    """chain_gen's litmus programs (two to four threads): the check's answers."""
    prog = ptxmm.parse(program(seed), "generated.ptx")
    _three(prog, monkeypatch)


def _hangs(prog, monkeypatch, chains: bool, idle: bool, progress: str) -> tuple:
    monkeypatch.setattr(hangs, "CHAINS", chains)
    monkeypatch.setattr(z3chains, "IDLE_POSITION", idle)
    hs, why = decide(prog, "ptx", progress=progress)
    return sorted({t for h in hs for t in h.threads}), why


@settings(max_examples=15, derandomize=True, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), progress=st.sampled_from(MODELS))
def test_generated_liveness_agrees(monkeypatch, seed, progress):
    """The liveness problem (queries.hangs.CHAINS): the same threads hang, for the same reason."""
    prog = ptxmm.parse(program(seed), "generated.ptx")
    plain = _hangs(prog, monkeypatch, False, True, progress)
    assert _hangs(prog, monkeypatch, True, False, progress) == plain
    assert _hangs(prog, monkeypatch, True, True, progress) == plain


@settings(max_examples=6, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=4))
def test_histogram_launches_agree(monkeypatch, vals):
    _three(_hist(vals), monkeypatch)


def test_the_generated_programs_have_resets_that_may_not_run():
    """The generator reaches what the switch is about: a chain with a write that may not execute."""
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.rmw_chains import chains

    hits = 0
    for seed in range(12):
        eg = build(ptxmm.parse(program(seed), "generated.ptx"))
        for ch in chains(eg).values():
            if any("exch" in str(eg.events[w].instr) for w in ch.writes):
                hits += 1
                break
    assert hits >= 3
