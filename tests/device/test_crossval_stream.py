"""ptxmm crossval --jsonl/--resume/--show-progress without a GPU: the stream is planned a chunk at a
time, a line per test as it finishes, and an interrupt (Ctrl-C, a hung kernel) loses no test and
runs none twice once resumed. The device is faked where the tests fake it elsewhere
(tests/device/test_batches.py): a plan function that makes Jobs and Skips, a campaign whose run_one
records what it ran."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxmm.campaigns.devstream import stream_campaign
from ptxmm.campaigns.stream import rows as stream_rows
from ptxmm.cli.main import main
from ptxmm.device import batch as B
from ptxmm.device.commands import Campaign
from ptxmm.device.harness import DeviceTimeout


def _tree(tmp_path: Path, n: int = 23) -> Path:
    d = tmp_path / "tests"
    for i in range(n):
        sub = d / f"g{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        name = f"bad{i:02d}.ptx" if i % 7 == 3 else f"viol{i:02d}.ptx" if i == 11 else f"t{i:02d}.ptx"
        (sub / name).write_text("// not read: the plan is faked\n")
    return d


class FakeDevice:
    """plan(): a Skip (parse error) for files named bad*, else a Job; run_one(): records the file,
    raises ``fail`` (an exception instance) at the ``at``-th run."""

    def __init__(self, at: int | None = None, fail: BaseException | None = None,
                 out: Path | None = None):
        self.ran: list[str] = []
        self.plans: list[int] = []
        self.at, self.fail = at, fail
        self.out = out  # when given: every earlier test must already have its line there
        self.lines_before: list[int] = []

    def plan(self, files, model=None, unroll=2, **_):
        self.plans.append(len(files))
        return [B.Skip(str(f), B.PARSE, "syntax error") if Path(f).name.startswith("bad")
                else B.Job(Path(f), None, None) for f in files]  # type: ignore[arg-type]

    def run_one(self, job):
        if self.at is not None and len(self.ran) == self.at:
            self.at = None
            raise self.fail
        if self.out is not None:
            keys = set(_keys(self.out)) if self.out.exists() else set()
            earlier = [f for f in _all_files(self.out.parent / "tests") if f < str(job.file)]
            assert set(earlier) <= keys, "a finished test has no line yet"
            self.lines_before.append(len(keys))
        self.ran.append(str(job.file))
        return str(job.file)

    def campaign(self) -> Campaign:
        return Campaign("crossval", self.run_one, lambda r: None, lambda r: {"file": r},
                        lambda r: int("viol" in Path(r).name), model="ptx", ready=None)


def _keys(out: Path) -> Counter:
    return Counter(r["key"] for r in stream_rows(out))


def _all_files(d: Path) -> list[str]:
    return sorted(str(p) for p in d.rglob("*.ptx"))


def test_a_line_per_test_in_walk_order_planned_a_chunk_at_a_time(tmp_path):
    d = _tree(tmp_path)
    out = tmp_path / "out.jsonl"
    dev = FakeDevice(out=out)
    err = io.StringIO()
    res = stream_campaign(dev.campaign(), [str(d)], out, chunk=5, plan_fn=dev.plan, progress=True,
                          stream=err)
    rows = list(stream_rows(out))
    assert [r["key"] for r in rows] == _all_files(d)  # sorted walk, one line each
    assert max(dev.plans) <= 5 and sum(dev.plans) == 23  # never more than a chunk planned at once
    bad = [r for r in rows if Path(r["key"]).name.startswith("bad")]
    assert bad and all(r["status"] == "not run" and r["reason"] == B.PARSE for r in bad)
    assert all(r["status"] == "ran" and r["file"] == r["key"] for r in rows if r not in bad)
    assert res.ran == 23 - len(bad) and res.violations == 1 and res.exit_code() == 1
    assert "23/23" in err.getvalue()
    assert len(dev.lines_before) == res.ran and dev.lines_before == sorted(dev.lines_before)


def test_a_list_file_is_read_line_by_line(tmp_path):
    d = _tree(tmp_path, 6)
    files = _all_files(d)
    lst = tmp_path / "list.txt"
    lst.write_text("# the tests\n" + "\n".join(str(Path(f).relative_to(tmp_path)) for f in files[::-1]))
    dev = FakeDevice()
    out = tmp_path / "o.jsonl"
    stream_campaign(dev.campaign(), [str(lst)], out, plan_fn=dev.plan)
    assert [Path(k).name for k in _keys(out)] == [Path(f).name for f in files[::-1]]


@pytest.mark.parametrize("fail, hung", [(KeyboardInterrupt(), False),
                                        (DeviceTimeout("the kernel did not finish"), True)])
def test_resume_after_an_interrupt_loses_no_test_and_runs_none_twice(tmp_path, fail, hung):
    d = _tree(tmp_path)
    out = tmp_path / "out.jsonl"
    first = FakeDevice(at=9, fail=fail)
    res = stream_campaign(first.campaign(), [str(d)], out, chunk=4, plan_fn=first.plan)
    assert (res.interrupted, res.hung) == (not hung, hung) and res.exit_code() == 2
    keys = _keys(out)
    assert len(first.ran) == 9 and len(keys) < 23
    if hung:  # the test that hung has its line (timeout); the rest of its chunk has none
        assert [r.get("reason") for r in stream_rows(out)].count(B.TIMEOUT) == 1
    with out.open("a") as fh:  # a line cut short by a kill is dropped and its test runs again
        fh.write('{"key": "')
    second = FakeDevice()
    res2 = stream_campaign(second.campaign(), [str(d)], out, resume=True, chunk=4, plan_fn=second.plan)
    assert res2.exit_code() == 1  # the violation, now run
    keys = _keys(out)
    assert sorted(keys) == _all_files(d) and set(keys.values()) == {1}
    ran = Counter(first.ran + second.ran)
    assert set(ran.values()) == {1}  # no test run twice (a hung one stays a timeout, not rerun)
    assert not set(first.ran) & set(second.ran)


def test_the_cli_streams_and_resumes(tmp_path, monkeypatch):
    import ptxmm.device.commands as C

    d = _tree(tmp_path, 13)
    dev = FakeDevice(at=4, fail=KeyboardInterrupt())
    monkeypatch.setattr(C, "crossval_campaign", lambda *a, **k: dev.campaign())
    monkeypatch.setattr(B, "plan", dev.plan)
    out = tmp_path / "cv.jsonl"
    args = ["crossval", str(d), "--no-self-check", "--jsonl", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and "interrupted" in r.output, r.output
    r = CliRunner().invoke(main, [*args, "--resume", "--show-progress"])
    assert r.exit_code == 1 and "1 violation" in r.output, r.output  # viol11
    assert sorted(_keys(out)) == _all_files(d) and set(_keys(out).values()) == {1}
    r = CliRunner().invoke(main, ["crossval", str(d), "--resume"])
    assert r.exit_code == 2 and "--resume needs --jsonl" in r.output


def test_without_a_device_nothing_is_written(tmp_path, monkeypatch):
    import ptxmm.device.commands as C
    from ptxmm.errors import PtxmmError

    d = _tree(tmp_path, 3)
    dev = FakeDevice()
    camp = dev.campaign()
    camp.ready = lambda: PtxmmError("CuPy is not installed", None, "pip install 'ptxmm[device]'")
    monkeypatch.setattr(C, "crossval_campaign", lambda *a, **k: camp)
    out = tmp_path / "cv.jsonl"
    r = CliRunner().invoke(main, ["crossval", str(d), "--no-self-check", "--jsonl", str(out)])
    assert r.exit_code == 2 and "CuPy" in r.output and not out.exists() and not dev.ran
