"""Red team round 4, F13-F15: ``ptxmm test --expected CSV`` guesses nothing: a value other than
1, 0 or empty is an error naming file:line and the value; --column naming no column of the CSV is
an error listing the columns; a path named twice is an error naming both lines. Streamed or not."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner
from support import ROOT

from ptxmm.cli.main import main

MP = ROOT / "examples" / "mp-relaxed-acquire.ptx"


def _test(tmp_path, csv_text: str, *more: str):
    shutil.copy(MP, tmp_path / "mp.ptx")
    (tmp_path / "e.csv").write_text(csv_text)
    r = CliRunner().invoke(main, ["test", str(tmp_path / "mp.ptx"), "--expected",
                                  str(tmp_path / "e.csv"), *more])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, r.output


STREAMED = [[], ["--jsonl", "rows.jsonl"]]


@pytest.mark.parametrize("more", STREAMED)
@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_a_value_not_1_0_or_empty_is_an_error_naming_the_line(value, more, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = _test(tmp_path, f"path,ptx\nother.ptx,1\nmp.ptx,{value}\n", *more)
    assert code == 2 and "e.csv:3:" in out and f"expectation '{value}'" in out, out
    assert "agree" not in out and "tests run" not in out


@pytest.mark.parametrize("more", STREAMED)
def test_a_column_the_csv_does_not_have_is_an_error_listing_its_columns(more, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = _test(tmp_path, "path,ptx,sc\nmp.ptx,1,0\n", "--column", "bogus", *more)
    assert code == 2 and "--column bogus" in out and "its columns: ptx, sc" in out, out
    code, out = _test(tmp_path, "# path,ptx-v6.0,ptx-v7.5 (comment)\nmp.ptx,1,0\n", "--column", "ptx")
    assert code == 2 and "its columns: ptx-v6.0, ptx-v7.5" in out, out


@pytest.mark.parametrize("more", STREAMED)
def test_a_path_named_twice_is_an_error_naming_both_lines(more, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = _test(tmp_path, "path,ptx\nmp.ptx,1\n# a comment\nmp.ptx,0\n", *more)
    assert code == 2 and "e.csv:4:" in out and "mp.ptx is named again (first on line 2)" in out, out


def test_a_good_csv_with_a_header_line_and_a_bom_is_read(tmp_path):
    code, out = _test(tmp_path, "\ufeffpath,ptx\nmp.ptx,1\n\n# comment\nunrated.ptx,\n")
    assert code == 0 and "1/1 agree" in out, out
    code, out = _test(tmp_path, "path,ptx\nmp.ptx,0\n")
    assert code == 1 and "DISAGREE" in out, out


def test_the_test_table_says_verdicts_in_words_and_keeps_the_whole_reason(tmp_path):
    """``ptxmm test``'s table of the tests that did not agree: holds/fails (or a kernel test's
    agrees/differs), never Python's None/True/False, and the reason whole however long."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    mp = (Path(ROOT) / "examples" / "mp-relaxed-acquire.ptx").read_text()
    (tmp_path / "b.ptx").write_text(mp.replace(".expect allowed", ".expect forbidden"))
    (tmp_path / "c.ptx").write_text(".global .u32 x = 0;\n.thread T0 {\n"
                                    " bogus_instruction_with_a_long_name;\n"
                                    "}\nexists (x == 1)\n.expect allowed\n")
    proc = subprocess.run([sys.executable, "-m", "ptxmm", "test", str(tmp_path), "-j", "1"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "60"})
    out = proc.stdout
    assert not re.search(r"\b(None|True|False)\b", out), out
    row = next(ln for ln in out.splitlines() if "DISAGREE" in ln)
    assert re.search(r"DISAGREE\s+fails\s+holds", row), out
    assert "bogus_instruction_with_a_long_name" in "".join(out.split()), out  # folded, not cut


def test_a_kernel_whose_hang_query_timed_out_has_no_verdict(monkeypatch):
    """A kernel test agrees only when every query it rests on answered: its `expect ok` says "no
    hang", so a hang query stopped at the time limit leaves the verdict unknown ("timeout"), never
    an agreement (the findings without "hang" are not evidence that no execution hangs)."""
    import dataclasses

    import ptxmm
    from ptxmm.testing import runner

    prog = ptxmm.load(ROOT / "examples" / "kernels" / "mp-release-flag.cu")
    real = ptxmm.check

    def stopped(*a, **k):
        return dataclasses.replace(real(*a, **k), liveness="timeout")

    agrees, detail, unknown, _ = runner.kernel_verdict(prog)
    assert (agrees, unknown) == (True, None)
    monkeypatch.setattr(ptxmm, "check", stopped)
    agrees, detail, unknown, _ = runner.kernel_verdict(prog)
    assert (agrees, unknown) == (None, "timeout")
    assert "liveness timeout" in detail
