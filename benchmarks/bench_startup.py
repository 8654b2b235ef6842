"""Whole-process start-up of small ``ptxmm`` commands, this tree against a base checkout (issue 41:
"start-up stays ≤ 100 ms").

    python benchmarks/bench_startup.py [--runs 15] [--base /path/to/other/checkout] [--no-importtime]

Each case is one fresh ``python -m ptxmm ...`` process (bytecode compiled first: ``compileall``,
run with PYTHONDONTWRITEBYTECODE unset so the ``.pyc`` files are used), with PYTHONPATH set to the
tree's ``src``; the user cache (Lark runtime, parsers, models) is warmed by one untimed run. The
trees' runs are interleaved (head, base, head, base, …) so that a loaded machine slows both alike.
A case with ``-B`` runs with PYTHONDONTWRITEBYTECODE=1 (as this project's environment sets it)
and a cache directory of its tree's own: Python then writes no bytecode, of the modules ptxmm
writes to its cache either. ``python -c pass`` is the floor.
Printed per case and tree: the wall time (min and median of ``--runs``) and the process's CPU
time (user + system, min and median: less sensitive than wall time to other processes sharing
the cores). Then, per tree, a ``-X importtime`` summary of the ``.ptx`` check: the total, the
top-level packages, and the costliest modules by their own time."""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {  # name → arguments of ``python -m ptxmm`` (paths relative to the tree)
    "check .ptx litmus": ["check", "examples/mp-release-acquire.ptx"],
    "check Dat3M .litmus": ["check", "{tmp}/MP.litmus"],
    "check --json": ["check", "--json", "examples/mp-release-acquire.ptx"],
    "--help": ["--help"],
    # the same check where Python writes no bytecode (the cache's own modules included)
    "check .ptx, -B": ["check", "examples/mp-release-acquire.ptx"],
    "python -c pass": [],  # the floor: Python's own start (site included)
}
NO_BYTECODE = {"check .ptx, -B"}


def _env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree / "src")
    return env


MP_LITMUS = """PTX MP
"message passing, Dat3M's syntax"
{
x=0; y=0;
P1:r0=0; P1:r1=0;
}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x        ;
exists (P1:r0 = 1 /\\ P1:r1 = 0)
"""


def _cases(tmp: Path) -> dict[str, list[str]]:
    """The cases' arguments, the Dat3M file written to ``tmp`` (the same file for every tree)."""
    (tmp / "MP.litmus").write_text(MP_LITMUS)
    return {name: [a.format(tmp=tmp) for a in args] for name, args in CASES.items()}


def _one(py: str, tree: Path, args: list[str], no_bytecode: Path | None = None) -> tuple[float, float]:
    """(wall, cpu) seconds of one process (``python -c pass`` for no arguments); ``no_bytecode``:
    with PYTHONDONTWRITEBYTECODE=1 and that cache directory (the tree's own: another tree's
    bytecode in a shared cache would hide what this one writes or not)."""
    env = _env(tree) | ({"PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(no_bytecode)}
                        if no_bytecode else {})
    cmd = [py, "-m", "ptxmm", *args] if args else [py, "-c", "pass"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _importtime(py: str, tree: Path, args: list[str]) -> list[tuple[int, str, int, int]]:
    """(depth, module, self µs, cumulative µs) of every import of one run."""
    p = subprocess.run([py, "-X", "importtime", "-m", "ptxmm", *args], cwd=tree, env=_env(tree),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    rows = []
    for line in p.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append(((len(m.group(3)) - 1) // 2, m.group(4), int(m.group(1)), int(m.group(2))))
    return rows


def _summary(label: str, rows: list[tuple[int, str, int, int]]) -> None:
    total = sum(c for d, _n, _s, c in rows if d == 0)
    tops = sorted(((c, n) for d, n, _s, c in rows if d == 0 and c >= 1000), reverse=True)
    selfs = sorted(((s, n) for _d, n, s, _c in rows), reverse=True)[:12]
    print(f"\n-X importtime, {label}: {total / 1000:.1f} ms in {len(rows)} imports")
    print("  top level ≥ 1 ms: " + ", ".join(f"{n} {c / 1000:.1f}" for c, n in tops))
    print("  own time:         " + ", ".join(f"{n} {s / 1000:.1f}" for s, n in selfs))
    mods = {n for _d, n, _s, _c in rows}
    absent = [m for m in ("ptxmm.kernel.module", "ptxmm.device.env", "fractions", "difflib", "z3",
                          "ptxmm.explanation", "ptxmm.web", "rich") if m not in mods]
    print("  not imported:     " + ", ".join(absent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--base", type=Path, help="another checkout to compare with (e.g. a git worktree)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--no-importtime", action="store_true")
    args = ap.parse_args()
    trees = {"this": ROOT} | ({"base": args.base.resolve()} if args.base else {})
    for tree in trees.values():
        subprocess.run([args.python, "-m", "compileall", "-q", str(tree / "src")], check=True,
                       env=_env(tree), stdout=subprocess.DEVNULL)
    tmp = Path(tempfile.mkdtemp(prefix="ptxmm-bench-startup-"))
    cases = _cases(tmp)
    print(f"{args.runs} runs per case and tree, interleaved; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the start")
    print(f"{'case':22s} {'tree':5s} {'wall min':>9s} {'median':>8s} {'cpu min':>8s} {'median':>8s}  (ms)")
    for name in CASES:
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
        own = {label: tmp / f"cache-{label}" if name in NO_BYTECODE else None for label in trees}
        for label, tree in trees.items():  # warm the user cache
            _one(args.python, tree, cases[name], own[label])
        for _ in range(args.runs):
            for label, tree in trees.items():
                times[label].append(_one(args.python, tree, cases[name], own[label]))
        for label, ts in times.items():
            wall = [w * 1000 for w, _c in ts]
            cpu = [c * 1000 for _w, c in ts]
            print(f"{name:22s} {label:5s} {min(wall):9.1f} {statistics.median(wall):8.1f} "
                  f"{min(cpu):8.1f} {statistics.median(cpu):8.1f}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    if not args.no_importtime:
        for label, tree in trees.items():
            runs = [_importtime(args.python, tree, CASES["check .ptx litmus"]) for _ in range(3)]
            _summary(f"{label}, check .ptx litmus (the quickest of 3)",
                     min(runs, key=lambda rows: sum(c for d, *_r, c in rows if d == 0)))


if __name__ == "__main__":
    main()
