"""Interchangeable threads: symmetry of an event graph under a permutation of threads, and the
canonical order that breaks it (issue 40, item 1).

Threads ``c1 < c2 < … < ck`` form a *class* when, for every ``ci``, swapping ``c1`` and ``ci`` —
their events position by position, and the locations only the one or the other touches (``in[c1]``
↔ ``in[ci]``) — maps the event graph onto itself: the same kinds, semantics, scopes, widths, tags,
paths, instructions, values and conditions (read values renamed), dependency edges, path
assumptions and stop sites, the same placement, the swapped locations with the same initial values
and touched by no other thread, and no observable on them or on the swapped threads' registers.
Such a swap is an automorphism of everything a model sees (its base sets and relations are built
from exactly these attributes: :func:`ptxmm.semantics.vocab.base_env`), so it maps an allowed
execution to an allowed execution with the same observable values and the same stop sites
reached; the transpositions ``(c1 ci)`` generate every permutation of the class.

The canonical order: each thread's *key writes* are its write events to locations the swaps fix
(the shared counters, ``hist[b]``), in program position order. Of any execution, sort the class's
threads by (the first key position the thread executes, then that write's place in a linear
extension of co among the threads with that first position; a thread executing none last), and
apply the permutation that puts them in class order: the result is an allowed execution with the
same outcome in which, for each adjacent pair ``a = ci, b = c(i+1)``:

* ``first(a) <= first(b)``, and
* when both first execute key position ``p``: not ``co(w_b^p, w_a^p)``.

So a query whose goal the swaps preserve (the outcome set, the condition, a stop site over all the
threads that reach it) has a witness that satisfies these constraints whenever it has one at all:
asserting them changes no answer. A query about particular threads or pairs of events (the data
races of a model flag, a liveness goal) is not preserved, and must not assume them. What k
commuting atomic increments of one counter by k interchangeable threads cost the solver — k! orders,
a pigeonhole argument for "no other final value" — becomes one order.

:func:`classes` finds the classes (conservatively: anything it does not recognise leaves the
threads apart) and their key writes; the Z3 engine encodes the constraints
(:meth:`ptxmm.engines.z3.problem.Z3Problem`, ``symmetry=True``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .._infra.records import record
from ..ir.values import Const, Expr, Op, ReadVal
from .events import Event, EventGraph, Kind


@record
class SymClass:
    """Interchangeable threads (in class order) and, per thread, its key writes (eids, one per key
    position, the same positions for every thread)."""

    threads: tuple[int, ...]
    keys: tuple[tuple[int, ...], ...]


def classes(eg: EventGraph, obs: Sequence) -> tuple[SymClass, ...]:
    """The classes of interchangeable threads of ``eg`` with at least two threads and one key
    position, under the observables ``obs`` (records with ``loc`` and ``thread``)."""
    if eg.unspecified or not _own_reads_only(eg):
        return ()
    by_thread: dict[int, list[Event]] = {}
    for e in eg.events:
        if e.thread >= 0:
            by_thread.setdefault(e.thread, []).append(e)
    observed_locs = {o.loc for o in obs if getattr(o, "loc", None) is not None}
    observed_threads = {o.thread for o in obs if getattr(o, "loc", None) is None}
    users = _users(eg)
    reps: dict[tuple, list[int]] = {}  # signature → representatives, in thread order
    members: dict[int, list[int]] = {}
    for t in sorted(by_thread):
        if t in observed_threads:
            continue
        bucket = reps.setdefault(_signature(eg, by_thread[t], users, observed_locs, t)
                                 if SIGNATURES else (), [])
        for r in bucket:
            if _swappable(eg, by_thread, users, observed_locs, r, t):
                members[r].append(t)
                break
        else:
            bucket.append(t)
            members[t] = [t]
    out = []
    for r in sorted(members):
        ts = members[r]
        if len(ts) < 2:
            continue
        keys = _key_positions(eg, by_thread[r], users)
        if keys:
            out.append(SymClass(tuple(ts), tuple(tuple(by_thread[t][i].eid for i in keys) for t in ts)))
    return tuple(out)


def _signature(eg: EventGraph, evs: list[Event], users: dict[str, set[int]], observed: set[str],
               t: int) -> tuple:
    """What :func:`_swappable` compares of thread ``t`` that two swappable threads share: the
    placement, the number of paths, and per event its kind, position, semantics, scope, width,
    agent, place and location — a location only ``t`` touches, not observed, as ``None`` (a swap
    may exchange it with the other thread's; any other location a swap fixes, so both threads name
    it). Threads whose signatures differ are never swappable: :func:`classes` compares a thread only
    with the representatives of its signature (at 1,024 threads of which no two swap, 1,024
    comparisons instead of half a million), and finds the same classes as comparing it with
    every representative in thread order, the first swappable one winning."""

    def where(loc: str | None):
        return None if loc is not None and users.get(loc) == {t} and loc not in observed else loc

    return (eg.program.threads[t].placement, len(eg.paths[t]),
            tuple((e.kind, e.index, e.sem, e.scope, e.w, e.agent, e.at, where(e.loc)) for e in evs))


def _key_positions(eg: EventGraph, evs: list[Event], users: dict[str, set[int]]) -> list[int]:
    """Positions (in the thread's event list) of its writes to locations other threads touch too
    (the swaps fix those: a location only one thread touches is swapped with its twin's)."""
    t = evs[0].thread
    return [i for i, e in enumerate(evs) if e.kind == Kind.W and e.loc is not None
            and users.get(e.loc, set()) - {t}]


def _users(eg: EventGraph) -> dict[str, set[int]]:
    """Location → the threads with an event on it (initial writes not counted)."""
    out: dict[str, set[int]] = {}
    for e in eg.events:
        if e.thread >= 0 and e.loc is not None:
            out.setdefault(e.loc, set()).add(e.thread)
    return out


def _reads_of(x: Expr | None, acc: set[int]) -> None:
    stack = [x]
    while stack:
        y = stack.pop()
        if isinstance(y, ReadVal):
            acc.add(y.eid)
        elif isinstance(y, Op):
            stack.extend(y.args)


def _own_reads_only(eg: EventGraph) -> bool:
    """Every value, condition and path assumption of a thread names only its own reads."""
    thread_of = {e.eid: e.thread for e in eg.events}
    for e in eg.events:
        acc: set[int] = set()
        for x in (e.value, e.cond, e.ok):
            _reads_of(x, acc)
        if e.barrier is not None:
            for x in e.barrier[0]:
                _reads_of(x, acc)
        if any(thread_of[r] != e.thread for r in acc):
            return False
    for t, paths in enumerate(eg.paths):
        acc = set()
        for p in paths:
            for x in p.assumes:
                _reads_of(x, acc)
        if any(thread_of[r] != t for r in acc):
            return False
    return True


def _rename(x, m: dict[int, int]):
    """``x`` (an expression or a tuple of them) with every read ``ReadVal(e)`` as ``ReadVal(m[e])``."""
    if isinstance(x, ReadVal):
        return replace(x, eid=m.get(x.eid, x.eid))
    if isinstance(x, Op):
        return Op(x.op, tuple(_rename(a, m) for a in x.args), x.w)
    if isinstance(x, tuple):
        return tuple(_rename(a, m) for a in x)
    return x


# False: every thread is compared with every representative before it (the property tests compare
# the two).
SIGNATURES = True

_SAME = ("kind", "index", "paths", "sem", "scope", "w", "tags", "instr", "agent", "at")


def _swappable(eg: EventGraph, by_thread: dict[int, list[Event]], users: dict[str, set[int]],
               observed: set[str], a: int, b: int) -> bool:
    """Whether swapping threads ``a`` and ``b`` (and the locations only one of them touches) maps
    ``eg`` onto itself, the observables fixed."""
    ea, eb = by_thread[a], by_thread[b]
    prog = eg.program
    if len(ea) != len(eb) or len(eg.paths[a]) != len(eg.paths[b]) \
            or prog.threads[a].placement != prog.threads[b].placement:
        return False
    m = {x.eid: y.eid for x, y in zip(ea, eb)} | {y.eid: x.eid for x, y in zip(ea, eb)}
    mu: dict[str, str] = {}
    for x, y in zip(ea, eb):
        if any(getattr(x, f) != getattr(y, f) for f in _SAME) or x.agent != -1 or x.ok is not None:
            return False
        if not _same_loc(eg, users, observed, mu, x, y, a, b):
            return False
        if _rename(x.value, m) != y.value or _rename(x.cond, m) != y.cond:
            return False
        if x.barrier is not None and (_rename(tuple(x.barrier[0]), m), *x.barrier[1:]) != \
                (tuple(y.barrier[0]), *y.barrier[1:]):
            return False
    for pa, pb in zip(eg.paths[a], eg.paths[b]):
        if tuple(m[e] for e in pa.events) != pb.events or _rename(tuple(pa.assumes), m) != tuple(pb.assumes) \
                or (pa.kind, pa.end, pa.marks, pa.stop) != (pb.kind, pb.end, pb.marks, pb.stop) or pa.end:
            return False
    for pairs in eg.edges.values():
        s = set(pairs)
        if any((m.get(x, x), m.get(y, y)) not in s for x, y in pairs):
            return False
    return True


def _same_loc(eg: EventGraph, users: dict[str, set[int]], observed: set[str], mu: dict[str, str],
              x: Event, y: Event, a: int, b: int) -> bool:
    """Locations (physical and virtual) of ``x`` (thread a) and ``y`` (thread b) equal, or swapped
    consistently: each touched only by its own thread, not observed, with equal initial values."""
    for la, lb in ((x.loc, y.loc), (x.vloc, y.vloc)):
        if la == lb:
            if la is not None and mu.get(la, la) != la:
                return False
            continue
        if la is None or lb is None or mu.get(la, lb) != lb or mu.get(lb, la) != la:
            return False
        if (la, lb) == (x.loc, y.loc):
            if users.get(la) != {a} or users.get(lb) != {b} or la in observed or lb in observed:
                return False
            ia, ib = eg.init.get(la), eg.init.get(lb)
            if ia is None or ib is None or not _same_init(eg.events[ia], eg.events[ib]):
                return False
        mu[la], mu[lb] = lb, la
    return True


def _same_init(x: Event, y: Event) -> bool:
    return isinstance(x.value, Const) and x.value == y.value and x.w == y.w and x.tags == y.tags


__all__ = ["SymClass", "classes"]
