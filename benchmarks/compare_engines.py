"""Old engine vs current checkout: the same verdict and the same outcome set on every bundled test
and every non-proxy Dat3M conformance test (full enumeration, `ptxmm check --json`).

    python benchmarks/compare_engines.py [--before REV] [--model M]

The old engine runs from a git worktree of REV (default 4a4a59e, the last commit of the old
engine; created beside the repository when missing). Prints each file whose verdict or outcome set
differs, with the outcomes only one side has, then "N/M files agree"."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DAT3M = ROOT.parent / "shared" / "conformance" / "dat3m" / "PTX"


def worktree(rev: str) -> Path:
    wt = ROOT.parent / f".bench-before-{rev}"
    if not wt.is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(wt), rev],
                       check=True)
    return wt


def files() -> list[Path]:
    out = sorted([*ROOT.glob("examples/**/*.ptx"), *ROOT.glob("tests/litmus/**/*.ptx")])
    if DAT3M.is_dir():
        out += sorted(f for d in ("Manual", "Barrier", "Nvidia") for f in (DAT3M / d).rglob("*.litmus")
                      if "proxy" not in f.parts)
    return out


def run(src: Path, fs: list[Path], model: str) -> dict[str, dict]:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = {}
    for f in fs:  # one process per file: the old CLI stops a batch at its first error
        r = subprocess.run([sys.executable, "-m", "ptxmm.cli", "check", "--json", "--model", model, str(f)],
                           capture_output=True, text=True, env=env)
        try:
            d = json.loads(r.stdout)
            out[str(f)] = {"holds": d["holds"],
                           "outcomes": {json.dumps(o["values"], sort_keys=True) for o in d["outcomes"]}}
        except (json.JSONDecodeError, KeyError):
            out[str(f)] = {"error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="4a4a59e")
    ap.add_argument("--model", default="ptx")
    args = ap.parse_args()
    fs = files()
    old = run(worktree(args.before) / "src", fs, args.model)
    new = run(ROOT / "src", fs, args.model)
    agree = 0
    for f in fs:
        a, b = old[str(f)], new[str(f)]
        if a == b:
            agree += 1
            continue
        print(f"DIFFERS {Path(f).relative_to(ROOT.parent)}")
        if "error" in a or "error" in b:
            print(f"   before: {a.get('error', 'ok')}   after: {b.get('error', 'ok')}")
            continue
        print(f"   holds before {a['holds']} after {b['holds']}")
        for o in sorted(a["outcomes"] - b["outcomes"]):
            print(f"   only before: {o}")
        for o in sorted(b["outcomes"] - a["outcomes"]):
            print(f"   only after:  {o}")
    print(f"{agree}/{len(fs)} files agree (model {args.model}, before {args.before})")


if __name__ == "__main__":
    main()
