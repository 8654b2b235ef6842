"""Candidate executions: the one description of the space both engines search (herd's mem.ml).

A candidate execution picks a path per thread, an rf source per executed read (``Execution.rf``
holds (write, read) pairs; inside this module a read → write dict is called ``source_of``), a
partial coherence order per location (the initial write first), an order of the executed fence.sc
events, a phase per arrival at a counted barrier, and the write each observed location ends with.

Two things live here and nowhere else:

* **Well-formedness**, stated once over the engine-blind guards of :mod:`ptxmm.semantics.vocab` (a
  :class:`~ptxmm.cat.relalg.Universe` folds constants, so the same functions give solver terms to
  the Z3 engine, which asserts them, and plain booleans for a concrete candidate, which the
  enumerator below keeps only when they all hold): :func:`rf_wellformed` (each executed read reads
  exactly one executed write, with its value), :func:`co_wellformed` and :func:`co_transitive` (co
  only between executed writes, antisymmetric, transitive), :func:`final_wellformed` (a final
  value is read from a co-maximal executed write). Cardinality constraints are data
  (:class:`AtMostOne`, :class:`ExactlyOne`) that each engine encodes natively.
* **The enumerator** :class:`ExecutionSpace` (paths → rf → read values → co → final writes →
  fence.sc order → barrier phases), used by the brute-force engine and by ``explain``. It builds a
  superset of each choice (any source or none per read, any orientation of each pair of writes,
  any executed write as the final one) and filters it with the functions above; the path
  assumptions, the total order of fence.sc events and the barrier phase groupings
  (:func:`phase_choices`) are built directly.

This module knows no solver and no engine: it imports the event graph, values, vocabulary and the
relation algebra only."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace

from .._infra.records import record
from ..cat.relalg import Guard, Universe
from ..errors import UnsupportedError
from ..ir.values import TRUE, evaluate, reads_of
from .events import EventGraph, Kind
from .result import Execution
from .vocab import Candidates, base_env

# ----- concrete executions as a Choice ----------------------------------------------------------


class ConcreteLogic:
    """Concrete executions have no terms: every guard is True or False."""

    def and_(self, terms):  # pragma: no cover - never reached with static guards
        raise AssertionError("symbolic term in a concrete execution")

    or_ = not_ = acyclic = and_

    def equivalent(self, a, b) -> bool:
        return a is b

    def simplify(self, g):
        return g


class ConcreteChoice:
    """One candidate execution as a Choice: executed events, rf (``source_of``: read → write),
    co, SC-fence order, values."""

    lg = ConcreteLogic()

    def __init__(self, eg: EventGraph, execd: set[int], source_of: dict[int, int], co: set[tuple[int, int]],
                 sc: list[int], values: dict[int, int], phases: dict[int, int] | None = None,
                 paths: tuple[int, ...] = ()):
        self.eg, self.execd, self.source_of, self.cos, self.values = eg, execd, source_of, co, values
        self.rank = {f: i for i, f in enumerate(sc)}
        self.phases = phases or {}
        self.paths = paths

    def path(self, t: int, k: int) -> Guard:
        """Thread ``t`` takes its path ``k`` (the path choice of the execution)."""
        return self.paths[t] == k

    def exec(self, e: int) -> Guard:
        return e in self.execd

    def rf(self, w: int, r: int) -> Guard:
        return self.source_of.get(r) == w

    def co(self, a: int, b: int) -> Guard:
        return (a, b) in self.cos

    def scorder(self, f: int, g: int) -> Guard:
        return f in self.rank and g in self.rank and self.rank[f] < self.rank[g]

    def cond(self, e) -> Guard:
        return bool(evaluate(e, self.values))

    def same_phase(self, a: int, b: int) -> Guard:
        pa, pb = self.phases.get(a), self.phases.get(b)
        if pa is None or pb is None:
            return self.eg.events[a].barrier[2] == self.eg.events[b].barrier[2]  # k-th arrivals
        return pa == pb

    def count(self, guards: list[Guard], op: str, q: int) -> Guard:
        """A counted barrier phase completes with exactly q arrivals (as in the Z3 engine)."""
        return sum(1 for g in guards if g) == q


def concrete_universe(eg: EventGraph, execd: set[int] | frozenset[int]) -> Universe:
    return Universe([e.eid in execd for e in eg.events], ConcreteChoice.lg)


def executed(eg: EventGraph, ex: Execution) -> set[int]:
    vals = dict(ex.values)
    return {e.eid for e in eg.events
            if e.thread < 0 or (ex.paths[e.thread] in e.paths and evaluate(e.cond, vals))}


def executed_if_decided(eg: EventGraph, ex: Execution) -> set[int] | None:
    """:func:`executed`, or None where the execution's values do not decide it: a condition of an
    event on its paths names a value it lacks (an unspecified value it does not fix, such as a
    vector's element order, PTX ISA 8.2.4; or a read it did not run). Such an execution is not
    one of the graph's concrete candidates; no value is invented for it."""
    try:
        return executed(eg, ex)
    except (KeyError, UnsupportedError):
        return None


def concrete_choice(eg: EventGraph, ex: Execution) -> ConcreteChoice:
    return ConcreteChoice(eg, executed(eg, ex), {r: w for w, r in ex.rf}, set(ex.co), list(ex.scorder),
                          dict(ex.values), dict(ex.phases), tuple(ex.paths))


def concrete_env(eg: EventGraph, ex: Execution, cand: Candidates):
    """The base environment of one concrete execution (for flags and explanations)."""
    return base_env(eg, concrete_choice(eg, ex), cand)


# ----- well-formedness, stated once ----------------------------------------------------------------


@record
class AtMostOne:
    """At most one of these guards holds."""

    guards: tuple[Guard, ...]


@record
class ExactlyOne:
    """Exactly one of these guards holds."""

    guards: tuple[Guard, ...]


Constraint = Guard | AtMostOne | ExactlyOne


def _count(guards: Iterable[Guard], cls: type[AtMostOne] | type[ExactlyOne]) -> Constraint:
    """A cardinality constraint, folded to a boolean when every guard is static."""
    gs = tuple(g for g in guards if g is not False)
    if all(g is True for g in gs):
        n = len(gs)
        return n <= 1 if cls is AtMostOne else n == 1
    return cls(gs)


def holds(cs: Iterable[Constraint]) -> bool:
    """Whether constraints over static guards (a concrete candidate) all hold."""
    for c in cs:
        if c is True:
            continue
        if c is False:
            return False
        n = sum(1 for g in c.guards if g)
        if n > 1 or (n == 0 and isinstance(c, ExactlyOne)):
            return False
    return True


def rf_wellformed(eg: EventGraph, u: Universe, rf: Mapping[tuple[int, int], Guard],
                  same_value: Callable[[int, int], Guard], skip=()) -> list[Constraint]:
    """Every executed read reads from exactly one write; a write it reads from executes and wrote
    the value the read returns (``rf``: the (write, read) pairs that may hold, with their guards;
    ``same_value(w, r)``: the read returns the value w writes; ``skip``: reads whose rf an encoding
    makes well-formed by construction, left out)."""
    ev, cs = eg.events, []
    by_read: dict[int, list[int]] = {}
    for w, r in rf:
        by_read.setdefault(r, []).append(w)
    for e in ev:
        if e.kind != Kind.R or e.eid in skip:
            continue
        r = e.eid
        ws = by_read.get(r, [])
        vs = [rf[(w, r)] for w in ws]
        cs.append(u.any([u.not1(u.ex[r])] + vs))
        if len(vs) > 1:
            cs.append(_count(vs, AtMostOne))
        for w, v in zip(ws, vs):
            if v is not False:
                cs.append(u.any([u.not1(v), u.all([u.ex[w], u.ex[r], same_value(w, r)])]))
    return cs


def co_wellformed(u: Universe, co: Mapping[tuple[int, int], Guard]) -> list[Constraint]:
    """co relates executed writes only, and never both ways (``co``: the undecided pairs)."""
    cs: list[Constraint] = []
    for (a, b), v in co.items():
        cs.append(u.any([u.not1(v), u.and2(u.ex[a], u.ex[b])]))
        if (b, a) in co and a < b:
            cs.append(u.not1(u.and2(v, co[(b, a)])))
    return cs


def co_transitive(eg: EventGraph, u: Universe, writes_at: Mapping[str, list[int]],
                  undecided: Iterable[tuple[int, int]],
                  guard: Callable[[int, int], Guard]) -> list[Constraint]:
    """co(a,b) ∧ co(b,c) → co(a,c) for every triple of writes to one location with an undecided
    pair (``guard(a, b)``: co(a, b) with both executed)."""
    ev = eg.events
    out: list[Constraint] = []
    seen = set()
    for p in undecided:
        for m in writes_at[ev[p[0]].loc]:
            for a, b, c in ((p[0], p[1], m), (m, p[0], p[1]), (p[0], m, p[1])):
                if len({a, b, c}) < 3 or (a, b, c) in seen:
                    continue
                seen.add((a, b, c))
                ab, bc, ac = guard(a, b), guard(b, c), guard(a, c)
                if ab is False or bc is False or ac is True:
                    continue
                out.append(u.any((u.not1(ab), u.not1(bc), ac)))
    return out


def final_candidates(u: Universe, writes: list[int], co_must: Callable[[int], int]) -> list[int]:
    """The writes of a location that can be its final one: they may execute, and no write that
    always executes is surely co-after them (``co_must(w)``: a bitset of surely co-later writes)."""
    return [w for w in writes if u.ex[w] is not False and not co_must(w) & u.sure]


def final_wellformed(u: Universe, fin: Mapping[int, Guard],
                     later: Callable[[int, int], Guard]) -> list[Constraint]:
    """A location's final value comes from exactly one write (``fin``: write → "it is the final
    one"), which executes and has no executed co-successor (``later(w, w2)``: co(w, w2))."""
    cs: list[Constraint] = [_count(fin.values(), ExactlyOne)]
    for w, v in fin.items():
        after = [u.all((u.ex[w2], later(w, w2))) for w2 in fin if w2 != w]
        cs.append(u.any([u.not1(v), u.all([u.ex[w]] + [u.not1(x) for x in after])]))
    return cs


# ----- the enumerator ------------------------------------------------------------------------------


def _no_tick() -> None:
    return None


def rf_choices(eg: EventGraph, cand: Candidates):
    """Every choice of thread paths and of a source write (or none) for each read on them:
    (paths, active events, their reads, ``source_of``: read → write)."""
    ev = eg.events
    for paths in itertools.product(*(range(len(p)) for p in eg.paths)):
        active = [e for e in ev if e.thread < 0 or paths[e.thread] in e.paths]
        act_ids = {e.eid for e in active}
        reads = [e.eid for e in active if e.kind == Kind.R]
        opts = [[None] + [w for w, r2 in cand.rf if r2 == r and w in act_ids] for r in reads]
        for rfc in itertools.product(*opts):
            yield paths, active, reads, {r: w for r, w in zip(reads, rfc) if w is not None}


def pruned_rf_choices(eg: EventGraph, cand: Candidates, cycles: bool = False,
                      tick: Callable[[], None] = _no_tick):
    """:func:`rf_choices` less the choices that cannot be well-formed, found as soon as the reads
    that decide it have their sources (a depth-first choice of one source per read, in the same
    order, so the choices that remain come in the same order): a read that runs on every
    execution of its path (its condition the constant 1) reads from some write
    (:func:`rf_wellformed`); with ``cycles`` False, no read's value depends on itself through rf
    and written values (:func:`read_values` gives such a choice no value); the path's
    assumptions hold once every read they name has a value (``_consistent``); a source write
    whose condition is then known to be 0 does not run (:func:`rf_wellformed`). Each of these
    rejects a partial choice that every completion keeps, so it removes only choices the full
    check would reject: the candidates that remain are the same."""
    ev = eg.events
    for paths in itertools.product(*(range(len(p)) for p in eg.paths)):
        active = [e for e in ev if e.thread < 0 or paths[e.thread] in e.paths]
        act_ids = {e.eid for e in active}
        reads = [e.eid for e in active if e.kind == Kind.R]
        sure = {r for r in reads if ev[r].cond == TRUE}
        opts = [([] if r in sure else [None]) + [w for w, r2 in cand.rf if r2 == r and w in act_ids]
                for r in reads]
        checks = [a for t, k in enumerate(paths) for a in eg.paths[t][k].assumes]
        search = RfSearch(eg, reads, opts, checks, cycles, tick)
        for source_of in search.run():
            yield paths, active, reads, source_of


class RfSearch:
    """The depth-first choice of :func:`pruned_rf_choices` for one choice of paths (``further``:
    one more test of each partial choice — its sources, read → write or None, and the values
    they decide — that must reject only choices every completion of which is rejected too)."""

    def __init__(self, eg: EventGraph, reads: list[int], opts: list[list[int | None]],
                 checks: list, cycles: bool, tick: Callable[[], None] = _no_tick,
                 further: Callable[[dict[int, int | None], dict[int, int]], bool] | None = None):
        self.eg, self.reads, self.opts, self.cycles, self.tick = eg, reads, opts, cycles, tick
        self.further = further
        self.src: dict[int, int | None] = {}
        # each check (an assumption, or "write w runs") and the reads it names
        self.assumes = [(a, frozenset(reads_of(a))) for a in checks]

    def run(self) -> Iterator[dict[int, int]]:
        stack: list[tuple[int, int]] = [(0, 0)]  # (read index, next option), no recursion
        steps = 0
        while stack:
            steps += 1
            if steps % 512 == 0:
                self.tick()  # a deadline raises from it, however many choices are pruned
            i, k = stack.pop()
            if i == len(self.reads):
                yield {r: w for r, w in self.src.items() if w is not None}
                continue
            r = self.reads[i]
            self.src.pop(r, None)
            for j in range(i + 1, len(self.reads)):
                self.src.pop(self.reads[j], None)
            if k >= len(self.opts[i]):
                continue
            stack.append((i, k + 1))
            self.src[r] = self.opts[i][k]
            if self.viable():
                stack.append((i + 1, 0))

    def viable(self) -> bool:
        vals = self.values()
        if vals is None:
            return False
        ev = self.eg.events
        for a, names in self.assumes:
            if names <= vals.keys() and not evaluate(a, vals):
                return False
        for w in self.src.values():
            if w is not None and ev[w].cond != TRUE:
                names = frozenset(reads_of(ev[w].cond))
                if names <= vals.keys() and not evaluate(ev[w].cond, vals):
                    return False
        return self.further is None or self.further(self.src, vals)

    def values(self) -> dict[int, int] | None:
        """The value of every read whose value the chosen sources decide (a read without a source
        reads 0, as in :func:`read_values`); None when, with ``cycles`` False, a read's value
        depends on itself."""
        vals: dict[int, int] = {}
        state: dict[int, int] = {}  # 1: being resolved, 2: resolved or undecided
        try:
            for r in self.src:
                self.resolve(r, vals, state)
        except _Cycle:
            return None
        return vals

    def resolve(self, r: int, vals: dict[int, int], state: dict[int, int]) -> None:
        if state.get(r) == 2:
            return
        if state.get(r) == 1:  # r's value depends on itself
            if not self.cycles:
                raise _Cycle
            return
        w = self.src.get(r, -1)
        if w is None or w == -1:  # no source (reads 0), or none chosen yet (undecided)
            if w is None:
                vals[r] = 0
            state[r] = 2
            return
        state[r] = 1
        names = reads_of(self.eg.events[w].value)
        for x in names:
            if x in self.src:
                self.resolve(x, vals, state)
        state[r] = 2
        if all(x in vals for x in names):
            vals[r] = evaluate(self.eg.events[w].value, {x: vals[x] for x in names})


class _Cycle(Exception):
    """A read's value depends on itself through the chosen sources."""


def read_values(eg: EventGraph, source_of: dict[int, int], domain: list[int] | None = None
                ) -> Iterator[dict[int, int]]:
    """Values of the reads under rf, following it through written values. Reads whose value
    depends on itself through rf and data (out of thin air) take every value of ``domain`` (none:
    no value); whether a guess is a fixed point is :func:`rf_wellformed`'s to say. A read named in
    a written value that has no source did not run: it reads 0 (its own predicate guards it)."""
    ev = eg.events
    deps = {r: [x for x in reads_of(ev[w].value) if x in source_of] for r, w in source_of.items()}
    order: list[int] = []
    state: dict[int, int] = {}
    cyclic: set[int] = set()

    for r in source_of:
        if r not in state:
            _visit(r, deps, state, cyclic, order)
    free = sorted(cyclic)
    if free and not domain:
        return
    idle = {x: 0 for w in source_of.values() for x in reads_of(ev[w].value) if x not in source_of}
    for guess in itertools.product(domain or (), repeat=len(free)):
        vals: dict[int, int] = idle | dict(zip(free, guess))
        for r in order:
            if r not in cyclic:
                vals[r] = evaluate(ev[source_of[r]].value, vals)
        yield vals


def _visit(r: int, deps: dict[int, list[int]], state: dict[int, int], cyclic: set[int],
           order: list[int]) -> None:
    """Depth-first order of the reads by their data dependencies through rf, marking the reads
    that depend on themselves. A plain function, not a closure: a closure calling itself is a
    reference cycle, which only the cyclic collector frees, and a check runs with it paused."""
    state[r] = 1
    for x in deps[r]:
        if state.get(x) == 1:
            cyclic.add(x)
        elif x not in state:
            _visit(x, deps, state, cyclic, order)
    state[r] = 2
    order.append(r)


def orientations(ws: list[int], tick: Callable[[], None] = _no_tick) -> Iterator[set[tuple[int, int]]]:
    """Every antisymmetric relation on ws (each pair unordered or ordered one way), as a set of
    pairs; ``tick()`` every 512 choices."""
    pairs = list(itertools.combinations(ws, 2))
    for k, choice in enumerate(itertools.product((0, 1, 2), repeat=len(pairs))):
        if k % 512 == 0:
            tick()
        rel = set()
        for (a, b), c in zip(pairs, choice):
            if c == 1:
                rel.add((a, b))
            elif c == 2:
                rel.add((b, a))
        yield rel


def coherence_orders(eg: EventGraph, u: Universe, loc: str, ws: list[int],
                     tick: Callable[[], None] = _no_tick) -> Iterator[set[tuple[int, int]]]:
    """The orders among the executed writes ``ws`` of ``loc`` (initial write left out: it is
    co-first) that :func:`co_wellformed` and :func:`co_transitive` accept."""
    undecided = [(a, b) for a in ws for b in ws if a != b]
    writes_at = {loc: ws}
    for rel in orientations(ws, tick):
        def guard(a: int, b: int, rel=rel) -> Guard:
            return (a, b) in rel
        if holds(co_wellformed(u, {p: p in rel for p in undecided})) and \
                holds(co_transitive(eg, u, writes_at, undecided, guard)):
            yield rel


def counted_arrivals(eg: EventGraph, execd: set[int]) -> list[int]:
    """The executed arrivals at barriers with a thread count (``bar.sync a, n``): the phase each
    joins is chosen, as the Z3 engine's ``ph`` variables are."""
    return [e.eid for e in eg.events if e.eid in execd and e.kind == Kind.B and "ARRIVE" in e.tags
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
        co |= {(w, b) for b in execd if ev[b].kind == Kind.W and b != w and ev[b].loc == ev[w].loc}
    return co


@record
class Candidate:
    """A candidate execution with what evaluating a model on it needs: the executed events, rf
    as ``source_of`` (read → write), co as a set, and every active read's value."""

    execution: Execution
    execd: frozenset[int]
    source_of: dict[int, int]
    co: frozenset[tuple[int, int]]
    values: dict[int, int]

    def choice(self, eg: EventGraph) -> ConcreteChoice:
        exe = self.execution
        return ConcreteChoice(eg, set(self.execd), self.source_of, set(self.co), list(exe.scorder),
                              self.values, dict(exe.phases), tuple(exe.paths))


class ExecutionSpace:
    """The candidate executions of one event graph, each well-formed, none judged by a model.

    Knobs: ``fin_locs`` (the locations whose final write is chosen), ``domain`` (values tried for
    reads whose value is free: out-of-thin-air cycles through rf and data; None: such rf choices
    are skipped), ``tick`` (called often: a deadline raises from it), ``keep`` (a filter on the
    execution before its fence.sc order and barrier phases are chosen, e.g. "it produces the
    outcome": with ``fin_locs``, once the final writes are chosen; without, once rf and values
    are), ``limit`` (stop after that many candidates; ``bound_hit`` then says so).

    Order: paths → rf → values → co → final writes → fence.sc order → barrier phases. ``examined``
    counts the candidates yielded."""

    def __init__(self, eg: EventGraph, cand: Candidates, *, fin_locs: Iterable[str] = (),
                 domain: list[int] | None = None, tick: Callable[[], None] = _no_tick,
                 keep: Callable[[Execution], bool] | None = None, limit: int | None = None,
                 prune: bool = False):
        self.eg, self.cand, self.domain, self.tick = eg, cand, domain, tick
        self.prune = prune  # rf choices by pruned_rf_choices (the same candidates, found sooner)
        self.keep, self.limit = keep, limit
        self.fin_locs = sorted(set(fin_locs))
        self.examined = 0
        self.bound_hit = False
        self._orders: dict[tuple[int, ...], list[set[tuple[int, int]]]] = {}

    def __iter__(self) -> Iterator[Candidate]:
        for paths, active, reads, source_of in self._choices():
            self.tick()
            for vals in read_values(self.eg, source_of, self.domain):
                for c in self._with_values(paths, active, reads, source_of, vals):
                    self.examined += 1
                    yield c
                    self.tick()
                    if self.limit is not None and self.examined >= self.limit:
                        self.bound_hit = True
                        return

    def _choices(self):
        """Paths and rf sources, as :func:`pruned_rf_choices` (``prune``) or :func:`rf_choices`
        give them."""
        if self.prune:
            return pruned_rf_choices(self.eg, self.cand, bool(self.domain), self.tick)
        return rf_choices(self.eg, self.cand)

    def executions(self) -> Iterator[Execution]:
        for c in self:
            yield c.execution

    def _consistent(self, paths, active, source_of: dict[int, int], vals: dict[int, int],
                    full: dict[int, int]) -> set[int] | None:
        """The events that run under these paths and read values, or None when the choice is
        not well-formed or a path's branch assumptions fail."""
        eg = self.eg
        try:
            execd = {e.eid for e in active if e.thread < 0 or evaluate(e.cond, full)}
            if not all(evaluate(a, full) for t, k in enumerate(paths) for a in eg.paths[t][k].assumes):
                return None
        except KeyError as e:  # a liveness graph: a barrier reduction of a thread stopped before it
            raise UnsupportedError(
                "the brute-force engine cannot judge a path whose branch reads a value that did not "
                f"run (event {e.args[0]}: another thread's value a barrier reduction combines, that "
                "thread stopped before it)", hint="use --engine z3: its read values are variables") from None
        u = concrete_universe(eg, execd)
        rf = {(w, r): source_of.get(r) == w for w, r in self.cand.rf}
        ev = eg.events

        known = vals | full

        def same_value(w: int, r: int) -> bool:
            return evaluate(ev[w].value, known) == known.get(r, 0)

        return execd if holds(rf_wellformed(eg, u, rf, same_value)) else None

    def _coherence(self, u: Universe, execd: set[int]) -> list[list[set[tuple[int, int]]]]:
        ev, out = self.eg.events, []
        for loc, ws in self.cand.writes_at.items():
            mine = tuple(w for w in ws if w in execd and "IW" not in ev[w].tags)
            got = self._orders.get(mine)
            if got is None:  # depends only on which writes run (they all do, in u)
                got = self._orders[mine] = list(coherence_orders(self.eg, u, loc, list(mine), self.tick))
            out.append(got)
        return out

    def _finals(self, u: Universe, execd: set[int], co: set[tuple[int, int]]) -> list[list[int]]:
        must: dict[int, int] = {}
        for a, b in co:
            must[a] = must.get(a, 0) | (1 << b)
        out = []
        for loc in self.fin_locs:
            ws = final_candidates(u, self.cand.writes_at[loc], lambda w: must.get(w, 0))
            out.append([w for w in ws
                        if holds(final_wellformed(u, {x: x == w for x in ws}, lambda a, b: (a, b) in co))])
        return out

    def _with_values(self, paths, active, reads, source_of, vals) -> Iterator[Candidate]:
        eg, cand = self.eg, self.cand
        full = {r: vals.get(r, 0) for r in reads}
        execd = self._consistent(paths, active, source_of, vals, full)
        if execd is None:
            return
        rfp = tuple(sorted((w, r) for r, w in source_of.items()))
        vs = tuple(sorted(vals.items()))
        if self.keep is not None and not self.fin_locs and not self.keep(Execution(paths, rfp, (), vs)):
            return
        u = concrete_universe(eg, execd)
        per_loc = self._coherence(u, execd)
        scf = [f for f in cand.scf if f in execd]
        phases = list(phase_choices(eg, counted_arrivals(eg, execd), self.tick))
        frozen = frozenset(execd)
        for cos in itertools.product(*per_loc):
            self.tick()
            co = with_initial_writes(eg, execd, set().union(*cos) if cos else set())
            cot, fco = tuple(sorted(co)), frozenset(co)
            for fc in itertools.product(*self._finals(u, execd, co)):
                exe = Execution(paths, rfp, cot, vs, (), tuple(zip(self.fin_locs, fc)))
                if self.keep is not None and self.fin_locs and not self.keep(exe):
                    continue
                for sc, ph in itertools.product(itertools.permutations(scf), phases):
                    yield Candidate(replace(exe, scorder=tuple(sc), phases=tuple(sorted(ph.items()))),
                                    frozen, source_of, fco, full)


def violations(eg: EventGraph, cand: Candidates, exe: Execution) -> list[str]:
    """Which parts of the well-formedness statement a concrete execution breaks ("rf", "co",
    "co-transitive", "final"): the check a test applies to every candidate the enumerator
    yields, with the very functions the Z3 engine asserts."""
    ch = concrete_choice(eg, exe)
    u = concrete_universe(eg, ch.execd)
    full = dict(exe.values)
    ev, out = eg.events, []

    def same_value(w: int, r: int) -> bool:
        return evaluate(ev[w].value, full) == full.get(r, 0)

    if not holds(rf_wellformed(eg, u, {p: ch.rf(*p) for p in cand.rf}, same_value)):
        out.append("rf")
    if not holds(co_wellformed(u, {p: ch.co(*p) for p in cand.co})):
        out.append("co")
    pairs = [(a, b) for ws in cand.writes_at.values() for a in ws for b in ws if a != b]
    both = lambda a, b: u.all((u.ex[a], u.ex[b], ch.co(a, b)))  # noqa: E731
    if not holds(co_transitive(eg, u, cand.writes_at, pairs, both)):
        out.append("co-transitive")
    if not finals_wellformed(u, cand, exe, ch):
        out.append("final")
    return out


def finals_wellformed(u: Universe, cand: Candidates, exe: Execution, ch) -> bool:
    """Whether each final value of ``exe`` is one of its location's possible last writes and well
    formed as such (``ch``: the execution's concrete choice)."""
    must: dict[int, int] = {}
    for a, b in ch.cos:
        must[a] = must.get(a, 0) | (1 << b)
    for loc, w in exe.final:
        ws = final_candidates(u, cand.writes_at[loc], lambda x: must.get(x, 0))
        if w not in ws or not holds(final_wellformed(u, {x: x == w for x in ws}, ch.co)):
            return False
    return True
