"""Time the liveness check (``ptxmm test --liveness``) over Dat3M's PTX liveness corpus (47 tests)
with one worker, per model and per folder, and over examples/liveness under every progress
model; target: median <= 50 ms per test (issue 26).

    python benchmarks/bench_liveness.py [--repeat N]

Each test's time is load + liveness query inside the worker (the first test of a run also pays
for importing Z3); the median of N runs per test is reported. Needs ../shared/conformance for the
corpus (skips that part with a message otherwise)."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ptxmm.testing.runner import run_tests

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "conformance" / "dat3m-liveness"
EXAMPLES = ROOT / "examples" / "liveness"


def _runs(paths: list[str], model: str, csv: str | None, column: str | None, progress: str, n: int):
    per: dict[str, list[float]] = {}
    last = []
    for _ in range(n):
        last = run_tests(paths, model, csv, column, jobs=1, liveness=progress)
        for r in last:
            per.setdefault(r.path, []).append(r.time_s * 1000)
    return last, {p: statistics.median(ts) for p, ts in per.items()}


def _row(label: str, res, times: dict[str, float], wall: float | None = None) -> str:
    ts = sorted(times[r.path] for r in res) or [0.0]
    agree = sum(r.status == "agree" for r in res)
    rated = sum(r.status in ("agree", "DISAGREE") for r in res)
    errors = sum(r.status not in ("agree", "DISAGREE", "unrated") for r in res)
    hangs = sum(r.holds is False for r in res)
    w = f"{wall:7.2f}" if wall is not None else " " * 7
    return (f"{label:34s} {len(res):5d} {agree:4d}/{rated:<4d} {errors:6d} {hangs:5d} {w} "
            f"{statistics.median(ts):10.1f} {max(ts):8.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3, help="runs per test (the median is reported)")
    args = ap.parse_args()
    print(f"{'corpus / model / folder':34s} {'tests':>5s} {'agree':>9s} {'errors':>6s} {'hangs':>5s} "
          f"{'wall s':>7s} {'median ms':>10s} {'max ms':>8s}")
    if CORPUS.is_dir():
        for model in ("ptx-v7.5", "ptx-v6.0", "ptx"):
            col = model if model != "ptx" else "ptx-v7.5"
            t0 = time.perf_counter()
            res, times = _runs([str(CORPUS / "PTX")], model, str(CORPUS / "expected.csv"), col, "fair",
                               args.repeat)
            print(_row(f"dat3m-liveness {model} -j1", res, times, (time.perf_counter() - t0) / args.repeat))
            for folder in ("Barrier", "CADP"):
                sub = [r for r in res if f"/PTX/{folder}/" in r.path]
                print(_row(f"  {folder}/", sub, times))
    else:
        print(f"skipped: {CORPUS} not present")
    for progress in ("fair", "obe", "lobe", "hsa", "unfair"):
        res, times = _runs([str(EXAMPLES)], "ptx", None, None, progress, args.repeat)
        print(_row(f"examples/liveness --progress {progress}", res, times))
    print("target: median <= 50 ms per liveness test with one worker; agree = agreeing/rated "
          "(the examples' .expect-liveness states the fair verdict); hangs = tests with a hang")


if __name__ == "__main__":
    main()
