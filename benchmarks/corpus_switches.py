"""Module-level switches of ptxmm over the kernel corpus (examples/kernels at their own launches):
each kernel checked with the switches off ("before") and on ("after"), one after the other in
this process, the answers compared (status, verdict, outcomes, each finding's kind, name and
lines, liveness) and the CPU seconds of each check printed.

    python benchmarks/corpus_switches.py [--switch MODULE.NAME ...] [--all] [NAME ...]

--switch: a switch (default: session 19's, issue 40: engines.z3.chains.IDLE_POSITION,
queries.races.EARLY, queries.hangs.HANGS_FIRST, queries.checker.SITES_WITH_RACES). --all: also the
slow kernels. A differing answer is printed and makes the exit status 1."""

from __future__ import annotations

import argparse
import importlib
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KDIR = ROOT / "examples" / "kernels"
SLOW = {"grid-barrier-reuse", "block-reduce-shfl"}
SESSION_19 = ["engines.z3.chains.IDLE_POSITION", "queries.races.EARLY", "queries.hangs.HANGS_FIRST",
              "queries.checker.SITES_WITH_RACES"]


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _set(switches: list[str], value: bool) -> None:
    for name in switches:
        mod, _, attr = name.rpartition(".")
        target = importlib.import_module(f"ptxmm.{mod}")
        if not isinstance(getattr(target, attr), bool):
            raise SystemExit(f"{name}: not a switch")
        setattr(target, attr, value)


def _answer(res) -> tuple:
    outs = sorted(tuple(o.outcome.values) for o in res.outcomes)
    hung = sorted({e.thread for f in res.findings if str(f.kind) == "hang" for e in f.events})
    finds = sorted({(str(f.kind), f.name, tuple(sorted(e.line or 0 for e in f.events)))
                    for f in res.findings if str(f.kind) not in ("hang",)})
    return res.status, res.holds, outs, finds, hung, res.liveness, res.findings_status


def main() -> int:
    import ptxmm

    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--switch", action="append")
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()
    switches = args.switch or SESSION_19
    names = args.names or sorted(p.stem for p in KDIR.glob("*.ptx") if args.all or p.stem not in SLOW)
    tot = [0.0, 0.0]
    differ = 0
    print(f"{'kernel':36s} {'before':>8s} {'after':>8s}  answers")
    for name in names:
        prog = ptxmm.load(KDIR / f"{name}.ptx")
        row = []
        for side, on in enumerate((False, True)):
            _set(switches, on)
            c0 = _cpu()
            res = ptxmm.check(prog)
            row.append((_cpu() - c0, _answer(res)))
            tot[side] += row[-1][0]
        same = row[0][1] == row[1][1]
        differ += not same
        print(f"{name:36s} {row[0][0]:8.2f} {row[1][0]:8.2f}  {'same' if same else 'DIFFER'}", flush=True)
        if not same:
            print(f"    before: {row[0][1]}\n    after:  {row[1][1]}")
    print(f"{'total':36s} {tot[0]:8.2f} {tot[1]:8.2f}  {differ} differ; switches: {', '.join(switches)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
