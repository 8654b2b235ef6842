"""Time the Dat3M PTX corpus (non-proxy tests) end to end, per model, beside the anchors.

    python benchmarks/bench_conformance.py [--jobs N]

Needs ../shared/conformance (skips with a message otherwise)."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ptxmm.runner import run_tests

DAT3M = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "dat3m"
ANCHORS = {"ptx-v7.5": "Dat3M 46.9 ms/test", "ptx-v6.0": "Dat3M 57 ms/test",
           "ptx": "NVIDIA Alloy 500 ms/test"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    if not DAT3M.is_dir():
        print(f"skipped: {DAT3M} not present")
        return
    dirs = [str(DAT3M / "PTX" / d) for d in ("Manual", "Barrier", "Nvidia")]
    print(f"{'model':10s} {'tests':>5s} {'agree':>6s} {'wall s':>7s} {'tests/s':>8s} "
          f"{'median ms':>10s} {'max ms':>8s}   anchor")
    for model, col in (("ptx", "ptx-v7.5"), ("ptx-v7.5", "ptx-v7.5"), ("ptx-v6.0", "ptx-v6.0")):
        t0 = time.perf_counter()
        res = run_tests(dirs, model, str(DAT3M / "expected.csv"), col, jobs=args.jobs)
        wall = time.perf_counter() - t0
        res = [r for r in res if "/proxy/" not in r.path]  # proxies: not supported yet
        ts = [r.time_s * 1000 for r in res]
        agree = sum(r.status == "agree" for r in res)
        print(f"{model:10s} {len(res):5d} {agree:3d}/{len(res):<2d} {wall:7.2f} "
              f"{len(res) / wall:8.1f} {statistics.median(ts):10.1f} {max(ts):8.1f}   "
              f"{ANCHORS[model]}")
    print("wall includes process start-up of the workers and the rejected proxy tests; "
          "per-test times are load + check inside a worker")


if __name__ == "__main__":
    main()
