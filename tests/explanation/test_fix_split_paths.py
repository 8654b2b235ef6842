"""Split candidates whose graph's paths are not the original's one for one (explanation/fixjudge.py
SPLIT_PATHS, :class:`~ptxmm.explanation.fixjudge.PathSplit`): an acquire vector whose address is out
of bounds on some path (CUB's packed acq_rel tile state: the look-back's poll of tile -1) forks on
its element order before the thread stops there; once split, one path stops there. The known
witnesses are carried path by path and checked as executions of the changed graph; the verdicts
and the proposals (text and JSON) are the engine's, the plain search's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fix_vector_witness import (
    CONDS,
    POLL,
    PUBLISH,
    READER,
    WRITER,
    _both,
    _json,
    _split_verdicts,
    kernel,
)

from ptxmm.cat.parser import load_model
from ptxmm.explanation import fixjudge
from ptxmm.explanation.fix import apply, single_changes
from ptxmm.explanation.fixjudge import Judge, PathSplit
from ptxmm.explanation.targets import target_of, with_target
from ptxmm.ir.values import evaluate
from ptxmm.semantics.executions import violations
from ptxmm.semantics.vocab import candidates

X2 = "\tst.global.u32 [%rd1+8], 7;\n"  # x[2], which decides whether the reader goes out of bounds
# an acquire vector poll of x[4..5] (x has 4 elements: out of bounds) unless x[2] reads 0
OOB = ("\tld.relaxed.gpu.global.u32 %r8, [%rd1+8];\n\tsetp.eq.s32 %p3, %r8, 0;\n\t@%p3 bra S1;\n"
       "\tld.acquire.gpu.global.v2.u32 {%r9, %r10}, [%rd1+16];\nS1:\n")
CASES = {"oob-after": kernel([PUBLISH + X2, POLL + OOB], "out[0] == 1 && out[1] == 0"),
         "oob-before": kernel([PUBLISH + X2, OOB + POLL], "out[0] == 1 && out[1] == 0")}


def _path_splits(prog) -> list:
    """The split candidates of ``prog`` whose graph the judge carries witnesses to path by path."""
    judge = Judge(prog, load_model("ptx"), target_of(prog, None))
    out = []
    for c in single_changes(prog):
        if c.kind == "split":
            p2, inserted = apply(prog, (c,))
            _eg2, emap = judge.graph_of((c,), with_target(p2, judge.target), inserted)
            if isinstance(emap, PathSplit):
                out.append(c)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_out_of_bounds_vectors_split_has_a_path_fewer_and_the_engines_verdict(name):
    prog = CASES[name]
    assert len(_path_splits(prog)) == 2  # both choices of the flag element of the out-of-bounds poll
    got, stats = _split_verdicts(prog, pairs=True)
    assert got and all(a == b for a, b in got)
    assert stats.by_witness >= len(got) // 2


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_witness_carried_path_by_path_is_an_execution_of_the_changed_graph(name, monkeypatch):
    """Every witness the judge accepts through a PathSplit takes a path of each thread whose
    assumptions its values make true, and is well formed there (rf, co, final)."""
    accepted = []
    real = fixjudge.Judge._allowed

    def spy(self, tprog, eg2, exe, cand, obs):
        ok = real(self, tprog, eg2, exe, cand, obs)
        if ok:
            accepted.append((eg2, exe))
        return ok

    monkeypatch.setattr(fixjudge.Judge, "_allowed", spy)
    prog = CASES[name]
    judge = Judge(prog, load_model("ptx"), target_of(prog, None))
    judge.forbids()
    for c in _path_splits(prog):
        accepted.clear()
        p2, inserted = apply(prog, (c,))
        tprog = with_target(p2, judge.target)
        eg2, emap = judge.graph_of((c,), tprog, inserted)
        assert judge._judged(tprog, eg2, emap) is False  # the target stays allowed
        assert accepted, c  # shown by a known witness, not the engine
        for g, exe in accepted:
            assert not violations(g, candidates(g), exe)
            for t, k in enumerate(exe.paths):
                assert all(evaluate(a, dict(exe.values)) for a in g.paths[t][k].assumes)


def test_without_the_path_carry_the_engine_judges_those_splits(monkeypatch):
    prog = CASES["oob-after"]
    monkeypatch.setattr(fixjudge, "SPLIT_PATHS", False)
    assert _path_splits(prog) == []
    got, _ = _split_verdicts(prog)
    assert all(a == b for a, b in got)


@st.composite
def oob_kernels(draw):
    """vector_kernels (test_fix_vector_witness.py) with the out-of-bounds poll before or after the
    reader's pieces, and x[2] written or not."""
    w = draw(st.lists(st.sampled_from(WRITER), min_size=1, max_size=2, unique=True))
    r = [POLL] + draw(st.lists(st.sampled_from(READER[1:]), max_size=1))
    r = [OOB, *r] if draw(st.booleans()) else [*r, OOB]
    conds = draw(st.lists(st.sampled_from(CONDS), min_size=1, max_size=2, unique=True))
    x2 = X2 if draw(st.booleans()) else ""
    return kernel(["".join(w) + x2, "".join(r)], " && ".join(conds))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(oob_kernels())
def test_random_out_of_bounds_kernels_splits_get_the_engines_verdicts(prog):
    got, _ = _split_verdicts(prog, pairs=True)
    assert all(a == b for a, b in got)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(oob_kernels())
def test_random_out_of_bounds_kernels_get_the_plain_searchs_fixes(prog):
    fast, plain = _both(prog, max_size=1, bound=24)
    assert _json(fast) == _json(plain)
    assert [s.text for s in fast.solutions] == [s.text for s in plain.solutions]


def _engine_witness(prog):
    """The engine's witness of ``prog``'s target, an execution of the judge's graph of it."""
    judge = Judge(prog, load_model("ptx"), target_of(prog, None))
    judge.forbids()
    return judge.eg, judge.pool[0] if judge.pool else None


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(oob_kernels(), st.randoms(use_true_random=False))
def test_well_formed_is_violations_empty(prog, rnd):
    """fixjudge.well_formed (the co-transitive part checked on the execution's own pairs) answers
    as executions.violations does: on engine witnesses, and on them with a co pair dropped, added
    or reversed, an rf source moved to another write, a final write changed."""
    from dataclasses import replace

    from ptxmm.explanation.fixjudge import well_formed

    eg, exe = _engine_witness(prog)
    if exe is None:
        return
    cand = candidates(eg)
    tries = [exe]
    ws = [e.eid for e in eg.events if e.kind == "W"]
    for _ in range(6):
        co = list(exe.co)
        if co and rnd.random() < 0.5:
            a, b = co.pop(rnd.randrange(len(co)))
            if rnd.random() < 0.5:
                co.append((b, a))
        else:
            co.append((rnd.choice(ws), rnd.choice(ws)))
        tries.append(replace(exe, co=tuple(co)))
        if exe.rf:
            rf = list(exe.rf)
            k = rnd.randrange(len(rf))
            rf[k] = (rnd.choice(ws), rf[k][1])
            tries.append(replace(exe, rf=tuple(rf)))
        if exe.final:
            fin = list(exe.final)
            k = rnd.randrange(len(fin))
            fin[k] = (fin[k][0], rnd.choice(ws))
            tries.append(replace(exe, final=tuple(fin)))
    for x in tries:
        assert well_formed(eg, cand, x) == (not violations(eg, cand, x)), x


def test_well_formed_catches_a_co_that_is_not_transitive():
    """Three writes of x[0] (the initial one, the publisher's two): co pairs dropped, reversed and
    added at random — among them orders that break only transitivity — answered as violations
    answers."""
    import random
    from dataclasses import replace

    from ptxmm.explanation.fixjudge import well_formed

    prog = kernel([PUBLISH + "\tst.relaxed.gpu.global.u32 [%rd1], %r2;\n" + X2, POLL + OOB],
                  "out[0] == 1 && out[1] == 0")
    eg, exe = _engine_witness(prog)
    cand, ws, rnd = candidates(eg), [e.eid for e in eg.events if e.kind == "W"], random.Random(1)
    seen = set()
    for _ in range(300):
        co = list(exe.co)
        for _ in range(rnd.randint(1, 3)):
            if co and rnd.random() < 0.5:
                a, b = co.pop(rnd.randrange(len(co)))
                if rnd.random() < 0.5:
                    co.append((b, a))
            else:
                co.append((rnd.choice(ws), rnd.choice(ws)))
        x = replace(exe, co=tuple(co))
        v = violations(eg, cand, x)
        assert well_formed(eg, cand, x) == (not v), (v, x)
        seen.add(tuple(v))
    assert ("co-transitive",) in seen and () in seen
