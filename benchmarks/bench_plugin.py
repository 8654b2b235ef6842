"""The pytest plugin against ``ptxmm test`` on the same files (issue 42: within 2×): wall time of
``ptxmm test PATHS -j N`` and of ``pytest PATHS -n N`` through the plugin, run one after the
other (alternating, ``--repeat`` times), and their ratio.

    python benchmarks/bench_plugin.py [PATHS...] [-j 2] [--repeat 1]

Both run as the user would: fresh processes, nvcc's cache (~/.cache/ptxmm) as it is (warm after
the first run of either), the plugin with its defaults (``--ptxmm-observe condition``: one solver
query for the condition, as ``ptxmm test`` asks), and the same seconds per file (``--timeout``,
default 60: the plugin's default; ``ptxmm test`` has none by default, and without one
examples/kernels/block-reduce-shfl.cu's liveness query alone runs for more than 20 minutes on a
loaded 2-core machine). ``ptxmm test`` runs every file (the unrated ones too); the plugin only the
files that state an expectation. On a shared machine, compare figures taken in the same minute
only."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _timed(cmd: list[str]) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    tail = (p.stdout + p.stderr).strip().splitlines()
    return wall, (tail[-1] if tail else f"exit {p.returncode}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=["examples"])
    ap.add_argument("-j", "--jobs", type=int, default=2, help="processes for both (default 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each, alternating (median reported)")
    ap.add_argument("--timeout", default="60", help="seconds per file for both (the plugin's default; "
                    "ptxmm test has none by default)")
    args = ap.parse_args()
    runner = [sys.executable, "-m", "ptxmm", "test", *args.paths, "-j", str(args.jobs),
              "--timeout", args.timeout]
    # the plugin as `pytest examples/` runs it here, without this project's own addopts
    plugin = [sys.executable, "-m", "pytest", *args.paths, "-o", "addopts=", "-p", "no:cacheprovider",
              "-q", "-n", str(args.jobs), "--dist", "load", "--ptxmm-timeout", args.timeout]
    times: dict[str, list[float]] = {"ptxmm test": [], "pytest plugin": []}
    for i in range(args.repeat):
        for name, cmd in (("ptxmm test", runner), ("pytest plugin", plugin)):
            wall, last = _timed(cmd)
            times[name].append(wall)
            said = re.sub(r"\s+", " ", last)[:90]
            print(f"run {i + 1}: {name:14s} {wall:7.1f} s   {said}", flush=True)
    a, b = (statistics.median(times[k]) for k in times)
    print(f"\nptxmm test -j {args.jobs}: {a:.1f} s   pytest -n {args.jobs} (plugin): {b:.1f} s   "
          f"ratio plugin/test {b / a:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
