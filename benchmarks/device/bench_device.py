"""Device benchmarks on a Hopper GPU (run through the `device` tool; needs CuPy, nvcc, cuobjdump).

    python benchmarks/device/bench_device.py throughput [--budget S] [--out DIR]
    python benchmarks/device/bench_device.py tune FILE [--n N] [--budget S] [--out DIR]
    python benchmarks/device/bench_device.py crossval PATHS... [--budget S] [--out DIR]
    python benchmarks/device/bench_device.py audit PATHS... [--out DIR]

Each prints a markdown table (also written to DIR/<name>.md, with JSON beside it)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import ptxmm
from ptxmm.device import sass
from ptxmm.device.build import compile_cubin
from ptxmm.device.codegen import generate
from ptxmm.device.crossval import crossval, prepare
from ptxmm.device.env import PRESETS
from ptxmm.device.layout import make_layout
from ptxmm.device.tune import tune as run_tune
from ptxmm.errors import PtxmmError
from ptxmm.testing.runner import collect

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
SHAPES = ["MP-relaxed", "MP-fence-sc", "MP-fence-sc-cta-2cta", "SB-relaxed", "SB-fence-sc", "LB-relaxed",
          "LB-fence-sc", "IRIW-relaxed", "IRIW-fence-sc"]


def emit(out: Path | None, name: str, lines: list[str], data) -> None:
    text = "\n".join(lines)
    print(text, flush=True)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.md").write_text(text + "\n")
        (out / f"{name}.json").write_text(json.dumps(data, indent=1))


def header(device: str) -> list[str]:
    return [f"_{time.strftime('%Y-%m-%d')}, {device}, ptxmm {ptxmm.__version__}_", ""]


def _compile_one(path: str) -> None:
    try:
        prog = ptxmm.load(path)
        compile_cubin(generate(make_layout(prog)))  # for the audit
        compile_cubin(generate(prepare(prog)[1]))  # for crossval (value codes from the model)
    except PtxmmError:
        pass


def precompile(progs) -> None:
    """Model checks and nvcc runs in parallel processes; the cubin cache keeps the results."""
    with ProcessPoolExecutor(12) as ex:
        list(ex.map(_compile_one, [p.file for p in progs]))


def parse_envs(spec: str) -> list[tuple[str, object]]:
    """``none,barrier,fast:blocks=1024/stride=1/barrier_pct=0`` → [(label, Env)]: presets by name,
    or a preset (the part before ':' if it names one, else the default) with knobs replaced."""
    from dataclasses import replace

    out = []
    for item in spec.split(","):
        name, _, knobs = item.partition(":")
        env = PRESETS.get(name, PRESETS["none"])
        kw = {k: type(getattr(env, k))(int(v)) for k, v in (kv.split("=") for kv in knobs.split("/") if kv)}
        out.append((name, replace(env, **kw)))
    return out


def throughput(args) -> None:
    rows, data, device = [], [], ""
    progs = [ptxmm.load(EX / "classic" / f"{s}.ptx") for s in args.tests.split(",")]
    precompile(progs)
    for prog in progs:
        for label, env in parse_envs(args.presets):
            cr = crossval(prog, env, args.budget)
            r = cr.run
            device = r.device
            rows.append(f"| {args.label} | {prog.name} | {label} | {r.env.short()} | {r.per_s / 1e9:.2f} | "
                        f"{cr.weak:,} | {cr.weak / r.instances:.2e} | {cr.weak / r.seconds / 1e6:,.2f} | "
                        f"{'forbidden' if not cr.check.holds else 'allowed'} | {len(cr.violations)} |")
            print(rows[-1], flush=True)
            data.append(cr.to_json() | {"preset": label, "label": args.label})
    emit(args.out, f"throughput{'-' + args.label if args.label else ''}", header(device) + [
        f"Budget {args.budget} s of graph replay per row; 'weak' = instances whose outcome satisfies "
        "the test's `exists` condition.", "",
        "| version | test | env | knobs | G inst/s | weak | weak rate | M weak/s | model | violations |",
        "|---|---|---|---|---|---|---|---|---|---|"] + rows, data)


def tune(args) -> None:
    prog = ptxmm.load(args.file)
    trials = run_tune(prog, args.n, args.budget, seed=args.seed)
    rows, data = [], []
    for tr in trials:
        r = tr.result
        rows.append(f"| {tr.name} | {r.run.env.short()} | {r.run.per_s / 1e9:.2f} | {r.weak:,} | "
                    f"{r.weak / r.run.instances:.2e} | {tr.weak_per_s:,.1f} | {len(r.violations)} |")
        data.append(r.to_json() | {"env_name": tr.name})
    best = max(trials, key=lambda t: t.weak_per_s)
    lines = header(best.result.run.device) + [
        f"Tuning `{prog.name}` ({args.file}): {len(trials)} environments x {args.budget} s.", "",
        "| env | knobs | G inst/s | weak | weak rate | weak/s | violations |",
        "|---|---|---|---|---|---|---|"] + rows
    lines += ["", f"Best by weak outcomes per second: **{best.name}** ({best.result.run.env.short()})."]
    if args.confirm:
        cr = crossval(prog, best.result.run.env, args.confirm, seed=7)
        lines += [f"Confirmation run of the best environment, {args.confirm} s: {cr.weak:,} weak in "
                  f"{cr.run.instances:,} instances ({cr.weak / cr.run.instances:.2e}), "
                  f"{len(cr.violations)} violations."]
        data.append(cr.to_json() | {"env_name": "confirm-" + best.name})
    emit(args.out, "tune-" + Path(args.file).stem, lines, data)


def xval(args) -> None:
    rows, data, device, skipped = [], [], "", []
    progs = []
    for f in collect(args.paths):
        try:
            prog = ptxmm.load(f)
            make_layout(prog)
            progs.append(prog)
        except PtxmmError as e:
            skipped.append(f"{f.name}: {e.message}")
    precompile(progs)
    total_v = 0
    for prog in progs:
        cr = crossval(prog, PRESETS[args.preset], args.budget)
        r = cr.run
        device = r.device
        seen = sum(1 for x in cr.rows if x.count)
        allowed = sum(1 for x in cr.rows if x.allowed)
        unseen = sum(1 for x in cr.rows if x.verdict == "unseen")
        v = len(cr.violations)
        total_v += v
        bb = sum(1 for x in cr.rows if x.verdict == "beyond-bound")
        cond = "-" if cr.check.holds is None else ("holds" if cr.check.holds else "fails")
        rows.append(f"| {prog.name} | {cond} | {allowed} | {seen} | {unseen} | {cr.weak:,} | "
                    f"{r.instances / 1e9:.2f} G | {r.dnf:,} | {bb} | {f'**{v}**' if v else 0} |")
        data.append(cr.to_json())
    lines = header(device) + [
        f"Preset `{args.preset}`, {args.budget} s per test, model `ptx`. {len(progs)} tests, "
        f"{total_v} violations, {len(skipped)} skipped (not supported on the device).", "",
        "| test | model verdict | allowed outcomes | seen | allowed-unseen | condition seen | instances "
        "| did not finish | beyond bound | violations |",
        "|---|---|---|---|---|---|---|---|---|---|"] + rows
    if skipped:
        lines += ["", "Skipped:", ""] + [f"- {s}" for s in skipped]
    emit(args.out, "crossval", lines, data)
    sys.exit(1 if total_v else 0)


def audit(args) -> None:
    rows, data, bad = [], [], 0
    progs = []
    for f in collect(args.paths):
        try:
            prog = ptxmm.load(f)
            progs.append((prog, make_layout(prog)))
        except PtxmmError:
            continue
    precompile([p for p, _ in progs])
    for prog, lay in progs:
        for r in sass.audit(prog, lay, compile_cubin(generate(lay))):
            bad += not r.ok
            rows.append(f"| {prog.name} | {r.thread} | {' '.join(r.expected)} | {' '.join(r.found)} | "
                        f"{'ok' if r.ok else '**DIFFERS**'} {r.note} |")
            data.append(r.__dict__ | {"test": prog.name})
    emit(args.out, "sass-audit", [f"_{time.strftime('%Y-%m-%d')}, nvcc -cubin -arch=sm_90 -O3_", "",
                                  f"{len(rows)} roles of {len(progs)} tests, {bad} differ.", "",
                                  "| test | thread | PTX memory ops | SASS memory ops | |",
                                  "|---|---|---|---|---|"] + rows, data)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("throughput")
    a.add_argument("--budget", type=float, default=1.0)
    a.add_argument("--presets", default="none,barrier",
                   help="presets, or name:knob=v/knob=v (see parse_envs)")
    a.add_argument("--tests", default=",".join(SHAPES))
    a.add_argument("--label", default="")
    b = sub.add_parser("tune")
    b.add_argument("file")
    b.add_argument("--n", type=int, default=12)
    b.add_argument("--budget", type=float, default=0.5)
    b.add_argument("--confirm", type=float, default=0.0)
    b.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("crossval")
    c.add_argument("paths", nargs="+")
    c.add_argument("--budget", type=float, default=0.3)
    c.add_argument("--preset", default="barrier")
    d = sub.add_parser("audit")
    d.add_argument("paths", nargs="+")
    for p in (a, b, c, d):
        p.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    {"throughput": throughput, "tune": tune, "crossval": xval, "audit": audit}[args.cmd](args)


if __name__ == "__main__":
    main()
