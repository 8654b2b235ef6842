"""Campaigns at scale: inputs streamed (folders, list files), JSON lines as tests finish, --resume
after a run killed mid-way (no test lost, none done twice), progress, and ptxmm diff."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import ROOT

from ptxmm.campaigns.gen import GenOptions, generate
from ptxmm.campaigns.stream import Progress, done_keys, header, iter_paths, rows
from ptxmm.cli.main import main
from ptxmm.errors import ArgumentError


def _write(d: Path, opts: GenOptions) -> list[Path]:
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for g in generate(opts):
        p = d / f"{g.name}.ptx"
        p.write_text(g.text())
        out.append(p)
    return out


def _keys(out: Path) -> list[str]:
    return [r["key"] for r in rows(out)]


def test_inputs_stream_from_folders_and_list_files(tmp_path):
    files = _write(tmp_path / "t" / "sub", GenOptions(size=4, limit=5))
    lst = tmp_path / "list.txt"
    lst.write_text("# a list file\n" + "\n".join(f"t/sub/{p.name}" for p in files[:3]) + "\n")
    assert list(iter_paths([str(tmp_path / "t")])) == sorted(files)
    assert [p.name for p in iter_paths([str(lst)])] == [p.name for p in files[:3]]


HEAD = json.dumps(header("test", model="ptx", unroll=2)) + "\n"


def test_a_line_cut_short_is_dropped_and_run_again(tmp_path):
    out = tmp_path / "o.jsonl"
    out.write_text(HEAD + '{"key": "a"}\n{"key": "b"}\n{"key": "c", "hol')
    assert done_keys(out) == {"a", "b"}
    assert out.read_text() == HEAD + '{"key": "a"}\n{"key": "b"}\n'


def test_resume_keeps_every_row_past_a_line_that_is_not_one(tmp_path):
    """A comment someone added after row 1 stays, and costs none of the rows after it."""
    out = tmp_path / "o.jsonl"
    text = HEAD + '{"key": "a"}\n# checked by hand\n{"key": "b"}\n{"key": "c"}\n'
    out.write_text(text)
    assert done_keys(out, header("test", model="ptx", unroll=2)) == {"a", "b", "c"}
    assert out.read_text() == text


@pytest.mark.parametrize("text", ["my notes\nabout the run\n", "[1, 2]\n", "null\n",
                                  '{"key": "a"}\n'])
def test_a_file_ptxmm_did_not_write_is_refused_untouched(tmp_path, text):
    """--resume and a plain --jsonl refuse a file without ptxmm's header (notes, a JSON array,
    null, rows without the header) with a usage error; the file keeps every byte."""
    out = tmp_path / "notes.txt"
    out.write_text(text)
    (tmp_path / "t.ptx").write_text((ROOT / "examples" / "mp-relaxed-acquire.ptx").read_text())
    for extra in (["--resume"], []):
        r = CliRunner().invoke(main, ["test", str(tmp_path / "t.ptx"), "--jsonl", str(out), "-j", "1",
                                      *extra])
        assert r.exit_code == 2 and "not a file ptxmm --jsonl wrote" in r.output, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit)
        assert out.read_text() == text
    with pytest.raises(ArgumentError):
        done_keys(out)


def test_resuming_under_another_model_is_refused(tmp_path):
    """A file begun under -m sc is not resumed under -m ptx (its rows would mix); rows carry the
    model."""
    d = tmp_path / "t"
    _write(d, GenOptions(size=4, limit=4))
    out = tmp_path / "o.jsonl"
    base = ["test", str(d), "--jsonl", str(out), "-j", "1"]
    assert CliRunner().invoke(main, base + ["-m", "sc"]).exit_code in (0, 1)
    before = out.read_text()
    assert {r["model"] for r in rows(out)} == {"sc"}
    r = CliRunner().invoke(main, base + ["-m", "ptx", "--resume"])
    assert r.exit_code == 2 and "model 'sc'" in r.output and "model 'ptx'" in r.output, r.output
    assert out.read_text() == before


@pytest.mark.parametrize("where", ["dir", "missing/x.jsonl"])
def test_jsonl_at_a_folder_or_in_a_missing_one_is_a_usage_error(tmp_path, where):
    (tmp_path / "dir").mkdir()
    for extra in (["--resume"], []):
        r = CliRunner().invoke(main, ["diff", "sc", "ptx", "--gen", "--limit", "2", "-j", "1",
                                      "--jsonl", str(tmp_path / where), *extra])
        assert r.exit_code == 2 and "cannot be written" in r.output, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit)


def test_progress_shows_done_total_rate_and_eta():
    s = io.StringIO()
    p = Progress(10, stream=s, force=True)
    p.last = -10.0
    p.step(4)
    assert "4/10" in s.getvalue() and "tests/s" in s.getvalue() and "ETA" in s.getvalue()


def test_resume_after_a_killed_run_loses_no_test_and_runs_none_twice(tmp_path):
    files = _write(tmp_path / "t", GenOptions(size=5, limit=240))
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "ptxmm", "test", str(tmp_path / "t"), "--jsonl", str(out), "-j", "2"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 20):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers, mid-run
    proc.wait()
    first = done_keys(out)
    assert 20 <= len(first) < len(files)
    r = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    keys = _keys(out)
    assert sorted(keys) == sorted(str(f) for f in files)  # none lost, none twice
    assert f"{len(files) - len(first)} tests run" in r.stdout
    r = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=600)
    assert "0 tests run" in r.stdout and _keys(out) == keys


def test_streamed_test_agrees_with_the_batch_runner(tmp_path):
    files = _write(tmp_path / "t", GenOptions(size=4, limit=12))
    out = tmp_path / "o.jsonl"
    r = CliRunner().invoke(main, ["test", str(tmp_path / "t"), "--jsonl", str(out), "-j", "1"])
    assert r.exit_code == 0, r.output
    from ptxmm.testing.runner import run_tests

    batch = {x.path: x.holds for x in run_tests([str(tmp_path / "t")], jobs=1)}
    got = list(rows(out))
    assert {x["key"]: x["holds"] for x in got} == batch and len(got) == len(files)
    assert all(x["model"] == "ptx" for x in got)  # every row carries its model


def test_diff_sc_ptx_over_size4_lists_the_classic_shapes(tmp_path):
    r = CliRunner().invoke(main, ["diff", "sc", "ptx", "--gen", "--size", "4", "-j", "1",
                                  "--json", str(tmp_path / "d.json")])
    assert r.exit_code == 1, r.output  # differences found
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["summary"]["total"] == 161 and d["holds_only_in_m1"] == []
    shapes = [x["family"] for x in d["holds_only_in_m2"]]
    assert set(shapes) == {"SB", "MP", "LB", "2+2W", "S", "R"} and len(shapes) == 6
    mp = next(x for x in d["holds_only_in_m2"] if x["family"] == "MP")
    assert mp["name"] == "MP+pos"
    sc, ptx = mp["explain"]
    assert sc["verdict"] == "forbidden" and sc["axioms"] == ["SC"] and ptx["verdict"] == "allowed"


def test_diff_reads_paths_and_user_cat_files(tmp_path, root):
    _write(tmp_path / "t", GenOptions(cycles=("Rfe PodRR Fre PodWW", "PodWR Fre PodWR Fre")))
    r = CliRunner().invoke(main, ["diff", "sc", str(root / "models" / "sc.cat"), str(tmp_path / "t"),
                                  "-j", "1"])
    assert r.exit_code == 0 and "2 tests: 2 same verdict" in r.output, r.output
    r = CliRunner().invoke(main, ["diff", "sc", "nosuchmodel", str(tmp_path / "t")])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_streamed_test_reads_expectations_from_a_csv(tmp_path):
    files = _write(tmp_path / "t", GenOptions(cycles=("Rfe PodRR Fre PodWW",)))
    csv = tmp_path / "exp.csv"
    csv.write_text(f"# path,ptx\n{files[0].name},0\n")  # wrong on purpose: MP+pos is allowed
    out = tmp_path / "o.jsonl"
    r = CliRunner().invoke(main, ["test", str(tmp_path / "t"), "--jsonl", str(out), "-j", "1",
                                  "--expected", str(csv)])
    assert r.exit_code == 1 and "1 DISAGREE" in r.output, r.output
    r = CliRunner().invoke(main, ["test", str(tmp_path / "t"), "--resume"])
    assert r.exit_code == 2 and "--resume needs --jsonl" in r.output


def test_diff_finds_the_documented_fence_sc_departure(tmp_path):
    """tests/models/test_departures.py: a fence.sc is a release fence in ptx.cat, not in Dat3M's 7.5
    model. The generated MP with fence.sc before the flag store and an acquire flag load shows it."""
    r = CliRunner().invoke(main, ["diff", "ptx", "ptx-v7.5", "--gen", "-j", "1", "--json",
                                  str(tmp_path / "d.json"), "--cycle", "Fence.sc.gpu.dWW Rfe PodRRAgRg Fre",
                                  "--cycle", "PodWW Rfe PodRRAgRg Fre"])
    assert r.exit_code == 1, r.output
    d = json.loads((tmp_path / "d.json").read_text())
    (only,) = d["holds_only_in_m2"]
    assert only["name"] == "MP+fence.sc.gpu+acq.gpu-po" and d["summary"]["same"] == 1
    ptx, v75 = only["explain"]
    assert ptx["verdict"] == "forbidden" and "Causality" in ptx["axioms"] and v75["verdict"] == "allowed"
