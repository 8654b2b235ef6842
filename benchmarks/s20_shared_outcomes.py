"""Evidence for one encoding shared by the check and the liveness problem (issue 40, session 20;
benchmarks/results/s20-grid.md section 4): for each program, the outcome set of the check's
problem (its event graph) against the outcome set of the liveness graph's problem with every thread
held to a complete (``done``) path, observables sorted by key. Both problems are built alike
(chains on, no race flags, no co analysis, no symmetry). Prints SAME or DIFFER per program; the
exit status is 1 when one differs.

    PYTHONPATH=src:tests python benchmarks/s20_shared_outcomes.py [--seeds N]

Programs: the grid barrier at 2 and 3 blocks, chain_gen's programs 0..N-1 (default 40) and the
kernel corpus at its own launches (the two slow kernels left out)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import z3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))


def _outcomes(eg, model, obs, complete_only: bool) -> set:
    from ptxmm.engines.z3 import Z3Problem
    from ptxmm.semantics.vocab import candidates

    pb = Z3Problem(eg, model, obs, candidates(eg), flags=False, chains=True)
    try:
        if complete_only:
            held = []
            for t, ps in enumerate(eg.paths):
                sel = pb.ch.sel[t]
                ks = [k for k, p in enumerate(ps) if p.kind == "done"]
                if sel is not None:
                    held.append(z3.Or([sel[k] for k in ks]) if ks else z3.BoolVal(False))
            pb.s.add(z3.And(held))
        order = sorted(range(len(obs)), key=lambda i: str(obs[i].key))
        return {tuple(v[i] for i in order) for v, *_ in pb.outcomes()}
    finally:
        pb.close()


def compare(name: str, prog, model) -> bool:
    from ptxmm.queries import sites
    from ptxmm.queries.hangs import Progress, liveness_graph
    from ptxmm.semantics import outcomes
    from ptxmm.semantics.builder import build

    see = sites.observables if prog.layout is not None else outcomes.observables
    check, live = build(prog), liveness_graph(prog, 2, Progress.parse("fair"))
    oc, ol = see(check, "all"), see(live, "all")
    same_keys = sorted(str(o.key) for o in oc) == sorted(str(o.key) for o in ol)
    a, b = _outcomes(check, model, oc, False), _outcomes(live, model, ol, True)
    same = same_keys and a == b
    print(f"{name:36s} paths {sum(map(len, check.paths)):4d} / {sum(map(len, live.paths)):4d}  outcomes "
          f"{len(a):4d} / {len(b):4d}  {'SAME' if same else 'DIFFER'}", flush=True)
    return same


def main() -> int:
    from bench_kernels import _grid
    from support.chain_gen import program

    import ptxmm
    from ptxmm.cat.parser import load_model
    from ptxmm.kernel.kernels import KernelArgs

    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=40)
    args = ap.parse_args()
    m = load_model("ptx")
    ok = True
    for n in (2, 3):
        launch, cond = _grid(n)
        prog = ptxmm.load(ROOT / "examples/kernels/grid-barrier.ptx",
                          kernel=KernelArgs(launch=launch, forall=cond))
        ok &= compare(f"grid-barrier <<<{n}, 1>>>", prog, m)
    for seed in range(args.seeds):
        ok &= compare(f"chain_gen {seed}", ptxmm.parse(program(seed), "generated.ptx"), m)
    for p in sorted((ROOT / "examples/kernels").glob("*.ptx")):
        if p.stem not in ("grid-barrier-reuse", "block-reduce-shfl"):
            ok &= compare(p.stem, ptxmm.load(p), m)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
