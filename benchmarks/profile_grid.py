"""Where the grid barrier's check spends its time (issue 40): per phase of ``ptxmm.check`` (the
event graph, the encoding, outcomes, races, sites, liveness), CPU seconds and the process's peak RSS.

    python benchmarks/profile_grid.py N [--profile FILE]

N: blocks of the sense-reversing grid barrier (examples/kernels/grid-barrier.ptx, as in
bench_kernels.py --scale). --profile: also a cProfile of the whole check into FILE.
--plain-liveness: the liveness problem without RMW chains (queries.hangs.CHAINS off). --off
MODULE.NAME (repeatable): a module-level switch of ptxmm set to False for the run, e.g. --off
engines.z3.chains.IDLE_POSITION (the "before" side of a shortcut, the tree otherwise the same).
"races+sites" is the joint query asked before the enumeration (queries.checker.SITES_WITH_RACES);
the liveness phase's lines are its graph, hang query and grid-ending sites (the rest of the phase
is its problem's encoding). --encode-only R --switch MODULE.NAME: no check, only the check's
encoding (relation analysis, then the Z3 problem) R times in one process, the switch off then on
each time (the same minutes for both sides). Each phase's line is printed when it ends (a run
stopped by a time limit still says where it got)."""

from __future__ import annotations

import argparse
import cProfile
import importlib
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _wrap(obj, attr: str, name: str, log: list) -> None:
    fn = getattr(obj, attr)

    def timed(*a, **k):
        c0 = _cpu()
        try:
            return fn(*a, **k)
        finally:
            _say(log, name, _cpu() - c0)
    setattr(obj, attr, timed)


def _say(log: list, name: str, cpu: float) -> None:
    log.append((name, cpu, _rss()))
    print(f"{name:16s} {cpu:8.2f} CPU s  (peak RSS so far {_rss():6.0f} MiB)", flush=True)


def main() -> None:
    from bench_kernels import _grid

    import ptxmm
    from ptxmm.engines.z3 import Z3Problem
    from ptxmm.kernel.kernels import KernelArgs
    from ptxmm.queries import checker, condition, hangs, races, sites
    from ptxmm.semantics import knowledge

    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--profile")
    ap.add_argument("--plain-liveness", action="store_true", help="hangs.CHAINS off (the liveness problem "
                    "without RMW chains, as before issue 40's session 17)")
    ap.add_argument("--off", action="append", default=[], metavar="MODULE.NAME",
                    help="a module-level switch of ptxmm set to False (repeatable)")
    ap.add_argument("--encode-only", type=int, default=0, metavar="R")
    ap.add_argument("--switch", metavar="MODULE.NAME", help="the switch --encode-only turns off/on")
    args = ap.parse_args()
    hangs.CHAINS = not args.plain_liveness
    for name in args.off:
        mod, _, attr = name.rpartition(".")
        target = importlib.import_module(f"ptxmm.{mod}")
        if not isinstance(getattr(target, attr), bool):
            ap.error(f"--off {name}: not a switch")
        setattr(target, attr, False)
    launch, cond = _grid(args.n)
    prog = ptxmm.load(ROOT / "examples/kernels/grid-barrier.ptx",
                      kernel=KernelArgs(launch=launch, forall=cond))
    if args.encode_only:
        _encode_only(prog, args.encode_only, args.switch)
        return
    log: list = []
    _wrap(checker, "build", "graph", log)
    _wrap(knowledge, "co_must", "co analysis", log)  # before the check's encoding (CO_ANALYSIS_MIN)
    pick = checker.engine

    def engine(name):
        cls = pick(name)

        def make(*a, **k):
            c0 = _cpu()
            pb = cls(*a, **k)
            _say(log, "encoding", _cpu() - c0)
            return pb
        return make
    checker.engine = engine
    _wrap(condition, "answer", "outcomes", log)
    _wrap(races.QUERY, "search", "races", log)  # asked before the enumeration or after it (races.EARLY)
    _wrap(Z3Problem, "none_raised", "races+sites", log)  # both in one query (checker.SITES_WITH_RACES)
    _wrap(sites.QUERY, "run", "sites", log)
    _wrap(hangs.QUERY, "run", "liveness", log)
    # within the liveness phase: its graph, the grid-ending sites and hang queries (the rest of
    # the phase is the liveness problem's encoding)
    _wrap(hangs, "liveness_graph", "  live graph", log)
    _wrap(sites, "grid_ending_sites", "  live sites", log)
    _wrap(hangs, "_hangs", "  hang query", log)
    prof = cProfile.Profile() if args.profile else None
    c0, t0 = _cpu(), time.perf_counter()
    if prof:
        prof.enable()
    res = ptxmm.check(prog, "ptx")
    if prof:
        prof.disable()
        prof.dump_stats(args.profile)
    print(f"{args.n} blocks: {_cpu() - c0:.2f} CPU s, {time.perf_counter() - t0:.2f} wall s, peak RSS "
          f"{_rss():.0f} MiB; status {res.status}, holds {res.holds}, liveness {res.liveness}, "
          f"findings {len(res.findings)}; off: {', '.join(args.off) or '-'}; "
          f"reductions: {'; '.join(res.reductions)}")


def _encode_only(prog, rounds: int, switch: str | None) -> None:
    """The check's encoding (co analysis where the checker does it, then its Z3 problem)
    ``rounds`` times, ``switch`` off then on each round, in CPU seconds."""
    from ptxmm.cat.parser import load_model
    from ptxmm.engines import engine
    from ptxmm.queries.checker import CO_ANALYSIS_MIN, SYMMETRY
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.knowledge import co_must
    from ptxmm.semantics.vocab import candidates

    mod, _, attr = (switch or "").rpartition(".")
    target = importlib.import_module(f"ptxmm.{mod}") if switch else None
    m = load_model("ptx")
    eg = build(prog)
    for r in range(rounds):
        for on in (False, True) if target else (True,):
            if target:
                setattr(target, attr, on)
            c0 = _cpu()
            cand = candidates(eg)
            known = co_must(eg, m, cand) if len(cand.co) > CO_ANALYSIS_MIN else set()
            c1 = _cpu()
            pb = engine("z3")(eg, m, [], candidates(eg, known), flags=True, co_known=known,
                              symmetry=SYMMETRY, chains=True)
            c2 = _cpu()
            pb.close()
            print(f"round {r} {switch or '-'} {'on' if on else 'off'}: co analysis {c1 - c0:.2f}, "
                  f"problem {c2 - c1:.2f}, encoding {c2 - c0:.2f} CPU s", flush=True)


if __name__ == "__main__":
    main()
