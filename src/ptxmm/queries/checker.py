"""``check``: the public entry point. Program → event graph → one engine problem → its
queries → CheckResult. The condition (:mod:`.condition`) is asked first; then every kind of
finding is one :class:`~.query.Query` of :data:`QUERIES` (races and a kernel's sites on the same
problem, hangs on a formula of their own), each answered with witnesses, never a re-evaluation
per outcome."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from dataclasses import replace

from .._infra.gcpause import no_gc
from ..api_args import PROPERTIES, asked_properties, check_args, progress_needs_liveness
from ..cat.parser import Model, load_model, require_axioms
from ..engines import Deadline, TimedOut, engine, pick
from ..engines.base import OverBudget, Stop
from ..engines.watch import Watch, below_resident
from ..errors import ArgumentError
from ..ir.program import Program
from ..semantics.builder import build
from ..semantics.events import EventGraph
from ..semantics.outcomes import observables, verdict
from ..semantics.result import GRID_ENDING, CheckResult, OutcomeInfo
from ..semantics.vocab import candidates
from . import condition, hangs, races, sites
from .query import CheckOptions, CheckRun, Found, Query

# Relation analysis of co pays off once a location has many writes; below this many undecided
# co pairs the solver settles them faster than the extra model evaluation would.
CO_ANALYSIS_MIN = 40
# The Z3 engine breaks the symmetry of interchangeable threads for the queries it preserves
# (outcomes, condition, stop sites; :mod:`ptxmm.semantics.symmetry`). False: the plain encoding
# (the property tests compare the two).
SYMMETRY = True
# The Z3 engine encodes a location written only by morally strong RMWs as a chain (positions for
# its writes: :mod:`ptxmm.semantics.rmw_chains`) under a model that orders them. False: the plain
# rf/co encoding (the property tests compare the two, with it on). On by default since its counting
# lemmas (engines/z3/chains.COUNTING), measured the same minute (session 16, a loaded 2-core
# machine): every verdict, outcome, finding and liveness answer equal with it on and off over the
# 17 corpus kernels it applies to under ptx and ptx-v7.5 (examples/kernels, examples/kernels/real),
# those kernels' time the same (45.3 s on, 44.4 s off in all, within the noise), the histogram at
# 128 threads 14.2 -> 11.8 CPU s, the grid barrier at 6 blocks 24.2 -> 13.5 CPU s. (Without the
# lemmas it showed no gain: histogram at 128 threads 35.8 s plain, 35.6 s chained, session 15.)
RMW_CHAINS = True
# Where the race query is asked before the enumeration (races.EARLY) and the check asks a kernel's
# sites (assertions, bounds, traps), one query first asks for an allowed execution with a race or
# one that reaches a site: when there is none (a correct kernel: the usual case) it answers both
# queries, "no race" and "no site reached" (a site's query assumes the symmetry breaking, this one
# does not; every permutation of interchangeable threads keeps a site reached, so the two agree);
# otherwise each is asked as before. Measured (issue 40, session 19, the grid barrier at 12 blocks,
# each side on a fresh problem, the same minutes): race query, outcomes, site query 4.95 + 3.97 +
# 0.85 s apart, the joint query then the outcomes 5.57 + 3.16 s. False: the two queries apart
# (the property tests compare the two).
SITES_WITH_RACES = True
# The joint query assumes the symmetry breaking (as the site queries and the enumeration do; every
# permutation of interchangeable threads keeps a race a race and a site reached, so "none" is the
# same answer). Measured (issue 40, session 20, the histogram at 128 threads: 4 classes of 32
# interchangeable threads, its assertion reachable): over every execution the joint query had not
# found a model after 7,528 conflicts and 27 s (the whole check 64-154 s, against 9.3 s with the
# race query after the enumeration); over the canonical ones it answers in 106 conflicts, 3.7 s (the
# whole check 9.6 s). The grid barrier (no interchangeable threads) is the same either way.
# False: the joint query over every execution (the property tests compare the two).
SYMMETRIC_JOINT = True


# Every kind of finding, in the order of the report: the queries on the check's problem first
# (assertion failures and out-of-bounds accesses join these), then those on a problem of their own.
QUERIES: tuple[Query, ...] = (races.QUERY, sites.QUERY, hangs.QUERY)  # the report's order


def check(prog: Program, model: str | Model = "ptx", *, engine: str = "auto", unroll: int = 2,
          observe: str = "all", flags: bool = True, verdict_only: bool = False,
          max_outcomes: int | None = None, progress=None, timeout: float | None = None,
          allow_no_axioms: bool = False, graph: EventGraph | None = None, liveness: bool | None = None,
          progress_model: str = "fair", max_memory: int | None = None,
          properties: str | Iterable[str] | None = None) -> CheckResult:
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
    (:mod:`ptxmm.queries.hangs`; "fair", "obe", "lobe", "hsa", "unfair", or per level "gpu=obe,cta=fair");
    None (the default): for a kernel launch yes (a kernel's findings include hangs), else no.
    ``max_memory``: bytes of resident memory the process may reach; past them the check stops
    with status "memory" (the outcomes found so far kept). A check is watched (:mod:`ptxmm.engines.
    watch`): the time and memory limits hold in every phase, and Ctrl-C in the main thread stops it
    with status "interrupted" and what was found so far. ``properties``: what the check asks, of
    "condition", "races", "sites" (a kernel's assertions and out-of-bounds accesses) and "liveness"
    (as a list or as "condition,races"); None: the defaults above. The result's ``not_asked``
    names those it would have asked by default, or could ask, and did not: no verdict or "no
    race" is reported for them."""
    prog, model = check_args(**locals())  # typed errors in the CLI's words; a path is loaded
    if max_memory is not None and (why := below_resident(max_memory)):
        raise ArgumentError(f"max_memory={max_memory}: {why}", hint="give a limit above it")
    asked = asked_properties(prog, properties, flags, liveness)
    liveness = "liveness" in asked
    progress_model = str(hangs.Progress.parse(progress_model))  # refused when wrong, liveness or not
    progress_needs_liveness(progress_model, bool(liveness))
    opts = CheckOptions(engine, unroll, observe, flags, verdict_only, max_outcomes, progress, timeout,
                        allow_no_axioms, bool(liveness), progress_model,
                        None if properties is None else asked)
    deadline = Deadline.after(timeout, Stop())
    every = getattr(progress, "every", None)  # (seconds, callback(stop)): progress lines
    with no_gc():
        if timeout is None and max_memory is None and progress is None:
            return run(prog, model, opts, graph, deadline)
        with Watch(deadline, max_memory, every):
            return run(prog, model, opts, graph, deadline)


def not_asked(prog: Program, opts: CheckOptions) -> tuple[str, ...]:
    """The properties a check with ``properties`` given did not ask that apply to ``prog``
    (the condition when it has one, races, a kernel's sites, liveness); () for the defaults."""
    if opts.asked is None:
        return ()
    applies = {"condition": prog.condition is not None, "races": True,
               "sites": sites.QUERY.applies(prog, CheckOptions()), "liveness": True}
    return tuple(p for p in PROPERTIES if applies[p] and p not in opts.asked)


def run(prog: Program, model: str | Model, opts: CheckOptions, eg: EventGraph | None = None,
        deadline: Deadline | None = None) -> CheckResult:
    """:func:`check` with its options as one record. Stopped in any phase (the deadline, Ctrl-C,
    the memory limit), the result says why and keeps the outcomes found."""
    t0 = time.perf_counter()
    deadline = Deadline.after(opts.timeout, Stop()) if deadline is None else deadline
    state: dict = {}
    try:
        return _run(prog, model, opts, eg, deadline, t0, state)
    except TimedOut as e:
        if deadline.stop is not None:  # stopped: the partial result is built without a poke
            deadline.stop.settled = True
        return _stopped(prog, model, opts, state, e.reason, t0)


def _stopped(prog: Program, model, opts: CheckOptions, state: dict, reason: str, t0: float) -> CheckResult:
    """The result of a check stopped outside a query: what it had found, its status the reason."""
    r = state.get("run")
    if r is not None:
        return _result(r, state.get("engine", "z3"), None, reason, "not checked",
                       state.get("by_query", False), time.perf_counter() - t0)
    return CheckResult(prog, model if isinstance(model, str) else model.name, [], None,
                       time.perf_counter() - t0, unroll=opts.unroll, status=reason, timeout=opts.timeout,
                       findings_status="not checked", enumerated=not opts.verdict_only)


def _run(prog: Program, model: str | Model, opts: CheckOptions, eg: EventGraph | None, deadline: Deadline,
         t0: float, state: dict) -> CheckResult:
    stop = deadline.stop
    m = load_model(model) if isinstance(model, str) else model
    if not opts.allow_no_axioms:
        require_axioms(m)
    _phase(stop, "building the event graph")
    eg = _graph(prog, eg, opts.unroll, deadline)
    deadline.check()
    obs = (sites.observables if prog.layout is not None else observables)(eg, opts.observe)
    r = state["run"] = CheckRun(prog, eg, m, obs, opts, deadline, [])
    one_query = opts.verdict_only and prog.condition is not None
    cand = candidates(eg)
    # a value the ISA leaves unspecified: only the solver can leave it free (brute refuses it)
    name = "z3" if eg.unspecified and opts.engine == "auto" else pick(opts.engine, eg, cand, one_query)
    r.prog, r.listed, by_query = condition.unspecified(prog, eg, r.obs, one_query)
    state.update(engine=name, by_query=by_query)
    co_known: set[tuple[int, int]] = set()
    if name == "z3" and len(cand.co) > CO_ANALYSIS_MIN:
        from ..semantics.knowledge import co_must

        co_known = co_must(eg, m, cand)
        cand = candidates(eg, co_known)
    want_flags = races.wants_flags(m, opts)
    _phase(stop, "encoding")
    sym = {"symmetry": SYMMETRY, "chains": RMW_CHAINS} if name == "z3" else {}
    try:  # the encoding watches the deadline too
        pb = engine(name)(eg, m, r.listed, cand, flags=want_flags, co_known=co_known, deadline=r.deadline,
                          **sym)
    except TimedOut as e:
        return _result(r, name, None, e.reason, "not checked", by_query, time.perf_counter() - t0)
    _phase(stop, "enumerating outcomes")
    try:
        holds, status = _early(r, pb, opts.asks("condition") and not one_query)
        if status == "ok" and opts.asks("condition"):
            holds, status = condition.answer(r, pb, one_query, by_query, lambda: engine(name)(
                r.eg, m, r.obs, cand, flags=False, co_known=co_known, deadline=r.deadline, **sym))
        r.pb, r.status = pb, status
        r.reductions = reductions(eg, pb)
        asked = _ask(r, own_problem=False)
    finally:
        pb.close()
    _phase(stop, "liveness")
    asked |= _ask(r, own_problem=True)
    _phase(stop, "reporting")
    r.reductions += [r.applied[q.name] for q in QUERIES if q.name in r.applied]
    r.liveness = asked.get("hangs")
    findings_status = asked.get("races", "not checked")
    return _result(r, name, holds, status, findings_status, by_query, time.perf_counter() - t0)


def _early(r: CheckRun, pb, enumerates: bool) -> tuple[bool | None, str]:
    """The race query asked before the enumeration where :data:`races.EARLY` says so (its answer
    into ``r.early``): (None, "ok"), or (None, the stop's reason) when the deadline, Ctrl-C or the
    memory limit stopped it (then nothing is enumerated, as when it stops the enumeration). Under
    a time limit it has its share of the time left (races.early_deadline): past the share, while
    the check's own limit is not, its answer is dropped and the check goes on without it; so too
    past its conflict budget (races.EARLY_CONFLICTS), with or without a limit."""
    if not races.early(r, pb, enumerates):
        return None, "ok"
    pb.deadline = races.early_deadline(r.deadline)
    budget = getattr(pb, "conflict_budget", None)
    try:
        with budget(races.EARLY_CONFLICTS) if budget else contextlib.nullcontext():
            where = _site_paths(r.eg) if SITES_WITH_RACES and sites.QUERY.applies(r.prog, r.opts) else {}
            if where and pb.none_raised(pb.on_paths(where), SYMMETRIC_JOINT):  # no race, no site reached
                r.early[races.QUERY.name], r.early[sites.QUERY.name] = Found((), "ok"), Found(())
            else:
                r.early[races.QUERY.name] = races.QUERY.search(r, pb, False)
    except OverBudget:
        r.early.clear()
    except TimedOut as e:
        r.early.clear()
        if not races.within_check(r.deadline):
            return None, e.reason
    finally:
        pb.deadline = r.deadline
    return None, "ok"


def _site_paths(eg: EventGraph) -> dict[int, set[int]]:
    """Per thread, its paths that stop at a site (every site :func:`.sites.site_findings` asks)."""
    where: dict[int, set[int]] = {}
    for t, paths in enumerate(eg.paths):
        for k, p in enumerate(paths):
            if p.stop is not None:
                where.setdefault(t, set()).add(k)
    return where


def _phase(stop: Stop | None, what: str) -> None:
    if stop is not None:
        stop.phase = what


def _ask(r: CheckRun, own_problem: bool) -> dict[str, str]:
    """The queries of :data:`QUERIES` that ask the check's problem (or, with ``own_problem``, a
    problem of their own) and apply: their findings into ``r.findings``; each one's status by name."""
    out = {}
    for q in QUERIES:
        if q.own_problem == own_problem and q.applies(r.prog, r.opts):
            # a query answered before the enumeration (races.EARLY) stands where it is asked
            early = r.early.get(q.name) if r.status in ("ok", "stopped") else None
            found = early if early is not None else q.run(r)
            r.findings += found.findings
            out[q.name] = found.status
    return out


def _graph(prog: Program, eg: EventGraph | None, unroll: int, deadline: Deadline) -> EventGraph:
    """The event graph handed on when it is ``prog``'s (the same threads and locations at the same
    bound: a program with another condition shares it), else a new one, built under the check's
    deadline (the builder looks at it itself: unrolling nested data-dependent loops allocates fast)."""
    if eg is None or eg.unroll != unroll or eg.program.threads != prog.threads \
            or eg.program.locations != prog.locations:
        return build(prog, unroll=unroll, look=deadline.check)
    return eg if eg.program is prog else replace(eg, program=prog)


def _result(r: CheckRun, name: str, holds: bool | None, status: str, findings_status: str, by_query: bool,
            elapsed: float) -> CheckResult:
    prog, eg, opts = r.prog, r.eg, r.opts
    infos = sorted(r.found, key=_values)  # judged as found (condition.py)
    judged = opts.asks("condition")
    if status == "ok" and judged and not infos and not opts.verdict_only and (eg.cut_paths or eg.awaits):
        status = "no-execution"
    # no hang found decides nothing then, unless a trap or failed assertion ends the grid
    if status == "no-execution" and r.liveness == "terminates" and not any(
            f.kind in GRID_ENDING for f in r.findings):
        r.liveness, r.liveness_why = "undecided", f"no execution finishes within --unroll {opts.unroll}"
    if prog.condition is not None and holds is None and status == "ok" and judged:
        holds = verdict(prog.condition.quantifier, [bool(i.satisfies) for i in infos])
    return CheckResult(prog, r.model.name, infos, holds, elapsed, name, eg.cut_paths, eg.awaits,
                       opts.unroll, len(eg.events), tuple(o.key for o in r.listed),
                       opts.max_outcomes if status == "stopped" else
                       condition.LIST_MAX if status == "capped" else None, status=status,
                       timeout=opts.timeout, model_path=r.model.path, findings=r.findings,
                       findings_status=findings_status, graph=eg,
                       enumerated=judged and not (opts.verdict_only and prog.condition is not None),
                       liveness=r.liveness, progress_model=opts.progress_model if r.liveness else None,
                       liveness_why=r.liveness_why, not_asked=not_asked(prog, opts),
                       reductions=tuple(r.reductions))


def reductions(eg: EventGraph, pb) -> list[str]:
    """The reductions that applied to a check's graph and its problem, in words (the queries add
    theirs, ``CheckRun.applied``: the site witnesses reused, the liveness shortcuts)."""
    out = []
    sizes = getattr(pb, "symmetric", ())
    if sizes:
        shown = "/".join(map(str, sizes))
        out.append(f"symmetry ({len(sizes)} class(es) of {shown} interchangeable threads)")
    if eg.written is not None:  # the read-only fold ran (builder.build)
        folded = {e.loc for e in eg.events if e.kind == "R" and e.thread >= 0} - eg.written
        if folded:
            out.append(f"read-only fold ({len(folded)} location(s))")
    chained = getattr(pb, "chains", ())
    if chained:
        out.append(f"RMW chains ({len(chained)} location(s))")
    if getattr(pb, "fenced", 0):  # cat/fence_order.py
        out.append(f"fence order (base causality through {pb.fenced} fence.sc fence(s))")
    if eg.memo_hits:  # semantics.memory.ADDRESS_MEMO
        out.append(f"address memo ({eg.memo_hits} question(s) answered from it)")
    return out


def _values(info: OutcomeInfo) -> tuple[int, ...]:
    """The sort key of an outcome: its values (every outcome has the same keys, in one order;
    ints compare some five times faster than the (key, value) pairs)."""
    return tuple([v for _, v in info.outcome.values])
