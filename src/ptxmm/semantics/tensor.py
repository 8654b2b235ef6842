"""cp.async.bulk.tensor (tile mode) and tensormap.replace: tensor copies and the tensormap proxy
(PTX ISA, cp.async.bulk.tensor, tensormap.replace, membar/fence; models/ptx-proxy.cat,
docs/hopper.md). A copy reads its tensor map through the tensormap proxy and splits on the
global address the map may hold (one path per array), then moves its box word by word as
cp.async.bulk does (:mod:`.bulk`)."""

from __future__ import annotations

from ..errors import SemanticError, UnsupportedError
from ..ir.program import (
    Addr,
    Mov,
    Reg,
    Sym,
    TensorCopy,
    TensorMap,
    TensorMapReplace,
    Thread,
)
from ..ir.values import Const, ReadVal, mk
from .builder import Builder, State, handles
from .bulk import async_place, copy_ranks, copy_write
from .events import Kind
from .mbarrier import mbar_place, mbar_rmw


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


@handles(TensorCopy)
def tensor_copy(b: Builder, t: Thread, ins: TensorCopy, st: State, guard, gdeps) -> None:
    """cp.async.bulk.tensor (tile mode): the agent reads the tensor map through the tensormap
    proxy ("The tensorMap is accessed in tensormap proxy"), a weak read whose value, the map's
    global address, decides which words the copy moves: a case split, one path per array the
    map may hold (map_targets; the path assumes the read returns that array's address), each
    then copying the box at the coordinates word by word as cp.async.bulk does."""
    agent = b.agents
    b.agents += 1
    name, where, mdeps = tmap_place(b, ins, ins.tmap, st, t)
    check_rank(b, ins, name)
    coords = []
    for c in ins.coords:
        v, _ = b.val(c, st, "s32")
        if not isinstance(v, Const):
            raise UnsupportedError(f"a tensor coordinate of `{ins.text}` computed from a loaded value",
                                   ins.pos, "ptxmm needs the box's position: a constant, or a "
                                   "register holding one")
        coords.append(v.v - (1 << 32) if v.v >> 31 else v.v)
    r = b.new_event(st, t, Kind.R, ins, guard, sem="weak", tags=frozenset({"TMAP", "AOP"}),
                    agent=agent, **where)
    b.dep(mdeps, r, "addr")
    b.dep(gdeps, r, "ctrl")
    b.edges |= {(f, r, "tmrange") for f in st.bars.get(("tmacq", name), ())}
    targets = map_targets(b, name)
    cases = [st.fork() for _ in targets[1:]] + [st]
    for case, (arr, addr) in zip(cases, targets):
        eq = mk("eq", ReadVal(r, 64), Const(addr, 64))
        case.assumes.append(eq if guard is None else mk("lor", mk("lnot", guard), eq))
        box = box_words(b, ins, b.locs[name].tensormap, arr, coords)
        b.box_n = len(box)
        if ins.load:
            tensor_load(b, t, ins, case, guard, gdeps, agent, r, box)
        else:
            tensor_store(b, t, ins, case, guard, gdeps, agent, r, box)
        if case is not st:
            case.pc += 1
            b.pending.append(case)


def check_rank(b: Builder, ins: TensorCopy, name: str) -> None:
    """A copy's ``.Nd`` is its tensor map's rank (PTX ISA, cp.async.bulk.tensor: ".dim" "the
    dimension of the tensor"; the tensor coordinates are one per dimension): a 1-d map given to a
    ``.2d`` copy, or the reverse, is a located error, not a box read with a dimension made up
    (issue 38). The map's element size (32-bit words) and box are checked where the map is
    declared (a litmus ``.tensormap``) or given (a kernel's launch), the box against the shared
    destination by the copy itself (:func:`.bulk.async_place`)."""
    tm = b.locs[name].tensormap
    if ins.dims == len(tm.dims):
        return
    shape = f"dims {{{', '.join(map(str, tm.dims))}}}, box {{{', '.join(map(str, tm.box))}}}"
    kernel = b.layout is not None
    where = f"the launch's tensor map {name}" if kernel else f"tensor map {name}"
    raise SemanticError(
        f"`{ins.text}` copies a {ins.dims}-d box, but {where} is {len(tm.dims)}-d ({shape})", ins.pos,
        f"copy with .{len(tm.dims)}d and {len(tm.dims)} coordinate(s), or give the map "
        f"{ins.dims} dimensions" + (" in the launch (`dims {8, 2}, box {4, 2}`)" if kernel else
                                     " (`tensormap(a, dims {4, 2}, box {2, 2})`)"))


def box_words(b: Builder, ins: TensorCopy, tm: TensorMap, arr: str, coords: list[int]) -> list[str | None]:
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


def tensor_load(b: Builder, t: Thread, ins: TensorCopy, st: State, guard, gdeps, agent: int, rmap: int,
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
        vl, pl = b.place(elem, t)
        e = b.new_event(st, t, Kind.R, ins, guard, sem="weak", tags=frozenset({"ASYNC", "AOP"}),
                        agent=agent, loc=pl, vloc=vl, w=32)
        b.edges |= {(rmap, e, "aint"), (rmap, e, "addr")}
        b.dep(gdeps, e, "ctrl")
        reads.append(e)
    for rank in copy_ranks(b, t, ins, st):
        f = copy_write(b, t, ins, st, guard, gdeps, reads, rank, agent, zero=rmap)
        where, bdeps = mbar_place(b, ins, ins.mbar, st, t, rank)
        brank = rank if ins.multicast is not None else b.resolve(ins.mbar, st, ins)[1]
        size = Const(4 * len(box), 64)
        cr, cw = mbar_rmw(b, st, t, ins, guard, where, ("relaxed", "release"), "cluster",
                             (Const(0, 64), False, mk("neg", size)), agent, b.owner(t, brank))
        b.edges |= {(f, cr, "aint"), (cr, cw, "aint")}
        for e in (cr, cw):
            b.dep(bdeps, e, "addr")


def tensor_store(b: Builder, t: Thread, ins: TensorCopy, st: State, guard, gdeps, agent: int, rmap: int,
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
        src, stag, sdeps, _ = async_place(b, ins, ins.smem, "shared", st, t, k=k)
        r = b.new_event(st, t, Kind.R, ins, guard, sem="weak", tags=frozenset({"ASYNC", "AOP"}) | stag,
                        agent=agent, **src)
        vl, pl = b.place(elem, t)
        w = b.new_event(st, t, Kind.W, ins, guard, sem="weak", value=ReadVal(r, 32),
                        tags=frozenset({"ASYNC", "AOP"}), agent=agent, loc=pl, vloc=vl, w=32)
        b.edges |= {(rmap, r, "aint"), (r, w, "data"), (r, w, "aint"), (rmap, w, "addr")}
        b.dep(sdeps, r, "addr")
        for e in (r, w):
            b.dep(gdeps, e, "ctrl")
        reads.append(r)
        writes.append(w)
    f = b.new_event(st, t, Kind.F, ins, guard, tags=fence, agent=agent)
    fr = b.new_event(st, t, Kind.F, ins, guard, tags=fence, agent=agent)
    b.edges |= {(w, f, "aint") for w in writes} | {(r, fr, "aint") for r in reads}
    for e in (f, fr):
        b.dep(gdeps, e, "ctrl")
    st.bars[("bulk", "open")] = st.bars.get(("bulk", "open"), ()) + ((fr, f),)


def tmap_place(b: Builder, ins, a: Addr, st: State, t: Thread) -> tuple[str, dict, frozenset[int]]:
    """The tensor map an operand names: (its name, location fields, address dependencies). In a
    kernel: the `__grid_constant__ CUtensorMap` parameter whose address the operand holds
    (kernels.Layout.tensormap_at; nvcc's ``mov.b64 %rd, k_param_0; cvta.param.u64``)."""
    if b.layout is not None:
        addr, deps = b.address(a, st)
        if not isinstance(addr, Const):
            raise UnsupportedError(f"`{ins.text}`: its tensor map address depends on a loaded value",
                                   ins.pos, "pass &tm of a `const __grid_constant__ CUtensorMap` "
                                   "parameter")
        name = b.layout.tensormap_at(addr.v, ins)
        vl, pl = b.place(name, t)
        return name, dict(loc=pl, vloc=vl, w=64), deps
    name, rank, deps = b.resolve(a, st, ins)
    if b.locs[b.p.physical(name)].tensormap is None or rank is not None:
        raise SemanticError(f"`{ins.text}`: {name} is not a tensor map", ins.pos,
                            "declare `.global .tensormap tm = tensormap(a, dims {4}, box {2});` "
                            "and name tm")
    vl, pl = b.place(name, t)
    return name, dict(loc=pl, vloc=vl, w=64), deps


def map_targets(b: Builder, name: str) -> list[tuple[str, int]]:
    """The global addresses tensor map ``name`` may hold, each with its array: the declared one
    and every one a tensormap.replace of it writes (tensormap_replace checks each write)."""
    out = [b.locs[name].tensormap.array]
    for t in b.p.threads:
        for ins in t.instrs:
            if isinstance(ins, TensorMapReplace) and isinstance(ins.addr.base, Sym) and \
                    ins.addr.base.name == name:
                out += [arr for arr in replace_arrays(b, t, ins) if arr not in out]
    return [(arr, b.array_address(arr)) for arr in out]


def replace_arrays(b: Builder, t: Thread, ins: TensorMapReplace) -> list[str]:
    """The arrays a tensormap.replace's new value may name, read off the program text: a
    location, or a register given one by `mov` or its initial value."""
    syms = [ins.src] if isinstance(ins.src, Sym) else []
    if isinstance(ins.src, Reg):
        syms += [i.src for i in t.instrs
                 if isinstance(i, Mov) and i.dst == ins.src and isinstance(i.src, Sym)]
        syms += [Sym(v) for r, v in t.init_regs if r == ins.src.name and isinstance(v, str)]
    return [s.name[:-3] for s in syms if s.name.endswith("[0]")]


@handles(TensorMapReplace)
def tensormap_replace(b: Builder, t: Thread, ins: TensorMapReplace, st: State, guard, gdeps) -> None:
    """tensormap.replace.tile.global_address: "a weak memory operation, on the entire 1024-bit
    opaque tensor-map object": a weak generic write of the map's new global address, which
    must be the start of an array the map fits in (a copy's case split names its words)."""
    name, where, adeps = tmap_place(b, ins, ins.addr, st, t)
    v, vdeps = b.val(ins.src, st, "b64")
    tm = b.locs[name].tensormap
    known = dict((addr, arr) for arr, addr in map_targets(b, name))
    exact = not isinstance(ins.src, Reg) or (isinstance(v, Const) and st.ptr.get(ins.src.name) == v.v)
    arr = known.get(v.v) if isinstance(v, Const) and exact else None
    if arr is None or sum(f"{arr}[{i}]" in b.locs for i in range(_prod(tm.dims))) < _prod(tm.dims) \
            or b.locs[f"{arr}[0]"].space != "global":
        raise SemanticError(f"`{ins.text}`: the new global address must be that of a .global 32-bit "
                            f"array of at least {_prod(tm.dims)} elements, named in the program text",
                            ins.pos, "write `mov.u64 %rd, b;` (b an array) before it, then replace "
                            "with %rd")
    w = b.new_event(st, t, Kind.W, ins, guard, sem="weak", value=v, tags=frozenset({"GEN"}), **where)
    b.dep(adeps, w, "addr")
    b.dep(vdeps, w, "data")
    b.dep(gdeps, w, "ctrl")
