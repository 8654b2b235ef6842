"""Timings of `explain` and `explain --fix` on every bundled test (issue 12: explain <= 1 s and
--fix <= 10 s on 2-4-thread tests). Prints a table; not a unit test.

    python benchmarks/bench_explain.py [--model ptx] [--no-fix]

With ``--compare`` (issue 41: `explain` and `graph` of every bundled example <= 10 s): one row
per .ptx, .litmus and .cu under examples/ (``--match TEXT``: those whose path holds TEXT; repeat
it for several; ``--exclude TEXT``: not those whose path holds TEXT), timing the commands as a
user runs them (`ptxmm explain --fix FILE`,
`ptxmm explain FILE`, `ptxmm graph FILE -o x.svg`, in-process, the process start left out) in
this tree and, with ``--base DIR`` (a checkout of the base commit: ``git worktree add --detach
DIR <commit>``), in that one, file by file in the same minute (two worker processes, one per
tree, taking turns); the proposed fixes are compared where neither run stopped at the time budget.
The explain column times `ptxmm explain --json FILE`, and its JSON (timings left out) is compared
before/after too, as is the drawing (`graph`'s SVG): "same" when all agree; "same*" when they agree
but for the candidates of a forbidden outcome whose enumeration stopped at its time budget in
either run (how many it saw, and whether it stopped, depend on the machine's load). A .cu
file is compiled (nvcc, cached) before it is timed: the compile column is that first,
uncached-or-not load, apart from the commands. Each
command's wall-clock and CPU seconds (the process's, Z3's threads included) are printed: on a
machine others share, the CPU seconds are what compares.

    python benchmarks/bench_explain.py --compare --base /tmp/base [--match mbarrier] [--no-fix]
    python benchmarks/bench_explain.py --compare --no-fix --shard 0/8   # the 1st of 8 parts (one a core)
    python benchmarks/bench_explain.py --compare --no-fix --no-graph ...  # explain only"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
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


# ----- --compare: the commands as a user runs them, before and after -------------------------------

COMMANDS = (("fix", ["explain", "--fix"]), ("explain", ["explain", "--json"]), ("graph", ["graph"]))


def worker() -> int:
    """Reads file paths (one a line) and answers each with a JSON line: each command's time,
    exit code and the lines of its fix report."""
    from click.testing import CliRunner

    from ptxmm.cli.main import main as cli

    runner = CliRunner()
    out_svg = os.path.join(tempfile.mkdtemp(), "x.svg")
    skip = set(sys.argv[sys.argv.index("--skip") + 1].split(",")) if "--skip" in sys.argv else set()
    for line in sys.stdin:
        f = line.strip()
        row: dict = {"file": f}
        if f.endswith(".cu"):  # nvcc (cached by source): not part of the commands' times
            t0 = time.perf_counter()
            _load_quietly(f)
            row["compile"] = round(time.perf_counter() - t0, 3)
        for name, args in COMMANDS:
            if name in skip:
                continue
            extra = ["-o", out_svg] if name == "graph" else []
            t0, c0 = time.perf_counter(), time.process_time()
            r = runner.invoke(cli, [*args, f, *extra])
            row[name] = round(time.perf_counter() - t0, 3)
            row[name + "_cpu"] = round(time.process_time() - c0, 3)
            row[name + "_rc"] = r.exit_code
            if name == "fix":
                text = r.output
                row["fixes"] = text[text.find("\nfix:"):].strip().splitlines() if "\nfix:" in text else []
            elif name == "explain":
                row["json"] = _untimed(r.output)
            elif name == "graph":
                svg = Path(out_svg)
                row["svg"] = hashlib.sha256(svg.read_bytes()).hexdigest()[:16] if r.exit_code == 0 \
                    and svg.exists() else r.output.strip()[-200:]
                svg.unlink(missing_ok=True)
        print(json.dumps(row), flush=True)
    return 0


def _load_quietly(f: str) -> None:
    try:
        ptxmm.load(f)
    except ptxmm.PtxmmError:  # the commands report it
        pass


def _untimed(text: str):
    """explain --json's answer without its timings (they differ from run to run)."""
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[-300:]

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "time_s"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(data)


def _files() -> list[Path]:
    ex = ROOT / "examples"
    files = sorted(p for ext in ("ptx", "litmus", "cu") for p in ex.rglob(f"*.{ext}"))
    if "--shard" in sys.argv:  # --shard K/N: every N-th file from the K-th (runs side by side on N cores)
        k, n = map(int, sys.argv[sys.argv.index("--shard") + 1].split("/"))
        files = files[k::n]
    excluded = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--exclude"]
    files = [f for f in files if not any(x in str(f.relative_to(ex)) for x in excluded)]
    matches = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--match"]
    if not matches:
        return files
    out = []
    for f in files:
        text = f.read_text(errors="replace")
        if any(m in str(f.relative_to(ex)) or m in text for m in matches):
            out.append(f)
    return out


def _start(tree: Path, skip: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(tree / "src"),
                                                                   os.environ.get("PYTHONPATH")) if p))
    return subprocess.Popen([sys.executable, __file__, "--worker", "--skip", skip], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _ask(w: subprocess.Popen, f: Path) -> dict:
    assert w.stdin is not None and w.stdout is not None
    w.stdin.write(str(f.relative_to(ROOT)) + "\n")
    w.stdin.flush()
    return json.loads(w.stdout.readline())


def _same(a: dict, b: dict) -> str:
    """The fix lists, explain's JSON and the drawing of two runs compared (see the docstring)."""
    if not a or not b:
        return ""
    words = []
    if "fixes" in a and "fixes" in b:
        if any("budget hit" in x for x in a["fixes"] + b["fixes"]):
            words.append("fix budget")
        else:
            norm = [[x for x in r["fixes"] if "engine checks" not in x and "checks)" not in x]
                    for r in (a, b)]
            words.append("fix same" if norm[0] == norm[1] else "fix DIFFER")
    if "json" in a and "json" in b:
        words.append(_same_json(a["json"], b["json"]))
    if "svg" in a and "svg" in b:
        words.append("svg same" if a["svg"] == b["svg"] else "svg DIFFER")
    return "; ".join(words)


def _same_json(a, b) -> str:
    if a == b:
        return "json same"
    la, lb = (x if isinstance(x, list) else [x] for x in (a, b))
    if len(la) == len(lb) and all(_time_cut(x, y) == _time_cut(y, x) for x, y in zip(la, lb)):
        return "json same*"
    return "json DIFFER"


def _time_cut(x, other):
    """A forbidden outcome's explanation whose enumeration stopped at its time budget in either
    run (explain.TIME_BUDGET_S, wall-clock: a loaded machine stops sooner), without what depends
    on where it stopped: the count, the groups (the axioms failed by the candidates seen) and
    whether it stopped."""
    cut = ("candidates", "groups", "bound_hit")
    if isinstance(x, dict) and isinstance(other, dict) and x.get("verdict") == "forbidden" and \
            (x.get("bound_hit") or other.get("bound_hit")):
        return {k: v for k, v in x.items() if k not in cut}
    return x


def compare() -> int:
    base = Path(sys.argv[sys.argv.index("--base") + 1]).resolve() if "--base" in sys.argv else None
    skip = ",".join(n for n, flag in (("fix", "--no-fix"), ("graph", "--no-graph")) if flag in sys.argv)
    files = _files()
    now = _start(ROOT, skip)
    before = _start(base, skip) if base is not None else None
    names = [n for n, _ in COMMANDS if n not in skip.split(",")]
    print(f"{len(files)} files; seconds per command, in-process (start-up excluded); "
          f"before = {base or '(no --base)'}")
    head = "".join(f" {n[:7] + ' b':>9s} {n[:7] + ' a':>9s} {'cpu b':>6s} {'cpu a':>6s}" for n in names)
    print(f"{'file':60s} {'compile':>7s}{head}  before/after")
    rows = []
    for f in files:
        a = _ask(now, f)
        b = _ask(before, f) if before is not None else {}
        rows.append((f, b, a))
        cells = "".join(f" {b.get(n, float('nan')):9.2f} {a[n]:9.2f} {b.get(n + '_cpu', float('nan')):6.2f} "
                        f"{a[n + '_cpu']:6.2f}" for n in names)
        comp = max(a.get("compile", 0.0), b.get("compile", 0.0))
        print(f"{str(f.relative_to(ROOT / 'examples')):60s} {comp:7.2f}{cells}  {_same(b, a)}", flush=True)
    for w in (now, before):
        if w is not None:
            w.stdin.close()  # type: ignore[union-attr]
            w.wait()
    for n in names:
        for label, k in (("before", 1), ("after", 2)):
            got = [(r[k][n], r[0]) for r in rows if n in r[k]]
            if not got:
                continue
            worst = sorted(got, reverse=True)[:5]
            over = sum(1 for t, _ in got if t > 10.0)
            cpu = sorted(((r[k][n + "_cpu"], r[0]) for r in rows if n + "_cpu" in r[k]), reverse=True)
            cpu_over = sum(1 for t, _ in cpu if t > 10.0)
            print(f"{n} {label}: worst " + ", ".join(f"{f.name} {t:.1f} s" for t, f in worst)
                  + f"; {over} over 10 s; CPU worst " + ", ".join(f"{f.name} {t:.1f} s" for t, f in cpu[:3])
                  + f"; {cpu_over} over 10 s CPU")
    for what in ("fix", "json", "svg"):
        differ = [r[0].name for r in rows if f"{what} DIFFER" in _same(r[1], r[2])]
        print(f"{what}: {len(differ)} differ" + (f" ({', '.join(differ)})" if differ else ""))
    return 0


if __name__ == "__main__":
    if "--worker" in sys.argv:
        sys.exit(worker())
    sys.exit(compare() if "--compare" in sys.argv else main())
