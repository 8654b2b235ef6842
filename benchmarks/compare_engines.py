"""Old engine vs current checkout: the same verdict, the same outcome set and the same racing pairs
on every bundled test and every non-proxy Dat3M conformance test (full enumeration, `ptxmm check
--json`). Racing pairs are compared as a set per file: Engine 2 read them from each outcome's
witness, Engine 3 asks the solver for every pair (its findings), so a pair that no listed witness
raised shows up as "race only after".

    python benchmarks/compare_engines.py [--before REV] [--model M]

The old engine runs from a git worktree of REV (default a3d8f0f, the last commit of Engine 2;
4a4a59e is the last of the engine before it; created beside the repository when missing). Prints
each file whose verdict, outcome set or racing pairs differ, with what only one side has, then
"N/M files agree"."""

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
                           "outcomes": {json.dumps(o["values"], sort_keys=True) for o in d["outcomes"]},
                           "races": races(d)}
        except (json.JSONDecodeError, KeyError):
            out[str(f)] = {"error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return out


def races(d: dict) -> set[str]:
    """The racing pairs a check reports, as unordered pairs of (thread, instruction): Engine 2
    listed them per outcome (``outcomes[].races``), Engine 3 as findings with a witness."""
    def ev(e: dict) -> str:
        return f"{e['thread']} {e['text']}"

    pairs = [(r["flag"], ev(r["a"]), ev(r["b"])) for o in d["outcomes"] for r in o.get("races", [])]
    pairs += [(f["name"], *map(ev, f["events"])) for f in d.get("findings", []) if len(f["events"]) == 2]
    return {f"{flag}: " + "  ~  ".join(sorted((a, b))) for flag, a, b in pairs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="a3d8f0f")
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
        for x in sorted(a["races"] ^ b["races"]):
            print(f"   race only {'before' if x in a['races'] else 'after'}: {x}")
        for o in sorted(a["outcomes"] - b["outcomes"]):
            print(f"   only before: {o}")
        for o in sorted(b["outcomes"] - a["outcomes"]):
            print(f"   only after:  {o}")
    print(f"{agree}/{len(fs)} files agree (model {args.model}, before {args.before})")


if __name__ == "__main__":
    main()
