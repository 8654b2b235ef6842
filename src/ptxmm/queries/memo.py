"""Campaign verdicts by test shape: a test whose event graph, as far as the model can tell, equals
one already decided in this process gets that test's verdict without a solver problem.

Generated tests share shapes: ``ptxmm gen`` crosses one cycle of accesses with fences, semantics and
scopes, and a model that names no semantics or scope (SC: ``po rf co fr`` only) cannot tell such
tests apart. The key (:func:`shape_key`) is the whole event graph the engine encodes — every event
with its kind, thread, program-order index, paths, location, width, value, value condition, tags,
barrier and agent; the paths with their assumptions and final registers; the dependency edges; the
initial writes; the threads' placements; the observables and the condition — with only what the
model provably never reads left out:

* the source instruction of each event (the encoding never reads it: it names the report's lines);
* an event's semantics when the model names none of the semantics sets (``WEAK RLX ACQ REL
  ACQ_REL SC``), except that a fence keeps whether it is a ``fence.sc`` when the model names
  ``scorder`` (the engine orders those fences with distinct free integer ranks, which any number of
  fences satisfies: unnamed, the order constrains nothing);
* an event's scope when the model names none of the scope sets (``CTA CLUSTER GPU SYS``) nor ``sr``.

The verdict of a check is a function of what this key holds (the engine builds its formula from
the event graph's fields above, the model's names and the condition), so two tests with one key
get one verdict, one status and one witness count; tests hold it to that against checks without
the memo. Kernels, values the ISA leaves unspecified and stopped checks (timeouts) are never
memoised."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter

from ..cat import ast
from ..cat.parser import Model, load_model
from ..engines import Deadline, TimedOut
from ..ir.program import Program
from ..semantics.builder import build
from ..semantics.events import Event, EventGraph, Kind
from ..semantics.outcomes import observables
from ..semantics.vocab import SCOPE_TAG, SEM_TAG
from .checker import check

# A campaign process keeps at most this many shapes (a few hundred bytes of key each).
MEMO_MAX = 100_000
# After this many tests without one shape seen twice the memo stops keying (a key costs ~0.3 ms,
# ~5 % of a check): under a model that names semantics and scopes generated tests rarely share
# one (ptx: none of the 3,710 of ``gen --size 6``). Only the cost changes: every test is checked.
GIVE_UP_AFTER = 256

# an event's fields but its instruction (never encoded), semantics and scope (kept as the model reads
# them): a tuple of plain values, whose repr costs half the event's own (issue 41)
_EVENT_FIELDS = attrgetter(*(f.name for f in fields(Event) if f.name not in ("instr", "sem", "scope")))

# id(model) → (the model, kept so that its id is not reused; model_reads(model))
_NAMES: dict[int, tuple[Model, tuple[bool, bool, bool]]] = {}


def model_reads(model: Model) -> tuple[bool, bool, bool]:
    """Whether ``model`` names a semantics set, whether it names a scope set (or ``sr``), and
    whether it names ``scorder`` (the order of the fence.sc events)."""
    got = _NAMES.get(id(model))
    if got is not None:
        return got[1]
    names: set[str] = set()
    for st in model.stmts:
        exprs = st.exprs if isinstance(st, (ast.Let, ast.LetRec)) else (st.expr,)
        for e in exprs:
            names |= ast.names(e)
    got = (bool(names & set(SEM_TAG.values())), bool(names & (set(SCOPE_TAG.values()) | {"sr"})),
           "scorder" in names)
    _NAMES[id(model)] = (model, got)
    return got


def shape_key(eg: EventGraph, model: Model) -> str | None:
    """The test's shape as ``model`` sees it (module docstring), or None when it is not memoised."""
    prog = eg.program
    if eg.unspecified or prog.layout is not None or prog.kernel is not None or prog.condition is None:
        return None
    sem, scope, scorder = model_reads(model)  # pins the model: its id stays its own
    events = []
    for e in eg.events:  # every field but instr, sem and scope, then those two as the model sees them
        keep_sem = e.sem if sem else ("sc" if scorder and e.kind == Kind.F and e.sem == "sc" else None)
        events.append((_EVENT_FIELDS(e), keep_sem, e.scope if scope else None))
    obs = observables(eg, "condition")
    parts = (id(model), model.path, model.name, eg.unroll, tuple(events), eg.paths, sorted(eg.edges.items()),
             sorted(eg.init.items()), eg.cut_paths, eg.awaits, sorted(eg.loc_of_name.items()),
             tuple((t.name, t.placement) for t in prog.threads), obs,
             prog.condition.quantifier, prog.condition.expr)
    return repr(parts)


@dataclass
class Verdict:
    """What a campaign records of one test's check."""

    holds: bool | None
    status: str  # the check's: "ok", "no-execution", "timeout", …
    n_outcomes: int  # the witnesses found (0 or 1: one query)
    memoised: bool = False  # answered from a test of the same shape


@dataclass
class VerdictMemo:
    """Verdicts by :func:`shape_key`, for one process's campaign."""

    seen: dict[str, Verdict] = field(default_factory=dict)
    hits: int = 0
    missed: dict[str, int] = field(default_factory=dict)  # model path → shapes stored
    hit: dict[str, bool] = field(default_factory=dict)  # model path → some test was answered
    given_up: set[str] = field(default_factory=set)  # model paths no longer keyed (GIVE_UP_AFTER)

    def verdict(self, prog: Program, model: str | Model, unroll: int = 2,
                timeout: float | None = None) -> Verdict:
        """The condition's verdict of ``prog`` by one query, as ``ptxmm test`` asks it
        (``check(..., observe="condition", flags=False, verdict_only=True)``), or a memoised one."""
        m = load_model(model) if isinstance(model, str) else model
        if prog.layout is not None or prog.condition is None or m.path in self.given_up:
            return self._check(prog, m, unroll, timeout, None)
        deadline = Deadline.after(timeout)
        try:
            eg = build(prog, unroll=unroll, look=deadline.check)
        except TimedOut:
            return Verdict(None, "timeout", 0)
        key = shape_key(eg, m)
        got = self.seen.get(key) if key is not None else None
        if got is not None:
            self.hits += 1
            self.hit[m.path] = True
            return replace(got, memoised=True)
        left = None if deadline.at is None else max(deadline.at - time.perf_counter(), 1e-3)
        v = self._check(prog, m, unroll, left, eg)
        if key is not None and v.status in ("ok", "no-execution") and len(self.seen) < MEMO_MAX:
            self.seen[key] = v
            n = self.missed[m.path] = self.missed.get(m.path, 0) + 1
            if n >= GIVE_UP_AFTER and not self.hit.get(m.path):
                self.given_up.add(m.path)
        return v

    @staticmethod
    def _check(prog: Program, m: Model, unroll: int, timeout: float | None, eg) -> Verdict:
        res = check(prog, m, unroll=unroll, observe="condition", flags=False, verdict_only=True,
                    timeout=timeout, graph=eg)
        return Verdict(res.holds, res.status, len(res.outcomes))


# One per process: a campaign's worker answers its tests with it (workers are processes).
MEMO = VerdictMemo()
