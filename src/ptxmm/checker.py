"""``check``: the public entry point. Program → event graph → one engine → CheckResult.

Questions are asked as narrowly as they can be: with ``verdict_only`` the test's condition is one
satisfiability query (exists: an allowed execution satisfying it; forall: one violating it) plus
its witness; otherwise every allowed outcome is enumerated, projected on the observables."""

from __future__ import annotations

import time

from .api_args import check_args
from .cat.parser import Model, load_model, require_axioms
from .engines import Deadline, TimedOut, pick
from .events import build
from .gcpause import no_gc
from .outcomes import Observable, canonical, observables, outcome_of, satisfies, verdict
from .program import Program, format_ref
from .result import CheckResult, Outcome, OutcomeInfo
from .vocab import candidates

# Relation analysis of co pays off once a location has many writes; below this many undecided
# co pairs the solver settles them faster than the extra model evaluation would.
CO_ANALYSIS_MIN = 40


def check(prog: Program, model: str | Model = "ptx", *, engine: str = "auto", unroll: int = 2,
          observe: str = "all", flags: bool = True, verdict_only: bool = False,
          max_outcomes: int | None = None, progress=None, timeout: float | None = None,
          allow_no_axioms: bool = False) -> CheckResult:
    """Enumerate every outcome of ``prog`` the model allows and judge its condition.

    ``engine``: "z3", "brute", or "auto" (brute when the candidate space is tiny, else z3; the
    result's ``engine`` names the one that ran).
    ``verdict_only``: decide the condition with one query (the Z3 engine) instead of enumerating;
    ``outcomes`` then holds at most that query's witness. ``max_outcomes``: stop enumerating
    after that many (the result says so). ``progress(n)`` is called after each outcome found.
    ``timeout``: seconds for the whole check; past it the result's status is "timeout" and its
    verdict None (unknown), never a guess. A model with no axiom is refused (it would allow
    everything) unless ``allow_no_axioms``."""
    prog, model = check_args(**locals())  # typed errors in the CLI's words; a path is loaded
    with no_gc():
        return _check(prog, model, engine, unroll, observe, flags, verdict_only, max_outcomes,
                      progress, timeout, allow_no_axioms)


def _check(prog: Program, model: str | Model, engine: str, unroll: int, observe: str, flags: bool,
           verdict_only: bool, max_outcomes: int | None, progress, timeout: float | None,
           allow_no_axioms: bool) -> CheckResult:
    t0 = time.perf_counter()
    deadline = Deadline.after(timeout)
    m = load_model(model) if isinstance(model, str) else model
    if not allow_no_axioms:
        require_axioms(m)
    eg = build(prog, unroll=unroll)
    obs = observables(eg, observe)
    want_flags = flags and any(st.kind == "flag" for st in m.stmts)
    cand = candidates(eg)
    engine = pick(engine, eg, cand, verdict_only and prog.condition is not None)
    co_known: set[tuple[int, int]] = set()
    if engine == "z3" and len(cand.co) > CO_ANALYSIS_MIN:
        from .knowledge import co_must

        co_known = co_must(eg, m, cand)
        cand = candidates(eg, co_known)
    holds = None
    status = "stopped"
    found: list = []
    try:
        if verdict_only and prog.condition is not None and engine == "z3":
            holds, status = _query(prog, eg, m, obs, cand, co_known, deadline, found)
        else:
            status = _enumerate(engine, eg, m, obs, cand, co_known, want_flags, max_outcomes,
                                progress, deadline, found)
    except TimedOut:
        holds, status = None, "timeout"
    infos = [OutcomeInfo(o, satisfies(prog, eg, o, obs), exe, fl) for o, exe, fl in found]
    infos.sort(key=lambda i: i.outcome.values)
    if status == "ok" and not infos and not verdict_only and eg.cut_paths:
        status = "no-execution"
    if prog.condition is not None and holds is None and status == "ok":
        holds = verdict(prog.condition.quantifier, [bool(i.satisfies) for i in infos])
    return CheckResult(prog, m.name, infos, holds, time.perf_counter() - t0, engine,
                       eg.cut_paths, eg.awaits, unroll, len(eg.events),
                       tuple(o.key for o in obs), max_outcomes if status == "stopped" else None,
                       status=status, timeout=timeout, model_path=m.path,
                       enumerated=not (verdict_only and prog.condition is not None and engine == "z3"))


def _query(prog, eg, m, obs: list[Observable], cand, co_known, deadline: Deadline,
           found: list) -> tuple[bool | None, str]:
    """The condition as one query: exists/~exists — an allowed execution satisfying it; forall —
    one violating it. Without a witness, when the unroll bound cut paths, a second query asks
    whether any execution finishes within the bound at all (else "no-execution"). A program whose
    every execution deadlocks at a barrier has no execution either, and its condition is judged
    vacuously, as herd7 and Dat3M do (the Dat3M corpus's deadlock tests expect it)."""
    from .engines.z3 import Z3Problem

    pb = Z3Problem(eg, m, obs, cand, flags=False, co_known=co_known, deadline=deadline)
    try:
        cond = prog.condition
        c = pb.condition(cond.expr, lambda r: format_ref(canonical(prog, eg, r)))
        wit = pb.find(c, negate=cond.quantifier == "forall")
        if wit is not None:
            found.append((outcome_of(eg, obs, wit), wit, []))
        elif eg.cut_paths and pb.find() is None:
            return None, "no-execution"
    finally:
        pb.close()
    return {"exists": wit is not None, "~exists": wit is None, "forall": wit is None}[cond.quantifier], "ok"


def _enumerate(name, eg, m, obs: list[Observable], cand, co_known, want_flags, max_outcomes,
               progress, deadline: Deadline, found: list) -> str:
    """Every allowed outcome into ``found`` (kept when the deadline passes); "ok", or "stopped"
    at ``max_outcomes``."""
    from .engines import engine

    pb = engine(name)(eg, m, obs, cand, flags=want_flags, co_known=co_known, deadline=deadline)
    try:
        for values, wit, fl in pb.outcomes():
            found.append((Outcome(tuple((o.key, o.shown(v)) for o, v in zip(obs, values))), wit, fl))
            if progress:
                progress(len(found))
            if max_outcomes is not None and len(found) >= max_outcomes:
                return "stopped"
        return "ok"
    finally:
        pb.close()
