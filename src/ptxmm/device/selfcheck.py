"""Harness self-checks: SB with relaxed accesses in different CTAs must
show its weak outcome, or the harness has lost its teeth; a single-thread test must show its one
possible outcome and nothing else."""

from __future__ import annotations

from .. import load
from .._infra.resources import data_dir
from .crossval import crossval
from .env import Env

SB = "classic/SB-relaxed.ptx"
SANITY = "device/sanity-single-thread.ptx"
MIN_SB_RATE = 1e-4


def self_check(env: Env, model: str = "ptx", budget_s: float = 0.3) -> tuple[bool, list[str]]:
    ex = data_dir("examples")
    lines = []
    ok = True
    sb = crossval(load(ex / SB), env, budget_s, model)
    rate = sb.weak / sb.run.instances if sb.run.instances else 0.0
    if rate >= MIN_SB_RATE:
        lines.append(f"self-check: SB relaxed weak outcome at {rate:.1e} of "
                     f"{sb.run.instances:,} instances: the harness exposes weak behaviour")
    else:
        ok = False
        lines.append(f"[bold red]self-check: HARNESS NOT EXPOSING weak behaviour[/bold red] (SB relaxed "
                     f"weak rate {rate:.1e} < {MIN_SB_RATE:.0e}); unseen outcomes below mean little")
    san = crossval(load(ex / SANITY), env, budget_s, model)
    if san.violations or len(san.run.observed) != 1 or san.run.dnf or not san.run.checksum_ok:
        ok = False
        lines.append(f"[bold red]self-check: single-thread sanity test FAILED[/bold red]: "
                     f"{[str(o.outcome) for o in san.run.observed]}")
    else:
        lines.append(f"self-check: single-thread sanity test shows only its one outcome in "
                     f"{san.run.instances:,} instances")
    return ok, lines
