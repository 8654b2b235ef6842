"""Cross-validation: every outcome the GPU shows must be one the model allows.

For each test: the model's allowed outcomes (same observables as the device key), the device
histogram, and per outcome a verdict — ``ok`` (allowed, seen), ``unseen`` (allowed, not seen in N
instances: never "forbidden"), ``VIOLATION`` (seen, not allowed), ``beyond-bound`` (seen, not in the
model's set, but the model cut loop iterations at ``--unroll`` so the set may be incomplete)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import UnsupportedError
from ..ir.program import Program
from ..queries.checker import check
from ..semantics.builder import build
from ..semantics.outcomes import observables, satisfies, unspecified_observables
from ..semantics.result import CheckResult, Outcome
from .env import Env
from .harness import DeviceRun, Harness
from .hunt import HuntResult
from .layout import Layout, make_layout
from .sync import synchronized


@dataclass
class Row:
    outcome: Outcome
    allowed: bool
    count: int
    satisfies: bool | None
    same_sm: int
    verdict: str  # ok | unseen | VIOLATION | beyond-bound


@dataclass
class CrossResult:
    program: Program
    check: CheckResult
    run: DeviceRun
    rows: list[Row] = field(default_factory=list)
    hunt: HuntResult | None = None  # crossval --hunt: what the hunt for the unseen outcomes found

    @property
    def violations(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "VIOLATION"]

    @property
    def weak(self) -> int:
        """Observed instances whose outcome satisfies the test's condition."""
        return sum(r.count for r in self.rows if r.satisfies)

    def to_json(self) -> dict:
        run = self.run
        return {
            "name": self.program.name, "file": self.program.file, "model": self.check.model,
            "device": run.device, "env": run.env.as_dict(), "instances": run.instances,
            "seconds": round(run.seconds, 4), "instances_per_s": round(run.per_s),
            "did_not_finish": run.dnf, "checksum_ok": run.checksum_ok,
            "condition_holds_in_model": self.check.holds,
            "condition_instances": self.weak,
            "violations": len(self.violations),
            "outcomes": [{"values": dict(r.outcome.values), "allowed": r.allowed, "count": r.count,
                          "same_sm": r.same_sm, "satisfies": r.satisfies, "verdict": r.verdict,
                          "reproducibility": round(1 - math.exp(-r.count), 4)}
                         for r in self.rows],
        } | ({"hunt": self.hunt.to_json()} if self.hunt is not None else {})


def prepare(prog: Program, model: str = "ptx", unroll: int = 2) -> tuple[CheckResult, Layout]:
    """The model's outcomes and a device layout whose value codes cover every allowed value."""
    eg = build(prog, unroll=unroll)
    free = unspecified_observables(eg, observables(eg, "all"))
    if free:  # the model lists no value for them: every device value would look impossible
        raise UnsupportedError(f"{', '.join(sorted(free))}: a value the PTX ISA leaves unspecified "
                               "(division by zero), compared with the device", eg.warnings[0].pos,
                               "the model lets it be any value: check it with the model only")
    res = check(prog, model, unroll=unroll, observe="all", flags=False)
    if not res.outcomes and synchronized(prog):
        raise UnsupportedError("a test the model lets no execution finish (it deadlocks at a "
                               "barrier) on the device", None,
                               "on the GPU it would hang: check it with the model only")
    _refuse_hangs(prog, model, unroll)
    lay = make_layout(prog, [o.outcome.as_dict() for o in res.outcomes])
    if lay.observe != "all":
        res = check(prog, model, unroll=unroll, observe=lay.observe, flags=False)
    return res, lay


def _refuse_hangs(prog: Program, model: str, unroll: int) -> None:
    """A test the model lets hang (a spin or a barrier wait that may never end, docs/liveness.md) is
    not run: on the GPU it would spin until the kernel's timeout ends the whole batch."""
    from ..queries.hangs import find_hangs

    hangs = find_hangs(prog, model, unroll=unroll, every=False)
    if hangs:
        f = hangs[0].finding
        raise UnsupportedError(f"the model lets this test hang ({f.detail}) on the device",
                               None, "on the GPU it would spin until the timeout ends the batch: check it "
                               "with the model only (ptxmm check --liveness)")


def crossval(prog: Program, env: Env, budget_s: float = 1.0, model: str = "ptx", unroll: int = 2,
             iterations: int | None = None, seed: int = 1,
             prepared: tuple[CheckResult | None, Layout] | None = None,
             timeout_s: float = 60.0) -> CrossResult:
    """``prepared``: what :func:`prepare` returned for this program (a batch plans it ahead)."""
    res, lay = prepared if prepared and prepared[0] is not None else prepare(prog, model, unroll)
    run = Harness(prog, env, lay, seed=seed, timeout_s=timeout_s).run(budget_s, iterations)
    return judge(prog, res, run)


def judge(prog: Program, res: CheckResult, run: DeviceRun) -> CrossResult:
    eg = build(prog, unroll=0)
    allowed = {o.outcome for o in res.outcomes}
    seen = {o.outcome: o for o in run.observed}
    rows = []
    for o in sorted(allowed | set(seen), key=str):
        ob = seen.get(o)
        impossible = ob is not None and ob.impossible_value
        if ob is None:
            verdict = "unseen"
        elif o in allowed:
            verdict = "ok"
        else:  # an impossible value is a violation whatever the bound; else the bound may explain it
            verdict = "beyond-bound" if res.cut_paths and not impossible else "VIOLATION"
        rows.append(Row(o, o in allowed, ob.count if ob else 0,
                        None if impossible else satisfies(prog, eg, o), ob.same_sm if ob else 0, verdict))
    return CrossResult(prog, res, run, rows)
