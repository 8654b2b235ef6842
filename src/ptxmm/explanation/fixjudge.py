"""Whether a strengthened program forbids the target outcome, for the fix search
(:mod:`ptxmm.explanation.fix`), asked as cheaply as the answer allows.

A candidate fix forbids the target when no allowed execution of the changed program produces
it. Most candidates do not: an execution that shows the target allowed for one program (the
original, or a candidate already checked) usually shows it for the next one too. So the judge
keeps the witnesses found so far (counterexamples, as in counterexample-guided search) and,
for each candidate, maps them onto the changed program's event graph (a semantics or scope
change keeps every event; an inserted fence adds one, which reads and writes nothing) and
evaluates the model on each concretely — the evaluation the brute-force engine judges
executions with. One that satisfies every axiom and produces the target is an allowed execution
of the changed program: the candidate is no fix, and no solver is asked. Only when none does is
the engine asked (one verdict query, the condition only: no flags, no sites, no liveness), and an
execution it finds joins the witnesses. The answer is the engine's or an exhibited execution:
the same set of fixes as one engine check per candidate (tests/explanation compare the two).

A fence.sc inserted (or made so) needs a place in the executions' order of fence.sc events
(``scorder``, existential): each place is tried; with more than one such fence missing from a
witness's order the witness is skipped (the engine decides)."""

from __future__ import annotations

import time
from collections.abc import Callable

from .._infra.records import record
from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model
from ..ir.program import Program
from ..queries.checker import check
from ..semantics.builder import build
from ..semantics.events import EventGraph
from ..semantics.executions import concrete_env, executed
from ..semantics.outcomes import observables, outcome_of, satisfies
from ..semantics.result import Execution
from ..semantics.vocab import candidates
from .targets import with_target

POOL_MAX = 64  # witnesses kept (most recently useful first)


def event_map(eg: EventGraph, eg2: EventGraph, inserted: frozenset[int]) -> dict[int, int]:
    """Old event id → new event id (events of inserted fences have no old one)."""
    def seq(g: EventGraph, skip: frozenset[int]) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for e in g.events:
            if e.instr is None or id(e.instr) not in skip:
                out.setdefault(e.thread, []).append(e.eid)
        return out

    a, b = seq(eg, frozenset()), seq(eg2, inserted)
    return {x: y for t in a for x, y in zip(a[t], b.get(t, []))}


def map_execution(exe: Execution, emap: dict[int, int]) -> Execution:
    """An execution carried over by an event map (events without an image are dropped from the
    fence.sc order and the barrier phases; rf, co and the values touch mapped events only)."""
    f = emap.__getitem__
    vals = tuple((f(r) if r >= 0 else r, v) for r, v in exe.values)  # r < 0: an unspecified value
    return Execution(exe.paths, tuple((f(w), f(r)) for w, r in exe.rf),
                     tuple((f(a), f(b)) for a, b in exe.co), vals,
                     tuple(f(x) for x in exe.scorder if x in emap),
                     tuple((loc, f(w)) for loc, w in exe.final),
                     tuple((f(a), p) for a, p in exe.phases if a in emap))


@record(frozen=False)
class JudgeStats:
    engine_checks: int = 0  # candidates the engine was asked about
    by_witness: int = 0  # candidates a known witness showed are no fix
    time_s: float = 0.0


class Judge:
    """Judges candidate programs (``prog`` with changes applied) against ``target``; see the
    module docstring. ``witnesses=False``: every candidate asks the engine (the plain search)."""

    def __init__(self, prog: Program, model: Model, target, unroll: int = 2, witnesses: bool = True):
        self.prog, self.model, self.target, self.unroll = prog, model, target, unroll
        self.use_witnesses = witnesses
        self.eg = build(with_target(prog, target), unroll=unroll)
        self.pool: list[Execution] = []  # witnesses, as executions of self.eg
        self.stats = JudgeStats()
        self.verdicts: dict[object, bool] = {}  # a set of changes → whether it forbids
        self.original: bool | None = None

    def known(self, forbidden: bool, witness: Execution | None) -> None:
        """The original program's verdict, as a check of it (with the target as its condition,
        on the same event graph) found it, and its witness when allowed: not asked again."""
        self.original = forbidden
        if witness is not None and not forbidden:
            self._remember(witness)

    def forbids_changes(self, changes, applied: Callable[[], tuple[Program, frozenset[int]]]) -> bool:
        """Whether the program with ``changes`` (``applied()``: that program and the ids of the
        fences it inserted) forbids the target; a set of changes judged before is not judged again."""
        if changes not in self.verdicts:
            self.verdicts[changes] = self.forbids(*applied())
        return self.verdicts[changes]

    def forbids(self, prog2: Program | None = None, inserted: frozenset[int] = frozenset()) -> bool:
        """Whether ``prog2`` (``prog`` itself when None; ``inserted``: the ids of the fence
        instructions the changes inserted) forbids the target outcome."""
        t0 = time.perf_counter()
        try:
            if prog2 is None:  # the original program: asked once
                if self.original is None:
                    self.original = self._forbids(None, inserted)
                return self.original
            return self._forbids(prog2, inserted)
        finally:
            self.stats.time_s += time.perf_counter() - t0

    def _forbids(self, prog2: Program | None, inserted: frozenset[int]) -> bool:
        tprog = with_target(self.prog if prog2 is None else prog2, self.target)
        eg2 = self.eg if prog2 is None else build(tprog, unroll=self.unroll)
        emap = {e.eid: e.eid for e in self.eg.events} if prog2 is None else event_map(self.eg, eg2, inserted)
        if self.use_witnesses and self.pool and self._shown_allowed(tprog, eg2, emap):
            self.stats.by_witness += 1
            return False
        self.stats.engine_checks += 1
        res = check(tprog, self.model, unroll=self.unroll, verdict_only=True, flags=False, graph=eg2,
                    properties=("condition",))
        if res.holds is True and res.outcomes and res.outcomes[0].witness is not None:
            back = {v: k for k, v in emap.items()}
            try:
                self._remember(map_execution(res.outcomes[0].witness, back))
            except KeyError:  # an event of the changed program with no original: not kept
                pass
        return res.holds is False

    def _remember(self, exe: Execution) -> None:
        self.pool.insert(0, exe)
        del self.pool[POOL_MAX:]

    def _shown_allowed(self, tprog: Program, eg2: EventGraph, emap: dict[int, int]) -> bool:
        """Whether a known witness, carried over to ``eg2``, is an allowed execution producing
        the target (then it moves to the front of the pool)."""
        cand = candidates(eg2)
        obs = observables(eg2, "condition")
        for i, exe in enumerate(self.pool):
            try:
                exe2 = map_execution(exe, emap)
            except KeyError:
                continue
            for x in _sc_placements(eg2, exe2, cand.scf):
                if self._allowed(tprog, eg2, x, cand, obs):
                    self.pool.insert(0, self.pool.pop(i))
                    return True
        return False

    def _allowed(self, tprog: Program, eg2: EventGraph, exe: Execution, cand, obs) -> bool:
        if not satisfies(tprog, eg2, outcome_of(eg2, obs, exe), obs):
            return False
        res = interp(self.model, concrete_env(eg2, exe, cand), flags=False)
        return all(ax.holds(st.check, v) for st, v in res.axioms)


def _sc_placements(eg2: EventGraph, exe: Execution, scf) -> list[Execution]:
    """The execution with every executed fence.sc in its sc order: as it is; with one missing,
    once for each place it may take; with more missing, none (the engine decides)."""
    have = set(exe.scorder)
    ran = executed(eg2, exe)
    missing = [f for f in scf if f in ran and f not in have]
    if not missing:
        return [exe]
    if len(missing) > 1:
        return []
    order = list(exe.scorder)
    return [Execution(exe.paths, exe.rf, exe.co, exe.values, tuple(order[:k] + missing + order[k:]),
                      exe.final, exe.phases) for k in range(len(order) + 1)]
