"""``ptxmm races --up-to``: the every-launch race check from the command line — its text, its JSON
and its exit status (0 race-free, 1 races, 2 an error)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support import ROOT

from ptxmm.cli.main import main

K = ROOT / "examples" / "kernels"


def _run(*args):
    return CliRunner().invoke(main, ["races", *map(str, args)])


def test_race_free_exits_0_and_states_assumptions():
    r = _run("--up-to", "<<<1, 1024>>>", K / "syncthreads-exchange.ptx")
    assert r.exit_code == 0, r.output
    assert "no data race for any launch up to <<<1, 1024>>>, assuming" in r.output
    assert "- two CTAs are ordered by nothing" in r.output


def test_race_exits_1_with_witness_json():
    r = _run("--up-to", "<<<1024, 1024>>>", "--json", K / "syncthreads-exchange.ptx")
    assert r.exit_code == 1, r.output
    d = json.loads(r.output)
    assert d["verdict"] == "races"
    (f,) = d["findings"]
    assert f["launch"] == {"grid": 2, "block": 1} and f["confirmed"] is True and f["buffer"] == "out"


def test_bad_up_to_is_a_usage_error():
    r = _run("--up-to", "<<<2, 2048>>>", K / "syncthreads-exchange.ptx")
    assert r.exit_code == 2 and "1..1024" in r.output


def test_outside_reports_reason_and_fallback():
    r = _run("--up-to", "<<<4, 4>>>", "--json", K / "mp-release-flag.ptx")
    d = json.loads(r.output)
    assert d["verdict"] == "outside" and "acquire" in d["outside"]
    assert d["fallback"] == [] and d["fallback_launch"].startswith("mp<<<2, 1>>>")
    assert r.exit_code == 0
