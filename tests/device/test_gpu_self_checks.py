"""On a GPU (skipped without CuPy and a device): the harness's self-checks and a crossval."""

from __future__ import annotations

from support import ROOT, gpu_test_marks

import ptxmm

pytestmark = gpu_test_marks()

EX = ROOT / "examples"


def test_self_checks_pass():
    from ptxmm.device.env import PRESETS
    from ptxmm.device.selfcheck import self_check

    ok, lines = self_check(PRESETS["barrier"], budget_s=0.2)
    assert ok, lines


def test_mp_release_acquire_never_violates():
    from ptxmm.device.crossval import crossval
    from ptxmm.device.env import PRESETS

    cr = crossval(ptxmm.load(EX / "classic/MP-rel-acq.ptx"), PRESETS["barrier"], 0.2)
    assert not cr.violations and cr.run.checksum_ok and cr.run.instances > 10**7


def test_batch_runs_the_good_and_reports_the_bad(tmp_path, monkeypatch):
    """20 good tests, a syntax error, a proxy test and one whose CUDA does not compile: the 20 run,
    the 3 are rows with their reasons, the JSON is written, exit 2."""
    import json

    from click.testing import CliRunner
    from test_batches import GOOD, PROXY, _bad_files, broken_generate

    from ptxmm.cli.main import main
    from ptxmm.device import batch as B

    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(B, "generate", broken_generate)
    syntax, nocompile = _bad_files(tmp_path)
    files = GOOD[:10] + [syntax, PROXY] + GOOD[10:] + [nocompile]
    out = tmp_path / "batch.json"
    r = CliRunner().invoke(main, ["crossval", *map(str, files), "--budget", "0.05", "--no-self-check",
                                  "--json", str(out)])
    assert r.exit_code == 2, r.output
    s = json.loads(out.read_text())["summary"]
    assert (s["ran"], s["not_run"], s["violations"]) == (20, 3, 0)
    assert s["reasons"] == {B.PARSE: 1, B.DEVICE_UNSUPPORTED: 1, B.COMPILE: 1}
    r = CliRunner().invoke(main, ["run", "--device", str(GOOD[0]), str(syntax), "--budget", "0.05",
                                  "--json"])
    data = json.loads(r.stdout)
    assert r.exit_code == 2 and data["summary"]["ran"] == 1 and data["tests"][0]["instances"] > 0
