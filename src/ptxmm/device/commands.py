"""The device commands' batch logic (``crossval``, ``run``, ``tune``, ``audit``), kept out of the click
shell: plan every file, run what can run, report every file, write the JSON, return the exit code."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..errors import PtxmmError
from ..ir.program import Program
from .batch import NO_DEVICE, Batch, Job, Progress, Skip, plan, run_batch, write_json
from .env import Env


@dataclass
class Campaign:
    """What one device command does with each planned file."""

    command: str  # crossval | run | tune | audit
    run_one: Callable[[Job], Any]
    render: Callable[[Any], None]
    to_json: Callable[[Any], dict]
    violations: Callable[[Any], int]
    measure: Callable[[Any], tuple[int, float]] | None = None
    model: str | None = None  # check each file against this model while planning
    unroll: int = 2
    ready: Callable[[], PtxmmError | None] | None = None  # what the command needs, else why not
    planner: Callable[..., list] | None = None  # plans the files instead of batch.plan (kernels too)


def device_error() -> PtxmmError | None:
    """Why CuPy cannot run kernels here, or None."""
    from .harness import cupy

    try:
        cupy()
    except PtxmmError as e:
        return e
    return None


def cuobjdump_error() -> PtxmmError | None:
    from . import sass

    return None if sass.available() else PtxmmError("cuobjdump is not on PATH", None,
                                                    "install the CUDA toolkit")


def render_skips(batch: Batch, console: Console) -> None:
    if not batch.skipped:
        return
    t = Table("not run", "reason", "why", box=None)
    for s in batch.skipped:
        msg = s.message.splitlines()[0] if s.message else ""
        t.add_row(s.file, s.reason, (f"{s.position}: " if s.position else "") + msg)
    console.print(t)


def execute(c: Campaign, paths: list[Path], console: Console, err: Console,
            json_out: Callable[[dict], None], pre: Callable[[], int] | None = None,
            extra: dict | None = None) -> tuple[int, Batch]:
    """Plan, (self-check), run, report, write JSON. Returns (exit code, batch)."""
    dev = c.ready() if c.ready else None
    if dev is not None:
        err.print(str(dev), markup=False, highlight=False)
        batch = Batch([Skip.of(p, NO_DEVICE, dev) for p in paths])
        json_out(batch.to_json(c.command, 0, c.to_json, (extra or {}) | {"error": dev.message}))
        return 2, batch
    violations = 0
    try:
        with err.status("planning", spinner="dots") if err.is_terminal else _Null() as st:
            items = (c.planner or plan)(paths, c.model, c.unroll,
                         progress=(lambda m: st.update(m)) if err.is_terminal else None)
        violations += pre() if pre else 0
    except KeyboardInterrupt:
        batch = Batch([Skip(str(p), "interrupted", "interrupted while planning") for p in paths],
                      interrupted=True)
    else:
        with Progress(err, sum(isinstance(i, Job) for i in items)) as prog:
            batch = run_batch(items, c.run_one, on_result=c.render, progress=prog, measure=c.measure)
    violations += sum(c.violations(r) for r in batch.results)
    render_skips(batch, console)
    console.print(batch.summary_line({"crossval": "cross-validated", "audit": "audited"}.get(
        c.command, "run"), violations))
    json_out(batch.to_json(c.command, violations, c.to_json, extra))
    return batch.exit_code(violations), batch


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


def json_to_file(path: str | None) -> Callable[[dict], None]:
    return lambda data: write_json(path, data)


def json_to_stdout(enabled: bool) -> Callable[[dict], None]:
    def out(data: dict) -> None:
        if enabled:
            print(json.dumps(data, indent=2))

    return out


# -- the four commands -------------------------------------------------------------------------

def crossval_campaign(env_for: Callable[[Program], Env], budget: float, iterations: int | None,
                      seed: int, model: str, unroll: int, timeout: float, console: Console,
                      hunt_budget: float | None = None) -> Campaign:
    """``hunt_budget``: seconds per test to hunt its allowed-unseen outcomes (``--hunt``), or None."""
    from .crossval import crossval
    from .hunt import Shape, hunt, plan_hunt, targets_of
    from .report import render_cross, render_hunt

    def run_one(job: Job):
        prepared = (job.check, job.layout)
        cr = crossval(job.prog, env_for(job.prog), budget, model, unroll, iterations, seed,
                      prepared=prepared, timeout_s=timeout)
        targets = targets_of(cr)
        if hunt_budget and targets:
            def run_env(env: Env, seconds: float, s: int):
                return crossval(job.prog, env, seconds, model, unroll, None, s, prepared=prepared,
                                timeout_s=timeout)

            cr.hunt = hunt(targets, plan_hunt(Shape.of(job.layout), hunt_budget), run_env, seed)
        return cr

    def render(cr) -> None:
        render_cross(cr, console)
        if cr.hunt is not None:
            render_hunt(cr.hunt, console)
        console.print()

    def violations(cr) -> int:
        return len(cr.violations) + (cr.hunt.violations if cr.hunt is not None else 0)

    def measure(cr) -> tuple[int, float]:
        h = cr.hunt
        return (cr.run.instances + (h.instances if h else 0), cr.run.seconds + (h.seconds if h else 0.0))

    return Campaign("crossval", run_one, render, lambda cr: cr.to_json(), violations, measure,
                    model=model, unroll=unroll, ready=device_error)


def run_json(r) -> dict:
    return {"name": r.program.name, "file": r.program.file, "device": r.device, "env": r.env.as_dict(),
            "instances": r.instances, "seconds": r.seconds, "instances_per_s": r.per_s,
            "did_not_finish": r.dnf, "checksum_ok": r.checksum_ok,
            "outcomes": [{"values": dict(o.outcome.values), "count": o.count, "same_sm": o.same_sm}
                         for o in r.observed]}


def run_campaign(env_for: Callable[[Program], Env], budget: float, iterations: int | None, seed: int,
                 timeout: float, console: Console, quiet: bool) -> Campaign:
    from .harness import Harness
    from .report import render_run

    def run_one(job: Job):
        return Harness(job.prog, env_for(job.prog), job.layout, seed=seed, timeout_s=timeout).run(
            budget, iterations)

    def render(r) -> None:
        if not quiet:
            render_run(r, console)
            console.print()

    return Campaign("run", run_one, render, run_json, lambda r: 0 if r.checksum_ok else 1,
                    lambda r: (r.instances, r.seconds), ready=device_error)


def tune_campaign(n_random: int, budget: float, model: str, seed: int, timeout: float,
                  console: Console) -> Campaign:
    from .tune import tune

    def run_one(job: Job):
        return job.prog, tune(job.prog, n_random, budget, model, seed, prepared=(job.check, job.layout),
                              timeout_s=timeout)

    def render(r) -> None:
        prog, trials = r
        t = Table("env", "knobs", "G inst/s", "weak", "weak rate", "weak/s", "violations", box=None,
                  title=f"{prog.name} ({prog.file})", title_justify="left")
        for tr in trials:
            x = tr.result
            t.add_row(tr.name, x.run.env.short(), f"{x.run.per_s / 1e9:.2f}", f"{x.weak:,}",
                      f"{x.weak / x.run.instances:.2e}", f"{tr.weak_per_s:,.0f}", str(len(x.violations)))
        console.print(t)
        best = max(trials, key=lambda x: x.weak_per_s)
        console.print(f"best: {best.name} ({best.result.run.env.short()}), {best.weak_per_s:,.0f} weak/s"
                      + ("; saved for --stress tuned" if best.weak_per_s else
                         "; nothing weak seen, not saved") + "\n")

    def to_json(r) -> dict:
        prog, trials = r
        best = max(trials, key=lambda x: x.weak_per_s)
        return {"name": prog.name, "file": prog.file, "best": best.name,
                "best_env": best.result.run.env.as_dict(), "best_weak_per_s": best.weak_per_s,
                "trials": [{"name": tr.name, "weak_per_s": tr.weak_per_s} | tr.result.to_json()
                           for tr in trials]}

    def measure(r) -> tuple[int, float]:
        return (sum(t.result.run.instances for t in r[1]), sum(t.result.run.seconds for t in r[1]))

    return Campaign("tune", run_one, render, to_json,
                    lambda r: sum(len(t.result.violations) for t in r[1]), measure, model=model,
                    ready=device_error)


def audit_campaign(console: Console) -> Campaign:
    from . import sass

    def run_one(job: Job):
        return job.prog, sass.audit(job.prog, job.layout, job.cubin)

    def render(r) -> None:
        prog, rows = r
        for x in rows:
            mark = "ok" if x.ok else "[bold red]DROPPED/REORDERED[/bold red]"
            console.print(f"{prog.name:32s} {x.thread:4s} expected {' '.join(x.expected) or '-':24s}"
                          f" sass {' '.join(x.found) or '-':24s} {mark} {x.note}")

    def to_json(r) -> dict:
        prog, rows = r
        return {"name": prog.name, "file": prog.file, "roles": [x.__dict__ for x in rows]}

    return Campaign("audit", run_one, render, to_json, lambda r: sum(not x.ok for x in r[1]),
                    ready=cuobjdump_error)
