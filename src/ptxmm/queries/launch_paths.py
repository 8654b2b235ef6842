"""One kernel thread executed symbolically, for the every-launch-size race check
(:mod:`.any_launch`): its ids and the launch's dimensions are unknowns, so one run of the body
describes every thread of every launch.

The kernel's body (as :func:`ptxmm.kernel.instantiate.instantiate` expands it: parameters bound to
their buffers' base addresses) is run along every path of its control flow. A register holds a
:mod:`ptxmm.ir.values` expression over a few leaves (``ReadVal`` ids): ``%tid.x`` (:data:`TID`),
``%ctaid.x`` (:data:`CTAID`), ``%ntid.x`` (:data:`NTID`) and ``%nctaid.x`` (:data:`NCTAID`) — the
launch is one-dimensional: ``.y``/``.z`` ids are 0, their dimensions 1 — and one fresh unknown
(:data:`HAVOC` and up) per value the thread loads: what another thread writes is abstracted as
any value, as GPUVerify abstracts shared state (sound for races: a value the model allows is one
of them). A path records its condition, its memory accesses (each with the *barrier interval* it
lies in: the number of ``bar.sync`` the path passed before it) and its sequence of barriers.

What the encoding does not cover raises :class:`Outside` with the form that put the kernel
outside (a loop, an mbarrier, a warp collective, a partial barrier, an address not computed from a
buffer, ...): the caller falls back to the concrete launch check."""

from __future__ import annotations

from dataclasses import field

from .._infra.records import record
from ..ir.floats import split_source
from ..ir.instructions import (
    Alu,
    Atom,
    Barrier,
    Branch,
    Fence,
    Halt,
    Imm,
    Label,
    Load,
    Mov,
    Nanosleep,
    Red,
    Reg,
    Ret,
    Selp,
    Setp,
    Store,
    Sym,
    type_signed,
    type_width,
)
from ..ir.layout import SLOT, Layout
from ..ir.values import BIT_OPS, FALSE, TRUE, Const, Expr, Op, ReadVal, convert, division, mk, reads_of, truth
from ..semantics.registers import _cmp_op, alu_op

TID, CTAID, NTID, NCTAID = 0, 1, 2, 3
HAVOC = 1000  # the first id of a loaded (unknown) value
MAX_PATHS = 256
_SREGS = {"%tid.x": ReadVal(TID, 32), "%ctaid.x": ReadVal(CTAID, 32), "%ntid.x": ReadVal(NTID, 32),
          "%nctaid.x": ReadVal(NCTAID, 32)}
_ONE_D = {"%tid.y": 0, "%tid.z": 0, "%ctaid.y": 0, "%ctaid.z": 0, "%ntid.y": 1, "%ntid.z": 1,
          "%nctaid.y": 1, "%nctaid.z": 1}
_OTHER_SREGS = {"%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%dynamic_smem_size",
                "%total_smem_size", "%aggr_smem_size", "%is_explicit_cluster"}
_OTHER_PREFIXES = ("%envreg", "%lanemask", "%cluster", "%clock", "%globaltimer", "%pm", "%reserved",
                   "%current_graph_exec", "%nclusterid", "%clusterid", "%hwtaskid")


class Outside(Exception):
    """The kernel is outside what the every-launch encoding covers: ``reason`` names the form."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@record
class Access:
    """One memory access of a path: ``offset`` (64-bit) from the base of buffer ``region`` (in
    ``space``), ``size`` bytes; ``strong``: relaxed/acquire/release/volatile or atomic (PTX ISA
    8.4, strong operations) at ``scope``; ``interval``: the barriers passed before it;
    ``havoc``: its address depends on a loaded value."""

    cond: Expr
    region: str
    space: str
    offset: Expr
    size: int
    write: bool
    strong: bool
    scope: str | None
    interval: int
    text: str
    line: int | None
    cuda: str | None
    havoc: bool


@record
class Path:
    """One path of the thread: its condition, its accesses, its barriers (id, PTX line) in order,
    and how it ends ("ret", or "halt": a failing ``assert()``/``trap``, which ends the grid)."""

    cond: Expr
    accesses: tuple[Access, ...]
    barriers: tuple[tuple[int, int | None], ...]
    end: str


@record
class ThreadPaths:
    paths: tuple[Path, ...]
    widths: dict = field(default_factory=dict)  # ReadVal id → width (the unknowns)


@record(frozen=False, eq=False)
class _State:
    pc: int
    cond: Expr
    regs: dict
    types: dict
    accesses: list
    barriers: list


def _where(ins) -> tuple[str, int | None, str | None]:
    pos = ins.pos
    line = getattr(pos, "line", None)
    src = getattr(pos, "src", None)
    cuda = f"{src.file.rsplit('/', 1)[-1]}:{src.line}" if src is not None else None
    return ins.text, line, cuda


class _Runner:
    def __init__(self, body, layout: Layout):
        self.body = body
        self.layout = layout
        self.labels = {ins.name: k for k, ins in enumerate(body) if isinstance(ins, Label)}
        self.addr_of = {r.ptx: r.base for r in layout.regions}
        self.widths: dict[int, int] = {TID: 32, CTAID: 32, NTID: 32, NCTAID: 32}
        self.paths: list[Path] = []

    def fresh(self, w: int) -> ReadVal:
        eid = HAVOC + len(self.widths)
        self.widths[eid] = w
        return ReadVal(eid, w)

    def val(self, o, st: _State, ty: str | None) -> Expr:
        w = type_width(ty) if ty else None
        if isinstance(o, Imm):
            return Const(o.value % (1 << (w or 64)), w or 64)
        if isinstance(o, Sym):
            if o.name not in self.addr_of:
                raise Outside(f"the symbol {o.name}")
            e: Expr = Const(self.addr_of[o.name], 64)
            return convert(e, w) if w else e
        if isinstance(o, Reg):
            e = st.regs.get(o.name)
            if e is None:
                e = self.special(o.name)
            if w is not None:
                e = convert(e, w, type_signed(st.types.get(o.name, ty)))
            return e
        raise Outside(f"the operand {o}")

    def special(self, name: str) -> Expr:
        if name in _SREGS:
            return _SREGS[name]
        if name in _ONE_D:
            return Const(_ONE_D[name], 32)
        if name == "%laneid":
            return mk("urem", _SREGS["%tid.x"], Const(32, 32))
        if name.startswith("%ptxmm.") or "." not in name and name not in _OTHER_SREGS \
                and not name.startswith(_OTHER_PREFIXES):
            return Const(0, 32)  # a register never written on this path: as the event builder reads it
        raise Outside(f"the special register {name}")

    def set(self, st: _State, r: Reg, e: Expr, ty: str, guard: Expr | None) -> None:
        if guard is not None:
            old = st.regs.get(r.name)
            old = Const(0, e.w) if old is None else convert(old, e.w)
            e = mk("ite", guard, e, old)
        st.regs[r.name] = e
        st.types[r.name] = ty

    def register(self, ins, st: _State, guard: Expr | None) -> None:
        match ins:
            case Mov():
                self.set(st, ins.dst, self.val(ins.src, st, ins.type), ins.type, guard)
            case Alu() if ins.op.startswith("f."):
                # floating point: any value (no address or branch of the encoding needs its bits)
                self.set(st, ins.dst, self.fresh(type_width(ins.type)), ins.type, guard)
            case Alu() if split_source(ins.op)[0] in BIT_OPS:
                op, sty = split_source(ins.op)
                x = self.val(ins.srcs[0], st, sty or ins.type)
                self.set(st, ins.dst, mk(op, x, w=type_width(ins.type)), ins.type, guard)
            case Alu():
                w = type_width(ins.type)
                op = alu_op(ins.op, ins.type)
                vals = [self.val(s, st, ins.type) for s in ins.srcs]
                if op in ("shl", "shr", "sar"):
                    vals[1] = self.val(ins.srcs[1], st, "u32")
                if op in ("udiv", "sdiv", "urem", "srem"):  # by zero: unspecified, any value
                    v = division(op, vals[0], vals[1], w, lambda: self.fresh(w))
                else:
                    v = mk(op, *vals, w=w)
                self.set(st, ins.dst, v, ins.type, guard)
            case Setp():
                if ins.type.startswith("f"):
                    v: Expr = self.fresh(1)
                else:
                    v = mk(_cmp_op(ins.cmp, ins.type), self.val(ins.a, st, ins.type),
                           self.val(ins.b, st, ins.type), w=1)
                self.set(st, ins.dst, v, "pred", guard)
            case Selp():
                p = truth(self.val(ins.p, st, None))
                v = mk("ite", p, self.val(ins.a, st, ins.type), self.val(ins.b, st, ins.type))
                self.set(st, ins.dst, v, ins.type, guard)

    def access(self, ins, st: _State, guard: Expr | None, write: bool, strong: bool,
               scope: str | None, size: int) -> None:
        if getattr(ins, "proxy", "generic") != "generic":
            raise Outside(f"`{ins.text}` (the {ins.proxy} proxy)")
        base = self.val(ins.addr.base, st, None)
        addr = mk("add", convert(base, 64), Const(ins.addr.offset % (1 << 64), 64))
        regions = {r for c in _consts(addr) for r in self.layout.regions if r.base <= c < r.base + SLOT}
        if len(regions) != 1:
            text, line, _ = _where(ins)
            raise Outside(f"`{text}` (line {line}): an address not computed from one buffer")
        r = regions.pop()
        space = ins.space or r.space
        if space not in ("global", "shared") or space != r.space:
            raise Outside(f"`{ins.text}`: an access to .{space} memory")
        off = mk("sub", addr, Const(r.base, 64))
        cond = st.cond if guard is None else mk("land", st.cond, guard)
        text, line, cuda = _where(ins)
        st.accesses.append(Access(cond, r.name, space, off, size, write, strong, scope,
                                  len(st.barriers), text, line, cuda,
                                  any(e >= HAVOC for e in reads_of(addr))))

    def memory(self, ins, st: _State, guard: Expr | None) -> None:
        size = type_width(ins.type) // 8
        if ins.sem in ("acquire", "release", "acq_rel"):
            article = "a" if ins.sem == "release" else "an"
            raise Outside(f"`{ins.text}` (line {_where(ins)[1]}): {article} {ins.sem} operation, "
                          "synchronization through memory, which the encoding does not model")
        if size == 0:
            raise Outside(f"`{ins.text}`: a predicate-typed access")
        match ins:
            case Load():
                strong = ins.sem != "weak" or ins.volatile
                self.access(ins, st, guard, False, strong, "sys" if ins.volatile else ins.scope, size)
                self.set(st, ins.dst, self.fresh(type_width(ins.type)), ins.type, guard)
            case Store():
                strong = ins.sem != "weak" or ins.volatile
                self.access(ins, st, guard, True, strong, "sys" if ins.volatile else ins.scope, size)
            case Atom():
                self.access(ins, st, guard, True, True, ins.scope, size)
                self.set(st, ins.dst, self.fresh(type_width(ins.type)), ins.type, guard)
            case Red():
                self.access(ins, st, guard, True, True, ins.scope, size)

    def step(self, st: _State, stack: list) -> None:  # noqa: C901 — one case per instruction class
        while True:
            if st.pc >= len(self.body):
                return self.end(st, "ret")
            ins = self.body[st.pc]
            guard = None
            if ins.guard is not None:
                g = truth(self.val(ins.guard[0], st, None))
                guard = mk("lnot", g) if ins.guard[1] else g
            if isinstance(ins, Branch):
                k = self.labels.get(ins.target)
                if k is None:
                    raise Outside(f"`{ins.text}`: a branch to no label")
                if k <= st.pc:
                    raise Outside(f"a loop (`{ins.text}`, line {_where(ins)[1]}): the encoding covers "
                                  "loop-free kernels")
                if guard is None:
                    st.pc = k
                    continue
                self.fork(st, stack, guard, k)
            elif isinstance(ins, (Ret, Halt)):
                end = "ret" if isinstance(ins, Ret) else "halt"
                if guard is None:
                    return self.end(st, end)
                self.fork(st, stack, guard, None, end)
            elif isinstance(ins, Barrier):
                self.barrier(ins, st, guard)
            elif isinstance(ins, (Load, Store, Atom, Red)):
                self.memory(ins, st, guard)
            elif isinstance(ins, (Mov, Alu, Setp, Selp)):
                self.register(ins, st, guard)
            elif isinstance(ins, Fence):
                raise Outside(f"`{ins.text}` (line {_where(ins)[1]}): a fence, synchronization through "
                              "memory, which the encoding does not model")
            elif not isinstance(ins, (Label, Nanosleep)):
                raise Outside(f"`{ins.text}` (line {_where(ins)[1]})")
            st.pc += 1

    def barrier(self, ins: Barrier, st: _State, guard: Expr | None) -> None:
        if ins.kind != "sync" or ins.count is not None or ins.instance or guard is not None \
                or not all(isinstance(i, Imm) for i in ins.ids):
            raise Outside(f"`{ins.text}` (line {_where(ins)[1]}): only a whole-CTA bar.sync with a "
                          "constant id, unpredicated, is covered")
        st.barriers.append((ins.ids[0].value, _where(ins)[1]))

    def fork(self, st: _State, stack: list, guard: Expr, target: int | None, end: str = "") -> None:
        """Split on ``guard``: the taken side jumps to ``target`` (or ends ``end``); ``st``
        continues on the other side."""
        taken = _State(target if target is not None else st.pc, mk("land", st.cond, guard),
                       dict(st.regs), dict(st.types), list(st.accesses), list(st.barriers))
        st.cond = mk("land", st.cond, mk("lnot", guard))
        if taken.cond != FALSE:
            if target is None:
                self.end(taken, end)
            else:
                stack.append(taken)
        if st.cond == FALSE:
            raise _Dead

    def end(self, st: _State, how: str) -> None:
        self.paths.append(Path(st.cond, tuple(st.accesses), tuple(st.barriers), how))


class _Dead(Exception):
    pass


def _consts(e: Expr) -> list[int]:
    if isinstance(e, Const):
        return [e.v]
    if isinstance(e, Op):
        return [c for a in e.args for c in _consts(a)]
    return []


def thread_paths(body, layout: Layout) -> ThreadPaths:
    """The paths of one symbolic thread of ``body`` (raises :class:`Outside`)."""
    r = _Runner(body, layout)
    stack = [_State(0, TRUE, {}, {}, [], [])]
    while stack:
        st = stack.pop()
        try:
            r.step(st, stack)
        except _Dead:
            pass
        if len(r.paths) + len(stack) > MAX_PATHS:
            raise Outside(f"more than {MAX_PATHS} paths through the kernel")
    return ThreadPaths(tuple(r.paths), dict(r.widths))


__all__ = ["CTAID", "HAVOC", "NCTAID", "NTID", "TID", "Access", "Outside", "Path", "ThreadPaths",
           "thread_paths"]
