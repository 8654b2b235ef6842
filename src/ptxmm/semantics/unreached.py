"""Which places of a thread its symbolic execution never came near, for the fix search's inserted
fences (explanation/fixjudge.py UNREACHED_FENCES): a fence inserted there leaves the event graph
as it was (the program aside).

:func:`build_keeping_fold_visited` is :func:`.builder.build_keeping_fold` with what each thread's
build stepped recorded (:class:`Stepped`: the positions the builder ran, on any path, in the build
whose graph it returns, and the branches that went on past, not taken). A fence inserted before
position ``i`` of thread ``t`` is run only when a path comes to ``i`` by falling through from
``i - 1`` or lands there past skipped polls (no label is at the fence: a branch to the label that
was at ``i`` goes past it): when neither ``i - 1`` nor ``i`` was stepped, no path of the changed
program runs it, and every other instruction runs as before, one position later past ``i`` (a
fence names no register: no register's liveness changes). The builder also reads instructions it
does not step: the bodies of loops (whether a spin loop may become an await: .control.await_sound),
the polls a forward branch not taken may skip and the segment of the same length before them
(.control.past_repeats, repeated_poll: read up to the next label; a segment holding a label
matches none, with the fence or without), a vector's elements (.vectors). :func:`unreached`
keeps clear of them: no back edge spans the place; in the label-free stretch around it no branch
went on past and no vector's elements reach it. The tests (tests/explanation/test_fix_unreached.py)
compare the graphs with the built ones for every fence place of random kernels and of the
bundled CUB tile-state kernels.

The same build records what each thread's unfolded build (build's first pass, which only finds the
locations no thread writes: builder._read_only) accessed (:class:`Accessed`). A program that
changes one thread alone (the fix search's vector splits) then needs no whole unfolded build to
find its read-only fold: that thread's build alone (:func:`fold_of_thread_edit`) and the others'
records give the same sets. A thread's build in the unfolded pass reads the program's static data
(locations, layout, placements) and its own instructions; what it leaves in the builder for the
threads after it (event and unspecified-value numbering, memos, warnings) changes no location an
event of theirs accesses, and no path of theirs (the finishing passes, the warp collectives' values,
replace values and drop no path). A thread that shares its warp with another is not taken alone
(its collectives wait for the other lanes). tests/explanation/test_fix_one_thread_fold.py compares
the graphs with the built ones."""

from __future__ import annotations

from dataclasses import replace

from .._infra.records import record
from ..ir.program import Branch, Label, Program, Thread, VectorOrder
from ..ir.values import Const
from .builder import READ_ONLY_FOLD, Builder, Fold, _build, _read_only
from .events import EventGraph, Kind
from .lanes import lane_table, warp_lanes

Visited = dict[int, frozenset[int]]  # thread index → positions


@record
class Accessed:
    """What each thread's unfolded build accessed (the events on its paths): the locations it
    read and wrote, whether it built a barrier wait; and the locations whose initial value is a
    constant (builder._read_only)."""

    reads: tuple[frozenset[str], ...]
    writes: tuple[frozenset[str], ...]
    waits: tuple[bool, ...]
    init: tuple[tuple[str, int], ...]


@record
class Stepped:
    """The positions each thread's build stepped, and those of its branches that went on past
    them not taken (or were reduced to awaits): the branches whose following polls the builder
    reads (.control.past_repeats); and what each thread's unfolded build accessed (None: no
    read-only fold applied)."""

    at: Visited
    on_past: Visited
    unfolded: Accessed | None = None


class _Visiting(Builder):
    """A builder that records the positions it steps, per thread."""

    def step(self, t, ins, st, stack):
        pc, n = st.pc, len(stack)
        self.visited.setdefault(t.index, set()).add(pc)
        res = super().step(t, ins, st, stack)
        if isinstance(ins, Branch) and not (res is not None and len(stack) == n and not self.pending
                                            and res.pc == self.labels[ins.target]):
            self.past.setdefault(t.index, set()).add(pc)
        return res

    def thread(self, t):
        before, self.waits = self.waits, False
        paths = super().thread(t)
        self.thread_waits[t.index] = self.waits
        self.waits = self.waits or before
        return paths


def _visiting(prog: Program, unroll: int) -> _Visiting:
    b = _Visiting(prog, unroll, True, False, True, None)
    b.visited, b.past, b.thread_waits = {}, {}, {}
    return b


def _stepped(b: _Visiting, unfolded: Accessed | None = None) -> Stepped:
    return Stepped({k: frozenset(v) for k, v in b.visited.items()},
                   {k: frozenset(v) for k, v in b.past.items()}, unfolded)


def _accessed(eg: EventGraph, b: _Visiting) -> Accessed:
    n = len(eg.program.threads)
    reads: list[set[str]] = [set() for _ in range(n)]
    writes: list[set[str]] = [set() for _ in range(n)]
    for e in eg.events:
        if e.thread >= 0 and e.kind in (Kind.R, Kind.W):
            (reads if e.kind == Kind.R else writes)[e.thread].add(e.loc)
    init = tuple((loc, eg.events[i].value.v) for loc, i in sorted(eg.init.items())
                 if isinstance(eg.events[i].value, Const))
    return Accessed(tuple(map(frozenset, reads)), tuple(map(frozenset, writes)),
                    tuple(b.thread_waits.get(k, False) for k in range(n)), init)


def build_keeping_fold_visited(prog: Program, unroll: int = 2) -> tuple[EventGraph, Fold | None, Stepped]:
    """:func:`.builder.build_keeping_fold`, and what each thread's build of the graph it returns
    stepped."""
    b = _visiting(prog, unroll)
    eg = _build(b, False)
    ro = _read_only(eg) if prog.layout is not None and READ_ONLY_FOLD else {}
    if not ro:
        return eg, None, _stepped(b)
    fold = Fold(tuple(sorted(ro.items())), frozenset(e.loc for e in eg.events if e.kind == Kind.W and
                                                      e.thread >= 0), eg.waits)
    accessed = _accessed(eg, b)
    b = _visiting(prog, unroll)
    b.readonly = dict(fold.readonly)
    folded = _build(b, False)
    eg2 = replace(folded, written=fold.written, waits=folded.waits or fold.waits)
    return eg2, fold, _stepped(b, accessed)


def fold_of_thread_edit(prog2: Program, k: int, stepped: Stepped, unroll: int = 2) -> Fold | None:
    """The read-only fold :func:`.builder.build` applies to ``prog2``, the program ``stepped`` is
    of with thread ``k``'s instructions changed alone (its locations, layout and threads' places
    as they were): from thread ``k``'s unfolded build alone and the other threads' accesses as
    recorded (module doc). None: no fold applies, or thread ``k`` shares its warp, or none was
    recorded (build the program whole)."""
    acc = stepped.unfolded
    if acc is None or len(prog2.threads) != len(acc.reads) or not READ_ONLY_FOLD or \
            len(warp_lanes(lane_table(prog2), k)) != 1:
        return None
    b = Builder(prog2, unroll, True, False, True, None)
    paths = b.thread(prog2.threads[k])
    own = [e for e in (b.events[x] for p in paths for x in p.events) if e.thread >= 0]
    reads = {e.loc for e in own if e.kind == Kind.R}.union(*(r for j, r in enumerate(acc.reads) if j != k))
    writes = {e.loc for e in own if e.kind == Kind.W}.union(*(w for j, w in enumerate(acc.writes) if j != k))
    init = dict(acc.init)
    ro = {loc: init[loc] for loc in reads - writes if loc in init}
    if not ro:
        return None
    waits = b.waits or any(w for j, w in enumerate(acc.waits) if j != k)
    return Fold(tuple(sorted(ro.items())), frozenset(writes), waits)


def unreached(t: Thread, i: int, stepped: Stepped) -> bool:
    """Whether a fence inserted before position ``i`` of ``t`` (``stepped``: what the build
    stepped) is run on no path, and nothing the builder reads around it is read (module doc)."""
    at = stepped.at.get(t.index, frozenset())
    past = stepped.on_past.get(t.index, frozenset())
    if i <= 0 or i - 1 in at or i in at:
        return False
    ins = t.instrs
    labels = {x.name: k for k, x in enumerate(ins) if isinstance(x, Label)}
    for j in range(i, len(ins)):  # a back edge over the place: a loop body holds it
        x = ins[j]
        if isinstance(x, Branch) and labels.get(x.target, len(ins)) < i:
            return False
    lo = max((k for k in labels.values() if k < i), default=-1)
    hi = min((k for k in labels.values() if k >= i), default=len(ins))
    # the label-free stretch around the place: a branch there that went on past (its polls and
    # the segment before them are read), a vector order whose elements reach the place
    return not any(lo < k < hi and (k in past or k < i and k + getattr(ins[k], "n", 0) >= i
                                    and isinstance(ins[k], VectorOrder)) for k in at)
