"""The condition and the outcomes: asked as narrowly as they can be. With ``verdict_only`` the
test's condition is one satisfiability query (exists: an allowed execution satisfying it; forall:
one violating it) plus its witness; otherwise every allowed outcome is enumerated, projected on
the observables (a value the PTX ISA leaves unspecified is left out of the list, and one query
decides a condition that names it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..engines import TimedOut
from ..errors import Diagnostic
from ..ir.program import Program, cond_refs, format_ref
from ..semantics.outcomes import (
    Observable,
    canonical,
    outcome_of,
    satisfier,
    satisfies,
    unspecified_observables,
)
from ..semantics.result import Outcome, OutcomeInfo
from .query import CheckRun

# An enumeration lists at most this many outcomes unless --max-outcomes says otherwise: past it the
# check's status is "capped" (more outcomes are allowed and not enumerated; the verdict unknown).
# A listed outcome keeps its values and its witness packed (~1.5 KiB in all): 20,000 take ~30 MB;
# sorting, reporting and freeing them after the deadline then take a tenth of a second.
LIST_MAX = 20_000


def answer(r: CheckRun, pb, one_query: bool, by_query: bool, deciding: Callable) -> tuple[bool | None, str]:
    """The condition's verdict when a query decides it (else None: the outcomes judge it) and what
    became of the question; the outcomes found go into ``r.found``. ``deciding()``: a problem
    over every observable, for a condition that names a value too free to list."""
    try:
        holds, status = None, "ok"
        if one_query:
            holds, status = _query(r, pb)
        else:
            if by_query:  # the condition names a value too free to list: one query decides it
                holds, status = _decide(r, deciding)
            if status != "no-execution":
                status = _enumerate(r, pb, judge=not by_query)
    except TimedOut as e:  # the deadline, Ctrl-C or the memory limit: what was found is kept
        holds, status = None, e.reason
    return holds, status


def _decide(r: CheckRun, deciding: Callable) -> tuple[bool | None, str]:
    """The condition by one query on a problem that observes every observable (the enumeration
    lists fewer): its witness is not listed."""
    pb = deciding()
    try:
        return _query(r, pb, record=False)
    finally:
        pb.close()


def unspecified(prog: Program, eg, obs: list[Observable], one_query: bool):
    """Values the PTX ISA leaves unspecified (division by zero): the program with the event
    graph's warnings, the observables an enumeration lists (not the ones that may carry an
    unspecified value: up to 2^w values each; all of them for ``one_query``, whose witness shows
    its values), and whether the condition names one left out (then one solver query decides
    it, exactly)."""
    if not eg.unspecified:  # the graph's other warnings (elect.sync) still reach the report
        return (replace(prog, warnings=tuple(prog.warnings) + tuple(eg.warnings)) if eg.warnings
                else prog), obs, False
    free = set() if one_query else unspecified_observables(eg, obs)
    notes = tuple(eg.warnings)
    if free:
        names = ", ".join(o.key for o in obs if o.key in free)
        notes += (Diagnostic(f"{names} may hold a value the PTX ISA leaves unspecified: left out of "
                             "the listed outcomes (it may be any value)", None,
                             "the condition is decided by one solver query; --observe condition "
                             "shows one witness with its value"),)
    keys = {format_ref(canonical(prog, eg, r)) for r in cond_refs(prog.condition.expr)} \
        if prog.condition is not None else set()
    return (replace(prog, warnings=tuple(prog.warnings) + notes), [o for o in obs if o.key not in free],
            bool(keys & free))


def _query(r: CheckRun, pb, record: bool = True) -> tuple[bool | None, str]:
    """The condition as one query: exists/~exists — an allowed execution satisfying it; forall —
    one violating it. Without a witness, when the unroll bound cut paths (or an await dropped the
    executions that spin forever, as the bound would), a second query asks whether any execution
    finishes within the bound at all (else "no-execution"). A program whose
    every execution deadlocks at a barrier has no execution either, and its condition is judged
    vacuously, as herd7 and Dat3M do (the Dat3M corpus's deadlock tests expect it)."""
    prog, eg = r.prog, r.eg
    cond = prog.condition
    c = pb.condition(cond.expr, lambda ref: format_ref(canonical(prog, eg, ref)))
    wit = pb.find(c, negate=cond.quantifier == "forall")
    if wit is not None and record:
        o = outcome_of(eg, r.obs, wit)
        r.found.append(OutcomeInfo(o, satisfies(prog, eg, o, r.listed), wit, []))
    elif wit is None and (eg.cut_paths or eg.awaits) and pb.find() is None:
        return None, "no-execution"
    return {"exists": wit is not None, "~exists": wit is None, "forall": wit is None}[cond.quantifier], "ok"


def _enumerate(r: CheckRun, pb, judge: bool = True) -> str:
    """Every allowed outcome into ``r.found`` (kept when the deadline passes), judged as it comes;
    "ok", "stopped" at ``max_outcomes``, or "capped" at :data:`LIST_MAX`."""
    found, obs, opts, prog, eg = r.found, r.listed, r.opts, r.prog, r.eg
    # Observable.shown, bound once per observable (an unsigned value shows as its low bits)
    keys = [o.key for o in obs]
    shown = [o.shown if o.signed else ((1 << o.width) - 1).__and__ for o in obs]
    cap = opts.max_outcomes if opts.max_outcomes is not None else LIST_MAX
    stop, judge = r.deadline.stop, judge and prog.condition is not None
    sat = satisfier(prog, eg, obs) if judge else _none
    it = pb.outcomes()
    try:
        for values, wit, fl in it:
            o = Outcome(tuple(zip(keys, [f(v) for f, v in zip(shown, values)])))
            found.append(OutcomeInfo(o, sat(o), wit, fl))
            if stop is not None:
                stop.found = len(found)
            if opts.progress:
                opts.progress(len(found))
            if len(found) >= cap:
                return "stopped" if opts.max_outcomes is not None else "capped"
        return "ok"
    finally:
        it.close()  # an enumeration stopped early gives its solver scopes back


def _none(o) -> None:
    return None
