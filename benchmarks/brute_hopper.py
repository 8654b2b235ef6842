"""Brute-force engine times on the Hopper examples (issue 27; docs/hopper.md, "Brute force on the
Hopper examples"): the best and worst of ``--repeat`` runs of each, flags off, as the docs' table.

    python benchmarks/brute_hopper.py [NAME.ptx ...] [--repeat 2] [--timeout 600]

Run it against another checkout (``PYTHONPATH=<checkout>/src``) in the same minute to compare:
timings on a shared machine are noisy."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import ptxmm

HOPPER = Path(__file__).resolve().parents[1] / "examples" / "hopper"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", help="examples/hopper/ file names (default: all)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    paths = [HOPPER / n for n in a.names] or sorted(HOPPER.glob("*.ptx"))
    for p in paths:
        prog = ptxmm.load(p)
        ts, r = [], None
        for _ in range(a.repeat):
            t = time.perf_counter()
            r = ptxmm.check(prog, engine="brute", flags=False, timeout=a.timeout)
            ts.append(time.perf_counter() - t)
        print(f"{p.name:44} {min(ts):8.2f} {max(ts):8.2f} s  {r.status}", flush=True)


if __name__ == "__main__":
    main()
