"""A kernel's `// ptxmm: expect` line is honoured by `check` as by `ptxmm test`, the plugin and the
playground (which reads this JSON): the kinds found against the line, and whether they agree."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support import ROOT

from ptxmm.cli.main import main

KERNEL = ROOT / "examples" / "kernels" / "mp-relaxed-flag.cu"


def _expect(path) -> dict:
    r = CliRunner().invoke(main, ["check", str(path), "--json"])
    return json.loads(r.output)["expect"]


def test_check_json_says_the_kernel_agrees_with_its_expect_line():
    assert _expect(KERNEL) == {"findings": ["assert-fails", "race"], "found": ["assert-fails", "race"],
                               "agrees": True}


def test_a_wrong_expect_line_disagrees_in_json_and_text(tmp_path):
    src = KERNEL.read_text().replace("// ptxmm: expect race, assert-fails", "// ptxmm: expect ok")
    assert src != KERNEL.read_text()
    f = tmp_path / KERNEL.name
    f.write_text(src)
    assert _expect(f) == {"findings": [], "found": ["assert-fails", "race"], "agrees": False}
    out = CliRunner().invoke(main, ["check", str(f)]).output
    assert "expected: ok; found assert-fails, race" in out and "DISAGREES" in out


def test_a_litmus_test_has_no_expect_block():
    r = CliRunner().invoke(main, ["check", str(ROOT / "examples" / "mp-relaxed-acquire.ptx"), "--json"])
    assert "expect" not in json.loads(r.output)
