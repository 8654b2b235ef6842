"""Markdown tables from ``ptxmm crossval --json`` files (docs/device/).

    python benchmarks/device/tables.py hunt JSON [JSON ...]   # per hunted outcome; later files win
    python benchmarks/device/tables.py teaching JSON          # per test: verdict, instances, counts
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _fmt(values: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items())


def hunt_rows(runs: list[dict]) -> list[str]:
    """One row per hunted outcome; a test hunted in several runs keeps the last run's hunt."""
    tests: dict[str, dict] = {}
    for run in runs:
        for t in run["tests"]:
            if t.get("status") == "ran" and t.get("hunt"):
                tests[t["file"]] = t
    rows = ["| test | outcome | cond | hunted | environment | count | rate | environments | "
            "hunt instances | hunt s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for t in sorted(tests.values(), key=lambda t: t["file"]):
        h = t["hunt"]
        for o in h["outcomes"]:
            cond = "✓" if o["satisfies"] else ""
            if o["status"] == "found":
                what = f"found | {o['env']} ({o['knobs']}) | {o['count']:,} | {o['rate']:.1e}"
            else:
                what = f"not found in {o['instances'] / 1e9:.1f} G | — | 0 | < {o['rate_bound']:.1e}"
            rows.append(f"| {t['name']} | {_fmt(o['values'])} | {cond} | {what} | "
                        f"{len(h['environments'])} | {h['instances'] / 1e9:.1f} G | {h['seconds']:.1f} |")
    return rows


def teaching_rows(run: dict) -> list[str]:
    rows = ["| test | file | model verdict | instances | per-outcome observed counts (✓ = condition) | "
            "unseen allowed | violations |", "|---|---|---|---|---|---|---|"]
    for t in run["tests"]:
        if t.get("status") != "ran":
            rows.append(f"| — | {Path(t['file']).name} | not run: {t['reason']} | | | | |")
            continue
        verdict = {True: "condition allowed", False: "condition forbidden"}.get(
            t["condition_holds_in_model"], "no condition")
        seen = [o for o in t["outcomes"] if o["count"]]
        counts = "; ".join(f"{_fmt(o['values'])}{' ✓' if o['satisfies'] else ''}: {o['count']:,}"
                           for o in sorted(seen, key=lambda o: -o["count"]))
        unseen = sum(1 for o in t["outcomes"] if o["verdict"] == "unseen")
        rows.append(f"| {t['name']} | {Path(t['file']).name} | {verdict} | {t['instances']:,} | "
                    f"{counts} | {unseen} | {t['violations']} |")
    return rows


def main() -> None:
    what, files = sys.argv[1], sys.argv[2:]
    runs = [json.loads(Path(f).read_text()) for f in files]
    rows = hunt_rows(runs) if what == "hunt" else teaching_rows(runs[0])
    print("\n".join(rows))


if __name__ == "__main__":
    main()
