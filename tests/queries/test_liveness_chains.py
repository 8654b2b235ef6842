"""RMW chains in the liveness problem (queries.hangs.CHAINS, issue 40): the hang query's Z3 problem
encodes a location written only by morally strong RMWs as a chain, as the check's problem does, and
that changes no answer — the same threads that can hang and the same "undecided" reason as the
plain rf/co encoding, on random programs around a grid barrier's arrival count
(tests/support/chain_gen.py) under every progress model (and the brute-force oracle's where its
candidate space is small), and on the bundled grid barrier."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT
from support.chain_gen import program
from support.launches import SETTINGS

from ptxmm import parse
from ptxmm.queries import hangs
from ptxmm.queries.hangs import MODELS, decide, liveness_graph


def _answer(prog, monkeypatch, chains: bool, progress: str = "fair") -> tuple:
    monkeypatch.setattr(hangs, "CHAINS", chains)
    hs, why = decide(prog, "ptx", progress=progress)
    return sorted({t for h in hs for t in h.threads}), why


@settings(max_examples=25, derandomize=True, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), progress=st.sampled_from(MODELS))
def test_generated_chains_agree_with_the_plain_encoding(monkeypatch, seed, progress):
    prog = parse(program(seed), "generated.ptx")
    plain = _answer(prog, monkeypatch, False, progress)
    assert _answer(prog, monkeypatch, True, progress) == plain, program(seed)


@pytest.mark.parametrize("progress", ["fair", "obe"])
def test_generated_chains_agree_with_brute_force(monkeypatch, progress):
    """With chains, the threads that can hang are the oracle's (tests/queries/test_hangs_brute.py
    compares the plain encoding the same way), on the two-thread programs of the first 40 seeds
    whose candidate space the oracle can walk."""
    from ptxmm.engines import candidate_space
    from ptxmm.engines.brute_liveness import brute_hangs
    from ptxmm.semantics.vocab import candidates

    compared = 0
    for seed in range(40):
        prog = parse(program(seed, threads=2), "generated.ptx")
        eg = liveness_graph(prog, 2, hangs.Progress.parse(progress))
        if candidate_space(eg, candidates(eg), 50_000) is None:
            continue
        compared += 1
        oracle = sorted({t for h in brute_hangs(prog, "ptx", progress=progress) for t in h})
        assert _answer(prog, monkeypatch, True, progress)[0] == oracle, program(seed, threads=2)
    assert compared >= 4


def test_the_generated_programs_have_chains_and_hangs(monkeypatch):
    """The generator reaches what the test is about: a chain in the liveness graph, both verdicts."""
    progs = [parse(program(s), "generated.ptx") for s in range(12)]
    assert sum(bool(chains_of(p)) for p in progs) >= 6
    answers = [_answer(p, monkeypatch, True) for p in progs]
    assert any(a[0] for a in answers) and any(not a[0] and a[1] is None for a in answers)


def grid(n: int):
    """The bundled grid barrier (examples/kernels/grid-barrier.cu) at ``n`` blocks of one thread."""
    from ptxmm import load
    from ptxmm.kernel.kernels import KernelArgs

    launch = f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])"
    return load(ROOT / "examples" / "kernels" / "grid-barrier.ptx", kernel=KernelArgs(launch=launch))


@pytest.mark.parametrize("n", [2, 3])
def test_the_grid_barrier_terminates_either_way(monkeypatch, n):
    assert chains_of(grid(n)) == ["count[0]"]
    for progress in ("fair", "obe"):
        assert _answer(grid(n), monkeypatch, True, progress) == _answer(grid(n), monkeypatch, False, progress)
    assert _answer(grid(n), monkeypatch, True) == ([], None)


POLL = """.global .u32 c = 0;
.thread T0 .cta 0 { .reg .pred %p<2>;
  P0:
  atom.relaxed.gpu.global.add.u32 %r0, [c], 0;
  setp.lt.u32 %p0, %r0, 2;
  @%p0 bra P0;
}
.thread T1 .cta 0 {
  atom.relaxed.gpu.global.add.u32 %r1, [c], 1;
}
exists (c == 0)
"""


def test_a_chain_read_in_a_loop_is_bound_to_see_the_last_write(monkeypatch):
    """T0 polls c with a fetch-and-add of 0 (a chain read in its loop) until it reaches 2, which one
    add of 1 never makes: the stuck test binds the read to a co-maximal write as it does in the
    plain encoding (rf from the chain's positions), which the read of an RMW cannot meet (its own
    write is co-later); both answer "no hang found, undecided" (an iteration writes memory)."""
    prog = parse(POLL, "poll.ptx")
    assert sorted(chains_of(prog)) == ["c"]
    plain = _answer(prog, monkeypatch, False)
    assert plain[0] == [] and "writes memory" in plain[1]
    assert _answer(prog, monkeypatch, True) == plain


def chains_of(prog) -> list[str]:
    from ptxmm.semantics.rmw_chains import chains

    return sorted(chains(liveness_graph(prog, 2, hangs.Progress())))
