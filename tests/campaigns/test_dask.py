"""ptxmm diff --dask: a real local Dask scheduler and two worker processes run a diff of 1,000
generated tests; the rows equal a local run's (skipped, visibly, without the [dask] extra). Also
against default, multi-threaded workers (several tasks at once in one process: each thread checks
in a Z3 context of its own), and an unreachable scheduler is a usage error within seconds."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="dask[distributed] is not installed (pip install 'ptxmm[dask]')")


@pytest.fixture
def cluster(tmp_path):
    yield from _cluster(tmp_path, ["--nthreads", "1", "--no-nanny"])


@pytest.fixture
def threaded_cluster(tmp_path):
    """Workers as `dask worker` starts them by default (a nanny, threads), with 4 threads each."""
    yield from _cluster(tmp_path, ["--nthreads", "4"])


def _cluster(tmp_path, worker_args):
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
                                           *worker_args, "--no-dashboard"],
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
    from ptxmm.campaigns.stream import rows

    for r in rows(path):
        r.pop("time_s")
        out[r["key"]] = r
    return out


def test_diff_on_a_dask_cluster_equals_the_local_run(cluster, tmp_path):
    _diff_equals_local(cluster, tmp_path, 1000)


def test_diff_on_multithreaded_dask_workers_equals_the_local_run(threaded_cluster, tmp_path):
    _diff_equals_local(threaded_cluster, tmp_path, 400)


def test_an_in_process_multithreaded_cluster_gives_the_local_rows():
    """A LocalCluster of threads (processes=False, 4 threads per worker): every task of one
    process, on threads at once."""
    from functools import partial

    from distributed import LocalCluster

    from ptxmm.campaigns.executors import run
    from ptxmm.campaigns.gen import GenOptions
    from ptxmm.campaigns.stream import gen_items
    from ptxmm.campaigns.work import verdicts

    opts = GenOptions(size=5, limit=120)
    fn = partial(verdicts, models=("sc", "ptx"), unroll=2, timeout=None)
    local = [r for rows in run(fn, gen_items(opts), jobs=1) for r in rows]
    with LocalCluster(n_workers=1, threads_per_worker=4, processes=False, dashboard_address=None) as lc:
        remote = [r for rows in run(fn, gen_items(opts), dask_address=lc.scheduler_address, batch=2)
                  for r in rows]
    strip = lambda rows: {r["key"]: {k: v for k, v in r.items() if k != "time_s"} for r in rows}  # noqa: E731
    assert len(local) == 120 and strip(local) == strip(remote)


def test_an_unreachable_scheduler_is_a_usage_error_at_once(tmp_path):
    t0 = time.time()
    r = subprocess.run([sys.executable, "-m", "ptxmm", "diff", "sc", "ptx", "--gen", "--limit", "3",
                        "--dask", "tcp://127.0.0.1:9"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "--dask" in r.stderr and "tcp://127.0.0.1:9" in r.stderr
    assert time.time() - t0 < 25


def _diff_equals_local(cluster, tmp_path, n):
    gen = ["--gen", "--size", "6", "--limit", str(n), "--no-explain"]
    local = tmp_path / "local.jsonl"
    remote = tmp_path / "dask.jsonl"
    base = [sys.executable, "-m", "ptxmm", "diff", "sc", "ptx", *gen]
    a = subprocess.run(base + ["--jsonl", str(local), "-j", "2"], capture_output=True, text=True,
                       timeout=900)
    b = subprocess.run(base + ["--jsonl", str(remote), "--dask", cluster], capture_output=True,
                       text=True, timeout=900)
    assert a.returncode == b.returncode == 1, a.stdout + a.stderr + b.stdout + b.stderr
    ra, rb = _rows(local), _rows(remote)
    differ = {k: (ra.get(k), rb.get(k)) for k in ra.keys() | rb.keys() if ra.get(k) != rb.get(k)}
    assert len(ra) == n and not differ, "\n".join(f"{k}:\n  local {x}\n  dask  {y}"
                                                  for k, (x, y) in sorted(differ.items())[:6])
    assert a.stdout.split("(")[0] == b.stdout.split("(")[0]  # the same counts
    assert a.stdout.split("\n", 1)[1] == b.stdout.split("\n", 1)[1]  # the same listed tests
