"""A proof, from a liveness graph, that no thread can hang under fair progress when every thread
of a CTA meets one and the same sequence of CTA barriers and warp collectives unconditionally
(issue 40: a warp-collective kernel at <<<2, 64>>>; :data:`ptxmm.queries.hangs.COLLECTIVE_PROOF`).

:func:`.barrier_waits.never_blocks` proves this for count-less ``bar.sync`` sequences from the
safety graph of a program without loops. This proof reads the liveness graph instead (the paths
the hang query would choose from), so that it also covers

* **warp collectives** (``shfl.sync``, ``vote.sync``, ``match.sync``, ``redux.sync``,
  ``bar.warp.sync``, ``elect.sync``: events tagged ``BAR WARP``, :mod:`.warp_collectives`) with a
  constant membermask. PTX ISA, Data Movement and Conversion Instructions, shfl.sync: "shfl.sync
  will cause executing thread to wait until all non-exited threads corresponding to membermask
  have executed shfl.sync with the same qualifiers and same membermask value before resuming
  execution" (vote.sync, match.sync, redux.sync alike); Parallel Synchronization and
  Communication Instructions, bar.warp.sync: it "causes executing thread to wait until all
  threads corresponding to membermask have executed a bar.warp.sync with the same membermask
  value". ``bar.red`` (a CTA barrier: PTX ISA, bar/barrier) is one as ``bar.sync`` is. Every lane
  executing a collective must be in its membermask (else a located error, .warp_collectives), so
  lanes that share one sequence share a mask naming every lane of their warp: the full mask, up
  to the lanes a partial last warp lacks;
* **loops the unrolling decides**: a loop whose trip count is a constant (CUB's ``for (w = 1; w <
  blockDim.x / 32; ++w)``, with ``%ntid`` a constant of the launch) leaves no path stuck in it, or
  only stuck candidates the hang query encodes as false (an iteration that waits at a barrier, or
  whose register test is the constant false: :meth:`ptxmm.queries.hangs._Encoding.stuck`).

**The conditions** (each checked on the graph; anything else: no proof, the query decides):

1. every path of every thread ends ``done`` (its exit, or a trap/failed assertion) or ``blocked``
   (at a wait), or is a stuck candidate the query encodes as false; no ``prefix`` path;
2. every barrier event (``Kind.B``) is a thread's own (no agent), executes whenever its path runs
   (condition true), is a count-less ``BAR`` arrive or wait (not a cluster barrier, not the Dat3M
   dialect's ``INSTANCE`` barrier, not ``HANG``) and has constant operands;
3. per thread, every ``done`` path meets the same sequence S of barrier uses — (part, kind,
   operands, phase), a warp collective's warp operand left out — and every ``blocked`` path meets a
   prefix of S that ends at the wait it blocks at;
4. every thread of a CTA has the same S.

**Why no hang.** A wait blocks only while some other thread its instruction names (the CTA for
``bar.sync``; the lanes of its warp its membermask names for a warp collective:
:meth:`.barrier_waits.Barriers.members`) neither arrives at that barrier instance — same operands,
same phase — nor finishes (:meth:`.barrier_waits.Barriers.complete`). Under fair progress a thread in
a hang finishes or blocks (1). Suppose some thread blocks, and take a blocked thread x whose wait
has the smallest position i in S; a thread t it waits for is of x's CTA and, for a warp collective,
of x's warp, so by (3, 4) t's i-th use is the same instance (the warp operand is that warp; the
membermask, form and phase are in S). t does not finish, or its ``done`` path would hold that
arrive (2: unconditionally); so t is blocked at the wait of some position j, and its path holds
S up to j: j < i, or it would hold the arrive of i. That contradicts the choice of x. The model's
axioms only remove executions.

Threads of one warp that take different branches around a collective, a membermask that is no
constant (``activemask``'s forks), a collective a thread skips, two collectives in different
orders, an early ``exit`` before one: the sequences differ (or a condition fails), and the query
answers."""

from __future__ import annotations

from ..ir.values import TRUE, Const
from .events import Event, EventGraph, Kind, PathInfo

_OUTSIDE = frozenset({"CBAR", "INSTANCE", "HANG"})


def _use(e: Event) -> tuple | None:
    """The event's entry in a thread's sequence, or None when it is outside the proof (cond. 2)."""
    if "BAR" not in e.tags or _OUTSIDE & e.tags or e.barrier[1] is not None or e.cond != TRUE \
            or e.agent >= 0 or e.thread < 0:
        return None
    ops = e.barrier[0]
    if not all(isinstance(x, Const) for x in ops):
        return None
    vals = tuple(x.v for x in ops)
    warp = "WARP" in e.tags
    if warp:
        vals = vals[:2]  # form and membermask; the third operand is the thread's own warp
    return ("WAIT" if "WAIT" in e.tags else "ARRIVE", warp, vals, e.barrier[2])


def _never_stuck(p: PathInfo, ev: tuple[Event, ...]) -> bool:
    """A stuck candidate the hang query encodes as false: its iteration waits at a barrier, or one
    of its register equalities is the constant false."""
    events, eqs = p.end[0], p.end[1]
    return any(ev[e].kind == Kind.B for e in events) or any(q == Const(0, 1) for q in eqs)


def _sequence(eg: EventGraph, t: int, uses: dict[int, tuple]) -> list[tuple] | None:
    """Thread ``t``'s sequence S (conditions 1 and 3), or None."""
    ev = eg.events
    full: list[tuple] | None = None
    stops: list[tuple[list[tuple], int]] = []
    for p in eg.paths[t]:
        bars = [e for e in p.events if ev[e].kind == Kind.B]
        seq = [uses[e] for e in bars]
        if p.kind == "done":
            if full is None:
                full = seq
            elif seq != full:
                return None
        elif p.kind == "blocked":
            if not bars or bars[-1] != p.end[0]:
                return None
            stops.append((seq, p.end[0]))
        elif p.kind != "stuck" or not _never_stuck(p, ev):
            return None
    if full is None:
        return None
    for seq, _ in stops:
        if seq != full[:len(seq)]:
            return None
    return full


def never_hangs(eg: EventGraph) -> bool:
    """Whether the liveness graph ``eg`` (fair progress) satisfies the module's conditions: then no
    execution of it has a thread hang."""
    uses: dict[int, tuple] = {}
    for e in eg.events:
        if e.kind == Kind.B:
            u = _use(e)
            if u is None:
                return False
            uses[e.eid] = u
    seq: dict[tuple, list[tuple]] = {}
    for t in range(len(eg.paths)):
        mine = _sequence(eg, t, uses)
        if mine is None:
            return False
        if seq.setdefault(eg.program.threads[t].placement.cta_key, mine) != mine:
            return False
    return True
