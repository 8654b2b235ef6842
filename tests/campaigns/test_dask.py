"""ptxmm diff --dask: a real local Dask scheduler and two worker processes run a diff of 1,000
generated tests; the rows equal a local run's (skipped, visibly, without the [dask] extra)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="dask[distributed] is not installed (pip install 'ptxmm[dask]')")


@pytest.fixture
def cluster(tmp_path):
    sched_file = tmp_path / "scheduler.json"
    dask = shutil.which("dask", path=str(Path(sys.executable).parent))
    if dask is None:
        pytest.skip("the dask command is not installed")
    procs = [subprocess.Popen([dask, "scheduler", "--scheduler-file", str(sched_file), "--port", "0",
                               "--dashboard-address", ":0", "--no-show"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        assert sched_file.exists(), "the scheduler did not start"
        for _ in range(2):
            procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(sched_file),
                                           "--nthreads", "1", "--no-nanny", "--no-dashboard"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(scheduler_file=str(sched_file), timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
            address = c.scheduler.address
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _rows(path: Path) -> dict[str, dict]:
    out = {}
    for ln in path.read_text().splitlines():
        r = json.loads(ln)
        r.pop("time_s")
        out[r["key"]] = r
    return out


def test_diff_on_a_dask_cluster_equals_the_local_run(cluster, tmp_path):
    gen = ["--gen", "--size", "6", "--limit", "1000", "--no-explain"]
    local = tmp_path / "local.jsonl"
    remote = tmp_path / "dask.jsonl"
    base = [sys.executable, "-m", "ptxmm", "diff", "sc", "ptx", *gen]
    a = subprocess.run(base + ["--jsonl", str(local), "-j", "2"], capture_output=True, text=True,
                       timeout=900)
    b = subprocess.run(base + ["--jsonl", str(remote), "--dask", cluster], capture_output=True,
                       text=True, timeout=900)
    assert a.returncode == b.returncode == 1, a.stdout + a.stderr + b.stdout + b.stderr
    ra, rb = _rows(local), _rows(remote)
    assert len(ra) == 1000 and ra == rb
    assert a.stdout.split("(")[0] == b.stdout.split("(")[0]  # the same counts
    assert a.stdout.split("\n", 1)[1] == b.stdout.split("\n", 1)[1]  # the same listed tests
