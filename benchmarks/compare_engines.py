"""Before vs after: the same verdicts, outcome sets and findings on every bundled example, every
litmus test of tests/litmus and both Dat3M corpora (safety under ptx and ptx-v7.5, liveness under
ptx), each file checked by `ptxmm check --json` in a process of its own.

    python benchmarks/compare_engines.py [--before REV] [--jobs N] [--cache DIR]

REV (default HEAD~1) is checked out as a git worktree beside the repository. What a side printed is
normalised (timings, witnesses and file paths dropped; outcomes and findings as sets) and cached
under --cache by commit, so a second comparison against the same REV runs only the after side.
Prints each run whose verdict, outcome set or findings differ, with what only one side has, then
"N/M runs agree" (files added since REV are named, not compared); exits 1 when some run differs.

Witnesses are not compared: two correct encodings may pick different executions for one outcome
(so a site finding, one per source line, is compared without the thread its witness names).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "conformance"
KERNEL_DIRS = ("kernels", "hopper/kernels")


def worktree(rev: str) -> Path:
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    wt = ROOT.parent / f".bench-before-{sha}"
    if not wt.is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(wt), sha],
                       check=True)
    return wt


def runs() -> list[tuple[str, list[str]]]:
    """(key, extra arguments) per check: the key names the file relative to its corpus."""
    out: list[tuple[str, list[str]]] = []
    for f in sorted([*ROOT.glob("examples/**/*.ptx"), *ROOT.glob("examples/**/*.cu"),
                     *ROOT.glob("examples/**/*.litmus"), *ROOT.glob("tests/litmus/**/*.ptx")]):
        rel = f.relative_to(ROOT)
        if f.suffix == ".ptx" and any(str(rel.parent).endswith(d) for d in KERNEL_DIRS) \
                and f.with_suffix(".cu").exists():
            continue  # the .cu's own PTX, checked through the .cu
        live = ["--liveness"] if "liveness" in rel.parts else []
        out.append((f"repo/{rel}{' +liveness' if live else ''}", [f"@repo/{rel}", *live]))
    safety = SHARED / "dat3m" / "PTX"
    if safety.is_dir():
        for f in sorted(safety.rglob("*.litmus")):
            rel = f.relative_to(SHARED)
            for m in ("ptx", "ptx-v7.5"):
                out.append((f"shared/{rel} -m {m}", [f"@shared/{rel}", "--model", m]))
    live = SHARED / "dat3m-liveness" / "PTX"
    if live.is_dir():
        for f in sorted(live.rglob("*.litmus")):
            rel = f.relative_to(SHARED)
            out.append((f"shared/{rel} +liveness", [f"@shared/{rel}", "--liveness"]))
    return out


def normalise(d: dict) -> dict:
    if "error" in d:
        return {"error": d["error"] if isinstance(d["error"], str) else d["error"].get("message")}

    def ev(e: dict) -> str:
        return f"{e.get('thread')}:{e.get('line')}:{e.get('text')}"

    findings = sorted(json.dumps({"kind": f.get("kind"), "name": f.get("name"),
                                  "location": f.get("location"), "message": f.get("message"),
                                  "events": sorted(ev(e) for e in f.get("events", []))}, sort_keys=True)
                      for f in d.get("findings", []))
    return {"holds": d.get("holds"), "status": d.get("status"), "expected": d.get("expected"),
            "observables": d.get("observables"),
            "outcomes": sorted(json.dumps([o["values"], o.get("satisfies"), sorted(o.get("flags", []))],
                                          sort_keys=True) for o in d.get("outcomes", [])),
            "findings": findings, "liveness": d.get("liveness")}


SITES = ("assert-fails", "out-of-bounds", "trap")


def sites_by_line(d: dict) -> dict:
    """``d`` (normalised) with each site finding's events by line and text alone: a site (an
    assertion, a bound, a trap) is one finding per source line, and the thread it names is its
    witness's, which two correct encodings may pick differently (as for any witness)."""
    if "findings" not in d:
        return d
    out = []
    for f in d["findings"]:
        g = json.loads(f)
        if g.get("kind") in SITES:
            g["events"] = sorted(":" + e.split(":", 1)[1] for e in g["events"])
        out.append(json.dumps(g, sort_keys=True))
    return {**d, "findings": sorted(out)}


def check(src: Path, repo: Path, args: list[str]) -> dict:
    extra = os.environ.get("PTXMM_COMPARE_PATH")  # more paths (an optional extra installed apart)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), *([extra] if extra else [])]))
    argv = [a.replace("@repo/", f"{repo}/").replace("@shared/", f"{SHARED}/") for a in args]
    if not Path(argv[0]).exists():
        return {"absent": True}  # a file this side does not have (added since)
    r = subprocess.run([sys.executable, "-m", "ptxmm", "check", "--json", *argv], capture_output=True,
                       text=True, env=env, cwd=repo)
    try:
        d = json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return normalise(d[0] if isinstance(d, list) else d)


def side(repo: Path, todo: list[tuple[str, list[str]]], jobs: int) -> dict[str, dict]:
    with ThreadPoolExecutor(jobs) as pool:
        res = pool.map(lambda r: (r[0], check(repo / "src", repo, r[1])), todo)
        return dict(res)


def cached_side(rev: str, todo: list[tuple[str, list[str]]], jobs: int, cache: Path) -> dict[str, dict]:
    wt = worktree(rev)
    sha = subprocess.run(["git", "-C", str(wt), "rev-parse", "HEAD"], check=True, capture_output=True,
                         text=True).stdout.strip()
    path = cache / f"{sha}.json"
    have = json.loads(path.read_text()) if path.exists() else {}
    missing = [r for r in todo if r[0] not in have]
    if missing:
        have.update(side(wt, missing, jobs))
        cache.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(have, indent=0, sort_keys=True))
    return have


def report(key: str, a: dict, b: dict) -> None:
    print(f"DIFFERS {key}")
    if "error" in a or "error" in b:
        print(f"   before: {a.get('error', 'ok')}   after: {b.get('error', 'ok')}")
        return
    for k in ("holds", "status", "expected", "observables", "liveness"):
        if a.get(k) != b.get(k):
            print(f"   {k} before {a.get(k)} after {b.get(k)}")
    for name in ("outcomes", "findings"):
        for x in sorted(set(a[name]) - set(b[name])):
            print(f"   {name} only before: {x}")
        for x in sorted(set(b[name]) - set(a[name])):
            print(f"   {name} only after:  {x}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="HEAD~1")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", type=Path, default=ROOT.parent / ".bench-compare-cache")
    ap.add_argument("--only", default="", help="only runs whose key contains this text")
    args = ap.parse_args()
    todo = [r for r in runs() if args.only in r[0]]
    if not SHARED.is_dir():
        print(f"note: {SHARED} is absent: the Dat3M corpora are not compared", file=sys.stderr)
    old = {k: sites_by_line(v) for k, v in cached_side(args.before, todo, args.jobs, args.cache).items()}
    new = {k: sites_by_line(v) for k, v in side(ROOT, todo, args.jobs).items()}
    agree = 0
    added = [key for key, _ in todo if old[key].get("absent")]
    for key, _ in todo:
        if key in added:
            continue
        if old[key] == new[key]:
            agree += 1
        else:
            report(key, old[key], new[key])
    compared = len(todo) - len(added)
    if added:
        print(f"new since {args.before} (not compared): {', '.join(added)}")
    print(f"{agree}/{compared} runs agree (before {args.before})")
    sys.exit(0 if agree == compared else 1)


if __name__ == "__main__":
    main()
