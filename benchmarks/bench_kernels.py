"""Cost of checking each kernel of the corpus (examples/kernels/) at its launch.

    python benchmarks/bench_kernels.py [--repeat N] [--model ptx] [--all] [--no-process] [NAME ...]
    python benchmarks/bench_kernels.py --scale [--before REV] [--scale-timeout S] [--only KERNEL ...]

Per kernel: the threads of its launch, the events of its check, the time of `ptxmm.check` on its
committed PTX in this process (median of N warm runs: the first run is untimed), the peak of Python's
heap during one check (tracemalloc: Z3's own memory is not in it), the wall time and peak resident memory
of a whole `ptxmm check k.ptx` process (start-up, parse, check, report), and what reading the .cu adds
over reading its .ptx when nvcc's output is cached (median of N `ptxmm.load` of each, after one load of
the .cu has filled the cache; "-" when nvcc is absent).

Targets (issue 25): a check at most 2 s, the 3-tile look-back at most 5 s (judged on the in-process
median), a cached compile at most 50 ms. Kernels marked slow (grid-barrier-reuse: the barrier used twice)
run only with --all. Timings depend on the machine's load: compare runs taken the same minute.

--scale prints the scale table of issue 40 instead: per kernel (histogram, the grid barrier, the
__syncthreads exchange, the warp-collective block reduce), a row per launch size, each a whole
`ptxmm check --forall COND --timeout S --max-memory 2G` process run twice in one go: "before" from a
git worktree of REV (default: the commit before the issue's work, ca6d426; created as
../scale-before-REV), with its fixed 32-thread limit lifted in the process so that the old algorithm is
timed, and "after" from this tree. Both check the same committed PTX of this tree. A cell is the
process's CPU seconds (user + system: on a shared machine wall time measures the neighbours), its wall
seconds and peak RSS; "unknown" when --timeout or --max-memory stopped it. The issue's targets (CPU
seconds and 2 GB) are marked on their rows: * met, ! missed."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import ptxmm

ROOT = Path(__file__).resolve().parents[1]
KDIR = ROOT / "examples" / "kernels"
SLOW = {"grid-barrier-reuse", "block-reduce-shfl"}
LIMIT_S = {"lookback-packed": 5.0, "lookback-two-words": 5.0, "lookback-two-words-no-fence": 5.0}
DEFAULT_LIMIT_S = 2.0
COMPILE_LIMIT_MS = 50.0


def _threads(cu: Path) -> int:
    m = re.search(r"//\s*ptxmm:\s*launch\s+\w+<<<\s*(\d+)\s*,\s*(\d+)", cu.read_text())
    return int(m.group(1)) * int(m.group(2)) if m else 0


def _median_ms(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ts)


# Runs argv[1:] and prints its exit status, wall time and peak RSS. A small process forks the check:
# a child's peak RSS counts the pages it shares with its parent at fork time, so forking from this
# (large) process would report this process's size for every kernel.
_WRAPPER = """import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), time.perf_counter() - t0, usage.ru_maxrss)
"""


def _process(ptx: Path, model: str) -> tuple[float, float, int]:
    """(wall s, peak RSS MiB, exit status) of one `ptxmm check` process."""
    cmd = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "ptxmm", "check", "--model", model, str(ptx)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
    return float(out[1]), int(out[2]) / 1024, int(out[0])


def _compile_overhead_ms(cu: Path, ptx: Path, repeat: int) -> float | None:
    if shutil.which("nvcc") is None:
        return None
    ptxmm.load(cu)  # fills the cache
    return _median_ms(lambda: ptxmm.load(cu), repeat) - _median_ms(lambda: ptxmm.load(ptx), repeat)


def _row(name: str, args) -> dict:
    cu, ptx = KDIR / f"{name}.cu", KDIR / f"{name}.ptx"
    prog = ptxmm.load(ptx)
    res = ptxmm.check(prog, args.model)  # warm: imports, model, caches
    check_ms = _median_ms(lambda: ptxmm.check(prog, args.model), args.repeat)
    tracemalloc.start()
    ptxmm.check(prog, args.model)
    heap_mib = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    proc = _process(ptx, args.model) if args.process else None
    kinds = sorted({str(f.kind) for f in res.findings if str(f.kind) != "flag"})
    return {"name": name, "threads": _threads(cu), "events": res.n_events, "check_ms": check_ms,
            "heap_mib": heap_mib, "proc": proc, "compile_ms": _compile_overhead_ms(cu, ptx, args.repeat),
            "findings": ", ".join(kinds) or "ok", "holds": res.holds}


def _line(r: dict) -> str:
    dash = "      -"
    proc_s, rss = (f"{r['proc'][0]:7.2f}", f"{r['proc'][1]:7.0f}") if r["proc"] else (dash, dash)
    comp = dash if r["compile_ms"] is None else f"{r['compile_ms']:7.1f}"
    note = "" if r["holds"] else "  (condition does NOT hold)"
    if r["proc"] and r["proc"][2] != 0:
        note += f"  (ptxmm check exited {r['proc'][2]})"
    return (f"{r['name']:32s} {r['threads']:3d} {r['events']:6d} {r['check_ms']:9.1f} {r['heap_mib']:8.1f} "
            f"{proc_s} {rss} {comp}  {r['findings']}{note}")


def _missed(r: dict) -> list[str]:
    out = []
    limit = LIMIT_S.get(r["name"], DEFAULT_LIMIT_S)
    if r["check_ms"] > limit * 1000:
        out.append(f"{r['name']}: check {r['check_ms'] / 1000:.2f} s > {limit:g} s")
    if r["compile_ms"] is not None and r["compile_ms"] > COMPILE_LIMIT_MS:
        out.append(f"{r['name']}: cached compile adds {r['compile_ms']:.1f} ms > {COMPILE_LIMIT_MS:g} ms")
    return out


# ----- the scale table (issue 40) -----------------------------------------------------------------

SCALE_BEFORE = "ca6d426"
SCALE_MEMORY = "2G"


def _hist(n: int) -> tuple[str, str]:
    vals = ", ".join(str(t % 4) for t in range(n))
    want = " && ".join(f"hist[{b}] == {len(range(b, n, 4))}" for b in range(4))
    return f"histogram<<<1, {n}>>>(int in[{n}] = {{{vals}}}, unsigned hist[4])", want


def _grid(n: int) -> tuple[str, str]:
    return (f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])",
            " && ".join(f"out[{b}] == {(b + 1) % n + 1}" for b in range(n)))


def _exchange(n: int) -> tuple[str, str]:
    return f"exchange<<<1, {n}>>>(int out[{n}])", f"out[0] == 2 && out[{n - 1}] == 1"


def _reduce(grid_block: tuple[int, int]) -> tuple[str, str]:
    g, b = grid_block
    return (f"block_sum<<<{g}, {b}>>>(int out[{g}])",
            " && ".join(f"out[{i}] == {b * (b + 1) // 2}" for i in range(g)))


# kernel → (the .ptx stem, the sizes, size → (launch, condition), {size: target CPU seconds})
SCALE = {
    "histogram": ("histogram", [2, 4, 8, 16, 32, 64, 128], _hist, {128: 30.0}),
    "grid-barrier": ("grid-barrier", [2, 4, 6, 8, 12, 16], _grid, {16: 30.0}),
    "syncthreads-exchange": ("syncthreads-exchange", [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
                             _exchange, {1024: 10.0}),
    "block-reduce-shfl": ("block-reduce-shfl", [(1, 32), (2, 32), (1, 64), (2, 64)], _reduce,
                          {(2, 64): 30.0}),
}

# Runs the CLI with kernel.launch.MAX_THREADS lifted (the before tree refuses past 32 threads).
_LIFTED = """import sys
import ptxmm.kernel.launch as L
L.MAX_THREADS = 1 << 30
from ptxmm.cli.main import main
sys.argv[0] = "ptxmm"
main()
"""
_TIMED = """import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    pp = os.pathsep.join(p for p in (sys.argv[1], os.environ.get("PYTHONPATH", "")) if p)  # keep the caller's
    os.execve(sys.argv[2], sys.argv[2:], {**os.environ, "PYTHONPATH": pp})
_, status, u = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), time.perf_counter() - t0, u.ru_maxrss, u.ru_utime + u.ru_stime)
"""


def _before_src(rev: str) -> Path:
    wt = ROOT.parent / f"scale-before-{re.sub(r'[^A-Za-z0-9_.-]', '_', rev)}"
    if not wt.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt), rev],
                       capture_output=True, text=True, check=True)
    return wt / "src"


def _scale_cell(src: Path, ptx: Path, launch: str, cond: str, timeout: float) -> dict:
    cmd = [sys.executable, "-c", _TIMED, str(src), sys.executable, "-c", _LIFTED, "check", "--json",
           "--launch", launch, "--forall", cond, "--timeout", str(timeout), "--max-memory", SCALE_MEMORY,
           str(ptx)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.rstrip()
    report, _, last = out.rpartition("\n")
    head = last.split()
    try:  # the verdict, the findings and liveness all answered, or the first that was not
        doc = json.loads(report)
        live = (doc.get("liveness") or {}).get("verdict")
        status = next((x for x in (doc.get("status"), doc.get("findings_status"))
                       if x != "ok"), "ok")
        if status == "ok" and live in ("timeout", "unknown", "memory", "interrupted"):
            status = f"liveness {live}"
    except ValueError:  # no report (a crash): the exit status says it
        status = "?"
    return {"rc": int(head[0]), "wall": float(head[1]), "rss": int(head[2]) / 1024, "cpu": float(head[3]),
            "status": status}


def _fmt_cell(c: dict) -> str:
    done = c["status"] == "ok"
    tag = "" if done else f" {c['status'] if c['status'] != '?' else 'rc' + str(c['rc'])}"
    return f"{c['cpu']:7.2f} {c['wall']:7.2f} {c['rss']:6.0f} {tag.strip()[:16]:>16s}"


def scale_table(args) -> None:
    before = _before_src(args.before)
    after = ROOT / "src"
    print(f"before: {args.before} ({before}, 32-thread limit lifted); after: this tree; each cell: CPU s, "
          f"wall s, peak RSS MiB (--timeout {args.scale_timeout:g}, --max-memory {SCALE_MEMORY})")
    head = f"{'kernel':22s} {'launch':>11s} | {'before cpu':>10s} {'wall':>7s} {'MiB':>6s} {'':16s} | " \
           f"{'after cpu':>9s} {'wall':>7s} {'MiB':>6s} {'':16s} | target"
    print(head)
    print("-" * len(head))
    for kernel, (stem, sizes, make, targets) in SCALE.items():
        if args.only and kernel not in args.only:
            continue
        ptx = KDIR / f"{stem}.ptx"
        for size in sizes:
            launch, cond = make(size)
            cells = [_scale_cell(src, ptx, launch, cond, args.scale_timeout) for src in (before, after)]
            shown = launch[launch.index("<<<"):launch.index(">>>") + 3]
            mark = ""
            if size in targets:
                a = cells[1]
                ok = a["cpu"] <= targets[size] and a["rss"] <= 2048 and a["status"] == "ok"
                mark = f"{'*' if ok else '!'} <= {targets[size]:g} s, 2 GB"
            print(f"{kernel:22s} {shown:>11s} | {_fmt_cell(cells[0])} | {_fmt_cell(cells[1])} | {mark}",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", help="kernels (file stems) to run; default: every kernel")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", default="ptx")
    ap.add_argument("--all", action="store_true", help=f"also the slow kernels ({', '.join(sorted(SLOW))})")
    ap.add_argument("--no-process", dest="process", action="store_false",
                    help="skip the whole-process measurement")
    ap.add_argument("--scale", action="store_true", help="the scale table (issue 40) instead")
    ap.add_argument("--before", default=SCALE_BEFORE, help="--scale: the base revision")
    ap.add_argument("--scale-timeout", type=float, default=60.0, help="--scale: --timeout of each check")
    ap.add_argument("--only", action="append", default=[], help="--scale: only this kernel (repeatable)")
    args = ap.parse_args()
    if args.scale:
        scale_table(args)
        return
    names = args.names or [p.stem for p in sorted(KDIR.glob("*.cu")) if args.all or p.stem not in SLOW]
    head = (f"{'kernel':32s} {'thr':>3s} {'events':>6s} {'check ms':>9s} {'heap MiB':>8s} {'proc s':>7s} "
            f"{'RSS MiB':>7s} {'.cu +ms':>7s}  findings")
    print(head)
    print("-" * len(head))
    missed = []
    for name in names:
        r = _row(name, args)
        print(_line(r), flush=True)
        missed += _missed(r)
    skipped = sorted(SLOW - set(names)) if not args.names else []
    print(f"model {args.model}, median of {args.repeat} warm runs"
          + (f"; not run (slow, --all runs them): {', '.join(skipped)}" if skipped else ""))
    print("targets: all met" if not missed else "targets missed:\n  " + "\n  ".join(missed))


if __name__ == "__main__":
    main()
