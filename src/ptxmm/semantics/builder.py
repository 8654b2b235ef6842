"""The symbolic executor: Program → EventGraph.

Each thread is executed symbolically, one typed instruction at a time: the :class:`Builder` holds
the state (registers, paths, forks, guards, unrolling, dependencies, event creation, location
placement and address resolution), and the handler registered for the instruction's IR class
(``@handles``, :data:`HANDLERS`) adds its events — one module per instruction family: memory,
registers, fences, barriers, mbarrier, bulk, tensor, cp_async, wgmma, warp, misc, control.
Branches fork the execution into *paths* (bounded unrolling of backward branches, ``unroll``
iterations at most); events created before a fork are shared by the paths that continue from it,
so every event carries the set of paths it belongs to.

A side-effect-free spin loop (only loads and register arithmetic in its body), or a CAS retry loop
that goes back only when its CAS failed (so a repeated iteration wrote nothing), is reduced to an
*await*: one iteration whose exit condition is assumed, as Dat3M and GenMC do — but only where that
provably changes no outcome (:func:`.control.await_sound`): the body is entered only at its head
and carries no register from one iteration to the next, so the state after the loop is the same
function of the last iteration's reads however often it ran, and the earlier iterations, which
wrote nothing, leave no trace. A loop that counts its iterations in a register is unrolled.
``build(..., awaits=False)`` turns the reduction off (the tests compare the two). Paths cut by
the unrolling bound are dropped and counted, so reports can say the bound cut executions.

Values are machine integers (:mod:`ptxmm.ir.values`): a register has the width of the instruction
that wrote it, a memory event the width of its location; conversions follow the instruction
type. Syntactic dependencies (addr, data, ctrl) are tracked alongside."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import field, replace

from .._infra.records import record
from ..errors import Diagnostic, SemanticError, UnsupportedError
from ..ir.program import (
    Addr,
    Branch,
    Imm,
    Instruction,
    Label,
    Placement,
    Program,
    Reg,
    RegRef,
    Sym,
    Thread,
    cond_refs,
    operands,
    type_signed,
    type_width,
)
from ..ir.sregs import TIMERS, is_dynamic
from ..ir.stops import Stop
from ..ir.values import TRUE, Const, Expr, Unspec, const, convert, mk, reads_of, substitute, truth
from .events import Event, EventGraph, Kind, PathInfo

MAX_PATHS = 512
LOOK_EVERY = 512  # instructions stepped between two looks at the check's deadline (build's ``look``)
# the cat models' proxy sets (Dat3M's tags); a proxy fence carries the tag of the proxy it bridges
# with the generic one, an alias proxy fence the tag ALIAS
PROXY_TAG = {"generic": "GEN", "texture": "TEX", "surface": "SUR", "constant": "CON", "alias": "ALIAS",
             "async": "ASYNC"}
ADDR_BASE = 0x1000
# `mapa` addresses: location i's copy in the CTA of rank k of the cluster is ADDR_BASE * (i + 1) +
# RANK_STEP * (k + 1)
RANK_STEP = 0x10
ADDR_W = 64

# the instruction families, one module each; importing one registers its handlers (@handles)
FAMILIES = ("registers", "memory", "fences", "barriers", "mbarrier", "bulk", "tensor", "cp_async", "wgmma",
            "warp", "warp_collectives", "misc", "control")
# passes a family runs once every thread is built, before the graph is frozen: ``f(b, paths)``
# returns the threads' paths (the warp collectives resolve the values lanes exchange there)
FINISHERS: list[Callable] = []
# IR class → (its handler, whether the handler decides where the path goes: see handles)
HANDLERS: dict[type, tuple[Callable[..., State | None], bool]] = {}


def handles(*classes: type, control: bool = False):
    """Register the decorated function as the handler of instructions of these IR classes.

    A handler ``f(b, t, ins, st, guard, gdeps)`` adds the events and register writes of ``ins``
    (an instruction of thread ``t``) to the path ``st`` through the builder ``b``: ``guard`` is the
    value condition of a predicated instruction (None: it runs whenever the path does), ``gdeps``
    the reads the guard depends on; the builder then steps to the next instruction. With
    ``control=True`` the handler decides where the path goes: ``f(b, t, ins, st, guard, gdeps,
    stack)`` sets ``st.pc`` and returns the state that continues (None: the path ends), pushing any
    other paths it forks on ``stack``."""

    def register(fn):
        for cls in classes:
            assert cls not in HANDLERS, f"two handlers for {cls.__name__}"
            HANDLERS[cls] = (fn, control)
        return fn

    return register


def load_families() -> None:
    """Import the family modules (once): their ``@handles`` fill HANDLERS; and vectors.py (the
    element orders of an acquire/release vector access)."""
    for name in (*FAMILIES, "vectors"):
        importlib.import_module(f".{name}", __package__)


@record(frozen=False)
class Proto:
    """An event under construction (mutable until the graph is frozen)."""

    kind: Kind
    thread: int
    index: int
    instr: Instruction | None = None
    sem: str | None = None
    scope: str | None = None
    loc: str | None = None
    vloc: str | None = None
    w: int = 0
    value: Expr | None = None
    cond: Expr = TRUE
    tags: frozenset[str] = frozenset()
    barrier: tuple | None = None
    paths: set[int] = field(default_factory=set)
    agent: int = -1
    ok: Expr | None = None
    at: Placement | None = None


@record(frozen=False)
class State:
    pc: int
    regs: dict[str, Expr]
    types: dict[str, str]
    deps: dict[str, frozenset[int]]
    assumes: list[Expr]
    ctrl: frozenset[int]
    events: list[int]
    back: dict[int, int]
    bars: dict  # barrier operands → occurrences so far
    # liveness graphs: loop header pc → (events so far, registers, registers read before written,
    # registers written) when the path last arrived there (.loops); assumes made before each
    # event; how the path ends (PathInfo.kind, PathInfo.end); the pc of the last instruction run
    heads: dict = field(default_factory=dict)
    marks: list = field(default_factory=list)
    end: tuple = ("done", ())
    # registers whose value was computed from a location's address (a symbol, a mapa): the exact
    # address they hold, or None where arithmetic moved it (Builder.resolve refuses that one)
    ptr: dict = field(default_factory=dict)
    stop: Stop | None = None  # where the path stops early (a failing assert, an out-of-bounds access)
    last: int = -1
    # the last read of each of the thread's counters (ir/sregs.py: "clock", "globaltimer"), and,
    # per loop header, how many unspecified values existed when the path last arrived there
    clocks: dict = field(default_factory=dict)
    head_uid: dict = field(default_factory=dict)

    def fork(self) -> State:
        return State(self.pc, dict(self.regs), dict(self.types), dict(self.deps), list(self.assumes),
                     self.ctrl, list(self.events), dict(self.back), dict(self.bars),
                     {k: (n, r, set(rbw), set(wr)) for k, (n, r, rbw, wr) in self.heads.items()},
                     list(self.marks), self.end, dict(self.ptr), self.stop, self.last,
                     dict(self.clocks), dict(self.head_uid))

    def used(self, reg: str, write: bool) -> None:
        """Liveness graphs: note a register read (before the iteration wrote it: it carries state
        into the iteration) or written, for every loop head the path passed."""
        for _, _, rbw, wr in self.heads.values():
            if write:
                wr.add(reg)
            elif reg not in wr:
                rbw.add(reg)


class Builder:
    """One build: the events created so far (in order: an event's id is its index), the dependency
    edges, the locations' addresses and placements, and the thread being built; each path of it is
    a :class:`State`. ``step`` evaluates an instruction's guard and calls its family's handler."""

    def __init__(self, prog: Program, unroll: int, awaits: bool = True, liveness: bool = False,
                 relevance: bool = True, look: Callable[[], None] | None = None):
        load_families()
        self.p = prog
        self.unroll = unroll
        self.look = look  # called every LOOK_EVERY steps: raises when the check must stop
        self.reduce = awaits  # reduce spin loops to awaits where that is sound
        self.liveness = liveness  # also the paths that hang (stuck in a loop, blocked at a barrier)
        self.pending: list[State] = []  # such paths forked by the last step
        # liveness graphs: the thread's loops (.loops.analyse); whether the stuck test compares
        # only the registers that matter to the loop; (thread, header) → why a loop is not exact
        # (.control.exact), and the loops the unrolling cut
        self.loops = None
        self.relevance = relevance
        self.inexact: dict[tuple[int, int], str] = {}
        self.cut_loops: dict[tuple[int, int], int] = {}
        self.events: list[Proto] = []
        self.edges: set[tuple[int, int, str]] = set()
        # an event → the ctrl set of its path when it was created (shared, not copied: a path
        # deep in data-dependent branches would add millions of edges for events that the bound
        # then cuts); the ctrl edges of the events kept are made when the graph is frozen
        self.ctrl_of: dict[int, frozenset[int]] = {}
        self.cut = 0
        self.awaits = 0
        self.waits = False  # a barrier wait was built (.control.blocked_at): a thread may block there
        self.target_memo: dict = {}  # .memory.targets: a computed address's elements, per question
        self.memo_hits = 0  # questions target_memo answered (EventGraph.memo_hits)
        # a kernel's locations no thread writes (physical → initial value), from a first build:
        # a load of one reads its initial write in every execution (.memory.memory)
        self.readonly: dict[str, int] = {}
        self.addr_of = {loc.name: ADDR_BASE * (i + 1) for i, loc in enumerate(prog.locations)}
        # a kernel launch (ptxmm.kernel): buffers at the addresses of its layout, whose elements
        # the accesses' computed addresses name
        self.layout = prog.layout
        if self.layout is not None:
            self.addr_of = dict(self.layout.symbols)
        self.name_of_addr = {v: k for k, v in self.addr_of.items()}
        self.locs = {loc.name: loc for loc in prog.locations}
        self.agents = 0  # asynchronous operations so far (Event.agent)
        self.box_n = 0  # the words of the tensor copy being built
        self.cur = 0  # the thread being built
        self.labels: dict[str, int] = {}  # its labels → their positions (bra's targets)
        self.unspecs: list[Unspec] = []
        self.env: dict[tuple, Unspec] = {}  # (%envregN, CTA) → its value (ir/sregs.py)
        self.timer_uids: set[int] = set()  # the unspecified values that are timer reads
        self.clock_facts: set[Expr] = set()  # the assumptions "a counter does not go back"
        self.warned: dict[int, Diagnostic] = {}  # id(instruction) → its warning
        self.mapa_addrs: set[int] = set()  # the addresses `mapa` produced
        self.at: str | None = None  # the element one case of a loaded address names (loaded_access)
        # the CTAs of each cluster by rank (%cluster_ctarank): in the order of their .cta numbers
        self.ranks: dict[tuple, list[tuple]] = {}
        self.cta_place: dict[tuple, Placement] = {}  # a CTA's key → its placement
        for th in sorted(prog.threads, key=lambda th: th.placement.cta):
            ctas = self.ranks.setdefault(th.placement.cluster_key, [])
            self.cta_place.setdefault(th.placement.cta_key, th.placement)
            if th.placement.cta_key not in ctas:
                ctas.append(th.placement.cta_key)

    # -- locations ---------------------------------------------------------------------------
    def place(self, name: str, t: Thread, rank: int | None = None) -> tuple[str, str]:
        """(virtual, physical) location of ``name`` as thread ``t`` sees it; ``rank``: the copy
        in CTA ``rank`` of t's cluster (a ``mapa`` address; the same virtual address as the
        owner's own, docs/hopper.md)."""
        loc = self.locs[name]
        root, virt = self.p.physical(name), self.p.virtual(name)
        if loc.space == "shared":
            cta = t.placement.cta_key if rank is None else self.ranks[t.placement.cluster_key][rank]
            suffix = "@" + _cta_label(cta)
            return virt + suffix, root + suffix
        if loc.space == "local":  # a kernel's .local array: each thread's own (PTX ISA 5.1.5)
            return virt + "@" + t.name, root + "@" + t.name
        return virt, root

    def width_of(self, name: str) -> int:
        return type_width(self.locs[self.p.physical(name)].type)

    def resolve(self, a: Addr, st: State, ins: Instruction) -> tuple[str, int | None, frozenset[int]]:
        """The location an address operand names, the CTA rank of a ``mapa`` address (None: the
        thread's own copy), and the reads the address depends on."""
        if self.layout is not None:
            name, deps = self.element(a, st, ins)
            assert name is not None  # step() stops the thread at an out-of-bounds access
            addr = self.address(a, st)[0] if self.at is None else None
            rank = self.layout.unmapped(addr.v)[1] if isinstance(addr, Const) else None
            return name, rank, deps
        if isinstance(a.base, Sym):
            return a.base.name, None, frozenset()
        e = st.regs.get(a.base.name)
        deps = st.deps.get(a.base.name, frozenset())
        if isinstance(e, Const) and a.base.name in st.ptr and st.ptr[a.base.name] != e.v:
            raise UnsupportedError(
                f"register {a.base.name} holds an address computed from the address of a location "
                "by arithmetic", ins.pos,
                "a litmus location is one word with no neighbours ptxmm knows: access it by its "
                "name, and an array element as [a+4]")
        if isinstance(e, Const) and st.ptr.get(a.base.name) == e.v:
            if e.v in self.name_of_addr:
                return self.name_of_addr[e.v], None, deps
            return self.name_of_addr[e.v - e.v % ADDR_BASE], e.v % ADDR_BASE // RANK_STEP - 1, deps
        if e is not None and reads_of(e):
            raise UnsupportedError("address depends on a loaded value", ins.pos,
                                   "ptxmm needs addresses it can compute statically; a fake "
                                   "dependency such as `xor r, r, r` then `add` is fine")
        raise SemanticError(f"register {a.base.name} does not hold a location address", ins.pos,
                            f"load it first, e.g. `mov.u64 {a.base.name}, x;`")

    def element(self, a: Addr, st: State, ins: Instruction) -> tuple[str | None, frozenset[int]]:
        """A kernel's access: the buffer element its 64-bit address names (None: out of bounds)."""
        addr, deps = self.address(a, st)
        if self.at is not None:  # one case of an address computed from loaded data (loaded_access)
            return self.at, deps
        if not isinstance(addr, Const):
            raise UnsupportedError("address depends on a loaded value", ins.pos,
                                   "ptxmm computes such addresses for ld, st, atom and red only")
        # a tensor copy's operands: 32-bit words and a 64-bit mbarrier (kernels._operand_widths)
        own, rank = self.layout.unmapped(addr.v)  # a mapa address: the element of the CTA's own copy
        name = self.layout.element(own, type_width(getattr(ins, "type", "b32")), ins)
        if rank is not None and name is not None and self.locs[self.p.physical(name)].space != "shared":
            return None, deps
        return name, deps

    def address(self, a: Addr, st: State) -> tuple[Expr, frozenset[int]]:
        base, deps = self.val(a.base, st, "u64")
        return mk("add", base, Const(a.offset % (1 << ADDR_W), ADDR_W)), deps

    def stop(self, st: State, stop: Stop, guard: Expr | None, gdeps, stack) -> State:
        """The thread stops here (a failing assert, an out-of-bounds access): ``stop`` is recorded
        on the paths that stop (``PathInfo.stop``; the kernel findings' queries read it)."""
        if guard is None:
            st.pc = 10**9
        else:
            st = self.finish_guarded(st, guard, gdeps, stack)
        st.stop = stop
        return st

    # -- values ------------------------------------------------------------------------------
    def val(self, o, st: State, ty: str | None) -> tuple[Expr, frozenset[int]]:
        """Operand value at the width of type ``ty`` (None: as it is)."""
        if isinstance(o, Imm):
            return const(o.value, type_width(ty) if ty else 64), frozenset()
        if isinstance(o, Sym):
            e: Expr = Const(self.addr_of[o.name], ADDR_W)
            return (convert(e, type_width(ty)) if ty else e), frozenset()
        if isinstance(o, Reg) and is_dynamic(o.name) and o.name not in st.regs:
            e = self.special(o.name, st)
            return (convert(e, type_width(ty)) if ty else e), frozenset()
        if isinstance(o, Reg) and o.name == "%cluster_ctarank" and o.name not in st.regs:
            e = self.ctarank(st)  # PTX ISA, special registers: the CTA's rank in its cluster
            return (convert(e, type_width(ty)) if ty else e), frozenset()
        if isinstance(o, Reg):
            self.not_pending(o.name, st)
            if st.heads:
                st.used(o.name, False)
            e = st.regs.get(o.name)
            if e is None:
                e = Const(0, type_width(ty) if ty else 32)
            if ty is not None:
                e = convert(e, type_width(ty), type_signed(st.types.get(o.name, ty)))
            return e, st.deps.get(o.name, frozenset())
        raise AssertionError(o)

    def special(self, name: str, st: State) -> Expr:
        """A read of a timer or an environment register (ir/sregs.py). A timer read is a fresh
        value of its 64-bit counter, assumed not below the thread's last read of that counter on
        this path (PTX ISA, Special Registers: %clock64 is "a predefined, read-only 64-bit
        unsigned cycle counter", %globaltimer "a predefined, 64-bit global nanosecond timer":
        they count up), of which the read returns its bits (%clock, %clock_hi: the low and high
        halves of %clock64; %globaltimer_lo/_hi). An %envregN is one value per CTA ("can
        contain cta-wide or grid-wide values"). Assumed beyond the ISA: a counter stays below
        2^63 (292 years of nanoseconds, or of cycles at 1 GHz, from its zero), so it never wraps
        and a signed difference of two reads is never negative (nvcc compiles
        ``clock64() - a >= 0`` to a signed ``b >= a``)."""
        t = self.p.threads[self.cur]
        ins = t.instrs[st.pc] if st.pc < len(t.instrs) else None
        at = f"`{ins.text}` (line {ins.pos.line if ins.pos is not None else '?'})" if ins else name
        if name not in TIMERS:
            key = (name, t.placement.cta_key)
            if key not in self.env:
                self.env[key] = Unspec(len(self.unspecs), 32,
                                       f"{name} (set by the driver), read by {at}")
                self.unspecs.append(self.env[key])
            return self.env[key]
        counter, w, lo = TIMERS[name]
        u = Unspec(len(self.unspecs), 64, f"the timer {name} read by {at}")
        self.unspecs.append(u)
        self.timer_uids.add(u.uid)
        prev = st.clocks.get(counter)
        fact = mk("ult", u, Const(1 << 63, 64))
        if prev is not None:
            fact = mk("land", fact, mk("uge", u, prev))
        st.assumes.append(fact)
        self.clock_facts.add(fact)
        st.clocks[counter] = u
        return convert(mk("shr", u, Const(lo, 64)) if lo else u, w)

    def ctarank(self, st: State) -> Expr:
        """%cluster_ctarank of the thread being built (ranks in the order of .cta numbers)."""
        p = self.p.threads[self.cur].placement
        return Const(self.ranks[p.cluster_key].index(p.cta_key), 32)

    def new_event(self, st: State, t: Thread, kind: Kind, ins: Instruction, guard: Expr | None,
                  **kw) -> int:
        eid = len(self.events)
        self.events.append(Proto(kind, t.index, len(st.events), ins, cond=guard or TRUE, **kw))
        st.events.append(eid)
        st.marks.append(len(st.assumes))
        if st.ctrl:
            self.ctrl_of[eid] = st.ctrl
        return eid

    def set_reg(self, st: State, r: Reg, e: Expr, ty: str, deps: frozenset, guard: Expr | None):
        if st.heads:
            if guard is not None:  # a predicated write keeps the old value otherwise
                st.used(r.name, False)
            st.used(r.name, True)
        if guard is not None:
            old = st.regs.get(r.name)
            old = Const(0, e.w) if old is None else convert(old, e.w)
            e = mk("ite", guard, e, old)
            deps = deps | st.deps.get(r.name, frozenset())
        st.regs[r.name] = e
        st.types[r.name] = ty
        st.deps[r.name] = deps
        st.ptr.pop(r.name, None)

    def address_sources(self, ins: Instruction, st: State) -> list[int | None]:
        """The addresses the operands of a register operation hold (a location symbol's, or a
        register's from ``State.ptr``): where its result comes from an address."""
        out: list[int | None] = []
        for o in operands(ins):
            if isinstance(o, Sym) and o.name in self.addr_of:
                out.append(self.addr_of[o.name])
            elif isinstance(o, Reg) and o.name in st.ptr:
                out.append(st.ptr[o.name])
        return out

    @staticmethod
    def note_address(st: State, r: Reg, sources: list[int | None]) -> None:
        """``r`` was computed from ``sources`` (addresses): it holds one of them exactly (a move,
        a selection, ``+ 0``), or an address arithmetic moved (None)."""
        if not sources:
            return
        e = st.regs.get(r.name)
        st.ptr[r.name] = e.v if isinstance(e, Const) and e.v in sources else None

    def dep(self, src: frozenset[int], dst: int, label: str) -> None:
        for d in src:
            self.edges.add((d, dst, label))

    # -- one thread --------------------------------------------------------------------------
    def thread(self, t: Thread) -> list[PathInfo]:
        self.cur = t.index
        self.labels = {ins.name: i for i, ins in enumerate(t.instrs) if isinstance(ins, Label)}
        if self.liveness or self.reduce:  # the stuck test; the awaits of .control.branch
            self.loops = _analysed(t, self.labels, _observed_regs(self.p, t))
        regs: dict[str, Expr] = {}
        types: dict[str, str] = dict(t.reg_types)
        for name, v in t.init_regs:
            ty = types.get(name, "u64" if isinstance(v, str) else "s32")
            regs[name] = Const(self.addr_of[v], ADDR_W) if isinstance(v, str) else const(v, type_width(ty))
            types.setdefault(name, ty)
        stack = [State(0, regs, types, {}, [], frozenset(), [], {}, {},
                       ptr={n: self.addr_of[v] for n, v in t.init_regs if isinstance(v, str)})]
        done: list[PathInfo] = []
        steps = 0
        while stack:
            st: State | None = stack.pop()
            while st is not None and st.pc < len(t.instrs):
                steps += 1
                if self.look is not None and steps % LOOK_EVERY == 0:
                    self.look()
                st = self.step(t, t.instrs[st.pc], st, stack)
                if self.pending:
                    stack += self.pending
                    self.pending = []
            if st is not None:
                for name, mma in st.bars.get(("wgmma", "pending"), {}).items():
                    raise SemanticError(f"thread {t.name} ends before a wgmma.wait_group waits for "
                                        f"`{mma.text}`", mma.pos, "PTX ISA, wgmma.wait_group: its "
                                        f"accumulator {name} is undefined until then; add "
                                        "wgmma.commit_group and wgmma.wait_group 0")
                done.append(PathInfo(tuple(st.events), tuple(st.assumes), st.regs, st.types, *st.end,
                                     tuple(st.marks), st.stop))
            if len(done) + len(stack) > MAX_PATHS:
                raise UnsupportedError(f"thread {t.name} has more than {MAX_PATHS} paths",
                                       t.pos, "lower --unroll or simplify the branches")
        return done

    def step(self, t: Thread, ins: Instruction, st: State, stack) -> State | None:
        self.enter(t, st)
        st.last = st.pc
        guard: Expr | None = None
        gdeps: frozenset[int] = frozenset()
        if ins.guard is not None and not isinstance(ins, Branch):
            g, gdeps = self.val(ins.guard[0], st, None)
            guard = mk("lnot", truth(g)) if ins.guard[1] else truth(g)
            if isinstance(guard, Const):
                if not guard.v:
                    st.pc += 1
                    return st
                guard = None
        fn, control = HANDLERS.get(type(ins), (None, False))
        if fn is None:
            raise UnsupportedError(f"instruction `{ins.text}`", ins.pos)
        if control:  # the handler sets the pc (and pushes the paths it forks)
            return fn(self, t, ins, st, guard, gdeps, stack)
        fn(self, t, ins, st, guard, gdeps)
        st.pc += 1
        return st

    def finish_guarded(self, st: State, guard: Expr, gdeps, stack) -> State:
        other = st.fork()
        other.assumes.append(mk("lnot", guard))
        other.ctrl = other.ctrl | gdeps
        other.pc += 1
        stack.append(other)
        st.assumes.append(guard)
        st.ctrl = st.ctrl | gdeps
        st.pc = 10**9
        return st

    def enter(self, t: Thread, st: State) -> None:
        """Liveness graphs: the path arrives at a loop header; when it comes by a back edge that
        is no taken branch (a rotated loop's body falls through into its test), the iteration
        that ends here may repeat forever (a taken branch's is built at the branch); then note
        the state the header finds."""
        if not self.liveness or st.pc not in self.loops.body:
            return
        if (st.last, st.pc) in self.loops.back:
            u = t.instrs[st.last]
            if not (isinstance(u, Branch) and self.labels[u.target] == st.pc):
                from .loops import stuck_at

                stuck_at(self, st, st.pc, TRUE, frozenset(), u)
        st.heads[st.pc] = (len(st.events), dict(st.regs), set(), set())
        st.head_uid[st.pc] = len(self.unspecs)

    # -- locations of the Hopper forms: shared memory, tensor maps, the CTAs of a cluster ------
    def space_tag(self, name: str) -> set[str]:
        """SHM for accesses to shared memory (fence.proxy.async.<space> covers one space)."""
        return {"SHM"} if self.locs[self.p.physical(name)].space == "shared" else set()

    def init_value(self, loc) -> int:
        """A location's initial value; a tensor map's: its global address (its array's)."""
        return loc.init if loc.tensormap is None else self.array_address(loc.tensormap.array)

    def array_address(self, arr: str) -> int:
        """The global address of array ``arr``'s element 0 (a kernel's launch buffer ``arr``)."""
        return self.layout.base_of(arr) if self.layout is not None else self.addr_of[f"{arr}[0]"]

    def owner(self, t: Thread, rank: int | None) -> Placement | None:
        """The placement of CTA ``rank`` of t's cluster when it is not t's own CTA (None)."""
        if rank is None:
            return None
        key = self.ranks[t.placement.cluster_key][rank]
        return None if key == t.placement.cta_key else self.cta_place[key]



    # -- wgmma accumulators (wgmma.py) ------------------------------------------------------
    def not_pending(self, reg: str, st: State) -> None:
        """Reading an accumulator of a wgmma.mma_async no wgmma.wait_group waited for yet is
        undefined (PTX ISA, wgmma.wait_group): a located error."""
        mma = st.bars.get(("wgmma", "pending"), {}).get(reg)
        if mma is not None:
            raise SemanticError(f"{reg} is read before a wgmma.wait_group waits for `{mma.text}` "
                                f"(line {mma.pos.line if mma.pos else '?'})", self.cur_ins_pos(st),
                                "PTX ISA, wgmma.wait_group: accessing the accumulator before the "
                                "wait is undefined; add wgmma.commit_group and wgmma.wait_group 0")

    def cur_ins_pos(self, st: State):
        ins = self.p.threads[self.cur].instrs
        return ins[st.pc].pos if st.pc < len(ins) else None


# A kernel's loads of locations no thread writes take their initial values (:func:`_read_only`);
# False: every load's value stays the solver's (the property tests compare the two).
READ_ONLY_FOLD = True


def build(prog: Program, unroll: int = 2, awaits: bool = True, liveness: bool = False,
          prefixes: bool = False, relevance: bool = True,
          look: Callable[[], None] | None = None) -> EventGraph:
    """Unroll every thread of ``prog`` and build its event graph (``awaits=False``: no spin loop
    is reduced to an await, every loop is unrolled — for tests of the reduction). ``liveness``:
    also the paths that hang (PathInfo.kind "stuck" and "blocked"; :mod:`ptxmm.queries.hangs` asks
    which of them an execution can take forever), and with ``prefixes`` every prefix of a path
    (a thread the scheduler may stop). Only liveness queries use such a graph; ``relevance=False``
    makes the stuck test compare every register an iteration carries (the test before issue 37).
    ``look``: called every so many instructions stepped (a check's ``Deadline.check``): what it
    raises stops the build (the unrolling of nested data-dependent loops can run for ever).

    The initial writes come first, then every thread's paths, then the graph is frozen."""
    b = Builder(prog, unroll, awaits, liveness, relevance, look)
    eg = _build(b, prefixes)
    ro = _read_only(eg) if prog.layout is not None and READ_ONLY_FOLD else {}
    if not ro:
        return eg
    b = Builder(prog, unroll, awaits, liveness, relevance, look)
    b.readonly = ro
    written = frozenset(e.loc for e in eg.events if e.kind == Kind.W and e.thread >= 0)
    folded = _build(b, prefixes)
    return replace(folded, written=written, waits=folded.waits or eg.waits,
                   memo_hits=folded.memo_hits + eg.memo_hits)


@record
class Fold:
    """The read-only fold a :func:`build` applied: the locations and their initial values, the
    locations some thread writes, and whether the unfolded graph had barrier waits."""

    readonly: tuple[tuple[str, int], ...]
    written: frozenset[str]
    waits: bool


def build_keeping_fold(prog: Program, unroll: int = 2) -> tuple[EventGraph, Fold | None]:
    """:func:`build` (its defaults), and the fold it applied (None: none), for
    :func:`build_with_fold`."""
    b = Builder(prog, unroll, True, False, True, None)
    eg = _build(b, False)
    ro = _read_only(eg) if prog.layout is not None and READ_ONLY_FOLD else {}
    if not ro:
        return eg, None
    fold = Fold(tuple(sorted(ro.items())), frozenset(e.loc for e in eg.events if e.kind == Kind.W and
                                                      e.thread >= 0), eg.waits)
    return build_with_fold(prog, fold, unroll), fold


def build_with_fold(prog: Program, fold: Fold, unroll: int = 2) -> EventGraph:
    """The graph :func:`build` makes of ``prog`` when its unfolded graph has the same read-only
    locations as the one ``fold`` came from, without building that unfolded graph: the fix
    search's candidates (explanation/fixjudge.py) insert fences into the program ``fold`` is
    of, which add F events and no access (tests/explanation compare the two graphs)."""
    b = Builder(prog, unroll, True, False, True, None)
    b.readonly = dict(fold.readonly)
    folded = _build(b, False)
    return replace(folded, written=fold.written, waits=folded.waits or fold.waits)


def _read_only(eg: EventGraph) -> dict[str, int]:
    """The physical locations some thread reads and none writes (initial writes aside), with their
    initial values. Every execution's read of one reads its initial write (rf: one write of the
    location, the value it wrote), so a build that knows the value builds a subset of the paths of
    one that does not (the case splits on addresses computed from those values narrow): no write
    appears, and the set stays read-only. Only the events' values change, never an event's
    dependencies (the read stays, with its addr/data/ctrl edges)."""
    written = {e.loc for e in eg.events if e.kind == Kind.W and e.thread >= 0}
    read = {e.loc for e in eg.events if e.kind == Kind.R and e.thread >= 0}
    out = {}
    for loc in read - written:
        i = eg.init.get(loc)
        v = eg.events[i].value if i is not None else None
        if isinstance(v, Const):
            out[loc] = v.v
    return out


def _build(b: Builder, prefixes: bool) -> EventGraph:
    prog = b.p
    # initial writes: one per physical location (shared ones: one per CTA that uses them)
    ctas: dict = {}
    for t in prog.threads:
        ctas.setdefault(t.placement.cta_key, t)
    init: dict[str, int] = {}
    loc_of_name: dict[str, list[str]] = {}
    for loc in prog.locations:
        holders = list(ctas.values()) if loc.space == "shared" else \
            list(prog.threads) if loc.space == "local" else [prog.threads[0]]
        for t in holders:
            vl, pl = b.place(loc.name, t)
            loc_of_name.setdefault(loc.name, []).append(pl)
            if loc.alias_of is None and pl not in init:
                w = type_width(loc.type)
                init[pl] = len(b.events)
                b.events.append(Proto(Kind.W, -1, 0, None, loc=pl, vloc=vl, w=w,
                                      value=const(b.init_value(loc), w), tags=frozenset({"IW"}),
                                      paths={0}))
    all_paths = []
    for t in prog.threads:
        paths = b.thread(t)
        if prefixes:
            paths += _prefixes(paths)
        all_paths.append(paths)
        for k, pth in enumerate(paths):
            for eid in pth.events:
                b.events[eid].paths.add(k)
    for finish in FINISHERS:
        all_paths = finish(b, all_paths)
    return _freeze(b, prog, all_paths, init, loc_of_name)


def _freeze(b: Builder, prog: Program, all_paths, init, loc_of_name) -> EventGraph:
    """Drop events that lie on no surviving path (cut by the bound), renumber densely and freeze."""
    keep = [i for i, e in enumerate(b.events) if e.paths]
    remap = {old: new for new, old in enumerate(keep)}
    f = remap.__getitem__
    memo: dict = {}  # the expressions share their nodes: each renamed once (values.substitute)

    def sub(x):
        return substitute(x, f, memo)

    events = []
    for old in keep:
        e = b.events[old]
        bar = None
        if e.barrier is not None:
            bar = (tuple(sub(x) for x in e.barrier[0]), *e.barrier[1:])
        events.append(Event(f(old), e.kind, e.thread, e.index, frozenset(e.paths), e.sem, e.scope,
                            e.loc, e.vloc, e.w, None if e.value is None else sub(e.value),
                            sub(e.cond), e.tags, e.instr, bar, e.agent,
                            None if e.ok is None else sub(e.ok), e.at))
    edges: dict[str, list[tuple[int, int]]] = {"rmw": [], "addr": [], "data": [], "ctrl": [],
                                               "aint": [], "done": [], "tmrange": []}
    kept_ctrl = {(c, e, "ctrl") for e in keep for c in b.ctrl_of.get(e, ())}
    for a, c, k in sorted(b.edges | kept_ctrl):
        if a in remap and c in remap:
            edges[k].append((remap[a], remap[c]))
    paths = tuple(tuple(PathInfo(tuple(f(x) for x in p.events),
                                 tuple(sub(x) for x in p.assumes),
                                 {r: sub(x) for r, x in p.regs.items()}, p.reg_types,
                                 p.kind, _remap_end(p.end, f, memo), p.marks, p.stop)
                        for p in ps) for ps in all_paths)
    return EventGraph(prog, tuple(events), paths, {k: tuple(v) for k, v in edges.items()},
                      {k: f(v) for k, v in init.items()}, b.cut, b.awaits, b.unroll,
                      {k: tuple(v) for k, v in loc_of_name.items()}, tuple(b.unspecs),
                      tuple(b.warned.values()), _undecided(b), waits=b.waits, memo_hits=b.memo_hits)


def _prefixes(paths: list[PathInfo]) -> list[PathInfo]:
    """Every proper prefix of the thread's paths (the empty one included: the thread never
    starts), each once, with the assumes that led to its last event."""
    seen = {(p.events, p.assumes) for p in paths}
    out = []
    for p in paths:
        for j in range(len(p.events)):
            key = (p.events[:j], p.assumes[:p.marks[j - 1]] if j else ())
            if key not in seen:
                seen.add(key)
                out.append(PathInfo(key[0], key[1], p.regs, p.reg_types, "prefix", (), p.marks[:j],
                                    p.stop))
    return out


def _remap_end(end: tuple, f, memo: dict) -> tuple:
    if len(end) == 4:  # stuck: (events, equalities, back-edge instruction, loose reads)
        return (tuple(f(x) for x in end[0]), tuple(substitute(x, f, memo) for x in end[1]), end[2],
                tuple(f(x) for x in end[3]))
    return tuple(f(x) for x in end)


# the loop analysis of a thread, kept for the very same instructions (programs that share threads:
# the fix search builds one program per candidate change, most threads unchanged; and the threads of
# a kernel launch share one tuple of instructions, 1,024 of them in a block): id → (instructions,
# registers observed at its end, Loops); the analysis reads only the thread's instructions (their
# labels come from them) and those registers (semantics/loops.analyse)
_ANALYSED: dict[int, tuple] = {}
_ANALYSED_MAX = 256
# The key of :data:`_ANALYSED` is the thread's tuple of instructions (one analysis per kernel, not
# per thread); False: the Thread object (one per thread, as before issue 41; the property tests
# compare the two graphs).
ANALYSE_BY_CODE = True


def _analysed(t, labels: dict[str, int], end_live: frozenset[str]):
    from .loops import analyse

    of = t.instrs if ANALYSE_BY_CODE else t
    hit = _ANALYSED.get(id(of))
    if hit is not None and hit[0] is of and hit[1] == end_live:
        return hit[2]
    loops = analyse(t, labels, end_live)
    if len(_ANALYSED) >= _ANALYSED_MAX:
        _ANALYSED.clear()
    _ANALYSED[id(of)] = (of, end_live, loops)
    return loops


def _observed_regs(p: Program, t) -> frozenset[str]:
    """The registers of thread ``t`` read at its end: those its litmus condition (or a Dat3M
    test's ``locations``) names."""
    refs = list(cond_refs(p.condition.expr)) if p.condition is not None else []
    refs += list(p.observed or ())
    return frozenset(r.reg for r in refs if isinstance(r, RegRef) and r.thread == t.name)


def _undecided(b: Builder) -> tuple[str, ...]:
    """Why "no hang found" would not mean "terminates": each loop the unrolling cut that is not
    exact (.control.exact), in words naming its line."""
    return tuple(dict.fromkeys(b.inexact.get(k) or f"the loop at line {line} was never examined"
                               for k, line in sorted(b.cut_loops.items())
                               if k not in b.inexact or b.inexact[k]))


def _cta_label(cta: tuple) -> str:
    """A CTA's part of a shared location's name: ``gpu.cluster.cta`` for a thread in an explicit
    cluster, ``gpu.cta`` for one in its CTA's implicit 1x1x1 cluster (unique: two parts against
    three; never the key's internal tuple)."""
    gpu, cluster, cta_n = cta
    return f"{gpu}.{cta_n}" if isinstance(cluster, tuple) else f"{gpu}.{cluster}.{cta_n}"
