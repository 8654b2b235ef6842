"""The base vocabulary every model gets (names follow the Dat3M PTX cat files where they exist).

Sets: ``_`` (all events) R W M F B IW RMW RedR, semantics WEAK RLX ACQ REL ACQ_REL SC, volatile
VOL, scopes CTA CLUSTER GPU SYS, proxies GEN (generic memory operations, initial writes, memory
fences, barriers) TEX SUR CON (texture/surface/constant accesses, and the proxy fence bridging
that proxy with the generic one), PROXY (every proxy fence) and ALIAS (alias proxy fences).
Relations: po rmw addr data ctrl, loc (same physical location) vloc (same virtual address), int ext,
sr (strong pair whose scopes include each other's thread), scta scluster sgpu (same CTA/cluster/GPU),
rf co fr (existential; co is a strict partial order per location, initial write first),
scorder (existential strict total order on fence.sc events), sync_fence (= scorder between SC
fences in the same thread or mutually in scope), sync_barrier (barrier arrive → same-instance wait),
exit_barrier (every event of a thread that exits without arriving at a count-less barrier phase → the
wait it releases: semantics/barrier_waits.py).
For models written against Dat3M's PTX vocabulary (its RelationNameRepository and the stdlib.cat
every Dat3M model includes): syncbar (Dat3M's barrier relation: the barriers of one instance and
phase synchronize, a thread's own included: arrive → wait, which is po within a thread), po-loc
(po & loc), rfe rfi coe coi fre fri.

Hopper (docs/hopper.md): sets ASYNC (async-proxy accesses and async proxy fences), AOP (events an
asynchronous agent performs for a thread — cp.async.bulk, cp.async, st.async/red.async: not in
po, "same thread" (int) only with the events of the same asynchronous operation, and placed in
the CTA they are performed in, Event.at, for sr and scta/scluster/sgpu), SHM (accesses to shared
memory), PFG/PFS (proxy fences limited to .global / .shared), MBAR (mbarrier accesses), MBWAIT
(mbarrier waits), MBOK (waits that observed their phase completed: depends on the value read),
MBI (fence.mbarrier_init), CBA/CBW (barrier.cluster arrive/wait),
CB_HANG (cluster waits of a thread that has not arrived in that phase, which it goes past);
relations async_int (within
one asynchronous operation: read → write → implicit proxy fence → complete-tx), bulk_done (bulk
copies → the cp.async.bulk.wait_group that waits for them), issue (a thread's events → the events
of the asynchronous operations it issues later), sync_cluster_barrier (the k-th arrive of a thread
→ the k-th wait of every other thread of its cluster). The tensormap proxy (cp.async.bulk.tensor):
TMAP (a tensor copy's read of its tensor map, and the tensormap proxy fences), TMREL / TMACQ
(fence.proxy.tensormap::generic.release / .acquire), tm_range (an acquire fence → the reads of the
tensor map its [addr, addr+127] names by the copies its thread issues after it).

Static relations are row bitsets; only rf, co, scorder and barrier phases depend on the
execution. A :class:`Choice` supplies those existential parts and each event's execution guard —
solver terms for the Z3 engine, fixed booleans for a concrete candidate execution — so this module
knows no solver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from itertools import compress, repeat
from typing import Protocol

from .._infra.records import record
from ..cat.relalg import ESet, Guard, Logic, Rel, Universe, bits
from ..ir.program import SCOPES
from ..ir.values import TRUE, Expr
from .barrier_waits import Barriers
from .events import Event, EventGraph, Kind

SEM_TAG = {"weak": "WEAK", "relaxed": "RLX", "acquire": "ACQ", "release": "REL",
           "acq_rel": "ACQ_REL", "sc": "SC"}
SCOPE_TAG = {"cta": "CTA", "cluster": "CLUSTER", "gpu": "GPU", "sys": "SYS"}
_LEVEL = {"thread": -1, **{s: i for i, s in enumerate(SCOPES)}}


class Choice(Protocol):
    lg: Logic

    def exec(self, e: int) -> Guard: ...
    def rf(self, w: int, r: int) -> Guard: ...
    def co(self, a: int, b: int) -> Guard: ...
    def scorder(self, f: int, g: int) -> Guard: ...
    def cond(self, e: Expr) -> Guard: ...
    def same_phase(self, a: int, b: int) -> Guard: ...
    def count(self, guards: list[Guard], op: str, q: int) -> Guard: ...
    # thread t takes its path k; asked only of graphs with paths that do not finish (liveness)
    def path(self, t: int, k: int) -> Guard: ...


@record(frozen=False)
class Candidates:
    """Which existential pairs can be non-false at all (computed once per event graph)."""

    rf: list[tuple[int, int]] = field(default_factory=list)
    co: list[tuple[int, int]] = field(default_factory=list)
    scf: list[int] = field(default_factory=list)
    writes_at: dict[str, list[int]] = field(default_factory=dict)  # physical location → writes


def exclusive(a: Event, b: Event) -> bool:
    """Two events of one thread on disjoint sets of paths never run together."""
    return a.thread == b.thread and a.thread >= 0 and not (a.paths & b.paths)


def candidates(eg: EventGraph, co_known: set[tuple[int, int]] | None = None) -> Candidates:
    """``co_known``: pairs relation analysis proved co-ordered whenever both run (their
    reverse is then impossible and neither needs a variable)."""
    c = Candidates()  # the initial write is co-first statically: never a candidate pair
    ev = eg.events
    for e in ev:
        if e.kind == Kind.W:
            c.writes_at.setdefault(e.loc, []).append(e.eid)
    for r in ev:
        if r.kind == Kind.R:
            c.rf += [(w, r.eid) for w in c.writes_at.get(r.loc, []) if not exclusive(r, ev[w])]
    known: dict[int, int] = {}  # both directions
    for a, b in co_known or ():
        known[a] = known.get(a, 0) | (1 << b)
        known[b] = known.get(b, 0) | (1 << a)
    for a, row in co_rows(eg, c.writes_at).items():
        row &= ~known.get(a, 0)
        if row:
            c.co += zip(repeat(a), ones(row))
    c.scf = [e.eid for e in ev if e.kind == Kind.F and e.sem == "sc"]
    return c


_BIT = bytes.maketrans(b"01", b"\x00\x01")


def ones(x: int) -> list[int]:
    """``list(bits(x))``, by C-level string work when x is dense (a row of co candidates: five
    times faster than bit by bit)."""
    if x.bit_count() * 8 < x.bit_length():
        return list(bits(x))
    s = bin(x)[:1:-1].encode().translate(_BIT)
    return list(compress(range(len(s)), s))


def co_rows(eg: EventGraph, writes_at: dict[str, list[int]]) -> dict[int, int]:
    """Each write of a thread → the writes it may be co-related with, as a bitset: the other
    writes of threads to its location, less those of its own thread on paths disjoint from its
    own (``exclusive``). Rows come by location, then write, in event order."""
    ev = eg.events
    rows: dict[int, int] = {}
    for ws in writes_at.values():
        threaded = [w for w in ws if ev[w].thread >= 0]
        mask = sum(1 << w for w in threaded)
        apart: dict[tuple, int] = {}  # (thread, paths) → the writes it never runs with
        for a in threaded:
            e = ev[a]
            key = (e.thread, e.paths)
            if key not in apart:
                apart[key] = sum(1 << w for w in threaded if exclusive(e, ev[w]))
            rows[a] = mask & ~(1 << a) & ~apart[key]
    return rows


def path_masks(eg: EventGraph) -> dict[int, dict[int, int]]:
    """Each thread's paths → the thread's events on that path (a bitset)."""
    out: dict[int, dict[int, int]] = {}
    for e in eg.events:
        if e.thread >= 0:
            m = out.setdefault(e.thread, {})
            bit = 1 << e.eid
            for p in e.paths:
                m[p] = m.get(p, 0) | bit
    return out


class Together:
    """``of(a)``: the events of a's thread on some path of a's (those not :func:`exclusive` with
    a: they may run with it), as a bitset; 0 for an event of no thread. One bitset per distinct
    set of paths, from the path masks (not a test of every pair of the thread's events)."""

    def __init__(self, eg: EventGraph) -> None:
        self.eg, self.masks = eg, path_masks(eg)
        self._memo: dict[tuple[int, frozenset[int]], int] = {}

    def of(self, a: int) -> int:
        e = self.eg.events[a]
        if e.thread < 0:
            return 0
        key = (e.thread, e.paths)
        x = self._memo.get(key)
        if x is None:
            masks, x = self.masks[e.thread], 0
            for p in e.paths:
                x |= masks.get(p, 0)
            self._memo[key] = x
        return x


def implied_execution(eg: EventGraph, ex: list[Guard]) -> list[int]:
    """For each event, the events that execute whenever it does: the unconditional ones, and
    those of its thread that lie on all of its paths and have no value condition (the
    intersection of the masks of its paths: one bitset operation a path, not a test of every
    pair of the thread's events)."""
    sure = sum(1 << i for i, g in enumerate(ex) if g is True)
    masks = path_masks(eg)
    eligible: dict[int, int] = {}  # thread → its events that may execute and have no condition
    for e in eg.events:
        if e.thread >= 0 and ex[e.eid] is not False and e.cond == TRUE:
            eligible[e.thread] = eligible.get(e.thread, 0) | (1 << e.eid)
    memo: dict[tuple[int, frozenset[int]], int] = {}
    out = []
    for a in eg.events:
        m = sure | (1 << a.eid)
        if a.thread >= 0 and ex[a.eid] is not True:
            key = (a.thread, a.paths)
            on_all = memo.get(key)
            if on_all is None:
                on_all, tm = eligible.get(a.thread, 0), masks.get(a.thread, {})
                for p in a.paths:
                    on_all &= tm.get(p, 0)
                memo[key] = on_all
            m |= on_all
        out.append(m)
    return out


def _level(eg: EventGraph, sa: tuple, sb: tuple) -> int:
    """The scope level between two sites (thread, at): the thread itself when both are the
    thread's own CTA's events (``at`` None), else the narrowest scope holding both placements."""
    if sa[0] == sb[0] and sa[1] is None and sb[1] is None:
        return _LEVEL["thread"]
    threads = eg.program.threads
    pa = sa[1] or threads[sa[0]].placement
    pb = sb[1] or threads[sb[0]].placement
    return _LEVEL[pa.level_with(pb)]


@record
class Derived:
    """A base entry computed from other entries (named, so no thunk refers to the environment:
    a cycle would leave the environment, and its solver terms, to the cyclic collector)."""

    uses: tuple[str, ...]
    fn: Callable


class LazyEnv(dict):
    """The base environment: an entry is computed on first use (a model names only some)."""

    def __init__(self) -> None:
        super().__init__()
        self.later: dict = {}

    def __missing__(self, k):
        f = self.later.pop(k, None)
        if f is None:
            raise KeyError(k)
        v = self[k] = f.fn(*(self[n] for n in f.uses)) if isinstance(f, Derived) else f()
        return v

    def __contains__(self, k) -> bool:
        return dict.__contains__(self, k) or k in self.later

    def names(self) -> list[str]:
        return list(self.keys()) + list(self.later)


class _Base:
    """Static masks of one event graph, shared by the base relations."""

    def __init__(self, eg: EventGraph, u: Universe):
        self.eg, self.u = eg, u
        ev = eg.events
        self.thread_mask: dict[int, int] = {}
        for e in ev:
            if e.thread >= 0:
                self.thread_mask[e.thread] = self.thread_mask.get(e.thread, 0) | (1 << e.eid)
        self.mem = sum(1 << e.eid for e in ev if e.kind in (Kind.R, Kind.W))
        self.agents = sum(1 << e.eid for e in ev if e.agent >= 0)
        # sites: (thread, at) → its events; an asynchronous agent's event may be performed in
        # another CTA than its thread's (Event.at)
        self.site_mask: dict[tuple, int] = {}
        for e in ev:
            if e.thread >= 0:
                k = (e.thread, e.at)
                self.site_mask[k] = self.site_mask.get(k, 0) | (1 << e.eid)
        self.together = Together(eg)

    def apart(self, a: int) -> int:
        """The events of a's thread on none of a's paths (a thread runs one path), as a bitset:
        they never execute together with a (``Universe.apart``)."""
        t = self.eg.events[a].thread
        return self.thread_mask.get(t, 0) & ~self.together.of(a) if t >= 0 else 0

    def apart_fn(self):
        """:meth:`apart` as a function of its data alone, for ``Universe.apart``: the bound method
        would tie the universe to this object, which holds the universe — a cycle keeping the
        solver's terms alive until the garbage collector runs."""
        threads, mask, together = [e.thread for e in self.eg.events], self.thread_mask, self.together

        def apart(a: int) -> int:
            t = threads[a]
            return mask.get(t, 0) & ~together.of(a) if t >= 0 else 0
        return apart

    def eset(self, pred) -> ESet:
        return ESet(self.u, sum(1 << e.eid for e in self.eg.events if pred(e)) & self.u.live)

    def rel(self, rows: dict[int, int]) -> Rel:
        live = self.u.live
        return Rel(self.u, {a: r & live for a, r in rows.items() if (live >> a) & 1 and r & live})

    def po(self) -> Rel:
        """Program order of each thread's own events (not those of its asynchronous agents)."""
        rows = {}
        ev = self.eg.events
        for t, mask in self.thread_mask.items():
            mask &= ~self.agents
            es = sorted((ev[i] for i in bits(mask)), key=lambda e: e.index)
            if len(self.eg.paths[t]) == 1:  # one path: every later event, by suffix masks
                later = 0
                for a in reversed(es):
                    rows[a.eid] = later
                    later |= 1 << a.eid
                continue
            later, i = 0, len(es)  # later: the events of an index above a's
            for a in reversed(es):
                while i > 0 and es[i - 1].index > a.index:
                    i -= 1
                    later |= 1 << es[i].eid
                rows[a.eid] = later & self.together.of(a.eid)
        return self.rel(rows)

    def issue(self) -> Rel:
        """A thread's own events → the asynchronous-agent events of an operation it issues later."""
        ev = self.eg.events
        rows: dict[int, int] = {}
        for e in ev:
            if e.agent < 0:
                continue
            for a in bits(self.thread_mask[e.thread] & ~self.agents):
                if ev[a].index < e.index and ev[a].paths & e.paths:
                    rows[a] = rows.get(a, 0) | (1 << e.eid)
        return self.rel(rows)

    def cluster_barrier(self) -> Rel:
        """barrier.cluster: the k-th arrive of a thread → the k-th wait of each other thread of its
        cluster (barrier.cluster.wait waits for all non-exited threads of the cluster: a thread
        that ends without its k-th arrive has exited and is not waited for)."""
        ev, threads = self.eg.events, self.eg.program.threads
        rows: dict[int, int] = {}
        for a in ev:
            if not {"CBAR", "ARRIVE"} <= a.tags:
                continue
            for w in ev:
                if {"CBAR", "WAIT"} <= w.tags and w.thread != a.thread and \
                        w.barrier[2] == a.barrier[2] and \
                        threads[w.thread].placement.cluster_key == threads[a.thread].placement.cluster_key:
                    rows[a.eid] = rows.get(a.eid, 0) | (1 << w.eid)
        return self.rel(rows)

    def edges(self, label: str) -> Rel:
        rows: dict[int, int] = {}
        for a, b in self.eg.edges[label]:
            rows[a] = rows.get(a, 0) | (1 << b)
        return self.rel(rows)

    def same(self, key, among: int) -> Rel:
        """Pairs of events of ``among`` with equal ``key(e)`` (None: never equal)."""
        groups: dict = {}
        for e in self.eg.events:
            if (among >> e.eid) & 1:
                k = key(e)
                if k is not None:
                    groups[k] = groups.get(k, 0) | (1 << e.eid)
        rows = {}
        for e in self.eg.events:
            if (among >> e.eid) & 1 and key(e) is not None:
                rows[e.eid] = groups[key(e)]
        return self.rel(self._no_exclusive(rows))

    def _no_exclusive(self, rows: dict[int, int]) -> dict[int, int]:
        ev = self.eg.events
        if all(len(p) == 1 for p in self.eg.paths):
            return rows
        together = self.together.of
        for a, row in rows.items():
            own = row & self.thread_mask.get(ev[a].thread, 0)
            if own:  # less the thread's own events on none of a's paths
                rows[a] = row & ~(own & ~together(a))
        return rows

    def placed(self, key) -> Rel:
        """Pairs of thread events whose placements (Event.at, else their thread's) agree on ``key``."""
        threads = self.eg.program.threads
        where = {k: key(k[1] or threads[k[0]].placement) for k in self.site_mask}
        rows = {}
        for ka, ma in self.site_mask.items():
            row = 0
            for kb, mb in self.site_mask.items():
                if where[ka] == where[kb]:
                    row |= mb
            for a in bits(ma):
                rows[a] = row
        return self.rel(self._no_exclusive(rows))

    def sr(self) -> Rel:
        """Both events strong, each one's scope including the other's site (thread, or the CTA
        an asynchronous agent's event is performed in). A row per site and scope, not per pair
        of sites: the level between two sites depends only on their placements (but a thread's
        own site, whose events' rows hold all its scoped events); :meth:`sr_pairwise` is the
        definition site by site (the tests compare the two)."""
        by_level = self._by_level()
        threads = self.eg.program.threads
        place = {sb: sb[1] or threads[sb[0]].placement for sb, _ in by_level}
        agg: dict[tuple, int] = {}  # (placement, level) → events of its sites with scope ≥ level
        for (sb, lv), m in by_level.items():
            agg[(place[sb], lv)] = agg.get((place[sb], lv), 0) | m
        placements = list(dict.fromkeys(place.values()))
        memo: dict[tuple, int] = {}
        rows = {}
        for a in self.eg.events:
            if a.thread < 0 or a.scope is None:
                continue
            sa, top = (a.thread, a.at), _LEVEL[a.scope]
            pa = place[sa]
            if (pa, top) not in memo:
                row = 0
                for pb in placements:
                    lv = _LEVEL[pa.level_with(pb)]
                    if lv <= top:
                        row |= agg.get((pb, lv), 0)
                memo[(pa, top)] = row
            own = by_level.get((sa, _LEVEL["thread"]), 0) if sa[1] is None else 0
            rows[a.eid] = memo[(pa, top)] | own
        return self.rel(self._no_exclusive(rows))

    def _by_level(self) -> dict[tuple, int]:
        by_level: dict[tuple, int] = {}  # (site, level) → events with scope ≥ level
        for e in self.eg.events:
            if e.thread >= 0 and e.scope is not None:
                for lv in range(-1, _LEVEL[e.scope] + 1):
                    k = ((e.thread, e.at), lv)
                    by_level[k] = by_level.get(k, 0) | (1 << e.eid)
        return by_level

    def sr_pairwise(self) -> Rel:
        """:meth:`sr` site by site (quadratic in the threads): its definition, for the tests."""
        ev = self.eg.events
        by_level = self._by_level()
        sites = {k for k, _ in by_level}
        rows = {}
        for a in ev:
            if a.thread < 0 or a.scope is None:
                continue
            row = 0
            sa = (a.thread, a.at)
            for sb in sites:
                lv = _level(self.eg, sa, sb)
                if lv <= _LEVEL[a.scope]:
                    row |= by_level.get((sb, lv), 0)
            rows[a.eid] = row
        return self.rel(self._no_exclusive(rows))


def base_env(eg: EventGraph, ch: Choice, cand: Candidates,
             co_known: set[tuple[int, int]] | None = None) -> LazyEnv:
    ev = eg.events
    ex = [ch.exec(i) for i in range(len(ev))]
    u = Universe(ex, ch.lg, implied_execution(eg, ex))
    b = _Base(eg, u)
    u.apart = b.apart_fn()
    threaded = sum(b.thread_mask.values())
    env = LazyEnv()
    lazy = env.later
    tag = lambda t: (lambda e: t in e.tags)  # noqa: E731
    lazy.update({
        "_": lambda: ESet(u, u.live),
        "R": lambda: b.eset(lambda e: e.kind == Kind.R),
        "W": lambda: b.eset(lambda e: e.kind == Kind.W),
        "M": lambda: b.eset(lambda e: e.kind in (Kind.R, Kind.W)),
        "F": lambda: b.eset(lambda e: e.kind == Kind.F),
        "B": lambda: b.eset(lambda e: e.kind == Kind.B),
        "IW": lambda: b.eset(tag("IW")),
        "RMW": lambda: b.eset(lambda e: bool({"RMW_R", "RMW_W"} & e.tags)),
        "RedR": lambda: b.eset(tag("RedR")),
        "VOL": lambda: b.eset(tag("VOL")),
        # generic proxy: generic memory operations, initial writes, memory fences, barriers
        "GEN": lambda: b.eset(lambda e: bool({"GEN", "IW"} & e.tags) or e.kind == Kind.B
                              or (e.kind == Kind.F and "PROXY" not in e.tags)),
        "TEX": lambda: b.eset(tag("TEX")),
        "SUR": lambda: b.eset(tag("SUR")),
        "CON": lambda: b.eset(tag("CON")),
        "PROXY": lambda: b.eset(tag("PROXY")),
        "ALIAS": lambda: b.eset(tag("ALIAS")),
        **{name: (lambda n=name: b.eset(tag(n)))
           for name in ("ASYNC", "AOP", "SHM", "PFG", "PFS", "MBAR", "MBWAIT", "MBI", "UNI", "RSR",
                        "ASR", "MBINV", "TMAP", "TMREL", "TMACQ")},
        "CBA": lambda: b.eset(lambda e: {"CBAR", "ARRIVE"} <= e.tags),
        "CBW": lambda: b.eset(lambda e: {"CBAR", "WAIT"} <= e.tags),
        "MBOK": lambda: ESet.of(u, {e.eid: u.and2(u.ex[e.eid], ch.cond(e.ok)) for e in ev
                                    if e.ok is not None and u.ex[e.eid] is not False}),
    })
    for sem, name in SEM_TAG.items():
        lazy[name] = lambda s=sem: b.eset(lambda e: e.sem == s and e.thread >= 0)
    for scope, name in SCOPE_TAG.items():
        lazy[name] = lambda s=scope: b.eset(lambda e: e.scope == s)
    lazy["po"] = b.po
    for label in ("rmw", "addr", "data", "ctrl"):
        lazy[label] = lambda lb=label: b.edges(lb)
    lazy["async_int"] = lambda: b.edges("aint")
    lazy["bulk_done"] = lambda: b.edges("done")
    lazy["tm_range"] = lambda: b.edges("tmrange")
    lazy["issue"] = b.issue
    lazy["sync_cluster_barrier"] = b.cluster_barrier
    lazy["loc"] = lambda: b.same(lambda e: e.loc, b.mem)
    lazy["vloc"] = lambda: b.same(lambda e: e.vloc, b.mem)
    lazy["int"] = lambda: b.same(lambda e: (e.thread, e.agent), threaded)
    lazy["ext"] = lambda: _ext(b)
    lazy["sr"] = b.sr
    lazy["scta"] = lambda: b.placed(lambda p: p.cta_key)
    lazy["scluster"] = lambda: b.placed(lambda p: p.cluster_key)
    lazy["sgpu"] = lambda: b.placed(lambda p: p.gpu)
    rf = Rel.of(u, {(w, r): ch.rf(w, r) for w, r in cand.rf})
    co = Rel.of(u, {(a, c): ch.co(a, c) for a, c in cand.co})
    known = dict(co.must)
    for a, c in co_known or ():
        known[a] = known.get(a, 0) | (1 << c)
    for w in eg.init.values():  # the initial write is co-before every write of its location
        known[w] = known.get(w, 0) | sum(1 << x for x in cand.writes_at.get(ev[w].loc, []) if x != w)
    co = Rel(u, {a: r & u.live for a, r in known.items() if (u.live >> a) & 1}, co.may)
    env["rf"] = rf
    env["co"] = co
    lazy["fr"] = lambda: _fr(rf, co)
    env["scorder"] = Rel.of(u, {(f, g): ch.scorder(f, g) for f in cand.scf for g in cand.scf if f != g})
    lazy["sync_fence"] = Derived(("scorder", "sr", "int"), lambda so, sr, int_: so & (sr | int_))
    bars = Barriers(eg, ch, u)
    lazy["sync_barrier"] = bars.sync
    lazy["exit_barrier"] = bars.exit_release
    lazy["CB_HANG"] = bars.cluster_hang
    lazy["syncbar"] = lambda: bars.sync(same_thread=True)
    # Dat3M's stdlib.cat, which every Dat3M model includes implicitly
    lazy["po-loc"] = Derived(("po", "loc"), lambda po, loc: po & loc)
    for name, rel, part in (("rfe", "rf", "ext"), ("rfi", "rf", "int"), ("coe", "co", "ext"),
                            ("coi", "co", "int"), ("fre", "fr", "ext"), ("fri", "fr", "int")):
        lazy[name] = Derived((rel, part), lambda r, p: r & p)
    lazy["QUORUM_UNMET"] = bars.quorum_unmet
    return env


def _ext(b: _Base) -> Rel:
    """Pairs of events of different threads (initial writes: of no thread)."""
    ev = b.eg.events
    everything = sum(1 << e.eid for e in ev)
    rows = {}
    for e in ev:
        own = b.thread_mask.get(e.thread, 0) if e.thread >= 0 else (1 << e.eid)
        rows[e.eid] = everything & ~own
    return b.rel(rows)


def _fr(rf: Rel, co: Rel) -> Rel:
    """(rf^-1 ; co) \\ id"""
    fr = rf.inverse().seq(co)
    must = {a: r & ~(1 << a) for a, r in fr.must.items() if r & ~(1 << a)}
    return Rel(fr.u, must, {k: g for k, g in fr.may.items() if k[0] != k[1]})

