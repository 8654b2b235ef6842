"""Program → EventGraph.

Each thread is executed symbolically. Branches fork the execution into *paths* (bounded unrolling
of backward branches, ``unroll`` iterations at most); events created before a fork are shared by
the paths that continue from it, so every event carries the set of paths it belongs to. Exactly
one path per thread runs in an execution (the solver picks it). A side-effect-free spin loop (only
loads and register arithmetic in its body) is reduced to an *await*: one iteration whose exit
condition is assumed, as Dat3M and GenMC do. Paths cut by the unrolling bound are dropped and
counted, so reports can say the bound cut executions.

Register values are :mod:`ptxmm.values` expressions over the values returned by read events;
syntactic dependencies (addr, data, ctrl) are tracked alongside."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from .errors import SemanticError, UnsupportedError
from .program import Addr, Imm, Instruction, Program, Reg, RegRef, Sym, Thread
from .values import Const, Expr, ReadVal, mk, reads_of

MAX_PATHS = 512
ADDR_BASE = 0x1000


@dataclass
class Event:
    eid: int
    kind: str  # R W F (memory/proxy fence) B (barrier)
    thread: int  # -1 for initial writes
    sem: str | None = None  # weak relaxed acquire release acq_rel sc
    scope: str | None = None
    loc: str | None = None  # virtual location (address identity)
    ploc: str | None = None  # physical location
    value: Expr | None = None  # value written (W)
    guard: Expr = Const(1)  # extra execution condition (failed cas, predication)
    tags: set[str] = field(default_factory=set)
    instr: Instruction | None = None
    paths: set[int] = field(default_factory=set)
    index: int = 0  # position in its thread's program order
    barrier: tuple | None = None  # (id, count, occurrence) for B events

    @property
    def label(self) -> str:
        if self.thread < 0:
            return f"init {self.ploc}={self.value.v if isinstance(self.value, Const) else '?'}"
        text = self.instr.text if self.instr else self.kind
        if "ARRIVE" in self.tags:
            text += " (arrive)"
        elif "WAIT" in self.tags:
            text += " (wait)"
        if "RMW_W" in self.tags:
            text += " (write)"
        elif "RMW_R" in self.tags:
            text += " (read)"
        return text


@dataclass
class PathInfo:
    events: list[int]  # in program order
    assumes: list[Expr]  # boolean expressions that must hold for the path to run
    regs: dict[str, Expr]  # final register values
    reg_deps: dict[str, frozenset[int]]


@dataclass
class EventGraph:
    program: Program
    events: list[Event]
    paths: list[list[PathInfo]]  # per thread
    graph: nx.MultiDiGraph
    init: dict[str, int]  # physical location → initial write
    cut_paths: int = 0
    awaits: int = 0
    unroll: int = 2
    loc_of_name: dict[str, list[str]] = field(default_factory=dict)  # location name → ploc(s)

    def edges(self, label: str) -> list[tuple[int, int]]:
        return [(a, b) for a, b, k in self.graph.edges(keys=True) if k == label]

    @property
    def n(self) -> int:
        return len(self.events)

    def thread_of(self, name: str) -> int:
        for t in self.program.threads:
            if t.name == name:
                return t.index
        if name.isdigit() and int(name) < len(self.program.threads):
            return int(name)
        if name.startswith("P") and name[1:].isdigit():
            return int(name[1:])
        raise SemanticError(f"unknown thread {name}")


@dataclass
class _State:
    pc: int
    regs: dict[str, Expr]
    deps: dict[str, frozenset[int]]
    assumes: list[Expr]
    ctrl: frozenset[int]
    events: list[int]
    back: dict[int, int]
    bars: dict  # barrier operands → occurrences so far

    def fork(self) -> _State:
        return _State(self.pc, dict(self.regs), dict(self.deps), list(self.assumes), self.ctrl,
                      list(self.events), dict(self.back), dict(self.bars))


class _Builder:
    def __init__(self, prog: Program, unroll: int):
        self.p = prog
        self.unroll = unroll
        self.events: list[Event] = []
        self.edges: list[tuple[int, int, str]] = []
        self.cut = 0
        self.awaits = 0
        self.addr_of = {loc.name: ADDR_BASE * (i + 1) for i, loc in enumerate(prog.locations)}
        self.name_of_addr = {v: k for k, v in self.addr_of.items()}
        self.locs = {loc.name: loc for loc in prog.locations}

    # -- locations ---------------------------------------------------------------------------
    def vloc(self, name: str, t: Thread) -> tuple[str, str]:
        loc = self.locs[name]
        root = loc.alias_of or name
        if loc.space == "shared":
            suffix = "@" + ".".join(map(str, t.placement.cta_key))
            return name + suffix, root + suffix
        return name, root

    def resolve(self, a: Addr, st: _State, t: Thread, ins: Instruction) -> tuple[str, frozenset]:
        if isinstance(a.base, Sym):
            return a.base.name, frozenset()
        e = st.regs.get(a.base.name, Const(0))
        deps = st.deps.get(a.base.name, frozenset())
        if isinstance(e, Const) and e.v in self.name_of_addr:
            return self.name_of_addr[e.v], deps
        if reads_of(e):
            raise UnsupportedError("address depends on a loaded value", ins.pos,
                                   "ptxmm needs addresses it can compute statically; a fake "
                                   "dependency such as `xor r, r, r` then `add` is fine")
        raise SemanticError(f"register {a.base.name} does not hold a location address", ins.pos,
                            f"load it first, e.g. `mov.u64 {a.base.name}, x;`")

    # -- values ------------------------------------------------------------------------------
    def val(self, o, st: _State) -> tuple[Expr, frozenset[int]]:
        if isinstance(o, Imm):
            return Const(o.value), frozenset()
        if isinstance(o, Sym):
            return Const(self.addr_of[o.name]), frozenset()
        if isinstance(o, Reg):
            return st.regs.get(o.name, Const(0)), st.deps.get(o.name, frozenset())
        raise AssertionError(o)

    def new_event(self, st: _State, t: Thread, **kw) -> Event:
        e = Event(eid=len(self.events), thread=t.index, index=len(st.events), **kw)
        self.events.append(e)
        for prev in st.events:
            self.edges.append((prev, e.eid, "po"))
        st.events.append(e.eid)
        for c in st.ctrl:
            self.edges.append((c, e.eid, "ctrl"))
        return e

    def set_reg(self, st: _State, r: Reg, e: Expr, deps: frozenset, guard: Expr | None):
        if guard is not None:
            old = st.regs.get(r.name, Const(0))
            e = mk("ite", guard, e, old)
            deps = deps | st.deps.get(r.name, frozenset())
        st.regs[r.name] = e
        st.deps[r.name] = deps

    # -- one thread --------------------------------------------------------------------------
    def thread(self, t: Thread) -> list[PathInfo]:
        labels = {ins.label: i for i, ins in enumerate(t.instrs) if ins.op == "label"}
        regs = {}
        for name, v in t.init_regs:
            regs[name] = Const(self.addr_of[v]) if isinstance(v, str) else Const(v)
        stack = [_State(0, regs, {}, [], frozenset(), [], {}, {})]
        done: list[PathInfo] = []
        while stack:
            st = stack.pop()
            while st is not None and st.pc < len(t.instrs):
                ins = t.instrs[st.pc]
                st = self.step(t, ins, st, labels, stack)
            if st is not None:
                done.append(PathInfo(st.events, st.assumes, st.regs, st.deps))
            if len(done) + len(stack) > MAX_PATHS:
                raise UnsupportedError(f"thread {t.name} has more than {MAX_PATHS} paths",
                                       t.pos, "lower --unroll or simplify the branches")
        return done

    def step(self, t: Thread, ins: Instruction, st: _State, labels, stack) -> _State | None:
        guard = None
        gdeps: frozenset[int] = frozenset()
        if ins.guard is not None and ins.op != "bra":
            g, gdeps = self.val(ins.guard[0], st)
            guard = mk("lnot", g) if ins.guard[1] else mk("ne", g, Const(0))
            if isinstance(guard, Const):
                if not guard.v:
                    st.pc += 1
                    return st
                guard = None
        op = ins.op
        ev_guard = guard if guard is not None else Const(1)
        if op in ("ld", "st", "atom", "red"):
            name, adeps = self.resolve(ins.addr, st, t, ins)
            vl, pl = self.vloc(name, t)
            tags = {"VOL"} if ins.volatile else set()
            base = dict(scope=ins.scope, loc=vl, ploc=pl, instr=ins)
            extra_ctrl = gdeps
            if op == "ld":
                r = self.new_event(st, t, kind="R", sem=ins.sem, guard=ev_guard, tags=tags, **base)
                self.deps(r, adeps, extra_ctrl)
                self.set_reg(st, ins.dst, ReadVal(r.eid), frozenset({r.eid}), guard)
            elif op == "st":
                v, vdeps = self.val(ins.srcs[0], st)
                w = self.new_event(st, t, kind="W", sem=ins.sem, value=v, guard=ev_guard,
                                   tags=tags, **base)
                self.deps(w, adeps, extra_ctrl)
                for d in vdeps:
                    self.edges.append((d, w.eid, "data"))
            else:
                rsem, wsem = {"relaxed": ("relaxed", "relaxed"), "acquire": ("acquire", "relaxed"),
                              "release": ("relaxed", "release"),
                              "acq_rel": ("acquire", "release")}[ins.sem]
                rtags = tags | {"RMW_R"} | ({"RedR"} if op == "red" else set())
                r = self.new_event(st, t, kind="R", sem=rsem, guard=ev_guard, tags=rtags, **base)
                self.deps(r, adeps, extra_ctrl)
                old = ReadVal(r.eid)
                args = [self.val(s, st) for s in ins.srcs]
                aop = ins.aop
                if aop in ("min", "max") and ins.type and ins.type.startswith(("u", "b")):
                    aop += "u"
                if aop == "cas":
                    newv = mk("cas", old, args[0][0], args[1][0])
                    wguard = mk("land", ev_guard, mk("eq", old, args[0][0]))
                else:
                    newv = mk(aop, old, *(a[0] for a in args))
                    wguard = ev_guard
                w = self.new_event(st, t, kind="W", sem=wsem, value=newv, guard=wguard,
                                   tags=tags | {"RMW_W"}, **base)
                self.deps(w, adeps, extra_ctrl)
                self.edges.append((r.eid, w.eid, "rmw"))
                if aop != "exch":  # the written value is computed from the value read
                    self.edges.append((r.eid, w.eid, "data"))
                for a in args:
                    for d in a[1]:
                        self.edges.append((d, w.eid, "data"))
                if op == "atom":
                    self.set_reg(st, ins.dst, old, frozenset({r.eid}), guard)
        elif op == "fence":
            e = self.new_event(st, t, kind="F", sem=ins.sem, scope=ins.scope, instr=ins,
                               guard=ev_guard)
            self.deps(e, frozenset(), gdeps)
        elif op == "fence_proxy":
            e = self.new_event(st, t, kind="F", instr=ins, guard=ev_guard,
                               tags={"PROXY", ins.proxy.upper()})
            self.deps(e, frozenset(), gdeps)
        elif op == "bar":
            ident = [self.val(o, st) for o in ins.barrier[0]]
            cnt = self.val(ins.barrier[1], st)[0] if ins.barrier[1] is not None else None
            if cnt is not None and not isinstance(cnt, Const):
                raise UnsupportedError("barrier thread count depends on a loaded value", ins.pos)
            key = tuple(repr(o) for o in ins.barrier[0])
            k = st.bars.get(key, 0)
            st.bars[key] = k + 1
            info = (tuple(x[0] for x in ident), None if cnt is None else cnt.v, k)
            bdeps = frozenset().union(*(x[1] for x in ident))
            a = self.new_event(st, t, kind="B", instr=ins, guard=ev_guard, scope="cta",
                               barrier=info, tags={"BAR", "ARRIVE"})
            self.deps(a, bdeps, gdeps)
            if ins.bar_kind != "arrive":
                w = self.new_event(st, t, kind="B", instr=ins, guard=ev_guard, scope="cta",
                                   barrier=info, tags={"BAR", "WAIT"})
                self.deps(w, bdeps, gdeps)
        elif op == "mov":
            v, d = self.val(ins.srcs[0], st)
            self.set_reg(st, ins.dst, v, d | gdeps, guard)
        elif op == "alu":
            vals = [self.val(s, st) for s in ins.srcs]
            v = mk(ins.aop, *(x[0] for x in vals))
            self.set_reg(st, ins.dst, v, frozenset().union(*(x[1] for x in vals)), guard)
        elif op == "setp":
            (a, da), (b, db) = (self.val(s, st) for s in ins.srcs)
            self.set_reg(st, ins.dst, mk(ins.aop, a, b), da | db, guard)
        elif op == "selp":
            (a, da), (b, db), (p, dp) = (self.val(s, st) for s in ins.srcs)
            self.set_reg(st, ins.dst, mk("ite", p, a, b), da | db | dp, guard)
        elif op == "ret":
            return self.finish_guarded(st, guard, gdeps, stack) if guard is not None else \
                _State(len(t.instrs), st.regs, st.deps, st.assumes, st.ctrl, st.events, st.back,
                       st.bars)
        elif op == "bra":
            return self.branch(t, ins, st, labels, stack)
        st.pc += 1
        return st

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

    def deps(self, e: Event, adeps: frozenset, cdeps: frozenset) -> None:
        for d in adeps:
            self.edges.append((d, e.eid, "addr"))
        for d in cdeps:
            self.edges.append((d, e.eid, "ctrl"))

    def branch(self, t: Thread, ins: Instruction, st: _State, labels, stack) -> _State | None:
        target = labels[ins.label]
        if ins.guard is None:
            cond: Expr = Const(1)
            deps: frozenset[int] = frozenset()
        else:
            g, deps = self.val(ins.guard[0], st)
            cond = mk("lnot", g) if ins.guard[1] else mk("ne", g, Const(0))
        backward = target <= st.pc
        if backward and ins.guard is not None and self.side_effect_free(t, target, st.pc):
            # await: assume the loop exits in this iteration
            self.awaits += 1
            st.assumes.append(mk("lnot", cond))
            st.ctrl = st.ctrl | deps
            st.pc += 1
            return st
        taken: _State | None = None
        if not (isinstance(cond, Const) and not cond.v):
            taken = st.fork() if not isinstance(cond, Const) else st
            if not isinstance(cond, Const):
                taken.assumes.append(cond)
                taken.ctrl = taken.ctrl | deps
            taken.pc = target
            if backward:
                taken.back[st.pc] = taken.back.get(st.pc, 0) + 1
                if taken.back[st.pc] > self.unroll:
                    self.cut += 1
                    taken = None
        if isinstance(cond, Const) and cond.v:
            return taken
        st.assumes.append(mk("lnot", cond))
        st.ctrl = st.ctrl | deps
        st.pc += 1
        if taken is not None:
            stack.append(taken)
        return st

    @staticmethod
    def side_effect_free(t: Thread, start: int, end: int) -> bool:
        body = t.instrs[start:end]
        return all(i.op in ("label", "ld", "mov", "alu", "setp", "selp") and i.guard is None
                   for i in body)


def build(prog: Program, unroll: int = 2) -> EventGraph:
    """Unroll every thread of ``prog`` and build its event graph."""
    b = _Builder(prog, unroll)
    # initial writes: one per physical location (shared ones: one per CTA that uses them)
    ctas = {}
    for t in prog.threads:
        ctas.setdefault(t.placement.cta_key, t)
    init: dict[str, int] = {}
    loc_of_name: dict[str, list[str]] = {}
    for loc in prog.locations:
        holders = list(ctas.values()) if loc.space == "shared" else [prog.threads[0]]
        for t in holders:
            vl, pl = b.vloc(loc.name, t)
            loc_of_name.setdefault(loc.name, []).append(pl)
            if loc.alias_of is None and pl not in init:
                ev = Event(eid=len(b.events), kind="W", thread=-1, loc=vl, ploc=pl,
                           value=Const(loc.init), tags={"IW"}, paths={0})
                b.events.append(ev)
                init[pl] = ev.eid
    all_paths: list[list[PathInfo]] = []
    for t in prog.threads:
        paths = b.thread(t)
        if not paths:
            paths = []
        all_paths.append(paths)
        for k, pth in enumerate(paths):
            for eid in pth.events:
                b.events[eid].paths.add(k)
    # drop events that belong to no surviving path (cut by the bound), renumber densely
    keep = [e for e in b.events if e.paths]
    remap = {e.eid: i for i, e in enumerate(keep)}
    for e in keep:
        e.eid = remap[e.eid]
        e.value = _remap_expr(e.value, remap) if e.value is not None else None
        e.guard = _remap_expr(e.guard, remap)
        if e.barrier is not None:
            e.barrier = (tuple(_remap_expr(x, remap) for x in e.barrier[0]), *e.barrier[1:])
    g = nx.MultiDiGraph()
    for e in keep:
        g.add_node(e.eid, kind=e.kind, thread=e.thread, sem=e.sem, scope=e.scope, loc=e.loc,
                   ploc=e.ploc, label=e.label)
    for a, c, k in set(b.edges):
        if a in remap and c in remap:
            g.add_edge(remap[a], remap[c], key=k)
    for paths in all_paths:
        for pth in paths:
            pth.events = [remap[x] for x in pth.events]
            pth.assumes = [_remap_expr(x, remap) for x in pth.assumes]
            pth.regs = {r: _remap_expr(x, remap) for r, x in pth.regs.items()}
            pth.reg_deps = {r: frozenset(remap[x] for x in d if x in remap)
                            for r, d in pth.reg_deps.items()}
    init = {k: remap[v] for k, v in init.items()}
    return EventGraph(prog, keep, all_paths, g, init, b.cut, b.awaits, unroll, loc_of_name)


def _remap_expr(e: Expr, remap: dict[int, int]) -> Expr:
    if isinstance(e, ReadVal):
        return ReadVal(remap[e.eid])
    if isinstance(e, Const):
        return e
    return type(e)(e.op, tuple(_remap_expr(a, remap) for a in e.args))


def final_reg_expr(eg: EventGraph, ref: RegRef) -> list[Expr]:
    """The final value of a register on each path of its thread."""
    t = eg.thread_of(ref.thread)
    init = dict(eg.program.threads[t].init_regs)
    default = init.get(ref.reg, 0)
    dflt = Const(default) if isinstance(default, int) else Const(0)
    return [p.regs.get(ref.reg, dflt) for p in eg.paths[t]]
