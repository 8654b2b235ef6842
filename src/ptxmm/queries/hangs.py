"""Liveness: can a thread hang — spin in a loop forever, or wait forever at a barrier — in some
execution the model allows, under a progress model (docs/liveness.md)?

The question is one query on one formula, as Dat3M's termination check (NonTerminationEncoder)
asks it. The liveness event graph (``events.build(..., liveness=True)``) gives every thread, beside
the paths that run to its exit, paths that end in a hang:

* **stuck** — the thread takes a backward branch after an iteration that can repeat forever
  unchanged: every register the iteration reads before writing it ends the iteration as it
  began it, every write it makes is co-maximal (nothing overwrites it), and every morally strong
  read of it reads a co-maximal write — no later write it could still read exists, so reading
  again returns the same value (memory fairness: a write is eventually seen by strong reads that
  keep reading). A *weak* read has no such guarantee (nothing obliges ``ld.weak`` to see a later
  write: the compiler may even hoist it out of the loop), so a weak read may keep reading a stale
  value; an iteration with a barrier in it never counts as stuck;
* **blocked** — the thread stops at a barrier wait that never completes: a ``bar.sync a, n``
  that fewer than ``n`` threads of its CTA reach in that use (Dat3M's quorum semantics: the
  arrivals counted over the execution, not phase by phase), a ``bar.sync a`` that some thread of
  the CTA never reaches, a ``barrier.cluster.wait`` whose phase misses some thread of the cluster;
* and, when some level of the progress model is not fair, **prefix** paths: the thread is not
  scheduled past some point (the empty prefix: it never starts).

Cut paths (the unroll bound) are not executions here either: a hang must be decided by the
encoding, not by the bound. The progress model says which threads must keep running (Dat3M's
hierarchy: the GPU's CTAs, each CTA's threads; ``fair``, ``obe``, ``lobe``, ``hsa``, ``unfair`` at
each level); a hang is an allowed execution in which some thread is stuck or blocked and every
thread with forward progress has finished, is stuck or is blocked.

Only the Z3 engine answers liveness queries."""

from __future__ import annotations

from contextlib import nullcontext

from .._infra.records import record
from ..engines import NO_DEADLINE, Deadline
from ..errors import ArgumentError
from ..semantics.builder import build
from ..semantics.events import Event, EventGraph, Kind
from ..semantics.result import Execution, Finding, FindingKind
from ..semantics.vocab import _LEVEL, _level
from .query import Found
from .refs import event_ref

# A check whose program cannot hang — no thread has a loop (a cycle in its control flow) and its
# build met no barrier wait — answers "terminates" without building the liveness graph: that graph
# would have no path stuck in a loop or blocked at a wait (the only paths that hang, ``stuck`` at a
# back edge, ``blocked`` at a wait: .semantics.control), nothing the unrolling cut, and its query
# would end there. False: the liveness graph is always built (the tests compare the two).
LOOP_FREE_SHORTCUT = True

MODELS = ("fair", "obe", "lobe", "hsa", "unfair")
# Under fair progress, a program whose every thread meets the same count-less bar.sync sequence
# unconditionally and has no loop cannot hang (.semantics.barrier_waits.never_blocks, a proof
# from the check's own graph): no hang query is built. False: always the query (the property
# tests compare the two).
BARRIER_PROOF = True
# Under fair progress, a liveness graph whose every thread of a CTA meets the same sequence of
# count-less CTA barriers and constant-mask warp collectives (shfl.sync, vote.sync, __syncwarp ...)
# unconditionally, with no loop the unrolling leaves undecided (.semantics.collective_proof), cannot
# hang: no hang query is built. False: always the query (the property tests compare the two).
COLLECTIVE_PROOF = True
# The liveness problem encodes a location written only by morally strong RMWs as a chain (positions
# for its writes, with their counting lemmas: .semantics.rmw_chains, engines/z3/chains.py) under a
# model that orders them, as the check's problem does (queries.checker.RMW_CHAINS): a grid barrier's
# arrival count, whose "some arrival reads N-1" the plain rf/co encoding proves by trying orders.
# The stuck test reads a chain read's rf from the positions (_Encoding.rf_of). False: the plain
# rf/co encoding (the property tests compare the two). Measured (session 17, the device's idle
# cores, both the same minute; benchmarks/profile_grid.py): the grid barrier's liveness phase at 6
# blocks 3.37 -> 1.02 CPU s (whole check 9.3 -> 5.5 s), at 8 blocks over 70 s -> 4.8 s (whole
# check over 100 s -> 31.6 s).
CHAINS = True
# The liveness problem's hang query is asked before its grid-ending sites (.sites.grid_ending_sites,
# the failed assertions and traps the check did not find), not after: the same two queries, the
# same answers (a hang finding's witness may be another execution). Measured (issue 40, session 19,
# the grid barrier's liveness problem, each order on a fresh problem, the same minutes, both
# unsat): at 16 blocks the sites then the hangs 20.1 + 1.0 s, the hangs then the sites 9.5 + 5.0
# s (and one query for both, tried: 26.4 s); at 12 blocks 6.7 + 0.5 s against 4.0 + 1.8 s. False:
# the sites first (the property tests compare the two).
HANGS_FIRST = True
LEVELS = {"cta": "within a CTA", "gpu": "across CTAs"}


@record
class Progress:
    """The progress model: ``cta`` — how the threads of one CTA are scheduled; ``gpu`` — how the
    CTAs of the grid are (Dat3M's --modeling.progress, per scope)."""

    cta: str = "fair"
    gpu: str = "fair"

    @staticmethod
    def parse(text: str | Progress) -> Progress:
        """``fair`` (every level), or ``gpu=obe,cta=fair`` (unnamed levels stay fair)."""
        if isinstance(text, Progress):
            return text
        t = str(text).strip().lower()
        if t in MODELS:
            return Progress(t, t)
        levels = {}
        for part in t.split(","):
            k, _, v = part.partition("=")
            k, v = k.strip(), v.strip()
            if k not in LEVELS or v not in MODELS:
                raise ArgumentError(f"progress model {text!r} not understood", None,
                                    f"one of {', '.join(MODELS)}, or per level: gpu=obe,cta=fair "
                                    "(gpu: across CTAs, cta: within a CTA)")
            if k in levels:  # never the later silently winning
                raise ArgumentError(f"progress model {text!r} names the {k} level twice", None,
                                    "name each level once: gpu=obe,cta=fair")
            levels[k] = v
        return Progress(levels.get("cta", "fair"), levels.get("gpu", "fair"))

    @property
    def fair(self) -> bool:
        return self.cta == "fair" and self.gpu == "fair"

    def __str__(self) -> str:
        if self.cta == self.gpu:
            return self.cta
        return f"gpu={self.gpu},cta={self.cta}"

    def words(self) -> str:
        if self.cta == self.gpu:
            return f"progress {self.cta}"
        return f"progress {self.gpu} across CTAs, {self.cta} within a CTA"


@record
class Hang:
    """One hang witness: the threads stuck or blocked in it and the finding that reports it."""

    threads: tuple[int, ...]
    finding: Finding
    prefix: tuple[str, ...] = ()  # the witness's finite prefix, a line per event (explain)

    def explained(self) -> str:
        """The hang for ``ptxmm explain --liveness``: where and why, then the finite prefix."""
        return "\n".join([f"hang: {self.finding.detail}", "  the execution, up to where it repeats:",
                           *(f"    {ln}" for ln in self.prefix)])

    def to_json(self) -> dict:
        return self.finding.to_json() | {"prefix": list(self.prefix)}


# -- the encoding -----------------------------------------------------------------------------


class _Encoding:
    """The hang query over a Z3 problem of the liveness graph."""

    def __init__(self, eg: EventGraph, pb, progress: Progress, mem_fair: bool = True,
                 scoped: bool = True):
        from ..engines.z3 import formulas as z3
        from ..semantics.vocab import Barriers

        self.z3, self.eg, self.pb, self.ch = z3, eg, pb, pb.ch
        self.mem_fair, self.scoped = mem_fair, scoped
        self.lg = pb.ch.lg
        from ..cat.relalg import Universe

        self.bars = Barriers(eg, pb.ch, Universe(pb.ch.ex, pb.ch.lg))
        self.writes_at: dict[str, list[int]] = {}
        for e in eg.events:
            if e.kind == Kind.W:
                self.writes_at.setdefault(e.loc, []).append(e.eid)
        self.rf_of: dict[int, list[int]] = {}  # read → the writes it may read (chains' reads included)
        for (w, r) in [*pb.ch.rfv, *pb.ch.rf_chain]:
            self.rf_of.setdefault(r, []).append(w)
        self.cs: list = []
        self.hangs: dict[int, list] = {}  # thread → terms "it is stuck or blocked"
        self.halts: list = []  # "a thread takes a path that halts" (assert, trap: the grid ends)
        n = len(eg.paths)
        self.sched, self.started, self.prog = [None] * n, [None] * n, [None] * n
        for t in range(n):
            self._thread(t)
        self._hierarchy(progress)

    # basic terms
    def ex(self, e: int):
        return self.lg.z3(self.ch.ex[e])

    def selected(self, t: int, k: int):
        sel = self.ch.sel[t]
        return self.z3.BoolVal(k == 0) if sel is None else sel[k]

    def co(self, a: int, b: int):
        """co(a, b) in the execution: the initial write is co-first."""
        ev = self.eg.events
        if "IW" in ev[a].tags:
            return self.z3.BoolVal(False) if "IW" in ev[b].tags else self.ex(b)
        if "IW" in ev[b].tags:
            return self.z3.BoolVal(False)
        return self.lg.z3(self.ch.co(a, b))

    def co_max(self, w: int, reader: Event | None = None):
        """No write is co-after ``w`` — with ``reader``, no write the reader is bound to see."""
        z3 = self.z3
        return z3.And([z3.Not(self.co(w, x)) for x in self.writes_at[self.eg.events[w].loc]
                       if x != w and (reader is None or self.in_scope(reader, self.eg.events[x]))])

    def in_scope(self, r: Event, x: Event) -> bool:
        """Memory fairness binds the strong read ``r`` to see the write ``x`` eventually only when
        ``r``'s scope includes ``x``'s thread (a CHOICE, docs/liveness.md "Scoped memory
        fairness"): a read of scope .cta may be served by its SM's L1 forever, which the H100
        does (docs/device/kernels.md, mp-block-scope). An asynchronous agent's write binds every
        strong read (as before)."""
        if x.thread < 0 or x.agent >= 0 or x.thread == r.thread or not self.scoped:
            return True
        return _level(self.eg, (r.thread, r.at), (x.thread, x.at)) <= _LEVEL[r.scope or "sys"]

    def stuck(self, end: tuple):
        """The iteration ``end`` describes repeats forever unchanged."""
        z3 = self.z3
        events, eqs, _, free = end
        ev = self.eg.events
        cs = [self.ch.values.bool(q) for q in eqs]
        free = self.unseen(events, free)
        for e in events:
            x = ev[e]
            if x.kind == Kind.B:
                return z3.BoolVal(False)
            if x.kind == Kind.W:  # the thread's writes and those of copies it issued
                cs.append(z3.Implies(self.ex(e), self.co_max(e)))
            elif x.kind == Kind.R and x.agent < 0 and (self.mem_fair and x.sem != "weak") \
                    and e not in free:
                cs += [z3.Implies(self.lg.z3(self.ch.rf(w, e)), self.co_max(w, x))
                       for w in self.rf_of.get(e, [])]
        return z3.And(cs)

    def unseen(self, events, free) -> set[int]:
        """The reads of an iteration that may read stale values while it repeats: those whose
        value matters nothing to the loop (.semantics.loops.relevant) — unless the read is an
        atom's whose write some read may see (a read of the same location by another thread,
        or one of the iteration's reads that matters): that write's value, the read's plus one,
        changes in each repetition."""
        ev, rmw = self.eg.events, dict(self.eg.edges.get("rmw", ()))
        out = set()
        for e in free:
            w = rmw.get(e)
            if w is None or not any(x.kind == Kind.R and x.loc == ev[w].loc and x.eid != e
                                    and (x.thread != ev[e].thread or x.agent >= 0
                                         or (x.eid in events and x.eid not in free))
                                    for x in ev):
                out.add(e)
        return out

    def blocked(self, w: int):
        """The barrier wait ``w`` never completes: fewer than its count of arrivals (Dat3M's
        quorum, counted over the execution), or without a count some other thread of its CTA
        (cluster) neither arrives in its phase nor exits (semantics/barrier_waits.py)."""
        z3, x = self.z3, self.eg.events[w]
        q = x.barrier[1]
        if q is None or "HANG" in x.tags:
            return self.lg.z3(self.bars.u.not1(self.bars.complete(x)))
        place = [th.placement for th in self.eg.program.threads]
        arrived = [self.lg.z3(self.bars.same_barrier(a, x)) for a in self.eg.events
                   if a.kind == Kind.B and "BAR" in a.tags and "ARRIVE" in a.tags and a.thread >= 0
                   and place[a.thread].cta_key == place[x.thread].cta_key
                   and a.barrier[2] == x.barrier[2]]
        return z3.Sum([z3.If(g, 1, 0) for g in arrived]) < q

    def _thread(self, t: int) -> None:
        z3 = self.z3
        by_kind: dict[str, list] = {"done": [], "stuck": [], "blocked": [], "prefix": []}
        never = []
        for k, p in enumerate(self.eg.paths[t]):
            s = self.selected(t, k)
            by_kind[p.kind].append(s)
            if p.kind == "stuck":
                self.cs.append(z3.Implies(s, self.stuck(p.end)))
            elif p.kind == "blocked":
                self.cs.append(z3.Implies(s, self.blocked(p.end[0])))
            elif p.kind == "prefix" and not p.events:
                never.append(s)
            if p.stop is not None and p.stop.kind.ends_grid:
                self.halts.append(s)
        self.hangs[t] = by_kind["stuck"] + by_kind["blocked"]
        done, blocked = z3.Or(by_kind["done"]), z3.Or(by_kind["blocked"])
        self.sched[t] = z3.And(z3.Not(done), z3.Not(blocked))
        self.started[t] = z3.Not(z3.Or(never))
        self.prog[t] = z3.Bool(f"progress_t{t}")
        self.cs.append(z3.Implies(self.prog[t], z3.Not(z3.Or(by_kind["prefix"]))))

    def _hierarchy(self, progress: Progress) -> None:
        z3 = self.z3
        place = [th.placement for th in self.eg.program.threads]
        ctas: dict = {}
        for t in range(len(self.eg.paths)):
            ctas.setdefault(place[t].cta_key, []).append(t)
        groups = []
        for i, (_, members) in enumerate(sorted(ctas.items(), key=lambda kv: kv[0])):
            g = z3.Bool(f"progress_cta{i}")
            sched = z3.Or([self.sched[t] for t in members])
            started = z3.Or([self.started[t] for t in members])
            self.cs += [z3.Implies(self.prog[t], g) for t in members]
            kids = [(self.prog[t], self.sched[t], self.started[t]) for t in members]
            self.cs.append(z3.Implies(g, self._forward(kids, progress.cta)))
            groups.append((g, sched, started))
        self.cs.append(self._forward(groups, progress.gpu))  # the GPU itself makes progress

    def _forward(self, kids: list[tuple], model: str):
        """Progress of a group handed to its children (each: progress, schedulable, started),
        ordered by id: some schedulable child progresses while any is schedulable (minimal
        progress), and the model's guarantee."""
        z3 = self.z3
        cs = [z3.Implies(z3.Or([s for _, s, _ in kids]), z3.Or([z3.And(p, s) for p, s, _ in kids]))]
        for i, (p, _, started) in enumerate(kids):
            if model == "fair":
                cs.append(p)
            elif model == "obe":
                cs.append(z3.Implies(started, p))
            elif model == "lobe":
                cs.append(z3.Implies(z3.Or([st for _, _, st in kids[i:]]), p))
            elif model == "hsa":
                cs.append(z3.Implies(z3.Not(z3.Or([s for _, s, _ in kids[:i]])), p))
        return z3.And(cs)

    def goal(self, threads=None):
        z3 = self.z3
        ts = range(len(self.eg.paths)) if threads is None else threads
        # a failed assertion or trap ends the grid: no thread is hung after it
        return z3.And(self.cs + [z3.Or([h for t in ts for h in self.hangs[t]]), z3.Not(z3.Or(self.halts))])


# -- the query --------------------------------------------------------------------------------


def liveness_graph(prog, unroll: int, progress: Progress, relevance: bool = True, look=None) -> EventGraph:
    return build(prog, unroll=unroll, liveness=True, prefixes=not progress.fair, relevance=relevance,
                 look=look)


def find_hangs(prog, model, unroll: int = 2, progress: str | Progress = "fair",
               deadline: Deadline = NO_DEADLINE, every: bool = True, mem_fair: bool = True,
               scoped: bool = True, relevance: bool = True) -> list[Hang]:
    """The hangs of ``prog`` under ``model`` and ``progress``: each a witness execution in which
    some thread never finishes, with a finding that says where and why; with ``every``, one
    witness per hanging thread (a query each), else at most one. ``mem_fair=False`` drops memory
    fairness (a mutant's hook and a teaching aid: every read may stay stale); ``scoped=False``
    binds a strong read to every write, whatever its scope (Dat3M's reading); ``relevance=False``:
    the stuck test compares every register a loop carries (the test before issue 37)."""
    return decide(prog, model, unroll, progress, deadline, every, mem_fair, scoped, relevance)[0]


def decide(prog, model, unroll: int = 2, progress: str | Progress = "fair",
           deadline: Deadline = NO_DEADLINE, every: bool = True, mem_fair: bool = True,
           scoped: bool = True, relevance: bool = True) -> tuple[list[Hang], str | None]:
    """:func:`find_hangs`, and when it finds none, why that does not mean every execution
    terminates (None: it does): a loop the unrolling cut that is not exact
    (.semantics.loops.exact), or no execution finishing within the bound."""
    hs, why, _ = decide_and_stop(prog, model, unroll, progress, deadline, every, mem_fair, scoped, relevance)
    return hs, why


def decide_and_stop(prog, model, unroll: int = 2, progress: str | Progress = "fair",
                    deadline: Deadline = NO_DEADLINE, every: bool = True, mem_fair: bool = True,
                    scoped: bool = True, relevance: bool = True,
                    found: tuple | None = None, graph: EventGraph | None = None,
                    applied: dict | None = None) -> tuple[list[Hang], str | None, tuple]:
    """:func:`decide`, and with ``found`` (the check's findings so far) the failed assertions and
    traps that end the grid while another thread spins or waits, which no complete execution
    reaches (:func:`ptxmm.queries.sites.grid_ending_sites`), asked of the same liveness problem.
    ``graph``: ``prog``'s safety graph at ``unroll`` (the check's), for :data:`BARRIER_PROOF`:
    when it proves that nothing hangs, no hang query is built, and the liveness problem only when
    a grid-ending site is left to ask that :func:`ptxmm.queries.sites.barrier_sites_proven` does
    not rule out. ``applied``, when given, gets the reduction the liveness problem used
    (:data:`CHAINS`) under "hangs", in words (``CheckRun.applied``)."""
    from ..cat.parser import load_model
    from ..engines.z3 import Z3Problem
    from ..semantics.barrier_waits import never_blocks, sure_arrivals
    from ..semantics.vocab import candidates
    from .sites import barrier_sites_proven, grid_ending_sites, unfound_grid_ending

    pr = Progress.parse(progress)
    proven = BARRIER_PROOF and pr.fair and graph is not None and never_blocks(graph)
    if proven and (found is None or not unfound_grid_ending(graph, found)
                   or barrier_sites_proven(graph, model)):
        return [], None, ()  # no loop: nothing cut, nothing undecided
    m = load_model(model) if isinstance(model, str) else model
    eg = liveness_graph(prog, unroll, pr, relevance, look=deadline.check)
    why = "; ".join(eg.undecided) or None
    if not any(p.kind in ("stuck", "blocked") for ps in eg.paths for p in ps):
        return [], why, ()
    if not proven and _collectives_proven(eg, pr):
        proven = True
        if found is None or not unfound_grid_ending(eg, found):
            return [], why, ()
    with sure_arrivals() if proven else nullcontext():  # no hang query: the smaller formula
        pb = Z3Problem(eg, m, [], candidates(eg), flags=False, deadline=deadline, chains=CHAINS)
    if applied is not None and pb.chains:
        applied["hangs"] = f"RMW chains in the liveness problem ({len(pb.chains)} location(s))"
    try:
        hs = [] if proven or not HANGS_FIRST else _hangs(eg, pb, pr, every, mem_fair, scoped)
        stops = () if found is None else grid_ending_sites(eg, pb, found)
        if not proven and not HANGS_FIRST:
            hs = _hangs(eg, pb, pr, every, mem_fair, scoped)
        return hs, why, stops
    finally:
        pb.close()


def _collectives_proven(eg: EventGraph, pr: Progress) -> bool:
    """:data:`COLLECTIVE_PROOF`: under fair progress, whether the liveness graph ``eg`` meets the
    conditions of :func:`ptxmm.semantics.collective_proof.never_hangs` (then nothing hangs)."""
    from ..semantics.collective_proof import never_hangs

    return COLLECTIVE_PROOF and pr.fair and never_hangs(eg)


def _hangs(eg: EventGraph, pb, pr: Progress, every: bool, mem_fair: bool, scoped: bool) -> list[Hang]:
    """The hang queries on the liveness problem: one witness per hanging thread with ``every``."""
    enc = _Encoding(eg, pb, pr, mem_fair, scoped)
    left = set(range(len(eg.paths)))
    out: list[Hang] = []
    while left:
        exe = pb.find(enc.goal(sorted(left)))
        if exe is None:
            break
        h = _hang(eg, exe, pr, pb)
        out.append(h)
        if not every:
            break
        left -= set(h.threads)
    return out


def terminates(prog, model, unroll: int = 2, progress: str | Progress = "fair",
               deadline: Deadline = NO_DEADLINE) -> tuple[bool | None, Finding | None]:
    """Whether every execution terminates (Dat3M's liveness verdict 1; None: not decided, see
    :func:`decide`), and a hang's finding if not."""
    hs, why = decide(prog, model, unroll, progress, deadline, every=False)
    return (None if not hs and why else not hs, hs[0].finding if hs else None)


# -- the witness in words ---------------------------------------------------------------------


def _hang(eg: EventGraph, exe: Execution, pr: Progress, pb) -> Hang:
    threads, words, refs = [], [], []
    for t, k in enumerate(exe.paths):
        p = eg.paths[t][k]
        if p.kind == "stuck":
            threads.append(t)
            text, evs = _stuck_words(eg, exe, t, p.end)
        elif p.kind == "blocked":
            threads.append(t)
            text, evs = _blocked_words(eg, exe, t, p.end[0])
        else:
            continue
        words.append(text)
        refs += evs
    for t, k in enumerate(exe.paths):
        p = eg.paths[t][k]
        if p.kind == "prefix":
            name = eg.program.threads[t].name
            if not p.events:
                words.append(f"{name} never starts ({pr.words()})")
            else:
                words.append(f"{name} is not scheduled after {event_ref(eg, p.events[-1])} ({pr.words()})")
    detail = "; ".join(words) + f" [{pr.words()}]"
    f = Finding(FindingKind.HANG, "hang", tuple(event_ref(eg, e) for e in refs), exe, None, detail)
    return Hang(tuple(threads), f, _prefix(eg, exe))


def _prefix(eg: EventGraph, exe: Execution) -> tuple[str, ...]:
    """Each thread's executed events in program order, the values its reads return and the
    writes they read from; how the thread ends (finishes, repeats its last iteration, blocks)."""
    src, vals = {r: w for w, r in exe.rf}, dict(exe.values)
    ran = _executed(eg, exe)
    out = []
    for t, k in enumerate(exe.paths):
        p = eg.paths[t][k]
        name = eg.program.threads[t].name
        loop = set(p.end[0]) if p.kind == "stuck" else set()
        for e in p.events:
            if e not in ran or not _runs(eg, exe, e, vals):
                continue
            ref = event_ref(eg, e)
            text = f"{name}: {ref.text}" + (f" (line {ref.line})" if ref.line else "")
            if e in src:
                text += f" reads {vals.get(e)} from {_who(eg, src[e])}"
            out.append(text + ("   [repeats forever]" if e in loop else ""))
        end = {"done": "finishes", "stuck": "repeats the marked iteration forever",
               "blocked": "blocks at its last barrier wait", "prefix": "is not scheduled further"}[p.kind]
        out.append(f"{name} {end if p.events or p.kind != 'prefix' else 'never starts'}")
    return tuple(out)


def _runs(eg: EventGraph, exe: Execution, e: int, vals: dict) -> bool:
    """Whether event ``e`` of a chosen path executes (its predicate, a CAS's success)."""
    from ..ir.values import evaluate

    try:
        return bool(evaluate(eg.events[e].cond, vals))
    except (KeyError, TypeError):
        return True


def _line(eg: EventGraph, e: int) -> str:
    ins = eg.events[e].instr
    return f"line {ins.pos.line}" if ins is not None and ins.pos is not None else "its loop"


def _who(eg: EventGraph, w: int) -> str:
    x = eg.events[w]
    if x.thread < 0:
        return "the initial value"
    r = event_ref(eg, w)
    return f"{r.thread}'s `{r.text}`" + (f" (line {r.line})" if r.line else "")


def _stuck_words(eg: EventGraph, exe: Execution, t: int, end: tuple) -> tuple[str, list[int]]:
    events, _, branch, free = end
    name = eg.program.threads[t].name
    where = f"line {branch.pos.line}" if branch.pos is not None else "a loop"
    src = {r: w for w, r in exe.rf}
    vals = dict(exe.values)
    later = {}
    for a, b in exe.co:
        later.setdefault(a, []).append(b)
    parts = []
    reads = [e for e in events if eg.events[e].kind == Kind.R and e in src]
    for r in reads:
        x, w = eg.events[r], src[r]
        loc = (x.vloc or x.loc).split("@")[0]  # a shared location's copy: its name
        newer = later.get(w, [])  # executed writes co-after the one it reads (init pairs included)
        if newer and r in free:
            parts.append(f"its read of {loc} ({_line(eg, r)}) feeds nothing its loop depends on: "
                         "what it returns does not matter")
        elif newer and x.sem == "weak":
            parts.append(f"its weak read of {loc} ({_line(eg, r)}) keeps returning {vals.get(r)} from "
                         f"{_who(eg, w)} although {_who(eg, newer[0])} is co-later: nothing obliges a "
                         "weak read to see it")
        elif newer:
            parts.append(f"its {x.scope}-scope read of {loc} ({_line(eg, r)}) keeps returning "
                         f"{vals.get(r)} from {_who(eg, w)} although {_who(eg, newer[0])} is co-later: "
                         f"that write's thread is outside the read's scope, so nothing obliges the read "
                         "to see it (scoped memory fairness)")
        else:
            parts.append(f"every write of {loc} it could still read is {_who(eg, w)} "
                         f"(value {vals.get(r)}), which no later write replaces"
                         + ("; the mbarrier phase it waits for never completes"
                            if "MBWAIT" in x.tags else ""))
    body = "; ".join(parts) if parts else "its iteration reads nothing that could change"
    return f"{name} spins at {where} forever: {body}", list(reads) or list(events[-1:])


def _executed(eg: EventGraph, exe: Execution) -> set[int]:
    out = set()
    for t, k in enumerate(exe.paths):
        out |= set(eg.paths[t][k].events)
    return out


def _blocked_words(eg: EventGraph, exe: Execution, t: int, w: int) -> tuple[str, list[int]]:
    name = eg.program.threads[t].name
    x = eg.events[w]
    at = _wait_text(eg, w)
    if "HANG" in x.tags:
        return f"{name} waits at {at} forever: it waits in a phase it has not arrived in", [w]
    q = x.barrier[1]
    if q is not None:
        ran = _executed(eg, exe)
        place = [th.placement for th in eg.program.threads]
        mine = [a for a in eg.events if a.kind == Kind.B and "BAR" in a.tags and "ARRIVE" in a.tags
                and a.eid in ran and a.barrier[2] == x.barrier[2]
                and place[a.thread].cta_key == place[t].cta_key]
        return f"{name} waits at {at} forever: {len(mine)} of the {q} threads its count needs arrive", [w]
    from ..semantics.barrier_waits import Barriers
    from ..semantics.executions import concrete_choice, concrete_universe

    ch = concrete_choice(eg, exe)
    bars = Barriers(eg, ch, concrete_universe(eg, ch.execd))
    missing = [m for m in bars.members(x) if not bars.arrives(m, x)]
    names = ", ".join(eg.program.threads[m].name for m in missing)
    group = "cluster" if "CBAR" in x.tags else "warp" if "WARP" in x.tags else "CTA"
    where = [_where(eg, exe, m) for m in missing]
    why = f"{names} of its {group} never arrive{'s' if len(missing) == 1 else ''} in its phase"
    if any(where):
        said = [f"{eg.program.threads[m].name} {d}" for m, d in zip(missing, where) if d]
        why += " (" + "; ".join(said) + ")"
    return f"{name} waits at {at} forever: {why}", [w]


def _wait_text(eg: EventGraph, w: int) -> str:
    ref = event_ref(eg, w)
    return f"`{ref.text.replace(' (wait)', '')}`" + (f" (line {ref.line})" if ref.line else "")


def _where(eg: EventGraph, exe: Execution, t: int) -> str:
    """Where a thread that never arrives is instead, in words ("" when it finished)."""
    p = eg.paths[t][exe.paths[t]]
    if p.kind == "blocked":
        return f"waits at {_wait_text(eg, p.end[0])}"
    if p.kind == "stuck":
        branch = p.end[2]
        return f"spins at line {branch.pos.line}" if branch.pos is not None else "spins in a loop"
    if p.kind == "prefix":
        return "is not scheduled"
    return ""


def cannot_hang(eg: EventGraph) -> bool:
    """Whether no execution of ``eg``'s program can hang: its build met no barrier wait, and no
    thread's control flow has a cycle (threads of one kernel body are looked at once)."""
    from ..semantics.loops import loop_free

    if eg.waits:
        return False
    seen: set[int] = set()
    for t in eg.program.threads:
        if id(t.instrs) not in seen:
            seen.add(id(t.instrs))
            if not loop_free(t):
                return False
    return True


class Hangs:
    """``check(..., liveness=True)``: the hangs as findings, asked of a formula of the liveness
    graph (its own problem); the status is the liveness verdict ("terminates", "hangs",
    "undecided" — no hang found, but that does not decide it: why in ``run.liveness_why`` — or
    "timeout"). No execution finishing within the bound and no hang found is "undecided"."""

    name = "hangs"
    own_problem = True

    def applies(self, prog, opts) -> bool:
        return opts.liveness

    def run(self, r) -> Found:
        from ..engines import TimedOut
        from .sites import QUERY as SITES

        if LOOP_FREE_SHORTCUT and cannot_hang(r.eg):
            r.applied["hangs"] = "loop-free liveness shortcut (no liveness graph)"
            return Found((), "terminates")
        found = tuple(r.findings) if SITES.applies(r.prog, r.opts) and r.status in ("ok", "stopped") else None
        try:
            hs, why, stops = decide_and_stop(r.prog, r.model, r.opts.unroll, r.opts.progress_model,
                                             r.deadline, found=found, graph=r.eg, applied=r.applied)
        except TimedOut:
            return Found((), "timeout")
        _note_barrier_proof(r)
        if not hs and why is not None:
            r.liveness_why = why
            return Found(stops, "undecided")
        return Found(stops + tuple(h.finding for h in hs), "hangs" if hs else "terminates")


def _note_barrier_proof(r) -> None:
    """Notes in ``r.applied`` that :data:`BARRIER_PROOF` spared the hang query (the condition
    :func:`decide_and_stop` tests)."""
    from ..semantics.barrier_waits import never_blocks

    if BARRIER_PROOF and Progress.parse(r.opts.progress_model).fair and never_blocks(r.eg):
        chained = r.applied.get("hangs")  # the liveness problem built for grid-ending sites
        r.applied["hangs"] = "barrier proof (no hang query)" + (f"; {chained}" if chained else "")


QUERY = Hangs()


def verdict(prog, model, unroll: int, progress: str, timeout: float | None) -> bool | None:
    """``ptxmm test --liveness``: whether no execution hangs; None when the time limit passed or
    the verdict is not decided (:func:`decide`)."""
    return verdict_why(prog, model, unroll, progress, timeout)[0]


def verdict_why(prog, model, unroll: int, progress: str,
                timeout: float | None) -> tuple[bool | None, str | None]:
    """:func:`verdict`, and when it is None why: "timeout", or "undecided" and why in words."""
    from ..engines import TimedOut

    try:
        hs, why = decide(prog, model, unroll, progress, Deadline.after(timeout), every=False)
    except TimedOut:
        return None, "timeout"
    if not hs and why:
        return None, why
    return not hs, None
