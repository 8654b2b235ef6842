"""Engine scale benchmark: the old engine (a git revision) against the current checkout, whole process.

    python benchmarks/bench_engine.py [--before REV] [--after-src DIR] [--repeat K] [--repeat-slow K]
                                      [--timeout S] [--only CASE[,CASE]] [--no-herd] [--list]
    python benchmarks/bench_engine.py --only 'sc-*'      # just the SC rows against herd7

Prints ONE table: case | before | after | ratio (before/after) | target. A cell of a run that
lists outcomes notes their number and the cost per outcome (the cell's time over that number).

* "before" runs ``PYTHONPATH=<worktree>/src python -m ptxmm.cli ...`` in a git worktree of REV
  (default a3d8f0f, Engine 2 before issue 23's work), created as ``<repo>/../.bench-before-<REV>``
  when missing; "after" runs the current checkout (``PYTHONPATH=<repo>/src``, or ``--after-src``).
* Children run with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` is dropped from their
  environment), as an installed ptxmm has it; the first of a case's runs may write the cache.
* Every measurement is one whole process per run, timed by wall clock; a cell is the median of K
  runs (``--repeat``, default 5, for fast cases; ``--repeat-slow``, default 1, for slow ones; a fast
  case whose first run takes over 5 s is not repeated) with the peak RSS of the child
  (``os.wait4``'s ``ru_maxrss``, the largest over the runs). Children are forked by a small
  launcher process, which times and reaps them: a child forked by the benchmark itself would
  report at least the benchmark's own RSS, which Linux carries across exec. A run past
  ``--timeout`` (default 60 s) is killed and prints ">60 s"; a run that fails prints
  "error: <first line of stderr>" (for a Python traceback, its last line, the exception).
* Rows whose metric is not the process wall time say so: "engine" is ``time_s`` of
  ``ptxmm check --json`` (parse excluded), "dat3m" the median per-test ``time_s`` of
  ``ptxmm test -j 1 --json`` over the tests that ran (the unsupported proxy tests excluded).
* When herd7 is found (PATH, else ~/.local/herd7/bin/herd7) and ``--no-herd`` is not given, SC rows
  follow: before/after run ``ptxmm check --json --model sc`` and the target column shows
  ``herd7 -model sc.cat`` on the same shape in X86 syntax (benchmarks/shapes.py), herd's number of
  states (its ``locations`` line names every register and location, so it counts what ptxmm's
  n_outcomes counts) and after/herd.

Generated litmus files go to a temporary directory. Cases (``--list``): see CASES below."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import shapes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DAT3M = ROOT.parent / "shared" / "conformance" / "dat3m"
SLOW_AFTER_S = 5.0  # a fast case whose first run takes longer is not repeated


# ---- one process ----------------------------------------------------------------------------------
@dataclass
class Run:
    wall: float
    rss_mb: float
    rc: int | None
    out: str
    err: str
    timed_out: bool = False
    data: dict = field(default_factory=dict)  # what the case's collector read from the run


# A child's ru_maxrss starts at the RSS of the process it was forked from (Linux keeps the
# high-water mark across exec), so children are forked by this small launcher rather than by the
# benchmark, whose own RSS grows as it reads results: it forks, times and reaps the command, and
# writes "<wall seconds> <maxrss KiB>".
_LAUNCH = """import os, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(f"{time.perf_counter() - t0} {ru.ru_maxrss}")
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def run_once(cmd: list[str], env: dict[str, str] | None, timeout: float, cwd: Path) -> Run:
    """One child process: wall time and peak RSS (ru_maxrss, KiB on Linux) as the launcher
    measured them, stdout/stderr via files (no pipe can fill up), killed with its process group
    after ``timeout`` seconds."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe, \
            tempfile.NamedTemporaryFile(suffix=".rusage") as fr:
        p = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCH, fr.name, *cmd], stdout=fo,
                             stderr=fe, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                             start_new_session=True)
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            p.wait()
        finally:
            timer.cancel()
        wall, rss_kb = (float(x) for x in (Path(fr.name).read_text().split() or ["nan", "nan"]))
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode(errors="replace")
        err = fe.read().decode(errors="replace")
    return Run(wall, rss_kb / 1024, p.returncode, out, err, timed_out=fired.is_set())


def first_error_line(err: str) -> str:
    lines = [ln.strip() for ln in err.strip().splitlines() if ln.strip()]
    if not lines:
        return "(no stderr)"
    line = lines[-1] if lines[0].startswith("Traceback") else lines[0]
    return line if len(line) <= 70 else line[:67] + "..."


# ---- cells -----------------------------------------------------------------------------------------
@dataclass
class Cell:
    value: float | None = None  # the row's metric, seconds
    rss_mb: float | None = None
    note: str = ""  # e.g. "256 outc"
    text: str | None = None  # overrides: ">60 s", "error: ...", "skipped"

    def render(self) -> str:
        if self.text is not None:
            return self.text
        s = fmt_s(self.value)
        if self.rss_mb is not None:
            s += f", {self.rss_mb:.0f} MB"
        if self.note:
            s += f", {self.note}"
        return s


def fmt_s(v: float | None) -> str:
    if v is None:
        return "-"
    if v < 0.01:
        return f"{v * 1000:.2f} ms"
    if v < 1:
        return f"{v * 1000:.0f} ms"
    return f"{v:.2f} s"


class Measure:
    """Runs a command K times (memoised per key, so two rows can share the runs)."""

    def __init__(self, args, tmp: Path) -> None:
        self.args = args
        self.tmp = tmp
        self.memo: dict[tuple, list[Run] | Cell] = {}

    def runs(self, key: tuple, cmd: list[str], env: dict | None, k: int,
             collect: Callable[[Run], None] | None = None, ok_rc: tuple[int, ...] = (0,)) -> list[Run] | Cell:
        if key in self.memo:
            return self.memo[key]
        print(f"  {' '.join(map(str, key))} x{k} ...", file=sys.stderr, flush=True)
        done: list[Run] = []
        res: list[Run] | Cell = done
        for i in range(k):
            r = run_once(cmd, env, self.args.timeout, self.tmp)
            if r.timed_out:
                res = Cell(text=f">{self.args.timeout:g} s")
                break
            try:
                if collect:
                    collect(r)
                elif r.rc not in ok_rc:
                    raise RuntimeError(first_error_line(r.err))
            except Exception as e:  # any failure of the run (bad JSON, exit status) is an error cell
                msg = str(e) or type(e).__name__
                if r.rc not in ok_rc and r.err.strip():
                    msg = first_error_line(r.err)
                res = Cell(text=f"error: {msg}")
                break
            done.append(r)
            if i == 0 and r.wall > SLOW_AFTER_S:
                break
        self.memo[key] = res
        return res


# ---- cases -----------------------------------------------------------------------------------------
@dataclass
class Case:
    id: str
    label: str
    target: str
    target_s: float | None
    target_mb: float | None = None
    slow: bool = False
    sc_shape: object = None  # shapes.Shape | list[Shape]: SC rows (ptxmm --model sc vs herd7)
    cell: Callable[..., Cell] | None = None  # (bench, side) -> Cell


def median(xs: list[float]) -> float:
    return statistics.median(xs)


class Bench:
    def __init__(self, args) -> None:
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="ptxmm-bench-"))
        self.m = Measure(args, self.tmp)
        self.src = {"before": before_src(args), "after": Path(args.after_src or ROOT / "src").resolve()}
        self.herd = None if args.no_herd else find_herd()

    # -- helpers --
    def write(self, name: str, text: str) -> Path:
        p = self.tmp / name
        p.write_text(text)
        return p

    def ptxmm(self, side: str, argv: list[str]) -> tuple[list[str], dict]:
        src = self.src[side]
        if isinstance(src, Cell):
            raise LookupError(src.text)
        if not (src / "ptxmm").is_dir():  # else python would fall back on an installed ptxmm
            raise LookupError(f"error: no ptxmm package under {src}")
        env = dict(os.environ, PYTHONPATH=str(src))
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as after any install
        return [sys.executable, "-m", "ptxmm.cli", *argv], env

    def k(self, case: Case) -> int:
        return self.args.repeat_slow if case.slow else self.args.repeat

    def check_runs(self, side: str, case: Case, argv: list[str], json_out: bool) -> list[Run] | Cell:
        try:
            cmd, env = self.ptxmm(side, argv)
        except LookupError as e:
            return Cell(text=str(e))

        def collect(r: Run) -> None:
            if r.rc != 0:
                raise RuntimeError(first_error_line(r.err))
            if json_out:
                js = json.loads(r.out)
                items = js if isinstance(js, list) else [js]
                # null with --observe condition (one query): the outcomes listed, the witness
                r.data["n_outcomes"] = sum(j["n_outcomes"] if j["n_outcomes"] is not None
                                           else len(j["outcomes"]) for j in items)
                r.data["time_s"] = sum(j["time_s"] for j in items)

        return self.m.runs((side, case.id.split(":")[0]), cmd, env, self.k(case), collect)

    # -- cell builders --
    def wall_cell(self, file_argv: Callable[[], list[str]], json_out: bool = True, engine: bool = False,
                  outcomes: bool = True):
        def cell(case: Case, side: str) -> Cell:
            argv = file_argv()
            runs = self.check_runs(side, case, (["check", "--json"] if json_out else ["check"]) + argv,
                                   json_out)
            if isinstance(runs, Cell):
                return runs
            n = runs[0].data["n_outcomes"] if json_out and outcomes else 0
            value = median([r.data["time_s"] for r in runs]) if engine else median([r.wall for r in runs])
            # an enumeration's cost per outcome (its whole time over the outcomes it listed)
            note = f"{n} outc" + (f", {value / n * 1000:.3f} ms/outc" if n > 1 else "") if n else ""
            if engine:
                return Cell(value, note=note)
            return Cell(value, max(r.rss_mb for r in runs), note)
        return cell

    def dat3m_cell(self, case: Case, side: str) -> Cell:
        if not DAT3M.is_dir():
            return Cell(text=f"skipped ({DAT3M} absent)")
        out = self.tmp / f"dat3m-{side}.json"
        dirs = [str(DAT3M / "PTX" / d) for d in ("Manual", "Barrier", "Nvidia")]
        try:
            cmd, env = self.ptxmm(side, ["test", *dirs, "-j", "1", "--expected", str(DAT3M / "expected.csv"),
                                         "--model", "ptx-v7.5", "--json", str(out)])
        except LookupError as e:
            return Cell(text=str(e))

        def collect(r: Run) -> None:  # exit 1 = some disagreement: still a measurement
            if r.rc not in (0, 1) or not out.exists():
                raise RuntimeError(first_error_line(r.err))
            res = json.loads(out.read_text())
            out.unlink()
            ran = [t for t in res if not t.get("error")]  # not the unsupported (proxy) ones
            if not ran:
                raise RuntimeError(f"none of {len(res)} tests ran")
            r.data["per_test"] = median([t["time_s"] for t in ran])
            r.data["n"], r.data["ran"] = len(res), len(ran)
            r.data["agree"] = sum(t.get("status") == "agree" for t in ran)

        runs = self.m.runs((side, "dat3m"), cmd, env, self.k(case), collect)
        if isinstance(runs, Cell):
            return runs
        d = runs[0].data
        return Cell(median([r.data["per_test"] for r in runs]),
                    note=f"{d['ran']}/{d['n']} ran, {d['agree']} agree, "
                    f"wall {fmt_s(median([r.wall for r in runs]))}")

    def herd_cell(self, case: Case) -> tuple[Cell, int | None]:
        shs = case.sc_shape if isinstance(case.sc_shape, list) else [case.sc_shape]
        files = [str(self.write(f"{case.id}-{i}.litmus", s.x86())) for i, s in enumerate(shs)]
        runs = self.m.runs(("herd7", case.id), [self.herd, "-model", "sc.cat", *files], None, self.k(case))
        if isinstance(runs, Cell):
            return runs, None
        states = sum(int(x) for x in re.findall(r"^States (\d+)", runs[0].out, re.M))
        return Cell(median([r.wall for r in runs]), max(r.rss_mb for r in runs), f"{states} st"), states

    # -- the table --
    def rows(self, cases: list[Case]) -> list[list[str]]:
        rows = []
        for case in cases:
            print(f"{case.id}", file=sys.stderr, flush=True)
            b = case.cell(case, "before")
            a = case.cell(case, "after")
            ratio = f"{b.value / a.value:.2f}x" if b.value and a.value else "-"
            target = case.target
            if case.sc_shape is not None:
                if self.herd:
                    h, _ = self.herd_cell(case)
                    rel = f"; after/herd {a.value / h.value:.1f}x" if a.value and h.value else ""
                    target = f"herd7 {h.render()}{rel}"
                else:
                    target = "(herd7 not found)"
            elif case.target_s is not None and a.value is not None:
                ok = a.value <= case.target_s and (
                    case.target_mb is None or (a.rss_mb or 0) <= case.target_mb)
                target += "  ok" if ok else "  MISS"
            rows.append([case.label, b.render(), a.render(), ratio, target])
        return rows


def before_src(args) -> Path | Cell:
    rev = args.before
    wt = ROOT.parent / f".bench-before-{re.sub(r'[^A-Za-z0-9_.-]', '_', rev)}"
    if not wt.exists():
        r = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt), rev],
                           capture_output=True, text=True)
        if r.returncode:
            return Cell(text=f"error: git worktree {rev}: {first_error_line(r.stderr)}")
    else:
        heads = [subprocess.run(["git", "-C", str(d), "rev-parse", h], capture_output=True, text=True).stdout
                 for d, h in ((wt, "HEAD"), (ROOT, f"{rev}^{{commit}}"))]
        if heads[0] != heads[1]:
            print(f"warning: {wt} is at {heads[0].strip()[:12]}, not {rev}", file=sys.stderr)
    return wt / "src"


def find_herd() -> str | None:
    h = shutil.which("herd7")
    if h:
        return h
    p = Path.home() / ".local" / "herd7" / "bin" / "herd7"
    return str(p) if p.exists() else None


def make_cases(b: Bench) -> list[Case]:
    ex = ROOT / "examples"
    sb33 = shapes.sb(3, 3, 3)
    sb8 = shapes.sb(8, 1, 1)
    w100, w1000 = shapes.stores(100), shapes.stores(1000)
    iriw7 = shapes.iriw(7)

    def gen(name: str, sh, model: list[str] | None = None, observe: bool = False):
        def argv() -> list[str]:
            shs = sh if isinstance(sh, list) else [sh]
            files = [str(b.write(f"{name}-{i}.ptx", s.ptx())) for i, s in enumerate(shs)]
            return [*(model or []), *(["--observe", "condition"] if observe else []), *files]
        return argv

    spin = lambda: [str(ex / "spinlock-cas.ptx")]  # noqa: E731
    all_outcomes = ["--max-outcomes", "1000000"]
    cases = [
        Case("mp", "check mp-relaxed-acquire.ptx (process)", "<= 100 ms", 0.100,
             cell=b.wall_cell(lambda: [str(ex / "mp-relaxed-acquire.ptx")], json_out=False)),
        # the same check with the solver forced: what the default's enumeration of tiny spaces saves
        Case("mp-z3", "check --engine z3 mp-relaxed-acquire.ptx (process)", "-", None,
             cell=b.wall_cell(lambda: ["--engine", "z3", str(ex / "mp-relaxed-acquire.ptx")],
                              json_out=False)),
        Case("dat3m", "test Dat3M -j1 ptx-v7.5 (median/test)", "<= 3 ms/test", 0.003, slow=True,
             cell=b.dat3m_cell),
        Case("sb3x3-cond", "SB 3x(3st+3ld) --observe condition", "<= 1 s", 1.0,
             cell=b.wall_cell(gen("sb3x3", sb33, observe=True))),
        Case("sb3x3-all", "SB 3x(3st+3ld) all outcomes", "<= 5 s", 5.0, slow=True,
             cell=b.wall_cell(gen("sb3x3", sb33))),
        # the same runs' engine time_s: the enumeration without start-up, race report and JSON
        Case("sb3x3-all:engine", "SB 3x(3st+3ld) all outcomes (engine time_s)", "-", None, slow=True,
             cell=b.wall_cell(gen("sb3x3", sb33), engine=True)),
        # the "SB with 3 threads x 6 accesses (17,496 outcomes)": shapes.sb_shared(3) has
        # exactly that many (its program is not in the issue; this one matches its description)
        Case("sb17k-all", "SB 3x(3st+3ld) over a shared x, 17,496 outcomes", "<= 5 s", 5.0, slow=True,
             cell=b.wall_cell(gen("sb17k", shapes.sb_shared(3)))),
        Case("sb17k-all:engine", "SB 17,496 outcomes (engine time_s)", "-", None, slow=True,
             cell=b.wall_cell(gen("sb17k", shapes.sb_shared(3)), engine=True)),
        Case("iriw7-ptx", "IRIW 7 readers, ptx, all outcomes", "<= 6 s", 6.0, slow=True,
             cell=b.wall_cell(gen("iriw7", iriw7))),
        Case("iriw7-ptx:engine", "IRIW 7 readers, ptx (engine time_s)", "-", None, slow=True,
             cell=b.wall_cell(gen("iriw7", iriw7), engine=True)),
        # weak accesses race: Engine 2 re-evaluated the model per outcome for the racing pairs (3.3 s
        # of race reports against 2.9 s of enumeration); Engine 3 asks the solver (findings)
        Case("iriw6-races", "IRIW 6 readers, ptx, all outcomes and racing pairs", "-", None, slow=True,
             cell=b.wall_cell(gen("iriw6r", shapes.iriw(6)))),
        Case("sb8-all", "SB 8x(1st+1ld) all outcomes", "<= 1 s", 1.0, cell=b.wall_cell(gen("sb8", sb8))),
        # issue 41's shapes where the formula does not split: one location, many outcomes (past
        # the 20,000 an enumeration lists by default: every one is listed, as the issue counted them)
        Case("x1l3-ptx", "3 threads x (2st+2ld) to one x, ptx, all outcomes", "<= 12 s", 12.0, slow=True,
             cell=b.wall_cell(gen("x1l3", shapes.one_location(3), all_outcomes))),
        Case("x1l4-sc", "4 threads x (2st+2ld) to one x, --model sc, all outcomes", "<= 12 s", 12.0,
             slow=True,
             cell=b.wall_cell(gen("x1l4", shapes.one_location(4), ["--model", "sc", *all_outcomes]))),
        Case("stores100", "1 thread x 100 stores to x", "<= 1 s, <= 300 MB", 1.0, 300,
             cell=b.wall_cell(gen("w100", w100))),
        Case("stores1000", "1 thread x 1000 stores to x", "<= 10 s", 10.0, slow=True,
             cell=b.wall_cell(gen("w1000", w1000))),
        Case("stores100-sc", "1 thread x 100 stores to x, --model sc", "<= 1 s", 1.0,
             cell=b.wall_cell(gen("w100", w100, ["--model", "sc"]))),
        Case("stores1000-sc", "1 thread x 1000 stores to x, --model sc", "<= 10 s", 10.0, slow=True,
             cell=b.wall_cell(gen("w1000", w1000, ["--model", "sc"]))),
        # --json of 4,096 outcomes (23 MB of JSON before it was streamed): the peak RSS is the metric
        Case("json-iriw6", "check --json IRIW, 6 readers (peak RSS)", "<= 100 MB", None, 100, slow=True,
             cell=b.wall_cell(gen("iriw6", shapes.Shape(
                 "IRIW6", [[shapes.St("x", 1)], [shapes.St("y", 1)]]
                 + [[shapes.Ld(0, a), shapes.Ld(1, b)] for a, b in [("x", "y"), ("y", "x")] * 3],
                 [(2, 0, 1), (2, 1, 0), (3, 0, 1), (3, 1, 0)])))),
        Case("spinlock:engine", "spinlock-cas.ptx (engine time_s)", "<= 50 ms", 0.050,
             cell=b.wall_cell(spin, engine=True)),
        Case("spinlock:process", "spinlock-cas.ptx (process)", "-", None, cell=b.wall_cell(spin)),
    ]
    if b.herd:
        sc = ["--model", "sc"]
        for cid, label, sh, slow in (
                ("sc-sb", "SC: SB", shapes.sb(), False),
                ("sc-mp", "SC: MP", shapes.mp(), False),
                ("sc-iriw", "SC: IRIW", shapes.iriw(), False),
                ("sc-iriw7", "SC: IRIW 7 readers", iriw7, True),
                ("sc-sb8", "SC: SB 8x(1st+1ld)", sb8, False),
                ("sc-sb3x3", "SC: SB 3x(3st+3ld)", sb33, True),
                ("sc-stores8", "SC: 1 thread x 8 stores", shapes.stores(8), False),
                ("sc-stores100", "SC: 1 thread x 100 stores", w100, False),
                ("sc-classic9", "SC: 9 classic shapes, one process", shapes.classic(), False)):
            cases.append(Case(cid, label, "", None, slow=slow, sc_shape=sh,
                              cell=b.wall_cell(gen(cid, sh, sc))))
    return cases


def print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: " | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    print(line(header))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="a3d8f0f", help="git revision of the old engine (default a3d8f0f)")
    ap.add_argument("--after-src", default=None,
                    help="src/ dir of the 'after' engine (default: this checkout)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per fast case (median; default 5)")
    ap.add_argument("--repeat-slow", type=int, default=1, help="runs per slow case (default 1)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--only", action="append", default=[],
                    help="case ids or globs ('sc-*'), comma-separated, repeatable; 'spinlock' is both "
                    "spinlock rows (see --list)")
    ap.add_argument("--no-herd", action="store_true", help="skip the herd7 SC rows")
    ap.add_argument("--list", action="store_true", help="list the case ids and exit")
    args = ap.parse_args()
    b = Bench(args)
    try:
        cases = make_cases(b)
        if args.list:
            for c in cases:
                print(f"{c.id:18s} {c.label}")
            return
        only = [o for arg in args.only for o in arg.split(",") if o]
        if only:
            cases = [c for c in cases
                     if any(fnmatch.fnmatchcase(c.id, o) or c.id.startswith(o + ":") for o in only)]
            if not cases:
                sys.exit(f"no case matches {only} (see --list)")
        rows = b.rows(cases)
        print(f"before: {args.before} ({b.src['before'] if isinstance(b.src['before'], Path) else '?'})"
              f"   after: {b.src['after']}   herd7: {b.herd or 'not found'}")
        print(f"whole-process wall time, median of {args.repeat} runs ({args.repeat_slow} for slow cases),"
              f" peak RSS; timeout {args.timeout:g} s; {os.cpu_count()} cores")
        print_table(rows, ["case", "before", "after", "ratio", "target"])
    finally:
        shutil.rmtree(b.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
