"""Scale of commuting atomics (issue 40, items 1-2): the histogram at N threads and the
sense-reversing grid barrier at G blocks, each checked before (no read-only fold, no symmetry
breaking) and after, in one run.

    python benchmarks/bench_atomics_scale.py [--hist 16,20,24,32] [--grid 4,6] [--timeout 300]
                                             [--modes before,after] [--bins 4]

Each check is one `ptxmm.check` in a child process (wall time and peak resident memory of the
child; a child past --timeout is a "> T s" row). The histogram's data is in[t] = t % BINS, so
every bin gets N / BINS increments; the launch's thread limit is raised in the child for the
experiment (kernel/launch.py's MAX_THREADS is not this script's to change). Timings depend on the
machine's load: compare rows taken the same minute."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KDIR = ROOT / "examples" / "kernels"

_CHILD = """import sys, time
import ptxmm
from ptxmm.kernel import launch
from ptxmm.queries import checker
from ptxmm.semantics import builder
launch.MAX_THREADS = max(launch.MAX_THREADS, 4096)
after = sys.argv[3] == "after"
checker.SYMMETRY = builder.READ_ONLY_FOLD = after
prog = ptxmm.load(sys.argv[1], kernel=sys.argv[2])
t0 = time.perf_counter()
r = ptxmm.check(prog)
kinds = sorted({f.kind.value for f in r.findings})
import resource
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
kinds = ",".join(kinds) or "-"
print(f"{time.perf_counter() - t0:.1f} {rss} {r.status} {len(r.outcomes)} {kinds} {r.liveness}")
"""


def _launch(kind: str, n: int, bins: int) -> tuple[Path, str]:
    if kind == "hist":
        vals = ", ".join(str(i % bins) for i in range(n))
        return KDIR / "histogram.ptx", f"histogram<<<1, {n}>>>(int in[{n}] = {{{vals}}}, unsigned hist[4])"
    return KDIR / "grid-barrier.ptx", (f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], "
                                       f"int slot[{n}], int out[{n}])")


def _run(kind: str, n: int, mode: str, bins: int, timeout: float) -> str:
    path, launch = _launch(kind, n, bins)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), launch, mode], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return f"> {timeout:.0f} s"
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return f"error ({err.strip().splitlines()[-1] if err.strip() else p.returncode})"
    check_s, rss, status, n_out, kinds, live = out.split()
    return (f"{check_s} s check, {wall:.1f} s wall, {rss} MiB peak; {status}, {n_out} outcome(s), "
            f"{kinds}, {live}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hist", default="16,20,24,32")
    ap.add_argument("--grid", default="4,6")
    ap.add_argument("--modes", default="before,after")
    ap.add_argument("--bins", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args()
    for kind, sizes in (("hist", a.hist), ("grid", a.grid)):
        for n in [int(x) for x in sizes.split(",") if x]:
            for mode in a.modes.split(","):
                print(f"{kind:5} {n:4} {mode:6} {_run(kind, n, mode, a.bins, a.timeout)}", flush=True)


if __name__ == "__main__":
    main()
