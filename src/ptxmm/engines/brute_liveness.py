"""The brute-force liveness oracle: the hang question of :mod:`ptxmm.queries.hangs`, answered
without a solver (issue 37: Z3 = brute force for liveness, as it already is for safety).

It builds the same liveness event graph (``build(prog, unroll, liveness=True, prefixes=not
fair)``), streams every model-consistent execution of it with the brute-force engine
(:class:`~ptxmm.engines.brute.BruteProblem`, flags off), and decides for each one CONCRETELY, in
plain Python, whether it is a hang under the rules of docs/liveness.md "What counts as a hang" and
"Progress models". It is written from those rules, not from the Z3 encoding (``_Encoding``); the
judgments are small named functions so that a rule change is a change of one of them:

* :func:`stuck_holds` — a thread whose chosen path is "stuck" repeats its last iteration forever;
* :func:`blocked_holds` — a thread whose chosen path is "blocked" waits forever at its barrier;
* :func:`progress_ok` — the progress model lets the execution stop where it stops (a search for
  an assignment of "makes progress" to threads and CTAs);
* :func:`is_hang` — the three together: every stuck thread really stuck, every blocked thread
  really blocked, at least one of them, and the progress model satisfied.

No z3 here (tests/suite/test_layout.py); the module lives under ``engines/`` beside the engine it
drives, so ``queries/`` may use it and it needs nothing above ``engines``."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from ..ir.values import evaluate
from ..semantics.builder import build
from ..semantics.events import Event, EventGraph, Kind
from ..semantics.executions import executed
from ..semantics.lanes import warp_members
from ..semantics.result import Execution
from ..semantics.vocab import _LEVEL, _level, candidates
from .base import NO_DEADLINE, Deadline
from .brute import BruteProblem

MODELS = ("fair", "obe", "lobe", "hsa", "unfair")


def levels(progress) -> tuple[str, str]:
    """(within a CTA, across CTAs) of a progress model: ``"obe"``, ``"gpu=obe,cta=fair"`` or an
    object with ``cta`` and ``gpu`` (``queries.hangs.Progress``)."""
    if hasattr(progress, "cta") and hasattr(progress, "gpu"):
        return progress.cta, progress.gpu
    t = str(progress).strip().lower()
    if t in MODELS:
        return t, t
    lv = dict(part.split("=") for part in t.replace(" ", "").split(","))
    cta, gpu = lv.get("cta", "fair"), lv.get("gpu", "fair")
    if cta not in MODELS or gpu not in MODELS or set(lv) - {"cta", "gpu"}:
        raise ValueError(f"progress model {progress!r} not understood")
    return cta, gpu


# -- one execution, concretely ---------------------------------------------------------------


class Concrete:
    """One execution of a liveness graph, as plain data: what ran, what each read read, what is
    co-after what."""

    def __init__(self, eg: EventGraph, exe: Execution):
        self.eg, self.exe = eg, exe
        self.ran = executed(eg, exe)
        self.vals = dict(exe.values)
        self.source = {r: w for w, r in exe.rf}
        self.co = set(exe.co)

    def path(self, t: int):
        return self.eg.paths[t][self.exe.paths[t]]

    def co_later(self, w: int) -> list[int]:
        """The executed writes co-after ``w`` at its location (the initial write is co-first)."""
        ev = self.eg.events
        loc = ev[w].loc
        out = []
        for x in ev:
            if x.kind != Kind.W or x.loc != loc or x.eid == w or x.eid not in self.ran:
                continue
            if "IW" in ev[w].tags:
                later = "IW" not in x.tags
            else:
                later = "IW" not in x.tags and (w, x.eid) in self.co
            if later:
                out.append(x.eid)
        return out


def bound_to_see(eg: EventGraph, r: Event, x: Event, scoped: bool = True) -> bool:
    """Memory fairness: whether the strong read ``r`` must eventually see the write ``x``
    (docs/liveness.md "Scoped memory fairness", a CHOICE): always for its own thread's writes,
    an asynchronous agent's writes, and without ``scoped``; else when ``r``'s scope contains
    ``x``'s thread."""
    if not scoped or x.thread < 0 or x.agent >= 0 or x.thread == r.thread:
        return True
    return _level(eg, (r.thread, r.at), (x.thread, x.at)) <= _LEVEL[r.scope or "sys"]


def may_stay_stale(eg: EventGraph, events, free) -> set[int]:
    """The reads of an iteration that need not see newer writes while it repeats: those whose
    value matters nothing to the loop (``free``, the builder's relevance), but not an atom's read
    whose write some other read may see — another thread's read (or an agent's) of that
    location, or a read of the iteration that matters: the written value changes each time."""
    ev, rmw = eg.events, dict(eg.edges.get("rmw", ()))
    out = set()
    for e in free:
        w = rmw.get(e)
        if w is None:
            out.add(e)
            continue
        seen = [x for x in ev if x.kind == Kind.R and x.loc == ev[w].loc and x.eid != e
                and (x.thread != ev[e].thread or x.agent >= 0 or (x.eid in events and x.eid not in free))]
        if not seen:
            out.add(e)
    return out


def stuck_holds(c: Concrete, end: tuple, scoped: bool = True) -> bool:
    """The iteration ``end`` = (its events, register equalities, the branch, its free reads) can
    repeat forever unchanged in execution ``c``: no barrier in it; every register equality
    "ends the iteration as it began it" holds on the execution's values; every write of it that
    ran is co-maximal; every morally strong (not weak) read of it that ran — the thread's own,
    not an agent's, and not one that may stay stale (:func:`may_stay_stale`) — reads a write with
    no co-later write it is bound to see (memory fairness)."""
    events, eqs, _branch, free = end
    ev = c.eg.events
    stale = may_stay_stale(c.eg, events, free)
    if any(ev[e].kind == Kind.B for e in events):
        return False
    if not all(evaluate(q, c.vals) for q in eqs):
        return False
    for e in events:
        if e not in c.ran:
            continue
        x = ev[e]
        if x.kind == Kind.W and c.co_later(e):
            return False
        if x.kind == Kind.R and x.agent < 0 and x.sem != "weak" and e in c.source and e not in stale:
            if any(bound_to_see(c.eg, x, ev[y], scoped) for y in c.co_later(c.source[e])):
                return False
    return True


def _group(eg: EventGraph, x: Event, thread: int | None = None):
    """The group of the barrier event ``x`` — its thread's (or ``thread``'s) cluster for a cluster
    barrier, else its CTA."""
    p = eg.program.threads[x.thread if thread is None else thread].placement
    return p.cluster_key if "CBAR" in x.tags else p.cta_key


def _same_use(c: Concrete, a: Event, w: Event) -> bool:
    """The arrival ``a`` ran and is at the same use of the same barrier as the wait ``w``: same
    kind (cluster or CTA barrier), same group, same use number and (CTA barriers) equal ids."""
    if a.kind != Kind.B or "ARRIVE" not in a.tags or a.thread < 0 or a.eid not in c.ran:
        return False
    if ("CBAR" in a.tags) != ("CBAR" in w.tags) or _group(c.eg, a) != _group(c.eg, w) \
            or ("WARP" in a.tags) != ("WARP" in w.tags):
        return False
    if a.barrier[2] != w.barrier[2]:
        return False
    if "CBAR" in w.tags:
        return True
    ia, iw = a.barrier[0], w.barrier[0]
    return len(ia) == len(iw) and all(evaluate(p, c.vals) == evaluate(q, c.vals) for p, q in zip(ia, iw))


def blocked_holds(c: Concrete, wait: int) -> bool:
    """The barrier wait ``wait`` never completes in execution ``c``: a wait tagged HANG (a
    cluster wait in a phase its thread never arrived in); with a thread count q (Dat3M's quorum),
    fewer than q threads arrive at that use over the whole execution; without one, some thread of
    the CTA (the cluster, for barrier.cluster) neither arrives at that use nor exits (PTX ISA,
    exit: an exiting thread that holds up a barrier releases it) — but the Dat3M dialect's
    count-less ``bar.cta.sync c`` (INSTANCE) waits for no thread that does not arrive."""
    ev = c.eg.events
    w = ev[wait]
    if "HANG" in w.tags:
        return True
    came = {a.thread for a in ev if _same_use(c, a, w)}
    q = w.barrier[1]
    if q is not None:
        return len(came) < q
    if "INSTANCE" in w.tags:
        return False
    key = _group(c.eg, w)
    members = {th.index for th in c.eg.program.threads if _group(c.eg, w, th.index) == key}
    if "WARP" in w.tags:  # a warp collective waits for the lanes its membermask names
        members = {w.thread, *warp_members(c.eg.program, w.thread, w.barrier[0][1].v)}
    exited = {t for t in members if c.path(t).kind == "done"}
    return bool(members - came - exited)


# -- progress -----------------------------------------------------------------------------------


def child_state(kind: str, empty: bool) -> tuple[bool, bool, bool]:
    """A thread's (may progress, schedulable, started) from its path's kind: schedulable = can
    still run (not finished, not blocked: stuck or stopped); started = not the empty prefix; a
    thread on a prefix path was not scheduled further, so it cannot be one that makes progress."""
    return kind != "prefix", kind in ("stuck", "prefix"), not (kind == "prefix" and empty)


def forward_ok(progress: list[bool], sched: list[bool], started: list[bool], model: str) -> bool:
    """A group that makes progress hands it to its children (ordered by id) as ``model`` says
    (docs/liveness.md "Progress models"): minimal progress — while some child can run, some child
    that can run makes progress — and the model's guarantee per child i: fair: it makes progress;
    obe: once started; lobe: once it or a later child started; hsa: when no earlier child can
    still run; unfair: nothing."""
    n = len(progress)
    if any(sched) and not any(p and s for p, s in zip(progress, sched)):
        return False
    for i in range(n):
        must = {"fair": True, "obe": started[i], "lobe": any(started[i:]),
                "hsa": not any(sched[:i]), "unfair": False}[model]
        if must and not progress[i]:
            return False
    return True


def _some_assignment(may: list[bool], sched: list[bool], started: list[bool], model: str) -> bool:
    """Whether some choice of "makes progress" for the children (only those that may) meets
    :func:`forward_ok` — every choice tried."""
    idx = [i for i, m in enumerate(may) if m]
    for bits in itertools.product((False, True), repeat=len(idx)):
        p = [False] * len(may)
        for i, b in zip(idx, bits):
            p[i] = b
        if forward_ok(p, sched, started, model):
            return True
    return False


def progress_ok(eg: EventGraph, kinds: tuple[tuple[str, bool], ...], cta_model: str, gpu_model: str) -> bool:
    """Whether the progress model lets the execution stop where it does, given each thread's
    (path kind, empty prefix): some assignment of "makes progress" to CTAs and threads exists
    where the GPU makes progress and hands it to the CTAs by ``gpu_model``; a CTA that makes
    progress hands it to its threads by ``cta_model``; a thread that makes progress is in a CTA
    that does and is not on a prefix path. CTAs in order of placement, threads by index."""
    ctas: dict = {}
    for th in eg.program.threads:
        ctas.setdefault(th.placement.cta_key, []).append(th.index)
    feasible, sched, started = [], [], []
    for _, members in sorted(ctas.items(), key=lambda kv: kv[0]):
        st = [child_state(*kinds[t]) for t in members]
        m, s, a = ([x[i] for x in st] for i in range(3))
        feasible.append(_some_assignment(m, s, a, cta_model))  # a CTA may progress only if it can
        sched.append(any(s))
        started.append(any(a))
    return _some_assignment(feasible, sched, started, gpu_model)


# -- the hang judgment --------------------------------------------------------------------------


def is_hang(c: Concrete, cta_model: str, gpu_model: str, scoped: bool = True,
            memo: dict | None = None) -> tuple[int, ...]:
    """The threads stuck or blocked in execution ``c`` when it is a hang (else ``()``): every
    thread on a stuck path satisfies :func:`stuck_holds`, every thread on a blocked path
    :func:`blocked_holds`, some thread is stuck or blocked, no thread took a path that ends the
    grid (a failed assertion, ``trap``), and :func:`progress_ok` holds."""
    eg = c.eg
    hung = []
    if any(c.path(t).stop is not None and c.path(t).stop.kind.ends_grid for t in range(len(eg.paths))):
        return ()  # a failed assertion or a trap ends the grid: nobody is left hanging
    for t in range(len(eg.paths)):
        p = c.path(t)
        if p.kind == "stuck":
            if not stuck_holds(c, p.end, scoped):
                return ()
            hung.append(t)
        elif p.kind == "blocked":
            if not blocked_holds(c, p.end[0]):
                return ()
            hung.append(t)
    if not hung:
        return ()
    kinds = tuple((c.path(t).kind, not c.path(t).events) for t in range(len(eg.paths)))
    memo = {} if memo is None else memo
    if kinds not in memo:
        memo[kinds] = progress_ok(eg, kinds, cta_model, gpu_model)
    return tuple(hung) if memo[kinds] else ()


def liveness_graph(prog, unroll: int, progress) -> EventGraph:
    """The liveness event graph hangs.py asks its query of (prefix paths unless every level is fair)."""
    cta, gpu = levels(progress)
    return build(prog, unroll=unroll, liveness=True, prefixes=not (cta == gpu == "fair"))


def hang_executions(prog, model, unroll: int = 2, progress="fair", scoped: bool = True,
                    deadline: Deadline = NO_DEADLINE, eg: EventGraph | None = None
                    ) -> Iterator[tuple[Execution, tuple[int, ...]]]:
    """Every allowed execution of the liveness graph that is a hang, with its stuck or blocked
    threads."""
    from ..cat.parser import load_model

    cta, gpu = levels(progress)
    m = load_model(model) if isinstance(model, str) else model
    eg = eg or liveness_graph(prog, unroll, progress)
    if not any(p.kind in ("stuck", "blocked") for ps in eg.paths for p in ps):
        return
    pb = BruteProblem(eg, m, [], candidates(eg), flags=False, deadline=deadline)
    memo: dict = {}
    for exe, _ in pb.executions():
        hung = is_hang(Concrete(eg, exe), cta, gpu, scoped, memo)
        if hung:
            yield exe, hung


def brute_hangs(prog, model, unroll: int = 2, progress="fair", scoped: bool = True,
                deadline: Deadline = NO_DEADLINE) -> list[tuple[int, ...]]:
    """The distinct sets of hung threads over every hang execution (sorted; empty: none hangs)."""
    return sorted({h for _, h in hang_executions(prog, model, unroll, progress, scoped, deadline)})


def brute_terminates(prog, model, unroll: int = 2, progress="fair", scoped: bool = True,
                     deadline: Deadline = NO_DEADLINE) -> bool:
    """Whether no allowed execution hangs (the first hang found answers)."""
    return next(hang_executions(prog, model, unroll, progress, scoped, deadline), None) is None
