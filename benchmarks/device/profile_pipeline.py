"""Where the time of one harness iteration goes, and how the launch knobs move instances/s and
weak outcomes/s (run on a GPU through the `device` tool; needs CuPy and nvcc).

    python benchmarks/device/profile_pipeline.py [--tests MP-relaxed,SB-relaxed] [--budget S] [--out DIR]

Part 1 times each stage of the pipeline alone, replayed from a CUDA graph holding one graph's
worth of it (CUDA events around 20 replays): microseconds per iteration. Part 2 sweeps blocks, stride,
barrier probability and iterations per graph on the full pipeline, a time budget each."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import replace
from pathlib import Path

import ptxmm
from ptxmm.device.crossval import judge, prepare
from ptxmm.device.env import PRESETS
from ptxmm.device.harness import Harness

EX = Path(__file__).resolve().parents[2] / "examples" / "classic"


def kernel_times(h: Harness, reps: int = 20) -> dict[str, float]:
    """µs per iteration of each stage alone (graph of iters_per_graph launches of that stage)."""
    cp = h.cp
    out = {}
    for name, stages in h.stages().items():
        with h.stream:
            h.stream.begin_capture()
            for s in stages:
                s()
            g = h.stream.end_capture()
            g.upload(h.stream)
            g.launch(h.stream)
            h.stream.synchronize()
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record(h.stream)
            for _ in range(reps):
                g.launch(h.stream)
            b.record(h.stream)
            b.synchronize()
        out[name] = round(cp.cuda.get_elapsed_time(a, b) * 1000 / (reps * h.env.iters_per_graph), 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", default="MP-relaxed,SB-relaxed,LB-relaxed")
    ap.add_argument("--budget", type=float, default=0.4)
    ap.add_argument("--blocks", default="512,1024")
    ap.add_argument("--strides", default="1,4")
    ap.add_argument("--barriers", default="0,100")
    ap.add_argument("--ipg", default="10,40")
    ap.add_argument("--reps", default="1", help="instances per thread per launch (Env.reps)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows, data = [], []
    for t in args.tests.split(","):
        prog = ptxmm.load(EX / f"{t}.ptx")
        res, lay = prepare(prog)
        for reps in map(int, args.reps.split(",")):
            h = Harness(prog, replace(PRESETS["none"], reps=reps), lay)
            kt = kernel_times(h)
            print(f"{t} R={reps} stage µs/iteration ({h.n} instances): {kt}", flush=True)
            data.append({"test": t, "reps": reps, "kernel_us": kt, "instances": h.n})
        for nb, s, bar, ipg, reps in itertools.product(*(map(int, a.split(",")) for a in (
                args.blocks, args.strides, args.barriers, args.ipg, args.reps))):
            env = replace(PRESETS["none"], blocks=nb, stride=s, barrier_pct=bar, iters_per_graph=ipg,
                          reps=reps)
            cr = judge(prog, res, Harness(prog, env, lay).run(args.budget))
            r = cr.run
            row = (f"| {t} | {nb} | {s} | {bar} | {ipg} | {reps} | {r.per_s / 1e9:.2f} | "
                   f"{cr.weak / r.instances:.2e} | {cr.weak / r.seconds / 1e6:.1f} |")
            print(row, flush=True)
            rows.append(row)
            data.append({"test": t, "blocks": nb, "stride": s, "barrier": bar, "ipg": ipg, "reps": reps,
                         "G_inst_s": r.per_s / 1e9, "weak": cr.weak, "instances": r.instances,
                         "weak_per_s": cr.weak / r.seconds})
    table = ["| test | blocks | stride | barrier % | iters/graph | reps | G inst/s | weak rate | M weak/s |",
             "|---|---|---|---|---|---|---|---|---|"] + rows
    print("\n".join(table))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "profile.md").write_text("\n".join(table) + "\n")
        (args.out / "profile.json").write_text(json.dumps(data, indent=1))
    sys.exit(0)


if __name__ == "__main__":
    main()
