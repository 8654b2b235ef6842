"""Time the whole Dat3M PTX corpus (189 tests, 102 of them mixed-proxy) end to end, per model and
per folder, with one worker and with two, beside the anchors and the targets (median <= 10 ms per
test with one worker, whole corpus <= 10 s wall with two).

    python benchmarks/bench_conformance.py

Needs ../shared/conformance (skips with a message otherwise)."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ptxmm.testing.runner import run_tests

DAT3M = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "dat3m"
ANCHORS = {"ptx-v7.5": "Dat3M 46.9 ms/test", "ptx-v6.0": "Dat3M 57 ms/test",
           "ptx": "NVIDIA Alloy 500 ms/test"}


def _row(label: str, res, wall: float | None, anchor: str = "") -> str:
    ts = [r.time_s * 1000 for r in res if r.status in ("agree", "DISAGREE", "unrated")]
    rated = [r for r in res if r.status != "unrated"]
    agree = sum(r.status == "agree" for r in res)
    errors = sum(r.status not in ("agree", "DISAGREE", "unrated") for r in res)
    w = f"{wall:7.2f}" if wall is not None else " " * 7
    return (f"{label:26s} {len(res):5d} {agree:4d}/{len(rated):<4d} {errors:6d} {w} "
            f"{statistics.median(ts):10.1f} {max(ts):8.1f}   {anchor}")


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    if not DAT3M.is_dir():
        print(f"skipped: {DAT3M} not present")
        return
    dirs = [str(DAT3M / "PTX" / d) for d in ("Manual", "Barrier", "Nvidia")]
    print(f"{'model / folder':26s} {'tests':>5s} {'agree':>9s} {'errors':>6s} {'wall s':>7s} "
          f"{'median ms':>10s} {'max ms':>8s}   anchor / target")
    for model, col in (("ptx", "ptx-v7.5"), ("ptx-v7.5", "ptx-v7.5"), ("ptx-v6.0", "ptx-v6.0")):
        for jobs in (1, 2):
            t0 = time.perf_counter()
            res = run_tests(dirs, model, str(DAT3M / "expected.csv"), col, jobs=jobs)
            wall = time.perf_counter() - t0
            target = "median <= 10 ms" if jobs == 1 else "wall <= 10 s"
            print(_row(f"{model} -j{jobs}", res, wall, f"{ANCHORS[model]}; target {target}"))
        for folder in ("Manual/", "Manual/proxy/", "Barrier/", "Nvidia/", "Nvidia/proxy/"):
            sub = [r for r in res if r.path.split("/PTX/", 1)[1].rsplit("/", 1)[0] + "/" == folder]
            print(_row(f"  {folder}", sub, None))
    print("agree = agreeing/rated (unrated: the CSV column has no entry, e.g. proxy tests under "
          "6.0); wall includes worker start-up; per-test times are load + check inside a worker")


if __name__ == "__main__":
    main()
