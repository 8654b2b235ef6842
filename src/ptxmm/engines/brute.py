"""The brute-force engine, herd style: stream every candidate execution of
:mod:`ptxmm.semantics.executions` — a path per thread, an rf source per read, a partial coherence order per
location, a co-maximal write per observed location, an order of the fence.sc events, barrier
phases — and keep those the model accepts, evaluated with the concrete relation algebra (every
guard static). Slow, simple and independent of the solver: the test oracle of the Z3 engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model
from ..errors import UnsupportedError
from ..ir.program import CondExpr
from ..ir.values import evaluate
from ..semantics.events import EventGraph
from ..semantics.outcomes import Observable, eval_cond, value_expr
from ..semantics.result import Execution
from ..semantics.vocab import Candidates, base_env
from .base import NO_DEADLINE, Deadline, Raised
from .prune import guided_space


def _raised_elements(flags) -> list[tuple[str, tuple[int, ...]]]:
    """(flag name, events) of every element a concretely evaluated flag raises."""
    out = []
    for st, v in flags:
        if ax.holds(st.check, v) == st.negated:
            continue
        if st.negated and st.check in ("empty", "irreflexive"):
            elems = ax.merge_symmetric({k: g for k, g in ax.offending(st.check, v).items() if g is True},
                                       lambda a, b: True)
            out += [(st.name, k) for k in elems]
        else:
            out.append((st.name, ()))
    return out


_MEMO_MAX = 20_000


def refuse_unspecified(eg: EventGraph) -> None:
    """Concrete enumeration has no finite set of values to try for a value the PTX ISA leaves
    unspecified (any of 2^w: a division by zero, a timer, an %envreg): such a program is not for
    this engine (the Z3 engine lets the solver choose the value). The message names the
    instruction and its line."""
    if eg.unspecified:
        where = eg.unspecified[0].where  # a division's warning locates it; a timer's text has its line
        pos = eg.warnings[0].pos if eg.warnings and "division by zero" in where else None
        raise UnsupportedError("the brute-force engine cannot enumerate a value the PTX ISA leaves "
                               f"unspecified: {where}", pos,
                               "use --engine z3 (or auto): the solver lets the value be anything")


class BruteProblem:
    bounded_is_partial = True  # raised(bounded=True): the executions judged so far only

    def __init__(self, eg: EventGraph, model: Model, obs: list[Observable], cand: Candidates,
                 flags: bool = False, co_known: set | None = None, deadline: Deadline = NO_DEADLINE):
        self.eg, self.model, self.obs, self.cand, self.flags = eg, model, obs, cand, flags
        self.deadline = deadline
        # the judged executions of the first complete pass, kept (up to _MEMO_MAX of them) for the
        # next query: the outcomes and the raised flags are two passes over the same executions
        self._memo: list[tuple[Execution, list[str], list]] | None = None
        # every flag element the executions judged so far raise → the first such execution: what
        # a bounded race search answers (a check stopped at --max-outcomes)
        self._raised_so_far: dict[tuple[str, tuple[int, ...]], Execution] = {}
        refuse_unspecified(eg)

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

    def condition(self, e: CondExpr, key: Callable) -> Callable[[Execution], bool]:
        """A test condition over the observables, as a predicate on executions (``key(ref)``
        names a reference's observable)."""
        by_key = {o.key: o for o in self.obs}

        def holds(exe: Execution) -> bool:
            vals = dict(exe.values)

            def value(r) -> int:
                o = by_key[key(r)]
                return o.shown(evaluate(value_expr(self.eg, o, exe), vals))

            return eval_cond(e, value, lambda r: by_key[key(r)])

        return holds

    def on_paths(self, paths: dict[int, set[int]]) -> Callable[[Execution], bool]:
        """A goal: some thread ``t`` takes one of the paths ``paths[t]`` (as the Z3 engine's)."""
        return lambda exe: any(exe.paths[t] in ks for t, ks in paths.items())

    def find(self, goal: Callable[[Execution], bool] | None = None, negate: bool = False) -> Execution | None:
        """One allowed execution satisfying ``goal`` (or violating it), or None."""
        return next((exe for exe, _ in self.executions() if goal is None or goal(exe) != negate), None)

    def raised(self, bounded: bool = False) -> Iterator[Raised]:
        """For every element of a model flag some allowed execution raises, the first such
        execution (the elements are read off the evaluation that judged the execution). With
        ``bounded``: only in the executions judged so far (those behind the outcomes enumerated):
        a full pass over a space the enumeration stopped in can take for ever."""
        self.deadline.check()  # a check stopped already (a full pass looks at it as it goes)
        if bounded:
            found = self._raised_so_far
        else:
            found = {}
            for exe, _, elements in self._evaluated():
                for key in elements:
                    found.setdefault(key, exe)
        for (name, events), exe in list(found.items()):
            yield Raised(name, events, exe)

    def executions(self) -> Iterator[tuple[Execution, list[str]]]:
        """Every consistent execution (with the model's raised flags), as
        :class:`~ptxmm.semantics.executions.ExecutionSpace` generates them. The model does not depend on the
        final writes: it is evaluated once per rf, co, fence.sc order and phases."""
        for exe, names, _ in self._evaluated():
            yield exe, names

    def _evaluated(self) -> Iterator[tuple[Execution, list[str], list]]:
        """:meth:`executions`, with the (flag, events) elements each raises."""
        if self._memo is not None:
            yield from self._memo
            return
        memo: list | None = []
        so_far = self._raised_so_far
        for item in self._judged():
            for key in item[2]:
                so_far.setdefault(key, item[0])
            if memo is not None:
                memo.append(item)
                if len(memo) > _MEMO_MAX:
                    memo = None
            yield item
        self._memo = memo

    def _judged(self) -> Iterator[tuple[Execution, list[str], list]]:
        eg, cand = self.eg, self.cand
        fin_locs = sorted({o.loc for o in self.obs if o.loc is not None})
        space = guided_space(eg, cand, self.model, fin_locs=fin_locs, tick=self.deadline.check)
        verdicts: dict[tuple, list[str] | None] = {}
        frame = None
        for c in space:
            exe = c.execution
            if (exe.paths, exe.rf, exe.values, exe.co) != frame:
                frame = (exe.paths, exe.rf, exe.values, exe.co)
                verdicts.clear()
            key = (exe.scorder, exe.phases)
            if key not in verdicts:
                res = interp(self.model, base_env(eg, c.choice(eg), cand), flags=self.flags)
                verdicts[key] = None if not all(ax.holds(st.check, v) for st, v in res.axioms) else \
                    ([st.name for st, v in res.flags if ax.holds(st.check, v) != st.negated],
                     _raised_elements(res.flags))
            judged = verdicts[key]
            if judged is not None:
                yield exe, list(judged[0]), judged[1]
