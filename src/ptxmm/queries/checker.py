"""``check``: the public entry point. Program → event graph → one engine → CheckResult.

Questions are asked as narrowly as they can be: with ``verdict_only`` the test's condition is one
satisfiability query (exists: an allowed execution satisfying it; forall: one violating it) plus
its witness; otherwise every allowed outcome is enumerated, projected on the observables. Either
way the model's flags (data races) are findings: queries on the same problem, each answered with a
witness (:mod:`ptxmm.findings`), never a re-evaluation per outcome."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field, replace

from .._infra.gcpause import no_gc
from .._infra.records import record
from ..api_args import check_args
from ..cat.ast import Flag
from ..cat.parser import Model, load_model, require_axioms
from ..engines import Deadline, TimedOut, engine, pick
from ..errors import Diagnostic
from ..ir.program import Program, cond_refs, format_ref
from ..semantics.events import EventGraph, build
from ..semantics.outcomes import (
    Observable,
    canonical,
    observables,
    outcome_of,
    satisfies,
    unspecified_observables,
    verdict,
)
from ..semantics.result import CheckResult, Outcome, OutcomeInfo
from ..semantics.vocab import candidates
from .flags import Finding, of_raised

# Relation analysis of co pays off once a location has many writes; below this many undecided
# co pairs the solver settles them faster than the extra model evaluation would.
CO_ANALYSIS_MIN = 40


@record
class CheckOptions:
    """How a check runs (see :func:`check` for each field's meaning)."""

    engine: str = "auto"
    unroll: int = 2
    observe: str = "all"
    flags: bool = True
    verdict_only: bool = False
    max_outcomes: int | None = None
    progress: Callable[[int], None] | None = None
    timeout: float | None = None
    allow_no_axioms: bool = False
    liveness: bool = False
    progress_model: str = "fair"


def check(prog: Program, model: str | Model = "ptx", *, engine: str = "auto", unroll: int = 2,
          observe: str = "all", flags: bool = True, verdict_only: bool = False,
          max_outcomes: int | None = None, progress=None, timeout: float | None = None,
          allow_no_axioms: bool = False, graph: EventGraph | None = None, liveness: bool | None = None,
          progress_model: str = "fair") -> CheckResult:
    """Enumerate every outcome of ``prog`` the model allows and judge its condition.

    ``engine``: "z3", "brute", or "auto" (brute when the candidate space is tiny, else z3; the
    result's ``engine`` names the one that ran).
    ``verdict_only``: decide the condition with one query (the Z3 engine) instead of enumerating;
    ``outcomes`` then holds at most that query's witness. ``max_outcomes``: stop enumerating
    after that many (the result says so). ``progress(n)`` is called after each outcome found.
    ``flags``: look for the model's flags (data races) as findings. ``timeout``: seconds for the
    whole check; past it the result's status is "timeout" and its verdict None (unknown), never a
    guess. A model with no axiom is refused (it would allow everything) unless
    ``allow_no_axioms``. ``graph``: ``prog``'s event graph at ``unroll``, when the caller built it
    already (it is built once per check and handed on). ``liveness``: also look for hangs (a
    thread stuck in a loop or blocked at a barrier forever) under ``progress_model``
    (:mod:`ptxmm.liveness`; "fair", "obe", "lobe", "hsa", "unfair", or per level "gpu=obe,cta=fair");
    None (the default): for a kernel launch yes (a kernel's findings include hangs), else no."""
    prog, model = check_args(**locals())  # typed errors in the CLI's words; a path is loaded
    if liveness is None:
        liveness = prog.layout is not None
    if liveness:
        from .hangs import Progress

        progress_model = str(Progress.parse(progress_model))
    opts = CheckOptions(engine, unroll, observe, flags, verdict_only, max_outcomes, progress, timeout,
                        allow_no_axioms, bool(liveness), progress_model)
    with no_gc():
        return run(prog, model, opts, graph)


@record(frozen=False)
class _Run:
    """One check under way: what every stage reads and what it found so far."""

    prog: Program
    eg: EventGraph
    model: Model
    obs: list[Observable]
    opts: CheckOptions
    deadline: Deadline
    found: list
    findings: tuple[Finding, ...] = ()
    listed: list[Observable] = field(default_factory=list)  # what an enumeration lists (see _unspecified)
    liveness: str | None = None  # "terminates", "hangs", "timeout"; None: not asked


def run(prog: Program, model: str | Model, opts: CheckOptions, eg: EventGraph | None = None) -> CheckResult:
    """:func:`check` with its options as one record."""
    t0 = time.perf_counter()
    m = load_model(model) if isinstance(model, str) else model
    if not opts.allow_no_axioms:
        require_axioms(m)
    eg = _graph(prog, eg, opts.unroll)
    kernels = _kernels(prog)
    obs = kernels.observables(eg, opts.observe) if kernels else observables(eg, opts.observe)
    r = _Run(prog, eg, m, obs, opts, Deadline.after(opts.timeout), [])
    one_query = opts.verdict_only and prog.condition is not None
    cand = candidates(eg)
    # a value the ISA leaves unspecified: only the solver can leave it free (brute refuses it)
    name = "z3" if eg.unspecified and opts.engine == "auto" else pick(opts.engine, eg, cand, one_query)
    r.prog, r.listed, by_query = _unspecified(prog, eg, r.obs, one_query)
    co_known: set[tuple[int, int]] = set()
    if name == "z3" and len(cand.co) > CO_ANALYSIS_MIN:
        from ..semantics.knowledge import co_must

        co_known = co_must(eg, m, cand)
        cand = candidates(eg, co_known)
    want_flags = opts.flags and any(isinstance(st, Flag) for st in m.stmts)
    try:  # the encoding watches the deadline too
        pb = engine(name)(eg, m, r.listed, cand, flags=want_flags, co_known=co_known, deadline=r.deadline)
    except TimedOut:
        return _result(r, name, None, "timeout", "not checked", by_query, time.perf_counter() - t0)
    try:
        try:
            holds, status = None, "ok"
            if one_query:
                holds, status = _query(r, pb)
            else:
                if by_query:  # the condition names a value too free to list: one query decides it
                    holds, status = _decide(r, m, cand, co_known, name)
                if status != "no-execution":
                    status = _enumerate(r, pb)
        except TimedOut:
            holds, status = None, "timeout"
        findings_status = _findings(r, pb, want_flags, status)
        if kernels and opts.flags and status in ("ok", "stopped"):  # assert-fails, out-of-bounds
            r.findings += kernels.site_findings(eg, pb, lambda exe: outcome_of(r.eg, r.listed, exe))
    finally:
        pb.close()
    if opts.liveness:
        from .hangs import hang_findings

        r.findings, r.liveness = hang_findings(r.prog, m, opts, r.findings, r.deadline)
    return _result(r, name, holds, status, findings_status, by_query, time.perf_counter() - t0)


def _kernels(prog: Program):
    """:mod:`.sites` for a kernel launch (its observables and findings), else None."""
    if prog.layout is None:
        return None
    from . import sites

    return sites


def _decide(r: _Run, m: Model, cand, co_known, name: str) -> tuple[bool | None, str]:
    """The condition by one query on a problem that observes every observable (the enumeration
    lists fewer): its witness is not listed."""
    pb = engine(name)(r.eg, m, r.obs, cand, flags=False, co_known=co_known, deadline=r.deadline)
    try:
        return _query(r, pb, record=False)
    finally:
        pb.close()


def _findings(r: _Run, pb, want_flags: bool, status: str) -> str:
    """The model's flags as findings into ``r.findings``; what became of the question."""
    if not r.opts.flags:
        return "not checked"
    if not want_flags:
        return "no flags in model"
    if status not in ("ok", "stopped"):
        return "not checked"
    try:
        r.findings = of_raised(r.eg, pb.raised(), lambda exe: outcome_of(r.eg, r.listed, exe))
    except TimedOut:
        return "timeout"
    return "ok"


def _graph(prog: Program, eg: EventGraph | None, unroll: int) -> EventGraph:
    """The event graph handed on when it is ``prog``'s (the same threads and locations at the same
    bound: a program with another condition shares it), else a new one."""
    if eg is None or eg.unroll != unroll or eg.program.threads != prog.threads \
            or eg.program.locations != prog.locations:
        return build(prog, unroll=unroll)
    return eg if eg.program is prog else replace(eg, program=prog)


def _result(r: _Run, name: str, holds: bool | None, status: str, findings_status: str, by_query: bool,
            elapsed: float) -> CheckResult:
    prog, eg, opts = r.prog, r.eg, r.opts
    infos = [OutcomeInfo(o, None if by_query else satisfies(prog, eg, o, r.listed), exe, fl)
             for o, exe, fl in r.found]
    infos.sort(key=lambda i: i.outcome.values)
    if status == "ok" and not infos and not opts.verdict_only and (eg.cut_paths or eg.awaits):
        status = "no-execution"
    if prog.condition is not None and holds is None and status == "ok":
        holds = verdict(prog.condition.quantifier, [bool(i.satisfies) for i in infos])
    return CheckResult(prog, r.model.name, infos, holds, elapsed, name, eg.cut_paths, eg.awaits,
                       opts.unroll, len(eg.events), tuple(o.key for o in r.listed),
                       opts.max_outcomes if status == "stopped" else None, status=status,
                       timeout=opts.timeout, model_path=r.model.path, findings=r.findings,
                       findings_status=findings_status, graph=eg,
                       enumerated=not (opts.verdict_only and prog.condition is not None),
                       liveness=r.liveness, progress_model=opts.progress_model if r.liveness else None)


def _unspecified(prog: Program, eg, obs: list[Observable], one_query: bool):
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


def _query(r: _Run, pb, record: bool = True) -> tuple[bool | None, str]:
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
        r.found.append((outcome_of(eg, r.obs, wit), wit, []))
    elif wit is None and (eg.cut_paths or eg.awaits) and pb.find() is None:
        return None, "no-execution"
    return {"exists": wit is not None, "~exists": wit is None, "forall": wit is None}[cond.quantifier], "ok"


def _enumerate(r: _Run, pb) -> str:
    """Every allowed outcome into ``r.found`` (kept when the deadline passes); "ok", or "stopped"
    at ``max_outcomes``."""
    found, obs, opts = r.found, r.listed, r.opts
    # Observable.shown, bound once per observable (an unsigned value shows as its low bits)
    keys = [o.key for o in obs]
    shown = [o.shown if o.signed else ((1 << o.width) - 1).__and__ for o in obs]
    it = pb.outcomes()
    try:
        for values, wit, fl in it:
            found.append((Outcome(tuple(zip(keys, map(_call, shown, values)))), wit, fl))
            if opts.progress:
                opts.progress(len(found))
            if opts.max_outcomes is not None and len(found) >= opts.max_outcomes:
                return "stopped"
        return "ok"
    finally:
        it.close()  # an enumeration stopped early gives its solver scopes back


def _call(f, v):
    return f(v)
