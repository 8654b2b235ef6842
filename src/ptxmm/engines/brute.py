"""The brute-force engine, herd style: stream every candidate execution — a path per thread, an
rf source per read, a partial coherence order per location, an order of the fence.sc events, a
co-maximal write per observed location — and keep those the model accepts, evaluated with the
concrete relation algebra (every guard static). Slow, simple and independent of the solver: the
test oracle of the Z3 engine."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model
from ..cat.relalg import Guard
from ..events import EventGraph
from ..outcomes import Observable, value_expr
from ..result import Execution
from ..values import Expr, evaluate, reads_of
from ..vocab import Candidates, base_env
from . import NO_DEADLINE, Deadline


class ConcreteLogic:
    """Concrete executions have no terms: every guard is True or False."""

    def and_(self, terms):  # pragma: no cover - never reached with static guards
        raise AssertionError("symbolic term in a concrete execution")

    or_ = not_ = and_


class ConcreteChoice:
    """One candidate execution as a Choice: executed events, rf, co, SC-fence order, values."""

    lg = ConcreteLogic()

    def __init__(self, eg: EventGraph, execd: set[int], rf: dict[int, int], co: set[tuple[int, int]],
                 sc: list[int], values: dict[int, int], phases: dict[int, int] | None = None):
        self.eg, self.execd, self.rfm, self.cos, self.values = eg, execd, rf, co, values
        self.rank = {f: i for i, f in enumerate(sc)}
        self.phases = phases or {}

    def exec(self, e: int) -> Guard:
        return e in self.execd

    def rf(self, w: int, r: int) -> Guard:
        return self.rfm.get(r) == w

    def co(self, a: int, b: int) -> Guard:
        return (a, b) in self.cos

    def sc(self, f: int, g: int) -> Guard:
        return f in self.rank and g in self.rank and self.rank[f] < self.rank[g]

    def cond(self, e: Expr) -> Guard:
        return bool(evaluate(e, self.values))

    def same_phase(self, a: int, b: int) -> Guard:
        pa, pb = self.phases.get(a), self.phases.get(b)
        if pa is None or pb is None:
            return self.eg.events[a].barrier[2] == self.eg.events[b].barrier[2]  # k-th arrivals
        return pa == pb

    def count(self, guards: list[Guard], op: str, q: int) -> Guard:
        """A counted barrier phase completes with exactly q arrivals (as in the Z3 engine)."""
        return sum(1 for g in guards if g) == q


def executed(eg: EventGraph, ex: Execution) -> set[int]:
    vals = dict(ex.values)
    return {e.eid for e in eg.events
            if e.thread < 0 or (ex.paths[e.thread] in e.paths and evaluate(e.cond, vals))}


def concrete_env(eg: EventGraph, ex: Execution, cand: Candidates):
    """The base environment of one concrete execution (for flags and explanations)."""
    ch = ConcreteChoice(eg, executed(eg, ex), {r: w for w, r in ex.rf}, set(ex.co), list(ex.sc),
                        dict(ex.values), dict(ex.phases))
    return base_env(eg, ch, cand)


def partial_orders(ws: list[int], tick=None) -> Iterator[set[tuple[int, int]]]:
    """All strict partial orders on ws, as sets of pairs (transitively closed); ``tick()`` is
    called every 512 choices (explain's time budget)."""
    pairs = list(itertools.combinations(ws, 2))
    for k, choice in enumerate(itertools.product((0, 1, 2), repeat=len(pairs))):
        if tick is not None and k % 512 == 0:
            tick()
        rel = set()
        for (a, b), c in zip(pairs, choice):
            if c == 1:
                rel.add((a, b))
            elif c == 2:
                rel.add((b, a))
        if all((a, d) in rel for (a, b) in rel for (c, d) in rel if b == c):
            yield rel


def rf_candidates(eg: EventGraph, cand: Candidates):
    """Every choice of thread paths and of a source write (or none) for each read on them:
    (paths, active events, their reads, rf as read → write)."""
    ev = eg.events
    for paths in itertools.product(*(range(len(p)) for p in eg.paths)):
        active = [e for e in ev if e.thread < 0 or paths[e.thread] in e.paths]
        act_ids = {e.eid for e in active}
        reads = [e.eid for e in active if e.kind == "R"]
        opts = [[None] + [w for w, r2 in cand.rf if r2 == r and w in act_ids] for r in reads]
        for rfc in itertools.product(*opts):
            yield paths, active, reads, {r: w for r, w in zip(reads, rfc) if w is not None}


def consistent_execd(eg: EventGraph, paths, active, reads: list[int], rf: dict[int, int],
                     full: dict[int, int]) -> set[int] | None:
    """The events that run under these paths and read values (``full``: read → value), or None
    when the choice is inconsistent: a read runs without an rf source (or the reverse), a source
    write does not run, or a path's branch assumptions fail."""
    execd = {e.eid for e in active if e.thread < 0 or evaluate(e.cond, full)}
    if any((r in execd) != (r in rf) for r in reads) or any(w not in execd for w in rf.values()):
        return None
    if not all(evaluate(a, full) for t, k in enumerate(paths) for a in eg.paths[t][k].assumes):
        return None
    return execd


def counted_arrivals(eg: EventGraph, execd: set[int]) -> list[int]:
    """The executed arrivals at barriers with a thread count (``bar.sync a, n``): the phase each
    joins is chosen, as the Z3 engine's ``ph`` variables are."""
    return [e.eid for e in eg.events if e.eid in execd and e.kind == "B" and "ARRIVE" in e.tags
            and e.barrier[1] is not None]


def phase_choices(eg: EventGraph, arrivals: list[int], tick=None) -> Iterator[dict[int, int]]:
    """Every way to group the counted arrivals into barrier phases, as the Z3 engine's integer
    ``ph`` variables allow: a thread's arrivals at one barrier are in distinct phases, each later
    than the one before (its k-th arrival cannot join a phase before its (k-1)-th). Only which
    arrivals share a phase matters, so each grouping (a set partition, drawn once as a restricted
    growth string) is yielded once, numbered in an order of its phases that respects every
    thread's order; groupings with no such order are skipped. ``tick()`` is called now and then
    (a deadline)."""
    ev = eg.events
    key = [(ev[a].thread, tuple(map(repr, ev[a].barrier[0]))) for a in arrivals]
    after = [max((j for j in range(i) if key[j] == key[i]), default=None) for i in range(len(arrivals))]
    blocks: list[set] = []  # keys present in each phase
    label = [0] * len(arrivals)
    count = [0]

    def grow(i: int) -> Iterator[dict[int, int]]:
        if i == len(arrivals):
            count[0] += 1
            if tick is not None and count[0] % 1024 == 0:
                tick()
            rank = _phase_order(len(blocks), [(label[p], label[q]) for q, p in enumerate(after)
                                              if p is not None])
            if rank is not None:
                yield {a: rank[label[k]] for k, a in enumerate(arrivals)}
            return
        for b in range(len(blocks) + 1):
            if b < len(blocks) and key[i] in blocks[b]:
                continue  # one thread's arrivals at one barrier never share a phase
            if b == len(blocks):
                blocks.append(set())
            blocks[b].add(key[i])
            label[i] = b
            yield from grow(i + 1)
            blocks[b].discard(key[i])
            if not blocks[b] and b == len(blocks) - 1:
                blocks.pop()

    yield from grow(0)


def _phase_order(n: int, edges: list[tuple[int, int]]) -> list[int] | None:
    """A numbering of n phases with a < b for every edge (a, b), or None when they form a cycle."""
    succ: dict[int, list[int]] = {}
    indeg = [0] * n
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        indeg[b] += 1
    ready = [x for x in range(n) if indeg[x] == 0]
    rank = [0] * n
    for k in range(n):
        if not ready:
            return None
        x = ready.pop()
        rank[x] = k
        for y in succ.get(x, ()):
            indeg[y] -= 1
            if indeg[y] == 0:
                ready.append(y)
    return rank


def with_initial_writes(eg: EventGraph, execd: set[int], co: set) -> set:
    """co with each initial write before every executed write to its location."""
    ev = eg.events
    for w in eg.init.values():
        co |= {(w, b) for b in execd if ev[b].kind == "W" and b != w and ev[b].loc == ev[w].loc}
    return co


def _resolve_values(eg: EventGraph, rf: dict[int, int]) -> dict[int, int] | None:
    """The value of every read, following rf through written values (None: cyclic). A read with
    no rf source did not execute; if an expression names it, the read's own predicate guards it,
    so its placeholder value is never selected (candidates where an executed read lacks a source
    are rejected by the caller)."""
    vals: dict[int, int] = {}
    busy: set[int] = set()
    for r in rf:
        if _value_of(eg, rf, vals, busy, r) is None:
            return None
    return vals


def _value_of(eg: EventGraph, rf: dict[int, int], vals: dict[int, int], busy: set[int],
              r: int) -> int | None:
    """The value read ``r`` returns (memoised in ``vals``; None: rf runs in a cycle). A plain
    function, not a closure: a closure calling itself is a reference cycle, which only the cyclic
    collector frees, and a check runs with it paused (a million of them cost a second at the
    end of a long check)."""
    if r in vals:
        return vals[r]
    if r not in rf:  # a read that did not run: only an unselected ite arm can name it
        return 0
    if r in busy:
        return None
    busy.add(r)
    w = eg.events[rf[r]]
    sub = {}
    for x in reads_of(w.value):
        v = _value_of(eg, rf, vals, busy, x)
        if v is None:
            return None
        sub[x] = v
    vals[r] = evaluate(w.value, sub)
    busy.discard(r)
    return vals[r]


class BruteProblem:
    def __init__(self, eg: EventGraph, model: Model, obs: list[Observable], cand: Candidates,
                 flags: bool = False, co_known: set | None = None, deadline: Deadline = NO_DEADLINE):
        self.eg, self.model, self.obs, self.cand, self.flags = eg, model, obs, cand, flags
        self.deadline = deadline

    def close(self) -> None:
        """Nothing held."""

    def outcomes(self) -> Iterator[tuple[tuple[int, ...], Execution, list[str]]]:
        """Every allowed outcome once (the first execution found for it as witness)."""
        seen: set[tuple[int, ...]] = set()
        for exe, raised in self.executions():
            vals = dict(exe.values)
            key = tuple(evaluate(value_expr(self.eg, o, exe), vals) for o in self.obs)
            if key not in seen:
                seen.add(key)
                yield key, exe, raised

    def executions(self) -> Iterator[tuple[Execution, list[str]]]:
        """Every consistent execution (with the model's raised flags)."""
        eg, cand = self.eg, self.cand
        for paths, active, reads, rf in rf_candidates(eg, cand):
            yield from self._with_rf(paths, active, reads, rf)

    def _with_rf(self, paths, active, reads, rf):
        eg, cand, ev = self.eg, self.cand, self.eg.events
        self.deadline.check()
        vals = _resolve_values(eg, rf)
        if vals is None:
            return
        full = {r: vals.get(r, 0) for r in reads}
        execd = consistent_execd(eg, paths, active, reads, rf, full)
        if execd is None:
            return
        per_loc = [list(partial_orders([w for w in ws if w in execd and "IW" not in ev[w].tags],
                                       self.deadline.check))  # 3^(n(n-1)/2) choices: watch the clock
                   for ws in cand.writes_at.values()]
        scf = [f for f in cand.scf if f in execd]
        fin_locs = sorted({o.loc for o in self.obs if o.loc is not None})
        phases = list(phase_choices(eg, counted_arrivals(eg, execd), self.deadline.check))
        for cos in itertools.product(*per_loc):
            co = with_initial_writes(eg, execd, set().union(*cos) if cos else set())
            for sc, ph in itertools.product(itertools.permutations(scf), phases):
                self.deadline.check()
                ch = ConcreteChoice(eg, execd, rf, co, list(sc), full, ph)
                res = interp(self.model, base_env(eg, ch, cand), flags=self.flags)
                if not all(ax.holds(st.check, v) for st, v in res.axioms):
                    continue
                raised = [st.name for st, v in res.flags if ax.holds(st.check, v) != st.negated]
                maxes = [[w for w in cand.writes_at[p] if w in execd and
                          not any((w, w2) in co for w2 in execd)] for p in fin_locs]
                for fc in itertools.product(*maxes):
                    yield Execution(paths, tuple(sorted((w, r) for r, w in rf.items())),
                                    tuple(sorted(co)), tuple(sorted(vals.items())), sc,
                                    tuple(zip(fin_locs, fc)), tuple(sorted(ph.items()))), raised
