"""ld, st, atom and red. An access's location is resolved by the builder (a litmus name, a
``mapa`` address, a kernel's computed address); in a kernel, an access outside every buffer stops
the thread (out of bounds), and one whose address is computed from loaded data is a case split, one
path per element the address may name. A load is one read, a store one write; an atom or red is a
read and a write joined by ``rmw`` with the sems of ``RMW_SEMS``; addr, data and ctrl dependencies
are recorded on each event."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir.program import (
    Atom,
    Load,
    Red,
    Store,
    Thread,
    type_signed,
    type_width,
)
from ..ir.stops import Stop, StopKind
from ..ir.values import Const, Expr, ReadVal, const, convert, float_result, mk, substitute
from .builder import ADDR_W, PROXY_TAG, Builder, State, handles
from .events import Kind
from .registers import alu_op, nan_unspec

# an atom's or red's read and write sems by its own (an acquire reads with acquire, a release writes
# with release)
# The elements a computed address may name are asked of the layout's oracle once per question up
# to the names of the reads (:func:`targets`); False: once per access (the tests compare the two).
ADDRESS_MEMO = True

RMW_SEMS = {"relaxed": ("relaxed", "relaxed"), "acquire": ("acquire", "relaxed"),
            "release": ("relaxed", "release"), "acq_rel": ("acquire", "release")}


@handles(Load, Store, Atom, Red, control=True)
def access(b: Builder, t: Thread, ins, st: State, guard: Expr | None, gdeps, stack) -> State | None:
    """A memory access; in a kernel, one outside every buffer stops the thread instead."""
    if b.layout is not None and not isinstance(b.address(ins.addr, st)[0], Const):
        return loaded_access(b, t, ins, st, guard, gdeps, stack)
    if b.layout is not None and b.element(ins.addr, st, ins)[0] is None:
        return b.stop(st, Stop(StopKind.BOUNDS, ins.pos.line if ins.pos else 0), guard, gdeps, stack)
    memory(b, t, ins, st, guard, gdeps)
    st.pc += 1
    return st


def loaded_access(b: Builder, t: Thread, ins, st: State, guard: Expr | None, gdeps, stack) -> State | None:
    """A kernel's access whose address is computed from loaded data: a case split on the
    address. One path per element it may name (``Layout.targets``, a sound
    over-approximation), which assumes the address equals that element's and accesses it —
    so every event keeps one location, and the engines' choice of a path is the choice of the
    element — and, where the address may lie outside every buffer, one path that assumes so
    and stops there (out of bounds). The split adds no dependency: the events keep their addr
    dependencies on the reads the address is computed from. A predicated access: each case
    assumes "guard → address = element" (its event keeps the guard), the stop "guard ∧
    outside"."""
    addr, _ = b.address(ins.addr, st)
    known = list(st.assumes) + ([guard] if guard is not None else [])
    cases, outside = targets(b, addr, known, type_width(ins.type), ins)
    out: list[State] = []
    for name, v in cases:
        case = st.fork()
        eq = mk("eq", addr, Const(v, ADDR_W))
        case.assumes.append(eq if guard is None else mk("lor", mk("lnot", guard), eq))
        b.at = name
        try:
            memory(b, t, ins, case, guard, gdeps)
        finally:
            b.at = None
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
        out.append(b.stop(stop, site, None, gdeps, stack))
    if not out:
        return None  # no execution reaches the access
    stack += out[1:]
    return out[0]


def targets(b: Builder, addr: Expr, known: list[Expr], width: int, ins) -> tuple[list, Expr | None]:
    """``Layout.targets`` of the access, asked once per build for every question that is the same
    up to renaming the reads: the threads of one kernel body ask the same question, each of its
    own reads, and the oracle's answers depend only on the formula (every read a free value of its
    width, constrained by ``known``). The elements are read-independent; the condition "outside
    every buffer" is renamed back to this access's reads."""
    if not ADDRESS_MEMO:
        return b.layout.targets(addr, known, width, ins)
    names: dict[int, int] = {}
    canon = names.setdefault  # a read's name: its place in order of first appearance
    a = substitute(addr, lambda e: canon(e, len(names)))
    ks = tuple(substitute(k, lambda e: canon(e, len(names))) for k in known)
    key = (a, ks, width, ins)
    hit = b.target_memo.get(key)
    if hit is None:
        hit = b.target_memo[key] = b.layout.targets(a, list(ks), width, ins)
    else:
        b.memo_hits += 1
    cases, outside = hit
    if outside is None:
        return cases, None
    back = {v: k for k, v in names.items()}
    return cases, substitute(outside, back.__getitem__)


def memory(b: Builder, t: Thread, ins, st: State, guard: Expr | None, gdeps) -> None:
    name, rank, adeps = b.resolve(ins.addr, st, ins)
    if b.layout is not None and name not in b.locs:  # a kernel's __constant__ data
        value, ty = b.layout.constant(name)
        b.set_reg(st, ins.dst, convert(const(value, type_width(ty)), type_width(ins.type),
                                       type_signed(ty)), ins.type, frozenset(), guard)
        return
    if b.locs[b.p.physical(name)].tensormap is not None:
        raise UnsupportedError(f"`{ins.text}` accesses tensor map {name} as data", ins.pos,
                               "a tensor map is an opaque object: change it with tensormap.replace")
    vl, pl = b.place(name, t, rank)
    lw = b.width_of(name)
    tags = frozenset({PROXY_TAG[ins.proxy]} | ({"VOL"} if getattr(ins, "volatile", False) else set())
                     | b.space_tag(name))
    base = dict(scope=ins.scope, loc=pl, vloc=vl, w=lw)
    if isinstance(ins, Load):
        r = b.new_event(st, t, Kind.R, ins, guard, sem=ins.sem, tags=tags, **base)
        b.dep(adeps, r, "addr")
        b.dep(gdeps, r, "ctrl")
        # a location no thread writes: every execution reads its initial value (builder._read_only)
        got = Const(b.readonly[pl], lw) if pl in b.readonly else ReadVal(r, lw)
        v = convert(got, type_width(ins.type), type_signed(ins.type))
        b.set_reg(st, ins.dst, v, ins.type, frozenset({r}), guard)
        return
    if isinstance(ins, Store):
        v, vdeps = b.val(ins.src, st, ins.type)
        w = b.new_event(st, t, Kind.W, ins, guard, sem=ins.sem, value=convert(v, lw), tags=tags,
                        **base)
        b.dep(adeps, w, "addr")
        b.dep(gdeps, w, "ctrl")
        b.dep(vdeps, w, "data")
        return
    rmw(b, t, ins, st, guard, gdeps, adeps, base)


def rmw(b: Builder, t: Thread, ins: Atom | Red, st: State, guard, gdeps, adeps, base) -> None:
    rsem, wsem = RMW_SEMS[ins.sem]
    lw, iw = base["w"], type_width(ins.type)
    proxy = PROXY_TAG[ins.proxy]
    rtags = frozenset({"RMW_R", proxy} | ({"RedR"} if isinstance(ins, Red) else set()))
    r = b.new_event(st, t, Kind.R, ins, guard, sem=rsem, tags=rtags, **base)
    b.dep(adeps, r, "addr")
    b.dep(gdeps, r, "ctrl")
    old = convert(ReadVal(r, lw), iw, type_signed(ins.type))
    srcs = ins.srcs if isinstance(ins, Atom) else (ins.src,)
    args = [b.val(s, st, ins.type) for s in srcs]
    op = alu_op(ins.op, ins.type)
    wguard = guard
    if op == "exch":
        new = args[0][0]
    elif op == "cas":
        new = args[1][0]
        ok = mk("eq", old, args[0][0])
        wguard = ok if guard is None else mk("land", guard, ok)
    elif op == "sub":  # Dat3M's atom.sub
        new = mk("sub", old, args[0][0])
    elif op.startswith("f."):  # atom.add.f32 (ir/floats.py); a NaN result's bits unspecified
        new = float_result(op, [old, args[0][0]], iw, lambda: nan_unspec(b, ins, iw))
    else:
        new = mk(op, old, *(a[0] for a in args), w=iw)
    w = b.new_event(st, t, Kind.W, ins, wguard, sem=wsem, value=convert(new, lw),
                    tags=frozenset({"RMW_W", proxy}), **base)
    b.dep(adeps, w, "addr")
    b.dep(gdeps, w, "ctrl")
    b.edges.add((r, w, "rmw"))
    if op not in ("exch", "cas"):  # the written value is computed from the value read
        b.edges.add((r, w, "data"))
    if op == "cas":  # whether it writes depends on the value read
        b.edges.add((r, w, "data"))
    for a in args:
        b.dep(a[1], w, "data")
    if isinstance(ins, Atom):
        b.set_reg(st, ins.dst, old, ins.type, frozenset({r}), guard)
