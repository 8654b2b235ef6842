"""The map of an original program's events (and unspecified values) into the event graph of a
changed one, for the fix search's witnesses (explanation/fixjudge.py) and explain's missing
ordering (explanation/explain.py).

Events: a thread's events in order, those of inserted fences skipped (:func:`event_map`).
Unspecified values (ir/values.py ``Unspec``: a vector's element order, PTX ISA 8.2.4; a NaN's
bits, a timer, ...) are numbered by the builder as it steps, so a changed program's may be
numbered otherwise: a fence that changes a thread's paths renumbers every later thread's. An
execution's values name them by number (``unspec_key``), so the map pairs them too
(:func:`unspec_map`), where the mapped events name them; one it cannot pair is dropped, never
carried under its old number (that number may be another value's there): an execution that then
lacks a value it needs decides nothing (executions.executed_if_decided) and is no witness."""

from __future__ import annotations

from ..ir.values import Unspec, unspec_key
from ..semantics.events import EventGraph
from ..semantics.result import Execution


def unspecs_of(x) -> set[int]:
    """The unspecified values an expression names (their uids)."""
    if isinstance(x, Unspec):
        return {x.uid}
    return set().union(*(unspecs_of(y) for y in getattr(x, "args", ())))


def _named(e, memo: dict[int, frozenset[int]]) -> list[frozenset[int]]:
    """The unspecified values each expression of an event names (condition, value, wait); ``memo``:
    those of the subexpressions seen (by identity: the builder shares them, a walk of the tree
    would repeat them)."""
    def walk(x) -> frozenset[int]:
        got = memo.get(id(x))
        if got is None:
            got = frozenset({x.uid}) if isinstance(x, Unspec) else frozenset().union(
                *(walk(y) for y in getattr(x, "args", ())))
            memo[id(x)] = got
        return got
    return [walk(x) for x in (e.cond, e.value, e.ok)]


def unspec_map(eg: EventGraph, eg2: EventGraph, emap: dict) -> dict[int, int | None]:
    """The keys of ``eg``'s unspecified values → those of ``eg2``'s (None: dropped), paired
    through the events ``emap`` maps: a pair of events naming as many in an expression pairs them
    in the order of their numbers (the builder's order of stepping, the same in both where the
    events correspond). A value paired with two, or two with one, or named by no mapped event,
    or by an expression naming another count there, has no image; one no mapped event names
    keeps its number where both graphs describe that number alike."""
    pairs: dict[int, set[int]] = {}
    bad: set[int] = set()
    memo: dict[int, frozenset[int]] = {}  # the expressions live as long as the graphs: ids are unique
    for x, y in emap.items():
        if x < 0 or y is None:
            continue
        for ua, ub in zip(_named(eg.events[x], memo), _named(eg2.events[y], memo)):
            if len(ua) != len(ub):
                bad |= ua
                continue
            for p, q in zip(sorted(ua), sorted(ub)):
                pairs.setdefault(p, set()).add(q)
    images: dict[int, int] = {}
    for qs in pairs.values():
        for q in qs:
            images[q] = images.get(q, 0) + 1
    out: dict[int, int | None] = {}
    for p, qs in pairs.items():
        q = next(iter(qs))
        if p not in bad and len(qs) == 1 and images[q] == 1:
            out[unspec_key(p)] = unspec_key(q)
    # one no mapped event names (a register's value a path's outcome reads): kept under its number
    # where the value of that number is described alike in both (the same instruction)
    new = {u.uid: u for u in eg2.unspecified}
    for u in eg.unspecified:
        if u.uid not in pairs and u.uid not in bad and new.get(u.uid) == u and u.uid not in images:
            out[unspec_key(u.uid)] = unspec_key(u.uid)
    return {unspec_key(u.uid): None for u in eg.unspecified} | out


def event_map(eg: EventGraph, eg2: EventGraph, inserted: frozenset[int]) -> dict[int, int | None]:
    """Old event id → new event id (events of inserted fences have no old one); and the old keys
    of unspecified values (< 0) → the new (None: none, :func:`unspec_map`)."""
    def seq(g: EventGraph, skip: frozenset[int]) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for e in g.events:
            if e.instr is None or id(e.instr) not in skip:
                out.setdefault(e.thread, []).append(e.eid)
        return out

    a, b = seq(eg, frozenset()), seq(eg2, inserted)
    emap: dict[int, int | None] = {x: y for t in a for x, y in zip(a[t], b.get(t, []))}
    return emap | unspec_map(eg, eg2, emap)


def reverse_map(emap: dict, eg2: EventGraph) -> dict:
    """:func:`event_map`'s map turned round: ``eg2``'s events and unspecified values → the
    original's (``eg2``'s values without an original: None, dropped)."""
    back = {v: k for k, v in emap.items() if v is not None}
    return {unspec_key(u.uid): None for u in eg2.unspecified} | back


def map_execution(exe: Execution, emap: dict[int, int]) -> Execution:
    """An execution carried over by an event map (events without an image are dropped from the
    fence.sc order and the barrier phases; rf, co and the values touch mapped events only)."""
    f = emap.__getitem__
    # r < 0: an unspecified value (event_map and split_map renumber them; None: none there)
    vals = tuple((f(r) if r >= 0 else emap.get(r, r), v) for r, v in exe.values if r >= 0 or
                 emap.get(r, r) is not None)
    return Execution(exe.paths, tuple((f(w), f(r)) for w, r in exe.rf),
                     tuple((f(a), f(b)) for a, b in exe.co), vals,
                     tuple(f(x) for x in exe.scorder if x in emap),
                     tuple((loc, f(w)) for loc, w in exe.final),
                     tuple((f(a), p) for a, p in exe.phases if a in emap))


__all__ = ["event_map", "map_execution", "reverse_map", "unspec_map", "unspecs_of"]
