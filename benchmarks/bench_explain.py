"""Timings of `explain` and `explain --fix` on every bundled test (issue 12: explain <= 1 s and
--fix <= 10 s on 2-4-thread tests). Prints a table; not a unit test.

    python benchmarks/bench_explain.py [--model ptx] [--no-fix]"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import ptxmm
from ptxmm.explanation.explain import explain

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    model = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else "ptx"
    fix = "--no-fix" not in sys.argv
    files = sorted((ROOT / "examples").rglob("*.ptx"))
    print(f"model {model}; times in seconds (best of 2 for explain, one run for --fix)")
    print(f"{'test':52s} {'thr':>3s} {'verdict':9s} {'explain':>8s} {'fix':>7s} {'checks':>6s}  fixes")
    worst_e = worst_f = 0.0
    over = 0
    for f in files:
        prog = ptxmm.load(f)
        te = []
        for _ in range(2):
            t0 = time.perf_counter()
            x = explain(prog, model)
            te.append(time.perf_counter() - t0)
        tf, checks, sols = float("nan"), "", ""
        if fix:
            t0 = time.perf_counter()
            xf = explain(prog, model, fix=True)
            tf = time.perf_counter() - t0
            checks = str(xf.fixes.checked) + ("+" if xf.fixes.bound_hit else "")
            sols = "; ".join(s.text for s in xf.fixes.solutions[:2])
            worst_f = max(worst_f, tf)
        small = 2 <= len(prog.threads) <= 4
        e = min(te)
        worst_e = max(worst_e, e)
        over += small and (e > 1.0 or tf > 10.0)
        verdict = ("allowed" if x.allowed else "forbidden") + ("*" if x.bound_hit else "")
        print(f"{str(f.relative_to(ROOT / 'examples')):52s} {len(prog.threads):3d} {verdict:9s} {e:8.3f} "
              f"{tf:7.2f} {checks:>6s}  {sols[:90]}")
    print(f"worst explain {worst_e:.3f} s, worst --fix {worst_f:.2f} s; "
          f"{over} 2-4-thread test(s) over the targets (* = candidate bound hit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
