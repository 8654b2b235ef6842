"""Program → EventGraph.

Each thread is executed symbolically, one typed instruction at a time (one handler per IR class).
Branches fork the execution into *paths* (bounded unrolling of backward branches, ``unroll``
iterations at most); events created before a fork are shared by the paths that continue from it,
so every event carries the set of paths it belongs to. In an execution exactly one path per
thread runs: the engines choose it (the Z3 engine with one selector per path inside a single
formula, the brute-force engine by enumeration). An event's execution guard is "its thread runs
one of its paths" and, for predicated instructions and the write of a ``cas``, a value condition.

A side-effect-free spin loop (only loads and register arithmetic in its body), or a CAS retry loop
that goes back only when its CAS failed (so a repeated iteration wrote nothing), is reduced to an
*await*: one iteration whose exit condition is assumed, as Dat3M and GenMC do — but only where that
provably changes no outcome (:meth:`_Builder.await_sound`): the body is entered only at its head
and carries no register from one iteration to the next, so the state after the loop is the same
function of the last iteration's reads however often it ran, and the earlier iterations, which
wrote nothing, leave no trace. A loop that counts its iterations in a register is unrolled.
``build(..., awaits=False)`` turns the reduction off (the tests compare the two). Paths cut by
the unrolling bound are dropped and counted, so reports can say the bound cut executions.

Values are machine integers (:mod:`ptxmm.values`): a register has the width of the instruction
that wrote it, a memory event the width of its location; conversions follow the instruction
type. Syntactic dependencies (addr, data, ctrl) are tracked alongside."""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum

from .._infra.records import record
from ..errors import Diagnostic, SemanticError, UnsupportedError
from ..ir import mbarrier as mb
from ..ir.program import (
    Addr,
    Alu,
    AsyncStore,
    Atom,
    Barrier,
    Branch,
    BulkCopy,
    BulkGroup,
    ClusterBarrier,
    CpAsync,
    CpAsyncGroup,
    Elect,
    Fence,
    Imm,
    Instruction,
    Label,
    Load,
    Mapa,
    MBarrier,
    Mov,
    Placement,
    Program,
    ProxyFence,
    Red,
    Reg,
    Ret,
    Selp,
    Setp,
    Store,
    Sym,
    TensorCopy,
    TensorMap,
    TensorMapReplace,
    Thread,
    Wgmma,
    cond_refs,
    operands,
    type_signed,
    type_width,
)
from ..ir.stops import Stop, StopKind
from ..ir.values import (
    TRUE,
    Const,
    Expr,
    Op,
    ReadVal,
    Unspec,
    const,
    convert,
    division,
    mk,
    reads_of,
    substitute,
    truth,
)

MAX_PATHS = 512
# the cat models' proxy sets (Dat3M's tags); a proxy fence carries the tag of the proxy it bridges
# with the generic one, an alias proxy fence the tag ALIAS
PROXY_TAG = {"generic": "GEN", "texture": "TEX", "surface": "SUR", "constant": "CON", "alias": "ALIAS",
             "async": "ASYNC"}
ADDR_BASE = 0x1000
# `mapa` addresses: location i's copy in the CTA of rank k of the cluster is ADDR_BASE * (i + 1) +
# RANK_STEP * (k + 1)
RANK_STEP = 0x10
ADDR_W = 64


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
    # liveness graphs only (``build(..., liveness=True)``, :mod:`ptxmm.liveness`): how the path
    # ends — "done" (the thread's exit), "stuck" (it takes a backward branch: ``end`` is (the
    # events of that last iteration, register equalities "the iteration ends in the state it
    # began in", the branch)), "blocked" (it stops at a barrier wait: ``end`` is (the wait,)) or
    # "prefix" (the thread is not scheduled past its last event)
    kind: str = "done"
    end: tuple = ()
    marks: tuple[int, ...] = ()  # per event: how many assumes the path had made when it was created


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


@record(frozen=False)
class _Proto:
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
class _State:
    pc: int
    regs: dict[str, Expr]
    types: dict[str, str]
    deps: dict[str, frozenset[int]]
    assumes: list[Expr]
    ctrl: frozenset[int]
    events: list[int]
    back: dict[int, int]
    bars: dict  # barrier operands → occurrences so far
    # liveness graphs: label pc → (events so far, registers) when the thread last reached it;
    # assumes made before each event; how the path ends (PathInfo.kind, PathInfo.end)
    heads: dict = field(default_factory=dict)
    marks: list = field(default_factory=list)
    end: tuple = ("done", ())
    # registers whose value was computed from a location's address (a symbol, a mapa): the exact
    # address they hold, or None where arithmetic moved it (Builder.resolve refuses that one)
    ptr: dict = field(default_factory=dict)

    def fork(self) -> _State:
        return _State(self.pc, dict(self.regs), dict(self.types), dict(self.deps), list(self.assumes),
                      self.ctrl, list(self.events), dict(self.back), dict(self.bars),
                      {k: (n, r, set(rbw), set(wr)) for k, (n, r, rbw, wr) in self.heads.items()},
                      list(self.marks), self.end, dict(self.ptr))

    def used(self, reg: str, write: bool) -> None:
        """Liveness graphs: note a register read (before the iteration wrote it: it carries state
        into the iteration) or written, for every loop head the path passed."""
        for _, _, rbw, wr in self.heads.values():
            if write:
                wr.add(reg)
            elif reg not in wr:
                rbw.add(reg)


_RMW_SEMS = {"relaxed": ("relaxed", "relaxed"), "acquire": ("acquire", "relaxed"),
             "release": ("relaxed", "release"), "acq_rel": ("acquire", "release")}
_SETP = {"eq": "eq", "ne": "ne", "lo": "ult", "ls": "ule", "hi": "ugt", "hs": "uge"}


def _alu_op(op: str, ty: str) -> str:
    s = type_signed(ty)
    if op in ("min", "max", "div", "rem"):
        return ("s" if s else "u") + op
    if op == "shr":
        return "sar" if s else "shr"
    return op


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _cmp_op(cmp: str, ty: str) -> str:
    if cmp in _SETP:
        return _SETP[cmp]
    return ("s" if type_signed(ty) else "u") + cmp


class _Builder:
    def __init__(self, prog: Program, unroll: int, awaits: bool = True, liveness: bool = False):
        self.p = prog
        self.unroll = unroll
        self.reduce = awaits  # reduce spin loops to awaits where that is sound
        self.liveness = liveness  # also the paths that hang (stuck in a loop, blocked at a barrier)
        self.pending: list[_State] = []  # such paths forked by the last step
        self.events: list[_Proto] = []
        self.edges: set[tuple[int, int, str]] = set()
        self.cut = 0
        self.awaits = 0
        self.addr_of = {loc.name: ADDR_BASE * (i + 1) for i, loc in enumerate(prog.locations)}
        # a kernel launch (ptxmm.kernels): buffers at the addresses of its layout, whose elements
        # the accesses' computed addresses name
        self.layout = prog.layout
        if self.layout is not None:
            self.addr_of = dict(self.layout.symbols)
        self.name_of_addr = {v: k for k, v in self.addr_of.items()}
        self.locs = {loc.name: loc for loc in prog.locations}
        self.agents = 0  # asynchronous operations so far (Event.agent)
        self.box_n = 0  # the words of the tensor copy being built
        self.cur = 0  # the thread being built
        self.unspecs: list[Unspec] = []
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
        return virt, root

    def width_of(self, name: str) -> int:
        return type_width(self.locs[self.p.physical(name)].type)

    def resolve(self, a: Addr, st: _State, ins: Instruction) -> tuple[str, int | None, frozenset[int]]:
        """The location an address operand names, the CTA rank of a ``mapa`` address (None: the
        thread's own copy), and the reads the address depends on."""
        if self.layout is not None:
            name, deps = self.element(a, st, ins)
            assert name is not None  # step() stops the thread at an out-of-bounds access
            return name, None, deps
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

    def element(self, a: Addr, st: _State, ins: Instruction) -> tuple[str | None, frozenset[int]]:
        """A kernel's access: the buffer element its 64-bit address names (None: out of bounds)."""
        addr, deps = self.address(a, st)
        if self.at is not None:  # one case of an address computed from loaded data (loaded_access)
            return self.at, deps
        if not isinstance(addr, Const):
            raise UnsupportedError("address depends on a loaded value", ins.pos,
                                   "ptxmm computes such addresses for ld, st, atom and red only")
        # a tensor copy's operands: 32-bit words and a 64-bit mbarrier (kernels._operand_widths)
        return self.layout.element(addr.v, type_width(getattr(ins, "type", "b32")), ins), deps

    def address(self, a: Addr, st: _State) -> tuple[Expr, frozenset[int]]:
        base, deps = self.val(a.base, st, "u64")
        return mk("add", base, Const(a.offset % (1 << ADDR_W), ADDR_W)), deps

    def access(self, t: Thread, ins, st: _State, guard: Expr | None, gdeps, stack) -> _State | None:
        """A memory access; in a kernel, one outside every buffer stops the thread instead."""
        if self.layout is not None and not isinstance(self.address(ins.addr, st)[0], Const):
            return self.loaded_access(t, ins, st, guard, gdeps, stack)
        if self.layout is not None and self.element(ins.addr, st, ins)[0] is None:
            return self.stop(st, Stop(StopKind.BOUNDS, ins.pos.line if ins.pos else 0), guard, gdeps, stack)
        self.memory(t, ins, st, guard, gdeps)
        st.pc += 1
        return st

    def loaded_access(self, t: Thread, ins, st: _State, guard: Expr | None, gdeps, stack) -> _State | None:
        """A kernel's access whose address is computed from loaded data: a case split on the
        address. One path per element it may name (``Layout.targets``, a sound
        over-approximation), which assumes the address equals that element's and accesses it —
        so every event keeps one location, and the engines' choice of a path is the choice of the
        element — and, where the address may lie outside every buffer, one path that assumes so
        and stops there (out of bounds). The split adds no dependency: the events keep their addr
        dependencies on the reads the address is computed from. A predicated access: each case
        assumes "guard → address = element" (its event keeps the guard), the stop "guard ∧
        outside"."""
        addr, _ = self.address(ins.addr, st)
        known = list(st.assumes) + ([guard] if guard is not None else [])
        cases, outside = self.layout.targets(addr, known, type_width(ins.type), ins)
        out: list[_State] = []
        for name, v in cases:
            case = st.fork()
            eq = mk("eq", addr, Const(v, ADDR_W))
            case.assumes.append(eq if guard is None else mk("lor", mk("lnot", guard), eq))
            self.at = name
            try:
                self.memory(t, ins, case, guard, gdeps)
            finally:
                self.at = None
            case.pc += 1
            out.append(case)
        if guard is not None and not cases:
            skip = st.fork()
            skip.assumes.append(mk("lnot", guard))
            skip.pc += 1
            out.append(skip)
        if outside is not None:
            stop = st.fork()
            stop.assumes.append(outside if guard is None else mk("land", guard, outside))
            site = Stop(StopKind.BOUNDS, ins.pos.line if ins.pos else 0)
            out.append(self.stop(stop, site, None, gdeps, stack))
        if not out:
            return None  # no execution reaches the access
        stack += out[1:]
        return out[0]

    def stop(self, st: _State, stop: Stop, guard: Expr | None, gdeps, stack) -> _State:
        """The thread stops here (a failing assert, an out-of-bounds access): ``stop`` is recorded
        on the paths that stop (ir.stops; the kernel findings' queries read it)."""
        if guard is None:
            st.pc = 10**9
        else:
            st = self.finish_guarded(st, guard, gdeps, stack)
        self.set_reg(st, Reg(stop.kind.register), Const(stop.line, 32), "u32", frozenset(), None)
        return st

    # -- values ------------------------------------------------------------------------------
    def val(self, o, st: _State, ty: str | None) -> tuple[Expr, frozenset[int]]:
        """Operand value at the width of type ``ty`` (None: as it is)."""
        if isinstance(o, Imm):
            return const(o.value, type_width(ty) if ty else 64), frozenset()
        if isinstance(o, Sym):
            e: Expr = Const(self.addr_of[o.name], ADDR_W)
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

    def ctarank(self, st: _State) -> Expr:
        """%cluster_ctarank of the thread being built (ranks in the order of .cta numbers)."""
        p = self.p.threads[self.cur].placement
        return Const(self.ranks[p.cluster_key].index(p.cta_key), 32)

    def new_event(self, st: _State, t: Thread, kind: Kind, ins: Instruction, guard: Expr | None,
                  **kw) -> int:
        eid = len(self.events)
        self.events.append(_Proto(kind, t.index, len(st.events), ins, cond=guard or TRUE, **kw))
        st.events.append(eid)
        st.marks.append(len(st.assumes))
        for c in st.ctrl:
            self.edges.add((c, eid, "ctrl"))
        return eid

    def set_reg(self, st: _State, r: Reg, e: Expr, ty: str, deps: frozenset, guard: Expr | None):
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

    def address_sources(self, ins: Instruction, st: _State) -> list[int | None]:
        """The addresses the operands of a register operation hold (a location symbol's, or a
        register's from ``_State.ptr``): where its result comes from an address."""
        out: list[int | None] = []
        for o in operands(ins):
            if isinstance(o, Sym) and o.name in self.addr_of:
                out.append(self.addr_of[o.name])
            elif isinstance(o, Reg) and o.name in st.ptr:
                out.append(st.ptr[o.name])
        return out

    @staticmethod
    def note_address(st: _State, r: Reg, sources: list[int | None]) -> None:
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
        labels = {ins.name: i for i, ins in enumerate(t.instrs) if isinstance(ins, Label)}
        regs: dict[str, Expr] = {}
        types: dict[str, str] = dict(t.reg_types)
        for name, v in t.init_regs:
            ty = types.get(name, "u64" if isinstance(v, str) else "s32")
            regs[name] = Const(self.addr_of[v], ADDR_W) if isinstance(v, str) else const(v, type_width(ty))
            types.setdefault(name, ty)
        stack = [_State(0, regs, types, {}, [], frozenset(), [], {}, {},
                        ptr={n: self.addr_of[v] for n, v in t.init_regs if isinstance(v, str)})]
        done: list[PathInfo] = []
        while stack:
            st: _State | None = stack.pop()
            while st is not None and st.pc < len(t.instrs):
                st = self.step(t, t.instrs[st.pc], st, labels, stack)
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
                                     tuple(st.marks)))
            if len(done) + len(stack) > MAX_PATHS:
                raise UnsupportedError(f"thread {t.name} has more than {MAX_PATHS} paths",
                                       t.pos, "lower --unroll or simplify the branches")
        return done

    def step(self, t: Thread, ins: Instruction, st: _State, labels, stack) -> _State | None:
        self.enter(ins, st)
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
        match ins:
            case Branch():
                return self.branch(t, ins, st, labels, stack)
            case Ret():
                if guard is None:
                    st.pc = len(t.instrs)
                    return st
                return self.finish_guarded(st, guard, gdeps, stack)
            case Load() | Store() | Atom() | Red():
                return self.access(t, ins, st, guard, gdeps, stack)
            case Fence():
                # fence.mbarrier_init: no memory fence (PROXY keeps it out of Fm), only MBI
                tags = frozenset({"PROXY", "MBI"}) if ins.restrict == "mbarrier_init" else frozenset()
                e = self.new_event(st, t, Kind.F, ins, guard, sem=ins.sem, scope=ins.scope, tags=tags)
                self.dep(gdeps, e, "ctrl")
            case ProxyFence():
                self.proxy_fence(t, ins, st, guard, gdeps)
            case Barrier():
                self.barrier(t, ins, st, guard, gdeps)
            case ClusterBarrier() | MBarrier() | BulkCopy() | BulkGroup() | Mapa() | CpAsync() | \
                    CpAsyncGroup() | AsyncStore() | Wgmma() | Elect() | TensorCopy() | TensorMapReplace():
                self.hopper(t, ins, st, guard, gdeps)
            case _:
                self.register_op(ins, st, guard, gdeps)
        st.pc += 1
        return st

    def proxy_fence(self, t: Thread, ins: ProxyFence, st: _State, guard, gdeps) -> None:
        if ins.kind == "tensormap":
            self.tensormap_fence(t, ins, st, guard, gdeps)
            return
        space = {"global": {"PFG"}, "shared": {"PFS"}}.get(ins.space or "", set())
        # the uni-directional generic→async fences (UNI) with their restricted release
        # (RSR) or acquire (ASR) half at .cluster (models/ptx-async.cat)
        uni = {"release": {"UNI", "RSR"}, "acquire": {"UNI", "ASR"}}.get(ins.sem or "", set())
        e = self.new_event(st, t, Kind.F, ins, guard, sem=ins.sem,
                           scope="cluster" if uni else None,
                           tags=frozenset({"PROXY", PROXY_TAG[ins.kind]} | space | uni))
        self.dep(gdeps, e, "ctrl")

    def register_op(self, ins: Instruction, st: _State, guard: Expr | None, gdeps) -> None:
        sources = self.address_sources(ins, st) if isinstance(ins, (Mov, Alu, Selp)) else []
        self.register_value(ins, st, guard, gdeps)
        if sources:
            self.note_address(st, ins.dst, sources)

    def register_value(self, ins: Instruction, st: _State, guard: Expr | None, gdeps) -> None:
        match ins:
            case Mov():
                v, d = self.val(ins.src, st, ins.type)
                self.set_reg(st, ins.dst, v, ins.type, d | gdeps, guard)
            case Alu():
                w = type_width(ins.type)
                op = _alu_op(ins.op, ins.type)
                vals = [self.val(s, st, ins.type) for s in ins.srcs]
                if op in ("shl", "shr", "sar"):  # the shift amount is a .u32 operand
                    vals[1] = self.val(ins.srcs[1], st, "u32")
                if op in ("udiv", "sdiv", "urem", "srem"):
                    v = division(op, vals[0][0], vals[1][0], w, lambda: self.unspec(ins, w, vals[1][0]))
                else:
                    v = mk(op, *(x[0] for x in vals), w=w)
                self.set_reg(st, ins.dst, v, ins.type, frozenset().union(*(x[1] for x in vals)), guard)
            case Setp():
                (a, da), (b, db) = self.val(ins.a, st, ins.type), self.val(ins.b, st, ins.type)
                self.set_reg(st, ins.dst, mk(_cmp_op(ins.cmp, ins.type), a, b), "pred", da | db, guard)
            case Selp():
                (a, da), (b, db) = self.val(ins.a, st, ins.type), self.val(ins.b, st, ins.type)
                p, dp = self.val(ins.p, st, None)
                self.set_reg(st, ins.dst, mk("ite", truth(p), a, b), ins.type, da | db | dp, guard)
            case Label():
                pass
            case _:
                raise UnsupportedError(f"instruction `{ins.text}`", ins.pos)

    def unspec(self, ins: Instruction, w: int, divisor: Expr) -> Unspec:
        """A fresh unspecified value for this instance of ``ins`` (a division whose divisor may
        be 0), and the instruction's warning."""
        line = ins.pos.line if ins.pos is not None else "?"
        u = Unspec(len(self.unspecs), w, f"the result of `{ins.text}` (line {line})")
        self.unspecs.append(u)
        if id(ins) not in self.warned:
            when = "divides by zero" if isinstance(divisor, Const) else "may divide by zero"
            self.warned[id(ins)] = Diagnostic(
                f"`{ins.text}` {when}: the PTX ISA leaves the result unspecified, so ptxmm lets it "
                "be any value", ins.pos,
                "no verdict depends on a made-up value; the brute-force engine cannot enumerate "
                "it (the Z3 engine checks this program)")
        return u

    def memory(self, t: Thread, ins, st: _State, guard: Expr | None, gdeps) -> None:
        name, rank, adeps = self.resolve(ins.addr, st, ins)
        if self.layout is not None and name not in self.locs:  # a kernel's __constant__ data
            value, ty = self.layout.constant(name)
            self.set_reg(st, ins.dst, convert(const(value, type_width(ty)), type_width(ins.type),
                                              type_signed(ty)), ins.type, frozenset(), guard)
            return
        if self.locs[self.p.physical(name)].tensormap is not None:
            raise UnsupportedError(f"`{ins.text}` accesses tensor map {name} as data", ins.pos,
                                   "a tensor map is an opaque object: change it with tensormap.replace")
        vl, pl = self.place(name, t, rank)
        lw = self.width_of(name)
        tags = frozenset({PROXY_TAG[ins.proxy]} | ({"VOL"} if getattr(ins, "volatile", False) else set())
                         | self.space_tag(name))
        base = dict(scope=ins.scope, loc=pl, vloc=vl, w=lw)
        if isinstance(ins, Load):
            r = self.new_event(st, t, Kind.R, ins, guard, sem=ins.sem, tags=tags, **base)
            self.dep(adeps, r, "addr")
            self.dep(gdeps, r, "ctrl")
            v = convert(ReadVal(r, lw), type_width(ins.type), type_signed(ins.type))
            self.set_reg(st, ins.dst, v, ins.type, frozenset({r}), guard)
            return
        if isinstance(ins, Store):
            v, vdeps = self.val(ins.src, st, ins.type)
            w = self.new_event(st, t, Kind.W, ins, guard, sem=ins.sem, value=convert(v, lw), tags=tags,
                               **base)
            self.dep(adeps, w, "addr")
            self.dep(gdeps, w, "ctrl")
            self.dep(vdeps, w, "data")
            return
        self.rmw(t, ins, st, guard, gdeps, adeps, base)

    def rmw(self, t: Thread, ins: Atom | Red, st: _State, guard, gdeps, adeps, base) -> None:
        rsem, wsem = _RMW_SEMS[ins.sem]
        lw, iw = base["w"], type_width(ins.type)
        proxy = PROXY_TAG[ins.proxy]
        rtags = frozenset({"RMW_R", proxy} | ({"RedR"} if isinstance(ins, Red) else set()))
        r = self.new_event(st, t, Kind.R, ins, guard, sem=rsem, tags=rtags, **base)
        self.dep(adeps, r, "addr")
        self.dep(gdeps, r, "ctrl")
        old = convert(ReadVal(r, lw), iw, type_signed(ins.type))
        srcs = ins.srcs if isinstance(ins, Atom) else (ins.src,)
        args = [self.val(s, st, ins.type) for s in srcs]
        op = _alu_op(ins.op, ins.type)
        wguard = guard
        if op == "exch":
            new = args[0][0]
        elif op == "cas":
            new = args[1][0]
            ok = mk("eq", old, args[0][0])
            wguard = ok if guard is None else mk("land", guard, ok)
        elif op == "sub":  # Dat3M's atom.sub
            new = mk("sub", old, args[0][0])
        else:
            new = mk(op, old, *(a[0] for a in args), w=iw)
        w = self.new_event(st, t, Kind.W, ins, wguard, sem=wsem, value=convert(new, lw),
                           tags=frozenset({"RMW_W", proxy}), **base)
        self.dep(adeps, w, "addr")
        self.dep(gdeps, w, "ctrl")
        self.edges.add((r, w, "rmw"))
        if op not in ("exch", "cas"):  # the written value is computed from the value read
            self.edges.add((r, w, "data"))
        if op == "cas":  # whether it writes depends on the value read
            self.edges.add((r, w, "data"))
        for a in args:
            self.dep(a[1], w, "data")
        if isinstance(ins, Atom):
            self.set_reg(st, ins.dst, old, ins.type, frozenset({r}), guard)

    def barrier(self, t: Thread, ins: Barrier, st: _State, guard, gdeps) -> None:
        ident = [self.val(o, st, None) for o in ins.ids]
        cnt = self.val(ins.count, st, None)[0] if ins.count is not None else None
        if cnt is not None and not isinstance(cnt, Const):
            raise UnsupportedError("barrier thread count depends on a loaded value", ins.pos)
        key = tuple(repr(o) for o in ins.ids)
        k = st.bars.get(key, 0)
        st.bars[key] = k + 1
        info = (tuple(convert(x[0], 64) for x in ident), None if cnt is None else cnt.v, k)
        bdeps = frozenset().union(*(x[1] for x in ident))
        for part in ("ARRIVE", "WAIT") if ins.kind != "arrive" else ("ARRIVE",):
            e = self.new_event(st, t, Kind.B, ins, guard, scope="cta", barrier=info,
                               tags=frozenset({"BAR", part}))
            self.dep(bdeps, e, "addr")
            self.dep(gdeps, e, "ctrl")
            self.blocked_at(st, e, part, guard)

    # -- Hopper synchronization (docs/hopper.md) ----------------------------------------------
    def hopper(self, t: Thread, ins, st: _State, guard, gdeps) -> None:
        handler = {ClusterBarrier: self.cluster_barrier, MBarrier: self.mbarrier,
                   BulkCopy: self.bulk_copy, BulkGroup: self.bulk_group, Mapa: self.mapa,
                   CpAsync: self.cp_async, CpAsyncGroup: self.cp_async_group,
                   AsyncStore: self.async_store, Wgmma: self.wgmma, Elect: self.elect,
                   TensorCopy: self.tensor_copy, TensorMapReplace: self.tensormap_replace}[type(ins)]
        handler(t, ins, st, guard, gdeps)

    def space_tag(self, name: str) -> set[str]:
        """SHM for accesses to shared memory (fence.proxy.async.<space> covers one space)."""
        return {"SHM"} if self.locs[self.p.physical(name)].space == "shared" else set()

    def cluster_barrier(self, t: Thread, ins: ClusterBarrier, st: _State, guard, gdeps) -> None:
        """The k-th arrive and the k-th wait of every thread of a cluster belong to phase k; a
        wait in a thread that has not arrived in its phase waits for itself (HANG)."""
        if guard is not None:
            raise UnsupportedError(f"predicated `{ins.text}`", ins.pos,
                                   "every thread of the cluster arrives and waits unconditionally")
        k = st.bars.get(("cluster", ins.kind), 0)
        st.bars[("cluster", ins.kind)] = k + 1
        tags = {"CBAR", "ARRIVE" if ins.kind == "arrive" else "WAIT"}
        if ins.kind == "wait" and st.bars.get(("cluster", "arrive"), 0) <= k:
            tags.add("HANG")
        e = self.new_event(st, t, Kind.B, ins, None, sem=ins.sem, scope="cluster", barrier=((), None, k),
                           tags=frozenset(tags))
        self.dep(gdeps, e, "ctrl")
        self.blocked_at(st, e, "WAIT" if ins.kind == "wait" else "ARRIVE", None)

    def mbar_place(self, ins, a: Addr, st: _State, t: Thread,
                   multicast: int | None = None) -> tuple[dict, frozenset[int]]:
        """Location fields of an mbarrier operand (a .shared .b64 location; ``multicast``: its
        copy in that CTA rank)."""
        name, rank, adeps = self.resolve(a, st, ins)
        rank = rank if multicast is None else multicast
        loc = self.locs[self.p.physical(name)]
        if loc.space != "shared" or type_width(loc.type) != 64:
            raise SemanticError(f"`{ins.text}`: mbarrier object {name} must be a .shared .b64 location",
                                ins.pos, f"declare `.shared .b64 {name};`")
        if rank is not None and isinstance(ins, MBarrier) and ins.op in ("init", "inval", "test_wait",
                                                                         "try_wait"):
            raise UnsupportedError(f"`{ins.text}` on another CTA's mbarrier", ins.pos,
                                   "init and waits act on the thread's own CTA's mbarrier (PTX ISA)")
        vl, pl = self.place(name, t, rank)
        return dict(loc=pl, vloc=vl, w=64), adeps

    def mbar_rmw(self, st: _State, t: Thread, ins, guard, where: dict, sems: tuple[str, str],
                 scope: str, change: tuple[Expr, bool, Expr], agent: int = -1,
                 at: Placement | None = None) -> tuple[int, int]:
        """One atomic update of an mbarrier word: (arrivals, drop, tx-count change)."""
        tags = {"GEN", "MBAR", "SHM"} | ({"AOP"} if agent >= 0 else set())
        r = self.new_event(st, t, Kind.R, ins, guard, sem=sems[0], scope=scope, agent=agent, at=at,
                           tags=frozenset(tags | {"RMW_R"}), **where)
        new = mb.update(ReadVal(r, 64), *change)
        w = self.new_event(st, t, Kind.W, ins, guard, sem=sems[1], scope=scope, value=new, agent=agent,
                           at=at, tags=frozenset(tags | {"RMW_W"}), **where)
        self.edges |= {(r, w, "rmw"), (r, w, "data")}
        return r, w

    def mbarrier(self, t: Thread, ins: MBarrier, st: _State, guard, gdeps) -> None:
        where, adeps = self.mbar_place(ins, ins.addr, st, t)
        tags = frozenset({"GEN", "MBAR", "SHM"})
        one = lambda o: self.val(o, st, "b64") if o is not None else (Const(1, 64), frozenset())  # noqa: E731
        for what, o in (("arrival count", ins.count), ("transaction count", ins.tx)):
            if o is not None:
                _mbar_count(ins, what, one(o)[0])
        if ins.op == "init":
            (n, ndeps) = one(ins.count)
            e = self.new_event(st, t, Kind.W, ins, guard, sem="weak", value=mb.init_word(n), tags=tags,
                               **where)
            self.dep(ndeps, e, "data")
            events = [e]
        elif ins.op == "inval":  # a weak write of a word no initialised object holds (MBINV)
            events = [self.new_event(st, t, Kind.W, ins, guard, sem="weak", value=Const(0, 64),
                                     tags=tags | {"MBINV"}, **where)]
        elif ins.op in ("test_wait", "try_wait"):
            e = self.new_event(st, t, Kind.R, ins, guard, sem=ins.sem, scope=ins.scope,
                               tags=tags | {"MBWAIT"}, **where)
            sv, sdeps = one(ins.state)
            ok = mb.wait_complete(ReadVal(e, 64), sv, ins.parity)
            self.events[e].ok = ok
            self.set_reg(st, ins.dst, ok, "pred", frozenset({e}) | sdeps, guard)
            events = [e]
        else:
            arrive = ins.op in ("arrive", "arrive_drop")
            n, ndeps = one(ins.count) if arrive else (Const(0, 64), frozenset())
            tx, txdeps = one(ins.tx) if ins.tx is not None else (Const(0, 64), frozenset())
            if ins.op == "complete_tx":
                tx = mk("neg", tx)
            r, w = self.mbar_rmw(st, t, ins, guard, where, _RMW_SEMS[ins.sem], ins.scope,
                                 (n, ins.op == "arrive_drop", tx))
            self.dep(ndeps | txdeps, w, "data")
            if ins.dst is not None:
                self.set_reg(st, ins.dst, ReadVal(r, 64), "b64", frozenset({r}), guard)
            events = [r, w]
        for e in events:
            self.dep(adeps, e, "addr")
            self.dep(gdeps, e, "ctrl")

    def mapa(self, t: Thread, ins: Mapa, st: _State, guard, gdeps) -> None:
        name, _, deps = self.resolve(Addr(ins.src), st, ins) if isinstance(ins.src, Reg) else \
            (ins.src.name, None, frozenset())
        rank, rdeps = self.val(ins.rank, st, "u32")
        if not isinstance(rank, Const):
            raise UnsupportedError("a CTA rank that depends on a loaded value", ins.pos)
        if self.locs[self.p.physical(name)].space != "shared":
            raise SemanticError(f"mapa maps shared memory; {name} is not a .shared location", ins.pos)
        n = len(self.ranks[t.placement.cluster_key])
        if rank.v >= n:
            raise SemanticError(f"`{ins.text}`: the cluster of thread {t.name} has {n} CTA(s), ranks "
                                f"0..{n - 1}", ins.pos, "place a thread in that CTA (.cluster C .cta K)")
        v = Const(self.addr_of[name] + RANK_STEP * (rank.v + 1), ADDR_W)
        self.mapa_addrs.add(v.v)
        self.set_reg(st, ins.dst, convert(v, type_width(ins.type)), ins.type, deps | rdeps | gdeps, guard)
        self.note_address(st, ins.dst, [v.v])

    def async_place(self, ins: BulkCopy, a: Addr, space: str, st: _State, t: Thread,
                    multicast: int | None = None, k: int = 0):
        """Location fields of word ``k`` of a copy operand (``multicast``: the copy in that CTA
        rank)."""
        name, rank, deps = self.copy_word(ins, a, k, st)
        rank = rank if multicast is None else multicast
        loc = self.locs[self.p.physical(name)]
        if loc.space != space or type_width(loc.type) != 32:
            raise SemanticError(f"`{ins.text}`: {name} must be a .{space} 32-bit location",
                                ins.pos, "cp.async.bulk copies 32-bit words between the state "
                                "spaces its qualifiers name")
        vl, pl = self.place(name, t, rank)
        return dict(loc=pl, vloc=vl, w=32), frozenset(self.space_tag(name)), deps, self.owner(t, rank)

    def copy_word(self, ins: BulkCopy | TensorCopy, a: Addr, k: int,
                  st: _State) -> tuple[str, int | None, frozenset[int]]:
        """The location of word ``k`` (bytes 4k..4k+3) of a copy operand: the operand's own
        location, then the consecutive words of its array (``.shared .u32 s[4]``: s[1], s[2], …;
        in a kernel, the element at the address 4k bytes on); a copy that runs off the end of its
        location is a located error."""
        if k == 0:
            return self.resolve(a, st, ins)
        if self.layout is not None:
            name, deps = self.element(Addr(a.base, a.offset + 4 * k), st, ins)
            if name is None:
                raise SemanticError(f"`{ins.text}`: its {self.copy_words(ins)} words run off the end "
                                    "of the buffer", ins.pos, "copy no more bytes than the buffer holds")
            return name, None, deps
        name, rank, deps = self.resolve(a, st, ins)
        base, _, i = name[:-1].partition("[") if name.endswith("]") else (name, "", "")
        nxt = f"{base}[{int(i) + k}]" if i.isdigit() else None
        if nxt is None or nxt not in self.locs:
            n = self.copy_words(ins)
            have = "is one word" if nxt is None else f"ends {k - 1} word(s) after it"
            raise SemanticError(f"`{ins.text}` copies {n} words from {name} on, but {base} {have}",
                                ins.pos, f"declare an array of at least {n} words, e.g. "
                                f"`.{self.locs[name].space} .u32 {base}[{n}];`, and copy from its start")
        return nxt, rank, deps

    def copy_words(self, ins: BulkCopy | TensorCopy) -> int:
        """The 32-bit words a bulk copy moves: its size (a constant, instr.py) / 4; a tensor
        copy: its box's elements (the copy being built)."""
        if isinstance(ins, TensorCopy):
            return self.box_n
        assert isinstance(ins.size, Imm)
        return max(1, ins.size.value // 4)

    # -- tensor copies and the tensormap proxy (PTX ISA, cp.async.bulk.tensor, tensormap.replace,
    #    membar/fence; models/ptx-proxy.cat, docs/hopper.md) ------------------------------------
    def init_value(self, loc) -> int:
        """A location's initial value; a tensor map's: its global address (its array's)."""
        return loc.init if loc.tensormap is None else self.array_address(loc.tensormap.array)

    def array_address(self, arr: str) -> int:
        """The global address of array ``arr``'s element 0 (a kernel's launch buffer ``arr``)."""
        return self.layout.base_of(arr) if self.layout is not None else self.addr_of[f"{arr}[0]"]

    def tmap_place(self, ins, a: Addr, st: _State, t: Thread) -> tuple[str, dict, frozenset[int]]:
        """The tensor map an operand names: (its name, location fields, address dependencies). In a
        kernel: the `__grid_constant__ CUtensorMap` parameter whose address the operand holds
        (kernels.Layout.tensormap_at; nvcc's ``mov.b64 %rd, k_param_0; cvta.param.u64``)."""
        if self.layout is not None:
            addr, deps = self.address(a, st)
            if not isinstance(addr, Const):
                raise UnsupportedError(f"`{ins.text}`: its tensor map address depends on a loaded value",
                                       ins.pos, "pass &tm of a `const __grid_constant__ CUtensorMap` "
                                       "parameter")
            name = self.layout.tensormap_at(addr.v, ins)
            vl, pl = self.place(name, t)
            return name, dict(loc=pl, vloc=vl, w=64), deps
        name, rank, deps = self.resolve(a, st, ins)
        if self.locs[self.p.physical(name)].tensormap is None or rank is not None:
            raise SemanticError(f"`{ins.text}`: {name} is not a tensor map", ins.pos,
                                "declare `.global .tensormap tm = tensormap(a, dims {4}, box {2});` "
                                "and name tm")
        vl, pl = self.place(name, t)
        return name, dict(loc=pl, vloc=vl, w=64), deps

    def map_targets(self, name: str) -> list[tuple[str, int]]:
        """The global addresses tensor map ``name`` may hold, each with its array: the declared one
        and every one a tensormap.replace of it writes (tensormap_replace checks each write)."""
        out = [self.locs[name].tensormap.array]
        for t in self.p.threads:
            for ins in t.instrs:
                if isinstance(ins, TensorMapReplace) and isinstance(ins.addr.base, Sym) and \
                        ins.addr.base.name == name:
                    out += [arr for arr in self.replace_arrays(t, ins) if arr not in out]
        return [(arr, self.array_address(arr)) for arr in out]

    def replace_arrays(self, t: Thread, ins: TensorMapReplace) -> list[str]:
        """The arrays a tensormap.replace's new value may name, read off the program text: a
        location, or a register given one by `mov` or its initial value."""
        syms = [ins.src] if isinstance(ins.src, Sym) else []
        if isinstance(ins.src, Reg):
            syms += [i.src for i in t.instrs
                     if isinstance(i, Mov) and i.dst == ins.src and isinstance(i.src, Sym)]
            syms += [Sym(v) for r, v in t.init_regs if r == ins.src.name and isinstance(v, str)]
        return [s.name[:-3] for s in syms if s.name.endswith("[0]")]

    def tensormap_fence(self, t: Thread, ins: ProxyFence, st: _State, guard, gdeps) -> None:
        """fence.proxy.tensormap::generic.release|acquire: a uni-directional generic → tensormap
        proxy fence with its release or acquire half at its scope (TMREL / TMACQ); the acquire's
        [addr, addr+127] is the tensor map its operand names: tm_range relates the fence to that
        map's tensormap-proxy reads by the copies the thread issues after it."""
        tags = {"PROXY", "TMAP", "TMREL" if ins.sem == "release" else "TMACQ"}
        e = self.new_event(st, t, Kind.F, ins, guard, sem=ins.sem, scope=ins.scope, tags=frozenset(tags))
        self.dep(gdeps, e, "ctrl")
        if ins.addr is not None:
            name, _, deps = self.tmap_place(ins, ins.addr, st, t)
            st.bars[("tmacq", name)] = st.bars.get(("tmacq", name), ()) + (e,)

    def tensormap_replace(self, t: Thread, ins: TensorMapReplace, st: _State, guard, gdeps) -> None:
        """tensormap.replace.tile.global_address: "a weak memory operation, on the entire 1024-bit
        opaque tensor-map object": a weak generic write of the map's new global address, which
        must be the start of an array the map fits in (a copy's case split names its words)."""
        name, where, adeps = self.tmap_place(ins, ins.addr, st, t)
        v, vdeps = self.val(ins.src, st, "b64")
        tm = self.locs[name].tensormap
        known = dict((addr, arr) for arr, addr in self.map_targets(name))
        exact = not isinstance(ins.src, Reg) or (isinstance(v, Const) and st.ptr.get(ins.src.name) == v.v)
        arr = known.get(v.v) if isinstance(v, Const) and exact else None
        if arr is None or sum(f"{arr}[{i}]" in self.locs for i in range(_prod(tm.dims))) < _prod(tm.dims) \
                or self.locs[f"{arr}[0]"].space != "global":
            raise SemanticError(f"`{ins.text}`: the new global address must be that of a .global 32-bit "
                                f"array of at least {_prod(tm.dims)} elements, named in the program text",
                                ins.pos, "write `mov.u64 %rd, b;` (b an array) before it, then replace "
                                "with %rd")
        w = self.new_event(st, t, Kind.W, ins, guard, sem="weak", value=v, tags=frozenset({"GEN"}), **where)
        self.dep(adeps, w, "addr")
        self.dep(vdeps, w, "data")
        self.dep(gdeps, w, "ctrl")

    def tensor_copy(self, t: Thread, ins: TensorCopy, st: _State, guard, gdeps) -> None:
        """cp.async.bulk.tensor (tile mode): the agent reads the tensor map through the tensormap
        proxy ("The tensorMap is accessed in tensormap proxy"), a weak read whose value, the map's
        global address, decides which words the copy moves: a case split, one path per array the
        map may hold (map_targets; the path assumes the read returns that array's address), each
        then copying the box at the coordinates word by word as cp.async.bulk does."""
        agent = self.agents
        self.agents += 1
        name, where, mdeps = self.tmap_place(ins, ins.tmap, st, t)
        coords = []
        for c in ins.coords:
            v, _ = self.val(c, st, "s32")
            if not isinstance(v, Const):
                raise UnsupportedError(f"a tensor coordinate of `{ins.text}` computed from a loaded value",
                                       ins.pos, "ptxmm needs the box's position: a constant, or a "
                                       "register holding one")
            coords.append(v.v - (1 << 32) if v.v >> 31 else v.v)
        r = self.new_event(st, t, Kind.R, ins, guard, sem="weak", tags=frozenset({"TMAP", "AOP"}),
                           agent=agent, **where)
        self.dep(mdeps, r, "addr")
        self.dep(gdeps, r, "ctrl")
        self.edges |= {(f, r, "tmrange") for f in st.bars.get(("tmacq", name), ())}
        targets = self.map_targets(name)
        cases = [st.fork() for _ in targets[1:]] + [st]
        for case, (arr, addr) in zip(cases, targets):
            eq = mk("eq", ReadVal(r, 64), Const(addr, 64))
            case.assumes.append(eq if guard is None else mk("lor", mk("lnot", guard), eq))
            box = self.box_words(ins, self.locs[name].tensormap, arr, coords)
            self.box_n = len(box)
            if ins.load:
                self.tensor_load(t, ins, case, guard, gdeps, agent, r, box)
            else:
                self.tensor_store(t, ins, case, guard, gdeps, agent, r, box)
            if case is not st:
                case.pc += 1
                self.pending.append(case)

    def box_words(self, ins: TensorCopy, tm: TensorMap, arr: str, coords: list[int]) -> list[str | None]:
        """The global element of each word of the box at ``coords`` (dimension 0 innermost, as the
        box lands in shared memory), None where the box crosses the tensor's boundary."""
        dims = (*tm.dims, 1)[:2]
        box = (*tm.box, 1)[:2]
        c = (*coords, 0)[:2]
        out: list[str | None] = []
        for j1 in range(box[1]):
            for j0 in range(box[0]):
                g0, g1 = c[0] + j0, c[1] + j1
                inside = 0 <= g0 < dims[0] and 0 <= g1 < dims[1]
                out.append(f"{arr}[{g1 * dims[0] + g0}]" if inside else None)
        return out

    def tensor_load(self, t: Thread, ins: TensorCopy, st: _State, guard, gdeps, agent: int, rmap: int,
                    box: list[str | None]) -> None:
        """A tensor load: per box word, the async read of the global element (an addr dependency on
        the tensor map's value) and the async write of the shared word; outside the tensor the
        word is filled with 0 ("Zero fill mode: Elements in the Bounding Box which fall outside of
        the tensor boundary are set to 0", PTX ISA, Tensor › Out of Boundary Access; the default
        of cuTensorMapEncodeTiled); then, per destination CTA, the completion's implicit fence and
        one complete-tx of the box's bytes (CHOICE: the zero-filled words count, as they are
        written)."""
        reads: list[int | None] = []
        for elem in box:
            if elem is None:
                reads.append(None)
                continue
            vl, pl = self.place(elem, t)
            e = self.new_event(st, t, Kind.R, ins, guard, sem="weak", tags=frozenset({"ASYNC", "AOP"}),
                               agent=agent, loc=pl, vloc=vl, w=32)
            self.edges |= {(rmap, e, "aint"), (rmap, e, "addr")}
            self.dep(gdeps, e, "ctrl")
            reads.append(e)
        for rank in self.copy_ranks(t, ins, st):
            f = self.copy_write(t, ins, st, guard, gdeps, reads, rank, agent, zero=rmap)
            where, bdeps = self.mbar_place(ins, ins.mbar, st, t, rank)
            brank = rank if ins.multicast is not None else self.resolve(ins.mbar, st, ins)[1]
            size = Const(4 * len(box), 64)
            cr, cw = self.mbar_rmw(st, t, ins, guard, where, ("relaxed", "release"), "cluster",
                                   (Const(0, 64), False, mk("neg", size)), agent, self.owner(t, brank))
            self.edges |= {(f, cr, "aint"), (cr, cw, "aint")}
            for e in (cr, cw):
                self.dep(bdeps, e, "addr")

    def tensor_store(self, t: Thread, ins: TensorCopy, st: _State, guard, gdeps, agent: int, rmap: int,
                     box: list[str | None]) -> None:
        """A tensor store: per box word, the async read of the shared word and the async write of
        the global element (addr-dependent on the map's value); the read-completion and completion
        fences and the bulk group as cp.async.bulk's. A box crossing the tensor's boundary is not
        supported yet (located)."""
        if None in box:
            raise UnsupportedError(f"`{ins.text}`: a tensor store whose box crosses the tensor's boundary",
                                   ins.pos, "keep the stored box inside the tensor")
        fence = frozenset({"PROXY", "ASYNC", "AOP"})
        reads, writes = [], []
        for k, elem in enumerate(box):
            src, stag, sdeps, _ = self.async_place(ins, ins.smem, "shared", st, t, k=k)
            r = self.new_event(st, t, Kind.R, ins, guard, sem="weak", tags=frozenset({"ASYNC", "AOP"}) | stag,
                               agent=agent, **src)
            vl, pl = self.place(elem, t)
            w = self.new_event(st, t, Kind.W, ins, guard, sem="weak", value=ReadVal(r, 32),
                               tags=frozenset({"ASYNC", "AOP"}), agent=agent, loc=pl, vloc=vl, w=32)
            self.edges |= {(rmap, r, "aint"), (r, w, "data"), (r, w, "aint"), (rmap, w, "addr")}
            self.dep(sdeps, r, "addr")
            for e in (r, w):
                self.dep(gdeps, e, "ctrl")
            reads.append(r)
            writes.append(w)
        f = self.new_event(st, t, Kind.F, ins, guard, tags=fence, agent=agent)
        fr = self.new_event(st, t, Kind.F, ins, guard, tags=fence, agent=agent)
        self.edges |= {(w, f, "aint") for w in writes} | {(r, fr, "aint") for r in reads}
        for e in (f, fr):
            self.dep(gdeps, e, "ctrl")
        st.bars[("bulk", "open")] = st.bars.get(("bulk", "open"), ()) + ((fr, f),)

    def owner(self, t: Thread, rank: int | None) -> Placement | None:
        """The placement of CTA ``rank`` of t's cluster when it is not t's own CTA (None)."""
        if rank is None:
            return None
        key = self.ranks[t.placement.cluster_key][rank]
        return None if key == t.placement.cta_key else self.cta_place[key]

    def bulk_copy(self, t: Thread, ins: BulkCopy, st: _State, guard, gdeps) -> None:
        """The async agent's events (agent = a fresh id, not in po): the reads of src's words and
        the writes of dst's through the async proxy (a copy of 4k bytes moves k consecutive
        words, each read → its write), then one implicit generic-async proxy fence of the copy's
        completion after all the writes; with an mbarrier, one complete-tx of the whole size
        (release, cluster scope) on it after that fence; in a bulk group, also one implicit fence
        after all the reads, which a cp.async.bulk.wait_group.read waits for
        (models/ptx-async.cat, D1). The writes, their fence and the complete-tx are performed in
        the CTA that owns the destination and the mbarrier (``at``, models/ptx-async.cat, D4); a
        multicast copy writes, fences and completes in each CTA of its ctaMask, at dst's and
        mbar's CTA-relative offsets."""
        agent = self.agents
        self.agents += 1
        srcs = [self.async_place(ins, ins.src, ins.src_space, st, t, k=k)
                for k in range(self.copy_words(ins))]
        fence = frozenset({"PROXY", "ASYNC", "AOP"})
        reads = []
        for src, stag, sdeps, _ in srcs:
            r = self.new_event(st, t, Kind.R, ins, guard, sem="weak",
                               tags=frozenset({"ASYNC", "AOP"}) | stag, agent=agent, **src)
            self.dep(sdeps, r, "addr")
            self.dep(gdeps, r, "ctrl")
            reads.append(r)
        for rank in self.copy_ranks(t, ins, st):
            f = self.copy_write(t, ins, st, guard, gdeps, reads, rank, agent)
            if ins.mbar is None:
                fr = self.new_event(st, t, Kind.F, ins, guard, tags=fence, agent=agent)
                self.edges |= {(r, fr, "aint") for r in reads}
                self.dep(gdeps, fr, "ctrl")
                st.bars[("bulk", "open")] = st.bars.get(("bulk", "open"), ()) + ((fr, f),)
                continue
            where, bdeps = self.mbar_place(ins, ins.mbar, st, t, rank)
            size, _ = self.val(ins.size, st, "b64")
            brank = rank if ins.multicast is not None else self.resolve(ins.mbar, st, ins)[1]
            cr, cw = self.mbar_rmw(st, t, ins, guard, where, ("relaxed", "release"), "cluster",
                                   (Const(0, 64), False, mk("neg", size)), agent, self.owner(t, brank))
            self.edges |= {(f, cr, "aint"), (cr, cw, "aint")}
            for e in (cr, cw):
                self.dep(bdeps, e, "addr")

    def copy_ranks(self, t: Thread, ins: BulkCopy, st: _State) -> list[int | None]:
        """The destination CTAs of a copy: the operand's (None: the thread's own), or the ranks of
        a multicast's ctaMask."""
        if ins.multicast is None:
            return [None]
        mask, _ = self.val(ins.multicast, st, "b16")
        n = len(self.ranks[t.placement.cluster_key])
        ranks = [k for k in range(16) if isinstance(mask, Const) and mask.v >> k & 1]
        if not ranks or ranks[-1] >= n:
            raise SemanticError(f"`{ins.text}`: ctaMask names CTA ranks {ranks} of a cluster of {n}",
                                ins.pos, "place a thread in each CTA the mask names (.cluster C .cta K)")
        return ranks

    def copy_write(self, t: Thread, ins: BulkCopy | TensorCopy, st: _State, guard, gdeps,
                   reads: list[int | None], rank: int | None, agent: int, zero: int | None = None) -> int:
        """The copy's writes of its destination's words (in CTA ``rank`` for a multicast), word k
        from read k (a tensor load's word with no read: 0, after the map read ``zero``), and the
        implicit fence of its completion after them all; returns the fence."""
        src = ins.smem if isinstance(ins, TensorCopy) else ins.dst
        dsts = [self.async_place(ins, src, ins.dst_space, st, t, rank, k) for k in range(len(reads))]
        writes = []
        for r, (dst, dtag, ddeps, dat) in zip(reads, dsts):
            if getattr(ins, "op", None) is not None:  # cp.reduce.async.bulk: a read-modify-write of dst
                w = self.bulk_reduce(t, ins, st, guard, gdeps, r, agent, dst, dtag, ddeps)
            else:
                w = self.new_event(st, t, Kind.W, ins, guard, sem="weak",
                                   value=Const(0, 32) if r is None else ReadVal(r, 32),
                                   tags=frozenset({"ASYNC", "AOP"}) | dtag, agent=agent, at=dat, **dst)
            self.edges |= {(zero, w, "aint")} if r is None else {(r, w, "data"), (r, w, "aint")}
            self.dep(ddeps, w, "addr")
            self.dep(gdeps, w, "ctrl")
            writes.append(w)
        f = self.new_event(st, t, Kind.F, ins, guard, tags=frozenset({"PROXY", "ASYNC", "AOP"}),
                           agent=agent, at=dsts[0][3])
        self.edges |= {(w, f, "aint") for w in writes}
        self.dep(gdeps, f, "ctrl")
        return f

    def bulk_reduce(self, t: Thread, ins: BulkCopy, st: _State, guard, gdeps, r: int, agent: int,
                    dst: dict, dtag: frozenset, ddeps) -> int:
        """cp.reduce.async.bulk's reduction of dst: the agent's read and write of dst through the
        async proxy, a read-modify-write whose read is no read operation (RedR, as red's), each
        .relaxed at .gpu scope (PTX ISA, cp.reduce.async.bulk: "Each reduction operation performed
        by cp.reduce.async.bulk has individually .relaxed.gpu memory ordering semantics"); returns
        the write."""
        base = dict(sem="relaxed", scope="gpu", agent=agent, **dst)
        rr = self.new_event(st, t, Kind.R, ins, guard, tags=frozenset({"ASYNC", "AOP", "RMW_R", "RedR"})
                            | dtag, **base)
        new = mk(_alu_op(ins.op, ins.type), ReadVal(rr, 32), ReadVal(r, 32), w=32)
        w = self.new_event(st, t, Kind.W, ins, guard, value=new,
                           tags=frozenset({"ASYNC", "AOP", "RMW_W"}) | dtag, **base)
        self.edges |= {(rr, w, "rmw"), (rr, w, "data"), (r, rr, "aint"), (rr, w, "aint")}
        self.dep(ddeps, rr, "addr")
        self.dep(gdeps, rr, "ctrl")
        return w

    def bulk_group(self, t: Thread, ins: BulkGroup, st: _State, guard, gdeps) -> None:
        """commit_group closes the open bulk copies into a group; wait_group N waits for all
        groups but the N most recent: for the implicit proxy fence of each copy's completion
        (``.read``: of each copy's read). The wait is an event ordered after those fences; it
        is no proxy fence itself (a wait with nothing to wait for orders nothing: D2)."""
        if guard is not None:
            raise UnsupportedError(f"predicated `{ins.text}`", ins.pos)
        groups = st.bars.get(("bulk", "groups"), ())
        if ins.kind == "commit":
            st.bars[("bulk", "groups")] = groups + (st.bars.get(("bulk", "open"), ()),)
            st.bars[("bulk", "open")] = ()
            return
        done = groups[:max(len(groups) - ins.n, 0)]
        e = self.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "BULKWAIT"}))
        for grp in done:
            for fr, f in grp:
                self.edges.add((fr if ins.read else f, e, "done"))
        if not ins.read:
            st.bars[("bulk", "groups")] = groups[len(done):]

    def cp_async(self, t: Thread, ins: CpAsync, st: _State, guard, gdeps) -> None:
        """Ampere cp.async (PTX ISA, cp.async): an asynchronous agent's weak read of src and weak
        write of dst through the generic proxy, ordered after the thread's earlier instructions
        (issue) and with nothing later but through a cp.async group wait or a
        cp.async.mbarrier.arrive."""
        agent = self.agents
        self.agents += 1
        evs = []
        for a, kind, space in ((ins.src, Kind.R, "global"), (ins.dst, Kind.W, "shared")):
            name, rank, adeps = self.resolve(a, st, ins)
            vl, pl = self.place(name, t, rank)
            loc = self.locs[self.p.physical(name)]
            if type_width(loc.type) != 32 or loc.space != space:
                raise SemanticError(f"`{ins.text}`: {name} must be a .{space} 32-bit location",
                                    ins.pos, "cp.async copies one 32-bit word from .global to .shared")
            extra = dict(value=ReadVal(evs[0], 32)) if kind == Kind.W else {}
            e = self.new_event(st, t, kind, ins, guard, sem="weak", agent=agent, loc=pl, vloc=vl, w=32,
                               tags=frozenset({"GEN", "AOP"} | self.space_tag(name)), **extra)
            self.dep(adeps, e, "addr")
            self.dep(gdeps, e, "ctrl")
            evs.append(e)
        r, w = evs
        self.edges |= {(r, w, "data"), (r, w, "aint")}
        for key in (("cpasync", "open"), ("cpasync", "all")):
            st.bars[key] = st.bars.get(key, ()) + (w,)

    def cp_async_group(self, t: Thread, ins: CpAsyncGroup, st: _State, guard, gdeps) -> None:
        """commit_group closes the open cp.async operations into a group; wait_group N waits for
        all groups but the N most recent (wait_all: commit, then wait_group 0); the wait is an
        event after the writes it waited for (bulk_done).  cp.async.mbarrier.arrive: an arrive-on
        the asynchronous agent performs on the mbarrier after all the thread's prior cp.async
        operations (async_int), a release at CTA scope (models/ptx-async.cat); without .noinc the
        thread first raises the pending count by one, so the arrive-on does not count as one of
        the expected arrivals."""
        if ins.kind == "arrive":
            self.cp_async_arrive(t, ins, st, guard, gdeps)
            return
        if guard is not None:
            raise UnsupportedError(f"predicated `{ins.text}`", ins.pos)
        groups = st.bars.get(("cpasync", "groups"), ())
        if ins.kind in ("commit", "wait_all"):
            groups += (st.bars.get(("cpasync", "open"), ()),)
            st.bars[("cpasync", "open")] = ()
        if ins.kind == "commit":
            st.bars[("cpasync", "groups")] = groups
            return
        n = 0 if ins.kind == "wait_all" else ins.n
        done = groups[:max(len(groups) - n, 0)]
        e = self.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "CPWAIT"}))
        for grp in done:
            for w in grp:
                self.edges.add((w, e, "done"))
        st.bars[("cpasync", "groups")] = groups[len(done):]

    def cp_async_arrive(self, t: Thread, ins: CpAsyncGroup, st: _State, guard, gdeps) -> None:
        where, adeps = self.mbar_place(ins, ins.mbar, st, t)
        events = []
        if not ins.noinc:  # pending count + 1 (an arrival of -1), by the thread
            events += self.mbar_rmw(st, t, ins, guard, where, ("relaxed", "relaxed"), "cta",
                                    (Const((1 << 64) - 1, 64), False, Const(0, 64)))
        agent = self.agents
        self.agents += 1
        cr, cw = self.mbar_rmw(st, t, ins, guard, where, ("relaxed", "release"), "cta",
                               (Const(1, 64), False, Const(0, 64)), agent)
        self.edges.add((cr, cw, "aint"))
        for w in st.bars.get(("cpasync", "all"), ()):
            self.edges.add((w, cr, "aint"))
        for e in events + [cr, cw]:
            self.dep(adeps, e, "addr")
            self.dep(gdeps, e, "ctrl")

    def async_store(self, t: Thread, ins: AsyncStore, st: _State, guard, gdeps) -> None:
        """st.async / red.async (PTX ISA): the asynchronous agent's weak store (red.async: a
        relaxed .cluster read-modify-write) of the word through the generic proxy, performed in
        the CTA that owns it, then the complete-tx of its 4 bytes on that CTA's mbarrier (release,
        .cluster; models/ptx-async.cat)."""
        agent = self.agents
        self.agents += 1
        name, rank, adeps = self.resolve(ins.addr, st, ins)
        loc = self.locs[self.p.physical(name)]
        if loc.space != "shared" or type_width(loc.type) != 32:
            raise SemanticError(f"`{ins.text}`: {name} must be a .shared 32-bit location", ins.pos,
                                "st.async and red.async write one word of a CTA's shared memory")
        vl, pl = self.place(name, t, rank)
        at = self.owner(t, rank)
        v, vdeps = self.val(ins.src, st, ins.type)
        base = dict(loc=pl, vloc=vl, w=32, agent=agent, at=at)
        evs = []
        if ins.op is None:
            w = self.new_event(st, t, Kind.W, ins, guard, sem="weak", value=v,
                               tags=frozenset({"GEN", "AOP", "SHM"}), **base)
        else:
            r = self.new_event(st, t, Kind.R, ins, guard, sem="relaxed", scope="cluster",
                               tags=frozenset({"GEN", "AOP", "SHM", "RMW_R", "RedR"}), **base)
            new = mk(_alu_op(ins.op, ins.type), ReadVal(r, 32), v, w=32)
            w = self.new_event(st, t, Kind.W, ins, guard, sem="relaxed", scope="cluster", value=new,
                               tags=frozenset({"GEN", "AOP", "SHM", "RMW_W"}), **base)
            self.edges |= {(r, w, "rmw"), (r, w, "data"), (r, w, "aint")}
            evs.append(r)
        self.dep(vdeps, w, "data")
        where, bdeps = self.mbar_place(ins, ins.mbar, st, t)
        cr, cw = self.mbar_rmw(st, t, ins, guard, where, ("relaxed", "release"), "cluster",
                               (Const(0, 64), False, Const((1 << 64) - 4, 64)), agent,
                               self.owner(t, self.resolve(ins.mbar, st, ins)[1]))
        self.edges |= {(w, cr, "aint"), (cr, cw, "aint")}
        for e in evs + [w]:
            self.dep(adeps, e, "addr")
        for e in (cr, cw):
            self.dep(bdeps, e, "addr")
        for e in evs + [w, cr, cw]:
            self.dep(gdeps, e, "ctrl")

    def elect(self, t: Thread, ins: Elect, st: _State, guard, gdeps) -> None:
        """elect.sync: the thread is the elected lane (p True) on one path and not (p False) on
        another, a path the thread forks here — the execution chooses, never ptxmm; a warning
        when a later instruction or the condition reads p (the outcome may then depend on it)."""
        if guard is not None:
            raise UnsupportedError(f"predicated `{ins.text}`", ins.pos, "elect.sync runs in every lane")
        other = st.fork()
        other.pc += 1
        self.set_reg(other, ins.dst, Const(0, 1), "pred", frozenset(), None)
        self.pending.append(other)
        self.set_reg(st, ins.dst, Const(1, 1), "pred", frozenset(), None)
        if id(ins) not in self.warned and self.reads_later(t, ins.dst.name, ins):
            self.warned[id(ins)] = Diagnostic(
                f"`{ins.text}`: which lane is elected is the execution's choice, and {ins.dst.name} "
                "is read later", ins.pos, f"ptxmm checks both (thread {t.name} elected or not); an "
                "outcome that holds only on one of them depends on the election")

    def reads_later(self, t: Thread, reg: str, ins: Instruction) -> bool:
        cond = self.p.condition
        named = cond is not None and any(getattr(r, "reg", None) == reg and getattr(r, "thread", None)
                                         == t.name for r in cond_refs(cond.expr))
        k = t.instrs.index(ins)
        return named or any(reg in {getattr(o, "name", None) for o in operands(i)}
                            or (i.guard is not None and i.guard[0].name == reg) for i in t.instrs[k + 1:])

    # -- wgmma (PTX ISA, wgmma; models/ptx-async.cat) ------------------------------------------
    def wgmma(self, t: Thread, ins: Wgmma, st: _State, guard, gdeps) -> None:
        """wgmma.fence: the thread may issue mma operations (an mma before the first fence is
        undefined: a located error).  mma: an asynchronous agent reads the A and B words through
        the async proxy (issue orders them after the thread's earlier events), then the implicit
        generic-async proxy fence of its completion; the accumulator gets (scale-d ? D : 0) +
        A * B once a wgmma.wait_group waits for the operation's group (reading it before is
        undefined: a located error).  commit_group / wait_group N as the bulk groups: the wait
        is ordered after the completion fences of all groups but the N newest."""
        if guard is not None:
            raise UnsupportedError(f"predicated `{ins.text}`", ins.pos,
                                   "every thread of the warpgroup executes wgmma instructions")
        if ins.kind == "fence":
            st.bars[("wgmma", "fenced")] = True
            return
        if ins.kind == "mma":
            self.wgmma_mma(t, ins, st, gdeps)
            return
        groups = st.bars.get(("wgmma", "groups"), ())
        if ins.kind == "commit":
            st.bars[("wgmma", "groups")] = groups + (st.bars.get(("wgmma", "open"), ()),)
            st.bars[("wgmma", "open")] = ()
            return
        done = groups[:max(len(groups) - ins.n, 0)]
        e = self.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "WGWAIT"}))
        pending = dict(st.bars.get(("wgmma", "pending"), {}))
        for grp in done:
            for f, reg, value, deps in grp:
                self.edges.add((f, e, "done"))
                pending.pop(reg.name, None)
                self.set_reg(st, reg, value, "s32", deps, None)
        st.bars[("wgmma", "pending")] = pending
        st.bars[("wgmma", "groups")] = groups[len(done):]

    def wgmma_mma(self, t: Thread, ins: Wgmma, st: _State, gdeps) -> None:
        if not st.bars.get(("wgmma", "fenced")):
            raise SemanticError(f"`{ins.text}` before any wgmma.fence", ins.pos,
                                "PTX ISA, wgmma.fence: it must be issued before the first "
                                "wgmma.mma_async of the warpgroup (otherwise undefined)")
        agent = self.agents
        self.agents += 1
        reads = []
        for desc in (ins.a, ins.b):
            name, rank, adeps = self.resolve(Addr(desc), st, ins)
            loc = self.locs[self.p.physical(name)]
            if loc.space != "shared" or type_width(loc.type) != 32 or rank is not None:
                raise SemanticError(f"`{ins.text}`: descriptor {desc.name} must hold the address of "
                                    "a 32-bit .shared location of the thread's CTA", ins.pos,
                                    "mov.u64 %rd0, x; where x is a .shared .u32 word")
            vl, pl = self.place(name, t, None)
            r = self.new_event(st, t, Kind.R, ins, None, sem="weak", loc=pl, vloc=vl, w=32,
                               tags=frozenset({"ASYNC", "AOP", "SHM"}), agent=agent)
            self.dep(adeps, r, "addr")
            self.dep(gdeps, r, "ctrl")
            reads.append(r)
        f = self.new_event(st, t, Kind.F, ins, None, tags=frozenset({"PROXY", "ASYNC", "AOP"}), agent=agent)
        self.edges |= {(r, f, "aint") for r in reads}
        prod = mk("mul", ReadVal(reads[0], 32), ReadVal(reads[1], 32), w=32)
        acc, deps = Const(0, 32), frozenset(reads)
        if not (isinstance(ins.scale_d, Imm) and ins.scale_d.value == 0):
            d, ddeps = self.val(ins.dst, st, "s32")
            p, pdeps = self.val(ins.scale_d, st, None)
            acc, deps = mk("ite", truth(p), d, Const(0, 32)), deps | ddeps | pdeps
        value = mk("add", prod, acc, w=32)
        st.bars[("wgmma", "open")] = st.bars.get(("wgmma", "open"), ()) + ((f, ins.dst, value, deps),)
        st.bars[("wgmma", "pending")] = dict(st.bars.get(("wgmma", "pending"), {})) | {ins.dst.name: ins}

    def not_pending(self, reg: str, st: _State) -> None:
        """Reading an accumulator of a wgmma.mma_async no wgmma.wait_group waited for yet is
        undefined (PTX ISA, wgmma.wait_group): a located error."""
        mma = st.bars.get(("wgmma", "pending"), {}).get(reg)
        if mma is not None:
            raise SemanticError(f"{reg} is read before a wgmma.wait_group waits for `{mma.text}` "
                                f"(line {mma.pos.line if mma.pos else '?'})", self.cur_ins_pos(st),
                                "PTX ISA, wgmma.wait_group: accessing the accumulator before the "
                                "wait is undefined; add wgmma.commit_group and wgmma.wait_group 0")

    def cur_ins_pos(self, st: _State):
        ins = self.p.threads[self.cur].instrs
        return ins[st.pc].pos if st.pc < len(ins) else None

    def finish_guarded(self, st: _State, guard: Expr, gdeps, stack) -> _State:
        other = st.fork()
        other.assumes.append(mk("lnot", guard))
        other.ctrl = other.ctrl | gdeps
        other.pc += 1
        stack.append(other)
        st.assumes.append(guard)
        st.ctrl = st.ctrl | gdeps
        st.pc = 10**9
        return st

    def branch(self, t: Thread, ins: Branch, st: _State, labels, stack) -> _State | None:
        target = labels[ins.target]
        if ins.guard is None:
            cond: Expr = TRUE
            deps: frozenset[int] = frozenset()
        else:
            g, deps = self.val(ins.guard[0], st, None)
            cond = mk("lnot", truth(g)) if ins.guard[1] else truth(g)
        backward = target <= st.pc
        if backward and self.liveness and cond != Const(0, 1):
            self.stuck_at(st, target, cond, deps, ins)
        if backward and ins.guard is not None and self.reduce and self.await_sound(t, target, st.pc) \
                and (self.side_effect_free(t, target, st.pc) or self.cas_retry(t, target, st, cond)):
            self.awaits += 1  # await: assume the loop exits in this iteration
            st.assumes.append(mk("lnot", cond))
            st.ctrl = st.ctrl | deps
            st.pc += 1
            return st
        taken: _State | None = None
        if cond != Const(0, 1):
            taken = st.fork() if cond != TRUE else st
            if cond != TRUE:
                taken.assumes.append(cond)
                taken.ctrl = taken.ctrl | deps
            taken.pc = target
            if backward:
                taken.back[st.pc] = taken.back.get(st.pc, 0) + 1
                if taken.back[st.pc] > self.unroll:
                    self.cut += 1
                    taken = None
        if cond == TRUE:
            return taken
        st.assumes.append(mk("lnot", cond))
        st.ctrl = st.ctrl | deps
        st.pc += 1
        if taken is not None:
            stack.append(taken)
        return st

    def enter(self, ins: Instruction, st: _State) -> None:
        """Liveness graphs: a label is a loop head the path reaches; note the state it finds."""
        if self.liveness and isinstance(ins, Label):
            st.heads[st.pc] = (len(st.events), dict(st.regs), set(), set())

    def blocked_at(self, st: _State, wait: int, part: str, guard: Expr | None) -> None:
        """Liveness graphs: the path that stops at this barrier wait (its thread blocked there)."""
        if not self.liveness or part != "WAIT":
            return
        blocked = st.fork()
        if guard is not None:
            blocked.assumes.append(guard)
        blocked.end, blocked.pc = ("blocked", (wait,)), 10**9
        self.pending.append(blocked)

    def stuck_at(self, st: _State, target: int, cond: Expr, deps, ins: Branch) -> None:
        """Liveness graphs: the path that takes this backward branch and repeats the iteration
        that just ran forever (whether it can is :mod:`ptxmm.liveness`'s query): the iteration's
        events, and "each register ends the iteration as it began it" (a register the iteration
        writes before it reads it needs nothing)."""
        n0, regs0, rbw, _ = st.heads.get(target, (len(st.events), dict(st.regs), set(st.regs), ()))
        eqs = []
        for r in sorted(rbw):  # the registers the iteration reads before it writes them
            v1 = st.regs.get(r)
            if v1 is None:
                continue
            v0 = regs0.get(r, Const(0, v1.w))
            if v1 != v0:
                eqs.append(mk("eq", convert(v0, v1.w), v1))
        stuck = st.fork()
        if cond != TRUE:
            stuck.assumes.append(cond)
            stuck.ctrl = stuck.ctrl | deps
        stuck.end, stuck.pc = ("stuck", (tuple(st.events[n0:]), tuple(eqs), ins)), 10**9
        self.pending.append(stuck)

    def cas_retry(self, t: Thread, start: int, st: _State, cond: Expr) -> bool:
        """A CAS retry loop (``L: atom.cas %r, [x], e, n; setp.ne %p, %r, e; @%p bra L``): the
        body holds what an await allows plus unguarded atom.cas, and the loop goes back only
        when every one of them failed — the branch condition is the negation of each CAS's write
        condition. A repeated iteration then wrote nothing: it is read-only, as an await's
        iterations are, and the loop becomes an await too (Dat3M's dynamic spin-loop detection
        likewise counts an iteration whose stores did not execute as side-effect free)."""
        body = t.instrs[start:st.pc]
        cas = [i for i in body if isinstance(i, Atom)]
        if not cas or not all(isinstance(i, (Label, Load, Mov, Alu, Setp, Selp, Atom)) and i.guard is None
                              for i in body):
            return False
        for ins in cas:
            w = next((e for e in reversed(st.events)
                      if self.events[e].instr is ins and self.events[e].kind == Kind.W), None)
            if ins.op != "cas" or w is None or not _negates(cond, self.events[w].cond):
                return False
        return True

    @staticmethod
    def await_sound(t: Thread, start: int, end: int) -> bool:
        """Whether the loop ``start .. end`` (a straight-line body, the backward branch at
        ``end``) may become an await: no branch enters it but at its head, and no register
        carries from one iteration to the next (none is read in the body, the branch's guard
        included, before the body writes it, and also written by the body). Then each iteration
        computes the same function of the registers it finds at the head — which no iteration
        changes — and of its own reads: an execution that iterates k times ends in the state of
        one that exits at once with the reads of its last iteration (the issue-24 counter
        ``add %r2, %r2, 1`` carries %r2 and keeps its loop unrolled). What remains assumed, as
        Dat3M and GenMC assume it, is that dropping the earlier iterations' reads keeps an
        execution consistent; tests/test_awaits.py compares the reduction with the plain
        unrolling on generated loops."""
        body = t.instrs[start:end + 1]
        inner = {i.name for i in body[1:] if isinstance(i, Label)}
        if any(isinstance(i, Branch) and i.target in inner for i in t.instrs):
            return False
        written: set[str] = set()
        carried: set[str] = set()
        for ins in body:
            regs = [o.base if isinstance(o, Addr) else o for o in operands(ins)]
            regs += [ins.guard[0]] if ins.guard is not None else []
            carried |= {r.name for r in regs if isinstance(r, Reg) and r.name not in written}
            dst = getattr(ins, "dst", None)
            if isinstance(dst, Reg):
                written.add(dst.name)
        return not carried & written

    @staticmethod
    def side_effect_free(t: Thread, start: int, end: int) -> bool:
        """Only loads, mbarrier waits and register arithmetic (an await, see the module doc)."""
        return all((isinstance(i, (Label, Load, Mov, Alu, Setp, Selp))
                    or (isinstance(i, MBarrier) and i.op in ("test_wait", "try_wait")))
                   and i.guard is None for i in t.instrs[start:end])


def _mbar_count(ins: MBarrier, what: str, v: Expr) -> None:
    """A constant count of an mbarrier instruction fits the object's 16-bit fields (mbarrier.py;
    the ISA's limit is 2^20 - 1: a larger count would wrap around and complete phases early), and
    an expected count is at least 1 (as the declaration ``mbarrier.init(N)`` requires)."""
    if not isinstance(v, Const):
        return
    if ins.op == "init" and v.v == 0:
        raise SemanticError(f"`{ins.text}`: expected arrival count 0", ins.pos,
                            "an mbarrier phase completes after 1 or more arrivals")
    if v.v >= 1 << 16:
        raise UnsupportedError(f"`{ins.text}`: {what} {v.v} (ptxmm counts an mbarrier's arrivals "
                               "and transaction bytes in 16 bits)", ins.pos,
                               "use counts up to 65535 (the ISA allows up to 2^20 - 1)")


def _negates(c: Expr, g: Expr) -> bool:
    """Whether ``c`` is syntactically the negation of the equality ``g`` (ne a b, or not (eq a b))."""
    if not (isinstance(g, Op) and g.op == "eq"):
        return False
    if isinstance(c, Op) and c.op == "lnot":
        return c.args[0] == g
    return isinstance(c, Op) and c.op == "ne" and c.args in (g.args, g.args[::-1])


def build(prog: Program, unroll: int = 2, awaits: bool = True, liveness: bool = False,
          prefixes: bool = False) -> EventGraph:
    """Unroll every thread of ``prog`` and build its event graph (``awaits=False``: no spin loop
    is reduced to an await, every loop is unrolled — for tests of the reduction). ``liveness``:
    also the paths that hang (PathInfo.kind "stuck" and "blocked"; :mod:`ptxmm.liveness` asks
    which of them an execution can take forever), and with ``prefixes`` every prefix of a path
    (a thread the scheduler may stop). Only liveness queries use such a graph."""
    b = _Builder(prog, unroll, awaits, liveness)
    # initial writes: one per physical location (shared ones: one per CTA that uses them)
    ctas: dict = {}
    for t in prog.threads:
        ctas.setdefault(t.placement.cta_key, t)
    init: dict[str, int] = {}
    loc_of_name: dict[str, list[str]] = {}
    for loc in prog.locations:
        holders = list(ctas.values()) if loc.space == "shared" else [prog.threads[0]]
        for t in holders:
            vl, pl = b.place(loc.name, t)
            loc_of_name.setdefault(loc.name, []).append(pl)
            if loc.alias_of is None and pl not in init:
                w = type_width(loc.type)
                init[pl] = len(b.events)
                b.events.append(_Proto(Kind.W, -1, 0, None, loc=pl, vloc=vl, w=w,
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
    return _freeze(b, prog, all_paths, init, loc_of_name)


def _freeze(b: _Builder, prog: Program, all_paths, init, loc_of_name) -> EventGraph:
    """Drop events that lie on no surviving path (cut by the bound), renumber densely and freeze."""
    keep = [i for i, e in enumerate(b.events) if e.paths]
    remap = {old: new for new, old in enumerate(keep)}
    f = remap.__getitem__
    events = []
    for old in keep:
        e = b.events[old]
        bar = None
        if e.barrier is not None:
            bar = (tuple(substitute(x, f) for x in e.barrier[0]), *e.barrier[1:])
        events.append(Event(f(old), e.kind, e.thread, e.index, frozenset(e.paths), e.sem, e.scope,
                            e.loc, e.vloc, e.w, None if e.value is None else substitute(e.value, f),
                            substitute(e.cond, f), e.tags, e.instr, bar, e.agent,
                            None if e.ok is None else substitute(e.ok, f), e.at))
    edges: dict[str, list[tuple[int, int]]] = {"rmw": [], "addr": [], "data": [], "ctrl": [],
                                               "aint": [], "done": [], "tmrange": []}
    for a, c, k in sorted(b.edges):
        if a in remap and c in remap:
            edges[k].append((remap[a], remap[c]))
    paths = tuple(tuple(PathInfo(tuple(f(x) for x in p.events),
                                 tuple(substitute(x, f) for x in p.assumes),
                                 {r: substitute(x, f) for r, x in p.regs.items()}, p.reg_types,
                                 p.kind, _remap_end(p.end, f), p.marks)
                        for p in ps) for ps in all_paths)
    return EventGraph(prog, tuple(events), paths, {k: tuple(v) for k, v in edges.items()},
                      {k: f(v) for k, v in init.items()}, b.cut, b.awaits, b.unroll,
                      {k: tuple(v) for k, v in loc_of_name.items()}, tuple(b.unspecs),
                      tuple(b.warned.values()))


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
                out.append(PathInfo(key[0], key[1], p.regs, p.reg_types, "prefix", (), p.marks[:j]))
    return out


def _remap_end(end: tuple, f) -> tuple:
    if len(end) == 3:  # stuck: (events, equalities, branch)
        return (tuple(f(x) for x in end[0]), tuple(substitute(x, f) for x in end[1]), end[2])
    return tuple(f(x) for x in end)


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


def _cta_label(cta: tuple) -> str:
    """A CTA's part of a shared location's name: ``gpu.cluster.cta`` for a thread in an explicit
    cluster, ``gpu.cta`` for one in its CTA's implicit 1x1x1 cluster (unique: two parts against
    three; never the key's internal tuple)."""
    gpu, cluster, cta_n = cta
    return f"{gpu}.{cta_n}" if isinstance(cluster, tuple) else f"{gpu}.{cluster}.{cta_n}"
