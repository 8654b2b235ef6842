"""Fences the fix search inserts where a thread's build never came near (semantics/unreached.py,
explanation/fixjudge.py UNREACHED_FENCES): the changed program's graph is the original's, not
built. Every fence place of random kernels (blocks branching to their own code, so most places
of a thread lie in the other blocks' code) and of the bundled CUB tile-state kernels: the graph
the judge uses is the one the builder makes (and the map of the original's events), and the
proposals (text and JSON) are those without the shortcut."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT
from test_fix_vector_witness import CASES, DATA_READ, POLL, PUBLISH, _both, kernel

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation import fixjudge
from ptxmm.explanation.eventmap import unspecs_of
from ptxmm.explanation.fix import apply, search, single_changes
from ptxmm.explanation.fixjudge import Judge, event_map
from ptxmm.explanation.targets import target_of, with_target


def _graphs_agree(prog, pairs: int = 0) -> int:
    """Every fence change (and up to ``pairs`` pairs of them in one thread) of ``prog``: the
    judge's graph and event map are the builder's; how many took the shortcut."""
    t = target_of(prog, None)
    judge = Judge(prog, load_model("ptx"), t)
    fences = [c for c in single_changes(prog) if c.kind == "fence"]
    sets = [(c,) for c in fences]
    sets += [cs for cs in itertools.combinations(fences, 2)
             if cs[0].thread == cs[1].thread and cs[0].index != cs[1].index][:pairs]
    short = 0
    for cs in sets:
        p2, inserted = apply(prog, cs)
        tprog = with_target(p2, t)
        eg2, emap = judge.graph_of(cs, tprog, inserted)
        built = judge.fenced_graph(tprog)  # the build it would make
        assert eg2 == built, cs
        assert emap == event_map(judge.eg, built, inserted)
        _values_follow_events(judge.eg, eg2, emap)
        short += len(eg2.events) == len(judge.eg.events) and eg2.events == judge.eg.events
    return short


def _values_follow_events(eg, eg2, emap) -> int:
    """Each unspecified value the map carries (keys < 0) is named by the images of the events that
    name it, and described alike (the same instruction); how many it renumbers."""
    moved = 0
    for old, new in emap.items():
        if old >= 0 or new is None:
            continue
        u, v = -1 - old, -1 - new
        assert eg.unspecified[u].where == eg2.unspecified[v].where
        for e in eg.events:
            if u in unspecs_of(e.cond) and e.eid in emap:
                assert v in unspecs_of(eg2.events[emap[e.eid]].cond)
        moved += u != v
    return moved


@pytest.mark.slow  # ~3 minutes each: every fence place built to compare
@pytest.mark.parametrize("name", ["cub-tile-state-unpacked-no-fence.ptx", "cub-tile-state-packed-acqrel.ptx"])
def test_the_tile_state_kernels_fence_graphs_are_the_built_ones(name):
    prog = ptxmm.load(ROOT / "examples" / "kernels" / "real" / name)
    assert _graphs_agree(prog, pairs=6) > 10


PIECES = ["\tst.global.u32 [%rd1+8], 7;\n", "\tmov.u32 %r1, 1;\n\tst.relaxed.gpu.global.u32 [%rd1], %r1;\n",
          "\tld.relaxed.gpu.global.u32 %r6, [%rd1];\n\tst.global.u32 [%rd2], %r6;\n", DATA_READ, PUBLISH,
          POLL,
          "L{L}:\n\tld.relaxed.gpu.global.u32 %r7, [%rd1];\n\tsetp.eq.s32 %p2, %r7, 0;\n"
          "\t@%p2 bra L{L};\n\tst.global.u32 [%rd2+4], %r7;\n",
          "\tsetp.eq.s32 %p3, %r0, {k};\n\t@%p3 bra.uni M{L};\n\tst.global.u32 [%rd2+4], 5;\nM{L}:\n"]
CONDS = ["out[0] == 1", "out[0] == 0", "out[2] == 0", "out[1] == 5"]


@st.composite
def branching_kernels(draw):
    """Two or three blocks, each running one to three of PIECES (a spin loop, a guarded skip)."""
    n = draw(st.integers(2, 3))
    blocks = []
    for k in range(n):
        ps = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3))
        blocks.append("".join(p.replace("{L}", f"{k}_{j}").replace("{k}", str(k)) for j, p in enumerate(ps)))
    conds = draw(st.lists(st.sampled_from(CONDS), min_size=1, max_size=2, unique=True))
    return kernel(blocks, " && ".join(conds))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(branching_kernels())
def test_random_kernels_fence_graphs_are_the_built_ones(prog):
    _graphs_agree(prog, pairs=4)


def _json(report) -> dict:
    return {k: v for k, v in report.to_json().items() if k not in ("time_s", "engine_checks")}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(branching_kernels())
def test_random_kernels_get_the_same_fixes_without_the_builds(prog):
    m, t = load_model("ptx"), target_of(prog, None)
    fast = search(prog, m, t, bound=40, max_size=1, budget_s=None)
    try:
        fixjudge.UNREACHED_FENCES = False
        plain = search(prog, m, t, bound=40, max_size=1, budget_s=None)
    finally:
        fixjudge.UNREACHED_FENCES = True
    assert _json(fast) == _json(plain)
    assert [s.text for s in fast.solutions] == [s.text for s in plain.solutions]


def test_a_fence_in_another_blocks_code_takes_the_original_graph():
    """Block 0 branches past block 1's code: a fence there runs on none of thread 0's paths;
    one in thread 0's own code is built."""
    prog = kernel(["\tst.global.u32 [%rd1+8], 7;\n", POLL + DATA_READ], "out[2] == 0")
    assert _graphs_agree(prog) > 0


# two kernels the property test above found (session 18): `explain --fix` raised instead of proposing
SPIN = "L{k}:\n\tld.relaxed.gpu.global.u32 %r7, [%rd1];\n\tsetp.eq.s32 %p2, %r7, 0;\n\t@%p2 bra L{k};\n" \
       "\tst.global.u32 [%rd2+4], %r7;\n"


def test_a_witness_that_does_not_fix_a_vectors_order_is_left_to_the_engine():
    """A fence inserted after thread 0's spin loop gives its vector store's order another number
    in the changed graph: the known witness names no order of thread 1's store, whose write its
    read reads. Which events it runs is not decided (executions.executed_if_decided): not a
    witness there; the engine decides, no order is invented."""
    prog = kernel([SPIN.format(k=0) + PUBLISH, PUBLISH], "out[0] == 0")
    fast, plain = _both(prog)
    assert _json(fast) == _json(plain)
    assert fast.engine_checks < plain.engine_checks  # the witnesses still answer candidates


def test_a_pack_the_builder_refuses_is_not_proposed():
    """Thread 1 spins on x[0] with a 32-bit load; no thread writes x, so the read-only fold leaves
    that path hanging and the original's graph shows no access of x but the acquire vector's.
    Packing x would make the spin's load a mixed-size access, which the builder refuses
    (ir/layout.py): no pack candidate, and the search answers as the plain one."""
    prog = kernel([POLL, SPIN.format(k=1)], "out[0] == 1")
    assert not [c for c in single_changes(prog) if c.kind == "pack"]
    # packed where it builds
    assert [c.region for c in single_changes(CASES["torn"]) if c.kind == "pack"] == ["x"]
    fast, plain = _both(prog)
    assert _json(fast) == _json(plain)
    assert [s.text for s in fast.solutions] == [s.text for s in plain.solutions]


def test_a_fence_that_renumbers_a_vectors_order_carries_the_witnesses_value():
    """The fence after thread 0's spin loop gives thread 1's vector store the fourth unspecified
    value, not the second: the map carries the witness's order there (eventmap.unspec_map), so
    the witness decides which writes run and answers the candidate without the engine."""
    prog = kernel([SPIN.format(k=0) + PUBLISH, PUBLISH], "out[0] == 0")
    judge = Judge(prog, load_model("ptx"), target_of(prog, None))
    fence = next(c for c in single_changes(prog)
                 if c.kind == "fence" and c.thread == 0 and c.sem == "release")
    p2, inserted = apply(prog, (fence,))
    eg2, emap = judge.graph_of((fence,), with_target(p2, judge.target), inserted)
    assert _values_follow_events(judge.eg, eg2, emap) == 1
    assert emap[-2] == -4  # thread 1's store: the second value before, the fourth after
    assert not judge.forbids()
    before = judge.stats.engine_checks
    assert not judge.forbids_changes((fence,), lambda: (p2, inserted))
    assert judge.stats.engine_checks == before and judge.stats.by_witness == 1
