"""Whether a strengthened program forbids the target outcome, for the fix search
(:mod:`ptxmm.explanation.fix`), asked as cheaply as the answer allows.

A candidate fix forbids the target when no allowed execution of the changed program produces
it. Most candidates do not: an execution that shows the target allowed for one program (the
original, or a candidate already checked) usually shows it for the next one too. So the judge
keeps the witnesses found so far (counterexamples, as in counterexample-guided search) and,
for each candidate, maps them onto the changed program's event graph (a semantics or scope
change keeps every event; an inserted fence adds one, which reads and writes nothing; the
unspecified values the events name are mapped with them: explanation/eventmap.py) and
evaluates the model on each concretely — the evaluation the brute-force engine judges
executions with. One that satisfies every axiom and produces the target is an allowed execution
of the changed program: the candidate is no fix, and no solver is asked. Only when none does is
the engine asked (one verdict query, the condition only: no flags, no sites, no liveness), and an
execution it finds joins the witnesses. The answer is the engine's or an exhibited execution:
the same set of fixes as one engine check per candidate (tests/explanation compare the two).

The changed program's graph is built once for each set of places where fences are inserted: the
candidates with other fences (semantics, scope) at those places, or other semantics and scope
changes besides, patch that graph (:func:`patched`, :func:`refenced`), the same graph the builder
makes (tests/explanation compare them). A program with fences inserted is built with the
original's read-only fold (:data:`FOLD_HINT`, builder.build_with_fold): a fence reads and writes
nothing, so the builder's first, unfolded pass, which only finds the locations no thread writes,
is not repeated for it (tests/explanation/test_explain_reuse.py compares the graphs).

A witness fits a changed graph when every read it executes there has a value: the reads of the
element orders an acquire/release vector's execution did not choose (semantics/vectors.py) have
none and need none (:data:`EXECUTED_READS`); its values must decide which events run (a
witness without the order of a vector whose writes it reads does not: executions.
executed_if_decided), else the engine decides. A candidate that splits vector accesses (vecsplit.py)
is built whole, and the original's events map onto its graph element by element
(:func:`split_map`); a witness carried over by that map must read at each read what its write
writes (:func:`_consistent`) before it is judged (:data:`SPLIT_WITNESSES`). Where the split's
graph has other paths than the original's (an out-of-bounds vector's order forks no more), each
witness is carried path by path (:class:`PathSplit`) and checked as an execution there: its paths'
assumptions true, well formed (executions.violations) (:data:`SPLIT_PATHS`).

A fence.sc inserted (or made so) needs a place in the executions' order of fence.sc events
(``scorder``, existential): each place is tried; with more than one such fence missing from a
witness's order the witness is skipped (the engine decides)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from itertools import permutations, product
from math import prod

from .._infra.records import record
from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model
from ..errors import UnsupportedError
from ..ir.program import Atom, Fence, Load, Program, Red, Store
from ..ir.values import evaluate, mask, unspec_key
from ..queries.checker import check
from ..semantics.builder import Fold, build, build_keeping_fold, build_with_fold
from ..semantics.events import EventGraph, Kind
from ..semantics.executions import (
    co_wellformed,
    concrete_choice,
    concrete_env,
    concrete_universe,
    executed_if_decided,
    finals_wellformed,
    holds,
    rf_wellformed,
)
from ..semantics.memory import RMW_SEMS
from ..semantics.outcomes import observables, outcome_of, satisfies
from ..semantics.result import Execution
from ..semantics.unreached import Stepped, build_keeping_fold_visited, fold_of_thread_edit, unreached
from ..semantics.vocab import Candidates, candidates
from .eventmap import event_map, map_execution, reverse_map, unspec_map, unspecs_of
from .targets import with_target
from .vecsplit import vector_size_of as vector_size

POOL_MAX = 64  # witnesses kept (most recently useful first)
GRAPHS_MAX = 256  # graphs of sets of inserted fences kept
# A program with fences inserted is built with the original's read-only fold (builder.
# build_with_fold: a fence reads and writes nothing), not unfolded first to find it; False: each
# is built whole (the tests compare the two graphs)
FOLD_HINT = True
# A witness fits a changed graph when every read it executes there has a value: a read on its paths
# whose condition its values make false needs none — the order of an acquire or release vector's
# elements is a value the execution chooses (semantics/vectors.py, PTX ISA 8.2.4), and the reads of
# the orders not chosen execute in no witness; False: every read on its paths needs a value (no
# witness of such a program fits: the engine judges every candidate). The tests compare the two.
EXECUTED_READS = True
# A candidate that splits vector accesses (vecsplit.py) is judged by the known witnesses too: its
# graph is built whole and the original's events map onto it (:func:`split_map`: each element's
# copies, one per position in the order, onto the element's one access; the order's unspecified
# value dropped); a witness carried over must then also read, at every read, the value its write
# writes (:func:`_consistent`); the engine's witness for a split joins them carried back
# (:func:`_carried_back`). False: the engine judges every split (the tests compare the two).
# Measured with EXECUTED_READS (session 17, device, 8 processes side by side, CPU s, the same
# JSON and SVG): CUB's packed acq_rel tile state explain 46.3 -> 11.0, graph 41.9 -> 8.8; the
# packed one 12.4 -> 5.5 and 9.9 -> 3.8 (67 candidates: 43 -> 1 engine checks).
SPLIT_WITNESSES = True
# A split whose graph's paths are not the original's one for one (:func:`split_map` None: CUB's
# packed acq_rel tile state's polls before the look-back loop, whose order label, a plain label
# once split, the builder reads around a forward branch: a path fewer) is judged by the known
# witnesses too, each carried path by path (:class:`PathSplit`: a path of the changed graph whose
# events correspond to those of the witness's path and whose assumptions its values make true),
# then checked as an execution there (:func:`_fits`, :func:`_consistent`, executions.violations)
# before it is judged. False: the engine judges such splits (the tests compare the two).
SPLIT_PATHS = True
PATH_CHOICES_MAX = 64  # combinations of corresponding paths tried per witness
# The candidate pairs of a graph (vocab.candidates: rf and co, and the writes of each location) are
# a function of its events' ids, kinds, locations, threads and paths alone: a graph patched from
# another (:func:`patched`, :func:`refenced`: semantics, scopes and instructions changed) has the
# other's, and only its fence.sc events (``scf``, which look at the semantics) are read again. The
# judge keeps them by that shape; False: computed anew for every candidate (the tests compare the two).
# Measured (session 17, workstation, shared, same minute): 90 of the 120 candidates' computations
# of CUB's unpacked tile state without fences are saved.
SHARED_CANDIDATES = True
CANDS_MAX = 64  # shapes kept
# A fence inserted where the thread's build never came near (semantics/unreached.py: neither the
# place nor the instruction before it stepped on any path, no loop around it, nothing the builder
# reads without stepping it) runs on no path: the changed program's graph is the original's, its
# program aside, and is not built. False: each such program is built (the tests compare the
# graphs). CUB's unpacked tile state without fences: 20 of its 30 fence programs lie in the code
# of the other blocks' tiles (workstation, shared, same minute, CPU s: explain 10.2-10.9 -> 5.6-6.0).
UNREACHED_FENCES = True
# A candidate that splits vector accesses in one thread (a kernel's: the others unchanged) is built
# with the read-only fold the builder's first, unfolded pass would find, found from that thread's
# unfolded build alone and the original's record of the other threads' accesses (semantics/
# unreached.py fold_of_thread_edit), not from a whole unfolded build. False: built whole (build).
# The tests compare the graphs (tests/explanation/test_fix_one_thread_fold.py).
ONE_THREAD_FOLD = True
# A graph patched from another (:func:`patched`: semantics and scopes changed) differs from it only
# in the changed events; a witness that runs none of them is an execution of both whose base sets
# and relations (the concrete universe holds the executed events alone: semantics/vocab.py masks
# every set and relation with it) and outcome are the same: whether it is shown allowed is that of
# the first such graph it was judged on (kept per witness and graph patched from; a fence program
# whose graph is the original's counts as patched from it with nothing changed). False: judged
# again on each (the tests compare the two).
UNCHANGED_WITNESSES = True
Mapped = tuple[EventGraph, dict[int, int]]  # a changed program's graph, the original's events into it


@record(frozen=False)
class JudgeStats:
    engine_checks: int = 0  # candidates the engine was asked about
    by_witness: int = 0  # candidates a known witness showed are no fix
    built: int = 0  # candidates whose graph could not be patched (built whole)
    unchanged: int = 0  # witnesses' verdicts taken from the graph patched from (UNCHANGED_WITNESSES)
    time_s: float = 0.0


# how each kind of instruction's events take its semantics (memory.py, fences.py): a load's read,
# a store's write, a fence's F event take the instruction's; an atom's or red's read and write
# the pair of RMW_SEMS; each takes the instruction's scope
_OWN = {Load: {Kind.R: 0}, Store: {Kind.W: 0}, Fence: {Kind.F: 0}, Atom: {Kind.R: 1, Kind.W: 2},
        Red: {Kind.R: 1, Kind.W: 2}}


def _sem_of(ins, slot: int) -> str | None:
    return ins.sem if slot == 0 else RMW_SEMS[ins.sem][slot - 1]


def patched(eg_f: EventGraph, tprog: Program, changes, fences) -> EventGraph | None:
    """``tprog``'s event graph made from ``eg_f`` (the graph of the same program before the
    semantics or scope ``changes``): each changed instruction's events take its new semantics
    and scope. None when an event of a changed instruction does not show the instruction's own
    semantics and scope (made by another rule: build the graph whole)."""
    events = list(eg_f.events)
    by_instr: dict[tuple[int, int], list[int]] = {}  # (thread, instruction) → its events (a
    for e in eg_f.events:  # kernel's threads share their instructions: each thread's own)
        if e.instr is not None:
            by_instr.setdefault((e.thread, id(e.instr)), []).append(e.eid)
    for c in changes:
        shift = sum(1 for f in fences if f.thread == c.thread and f.index <= c.index)
        old = eg_f.program.threads[c.thread].instrs[c.index + shift]
        new = tprog.threads[c.thread].instrs[c.index + shift]
        own = _OWN.get(type(old))
        if own is None or type(new) is not type(old):
            return None
        for eid in by_instr.get((c.thread, id(old)), ()):
            e = events[eid]
            slot = own.get(e.kind)
            if slot is None or e.sem != _sem_of(old, slot) or e.scope != old.scope:
                return None
            events[eid] = replace(e, sem=_sem_of(new, slot), scope=new.scope, instr=new)
    for f in fences:  # the inserted fences' events name this program's instructions
        at = f.index + sum(1 for g in fences if g.thread == f.thread and g.index < f.index)
        old, new = eg_f.program.threads[f.thread].instrs[at], tprog.threads[f.thread].instrs[at]
        if not isinstance(old, Fence) or old != new:
            return None
        for eid in by_instr.get((f.thread, id(old)), ()):
            events[eid] = replace(events[eid], instr=new)
    return replace(eg_f, program=tprog, events=tuple(events))


def refenced(eg_o: EventGraph, prog_f: Program, old: tuple, new: tuple) -> EventGraph | None:
    """``prog_f``'s event graph made from ``eg_o``, the graph of the same program with other
    fences inserted at the same places (``old`` and ``new``: the fence changes, in one order of
    their places): each inserted fence's events take the new fence's semantics, scope and
    instruction. The builder makes one F event of the fence's own semantics and scope wherever a
    path passes it (fences.fence), and nothing else it builds (paths, awaits, dependencies) looks
    at a fence's semantics or scope; None when an event shows otherwise (build it whole)."""
    if [(c.thread, c.index) for c in old] != [(c.thread, c.index) for c in new]:
        return None
    events = list(eg_o.events)
    by_instr: dict[tuple[int, int], list[int]] = {}
    for e in eg_o.events:
        if e.instr is not None:
            by_instr.setdefault((e.thread, id(e.instr)), []).append(e.eid)
    for c in old:
        at = c.index + sum(1 for g in old if g.thread == c.thread and g.index < c.index)
        was, now = eg_o.program.threads[c.thread].instrs[at], prog_f.threads[c.thread].instrs[at]
        if not isinstance(was, Fence) or not isinstance(now, Fence) or was.restrict or now.restrict:
            return None
        for eid in by_instr.get((c.thread, id(was)), ()):
            e = events[eid]
            if e.kind != Kind.F or e.sem != was.sem or e.scope != was.scope or e.tags:
                return None
            events[eid] = replace(e, sem=now.sem, scope=now.scope, instr=now)
    return replace(eg_o, program=prog_f, events=tuple(events))


class Judge:
    """Judges candidate programs (``prog`` with changes applied) against ``target``; see the
    module docstring. ``witnesses=False``: every candidate asks the engine (the plain search)."""

    def __init__(self, prog: Program, model: Model, target, unroll: int = 2, witnesses: bool = True):
        self.prog, self.model, self.target, self.unroll = prog, model, target, unroll
        self.use_witnesses = witnesses
        self._stepped: Stepped | None = None  # what the original's build stepped
        if UNREACHED_FENCES:
            self.eg, self._fold, self._stepped = build_keeping_fold_visited(with_target(prog, target), unroll)
        else:
            self.eg, self._fold = build_keeping_fold(with_target(prog, target), unroll=unroll)
        self.pool: list[Execution] = []  # witnesses, as executions of self.eg
        self.stats = JudgeStats()
        self.verdicts: dict[object, bool] = {}  # a set of changes → whether it forbids
        self.original: bool | None = None
        # the inserted fences of a set of changes → the graph of the program with those alone
        # (and the target), and the map of the original's events into it
        self._fence_graphs: dict[tuple, Mapped] = {
            (): (self.eg, {e.eid: e.eid for e in self.eg.events} | unspec_map(self.eg, self.eg, {}))}
        # the places of a set of inserted fences → a key of _fence_graphs with fences there
        self._fence_places: dict[tuple, tuple] = {}
        self._cands: dict[tuple, Candidates] = {}  # a graph's shape → its candidates (_candidates)
        # the last graph patched (:func:`patched`) and the events of the graph it was patched from
        self._patch: tuple[EventGraph, tuple] | None = None
        # (a witness, a graph's events) → (them, whether the witness is shown allowed there)
        self._shown: dict[tuple[int, int], tuple[Execution, tuple, bool]] = {}

    def known(self, forbidden: bool, witness: Execution | None) -> None:
        """The original program's verdict, as a check of it (with the target as its condition,
        on the same event graph) found it, and its witness when allowed: not asked again."""
        self.original = forbidden
        if witness is not None and not forbidden:
            self._remember(witness)

    def forbids(self) -> bool:
        """Whether the original program forbids the target outcome (asked once)."""
        if self.original is None:
            t0 = time.perf_counter()
            tprog = with_target(self.prog, self.target)
            self.original = self._judged(tprog, self.eg, self._fence_graphs[()][1])
            self.stats.time_s += time.perf_counter() - t0
        return self.original

    def forbids_changes(self, changes, applied: Callable[[], tuple[Program, frozenset[int]]]) -> bool:
        """Whether the program with ``changes`` (``applied()``: that program and the ids of the
        fences it inserted) forbids the target; a set of changes judged before is not judged again.
        Its event graph is that of its inserted fences alone (built once for every candidate with
        those fences) with the semantics and scopes of the changed accesses and fences patched in
        (:func:`patched`), where the events show they were read off the instruction alone."""
        if changes not in self.verdicts:
            t0 = time.perf_counter()
            prog2, inserted = applied()
            tprog = with_target(prog2, self.target)
            eg2, emap = self.graph_of(tuple(changes), tprog, inserted)
            self.verdicts[changes] = self._judged(tprog, eg2, emap)
            self.stats.time_s += time.perf_counter() - t0
        return self.verdicts[changes]

    def graph_of(self, changes: tuple, tprog: Program, inserted: frozenset[int]) -> Mapped:
        """``tprog``'s event graph (``tprog``: the program with ``changes`` and the target;
        ``inserted``: the ids of its inserted fences) and the map of the original's events into it."""
        if any(c.kind in ("split", "guard", "pack") for c in changes):  # instructions moved: no witness kept
            eg2 = self.whole_graph(tprog, changes)
            if not SPLIT_WITNESSES or not all(c.kind == "split" for c in changes):
                return eg2, {}
            smap = split_map(self.eg, eg2, changes)
            if smap is None and SPLIT_PATHS:
                return eg2, PathSplit(self.eg, eg2, changes)
            return eg2, smap or {}
        fences = tuple(c for c in changes if c.kind == "fence")
        base = self._fence_graphs.get(fences) or self._same_places(fences)
        if base is None and fences == changes:  # fences only: this program's own graph
            eg2 = self._fenced(tprog, fences)
            return self._keep(fences, (eg2, event_map(self.eg, eg2, inserted)))
        if base is None:
            prog_f, ins_f = self._apply_fences(fences)
            eg_f = self._fenced(with_target(prog_f, self.target), fences)
            base = self._keep(fences, (eg_f, event_map(self.eg, eg_f, ins_f)))
        eg_f, emap = base
        eg2 = patched(eg_f, tprog, [c for c in changes if c.kind != "fence"], fences)
        self._patch = None if eg2 is None else (eg2, eg_f.events)
        if eg2 is None:
            self.stats.built += 1
            eg2 = build(tprog, unroll=self.unroll)
            return eg2, event_map(self.eg, eg2, inserted)
        return eg2, emap

    def whole_graph(self, tprog: Program, changes: tuple) -> EventGraph:
        """``tprog``'s graph built whole (``changes``: its changes, which move instructions); a
        program of splits in one thread with the read-only fold found from that thread's build
        alone (:data:`ONE_THREAD_FOLD`)."""
        self.stats.built += 1
        threads = {c.thread for c in changes}
        if ONE_THREAD_FOLD and self._stepped is not None and len(threads) == 1 and \
                all(c.kind == "split" for c in changes):
            fold = fold_of_thread_edit(tprog, threads.pop(), self._stepped, self.unroll)
            if fold is not None:
                return build_with_fold(tprog, fold, unroll=self.unroll)
        return build(tprog, unroll=self.unroll)

    def fenced_graph(self, tprog: Program) -> EventGraph:
        """The graph of ``tprog``, the original program with fences inserted (and the target):
        with the original's read-only fold (:data:`FOLD_HINT`), else built whole."""
        fold: Fold | None = self._fold
        if FOLD_HINT and fold is not None:
            return build_with_fold(tprog, fold, unroll=self.unroll)
        return build(tprog, unroll=self.unroll)

    def _fenced(self, tprog: Program, fences: tuple) -> EventGraph:
        """The graph of ``tprog``, the original with ``fences`` inserted: the original's when
        no path comes near any of them (:data:`UNREACHED_FENCES`), else :meth:`fenced_graph`."""
        stepped = self._stepped
        if stepped is not None and fences and all(
                unreached(self.prog.threads[c.thread], c.index, stepped) for c in fences):
            return replace(self.eg, program=tprog)
        return self.fenced_graph(tprog)

    def _keep(self, fences: tuple, graph: Mapped) -> Mapped:
        if len(self._fence_graphs) >= GRAPHS_MAX:
            self._fence_graphs.pop(next(k for k in self._fence_graphs if k))
        self._fence_graphs[fences] = graph
        self._fence_places[tuple((c.thread, c.index) for c in fences)] = fences
        return graph

    def _same_places(self, fences: tuple) -> Mapped | None:
        """The graph of the program with these fences inserted, made from a kept graph of other
        fences at the same places (:func:`refenced`; the events keep their ids, so the map of
        the original's events is that graph's); None: none kept, or it cannot be patched."""
        if not fences:
            return None
        other = self._fence_places.get(tuple((c.thread, c.index) for c in fences))
        kept = None if other is None else self._fence_graphs.get(other)
        if kept is None:
            return None
        prog_f, _ = self._apply_fences(fences)
        eg_f = refenced(kept[0], with_target(prog_f, self.target), other, fences)
        return None if eg_f is None else self._keep(fences, (eg_f, kept[1]))

    def _apply_fences(self, fences: tuple) -> tuple[Program, frozenset[int]]:
        """The original program with these fences inserted (as fix.apply inserts them) and the
        ids of the inserted instructions."""
        threads = list(self.prog.threads)
        inserted: set[int] = set()
        for c in sorted(fences, key=lambda c: (c.thread, -c.index)):
            f = Fence(sem=c.sem, scope=c.scope, text=f"fence.{c.sem}.{c.scope}")
            inserted.add(id(f))
            t = threads[c.thread]
            threads[c.thread] = replace(t, instrs=t.instrs[:c.index] + (f,) + t.instrs[c.index:])
        return replace(self.prog, threads=tuple(threads)), frozenset(inserted)

    def _judged(self, tprog: Program, eg2: EventGraph, emap: dict[int, int]) -> bool:
        if self.use_witnesses and self.pool and self._shown_allowed(tprog, eg2, emap):
            self.stats.by_witness += 1
            return False
        self.stats.engine_checks += 1
        res = check(tprog, self.model, unroll=self.unroll, verdict_only=True, flags=False, graph=eg2,
                    properties=("condition",))
        if res.holds is True and res.outcomes and res.outcomes[0].witness is not None:
            exe = _carried_back(self.eg, eg2, emap, res.outcomes[0].witness)
            if exe is not None:
                self._remember(exe)
        return res.holds is False

    def _remember(self, exe: Execution) -> None:
        self.pool.insert(0, exe)
        del self.pool[POOL_MAX:]

    def _shown_allowed(self, tprog: Program, eg2: EventGraph, emap: dict[int, int]) -> bool:
        """Whether a known witness, carried over to ``eg2``, is an allowed execution producing
        the target (then it moves to the front of the pool)."""
        cand = self._candidates(eg2)
        obs = observables(eg2, "condition")
        many = isinstance(emap, (SplitMap, PathSplit))  # many to one (split_map, PathSplit)
        base, changed = self._base_of(eg2)
        for i, exe in enumerate(self.pool):
            exe2 = _carried(exe, emap)
            if exe2 is None:
                continue
            if not _fits(eg2, exe2) or many and not _consistent(eg2, exe2):  # its paths differ in the
                continue  # changed graph: not a witness here; the engine decides
            ran = None  # the events it runs; None where its values do not decide them (an order it
            if isinstance(emap, PathSplit):  # lacks: not a witness here; the engine decides)
                ran = executed_if_decided(eg2, exe2)
                if ran is None or not well_formed(eg2, cand, exe2):
                    continue
            key = None if base is None or _runs_any(eg2, exe2, changed) else (id(exe), id(base))
            hit = self._shown.get(key) if key is not None else None
            if hit is not None and hit[0] is exe and hit[1] is base:
                shown = hit[2]
                self.stats.unchanged += 1
            else:  # (a hit was decided: the witness runs none of the changed events)
                ran = ran if ran is not None else executed_if_decided(eg2, exe2)
                if ran is None:
                    continue
                shown = any(self._allowed(tprog, eg2, x, cand, obs)
                            for x in _sc_placements(exe2, cand.scf, ran))
                if key is not None:
                    self._shown[key] = (exe, base, shown)
            if shown:
                self.pool.insert(0, self.pool.pop(i))
                return True
        return False

    def _base_of(self, eg2: EventGraph) -> tuple[tuple | None, frozenset[int]]:
        """The events of the graph ``eg2`` was patched from (or are ``eg2``'s own: a fence program
        whose graph is the original's) and the ids of those it changed; None: neither
        (:data:`UNCHANGED_WITNESSES`)."""
        if not UNCHANGED_WITNESSES:
            return None, frozenset()
        if eg2.events is self.eg.events:
            return eg2.events, frozenset()
        if self._patch is None or self._patch[0] is not eg2:
            return None, frozenset()
        base = self._patch[1]
        return base, frozenset(k for k, (a, b) in enumerate(zip(base, eg2.events)) if a is not b)

    def _candidates(self, eg2: EventGraph) -> Candidates:
        """``vocab.candidates(eg2)``, its rf and co those of a graph of the same shape judged
        before (:data:`SHARED_CANDIDATES`)."""
        if not SHARED_CANDIDATES:
            return candidates(eg2)
        shape = tuple((e.kind, e.loc, e.thread, e.paths) for e in eg2.events)
        kept = self._cands.get(shape)
        if kept is None:
            if len(self._cands) >= CANDS_MAX:
                self._cands.pop(next(iter(self._cands)))
            kept = self._cands[shape] = candidates(eg2)
        scf = [e.eid for e in eg2.events if e.kind == Kind.F and e.sem == "sc"]
        return Candidates(kept.rf, kept.co, scf, kept.writes_at)

    def _allowed(self, tprog: Program, eg2: EventGraph, exe: Execution, cand, obs) -> bool:
        if not satisfies(tprog, eg2, outcome_of(eg2, obs, exe), obs):
            return False
        res = interp(self.model, concrete_env(eg2, exe, cand), flags=False)
        return all(ax.holds(st.check, v) for st, v in res.axioms)


def _carried(exe: Execution, emap) -> Execution | None:
    """A known witness carried over to a changed graph by its map (None: it names an event
    without an image there)."""
    if isinstance(emap, PathSplit):
        return emap.carry(exe)
    try:
        return map_execution(exe, emap)
    except KeyError:
        return None


def well_formed(eg2: EventGraph, cand: Candidates, exe: Execution) -> bool:
    """Whether ``executions.violations(eg2, cand, exe)`` is empty (rf, co, co-transitive, final),
    the transitivity of co checked on the execution's own pairs: for writes of one location that
    it runs, co(a, b) and co(b, c) give co(a, c) — the triples violations states as constraints
    over every pair of the location's writes, which cost seconds on a kernel's graph."""
    ch = concrete_choice(eg2, exe)
    u = concrete_universe(eg2, ch.execd)
    full = dict(exe.values)
    ev = eg2.events

    def same_value(w: int, r: int) -> bool:
        return evaluate(ev[w].value, full) == full.get(r, 0)

    if not holds(rf_wellformed(eg2, u, {p: ch.rf(*p) for p in cand.rf}, same_value)) or \
            not holds(co_wellformed(u, {p: ch.co(*p) for p in cand.co})):
        return False
    at = {w: loc for loc, ws in cand.writes_at.items() for w in ws}
    co = {(a, b) for a, b in ch.cos if a != b and a in ch.execd and b in ch.execd and a in at
          and at[a] == at.get(b)}
    after: dict[int, set[int]] = {}
    for a, b in co:
        after.setdefault(a, set()).add(b)
    if any((a, c) not in co for a, b in co for c in after.get(b, ()) if c != a):
        return False
    return finals_wellformed(u, cand, exe, ch)


def _runs_any(eg2: EventGraph, exe: Execution, ids: frozenset[int]) -> bool:
    """Whether the execution runs any of these events of ``eg2`` (True where that is not decided:
    a condition names a value it lacks)."""
    if not ids:
        return False
    vals = dict(exe.values)
    evs = [eg2.events[k] for k in ids]
    return any(e.thread < 0 or exe.paths[e.thread] in e.paths and _may_run(e, vals) for e in evs)


def _fits(eg2: EventGraph, exe: Execution) -> bool:
    """Whether a carried-over execution is one of ``eg2``'s candidates as far as its shape goes:
    a path of each thread, and a value for every read those paths execute (else ``eg2``'s paths
    are not the original's: a value of the changed program's read would be invented). A read on
    the paths whose condition is false under the execution's values does not execute and has
    none (:data:`EXECUTED_READS`)."""
    if len(exe.paths) != len(eg2.paths) or any(k >= len(ps) for k, ps in zip(exe.paths, eg2.paths)):
        return False
    vals = dict(exe.values)
    return not any(e.kind == Kind.R and e.thread >= 0 and e.eid not in vals and exe.paths[e.thread] in e.paths
                   and (not EXECUTED_READS or _may_run(e, vals)) for e in eg2.events)


def _may_run(e, vals: dict[int, int]) -> bool:
    """Whether an event may execute under these values: its condition true, or not decided by
    them (it names a value they lack)."""
    try:
        return bool(evaluate(e.cond, vals))
    except (KeyError, UnsupportedError):
        return True


def _sc_placements(exe: Execution, scf, ran: set[int]) -> list[Execution]:
    """The execution (``ran``: the events it executes) with every executed fence.sc in its sc
    order: as it is; with one missing, once for each place it may take; with more missing, none
    (the engine decides)."""
    have = set(exe.scorder)
    missing = [f for f in scf if f in ran and f not in have]
    if not missing:
        return [exe]
    if len(missing) > 1:
        return []
    order = list(exe.scorder)
    return [Execution(exe.paths, exe.rf, exe.co, exe.values, tuple(order[:k] + missing + order[k:]),
                      exe.final, exe.phases) for k in range(len(order) + 1)]


class SplitMap(dict):
    """:func:`split_map`'s map, and the value of each order it drops (``orders``: the key of the
    order's unspecified value → the number of the order the split fixes)."""

    orders: dict[int, int]


def _carried_back(eg: EventGraph, eg2: EventGraph, emap: dict, exe2: Execution) -> Execution | None:
    """A witness the engine found for a candidate, as an execution of the original's graph
    (None: an event of the candidate has no original). A split's (:class:`SplitMap`): each
    access of a split element carried to the copy of it that the split's order runs, that
    order's unspecified value set to it (the copies' conditions name it alone, else None)."""
    if isinstance(emap, PathSplit):  # paths matched per witness: not carried back
        return None
    if not isinstance(emap, SplitMap):
        try:
            return map_execution(exe2, reverse_map(emap, eg2))
        except KeyError:
            return None
    vals = dict(emap.orders)
    by: dict[int, list[int]] = {}
    back: dict[int, int] = {}
    for x, y in emap.items():
        if x >= 0:
            by.setdefault(y, []).append(x)
        elif y is not None:
            back[y] = x
    try:
        for y, xs in by.items():
            runs = xs if len(xs) == 1 else [x for x in xs if evaluate(eg.events[x].cond, vals)]
            if len(runs) != 1:
                return None
            back[y] = runs[0]
        exe = map_execution(exe2, back)
    except (KeyError, UnsupportedError):
        return None
    return replace(exe, values=exe.values + tuple(emap.orders.items()))


def split_map(eg: EventGraph, eg2: EventGraph, splits) -> SplitMap | None:
    """The original's events (and unspecified values, by their keys) mapped onto ``eg2``, the
    graph of the program with the vector ``splits`` made (vecsplit.apply_split: a thread's
    instructions keep their places, a split vector's elements are reordered, the flag's replaced).
    An acquire/release vector's element is accessed once per position of the order
    (semantics/vectors.py ``choose``): every copy maps onto the element's one access, and the
    order's unspecified value onto None (the split fixes the order). None when the graphs do not
    correspond event by event elsewhere (the same kind and instruction, the same paths)."""
    if [len(p) for p in eg.paths] != [len(p) for p in eg2.paths]:
        return None
    elem, elem2, fixed = _split_elements(eg, eg2, splits)
    out = SplitMap()
    removed: dict[int, tuple] = {}  # an order's unspecified value → the split that fixes it
    for t in {e.thread for e in eg.events} | {e.thread for e in eg2.events}:
        a = [e for e in eg.events if e.thread == t]
        b = [e for e in eg2.events if e.thread == t]
        if not _walk(a, b, elem.get(t, {}), elem2.get(t, {}), out, removed):
            return None
    kept = [u for u in eg.unspecified if u.uid not in removed]
    if len(kept) != len(eg2.unspecified) or any((u.w, u.where) != (v.w, v.where)
                                                for u, v in zip(kept, eg2.unspecified)):
        return None
    out.update({unspec_key(u.uid): unspec_key(v.uid) for u, v in zip(kept, eg2.unspecified)})
    out.update({unspec_key(uid): None for uid in removed})
    out.orders = {unspec_key(uid): fixed[key] for uid, key in removed.items()}
    return out


class PathSplit:
    """A split's graph whose threads' paths do not correspond one for one with the original's
    (:func:`split_map` None: the split's order label, a plain label now, changes what the builder
    reads around it, e.g. a path the unfolded order told apart is one path now): a witness is
    carried path by path (:meth:`carry`, :data:`SPLIT_PATHS`)."""

    def __init__(self, eg: EventGraph, eg2: EventGraph, splits):
        self.eg, self.eg2 = eg, eg2
        self.elem, self.elem2, _fixed = _split_elements(eg, eg2, splits)
        removed: set[int] = set()  # the split vectors' orders' unspecified values
        for e in eg.events:
            if e.instr is not None and id(e.instr) in self.elem.get(e.thread, {}):
                removed |= unspecs_of(e.cond)
        kept = [u for u in eg.unspecified if u.uid not in removed]
        self.base: dict | None = None  # the initial writes and the unspecified values
        if len(kept) == len(eg2.unspecified) and all((u.w, u.where) == (v.w, v.where)
                                                     for u, v in zip(kept, eg2.unspecified)):
            a = [e for e in eg.events if e.thread < 0]
            b = [e for e in eg2.events if e.thread < 0]
            base: dict = {}
            if len(a) == len(b) and all((x.kind, x.loc, x.value) == (y.kind, y.loc, y.value)
                                        for x, y in zip(a, b)):
                base.update({x.eid: y.eid for x, y in zip(a, b)})
                base.update({unspec_key(u.uid): unspec_key(v.uid) for u, v in zip(kept, eg2.unspecified)})
                base.update({unspec_key(uid): None for uid in removed})
                self.base = base
        self._aligned: dict[tuple[int, int], list[tuple[int, dict]]] = {}

    def aligned(self, t: int, k: int) -> list[tuple[int, dict]]:
        """The changed graph's paths of thread ``t`` whose events correspond to those of the
        original's path ``k`` (:func:`_walk`), each with the map of those events."""
        hit = self._aligned.get((t, k))
        if hit is None:
            a = [self.eg.events[x] for x in self.eg.paths[t][k].events]
            hit = []
            for j, q in enumerate(self.eg2.paths[t]):
                m: dict[int, int] = {}
                if _walk(a, [self.eg2.events[y] for y in q.events], self.elem.get(t, {}),
                         self.elem2.get(t, {}), m, {}, same_paths=False):
                    hit.append((j, m))
            self._aligned[(t, k)] = hit
        return hit

    def carry(self, exe: Execution) -> Execution | None:
        """A witness of the original as an execution of the changed graph: for each thread a path
        whose events correspond to those of the witness's path and whose assumptions its values
        make true (the first such choice; None: none, or an event it names has no image). What
        else makes it an execution there is checked by the caller (:meth:`Judge._shown_allowed`)."""
        if self.base is None or len(exe.paths) != len(self.eg2.paths):
            return None
        choices = [self.aligned(t, k) for t, k in enumerate(exe.paths)]
        if not all(choices) or prod(len(c) for c in choices) > PATH_CHOICES_MAX:
            return None
        for pick in product(*choices):
            emap = dict(self.base)
            for _j, m in pick:
                emap.update(m)
            try:
                exe2 = replace(map_execution(exe, emap), paths=tuple(j for j, _m in pick))
            except KeyError:
                return None
            vals = dict(exe2.values)
            if all(_true(a, vals) for t, (j, _m) in enumerate(pick) for a in self.eg2.paths[t][j].assumes):
                return exe2
        return None


def _true(x, vals: dict[int, int]) -> bool:
    """Whether a condition holds under these values (False: it names a value they lack)."""
    try:
        return bool(evaluate(x, vals))
    except (KeyError, UnsupportedError):
        return False


def _split_elements(eg: EventGraph, eg2: EventGraph, splits) -> tuple[dict, dict, dict[tuple, int]]:
    """Each thread's split vector elements in both graphs (thread → id(element) → (the split,
    the element's index)), and the number of the order each split fixes (vectors.choose)."""
    elem: dict[int, dict[int, tuple]] = {}
    elem2: dict[int, dict[int, tuple]] = {}
    fixed: dict[tuple, int] = {}
    for c in splits:
        n = vector_size(eg.program.threads[c.thread].instrs, c.index)
        old = eg.program.threads[c.thread].instrs[c.index:c.index + n]
        new = eg2.program.threads[c.thread].instrs[c.index:c.index + n]
        key = (c.thread, c.index)
        elem.setdefault(c.thread, {}).update({id(x): (key, k) for k, x in enumerate(old)})
        order = [k for k in range(n) if k != c.element]
        order = order + [c.element] if isinstance(old[0], Store) else [c.element, *order]
        elem2.setdefault(c.thread, {}).update({id(x): (key, k) for x, k in zip(new, order)})
        fixed[key] = list(permutations(range(n))).index(tuple(order))
    return elem, elem2, fixed


def _walk(a, b, elem: dict, elem2: dict, out: dict, removed: dict[int, tuple],
          same_paths: bool = True) -> bool:
    """One thread's events of both graphs side by side (see :func:`split_map`); ``same_paths=False``:
    two events of one path each (:class:`PathSplit`), their sets of paths not compared."""
    i = j = 0
    while i < len(a):
        e = a[i]
        if e.instr is not None and id(e.instr) in elem:  # a run of a split vector's copies
            run2: dict = {}
            while j < len(b) and b[j].instr is not None and id(b[j].instr) in elem2:
                k = elem2[id(b[j].instr)]
                if k in run2:  # one vector twice in a row: the runs are not told apart
                    return False
                run2[k] = b[j]
                j += 1
            while i < len(a) and a[i].instr is not None and id(a[i].instr) in elem:
                x = a[i]
                y = run2.get(elem[id(x.instr)])
                if y is None or y.kind != x.kind or same_paths and y.paths != x.paths:
                    return False
                out[x.eid] = y.eid
                removed.update(dict.fromkeys(unspecs_of(x.cond), elem[id(x.instr)][0]))
                i += 1
            continue
        if j >= len(b):
            return False
        y = b[j]
        if y.kind != e.kind or same_paths and y.paths != e.paths or \
                (e.instr is None) != (y.instr is None) or \
                e.instr is not None and id(e.instr) != id(y.instr) and e.instr != y.instr:
            return False
        out[e.eid] = y.eid
        i += 1
        j += 1
    return j == len(b)


def _consistent(eg2: EventGraph, exe: Execution) -> bool:
    """Whether every read of a carried-over execution returns what its write writes (a split's
    map pairs events by element: checked, not assumed)."""
    vals = dict(exe.values)
    for w, r in exe.rf:
        ew, er = eg2.events[w], eg2.events[r]
        if ew.value is None or r not in vals:
            return False
        try:
            if mask(evaluate(ew.value, vals), er.w or 64) != mask(vals[r], er.w or 64):
                return False
        except (KeyError, UnsupportedError):
            return False
    return True
