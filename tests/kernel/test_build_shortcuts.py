"""The builder's shortcuts for kernels (issue 41: the slowest bundled kernels' check, explain and
graph) build the very graph the plain path builds:

* ``warp_collectives.FILL_MEMO``: the resolution of warp collectives' placeholders remembers what
  it made of each expression node and of each instance's lanes (block-reduce-shfl's five
  shfl.sync.down steps in 128 threads: each lane's value filled once, not once per partner);
* ``builder.ANALYSE_BY_CODE``: the loop analysis is kept per tuple of instructions (the threads
  of a launch share one), not per Thread object.

Each is compared with the plain path on the bundled kernels that use warp collectives or loops,
the liveness graphs included, and on random chains of shuffles (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel.test_warp_collectives import kernel

import ptxmm
from ptxmm.ir.values import Const
from ptxmm.semantics import barrier_waits as bw
from ptxmm.semantics import builder
from ptxmm.semantics import warp_collectives as wc
from ptxmm.semantics.builder import build

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ["kernels/block-reduce-shfl.ptx", "kernels/warp-wait-for-valid.ptx",
           "kernels/real/cg-warp-aggregated-inc.ptx", "kernels/real/cub-tile-state-unpacked.ptx",
           "kernels/real/cub-tile-state-packed-acqrel.ptx", "kernels/real/deepep-barrier-block.ptx"]


def _built(prog, memo: bool, by_code: bool, liveness: bool = False):
    """``prog``'s graph with the shortcuts as given, the loop analyses of earlier builds dropped."""
    old = wc.FILL_MEMO, builder.ANALYSE_BY_CODE
    wc.FILL_MEMO, builder.ANALYSE_BY_CODE = memo, by_code
    builder._ANALYSED.clear()
    try:
        return build(prog, liveness=liveness, prefixes=liveness)
    finally:
        wc.FILL_MEMO, builder.ANALYSE_BY_CODE = old


def _same(a, b) -> None:
    assert a.events == b.events
    assert a.paths == b.paths
    assert a.edges == b.edges and a.init == b.init
    assert a.unspecified == b.unspecified and a.warnings == b.warnings and a.undecided == b.undecided
    assert a == b


@pytest.mark.parametrize("path", KERNELS)
@pytest.mark.parametrize("liveness", [False, True])
def test_shortcuts_build_the_plain_graph(path, liveness):
    prog = ptxmm.load(ROOT / "examples" / path)
    _same(_built(prog, True, True, liveness), _built(prog, False, False, liveness))


def test_block_reduce_values_are_the_sums_of_the_warps():
    """Resolved through the memo, lane 0 of each warp of block-reduce-shfl holds its warp's sum
    (thread t's input is t + 1: warp 0 stores 1 + ... + 32 = 528, warp 1 33 + ... + 64 = 1552, in
    each of the two blocks), constants after the resolution."""
    prog = ptxmm.load(ROOT / "examples/kernels/block-reduce-shfl.ptx")
    eg = _built(prog, True, True)
    stores = [(e.thread, e.value) for e in eg.events if e.thread >= 0 and e.kind.name == "W"
              and e.loc.startswith("warp_aggregates")]
    assert stores == [(0, Const(528, 32)), (32, Const(1552, 32)), (64, Const(528, 32)),
                      (96, Const(1552, 32))]


def test_loop_analyses_of_different_code_are_not_shared():
    """Kept per tuple of instructions: a second kernel with other loops built after a first, in
    one process, gets its own analysis (the graph the plain path builds from a clear cache)."""
    a = ptxmm.load(ROOT / "examples/kernels/block-reduce-shfl.ptx")
    b = ptxmm.load(ROOT / "examples/kernels/real/cub-tile-state-unpacked.ptx")
    for first, second in ((a, b), (b, a)):
        for liveness in (False, True):
            plain = _built(second, False, False, liveness)
            builder._ANALYSED.clear()
            build(first, liveness=liveness, prefixes=liveness)  # the cache holds the first's analysis
            _same(build(second, liveness=liveness, prefixes=liveness), plain)


_MODES = st.sampled_from(["up", "down", "bfly", "idx"])


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(st.tuples(_MODES, st.integers(0, 7), st.sampled_from([0x1f, 0x0f, 0x1c1f])),
                      min_size=1, max_size=4),
       n=st.sampled_from([4, 8, 33]), mask=st.sampled_from([0xFFFFFFFF, 0x0F, 0x55]),
       liveness=st.booleans())
def test_chains_of_shuffles_build_the_plain_graph(steps, n, mask, liveness):
    """A chain of shuffles, each adding what it reads to the running value (as a warp reduction
    does), over full and partial warps and masks: the memo's graph is the plain one."""
    code = "".join(f"\tshfl.sync.{m}.b32 %r5|%p2, %r2, {b}, {c}, {mask};\n\tadd.s32 %r2, %r2, %r5;\n"
                   for m, b, c in steps) + "\tmov.u32 %r3, %r2;\n\tselp.u32 %r4, 1, 0, %p2;"
    if mask != 0xFFFFFFFF:  # only the lanes of the mask run it (the others' own mask would exclude them)
        code = f"\tand.b32 %r9, %r1, 31;\n\tshl.b32 %r9, 1, %r9;\n\tand.b32 %r9, %r9, {mask};\n" \
               f"\tsetp.eq.u32 %p3, %r9, 0;\n\t@%p3 bra SKIP;\n{code}\nSKIP:"
    prog = kernel(code, n, list(range(1, n + 1)))
    _same(_built(prog, True, True, liveness), _built(prog, False, False, liveness))


# ----- barrier_waits.PHASE_FIRST: the solver's formula is the plain path's ------------------------


def _problem(eg, sure: bool):
    """The Z3 problem of ``eg`` under ptx (within ``sure_arrivals`` when ``sure``: the liveness
    problem of a check whose hangs are ruled out)."""
    from contextlib import nullcontext

    from ptxmm.cat.parser import load_model
    from ptxmm.engines.z3 import Z3Problem
    from ptxmm.semantics.vocab import candidates

    with bw.sure_arrivals() if sure else nullcontext():
        return Z3Problem(eg, load_model("ptx"), [], candidates(eg), flags=False)


def _both_formulas(eg, sure: bool) -> tuple[list[int], list[int]]:
    """What the two problems (PHASE_FIRST on, off) assert, term by term: Z3 hash-conses the terms
    of one context, so two terms alive at once are the same term exactly when their ids are equal
    (the same structure, argument for argument)."""
    old = bw.PHASE_FIRST
    pbs = []
    try:
        for on in (True, False):
            bw.PHASE_FIRST = on
            pbs.append(_problem(eg, sure))
        assert pbs[0].lg.ctx is pbs[1].lg.ctx
        return tuple([pb.lg.z3(c).get_id() for c in pb._base] for pb in pbs)  # type: ignore[return-value]
    finally:
        bw.PHASE_FIRST = old
        for pb in pbs:
            pb.close()


@pytest.mark.parametrize("liveness", [False, True])
def test_phase_first_asserts_the_plain_formula_for_block_reduce(liveness):
    """block-reduce-shfl: its check's problem and its liveness problem (as the check builds it
    after the collectives' proof, within ``sure_arrivals``) assert the same terms in the same
    order, argument for argument."""
    eg = build(ptxmm.load(ROOT / "examples/kernels/block-reduce-shfl.ptx"), liveness=liveness)
    fast, plain = _both_formulas(eg, liveness)
    assert fast == plain


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(st.tuples(_MODES, st.integers(0, 3)), min_size=1, max_size=3),
       n=st.sampled_from([3, 4, 6]), partial=st.booleans(), sure=st.booleans())
def test_phase_first_asserts_the_plain_formula(steps, n, partial, sure):
    """Shuffles (one phase per step) and a bar.sync, some lanes skipping them: the liveness
    problem's formula (where lanes block, exit early and wait for each other) is the plain one."""
    mask = (1 << n) - 1
    code = "".join(f"\tshfl.sync.{m}.b32 %r5|%p2, %r2, {b}, {n - 1}, {mask};\n\tadd.s32 %r2, %r2, %r5;\n"
                   for m, b in steps) + "\tbar.sync 0;\n\tmov.u32 %r3, %r2;\n\tselp.u32 %r4, 1, 0, %p2;"
    if partial:  # lanes whose input is 0 skip everything: the others wait for them at each phase
        code = f"\t@!%p1 bra SKIP;\n{code}\nSKIP:"
    ins = [i % 3 for i in range(n)]
    eg = build(kernel(code, n, ins), liveness=True, prefixes=False)
    fast, plain = _both_formulas(eg, sure)
    assert fast == plain
    if not eg.unspecified:  # (a lane absent from a shuffle gives an unspecified value: brute refuses it)
        prog = kernel(code, n, ins)
        z3 = _values(ptxmm.check(prog, flags=False))
        old = bw.PHASE_FIRST
        try:
            for on in (True, False):  # the brute-force engine's concrete barriers, both ways
                bw.PHASE_FIRST = on
                assert _values(ptxmm.check(prog, flags=False, engine="brute")) == z3
        finally:
            bw.PHASE_FIRST = old


def _values(res) -> set:
    return {tuple(sorted(o.outcome.as_dict().items())) for o in res.outcomes}
