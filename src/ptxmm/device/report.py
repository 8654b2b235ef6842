"""Terminal reports of device runs and cross-validations (rich)."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from .crossval import CrossResult
from .harness import DeviceRun
from .hunt import HuntResult


def _fmt(o) -> str:
    return " ".join(f"{k}={'?' if v is None else v}" for k, v in o.values)


def _rate(c: int, n: int) -> str:
    return f"{c / n:.2e}" if n and c else "0"


def render_run(run: DeviceRun, console: Console) -> None:
    console.print(f"[bold]{run.program.name}[/bold]  ({run.program.file}) on {run.device}")
    console.print(f"  env {run.env.short()};  {run.instances:,} instances in {run.seconds:.2f} s = "
                  f"{run.per_s / 1e9:.2f} G instances/s")
    t = Table("outcome", "count", "rate", "same SM", box=None)
    for o in run.observed:
        t.add_row(_fmt(o.outcome), f"{o.count:,}", _rate(o.count, run.instances), f"{o.same_sm:,}")
    if run.dnf:
        t.add_row("(did not finish: spin bound hit)", f"{run.dnf:,}", _rate(run.dnf, run.instances), "")
    console.print(t)
    if not run.checksum_ok:
        console.print("[bold red]histogram total differs from the instance count[/bold red]")


def render_cross(cr: CrossResult, console: Console) -> None:
    run = cr.run
    n = run.instances
    console.print(f"[bold]{cr.program.name}[/bold]  ({cr.program.file})  model {cr.check.model}, "
                  f"{run.device}")
    console.print(f"  env {run.env.short()};  {n:,} instances, {run.per_s / 1e9:.2f} G/s")
    t = Table("outcome", "model", "observed", "rate", "same SM", "cond", "verdict", box=None)
    for r in cr.rows:
        style = {"VIOLATION": "bold red", "unseen": "dim", "beyond-bound": "yellow"}.get(r.verdict, "")
        t.add_row(_fmt(r.outcome), "allowed" if r.allowed else "forbidden", f"{r.count:,}",
                  _rate(r.count, n), f"{r.same_sm:,}" if r.count else "",
                  "" if r.satisfies is None else ("✓" if r.satisfies else ""),
                  f"[{style}]{r.verdict}[/{style}]" if style else r.verdict)
    console.print(t)
    if run.dnf:
        console.print(f"  did not finish (spin bound hit): {run.dnf:,}")
    unseen = [r for r in cr.rows if r.verdict == "unseen"]
    if unseen:
        console.print(f"  {len(unseen)} allowed outcome(s) unseen: rate < {3 / n:.1e} "
                      "(95 % bound); allowed-but-unseen is not a failure")
    if cr.weak:
        console.print(f"  condition seen {cr.weak:,} times ({_rate(cr.weak, n)}, "
                      f"{cr.weak / run.seconds:,.0f}/s; reproducibility {1 - math.exp(-cr.weak):.3f})")
    for r in cr.violations:
        console.print(f"[bold red]VIOLATION[/bold red] {cr.program.name}: observed {_fmt(r.outcome)} "
                      f"{r.count:,} times; the model forbids it")
    if not run.checksum_ok:
        console.print("[bold red]histogram total differs from the instance count[/bold red]")


def render_hunt(h: HuntResult, console: Console) -> None:
    """Per allowed-unseen outcome: found (environment, count, rate) or not found within N instances."""
    console.print(f"  hunt: {h.n_found} of {len(h.targets)} unseen outcome(s) found; "
                  f"{len(h.trials)} environment(s), {h.instances:,} instances in {h.seconds:.1f} s "
                  f"(budget {h.budget_s:g} s)")
    t = Table("outcome", "cond", "hunted", "env", "count", "rate", "same SM", box=None)
    for x in h.targets:
        cond = "" if x.satisfies is None else ("✓" if x.satisfies else "")
        b = x.best
        if b is None:
            t.add_row(_fmt(x.outcome), cond, f"[dim]not found in {h.instances:,}[/dim]", "", "",
                      f"< {3 / h.instances:.1e}" if h.instances else "", "")
        else:
            t.add_row(_fmt(x.outcome), cond, "found", f"{b.env} ({b.knobs})", f"{b.count:,}",
                      _rate(b.count, b.instances), f"{b.same_sm:,}")
    console.print(t)
    for env, r in h.violation_rows:
        console.print(f"[bold red]VIOLATION[/bold red] (hunt, env {env}): observed {_fmt(r.outcome)} "
                      f"{r.count:,} times; the model forbids it")
