"""Campaign throughput: tests per second per core for ``ptxmm test`` on generated tests (one process, in-
process, as a worker runs them), beside herd7 on the same tests under SC in one process.

    python benchmarks/bench_campaigns.py [--size 4] [--repeat 3] [--no-herd] [--quick]
                                          [--models sc,ptx] [--jobs 1,2] [--before REV|DIR]
                                          [--cli-only]

The tests are ``ptxmm gen --size N`` (the PTX relaxation set). herd7 reads them in LISA (``gen --format
herd``: accesses only — fences and dependencies are program order, which SC already keeps) and runs
``herd7 -model sc.cat`` on all of them in one process; ptxmm's SC verdicts must equal herd7's (checked,
row by row), and the shape memo's (ptxmm.queries.memo) the verdicts of every test checked on its own
(checked, unless ``--quick``). The herd7 row is skipped, visibly, when herd7 is absent (PATH, else
~/.local/herd7/bin/herd7). Timings are medians of ``--repeat`` runs; on a loaded machine compare rows of
one run only, and read the CPU-time column (the process's own CPU seconds: the per-core rate, which other
load on the machine disturbs far less than the wall clock; the CLI rows' wall rate against herd7's is the
-j2 figure). ``--before`` runs the CLI rows also with an earlier ptxmm (a git revision of this
repository, or a folder holding its ``src``, ``models`` and ``grammar``), before and after side by
side in the same minute, and fails when a test's status or verdict differs between any two CLI runs
(``ptxmm test --json``); ``--cli-only`` leaves out the in-process rows. The "Lark only" rows are
the rate before the ``.ptx`` front end's fast path (ptxmm.syntax.ptx_fast): every test parsed by Lark,
in the same run."""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ptxmm.campaigns.gen import GenOptions, generate
from ptxmm.campaigns.stream import Item
from ptxmm.campaigns.work import test_rows


def find_herd() -> str | None:
    h = shutil.which("herd7")
    p = Path.home() / ".local" / "herd7" / "bin" / "herd7"
    return h or (str(p) if p.exists() else None)


def ptxmm_rate(items: list[Item], model: str, repeat: int, memo: bool = True,
               fast_parse: bool = True) -> tuple[float, float, dict]:
    """(tests per wall second, tests per CPU second, verdicts by name) of ``test_rows`` in this
    process; each run starts with an empty shape memo (``memo=False``: none, every test checked;
    ``fast_parse=False``: every test parsed by Lark)."""
    from ptxmm.queries import memo as shapes_memo
    from ptxmm.syntax import ptx, ptx_fast

    ptx.parse_fast = ptx_fast.parse_fast if fast_parse else (lambda _text: None)
    try:
        return _rate(items, model, repeat, memo, shapes_memo)
    finally:
        ptx.parse_fast = ptx_fast.parse_fast


def _rate(items: list[Item], model: str, repeat: int, memo: bool, shapes_memo) -> tuple[float, float, dict]:
    fresh = shapes_memo.VerdictMemo if memo else _NoMemo
    shapes_memo.MEMO = fresh()
    test_rows(items[:2], model)  # imports, the model parsed once: a worker's steady state
    times, cpu, verdicts = [], [], {}
    for _ in range(repeat):
        shapes_memo.MEMO = fresh()
        t0, c0 = time.perf_counter(), time.process_time()
        rows = test_rows(items, model)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        verdicts = {r["name"]: r["holds"] for r in rows}
    shapes_memo.MEMO = shapes_memo.VerdictMemo()
    return len(items) / statistics.median(times), len(items) / statistics.median(cpu), verdicts


class _NoMemo:
    """A memo that remembers nothing: every test is checked (the rate before the memo)."""

    def verdict(self, prog, model, unroll=2, timeout=None):
        from ptxmm.cat.parser import load_model
        from ptxmm.queries.memo import VerdictMemo

        return VerdictMemo._check(prog, load_model(model), unroll, timeout, None)


def cli_rate(files: list[Path], model: str, jobs: int, src: Path | None = None,
             out: Path | None = None) -> tuple[float, float, dict]:
    """(tests per wall second, tests per CPU second of all its processes, (status, verdict) by path)
    of ``ptxmm test -j JOBS --json`` over the files, one run of the whole command (start-up and
    workers included); ``src``: another ptxmm's source folder (--before), else this tree's."""
    import json
    import os
    import sys

    src = src or Path(__file__).resolve().parents[1] / "src"  # this tree first; the rest kept (installs)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in (src, os.environ.get("PYTHONPATH"))
                                                      if p))
    out = out or Path(tempfile.mkdtemp()) / "test.json"
    t0, c0 = time.perf_counter(), _children_cpu()
    r = subprocess.run([sys.executable, "-m", "ptxmm", "test", "--model", model, "-j", str(jobs),
                        "--json", str(out), *map(str, files)], capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if r.returncode not in (0, 1) or "agree" not in r.stdout + r.stderr:  # a failed run is no rate
        raise SystemExit(f"ptxmm test -j {jobs} failed ({r.returncode}): {(r.stderr or r.stdout)[-300:]}")
    got = {x["path"]: (x["status"], x["holds"]) for x in json.loads(out.read_text())}
    return len(files) / wall, len(files) / cpu, got


def before_tree(rev: str, into: Path) -> Path:
    """The ``src`` folder of an earlier ptxmm: ``rev`` a folder holding src/, models/, grammar/, or
    a git revision of this repository (its src/, models/, grammar/ written under ``into``)."""
    d = Path(rev)
    if d.is_dir():
        return (d / "src").resolve()
    root = Path(__file__).resolve().parents[1]
    tar = subprocess.run(["git", "-C", str(root), "archive", rev, "src", "models", "grammar"],
                         capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    return into / "src"


def herd_rate(herd: str, files: list[Path], repeat: int) -> tuple[float, float, dict[str, bool]]:
    """(tests per wall second, tests per CPU second of the herd7 process, verdicts by name)."""
    times, cpu, out = [], [], ""
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), _children_cpu()
        out = subprocess.run([herd, "-model", "sc.cat", *map(str, files)], capture_output=True,
                             text=True, check=True).stdout
        times.append(time.perf_counter() - t0)
        cpu.append(_children_cpu() - c0)
    seen = {m.group(1): m.group(2) != "Never" for m in re.finditer(r"^Observation (\S+) (\w+)", out, re.M)}
    return len(files) / statistics.median(times), len(files) / statistics.median(cpu), seen


CLI_SEEN: dict = {}  # the CLI runs' (status, verdict) by path, one for all of them


def cli_rows(a, files: list[Path], d: Path, rows: list) -> None:
    """The CLI rows, -j by -j: with --before, the earlier ptxmm's run just before this tree's."""
    trees = [(None, "")]
    if a.before:
        (d / "before").mkdir()
        trees = [(before_tree(a.before, d / "before"), f" — before ({a.before})"), (None, " — after")]
    for jobs in a.jobs:
        for src, label in trees:
            wall, cpu, got = cli_rate(files, "sc", jobs, src, d / "test.json")
            if CLI_SEEN and got != CLI_SEEN:
                diff = sorted(p for p in got.keys() | CLI_SEEN.keys() if got.get(p) != CLI_SEEN.get(p))
                raise SystemExit(f"ptxmm test -j {jobs}{label}: {len(diff)} tests differ from the first "
                                 f"CLI run, e.g. {diff[:3]}")
            CLI_SEEN.update(got)
            rows.append((f"ptxmm test -j {jobs} --model sc (CLI, one run: start-up included){label}",
                         wall, cpu))


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-herd", action="store_true")
    ap.add_argument("--quick", action="store_true", help="skip the no-memo rows")
    ap.add_argument("--models", default="sc,ptx", help="the models of the ptxmm rows (sc first: herd7's)")
    ap.add_argument("--jobs", type=lambda v: [int(j) for j in v.split(",") if j], default=[1, 2],
                    help="the CLI rows' -j values (default 1,2; empty: none): issue 41 asks -j2 >= 2x "
                         "herd7's -j1 rate, a wall-clock figure that needs two idle cores")
    ap.add_argument("--before", default=None, metavar="REV|DIR",
                    help="also run the CLI rows with this earlier ptxmm (a git revision, or a folder "
                         "with its src/, models/, grammar/), side by side; verdicts must not differ")
    ap.add_argument("--cli-only", action="store_true", help="leave out the in-process rows")
    a = ap.parse_args()
    gens = list(generate(GenOptions(size=a.size)))
    items = [Item("gen:" + g.name, text=g.text()) for g in gens]
    rows = []
    seen: dict[tuple[str, bool], dict] = {}
    for model in ([] if a.cli_only else a.models.split(",")):
        wall, cpu, before = ptxmm_rate(items, model, a.repeat, True, fast_parse=False)
        rows.append((f"ptxmm test --model {model}, shape memo, Lark only (before)", wall, cpu))
        for memo in ((True,) if a.quick else (False, True)):
            wall, cpu, seen[model, memo] = ptxmm_rate(items, model, a.repeat, memo)
            what = "shape memo" if memo else "no memo (every test checked)"
            rows.append((f"ptxmm test --model {model}, {what}", wall, cpu))
        if before != seen[model, True]:
            raise SystemExit(f"the fast parse path changed a verdict under {model}")
        if not a.quick and seen[model, True] != seen[model, False]:
            raise SystemExit(f"the shape memo changed a verdict under {model}")
    sc = seen.get(("sc", True), {})  # herd7's verdicts are compared with the in-process rows
    herd = None if a.no_herd else find_herd()
    h_cpu = h_wall = None
    with tempfile.TemporaryDirectory() as d:
        ptx_files = []
        for g in gens:
            f = Path(d) / f"{g.name}.ptx"
            f.write_text(g.text())
            ptx_files.append(f)
        cli_rows(a, ptx_files, Path(d), rows)
        if herd:
            files = []
            for g in gens:
                f = Path(d) / f"{g.name}.litmus"
                f.write_text(g.text("herd"))
                files.append(f)
            h_wall, h_cpu, hv = herd_rate(herd, files, a.repeat)
            sc = sc or {Path(p).stem: v[1] for p, v in CLI_SEEN.items()}
            bad = [n for n in sc if hv.get(n) != sc[n]]
            rows.append((f"herd7 -model sc.cat (one process; {len(bad)} verdicts differ from ptxmm's)",
                         h_wall, h_cpu))
        else:
            rows.append(("herd7 -model sc.cat: skipped (herd7 not found" +
                         (", --no-herd" if a.no_herd else "") + ")", None, None))
    print(f"{len(items)} tests of ptxmm gen --size {a.size}, median of {a.repeat} runs, one process each; "
          "tests/s of CPU time is the per-core rate on a shared machine\n")
    print("| runner | tests/s (wall) | tests/s (CPU) | CPU rate / herd7's | wall rate / herd7's |\n"
          "|---|---|---|---|---|")
    for name, wall, cpu in rows:
        ratio = f"{cpu / h_cpu:.2f}" if cpu and h_cpu else "—"
        wratio = f"{wall / h_wall:.2f}" if wall and h_wall else "—"
        print(f"| {name} | {'—' if wall is None else f'{wall:.0f}'} | {'—' if cpu is None else f'{cpu:.0f}'} "
              f"| {ratio} | {wratio} |")


if __name__ == "__main__":
    main()
