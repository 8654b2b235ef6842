"""Cost of the every-launch race check (ptxmm.queries.any_launch) on the barrier kernels, beside the
concrete check of the largest launch it can still afford.

    python benchmarks/bench_any_launch.py [--up-to '<<<1024, 1024>>>'] [--no-confirm] [NAME ...]

Per kernel: the verdict for every launch up to --up-to, the solver queries, the time of the
symbolic part alone (--no-confirm: no concrete check of the witnesses), the time with the
witnesses confirmed, and for comparison the concrete `ptxmm.check` at <<<1, 32>>> (32 threads, the
concrete limit; "-" when that launch is refused). Timings depend on the machine's load: compare
runs taken the same minute."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = {
    "syncthreads-exchange": ROOT / "examples/kernels/syncthreads-exchange.ptx",
    "syncthreads-exchange-no-barrier": ROOT / "examples/kernels/syncthreads-exchange-no-barrier.ptx",
    "exchange-off-by-one": ROOT / "examples/kernels/exchange-off-by-one.ptx",
    "scatter-race": ROOT / "examples/kernels/scatter-race.ptx",
    "gather-oob": ROOT / "examples/kernels/gather-oob.ptx",
    "histogram": ROOT / "examples/kernels/histogram.ptx",
    "block-reverse": ROOT / "tests/queries/data/block-reverse.ptx",
    "block-reverse-racy": ROOT / "tests/queries/data/block-reverse-racy.ptx",
}


def _concrete_32(path: Path) -> str:
    import ptxmm
    from ptxmm.kernel.kernels import KernelArgs

    try:
        prog = ptxmm.load(path)
        launch = re.sub(r"<<<[^>]*>>>", "<<<1, 32>>>", str(prog.kernel.launch), count=1)
        t = time.perf_counter()
        ptxmm.check(ptxmm.load(path, kernel=KernelArgs(launch)), timeout=120)
        return f"{time.perf_counter() - t:.2f}"
    except ptxmm.PtxmmError:
        return "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--up-to", default="<<<1024, 1024>>>")
    ap.add_argument("--no-confirm", action="store_true")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    from ptxmm.queries.any_launch import any_launch_races

    print(f"| kernel | up to {a.up_to} | queries | symbolic s | with confirmation s "
          "| concrete <<<1, 32>>> s |")
    print("|---|---|---|---|---|---|")
    for name in a.names or KERNELS:
        path = KERNELS[name]
        any_launch_races(path, a.up_to, confirm=False)  # warm: parse caches, Z3 start-up
        t = time.perf_counter()
        r = any_launch_races(path, a.up_to, confirm=False)
        sym = time.perf_counter() - t
        conf = "-"
        if not a.no_confirm:
            t = time.perf_counter()
            any_launch_races(path, a.up_to)
            conf = f"{time.perf_counter() - t:.2f}"
        print(f"| {name} | {r.verdict} ({len(r.findings)}) | {r.queries} | {sym:.2f} | {conf} | "
              f"{_concrete_32(path)} |", flush=True)


if __name__ == "__main__":
    main()
