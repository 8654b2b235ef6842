"""Red team round 4, F2-F5: an output option (--json FILE, graph -o FILE) is checked before any
work starts: a folder, a missing parent folder or a place that cannot be written is a usage error
naming the option and the path (exit 2, no traceback, nothing run)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support import ROOT

from ptxmm.cli.main import main

MP = ROOT / "examples" / "mp-relaxed-acquire.ptx"


def _cli(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, r.output


@pytest.mark.parametrize("cmd", [
    ["test", MP, "--json"],
    ["diff", "sc", "ptx", "--gen", "--size", "2", "--limit", "1", "--json"],
    ["graph", MP, "-o"],
])
@pytest.mark.parametrize("where, words", [
    ("{tmp}", "is a folder"),
    ("{tmp}/nonexist/x.json", "its folder {tmp}/nonexist does not exist"),
])
def test_an_output_path_that_cannot_be_written_is_refused_before_running(cmd, where, words, tmp_path):
    path = where.format(tmp=tmp_path)
    code, out = _cli(*cmd, path)
    assert code == 2 and f"{cmd[-1]} {path}: {words.format(tmp=tmp_path)}" in out, out
    assert "tests:" not in out and "agree" not in out  # nothing ran
    assert not (tmp_path / "nonexist").exists()


def test_a_writable_output_path_is_written(tmp_path):
    code, out = _cli("graph", MP, "-o", tmp_path / "g.svg")
    assert code == 0, out
    assert (tmp_path / "g.svg").read_text().startswith("<svg")


@pytest.mark.parametrize("cmd", [
    ["test", MP, "--json"],
    ["diff", "sc", "ptx", "--gen", "--size", "2", "--limit", "1", "--json"],
])
def test_an_input_file_named_as_the_output_is_refused_and_kept(cmd, tmp_path):
    """`ptxmm test --json examples/mp.ptx` (the file meant as input) overwrote the test."""
    victim = tmp_path / "mp.ptx"
    victim.write_text(MP.read_text())
    code, out = _cli(*cmd, victim)
    assert code == 2 and f"--json {victim}: is an input file (.ptx)" in out, out
    assert victim.read_text() == MP.read_text()
