"""Cost of checking each kernel of the real-library corpus (examples/kernels/real/) under both models.

    python benchmarks/bench_real.py [--before REV] [--model M ...] [--repeat N] [--limit S] [NAME ...]

Per kernel and model: the seconds of one in-process ``ptxmm.check`` of its committed PTX, asked as
tests/kernel/test_real_corpus.py asks it (``observe="condition"``: the condition with one query,
every finding looked for), and the verdict: ``agrees`` when the findings and the condition are the
kernel's argued ones (its ``// ptxmm: expect`` line, tests/support/kernel_corpus.py's DEPARTURES),
else what it found. Each check runs in a fresh process (``--worker``), so no cache of one kernel's
check serves the next. A cell is the process's CPU seconds for the check (user + system: on a shared
machine the wall time measures the neighbours), its wall seconds beside it; with ``--repeat N`` the
median of N.

``--before REV``: the same table for the tree at git revision REV (its src/, models/ and grammar/,
extracted with ``git archive`` into a temporary directory; the committed PTX of THIS tree is
checked by both), each kernel's before and after checks run back to back so that both see the
same load, and a column comparing the ``to_json()`` of the two results (less the timing fields):
``same``; ``same findings, other witnesses`` (every finding says the same — kind, detail, location,
event-pair count, its operations by line and instruction, a race's by thread too — and the
outcomes and verdicts are the same, but an execution the solver picked as a witness differs, and
with it the thread an assertion failure names, the dynamic instance a hang names: :func:`_findings`);
or ``FINDINGS DIFFER``.

Issue 39's target: no kernel of the corpus over 10 s (``--limit``), judged on the CPU seconds; rows
over it are marked ``!``, and the exit status is 1 when some row of this tree is over it or does not
agree."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KDIR = ROOT / "examples" / "kernels" / "real"
MODELS = ("ptx", "ptx-v7.5")
LIMIT_S = 10.0

# one check in this process: its CPU and wall seconds, and what it found (printed as JSON)
_WORKER = """import json, sys, time
sys.path.insert(0, sys.argv[1] + "/tests")
import ptxmm
from ptxmm import FindingKind
from support.kernel_corpus import DEPARTURES, expected
ptx, model = sys.argv[2], sys.argv[3]
prog = ptxmm.load(ptx)
t0, w0 = time.process_time(), time.perf_counter()
res = ptxmm.check(prog, model=model, observe="condition")
cpu, wall = time.process_time() - t0, time.perf_counter() - w0
name = ptx.rsplit("/", 1)[-1][:-4]
found = sorted({str(f.kind) for f in res.findings if f.kind != FindingKind.FLAG})
want = DEPARTURES.get((name, model), expected(__import__("pathlib").Path(ptx[:-4] + ".cu")))
agrees = set(found) == set(want) and res.holds is ((name, model) not in DEPARTURES)
doc = res.to_json()
for k in [k for k in doc if "elapsed" in k or "time" in k or k in ("seconds", "model_path")]:
    doc.pop(k)
print(json.dumps({"cpu": cpu, "wall": wall, "found": found, "holds": res.holds, "status": res.status,
                  "agrees": agrees, "json": json.dumps(doc, sort_keys=True, default=str)}))
"""


def _tree(rev: str, into: Path) -> Path:
    """REV's src/, models/ and grammar/ under ``into`` (``git archive``): the root to put first."""
    arch = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src", "models", "grammar"],
                          capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=arch, check=True)
    return into


def _one(src_root: Path, name: str, model: str) -> dict:
    env_path = os.pathsep.join(p for p in (str(src_root / "src"), os.environ.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-c", _WORKER, str(ROOT), str(KDIR / f"{name}.ptx"), model]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": env_path})
    if r.returncode != 0:
        return {"cpu": float("nan"), "wall": float("nan"), "found": [], "holds": None, "status": "error",
                "agrees": False, "json": "", "error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _cell(runs: list[dict]) -> dict:
    out = dict(runs[-1])
    out["cpu"] = statistics.median(r["cpu"] for r in runs)
    out["wall"] = statistics.median(r["wall"] for r in runs)
    return out


def _findings(doc: dict) -> list:
    """The findings less their witnesses: kind, name, detail, location, event pairs, and the events
    by line and instruction (a race's by thread too). Not by event id — a hang names the instance
    of its loop's read on the path its witness took, and another witness may take a copy of the
    same line — nor, but for races, by thread: an assertion failure (a trap, an out-of-bounds
    access) names the first thread its witness stops there (queries/sites.py), a hang the threads
    of its witness (its detail still says which)."""
    def events(f: dict) -> list:
        drop = ("event",) if f["kind"] == "race" else ("event", "thread")
        return [{x: y for x, y in e.items() if x not in drop} for e in f["events"]]
    return [{k: (events(f) if k == "events" else v) for k, v in f.items() if k not in ("witness", "outcome")}
            for f in doc.get("findings", [])]


def _compare(before: str, after: str) -> str:
    """``same`` (the whole JSON), ``same findings, other witnesses`` (each finding says the same
    — :func:`_findings` — but an execution the solver picked, a finding's or an outcome's
    witness, differs), or ``FINDINGS DIFFER``."""
    if not before or not after:
        return "not compared (an error)"
    if before == after:
        return "same"
    b, a = json.loads(before), json.loads(after)
    same_outcomes = [(o.get("values"), o.get("satisfies")) for o in b.get("outcomes", [])] == \
        [(o.get("values"), o.get("satisfies")) for o in a.get("outcomes", [])]
    rest = [k for k in set(a) | set(b) if k not in ("findings", "outcomes") and a.get(k) != b.get(k)]
    if _findings(b) == _findings(a) and same_outcomes and not rest:
        return "same findings, other witnesses"
    return "FINDINGS DIFFER" + (f" ({', '.join(sorted(rest))})" if rest else "")


def _verdict(r: dict) -> str:
    if r.get("error"):
        return "ERROR " + r["error"]
    found = ", ".join(r["found"]) or "ok"
    return ("agrees: " if r["agrees"] else "DISAGREES: ") + f"{found} (holds {r['holds']}, {r['status']})"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="kernels (default: every kernel of the corpus)")
    ap.add_argument("--model", action="append", help="model (repeatable; default: ptx and ptx-v7.5)")
    ap.add_argument("--before", metavar="REV", help="also time the tree at git revision REV")
    ap.add_argument("--repeat", type=int, default=1, help="checks per cell (the median is shown)")
    ap.add_argument("--limit", type=float, default=LIMIT_S, help="seconds a check may take (issue 39: 10)")
    ap.add_argument("--save", metavar="DIR", type=Path,
                    help="write each check's JSON there (NAME.MODEL[.before].json)")
    args = ap.parse_args(argv)
    names = args.names or sorted(p.stem for p in KDIR.glob("*.cu"))
    models = args.model or list(MODELS)
    with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
        before = _tree(args.before, Path(tmp)) if args.before else None
        head = f"{'kernel':40s} {'model':9s}"
        if before:
            head += f" {'before cpu/wall s':>18s}"
        print(head + f" {'cpu/wall s':>14s}  verdict" + ("  (same findings as before?)" if before else ""))
        bad = 0
        for name in names:
            for model in models:
                b_runs, a_runs = [], []
                for _ in range(args.repeat):
                    if before:
                        b_runs.append(_one(before, name, model))
                    a_runs.append(_one(ROOT, name, model))
                a = _cell(a_runs)
                if args.save:
                    args.save.mkdir(parents=True, exist_ok=True)
                    (args.save / f"{name}.{model}.json").write_text(a["json"])
                    if before:
                        (args.save / f"{name}.{model}.before.json").write_text(b_runs[-1]["json"])
                over = a["cpu"] > args.limit
                line = f"{name:40s} {model:9s}"
                if before:
                    b = _cell(b_runs)
                    line += f" {b['cpu']:8.2f}/{b['wall']:<8.2f} "
                line += f" {a['cpu']:6.2f}/{a['wall']:<6.2f}{'!' if over else ' '} {_verdict(a)}"
                if before:
                    line += "  " + _compare(b["json"], a["json"])
                print(line, flush=True)
                bad += over or not a["agrees"]
    print(f"{bad} row(s) over {args.limit:g} s or not agreeing" if bad else
          f"every row agrees and takes at most {args.limit:g} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
