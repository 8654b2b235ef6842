"""Data races (and every other model flag) as findings: a query on the same problem the condition
uses — the engine is asked for allowed executions in which some element of a model flag's
relation is present (:meth:`ptxmm.engines.Engine.raised`: one query for every element not yet
found, a witness settles all the elements it raises), so a finding always comes with its witness
and never depends on which outcomes were enumerated. A flag whose name ends in ``race`` (the PTX
models' ``data-race``) reports data races as the PTX ISA defines them (two conflicting accesses,
not both morally strong, unordered by causality); any other flag is reported under its own name."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace

from ..cat.ast import Flag
from ..cat.parser import Model
from ..engines import Deadline, TimedOut
from ..ir.program import Program
from ..semantics.events import EventGraph
from ..semantics.result import EventRef, Finding, FindingKind
from .query import CheckOptions, CheckRun, Found
from .refs import event_ref, where


def kind_of_flag(name: str) -> FindingKind:
    return FindingKind.RACE if name.endswith("race") else FindingKind.FLAG


def _operations(eg: EventGraph) -> dict[int, int]:
    """Each event of an atomic operation (a read and a write joined by ``rmw``) → its read half:
    the ISA's one memory operation (models/ptx-common.cat, ``same-op``)."""
    return {w: r for r, w in eg.edges.get("rmw", ())}


def _op_ref(eg: EventGraph, e: int, ops: dict[int, int]) -> EventRef:
    """A race names operations: an atomic's half is named as its instruction, without "(read)"
    or "(write)" (the event id stays the one that races, for the witness)."""
    ref = event_ref(eg, e)
    if e in ops or e in ops.values():
        ref = replace(ref, text=ref.text.replace(" (read)", "").replace(" (write)", ""))
    return ref


def of_raised(eg: EventGraph, raised: Iterable, outcome_of=None) -> tuple[Finding, ...]:
    """Findings from an engine's raised flag elements (``engines.Raised``), in a stable order
    (kind, name, events); ``outcome_of(execution)`` names each witness's outcome; a race says the
    location its accesses touch. A data race is a pair of operations (PTX ISA 8.7.1): the two
    halves of one atomic racing with the same access are one finding, and the dynamic event pairs
    of one pair of source operations on one location (a loop's unrolled iterations, the cases of
    a case-split address) are one finding too, counting them in ``event_pairs`` (its witness is
    that of the pair with the smallest event ids, so both engines name the same one)."""
    ops = _operations(eg)
    out, seen, races = [], set(), {}
    for r in raised:
        if kind_of_flag(r.flag) != FindingKind.RACE:
            out.append(Finding(kind_of_flag(r.flag), r.flag, tuple(event_ref(eg, e) for e in r.events),
                               r.witness, outcome_of(r.witness) if outcome_of else None))
            continue
        key = (r.flag, frozenset(ops.get(e, e) for e in r.events))
        if key in seen:
            continue
        seen.add(key)
        refs = tuple(_op_ref(eg, e, ops) for e in r.events)
        races.setdefault(_source_pair(r.flag, refs, where(eg, r.events)), []).append((refs, r))
    for pairs in races.values():
        refs, r = min(pairs, key=lambda p: tuple(sorted(e.eid for e in p[0])))
        out.append(Finding(FindingKind.RACE, r.flag, refs, r.witness,
                           outcome_of(r.witness) if outcome_of else None,
                           where=where(eg, r.events), event_pairs=len(pairs)))
    out.sort(key=lambda f: (f.kind, f.name, tuple(e.eid for e in f.events)))
    return tuple(out)


def _source_pair(flag: str, refs: tuple[EventRef, ...], location: str) -> tuple:
    """What a race reads as: its flag, location and two operations by thread, line and text, in
    either order (the same line printed twice is one finding)."""
    return flag, location, tuple(sorted((e.thread, e.line or 0, e.text) for e in refs))


# The race query is asked of the check's problem before the outcome enumeration (checker.run),
# where the engine's race search is the full answer whatever the enumeration did (the Z3 engine:
# ``bounded_is_partial`` False) — its answer is kept and stands for the query's once the
# enumeration is done (checker._ask), and dropped ("not checked") where the enumeration's status
# says the query is not asked (a time limit, the outcome cap, no execution), as before; the findings and their
# events are the same either way (a witness may be another execution of the same problem). Why
# (issue 40, session 19): a problem's first model is its dearest query, and the unsat race query
# asked first leaves the solver learnt clauses that make it cheaper; asked after the enumeration
# it is dearer too — the grid barrier at 12 blocks (z3 4.16, each side alone, same minutes): race
# query, first outcome, "no other outcome" 5.7 + 3.5 + 0.6 s first against 7.5 + 1.1 + 5.2 s
# after. Under a time limit (--timeout, the playground's) it has :data:`EARLY_SHARE` of the time
# left: past that its answer is dropped and the check goes on as without EARLY (the verdict, then
# the race query after the enumeration), so that a race query that would pass the limit never costs
# the verdict (checker._early). False: asked after the enumeration (the property tests compare the two).
EARLY = True
EARLY_SHARE = 0.5
# The early race query's conflict budget (Z3's max_conflicts per solver call): past it the early
# answer is dropped and the check goes on in the plain order, as past its share of a time limit.
# Why (issue 40, session 20): the order that pays depends on the kernel. The grid barrier's early
# query is unsat in 432 conflicts at 12 blocks (2.7 s) and 946 at 16 (10.2 s), and pays; the
# histogram at 128 threads (4 bins of 32 atomicAdds) had not answered after 7,528 conflicts and
# 27 s (146 s and still not: the whole check 64-154 s), while in the plain order its whole check
# takes 9.3 s. A count, not seconds, so that which order ran (and so the witnesses) is the same
# on every machine. None: no budget.
EARLY_CONFLICTS: int | None = 2000


def early_deadline(d: Deadline) -> Deadline:
    """The deadline of the race query asked first within the check's ``d``: :data:`EARLY_SHARE` of
    the time left (the same stop: Ctrl-C and the memory limit end it as they end the check)."""
    if d.at is None:
        return d
    now = time.perf_counter()
    return Deadline(min(d.at, now + EARLY_SHARE * (d.at - now)), d.stop)


def within_check(d: Deadline) -> bool:
    """Whether the check of deadline ``d`` may go on: not stopped, its limit not passed."""
    return (d.stop is None or d.stop.reason is None) and d.at is not None and time.perf_counter() < d.at


def early(r: CheckRun, pb, enumerates: bool) -> bool:
    """Whether the check ``r`` asks the race query of ``pb`` before the outcome enumeration
    (:data:`EARLY`): the enumeration runs (``enumerates``), races are asked, the model has a flag
    and the engine's race search does not depend on the enumeration."""
    return EARLY and enumerates and wants_flags(r.model, r.opts) and not pb.bounded_is_partial


def wants_flags(model: Model, opts: CheckOptions) -> bool:
    """Whether the check's problem must encode the model's flags (for this query)."""
    return opts.asks("races") and any(isinstance(st, Flag) for st in model.stmts)


class Races:
    """The model's flags as findings, asked of the check's problem once its condition is answered."""

    name = "races"
    own_problem = False

    def applies(self, prog: Program, opts: CheckOptions) -> bool:
        return opts.asks("races")

    def run(self, r: CheckRun) -> Found:
        if not wants_flags(r.model, r.opts):
            return Found((), "no flags in model")
        if r.status not in ("ok", "stopped"):
            return Found((), "not checked")
        # the enumeration stopped at --max-outcomes: the search is bounded as it was (brute force
        # answers from the executions it judged; a full pass could take for ever), and says so
        try:
            return self.search(r, r.pb, r.status == "stopped")
        except TimedOut as e:  # the deadline, Ctrl-C, the memory limit: the search stops with the check
            return Found((), e.reason)

    def search(self, r: CheckRun, pb, bounded: bool) -> Found:
        """The race findings of ``pb`` (TimedOut passes through), ``bounded`` or not."""
        found = of_raised(r.eg, pb.raised(bounded=bounded), r.outcome_of)
        return Found(found, "stopped" if bounded and pb.bounded_is_partial else "ok")


QUERY = Races()
