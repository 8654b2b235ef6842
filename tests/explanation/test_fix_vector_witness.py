"""The fix search's known witnesses on programs with acquire/release vector accesses (issue 41:
`explain` and `graph` of CUB's packed tile state in seconds). The order of such a vector's
elements is a value the execution chooses (semantics/vectors.py, PTX ISA 8.2.4): the reads of the
orders not chosen run in no execution and the engine's witness gives them no value. A witness
fits a candidate's graph when every read it *executes* has a value (explanation/fixjudge.py
EXECUTED_READS); before, no witness of such a program fitted and the engine judged every candidate.
The proposals (text and JSON) are the plain search's (one engine check per candidate) on random
small kernels and on the corpus's kernel."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation import fixjudge
from ptxmm.explanation.fix import search
from ptxmm.explanation.fixjudge import Judge, _fits
from ptxmm.explanation.targets import target_of
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.loading import parse_kernel

HEAD = ".version 8.3\n.target sm_90\n.address_size 64\n"
REGS = "\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<4>;\n"
PUBLISH = "\tmov.u32 %r1, 1;\n\tmov.u32 %r2, 42;\n\tst.release.gpu.global.v2.u32 [%rd1], {%r1, %r2};\n"
POLL = ("\tld.acquire.gpu.global.v2.u32 {%r3, %r4}, [%rd1];\n"
        "\tst.global.u32 [%rd2], %r3;\n\tst.global.u32 [%rd2+4], %r4;\n")
DATA_READ = "\tld.global.u32 %r5, [%rd1+8];\n\tst.global.u32 [%rd2+8], %r5;\n"


def kernel(blocks: list[str], exists: str):
    """One thread per block; block k runs ``blocks[k]`` (%rd1: x[4], %rd2: out[3])."""
    head = "\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u64 %rd2, [k_param_1];\n\tmov.u32 %r0, %ctaid.x;\n"
    for k in range(1, len(blocks)):
        head += f"\tsetp.eq.s32 %p1, %r0, {k};\n\t@%p1 bra B{k};\n"
    body = head + blocks[0] + "\tret;\n" + "".join(f"B{k}:\n{b}\tret;\n" for k, b in enumerate(blocks) if k)
    sig = ".param .u64 k_param_0,\n.param .u64 k_param_1"
    text = HEAD + f".visible .entry k(\n{sig}\n)\n{{\n{REGS}{body}\n}}\n"
    launch = f"k<<<{len(blocks)}, 1>>>(unsigned x[4], unsigned out[3])"
    return parse_kernel(text, "k.ptx", KernelArgs(launch=launch, exists=exists))


def _json(report) -> dict:
    """A fix report's JSON without what depends on how it was judged (time, engine checks)."""
    return {k: v for k, v in report.to_json().items() if k not in ("time_s", "engine_checks")}


def _both(prog, max_size: int = 2, bound: int = 60):
    m = load_model("ptx")
    t = target_of(prog, None)
    fast = search(prog, m, t, bound=bound, max_size=max_size, budget_s=None)
    plain = search(prog, m, t, bound=bound, max_size=max_size, budget_s=None, witnesses=False)
    return fast, plain


# the data written before a relaxed flag, read after an acquire vector's elements: a fix exists
# (the flag's store made a release); a torn read of a release vector by an acquire vector: the
# buffer's vectors made one 64-bit access each (vecpack.py), no strengthening
CASES = {
    "relaxed-flag": kernel(["\tst.global.u32 [%rd1+8], 7;\n\tmov.u32 %r1, 1;\n"
                            "\tst.relaxed.gpu.global.u32 [%rd1], %r1;\n", POLL + DATA_READ],
                           "out[0] == 1 && out[2] == 0"),
    "torn": kernel([PUBLISH, POLL], "out[0] == 1 && out[1] == 0"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_witnesses_of_a_program_with_acquire_vectors_answer_most_candidates(name):
    fast, plain = _both(CASES[name])
    assert _json(fast) == _json(plain)
    assert [s.text for s in fast.solutions] == [s.text for s in plain.solutions]
    assert plain.engine_checks == plain.checked + 1  # the plain search: the original and every candidate
    assert fast.engine_checks * 3 < plain.engine_checks  # the witnesses answered most candidates


def test_the_relaxed_flag_is_made_a_release_and_the_torn_vectors_packed():
    fast, _ = _both(CASES["relaxed-flag"])
    assert fast.solutions and "st.release.gpu" in fast.solutions[0].text
    torn, _ = _both(CASES["torn"])
    assert [c.kind for s in torn.solutions for c in s.changes] == ["pack"]


def test_an_engine_witness_fits_its_own_graph(monkeypatch):
    """The original's witness, read off the engine, leaves the reads of the element orders not
    chosen without a value: it fits its own graph, and did not when every read on its paths
    needed one."""
    prog = CASES["torn"]
    judge = Judge(prog, load_model("ptx"), target_of(prog, None))
    assert judge.forbids() is False and judge.pool
    exe = judge.pool[0]
    valued = dict(exe.values)
    unvalued = [e for e in judge.eg.events if e.kind == "R" and e.thread >= 0 and e.eid not in valued
                and exe.paths[e.thread] in e.paths]
    assert unvalued  # the reads of the order not chosen
    assert _fits(judge.eg, exe)
    monkeypatch.setattr(fixjudge, "EXECUTED_READS", False)
    assert not _fits(judge.eg, exe)


def test_a_read_that_may_execute_without_a_value_does_not_fit():
    """A read the execution's values do not rule out (its condition true) needs a value."""
    prog = CASES["torn"]
    judge = Judge(prog, load_model("ptx"), target_of(prog, None))
    judge.forbids()
    exe = judge.pool[0]
    executed_read = next(r for _w, r in exe.rf if judge.eg.events[r].thread >= 0)
    cut = type(exe)(exe.paths, exe.rf, exe.co, tuple((r, v) for r, v in exe.values if r != executed_read),
                    exe.scorder, exe.final, exe.phases)
    assert _fits(judge.eg, exe) and not _fits(judge.eg, cut)


WRITER = ["\tst.global.u32 [%rd1+8], 7;\n", "\tst.relaxed.gpu.global.u32 [%rd1+8], 7;\n",
          "\tmov.u32 %r1, 1;\n\tst.relaxed.gpu.global.u32 [%rd1], %r1;\n", PUBLISH,
          "\tmov.u32 %r1, 1;\n\tst.release.gpu.global.u32 [%rd1+4], %r1;\n"]
READER = [POLL, DATA_READ, "\tld.relaxed.gpu.global.u32 %r6, [%rd1+4];\n\tst.global.u32 [%rd2+4], %r6;\n"]
CONDS = ["out[0] == 1", "out[0] == 0", "out[1] == 0", "out[1] == 42", "out[2] == 0", "out[2] == 7"]


@st.composite
def vector_kernels(draw):
    """Two blocks: a writer of one or two of WRITER's pieces, a reader of an acquire vector poll
    and perhaps another read; the condition: one or two of the reader's outputs."""
    w = draw(st.lists(st.sampled_from(WRITER), min_size=1, max_size=2, unique=True))
    r = [POLL] + draw(st.lists(st.sampled_from(READER[1:]), max_size=1))
    conds = draw(st.lists(st.sampled_from(CONDS), min_size=1, max_size=2, unique=True))
    return kernel(["".join(w), "".join(r)], " && ".join(conds))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vector_kernels())
def test_random_vector_kernels_get_the_plain_searchs_fixes(prog):
    fast, plain = _both(prog, max_size=1, bound=24)
    assert _json(fast) == _json(plain)


@pytest.mark.slow
def test_the_packed_acqrel_tile_states_explanation_is_the_plain_ones(monkeypatch):
    """CUB's packed tile state with acquire/release vectors: explain's JSON (its missing ordering
    comes from the fix search) with the witnesses fitting as they do now, without them for the
    splits with a path fewer (fixjudge.SPLIT_PATHS), for every split, and as before."""
    from ptxmm.explanation.explain import explain

    prog = ptxmm.load(ROOT / "examples" / "kernels" / "real" / "cub-tile-state-packed-acqrel.ptx")

    def untimed(x) -> dict:
        return {k: v for k, v in x.to_json().items() if k != "time_s"}

    now = untimed(explain(prog, "ptx"))
    monkeypatch.setattr(fixjudge, "SPLIT_PATHS", False)
    assert now == untimed(explain(prog, "ptx"))
    monkeypatch.setattr(fixjudge, "SPLIT_WITNESSES", False)
    assert now == untimed(explain(prog, "ptx"))
    monkeypatch.setattr(fixjudge, "EXECUTED_READS", False)
    assert now == untimed(explain(prog, "ptx"))


# ----- split candidates (vecsplit.py) judged by the known witnesses: fixjudge.split_map ----------------


def _split_verdicts(prog, pairs: bool = False):
    """Every split candidate of ``prog`` (and, with ``pairs``, every pair of splits in different
    threads) judged with the witnesses and by the engine alone; the witness judge's stats."""
    import itertools

    from ptxmm.explanation.fix import apply, single_changes

    m, t = load_model("ptx"), target_of(prog, None)
    fast, plain = Judge(prog, m, t), Judge(prog, m, t, witnesses=False)
    splits = [c for c in single_changes(prog) if c.kind == "split"]
    sets = [(c,) for c in splits] + ([cs for cs in itertools.combinations(splits, 2)
                                      if cs[0].thread != cs[1].thread] if pairs else [])
    fast.forbids(), plain.forbids()
    got = [(fast.forbids_changes(cs, lambda cs=cs: apply(prog, cs)),
            plain.forbids_changes(cs, lambda cs=cs: apply(prog, cs))) for cs in sets]
    return got, fast.stats


@pytest.mark.parametrize("name", sorted(CASES))
def test_split_candidates_get_the_engines_verdicts_mostly_from_witnesses(name):
    got, stats = _split_verdicts(CASES[name], pairs=True)
    assert got and all(a == b for a, b in got)
    assert stats.by_witness >= len(got) // 2  # judged by a known witness, not the engine


def test_a_splits_map_sends_every_copy_of_an_element_to_its_one_access():
    """An acquire vector's element is read once per position of the order (semantics/vectors.py):
    each copy maps onto the split's one read of the element, the order's unspecified value is
    dropped, the other events keep their places."""
    from ptxmm.explanation.fix import apply, single_changes
    from ptxmm.explanation.fixjudge import split_map
    from ptxmm.explanation.targets import with_target
    from ptxmm.ir.values import unspec_key
    from ptxmm.semantics.builder import build

    prog = CASES["torn"]
    t = target_of(prog, None)
    eg = build(with_target(prog, t))
    def loads_of(thread: int) -> list:
        return [e for e in eg.events if e.thread == thread and e.kind == "R" and e.instr is not None
                and "v2" in e.instr.text]

    # the reader's split in the thread that runs it (the other block's thread skips that code)
    c = next(c for c in single_changes(prog)
             if c.kind == "split" and c.sem == "acquire" and loads_of(c.thread))
    eg2 = build(with_target(apply(prog, (c,))[0], t))
    emap = split_map(eg, eg2, (c,))
    assert emap is not None
    loads = loads_of(c.thread)
    assert len(loads) == 4 and len({emap[e.eid] for e in loads}) == 2  # 2 copies of 2 elements → 2
    assert sorted(k for k, v in emap.items() if k < 0 and v is None) == [unspec_key(
        next(u.uid for u in eg.unspecified if "ld.acquire" in u.where))]
    others = [e for e in eg.events if e not in loads]
    assert len({emap[e.eid] for e in others}) == len(others) == len(eg2.events) - 2


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vector_kernels())
def test_random_vector_kernels_splits_get_the_engines_verdicts(prog):
    got, _ = _split_verdicts(prog, pairs=True)
    assert all(a == b for a, b in got)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_splits_engine_witness_carried_back_is_an_execution_of_the_original(name, monkeypatch):
    """The engine's witness for a split candidate joins the known witnesses as an execution of the
    original's graph (fixjudge._carried_back): each element's access carried to the copy the
    split's order runs, the order's value set — every read it executes there has a value and
    reads what its write writes."""
    from ptxmm.explanation.fixjudge import SplitMap, _carried_back, _consistent

    carried = []

    def spy(eg, eg2, emap, exe2):
        exe = _carried_back(eg, eg2, emap, exe2)
        if isinstance(emap, SplitMap):
            carried.append((eg, exe))
        return exe

    monkeypatch.setattr(fixjudge, "_carried_back", spy)
    monkeypatch.setattr(fixjudge, "POOL_MAX", 0)  # no witness kept: the engine judges every split
    _split_verdicts(CASES[name], pairs=True)
    back = [(eg, exe) for eg, exe in carried if exe is not None]
    assert back and len(back) * 2 >= len(carried)
    for eg, exe in back:
        assert _fits(eg, exe) and _consistent(eg, exe)
        assert any(k < 0 for k, _v in exe.values) or not eg.unspecified  # the order's value set
