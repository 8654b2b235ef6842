"""Program → EventGraph: the records.

An :class:`EventGraph` holds a program's events (:class:`Event`, of a :class:`Kind`), each
thread's *paths* (:class:`PathInfo`: the events along one way through the thread's branches) and
the static dependency edges; :func:`build` makes it (the symbolic executor is :mod:`.builder`, with
one module per instruction family). Events created before a fork are shared by the paths that
continue from it, so every event carries the set of paths it belongs to. In an execution exactly
one path per thread runs: the engines choose it (the Z3 engine with one selector per path inside a
single formula, the brute-force engine by enumeration). An event's execution guard is "its thread
runs one of its paths" and, for predicated instructions and the write of a ``cas``, a value
condition."""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum

from .._infra.records import record
from ..errors import Diagnostic, SemanticError
from ..ir.program import Instruction, Placement, Program, type_width
from ..ir.stops import Stop
from ..ir.values import TRUE, Const, Expr, Unspec


class Kind(StrEnum):
    """What an event is, named as the cat files' base sets name it: a read (``R``), a write
    (``W``), a memory or proxy fence (``F``), a barrier arrival or wait (``B``). An rmw is a read
    and a write joined by ``rmw``."""

    R = "R"
    W = "W"
    F = "F"
    B = "B"


@record
class Event:
    eid: int
    kind: Kind
    thread: int  # -1 for initial writes
    index: int = 0  # position in its thread's program order (along any of its paths)
    paths: frozenset[int] = frozenset({0})  # the thread's paths this event lies on
    sem: str | None = None  # weak relaxed acquire release acq_rel sc
    scope: str | None = None
    loc: str | None = None  # physical location (``loc`` of the cat models)
    vloc: str | None = None  # virtual address (``vloc``)
    w: int = 0  # width of the value read or written
    value: Expr | None = None  # value written (W)
    cond: Expr = TRUE  # value condition of execution (predication, a cas that succeeds)
    tags: frozenset[str] = frozenset()
    instr: Instruction | None = None
    barrier: tuple | None = None  # (ids: tuple[Expr], count: int | None, occurrence) for B events
    # events an asynchronous agent performs for the thread (cp.async.bulk): the id of the async
    # operation (they are not in the thread's program order); -1 for the thread's own events
    agent: int = -1
    # mbarrier waits: the value condition "the wait observed the phase completion" (docs/hopper.md)
    ok: Expr | None = None
    # an asynchronous agent's event performed in another CTA of the issuer's cluster (the CTA that
    # owns a bulk copy's shared::cluster destination or its mbarrier; models/ptx-async.cat, D4):
    # that CTA's placement, for scope inclusion and same-CTA; None: the thread's own placement
    at: Placement | None = None

    @property
    def label(self) -> str:
        if self.thread < 0:
            v = self.value.v if isinstance(self.value, Const) else "?"
            return f"init {self.loc}={v}"
        text = self.instr.text if self.instr is not None else self.kind
        for tag, word in (("ARRIVE", " (arrive)"), ("WAIT", " (wait)"), ("RMW_W", " (write)"),
                          ("RMW_R", " (read)")):
            if tag in self.tags:
                return text + word
        return text


@record
class PathInfo:
    events: tuple[int, ...]  # in program order
    assumes: tuple[Expr, ...]  # 1-bit conditions that must hold for the path to run
    regs: dict[str, Expr]  # final register values
    reg_types: dict[str, str]  # register → PTX type of its last write
    # liveness graphs only (``build(..., liveness=True)``, :mod:`ptxmm.queries.hangs`): how the path
    # ends — "done" (the thread's exit), "stuck" (it takes a loop's back edge: ``end`` is (the
    # events of that last iteration, register equalities "the iteration ends in the state it
    # began in", the back edge's instruction, the iteration's reads that matter nothing to the
    # loop: .semantics.loops)), "blocked" (it stops at a barrier wait: ``end`` is (the wait,)) or
    # "prefix" (the thread is not scheduled past its last event)
    kind: str = "done"
    end: tuple = ()
    marks: tuple[int, ...] = ()  # per event: how many assumes the path had made when it was created
    stop: Stop | None = None  # a kernel path that stops early: why and where (ir.stops)


@record
class EventGraph:
    program: Program
    events: tuple[Event, ...]
    paths: tuple[tuple[PathInfo, ...], ...]  # per thread
    edges: dict[str, tuple[tuple[int, int], ...]]  # static dependency relations by label
    init: dict[str, int]  # physical location → its initial write
    cut_paths: int = 0
    awaits: int = 0
    unroll: int = 2
    loc_of_name: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name → physical copies
    # values the PTX ISA leaves unspecified (division by zero), one per dynamic instance, and a
    # warning per instruction that may produce one
    unspecified: tuple[Unspec, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    # liveness graphs: why "no hang found" would not decide that every execution terminates (a
    # loop the unrolling cut whose repetition the stuck test need not catch), in words
    undecided: tuple[str, ...] = ()
    # a kernel graph built knowing the values of the locations no thread writes (builder.
    # _read_only): the physical locations a thread may write before that fold (it removes the
    # writes no execution reaches; a kernel's outcome keeps observing them); None: no fold
    written: frozenset[str] | None = None
    # whether the build met a barrier wait (.control.blocked_at: where a liveness graph forks the
    # path that blocks); True when not known (a graph not made by the builder)
    waits: bool = True
    # questions about a computed address's elements the build answered from its memo (.memory.
    # ADDRESS_MEMO) instead of asking the layout's oracle again; reported as a reduction
    memo_hits: int = 0

    @property
    def n(self) -> int:
        return len(self.events)

    def thread_of(self, name: str) -> int:
        for t in self.program.threads:
            if t.name == name:
                return t.index
        if name.isdigit() and int(name) < len(self.program.threads):
            return int(name)
        if name.startswith("P") and name[1:].isdigit() and int(name[1:]) < len(self.program.threads):
            return int(name[1:])
        raise SemanticError(f"unknown thread {name}")


def final_reg(eg: EventGraph, thread: int, reg: str, path: int) -> Expr:
    """The final value of a register on one path of its thread (0 if never written)."""
    p = eg.paths[thread][path]
    v = p.regs.get(reg)
    if v is not None:
        return v
    ty = reg_type(eg, thread, reg)
    return Const(0, type_width(ty))


def reg_type(eg: EventGraph, thread: int, reg: str) -> str:
    """The PTX type a register holds at the end of its thread (declared or last written)."""
    for p in eg.paths[thread]:
        if reg in p.reg_types:
            return p.reg_types[reg]
    return dict(eg.program.threads[thread].reg_types).get(reg, "u32")
