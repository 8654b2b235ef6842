"""Time `ptxmm.check` on every bundled litmus test (examples/ and tests/litmus/).

    python benchmarks/bench_check.py [--repeat N] [--model ptx]

Prints per-group median/max ms per test (warm: one untimed run first), then the totals."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import ptxmm

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", default="ptx")
    args = ap.parse_args()
    files = sorted([*ROOT.glob("examples/**/*.ptx"), *ROOT.glob("tests/litmus/**/*.ptx")])
    progs = [ptxmm.load(f) for f in files]
    ptxmm.check(progs[0], args.model)  # warm up imports, grammar and model caches
    groups: dict[str, list[float]] = {}
    per_test = []
    for f, p in zip(files, progs):
        ts = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ptxmm.check(p, args.model)
            ts.append((time.perf_counter() - t0) * 1000)
        best = statistics.median(ts)
        per_test.append((best, f.relative_to(ROOT)))
        groups.setdefault(str(f.parent.relative_to(ROOT)), []).append(best)
    print(f"{'group':28s} {'tests':>5s} {'median ms':>10s} {'max ms':>9s}")
    for g, ts in sorted(groups.items()):
        print(f"{g:28s} {len(ts):5d} {statistics.median(ts):10.1f} {max(ts):9.1f}")
    allt = [t for t, _ in per_test]
    print(f"{'ALL':28s} {len(allt):5d} {statistics.median(allt):10.1f} {max(allt):9.1f}")
    slow = max(per_test)
    print(f"slowest: {slow[1]} ({slow[0]:.1f} ms); model {args.model}, median of {args.repeat} runs")


if __name__ == "__main__":
    main()
