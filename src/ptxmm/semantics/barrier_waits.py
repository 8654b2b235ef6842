"""When a barrier wait completes — one definition for the safety encoding (the base names
sync_barrier, exit_barrier, QUORUM_UNMET, CB_HANG of :mod:`.vocab`) and the liveness query
(:meth:`ptxmm.queries.hangs._Encoding.blocked`, and the words of its witness).

* ``bar.sync a, n`` / ``barrier.cta.sync a, n`` (a thread count): Dat3M's quorum semantics — the
  phase completes with exactly ``n`` arrivals of the CTA at barrier ``a`` (phases are chosen).
* ``bar.sync a`` without a count: "all threads in the CTA participate" (PTX ISA, bar/barrier),
  and "as threads exit, barriers waiting on all threads are checked to see if the exiting threads
  are the only threads that have not yet made it to a barrier ... the barrier is released" (PTX
  ISA, exit). So a count-less wait of phase k of barrier ``a`` completes iff every other thread of
  its CTA arrives at (``a`` by value, k) or exits without arriving there.
* ``barrier.cluster.wait`` "waits for all non-exited threads of the cluster to perform
  barrier.cluster.arrive": the same rule over the cluster's threads and their k-th arrives; a wait
  whose own thread has not arrived in its phase (``HANG``) never completes.

A finite execution (the safety encoding) has every thread finish, so there the count-less rule is
an *order*: every event of a thread that exits without arriving → the wait it releases
(``exit_barrier``, in the models' acyclic Barrier-progress; no memory ordering: an exit is no
synchronizes-with). Two threads of one CTA at different count-less barriers each wait for the
other to exit: a cycle, a deadlock, as the liveness query says they block.

* Warp collectives (``WARP``, :mod:`.warp_collectives`): a count-less barrier whose members are
  the other lanes of the thread's warp that its membermask names (``members``), its operands the
  form, mask and warp; bar.red (``RED``) one of the whole CTA. Those the ISA gives no memory
  ordering (``NOSYNC``: shfl, vote, match, redux, elect) put their arrive → wait pairs in
  ``exit_barrier`` (progress only: Barrier-progress sees a deadlock, causality nothing) rather
  than ``sync_barrier``.

**Groups** (issue 40: a block of 1,024 threads): a count-less ``bar.sync`` wait whose barrier
operands are constants (``static``) has one *group* per CTA, operands and phase k. Whether a thread
arrives in the group's phase is the same for every wait of the group (one guard per thread, not per
pair), and the phase completes iff every thread of the CTA arrives in it or finishes: the wait's own
thread counts too, which changes nothing wherever the wait executes (its own arrive, the event before
it on every path through it, executes then) — and every use of :meth:`Barriers.complete` is under that
guard (sync and exit pairs, ``QUORUM_UNMET`` through ``passes``, the liveness query's blocked path).
The arrive → wait pairs of a group whose guards are all true are whole bitset rows. ``GROUPS =
False``: the per-pair definitions (the property tests compare the two)."""

from __future__ import annotations

from contextlib import contextmanager

from ..cat.relalg import ESet, Guard, Rel, Universe
from ..ir.values import TRUE, Const, mk
from .events import Event, EventGraph, Kind
from .lanes import warp_members
from .loops import loop_free

# Count-less barriers with constant operands in groups (module doc); False: every pair on its own.
GROUPS = True
# Exit pairs (``exit_release``) left out for a thread whose every finishing path arrives at the
# wait's barrier instance unconditionally (:meth:`Barriers.surely_arrives`: their guard is false),
# in the problems built within :func:`sure_arrivals` (the grid-ending site query after a proof that
# nothing hangs: a smaller formula, and the hang query's own formula, whose witnesses the solver
# picks, stays as it was); False: never (the property tests compare the two).
SURE_ARRIVALS = True
_SURE = {"on": False}  # within sure_arrivals()
# Arrive → wait pairs looked for only among waits whose constant operands may equal the arrive's
# (:func:`_partners`); False: every wait of the CTA asked (the property tests compare the two).
PARTNER_INDEX = True
# An arrive → wait pair of count-less barriers (warp collectives, bar.sync without a count) is
# looked at only when the arrives' phases may be the same (:meth:`Barriers.phase_apart`: the
# choice's ``same_phase`` of two count-less arrives is their k-th-arrival numbers compared, a
# Python bool, no term): block-reduce-shfl's five shuffles per lane meet the 31 other lanes' five,
# four of the five pairs in another phase. The guards built are those built before, less the
# ``same_barrier`` terms of pairs whose guard is False anyway (the tests compare the solvers'
# formulas). With it, a warp collective's members are asked of the lane table once per thread and
# mask (``members``). False: every pair's ``same_barrier`` is built first, the members asked anew.
PHASE_FIRST = True


@contextmanager
def sure_arrivals():
    """Within it, the :class:`Barriers` built leave out the exit pairs of threads sure to arrive
    (:data:`SURE_ARRIVALS`)."""
    old = _SURE["on"]
    _SURE["on"] = SURE_ARRIVALS
    try:
        yield
    finally:
        _SURE["on"] = old


def static(e: Event) -> bool:
    """A count-less CTA barrier wait or arrive whose operands are constants (a group's member)."""
    return e.barrier[1] is None and not ({"WARP", "INSTANCE", "CBAR", "HANG"} & e.tags) \
        and all(isinstance(x, Const) for x in e.barrier[0])


class Barriers:
    """CTA execution barriers (§5.1) and cluster barriers: arrive/wait events, phases, counts."""

    def __init__(self, eg: EventGraph, ch, u: Universe):
        self.eg, self.ch, self.u = eg, ch, u
        self.bars = [e for e in eg.events if "BAR" in e.tags and u.ex[e.eid] is not False]
        self.cbars = [e for e in eg.events if "CBAR" in e.tags and u.ex[e.eid] is not False]
        self.place = place = [t.placement for t in eg.program.threads]
        ctas = [p.cta_key for p in place]
        self.cta = lambda e: ctas[e.thread]  # not self: no reference cycle holding Z3 terms
        self.own: dict[int, list[int]] = {}  # thread → its own events (not its agents')
        for e in eg.events:
            if e.thread >= 0 and e.agent < 0 and u.ex[e.eid] is not False:
                self.own.setdefault(e.thread, []).append(e.eid)
        # Caches: each is a pure function of its key over one graph, asked once per pair or per
        # member otherwise (quadratic and worse in the waits of a block of hundreds of threads).
        self.arrivals: dict[int, list[Event]] = {}  # thread → its bar arrives
        for a in self.bars:
            if "ARRIVE" in a.tags:
                self.arrivals.setdefault(a.thread, []).append(a)
        self._complete: dict[int, Guard] = {}
        self._arrives: dict[tuple[int, int], Guard] = {}
        self._members: dict[tuple, list[int]] = {}
        self._finishes: dict[int, Guard] = {}
        self._group_arrives: dict[tuple, dict[int, Guard]] = {}  # group → thread → "arrives in it"
        self._group_done: dict[tuple, Guard] = {}  # group → "its phase completes"
        self._sure_at: dict[int, frozenset] = {}  # thread → :meth:`_sure`
        self.sure = _SURE["on"]  # :func:`sure_arrivals`

    # -- groups (module doc) ----------------------------------------------------------------------

    def group(self, w: Event) -> tuple | None:
        """The group of a static wait (CTA, operand values, phase); None: the per-pair rules."""
        if not GROUPS or "WAIT" not in w.tags or not static(w):
            return None
        return (self.cta(w), tuple(x.v for x in w.barrier[0]), w.barrier[2])

    def _ids_match(self, a: Event, ids: tuple) -> Guard:
        """a's operands equal the constants ``ids`` (as :meth:`same_barrier` compares them)."""
        u, g = self.u, True
        for x, v in zip(a.barrier[0], ids):
            if isinstance(x, Const):
                if x.v != v:
                    return False
                continue
            g = u.and2(g, self.ch.cond(mk("eq", x, Const(v, 64))))
        return g

    def group_arrives(self, key: tuple) -> dict[int, Guard]:
        """Each thread of the group's CTA → "it arrives in the group's phase" (one guard per
        thread: :meth:`arrives` of every wait of the group, but for the wait's own guard)."""
        if key not in self._group_arrives:
            cta, ids, k = key
            u, out = self.u, {}
            for t in self.members_of(cta):
                out[t] = u.any(u.and2(u.ex[a.eid], self._ids_match(a, ids))
                               for a in self.arrivals.get(t, ())
                               if a.barrier[2] == k and "WARP" not in a.tags
                               and len(a.barrier[0]) == len(ids))
            self._group_arrives[key] = out
        return self._group_arrives[key]

    def group_done(self, key: tuple) -> Guard:
        """The group's phase completes: every thread of the CTA arrives in it or finishes."""
        if key not in self._group_done:
            u = self.u
            self._group_done[key] = u.all(u.any((self.finishes(t), g))
                                          for t, g in self.group_arrives(key).items())
        return self._group_done[key]

    def group_missing(self, key: tuple) -> list[int]:
        """The threads of the group's CTA that may not arrive in its phase."""
        return [t for t, g in self.group_arrives(key).items() if g is not True]

    def members_of(self, cta: tuple) -> list[int]:
        me = (False, cta)
        if me not in self._members:
            self._members[me] = [i for i, q in enumerate(self.place) if q.cta_key == cta]
        return self._members[me]

    def same_barrier(self, a: Event, w: Event) -> Guard:
        """a and w belong to barriers of one CTA with equal operands (compared by value); a warp
        collective's (``WARP``: its form, membermask and warp) only to another's."""
        if self.cta(a) != self.cta(w) or len(a.barrier[0]) != len(w.barrier[0]) \
                or ("WARP" in a.tags) != ("WARP" in w.tags):
            return False
        u = self.u
        g = u.and2(u.ex[a.eid], u.ex[w.eid])
        for x, y in zip(a.barrier[0], w.barrier[0]):
            if x == y:  # one expression (values name reads and choices globally): equal
                continue
            if isinstance(x, Const) and isinstance(y, Const) and x.w == y.w:
                return False  # two different constants of one width
            g = u.and2(g, self.ch.cond(mk("eq", x, y)))
        return g

    def arrive_of(self, w: Event) -> Event:
        return self.eg.events[w.eid - 1]  # a wait is created right after its own arrive

    def members(self, w: Event) -> list[int]:
        """The other threads a wait waits for: its CTA's (bar), its cluster's (barrier.cluster);
        none for the Dat3M dialect's count-less ``bar.cta.sync c{, id}`` (``INSTANCE``), which
        synchronizes the threads that arrive at it with equal operands and waits for no other
        (Dat3M's visitor makes it a ControlBarrier/NamedBarrier without a quorum, whose executed
        events of one instance synchronize: ``SB+named-bar-dyn-reg-const`` expects a thread at
        ``bar.cta.sync 1, r2`` with r2 = 0 to pass while the other is at ``bar.cta.sync 1, 1``)."""
        if "INSTANCE" in w.tags:
            return []
        if "WARP" in w.tags:  # the lanes its membermask names (semantics/warp_collectives.py)
            if not PHASE_FIRST:
                return warp_members(self.eg.program, w.thread, w.barrier[0][1].v)
            me = ("warp", w.thread, w.barrier[0][1].v)  # a pure function of them: asked once
            if me not in self._members:
                self._members[me] = warp_members(self.eg.program, w.thread, w.barrier[0][1].v)
            return self._members[me]
        cluster = "CBAR" in w.tags
        p = self.place[w.thread]
        if not cluster:
            return [i for i in self.members_of(p.cta_key) if i != w.thread]
        me = (True, p.cluster_key)
        if me not in self._members:
            self._members[me] = [i for i, q in enumerate(self.place) if q.cluster_key == me[1]]
        return [i for i in self._members[me] if i != w.thread]

    def arrives(self, t: int, w: Event) -> Guard:
        """Thread ``t`` arrives at the barrier and phase of wait ``w``."""
        u = self.u
        if "CBAR" in w.tags:
            return u.any(u.ex[a.eid] for a in self.cbars if a.thread == t and "ARRIVE" in a.tags
                         and a.barrier[2] == w.barrier[2])
        g = self.group(w)
        if g is not None:
            return u.and2(u.ex[w.eid], self.group_arrives(g).get(t, False))
        key = (t, w.eid)
        if key not in self._arrives:
            mine = self.arrive_of(w)
            self._arrives[key] = u.any(u.and2(self.same_barrier(a, w), self.ch.same_phase(a.eid, mine.eid))
                                       for a in self.arrivals.get(t, ()) if not self.phase_apart(a, mine))
        return self._arrives[key]

    def phase_apart(self, a: Event, b: Event) -> bool:
        """Whether two arrives are surely in different phases, as the choice says without a term:
        both count-less (only counted arrives have chosen phases) and ``same_phase`` False
        (:data:`PHASE_FIRST`; a choice that does not know answers a term, never False)."""
        return PHASE_FIRST and a.barrier[1] is None and b.barrier[1] is None \
            and self.ch.same_phase(a.eid, b.eid) is False

    def finishes(self, t: int) -> Guard:
        """Thread ``t`` runs to its exit (every path of a safety graph does; a liveness graph's
        stuck, blocked and prefix paths do not)."""
        if t not in self._finishes:
            done = [k for k, p in enumerate(self.eg.paths[t]) if p.kind == "done"]
            self._finishes[t] = True if len(done) == len(self.eg.paths[t]) else \
                self.u.any(self.ch.path(t, k) for k in done)
        return self._finishes[t]

    def passes(self, w: Event) -> Guard:
        """Wait ``w`` executes and its thread goes on past it (not the liveness path ending there)."""
        u, t = self.u, w.thread
        here = [k for k, p in enumerate(self.eg.paths[t]) if p.kind == "blocked" and p.end[0] == w.eid]
        return u.and2(u.ex[w.eid], u.not1(u.any(self.ch.path(t, k) for k in here)))

    def waits_for(self, w: Event) -> dict[int, Guard]:
        """For a count-less wait: each other thread → "it neither arrives at w's barrier phase nor
        exits" (w never completes while one holds)."""
        u, out = self.u, {}
        g = self.group(w)
        arr = self.group_arrives(g) if g is not None else None
        for t in self.members(w):
            if arr is not None and arr.get(t, False) is True:
                continue  # it arrives whenever w runs
            f = self.finishes(t)
            if f is not True:
                g = u.and2(u.not1(f), u.not1(self.arrives(t, w)))
                if g is not False:
                    out[t] = g
        return out

    def complete(self, w: Event) -> Guard:
        """Whether the phase of wait ``w`` completes: its thread count q of arrivals, or without a
        count every other thread of its CTA (cluster) arrives in that phase or exits."""
        if w.eid not in self._complete:
            self._complete[w.eid] = self._completes(w)
        return self._complete[w.eid]

    def _completes(self, w: Event) -> Guard:
        q = w.barrier[1]
        if "HANG" in w.tags:
            return False
        if q is None:
            g = self.group(w)
            if g is not None:
                return self.group_done(g)
            return self.u.not1(self.u.any(self.waits_for(w).values()))
        mine = self.arrive_of(w)
        arr = [self.u.and2(self.same_barrier(a, w), self.ch.same_phase(a.eid, mine.eid))
               for a in self.bars if "ARRIVE" in a.tags]
        return self.ch.count([g for g in arr if g is not False], "complete", q)

    def exit_release(self) -> Rel:
        """``exit_barrier``: every event of a thread that exits without arriving at a count-less
        wait's barrier phase → that wait (the exit releases it)."""
        u, out = self.u, {}
        for w in self.bars + self.cbars:
            if "WAIT" not in w.tags or w.barrier[1] is not None or u.ex[w.eid] is False:
                continue
            key = self.group(w)
            who = self.members(w) if key is None else [t for t in self.group_missing(key) if t != w.thread]
            for t in who:
                if self.surely_arrives(t, w):
                    continue
                g = u.all((u.ex[w.eid], self.finishes(t), u.not1(self.arrives(t, w))))
                if g is False:
                    continue
                for e in self.own.get(t, ()):
                    h = u.and2(u.ex[e], g)
                    if h is not False:
                        out[(e, w.eid)] = h
        for k, g in self._pairs(lambda a: "NOSYNC" in a.tags, False).items():
            out[k] = u.any((out[k], g)) if k in out else g
        return Rel.of(u, out)

    def surely_arrives(self, t: int, w: Event) -> bool:
        """Whether every path of thread ``t`` that finishes holds an arrive of its own, executed
        whenever that path runs, at the count-less CTA barrier or warp collective instance of the
        wait ``w`` (constant operands equal to w's, the same phase): then "t finishes" implies "t
        arrives in w's phase", and an exit pair's guard (``finishes(t)`` and not ``arrives(t, w)``)
        is false. In a liveness graph every thread has paths that block at each wait, and without
        this the exit pairs of a warp of 32 lanes are lanes x waits x events."""
        if not self.sure or "CBAR" in w.tags or "INSTANCE" in w.tags or w.barrier[1] is not None:
            return False
        key = _instance(w)
        return key is not None and key in self._sure(t)

    def _sure(self, t: int) -> frozenset:
        """The barrier instances (:func:`_instance`) thread ``t`` arrives at on every finishing path."""
        if t not in self._sure_at:
            done = {k for k, p in enumerate(self.eg.paths[t]) if p.kind == "done"}
            out = set()
            for a in self.arrivals.get(t, ()):
                if a.cond == TRUE and a.agent < 0 and a.barrier[1] is None and done <= set(a.paths) \
                        and not ({"CBAR", "INSTANCE"} & a.tags) and self.u.ex[a.eid] is not False:
                    key = _instance(a)
                    if key is not None:
                        out.add(key)
            self._sure_at[t] = frozenset(out)
        return self._sure_at[t]

    def cluster_hang(self) -> ESet:
        """``CB_HANG``: cluster waits in a phase their own thread has not arrived in, that the
        thread goes past (the liveness path that blocks there is a hang, not an execution the
        model forbids)."""
        return ESet.of(self.u, {w.eid: g for w in self.cbars if "HANG" in w.tags
                                if (g := self.passes(w)) is not False})

    def quorum_unmet(self) -> ESet:
        """Waits whose phase never completes that their thread goes past: with a thread count,
        when something follows them in their thread (a thread blocked at its very last
        instruction has finished its work, and such executions count, as in Dat3M); without
        one (only in liveness graphs: a finite execution has every thread exit), always."""
        u, ev = self.u, self.eg.events
        out: dict[int, Guard] = {}
        for w in self.bars + self.cbars:
            if "WAIT" not in w.tags or "HANG" in w.tags:
                continue
            if w.barrier[1] is None:
                g = u.and2(self.passes(w), u.not1(self.complete(w)))
            else:
                later = [e.eid for e in ev if e.thread == w.thread and e.index > w.index
                         and e.paths & w.paths and u.ex[e.eid] is not False]
                if not later:
                    continue
                g = u.all((u.ex[w.eid], u.not1(self.complete(w)), u.any(u.ex[e] for e in later)))
            if g is not False:
                out[w.eid] = g
        return ESet.of(u, out)

    def sync(self, same_thread: bool = False) -> Rel:
        """The arrive of a barrier synchronizes with the wait of every other thread of the same
        CTA at the same barrier phase, when that phase completes (``same_thread``: the thread's
        own wait too, as Dat3M's syncbar relates every barrier of an instance to every other)."""
        return self._pairs(lambda a: "NOSYNC" not in a.tags, same_thread)

    def _pairs(self, which, same_thread: bool) -> Rel:
        """Arrive → wait of the same barrier phase, when it completes, for the arrives ``which``
        keeps: barriers and bar.warp.sync order memory (``sync_barrier``); the warp collectives
        the ISA gives no memory ordering (``NOSYNC``: shfl, vote, match, redux) only make their
        lanes wait (``exit_barrier``, in Barrier-progress only)."""
        u = self.u
        out = {}
        waits: dict = {}  # CTA → its waits (same_barrier relates no two events of different CTAs)
        groups: dict[tuple, list[Event]] = {}
        for w in self.bars:
            if "WAIT" in w.tags:
                key = self.group(w)
                if key is None:
                    waits.setdefault(self.cta(w), []).append(w)
                else:
                    groups.setdefault(key, []).append(w)
        buckets: dict = {}  # :func:`_partners`' index, built once per call
        must: dict[int, int] = {}
        for key, ws in groups.items():
            self._group_pairs(key, ws, which, same_thread, must, out)
        for a in self.bars:
            if "ARRIVE" not in a.tags or not which(a):
                continue
            for w in _partners(a, waits.get(self.cta(a), ()), buckets):
                if a.thread == w.thread and not same_thread:
                    continue
                mine = self.arrive_of(w)
                if self.phase_apart(a, mine):
                    continue
                g = self.same_barrier(a, w)
                g = u.and2(g, self.ch.same_phase(a.eid, mine.eid))
                if g is not False:
                    g = u.and2(g, self.complete(w))
                if g is not False:
                    out[(a.eid, w.eid)] = g
        if must:
            for (a, w), g in out.items():  # the group rows' pairs are none of these
                if g is True:
                    must[a] = must.get(a, 0) | (1 << w)
            return Rel(u, must, {p: g for p, g in out.items() if g is not True})
        return Rel.of(u, out)

    def _group_pairs(self, key: tuple, ws: list[Event], which, same_thread: bool, must: dict[int, int],
                     out: dict) -> None:
        """:meth:`_pairs` for the waits ``ws`` of one group: each arrive in the group's phase →
        each wait of another thread, guarded by both running and the phase completing; the pairs
        whose guards are all true as one bitset row per arrive."""
        u = self.u
        done = self.group_done(key)
        if done is False:
            return
        sure, own = 0, {}
        for w in ws:
            if u.ex[w.eid] is True:
                sure |= 1 << w.eid
            own[w.thread] = own.get(w.thread, 0) | (1 << w.eid)
        cta, ids, k = key
        for t in self.members_of(cta):
            for a in self.arrivals.get(t, ()):
                if a.barrier[2] != k or "WARP" in a.tags or len(a.barrier[0]) != len(ids) or not which(a):
                    continue
                ga = u.and2(u.ex[a.eid], self._ids_match(a, ids))
                if ga is False:
                    continue
                mine = 0 if same_thread else own.get(t, 0)
                if ga is True and done is True:
                    if sure & ~mine:
                        must[a.eid] = must.get(a.eid, 0) | (sure & ~mine)
                    rest = [w for w in ws if not (sure >> w.eid) & 1]
                else:
                    rest = ws
                for w in rest:
                    if not (mine >> w.eid) & 1:
                        g = u.all((ga, u.ex[w.eid], done))
                        if g is not False:
                            out[(a.eid, w.eid)] = g


def _operand_key(e: Event) -> tuple | None:
    """What :meth:`Barriers.same_barrier` compares of a barrier event's operands when each is a
    constant: (warp collective or not, their widths) and their values; None otherwise."""
    ops = e.barrier[0]
    if not all(isinstance(x, Const) for x in ops):
        return None
    return ("WARP" in e.tags, tuple(x.w for x in ops)), tuple(x.v for x in ops)


def _partners(a: Event, waits, buckets: dict) -> list[Event]:
    """The waits of ``a``'s CTA (``waits``, in order) whose operands may equal ``a``'s: all of
    them, less those whose constant operands differ from ``a``'s constants of the same widths, and
    those a warp collective's operands never meet (same_barrier is false for both;
    :data:`PARTNER_INDEX`). ``buckets``: the index, filled here once per list of waits (a warp's
    collectives are hundreds of waits in a CTA of 128 threads)."""
    mine = _operand_key(a)
    if not PARTNER_INDEX or mine is None:
        return list(waits)
    idx = buckets.get(id(waits))
    if idx is None:
        idx = buckets[id(waits)] = {}
        for w in waits:
            key = _operand_key(w)
            kind, vals = (None, None) if key is None else key
            idx.setdefault(kind, {}).setdefault(vals, []).append(w)
    out = list(idx.get(mine[0], {}).get(mine[1], []))
    for kind, by_vals in idx.items():  # register operands, or constants of other widths
        if kind is None or (kind != mine[0] and kind[0] == mine[0][0]):
            out += [w for ws in by_vals.values() for w in ws]
    return sorted(out, key=lambda w: w.eid)


def _instance(e: Event) -> tuple | None:
    """A count-less barrier event's instance as :meth:`Barriers.same_barrier` and the phase compare
    it — warp collective or not, constant operands (value and width), phase — or None when an
    operand is no constant."""
    if not all(isinstance(x, Const) for x in e.barrier[0]):
        return None
    return ("WARP" in e.tags, tuple((x.v, x.w) for x in e.barrier[0]), e.barrier[2])


def never_blocks(eg: EventGraph) -> bool:
    """A proof, from a safety graph ``eg``, that no execution of the program's liveness graph under
    fair progress has a thread hang (issue 40: the hang query need not be built). It holds when

    * no thread has a loop (:func:`.loops.acyclic`: no stuck path, nothing cut), and
    * every barrier event is a :func:`static` ``bar.sync`` / ``barrier.cta.sync`` arrive or wait
      of its thread's own that lies on every path of its thread unconditionally, and
    * the threads of each CTA use one and the same sequence of them (operands, phase).

    Why (PTX ISA, bar/barrier: a count-less ``bar.sync`` completes when all threads of the CTA
    have arrived): under fair progress every thread runs to its exit or blocks at a wait (there is
    no prefix and no stuck path), and a thread blocks at a wait only while some other thread of
    its CTA neither arrives in that phase nor exits (:meth:`Barriers.waits_for`). Take the blocked
    thread whose wait comes first in the CTA's common sequence: a thread that misses that phase has
    not reached it, so it is blocked at an earlier use of the sequence (it does not exit before
    its arrives, which lie on every path) — a contradiction. The model's axioms only remove
    executions. Anything else (a loop, a barrier some path skips, a thread count, a register
    operand, warp or cluster barriers, one thread exiting early) is left to the query."""
    seen: set[int] = set()
    for th in eg.program.threads:
        if id(th.instrs) not in seen:
            seen.add(id(th.instrs))
            if not loop_free(th):
                return False
    uses: list[list[tuple[int, tuple]]] = [[] for _ in eg.paths]
    for e in eg.events:
        if e.kind != Kind.B:
            continue
        every = len(eg.paths[e.thread]) if e.thread >= 0 else -1
        if "BAR" not in e.tags or not static(e) or e.agent >= 0 or len(e.paths) != every \
                or e.cond != TRUE:
            return False
        part = "WAIT" if "WAIT" in e.tags else "ARRIVE"
        uses[e.thread].append((e.index, (part, tuple(x.v for x in e.barrier[0]), e.barrier[2])))
    seq: dict[tuple, list] = {}
    for t, us in enumerate(uses):
        mine = [u for _, u in sorted(us)]
        if seq.setdefault(eg.program.threads[t].placement.cta_key, mine) != mine:
            return False
    return True
