"""The fix search judged by known witnesses first (explanation/fixjudge.py, issue 41) proposes
the very fixes of the plain search (one engine check per candidate): on bundled examples, a
Hopper one included, and on random small litmus tests."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation.fix import search
from ptxmm.explanation.targets import target_of

EXAMPLES = ["classic/MP-relaxed.ptx", "classic/SB-relaxed.ptx", "classic/LB-relaxed.ptx",
            "classic/2+2W-weak.ptx", "classic/IRIW-relaxed.ptx", "mp-relaxed-acquire.ptx",
            "teaching/19-acq-rel-is-not-a-full-fence.ptx", "hopper/remote-arrive-2cta-relaxed.ptx"]


def _both(prog, max_size: int = 2, bound: int = 400):
    m = load_model("ptx")
    t = target_of(prog, None)
    fast = search(prog, m, t, bound=bound, max_size=max_size, budget_s=None)
    plain = search(prog, m, t, bound=bound, max_size=max_size, budget_s=None, witnesses=False)
    return fast, plain


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_same_fixes_as_one_engine_check_per_candidate(name):
    fast, plain = _both(ptxmm.load(ROOT / "examples" / name))
    assert [s.text for s in fast.solutions] == [s.text for s in plain.solutions]
    assert (fast.checked, fast.already, fast.bound_hit) == (plain.checked, plain.already, plain.bound_hit)
    assert plain.engine_checks == plain.checked + (not plain.already)  # the plain search: every one
    if not fast.already and fast.checked > 4:  # the witnesses answered most candidates
        assert fast.engine_checks < plain.engine_checks


def test_an_inserted_fence_sc_takes_each_place_in_the_sc_order():
    """Store buffering with fence.sc in one thread: the fix adds fence.sc in the other, which the
    witnesses must place in the order of fence.sc events before judging."""
    text = """.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.relaxed.gpu.global.u32 [x], 1; fence.sc.gpu; ld.relaxed.gpu.global.u32 %r0, [y]; }
.thread T1 .cta 1 { st.relaxed.gpu.global.u32 [y], 1; ld.relaxed.gpu.global.u32 %r0, [x]; }
exists (T0:%r0 == 0 && T1:%r0 == 0)"""
    fast, plain = _both(ptxmm.parse(text), max_size=1)
    assert [s.text for s in fast.solutions] == [s.text for s in plain.solutions]
    assert any("fence.sc" in s.text for s in fast.solutions)


SEMS = {"ld": ["", ".relaxed.gpu", ".acquire.gpu"], "st": ["", ".relaxed.gpu", ".release.gpu"]}


@st.composite
def litmus(draw) -> str:
    """Two threads (same or different CTAs) of one to three loads and stores of x and y, of
    random semantics, perhaps a fence; the condition: some loaded values."""
    lines = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    conds = []
    for t in range(2):
        body = []
        for i in range(draw(st.integers(1, 3))):
            loc = draw(st.sampled_from(["x", "y"]))
            if draw(st.booleans()):
                body.append(f"ld{draw(st.sampled_from(SEMS['ld']))}.global.u32 %r{i}, [{loc}];")
                conds.append(f"T{t}:%r{i} == {draw(st.integers(0, 1))}")
            else:
                sem, v = draw(st.sampled_from(SEMS["st"])), draw(st.integers(1, 2))
                body.append(f"st{sem}.global.u32 [{loc}], {v};")
            if draw(st.integers(0, 4)) == 0:
                body.append(draw(st.sampled_from(["fence.acq_rel.gpu;", "fence.sc.gpu;"])))
        cta = draw(st.integers(0, 1)) if t else 0
        lines.append(f".thread T{t} .cta {cta} {{ " + " ".join(body) + " }")
    if not conds:
        lines[-1] = lines[-1].replace("{ ", "{ ld.global.u32 %r9, [x]; ", 1)
        conds.append("T1:%r9 == 0")
    lines.append("exists (" + " && ".join(conds[:3]) + ")")
    return "\n".join(lines)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(litmus())
def test_random_litmus_tests_get_the_same_fixes(text):
    fast, plain = _both(ptxmm.parse(text), max_size=2, bound=60)
    assert [s.text for s in fast.solutions] == [s.text for s in plain.solutions]
    assert fast.already == plain.already and fast.checked == plain.checked


PATCHED = ["classic/MP-relaxed.ptx", "classic/IRIW-fence-acqrel.ptx", "classic/LostUpdate-relaxed-atom.ptx",
           "classic/CoRR-fence-sc-weak.ptx", "hopper/pipeline-tma-async-no-empty-wait.ptx",
           "kernels/mp-block-scope.cu"]


@pytest.mark.parametrize("name", PATCHED)
def test_patched_graphs_are_the_built_ones(name):
    """A candidate's event graph made from its fences' graph with the semantics and scopes
    patched in is the graph the builder makes of the changed program (every single change, and
    every pair of a fence and another change)."""
    import itertools

    from ptxmm.explanation.fix import apply, single_changes
    from ptxmm.explanation.fixjudge import Judge, event_map
    from ptxmm.explanation.targets import with_target
    from ptxmm.semantics.builder import build

    prog = ptxmm.load(ROOT / "examples" / name)
    t = target_of(prog, None)
    judge = Judge(prog, load_model("ptx"), t)
    singles = single_changes(prog)
    pairs = [cs for cs in itertools.combinations(singles, 2) if len({c.site for c in cs}) == 2
             and sum(c.kind == "fence" for c in cs) == 1][:40]
    patched = 0
    for cs in [(c,) for c in singles] + pairs:
        p2, inserted = apply(prog, cs)
        tprog = with_target(p2, t)
        eg2, emap = judge.graph_of(cs, tprog, inserted)
        built = build(tprog)
        assert eg2.events == built.events and eg2.paths == built.paths and eg2.edges == built.edges
        assert emap == event_map(judge.eg, built, inserted)
        patched += eg2 is not built
    assert judge.stats.built == 0 and patched > 0


@pytest.mark.parametrize("name", ["classic/SB-relaxed.ptx", "hopper/pipeline-tma-async-no-empty-wait.ptx"])
def test_graphs_of_fences_at_the_same_places_are_the_built_ones(name, monkeypatch):
    """The graph of a program with fences inserted, made from the graph of other fences at the
    same places (fixjudge.refenced: each fence's events take the new semantics and scope), is the
    graph the builder makes of that program — one fence and two, every semantics at each place."""
    import itertools

    from ptxmm.explanation import fixjudge
    from ptxmm.explanation.fix import apply, single_changes
    from ptxmm.explanation.fixjudge import Judge, event_map, refenced
    from ptxmm.explanation.targets import with_target
    from ptxmm.semantics.builder import build

    prog = ptxmm.load(ROOT / "examples" / name)
    t = target_of(prog, None)
    judge = Judge(prog, load_model("ptx"), t)
    builds = []
    monkeypatch.setattr(fixjudge, "build", lambda p, **kw: builds.append(p) or build(p, **kw))
    places: dict[tuple, list] = {}
    for c in single_changes(prog):
        if c.kind == "fence":
            places.setdefault((c.thread, c.index), []).append(c)
    groups = list(places.values())[:4]
    sets = [(c,) for g in groups for c in g]
    sets += [cs for g1, g2 in itertools.combinations(groups, 2) for cs in itertools.product(g1, g2)][:48]
    for cs in sets:
        p2, inserted = apply(prog, cs)
        tprog = with_target(p2, t)
        eg2, emap = judge.graph_of(cs, tprog, inserted)
        built = build(tprog)
        assert eg2 == built
        assert emap == event_map(judge.eg, built, inserted)
    # one build for each set of places, the other fences there patched in
    assert len(builds) == len({tuple((c.thread, c.index) for c in cs) for cs in sets}) < len(sets)
    # fences at other places: not made from that graph
    one, other = groups[0][0], groups[1][0]
    eg1 = build(with_target(apply(prog, (one,))[0], t))
    assert refenced(eg1, with_target(apply(prog, (other,))[0], t), (one,), (other,)) is None
