"""A split candidate changes one thread of a kernel; its graph is built with the read-only fold found
from that thread's unfolded build alone and the original's record of the other threads' accesses
(semantics/unreached.py fold_of_thread_edit, explanation/fixjudge.py ONE_THREAD_FOLD), not from a
whole unfolded build: the graph is the builder's (the number of memo answers aside, which counts
the questions of both passes), for every split of random kernels and of CUB's packed tile states,
and the proposals (text and JSON) are those without the shortcut."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT
from test_fix_split_paths import OOB, X2
from test_fix_vector_witness import (
    CONDS,
    DATA_READ,
    HEAD,
    POLL,
    PUBLISH,
    READER,
    REGS,
    WRITER,
    _both,
    _json,
    kernel,
)

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation import fixjudge
from ptxmm.explanation.fix import apply, single_changes
from ptxmm.explanation.fixjudge import Judge
from ptxmm.explanation.targets import target_of, with_target
from ptxmm.semantics.builder import build
from ptxmm.semantics.unreached import fold_of_thread_edit


def _graphs_agree(prog, pairs: int = 0) -> int:
    """Every split of ``prog`` (and up to ``pairs`` pairs of splits in one thread): the judge's
    graph is the builder's; how many took the one-thread fold."""
    judge = Judge(prog, load_model("ptx"), target_of(prog, None))
    splits = [c for c in single_changes(prog) if c.kind == "split"]
    sets = [(c,) for c in splits]
    sets += [(a, b) for a in splits for b in splits
             if a.thread == b.thread and a.index < b.index][:pairs]
    short = 0
    for cs in sets:
        p2, inserted = apply(prog, cs)
        tprog = with_target(p2, judge.target)
        eg2 = judge.whole_graph(tprog, cs)
        built = build(tprog)
        assert replace(eg2, memo_hits=0) == replace(built, memo_hits=0), cs
        short += fold_of_thread_edit(tprog, cs[0].thread, judge._stepped) is not None
    return short


# x[3], which no thread writes, read by each block: the kernel's graph is built with a read-only fold
RO = "\tld.global.u32 %r11, [%rd1+12];\n\tst.global.u32 [%rd2+8], %r11;\n"
FOLDED = {"relaxed-flag": ["\tst.global.u32 [%rd1+8], 7;\n\tmov.u32 %r1, 1;\n"
                           "\tst.relaxed.gpu.global.u32 [%rd1], %r1;\n", POLL + DATA_READ],
          "torn": [PUBLISH, POLL], "oob": [PUBLISH + X2, POLL + OOB], "oob-first": [PUBLISH + X2, OOB + POLL]}


@pytest.mark.parametrize("name", sorted(FOLDED))
def test_split_graphs_are_the_built_ones(name):
    w, r = FOLDED[name]
    assert _graphs_agree(kernel([RO + w, r + RO], "out[0] == 1 && out[1] == 0"), pairs=4) >= 4


@st.composite
def folded_kernels(draw):
    """oob_kernels' blocks (test_fix_split_paths.py), each perhaps reading x[3] first or last."""
    w = "".join(draw(st.lists(st.sampled_from(WRITER), min_size=1, max_size=2, unique=True)))
    r = [POLL] + draw(st.lists(st.sampled_from(READER[1:]), max_size=1))
    if draw(st.booleans()):
        r = [OOB, *r] if draw(st.booleans()) else [*r, OOB]
    w = [RO + w, w + RO, w][draw(st.integers(0, 2))]
    r = [RO + "".join(r), "".join(r) + RO][draw(st.integers(0, 1))]
    conds = draw(st.lists(st.sampled_from(CONDS), min_size=1, max_size=2, unique=True))
    return kernel([w + (X2 if draw(st.booleans()) else ""), r], " && ".join(conds))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(folded_kernels())
def test_random_kernels_split_graphs_are_the_built_ones(prog):
    assert _graphs_agree(prog, pairs=2) > 0


@pytest.mark.slow  # ~1 minute each: every split built twice to compare
@pytest.mark.parametrize("name", ["cub-tile-state-packed-acqrel.ptx", "cub-tile-state-packed.cu"])
def test_the_packed_tile_states_split_graphs_are_the_built_ones(name):
    prog = ptxmm.load(ROOT / "examples" / "kernels" / "real" / name)
    assert _graphs_agree(prog, pairs=6) > 10


def test_a_thread_sharing_its_warp_is_not_taken_alone():
    """Two threads of one warp (one block of 2, both reading x[3]): no one-thread fold; the graph
    is built whole (and is the builder's)."""
    from test_fix_vector_witness import POLL, PUBLISH

    from ptxmm.kernel.kernels import KernelArgs
    from ptxmm.loading import parse_kernel

    body = ("\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u64 %rd2, [k_param_1];\n"
            "\tmov.u32 %r0, %tid.x;\n\tsetp.eq.s32 %p1, %r0, 1;\n\t@%p1 bra B1;\n" + RO + PUBLISH +
            "\tret;\nB1:\n" + POLL + RO + "\tret;\n")
    text = HEAD + (".visible .entry k(\n.param .u64 k_param_0,\n.param .u64 k_param_1\n)\n{\n"
                   f"{REGS}{body}\n}}\n")
    prog = parse_kernel(text, "k.ptx", KernelArgs(launch="k<<<1, 2>>>(unsigned x[4], unsigned out[3])",
                                                  exists="out[0] == 1 && out[1] == 0"))
    assert _graphs_agree(prog) == 0


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(folded_kernels())
def test_random_kernels_get_the_same_fixes_without_the_one_thread_fold(prog):
    fast, _ = _both(prog, max_size=1, bound=24)
    old = fixjudge.ONE_THREAD_FOLD
    fixjudge.ONE_THREAD_FOLD = False
    try:
        slow, _ = _both(prog, max_size=1, bound=24)
    finally:
        fixjudge.ONE_THREAD_FOLD = old
    assert _json(fast) == _json(slow)
    assert [s.text for s in fast.solutions] == [s.text for s in slow.solutions]
