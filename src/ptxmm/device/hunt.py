"""Hunting allowed-but-unseen outcomes (``ptxmm crossval --hunt``).

After a test's cross-validation run, every outcome the model allows but the GPU did not show is a
target. The hunt spends a bounded budget (seconds of graph replay per test) on a portfolio of
environments chosen and ordered from the test's shape, and reports per target: found (the
environment, its count and rate, how many of those instances ran every role on one SM) or not
found within N instances (a 95 % upper bound on its rate: 3 / N). Every hunting run is itself a
cross-validation: an outcome the model forbids seen there is a violation like any other.

What the harness can vary (see env.py, layout.py, codegen.py):

* stress presets: memory-stress blocks hammering a scratch buffer (few/many blocks, one hot line or
  many lines);
* placement: roles the program puts in one CTA run in different warps of one block (never one warp);
  roles in different CTAs run in different blocks, and the grid decides how often those share an
  SM: ``spread`` (128 testing blocks, about one per SM: roles on different SMs) against ``packed``
  (1024 blocks of 128 threads, several per SM: more instances with every role on one SM);
* memory location strides: S = 1 (other instances' locations share 32-byte sectors and lines),
  S = 8 (a sector per location slot), S = 32 (a 128-byte line per location slot);
* barrier probability: 100 % (roles start together), 50 % (some iterations drift), 0 %;
* role rotation by warp on or off.

Planning (:func:`plan_hunt`) is pure Python: it is what the CPU test covers."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..ir.program import Branch
from ..semantics.result import Outcome
from .env import PRESETS, Env
from .layout import Layout

MIN_SLICE_S = 0.25  # the least replay time one hunting environment gets
BARRIER = PRESETS["barrier"]


@dataclass(frozen=True)
class HuntEnv:
    name: str
    env: Env
    what: str
    seconds: float = 0.0  # replay budget given to it by the plan


# the portfolio, before the test's shape orders it: name -> (environment, what it varies)
PORTFOLIO: dict[str, tuple[Env, str]] = {
    "none": (PRESETS["none"], "no barrier, no stress, the most instances"),
    "barrier": (BARRIER, "the default, for longer"),
    "sectors": (replace(BARRIER, stride=8), "S=8: each location slot in its own 32-byte sector"),
    "lines": (replace(BARRIER, stride=32), "S=32: each location slot in its own 128-byte line"),
    "bar50": (replace(BARRIER, barrier_pct=50), "barrier in half the iterations: roles drift"),
    "norot": (replace(BARRIER, rotate=False), "no role rotation by warp"),
    "spread": (replace(BARRIER, blocks=128), "128 testing blocks, about one per SM: roles in "
               "different CTAs run on different SMs"),
    "packed": (replace(BARRIER, blocks=1024, threads=128), "1024 blocks of 128 threads, several per "
               "SM: more instances with every role on one SM"),
    "runner": (PRESETS["runner"], "preset runner: fused roles, an instance's CTAs in adjacent blocks, "
               "per-thread barrier (as the public CUDA runner)"),
    "runner-stress": (replace(PRESETS["runner"], stress_blocks=64, stress_loops=64),
                      "preset runner with 64 stress blocks x 64 loops"),
    "runner-cuda12": (PRESETS["runner-cuda12"], "preset runner-cuda12: the runner's machine code from "
                      "CUDA 12.9's ptxas, whose block-scope fences let loads pass (only where "
                      "PTXMM_PTXAS_129 names that ptxas)"),
    "runner-cuda12-stress": (replace(PRESETS["runner-cuda12"], threads=64, barrier_pct=2, pre_stress=74,
                                     warp_gap=4, stress_blocks=128, stress_loops=184, stress_lines=13,
                                     stress_line_words=100),
                             "runner-cuda12 almost without the barrier (2 %), with pre-stress (74 loops) "
                             "and memory stress (128 blocks x 184 loops), 64-thread blocks, one CTA's roles "
                             "4 lanes apart: the runner-random draw that first showed 23 of the 38 runner "
                             "tests ptxmm had missed (docs/device/coverage.md, session 9)"),
    "runner-random": (PRESETS["runner-random"], "preset runner-random: a fresh runner-style launch "
                      "configuration (grid, block size, stride, barrier, stress, lane gap) every 0.25 s"),
    "light": (PRESETS["light"], "preset light: 16 stress blocks"),
    "heavy": (PRESETS["heavy"], "preset heavy: 128 stress blocks"),
    "hot-line": (replace(BARRIER, stress_blocks=64, stress_loops=64, stress_lines=1),
                 "64 stress blocks on one hot line"),
    "wide-stress": (replace(BARRIER, stress_blocks=128, stress_loops=256, stress_lines=16,
                            stress_line_words=256), "128 stress blocks over 16 lines of 1 KiB"),
}


@dataclass(frozen=True)
class Shape:
    """What the plan looks at: CTAs, roles, global locations, spin loops."""

    ctas: int
    roles: int
    locations: int
    loops: bool

    @classmethod
    def of(cls, lay: Layout) -> Shape:
        loops = any(isinstance(i, Branch) for t in lay.program.threads for i in t.instrs)
        return cls(len(lay.ctas), len(lay.roles), len(lay.globals_), loops)


def order(shape: Shape) -> list[str]:
    """The portfolio's environments for this shape, most promising first.

    Tests across CTAs try the ``runner`` placement (fused roles, adjacent CTAs) and memory stress
    first (the runner's families, docs/device/coverage.md), then ``light`` stress and placement: on
    the H100 the family hunts
    (docs/device/coverage.md) first found their outcomes in ``light`` 7 times, ``none`` 4, ``spread``
    2, ``packed`` 1, never in ``barrier`` (the run before the hunt already used it). Tests of three
    or more roles try memory stress early (the IRIW-like reorderings that need a busy memory system),
    tests with two or more locations try strides (false sharing on or off); heavy stress last for
    spin loops (it starves them). A test in one CTA skips ``spread``: fewer blocks only cost
    instances. Where ``PTXMM_PTXAS_129`` names CUDA 12.9's ptxas, tests across CTAs try
    ``runner-cuda12`` right after ``none``: it showed 78 of the 123 runner tests that CUDA 13 code
    never showed; then ``runner-cuda12-stress`` and, after the CUDA 13 stress environments,
    ``runner-random``: with them the session-9 run saw 556 of the runner's 559."""
    names = ["none", "barrier"]
    if shape.ctas > 1:  # the runner's placement first: on the H100 it showed most of the runner's
        # families first (docs/device/coverage.md), memory stress the IRIW/Z6.3/3.2W-like rest
        names = ["none", "runner", "light", "runner-stress", "spread", "packed", "barrier"]
        if os.environ.get("PTXMM_PTXAS_129"):
            names[1:1] = ["runner-cuda12", "runner-cuda12-stress"]
            names.insert(names.index("runner-stress") + 1, "runner-random")
    if shape.roles >= 3:
        names += ["light", "hot-line"]
    if shape.locations >= 2:
        names += ["lines", "sectors"]
    names += ["bar50", "norot", "packed", "light", "hot-line", "wide-stress", "lines", "sectors"]
    if shape.loops:
        names.remove("wide-stress")
        names.append("wide-stress")
    names.append("heavy")
    seen: list[str] = []
    for n in names:
        if n not in seen and not (n == "spread" and shape.ctas == 1):
            seen.append(n)
    return seen


def plan_hunt(shape: Shape, budget_s: float, min_slice_s: float = MIN_SLICE_S) -> list[HuntEnv]:
    """The environments to run and the seconds each gets: the budget split evenly over as many of
    the ordered portfolio as get at least ``min_slice_s`` each (at least one environment)."""
    names = order(shape)
    k = max(1, min(len(names), int(budget_s // min_slice_s)))
    per = budget_s / k
    return [HuntEnv(n, PORTFOLIO[n][0], PORTFOLIO[n][1], per) for n in names[:k]]


@dataclass
class Found:
    env: str
    knobs: str
    count: int
    instances: int
    same_sm: int

    @property
    def rate(self) -> float:
        return self.count / self.instances if self.instances else 0.0


@dataclass
class Target:
    outcome: Outcome
    satisfies: bool | None
    found: list[Found] = field(default_factory=list)
    instances_before: int = 0  # hunting instances spent before the first environment that showed it

    @property
    def best(self) -> Found | None:
        return max(self.found, key=lambda f: f.rate) if self.found else None


@dataclass
class Trial:
    name: str
    knobs: str
    instances: int
    seconds: float
    found: int  # targets it showed
    violations: int


@dataclass
class HuntResult:
    budget_s: float
    targets: list[Target]
    trials: list[Trial] = field(default_factory=list)
    violation_rows: list[tuple[str, Any]] = field(default_factory=list)  # (env, crossval Row)

    @property
    def instances(self) -> int:
        return sum(t.instances for t in self.trials)

    @property
    def seconds(self) -> float:
        return sum(t.seconds for t in self.trials)

    @property
    def violations(self) -> int:
        return len(self.violation_rows)

    @property
    def n_found(self) -> int:
        return sum(1 for t in self.targets if t.found)

    def to_json(self) -> dict:
        return {"budget_s": self.budget_s, "instances": self.instances, "seconds": round(self.seconds, 3),
                "violations": self.violations, "found": self.n_found, "targets": len(self.targets),
                "environments": [t.__dict__ | {"seconds": round(t.seconds, 3)} for t in self.trials],
                "outcomes": [_target_json(t, self.instances) for t in self.targets],
                "violation_outcomes": [{"env": e, "values": dict(r.outcome.values), "count": r.count}
                                       for e, r in self.violation_rows]}


def _target_json(t: Target, spent: int) -> dict:
    out: dict = {"values": dict(t.outcome.values), "satisfies": t.satisfies,
                 "status": "found" if t.found else "not found"}
    b = t.best
    if b is None:
        out |= {"instances": spent, "rate_bound": round(3 / spent, 12) if spent else None}
    else:
        out |= {"env": b.env, "knobs": b.knobs, "count": b.count, "instances": b.instances,
                "rate": b.rate, "same_sm": b.same_sm, "instances_before": t.instances_before,
                "found_in": [f.env for f in t.found]}
    return out


def targets_of(cr: Any) -> list[Target]:
    """The allowed-but-unseen outcomes of a cross-validation result."""
    return [Target(r.outcome, r.satisfies) for r in cr.rows if r.verdict == "unseen"]


RunEnv = Callable[[Env, float, int], Any]  # (env, seconds, seed) -> CrossResult


def hunt(targets: list[Target], plan: list[HuntEnv], run_env: RunEnv, seed: int = 1,
         keep_going: bool = False) -> HuntResult:
    """Run the planned environments until every target was seen (or all ran, ``keep_going``)."""
    res = HuntResult(sum(h.seconds for h in plan), targets)
    by_outcome = {t.outcome: t for t in targets}
    for k, h in enumerate(plan):
        if not keep_going and all(t.found for t in targets):
            break
        cr = run_env(h.env, h.seconds, seed + 1 + k)
        n = cr.run.instances
        shown = 0
        bad = 0
        for r in cr.rows:
            if r.verdict == "VIOLATION":
                res.violation_rows.append((h.name, r))
                bad += 1
            t = by_outcome.get(r.outcome)
            if t is not None and r.count:
                if not t.found:
                    t.instances_before = res.instances
                t.found.append(Found(h.name, cr.run.env.short(), r.count, n, r.same_sm))
                shown += 1
        res.trials.append(Trial(h.name, cr.run.env.short(), n, cr.run.seconds, shown, bad))
    return res
