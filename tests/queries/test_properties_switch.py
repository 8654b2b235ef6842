"""``--properties`` / ``check(..., properties=...)`` (issue 41): a check asks only the properties
named; the defaults' answers are unchanged; what was not asked is said, never answered."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support import ROOT

import ptxmm
from ptxmm.cli.main import main
from ptxmm.errors import ArgumentError

MP = ROOT / "examples/classic/MP-relaxed.ptx"
OOB = ROOT / "examples/kernels/gather-oob.cu"


def _kinds(res) -> set[str]:
    return {str(f.kind) for f in res.findings}


def test_the_defaults_are_unchanged_and_say_nothing_of_properties():
    a, b = ptxmm.check(MP), ptxmm.check(MP, properties=("condition", "races", "sites"))
    assert a.holds is b.holds is True and a.outcome_set == b.outcome_set
    assert _kinds(a) == _kinds(b) == {"race"}
    assert a.not_asked == () and "not_asked" not in a.to_json()
    assert b.not_asked == ("liveness",)


def test_condition_only_looks_for_no_race_and_says_so():
    r = ptxmm.check(MP, properties="condition")
    assert r.holds is True and r.findings == () and r.findings_status == "not checked"
    assert r.not_asked == ("races", "liveness") and r.to_json()["not_asked"] == ["races", "liveness"]


def test_races_only_judges_no_condition():
    r = ptxmm.check(MP, properties=["races"])
    assert r.holds is None and r.outcomes == [] and not r.enumerated
    assert _kinds(r) == {"race"} and "condition" in r.not_asked


def test_a_kernel_without_liveness_asks_no_hang_question():
    full = ptxmm.check(OOB)
    r = ptxmm.check(OOB, properties="condition,sites")
    assert full.liveness is not None and r.liveness is None
    assert r.holds == full.holds and _kinds(r) == _kinds(full) - {"race", "hang"}
    assert r.not_asked == ("races", "liveness")


@pytest.mark.parametrize("kw", [{"properties": "bogus"}, {"properties": []}, {"properties": 3},
                                {"properties": "races", "flags": False},
                                {"properties": "condition", "liveness": True}])
def test_wrong_or_contradicting_properties_are_refused(kw):
    with pytest.raises(ArgumentError):
        ptxmm.check(MP, **kw)


def test_cli_check_reports_what_was_not_asked():
    r = CliRunner().invoke(main, ["check", str(MP), "--properties", "condition"])
    assert r.exit_code == 0 and "not asked (--properties): races, liveness" in r.output
    assert "data races: none" not in r.output
    r = CliRunner().invoke(main, ["check", str(MP), "--properties", "races", "--json"])
    data = json.loads(r.output)
    assert data["holds"] is None and data["not_asked"] == ["condition", "liveness"]
    assert "condition: not asked" in CliRunner().invoke(main, ["check", str(MP), "--properties",
                                                               "races"]).output
    r = CliRunner().invoke(main, ["check", str(MP), "--properties", "condition", "--liveness"])
    assert r.exit_code == 2 and "--liveness does not apply with --properties" in r.output
    r = CliRunner().invoke(main, ["check", str(MP), "--properties", "nope"])
    assert r.exit_code == 2 and "'nope' is not one of" in r.output


def test_cli_explain_and_graph_take_properties():
    r = CliRunner().invoke(main, ["explain", str(OOB), "--properties", "sites", "--json"])
    data = json.loads(r.output)
    assert [f["finding"]["kind"] for f in data["findings"]] == ["out-of-bounds"]
    r = CliRunner().invoke(main, ["explain", str(MP), "--properties", "races", "--fix"])
    assert r.exit_code == 2 and "--fix does not apply" in r.output
    r = CliRunner().invoke(main, ["explain", str(MP), "--properties", "condition", "--finding", "race"])
    assert r.exit_code == 2 and "leaves out" in r.output
    r = CliRunner().invoke(main, ["graph", str(OOB), "--properties", "sites", "--ascii"])
    assert r.exit_code == 0 and "out-of-bounds" in r.output
