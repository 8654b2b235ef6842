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
