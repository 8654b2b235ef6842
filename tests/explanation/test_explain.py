"""explain (issue 12): axioms and cycles in the model's own names, missing orderings, --fix, races."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import ROOT

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.cli.main import main
from ptxmm.errors import PtxmmError
from ptxmm.explanation.evaluate import pairs_of
from ptxmm.explanation.explain import concrete, explain, parse_outcome
from ptxmm.explanation.fix import apply, forbids
from ptxmm.semantics.builder import build

MODELS = ["ptx", "ptx-v7.5", "ptx-v6.0"]

LOST_UPDATE = ROOT / "examples/classic/LostUpdate-relaxed-atom.ptx"
LB_DEPS = ROOT / "examples/classic/LB-data-relaxed.ptx"


def _ex(name: str) -> ptxmm.Program:
    return ptxmm.load(ROOT / "examples" / name)


def _witness(x, axiom: str):
    for g in x.groups:
        for w in g.witnesses:
            if w.axiom == axiom:
                return w
    raise AssertionError(f"{axiom} not violated: {[g.axioms for g in x.groups]}")


def _texts(w) -> list[str]:
    return [e.src.text for e in w.chain]


@pytest.mark.parametrize("model", MODELS)
def test_mp_release_acquire_causality_cycle(model):
    x = explain(_ex("classic/MP-rel-acq.ptx"), model)
    assert not x.allowed
    w = _witness(x, "Causality")
    assert w.kind == "reflexive"
    assert [e.rel for e in w.chain] == ["fr", "po", "sync", "po"]
    assert {e.src.thread for e in w.chain} == {"T0", "T1"}
    assert _texts(w) == ["ld.global.u32 %r1, [x]", "st.global.u32 [x], 1",
                         "st.release.gpu.global.u32 [y], 1", "ld.acquire.gpu.global.u32 %r0, [y]"]
    assert w.chain[-1].dst.eid == w.chain[0].src.eid
    assert "Causality" in str(x) and "—sync→" in str(x)


@pytest.mark.parametrize("model", MODELS)
def test_corr_names_the_coherence_axiom_of_the_model(model):
    x = explain(_ex("classic/CoRR-relaxed.ptx"), model)
    axioms = {a for g in x.groups for a in g.axioms}
    # ptx and ptx-v6.0 state coherence of reads as SC-per-Location; ptx-v7.5 has no such axiom
    # (its comment) and forbids CoRR by Causality
    assert axioms == ({"Causality"} if model == "ptx-v7.5" else {"SC-per-Location", "Causality"})
    w = _witness(x, "Causality")
    assert set(_texts(w)) == {"ld.relaxed.gpu.global.u32 %r1, [x]", "st.relaxed.gpu.global.u32 [x], 1",
                              "ld.relaxed.gpu.global.u32 %r0, [x]"}
    if model != "ptx-v7.5":
        assert [e.rel for e in _witness(x, "SC-per-Location").chain][0] in ("rf", "po", "po-loc", "fr")


@pytest.mark.parametrize("model", MODELS)
def test_sb_fence_sc_through_fence_sc_order(model):
    x = explain(_ex("classic/SB-fence-sc.ptx"), model)
    w = _witness(x, "Causality")
    assert [e.rel for e in w.chain] == ["fr", "po", "sync", "po"]
    assert [e.src.text for e in w.chain[2:3]] == ["fence.sc.gpu"]
    assert w.chain[2].src.thread != w.chain[2].dst.thread
    sync = next(u for u in w.unfoldings if u.edge.rel == "sync")
    assert "sc =" in sync.definition and "Fence-SC" in sync.words


@pytest.mark.parametrize("model", MODELS)
def test_lost_update_names_atomicity(model):
    x = explain(ptxmm.load(LOST_UPDATE), model)
    w = _witness(x, "Atomicity")
    assert w.kind == "pair" and [e.rel for e in w.chain] == ["fr", "co"]
    assert all("atom.relaxed.gpu.global.add" in e.src.text for e in w.chain)


@pytest.mark.parametrize("model", MODELS)
def test_lb_with_dependencies_names_no_thin_air(model):
    x = explain(ptxmm.load(LB_DEPS), model)
    assert [g.axioms for g in x.groups] == [("No-Thin-Air",)]
    w = _witness(x, "No-Thin-Air")
    assert w.kind == "cycle" and [e.rel for e in w.chain] in (["rf", "data"] * 2, ["data", "rf"] * 2)


def test_relaxed_store_is_not_a_release_and_the_fix():
    x = explain(_ex("mp-relaxed-acquire.ptx"), "ptx", fix=True)
    assert x.allowed and x.bad
    words = x.missing[0].words
    assert "st.relaxed.gpu.global.u32 [flag], 1` is not a release" in words
    assert "morally strong" in words
    texts = [s.text for s in x.fixes.solutions]
    assert len(texts) == 2 and all(len(s.changes) == 1 for s in x.fixes.solutions)
    assert "`st.release.gpu.global.u32 [flag], 1`" in texts[0]
    assert texts[1].startswith("insert `fence.release.gpu` in T0 before `st.relaxed")
    prog = _ex("mp-relaxed-acquire.ptx")
    from ptxmm.explanation.explain import target_of

    for s in x.fixes.solutions:  # re-checked: forbidden
        assert forbids(apply(prog, s.changes)[0], load_model("ptx"), target_of(prog, None))


def _forbidden_files() -> list[Path]:
    out = []
    for p in sorted((ROOT / "examples").rglob("*.ptx")):
        if "hopper" in p.parts:
            continue
        text = p.read_text()
        if ".expect forbidden" in text or ".expect required" in text:
            out.append(p)
    return out


@pytest.mark.parametrize("path", _forbidden_files(), ids=lambda p: p.name)
def test_every_printed_chain_is_a_real_chain_of_its_named_relations(path):
    prog = ptxmm.load(path)
    m = load_model("ptx")
    x = explain(prog, m)
    if x.allowed:
        pytest.skip("allowed under ptx")
    eg = build(prog)
    late = len(m.stmts)
    for g in x.groups:
        c = concrete(eg, m, g.example.execution)
        for w in g.witnesses:
            assert w.chain, w.axiom
            for a, b in zip(w.chain, w.chain[1:]):
                assert a.dst.eid == b.src.eid
            if w.kind in ("cycle", "reflexive"):
                assert w.chain[-1].dst.eid == w.chain[0].src.eid
            for e in w.chain:
                name = e.rel.removesuffix("^-1")
                d = c.def_at(name, late)
                v = c.values[(name, d)] if d is not None else c.base[name]
                pair = (e.dst.eid, e.src.eid) if e.rel.endswith("^-1") else (e.src.eid, e.dst.eid)
                assert pair in pairs_of(v), (w.axiom, e)


def test_explicit_outcome_and_errors():
    prog = _ex("classic/MP-rel-acq.ptx")
    x = explain(prog, outcome="T1:%r0=1 T1:%r1=1")
    assert x.allowed and x.bad is False
    assert str(parse_outcome("T1:%r0=1, x == 2")) .startswith("And")
    with pytest.raises(PtxmmError, match="does not observe"):
        explain(prog, outcome="T1:%r9=1")
    with pytest.raises(PtxmmError, match="cannot read outcome"):
        explain(prog, outcome="r0 is one")


@pytest.mark.parametrize(("outcome", "words"), [
    ("T1:%r0=99999999999", r"99999999999 does not fit T1:%r0 \(\.u32\), which the outcome compares"),
    ("x=-2147483649", r"-2147483649 does not fit x \(\.u32\)"),
    ("T1:%r0=\u0661 T1:%r1=0", "cannot read outcome"),  # an Arabic-Indic digit one
    ("T1:%r0=\uff11", "cannot read outcome"),  # a fullwidth one
])
def test_an_outcome_value_is_ascii_and_fits_its_name(outcome, words):
    """As a condition's constants (red team F23): never read as another number, or as no
    execution at all."""
    prog = _ex("classic/MP-relaxed.ptx")
    with pytest.raises(PtxmmError, match=words):
        explain(prog, outcome=outcome)
    r = CliRunner().invoke(main, ["explain", "--outcome", outcome, str(ROOT / "examples" / "classic" /
                                                                     "MP-relaxed.ptx")])
    assert r.exit_code != 0 and "FORBIDDEN" not in r.output and "Traceback" not in r.output
    assert explain(prog, outcome="T1:%r0=4294967295 T1:%r1=-1").allowed is False  # the edges fit


def test_races_in_check_json_and_explain():
    prog = _ex("mp-relaxed-acquire.ptx")
    res = ptxmm.check(prog)
    js = res.to_json()
    races = [f for f in js["findings"] if f["kind"] == "race"]
    assert len(races) == 1 and {e["line"] for e in races[0]["events"]} == {13, 18}
    assert races[0]["name"] == "data-race" and js["findings_status"] == "ok"
    # the witness's outcome is one of the enumerated outcomes, and raises the flag
    (o,) = [o for o in js["outcomes"] if o["values"] == races[0]["outcome"]]
    assert "data-race" in o["flags"]
    x = explain(prog)
    assert [(r.a.text, r.b.text) for r in x.races] == [("st.global.u32 [data], 42",
                                                        "ld.global.u32 %r1, [data]")]


def test_cli_explain_text_json_fix():
    r = CliRunner().invoke(main, ["explain", str(ROOT / "examples/classic/MP-rel-acq.ptx"), "-m", "ptx-v6.0"])
    assert r.exit_code == 0 and "Causality" in r.output
    r = CliRunner().invoke(main, ["explain", str(ROOT / "examples/mp-relaxed-acquire.ptx"), "--json",
                                  "--fix"])
    data = json.loads(r.output)
    assert data["verdict"] == "allowed" and len(data["fixes"]["solutions"]) == 2
    r = CliRunner().invoke(main, ["explain", str(ROOT / "examples/nope.ptx")])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_fix_strengthens_an_existing_fence_to_sc():
    """Store buffering with fence.acq_rel: only fence.sc forbids it, so --fix proposes raising both
    fences (not inserting new ones next to them)."""
    from ptxmm.explanation.explain import explain as api_explain

    x = api_explain(ptxmm.load(ROOT / "examples/teaching/19-acq-rel-is-not-a-full-fence.ptx"), fix=True)
    (sol,) = x.fixes.solutions
    assert [(c.kind, c.sem) for c in sol.changes] == [("sem", "sc"), ("sem", "sc")]


def test_missing_ordering_of_a_two_change_bug():
    """MP with plain accesses needs a release *and* an acquire: no single change forbids the stale
    read, so the missing ordering comes from the cheapest pair of changes."""
    from ptxmm.explanation.explain import explain as api_explain

    x = api_explain(ptxmm.load(ROOT / "examples/classic/MP-weak.ptx"))
    assert x.allowed and x.bad and x.missing
    text = str(x)
    assert "is not a release" in text and "is not an acquire" in text
    assert "st.release.gpu.global.u32 [y], 1" in text and "ld.acquire.gpu.global.u32 %r0, [y]" in text
