"""Findings (data races) as queries on the one formula: each racing pair once, with a witness
execution that is allowed and raises it; found whatever was enumerated (one-query verdicts,
--max-outcomes); the Z3 query and brute force's enumeration name the same pairs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.grammar_gen import valid_ptx
from support.programs import LAST_BLOCK_RESET, TWO_RACING_PATHS

import ptxmm
from ptxmm.engines import candidate_space
from ptxmm.explanation.explain import races_in
from ptxmm.semantics.builder import build
from ptxmm.semantics.result import FindingKind
from ptxmm.semantics.vocab import candidates

# T1 takes one of two paths depending on the flag it reads; each path races with a different store
# of T0. No execution takes both paths, so the two races need two witnesses.
TWO_WITNESSES = TWO_RACING_PATHS + "exists (T1:%r0 == 1)\n"

# the racing load lies on a path no execution takes: T1 only reads x when it saw 2, never written
DEAD_PATH = """
.global .u32 x = 0;
.global .u32 f = 0;
.thread T0 .cta 0 {
    st.global.u32 [x], 1;
    st.relaxed.gpu.global.u32 [f], 1;
}
.thread T1 .cta 1 {
    ld.relaxed.gpu.global.u32 %r0, [f];
    setp.ne.u32 %p0, %r0, 2;
    @%p0 bra $L_end;
    ld.global.u32 %r1, [x];
$L_end:
    ret;
}
exists (T1:%r0 == 1)
"""


def _pairs(res) -> set[tuple[str, tuple[int, ...]]]:
    return {(f.name, tuple(sorted(e.line or 0 for e in f.events))) for f in res.findings}


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_each_racing_pair_once_with_its_own_witness(engine):
    p = ptxmm.parse(TWO_WITNESSES, "two.ptx")
    res = ptxmm.check(p, engine=engine)
    assert res.findings_status == "ok"
    assert _pairs(res) == {("data-race", (6, 14)), ("data-race", (7, 17))}
    for f in res.findings:
        assert f.kind is FindingKind.RACE
        # the witness is an allowed execution that raises exactly this pair
        raised = {tuple(sorted((r.a.eid, r.b.eid))) for r in races_in(p, "ptx", f.witness)}
        assert tuple(sorted(e.eid for e in f.events)) in raised
        assert f.outcome in res.outcome_set


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_no_race_on_a_path_no_execution_takes(engine):
    res = ptxmm.check(ptxmm.parse(DEAD_PATH, "dead.ptx"), engine=engine)
    assert res.findings == () and res.findings_status == "ok"


def test_races_are_found_without_enumerating():
    """The race query does not depend on the outcomes listed: a one-query verdict and an
    enumeration stopped after one outcome report the same pairs as the full enumeration."""
    p = ptxmm.parse(TWO_WITNESSES, "two.ptx")
    full = _pairs(ptxmm.check(p))
    one = ptxmm.check(p, verdict_only=True)
    assert len(one.outcomes) <= 1 and _pairs(one) == full
    stopped = ptxmm.check(p, max_outcomes=1, engine="z3")
    assert stopped.status == "stopped" and _pairs(stopped) == full
    off = ptxmm.check(p, flags=False)
    assert off.findings == () and off.findings_status == "not checked"
    sc = ptxmm.check(p, "sc")
    assert sc.findings == () and sc.findings_status == "no flags in model"


def test_report_and_json_name_the_witness_outcome():
    from ptxmm.report.termtext import Writer
    from ptxmm.report.text import render

    res = ptxmm.check(ptxmm.parse(TWO_WITNESSES, "two.ptx"))
    js = res.to_json()
    assert len(js["findings"]) == 2 and all(f["kind"] == "race" for f in js["findings"])
    assert all(f["outcome"] in [o["values"] for o in js["outcomes"]] for f in js["findings"])
    import io

    buf = io.StringIO()
    render(res, Writer(buf, colour=False))
    text = buf.getvalue()
    assert text.count("data-race on ") == 2 and text.count(": T0 st.global.u32") == 2
    assert "(e.g. outcome " in text


_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.data_too_large])


@settings(max_examples=60, **_SETTINGS)
@given(src=valid_ptx(max_threads=3, max_events=6, unroll=1), model=st.sampled_from(["ptx", "ptx-v6.0"]))
def test_z3_race_query_equals_brute_force(src, model):
    p = ptxmm.parse(src, "t.ptx")
    eg = build(p, unroll=1)
    assume(candidate_space(eg, candidates(eg), 800) is not None)
    z = ptxmm.check(p, model, engine="z3", unroll=1)
    b = ptxmm.check(p, model, engine="brute", unroll=1)
    key = lambda r: {(f.name, tuple(e.eid for e in f.events)) for f in r.findings}  # noqa: E731
    assert key(z) == key(b), src
    # every flagged outcome of the enumeration has a finding, and every finding's outcome is allowed
    assert bool(z.findings) == any(o.flags for o in z.outcomes), src
    assert all(f.outcome in z.outcome_set for f in z.findings), src


# ---- races over whole operations (PTX ISA 8.7.1: an atom/red is one memory operation) -----------



def _races(src: str, model: str, engine: str = "auto"):
    return [f for f in ptxmm.check(ptxmm.parse(src), model, engine=engine).findings
            if f.kind == FindingKind.RACE]


@pytest.mark.parametrize("engine", ["z3", "brute"])
@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5", "ptx-v6.0"])
def test_the_last_block_reset_of_a_counter_is_not_a_race(model, engine):
    """`t = atomicAdd(c, 1); if (t == 1) *c = 0;` in two blocks: the first block's atom is observed
    by the last block's atom, which is po-before the reset — the atom is one operation, so its read
    half is ordered with the reset too (the examples/kernels/last-block-reset.cu idiom)."""
    assert _races(LAST_BLOCK_RESET, model, engine) == []


@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5", "ptx-v6.0"])
def test_a_plain_access_still_races_with_an_atom(model):
    """The other direction: a weak load (or store) and a relaxed atom are not morally strong and
    nothing orders them. A store races with both halves of the atom: one finding, naming the
    atom as its instruction."""
    load = """
.global .u32 c = 0;
.thread T0 .cta 0 { atom.relaxed.gpu.global.add.u32 %r0, [c], 1; }
.thread T1 .cta 1 { ld.global.u32 %r0, [c]; }
exists (T1:%r0 == 1)
"""
    (race,) = _races(load, model)
    assert [e.thread for e in race.events] == ["T0", "T1"]
    assert race.events[0].text == "atom.relaxed.gpu.global.add.u32 %r0, [c], 1"
    store = load.replace("ld.global.u32 %r0, [c];", "st.global.u32 [c], 5;").replace("T1:%r0 == 1", "c == 5")
    (race,) = _races(store, model)
    assert {e.text for e in race.events} == {"atom.relaxed.gpu.global.add.u32 %r0, [c], 1",
                                              "st.global.u32 [c], 5"}
    assert race.event_pairs == 1  # the atom's two halves racing with the store: one pair of operations
