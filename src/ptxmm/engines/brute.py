"""The brute-force engine, herd style: stream every candidate execution of
:mod:`ptxmm.executions` — a path per thread, an rf source per read, a partial coherence order per
location, a co-maximal write per observed location, an order of the fence.sc events, barrier
phases — and keep those the model accepts, evaluated with the concrete relation algebra (every
guard static). Slow, simple and independent of the solver: the test oracle of the Z3 engine."""

from __future__ import annotations

from collections.abc import Iterator

from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model
from ..events import EventGraph
from ..executions import ExecutionSpace
from ..outcomes import Observable, value_expr
from ..result import Execution
from ..values import evaluate
from ..vocab import Candidates, base_env
from . import NO_DEADLINE, Deadline


class BruteProblem:
    def __init__(self, eg: EventGraph, model: Model, obs: list[Observable], cand: Candidates,
                 flags: bool = False, co_known: set | None = None, deadline: Deadline = NO_DEADLINE):
        self.eg, self.model, self.obs, self.cand, self.flags = eg, model, obs, cand, flags
        self.deadline = deadline

    def close(self) -> None:
        """Nothing held."""

    def outcomes(self) -> Iterator[tuple[tuple[int, ...], Execution, list[str]]]:
        """Every allowed outcome once (the first execution found for it as witness)."""
        seen: set[tuple[int, ...]] = set()
        for exe, raised in self.executions():
            vals = dict(exe.values)
            key = tuple(evaluate(value_expr(self.eg, o, exe), vals) for o in self.obs)
            if key not in seen:
                seen.add(key)
                yield key, exe, raised

    def executions(self) -> Iterator[tuple[Execution, list[str]]]:
        """Every consistent execution (with the model's raised flags), as
        :class:`~ptxmm.executions.ExecutionSpace` generates them. The model does not depend on the
        final writes: it is evaluated once per rf, co, fence.sc order and phases."""
        eg, cand = self.eg, self.cand
        fin_locs = sorted({o.loc for o in self.obs if o.loc is not None})
        space = ExecutionSpace(eg, cand, fin_locs=fin_locs, tick=self.deadline.check)
        verdicts: dict[tuple, list[str] | None] = {}
        frame = None
        for c in space:
            exe = c.execution
            if (exe.paths, exe.rf, exe.values, exe.co) != frame:
                frame = (exe.paths, exe.rf, exe.values, exe.co)
                verdicts.clear()
            key = (exe.sc, exe.phases)
            if key not in verdicts:
                res = interp(self.model, base_env(eg, c.choice(eg), cand), flags=self.flags)
                verdicts[key] = None if not all(ax.holds(st.check, v) for st, v in res.axioms) else \
                    [st.name for st, v in res.flags if ax.holds(st.check, v) != st.negated]
            raised = verdicts[key]
            if raised is not None:
                yield exe, list(raised)
