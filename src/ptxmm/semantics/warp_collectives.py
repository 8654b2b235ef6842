"""The warp collectives of kernels: shfl.sync, vote.sync, match.sync, redux.sync, activemask,
elect.sync and bar.warp.sync (PTX ISA, Parallel Synchronization and Communication Instructions; Data Movement:
shfl.sync), and the CTA reduction barrier bar.red / barrier.red (``__syncthreads_and/or/count``:
"the c predicate ... from all threads in the CTA are combined using the specified reduction
operator", PTX ISA, bar/barrier; a CTA barrier that orders memory as bar.sync does, events
tagged ``BAR RED``, its own barrier operands so that it never meets a bar.sync — "bar.red
should not be intermixed with bar.sync ... using the same active barrier").

**Waiting.** "``vote.sync`` will cause executing thread to wait until all non-exited threads
corresponding to membermask have executed ``vote.sync`` with the same qualifiers and same
membermask value before resuming execution" (likewise shfl.sync, match.sync, redux.sync;
bar.warp.sync: "all threads corresponding to membermask have executed a bar.warp.sync with the
same membermask value"). Each execution is a count-less barrier of its own kind: an ARRIVE and a
WAIT event (tags ``BAR WARP``) whose barrier operands are the form (opcode and qualifiers), the
membermask and the warp, and whose phase is the lane's k-th execution of that form with that
mask — :mod:`.barrier_waits` is the one rule for both checks: the wait completes when every
other lane the mask names arrives in that phase or exits (``Barriers.members``), a lane that
neither does is a hang under ``--liveness``, and lanes meeting their collectives in different
orders deadlock (Barrier-progress).

**Memory.** Only bar.warp.sync orders memory: "bar.warp.sync also guarantee memory ordering
among threads participating in barrier" (PTX ISA, bar.warp.sync): its arrive → wait pairs are in
``sync_barrier`` as bar.sync's are. The ISA states no memory ordering for shfl.sync, vote.sync,
match.sync, redux.sync or activemask, so their events carry ``NOSYNC``: their arrive → wait
pairs order execution only (``exit_barrier``, in Barrier-progress, never in causality).

**Values.** The builder runs each thread alone, so a lane's result is first a placeholder (an
:class:`~ptxmm.ir.values.Unspec` with a uid at or above :data:`SLOT_BASE`, never in the graph's
unspecified values); once every thread is built, :func:`resolve` replaces each by the value the
ISA defines from the other lanes' contributions *to the same dynamic instance* (the partner
lane's ARRIVE with equal operands and the same phase k). A partner lane runs that ARRIVE iff its
path reaches it: iff the branch assumptions its path had made when the event was created hold
(all paths through one event share them; in a finite execution the thread's path is the one
whose assumptions hold). The values are therefore plain expressions over the threads' reads:
both engines see the same formula, and neither needs to know about warps. What the ISA leaves
undefined — shfl reading a lane outside membermask, one that exited or never arrives, a lane
the partial last warp lacks; activemask's bits of the other lanes, which depend on the
scheduler; the lane elect.sync elects, which the ISA leaves open but for "deterministic"
(:meth:`_Resolver.elect`) — is a fresh unspecified value (the solver chooses; the brute-force
engine refuses such a program), with a warning. A thread not in its own membermask is a located error ("the
behavior ... is undefined if the executing thread is not in the membermask").

In a liveness graph the paths that block at a wait or stop early share their assumptions with
the paths that go on, so a lane's resolved value may take a partner's contribution the partner
has not made; that happens only past a wait that cannot complete (the partner never arrived),
where no hang question reads it."""

from __future__ import annotations

import zlib
from collections.abc import Callable

from ..errors import Diagnostic, SemanticError, UnsupportedError
from ..ir.instructions import WarpOp
from ..ir.program import Thread
from ..ir.values import FALSE, TRUE, Const, Expr, Op, Unspec, mk, truth, unspecs_of
from .builder import FINISHERS, Builder, State, handles
from .control import blocked_at
from .events import Kind, PathInfo
from .lanes import lane_table, warp_lanes

SLOT_BASE = 1 << 40  # placeholder uids: far above any real unspecified value's
SYNC_FORM = "bar.warp.sync"
# :meth:`_Resolver.fill` remembers what it made of each expression node (the values share their
# nodes: a shuffle's value is built from the previous shuffle's, lane by lane, and every lane's
# contribution is filled again for each of its 31 partners); False: every node filled anew, as
# before issue 41 (the property tests compare the two graphs).
FILL_MEMO = True


class _Warps:
    """One build's warp collectives: the lane table, each ARRIVE's contribution and the
    assumptions made before it, and each placeholder's rule."""

    def __init__(self, b: Builder):
        self.table = lane_table(b.p)
        self.arrive: dict[int, tuple[Expr, tuple[Expr, ...]]] = {}  # eid → (contribution, assumes)
        self.index: dict[tuple, list[int]] = {}  # (thread, operands, phase) → its ARRIVE events
        self.slots: list[tuple[int, int, Callable, WarpOp]] = []  # (thread, arrive, rule, ins)
        self.done: dict[int, Expr] = {}
        self.active: set[int] = set()
        self.ub: dict[tuple, Unspec] = {}
        self.ops: dict[int, tuple[Expr, Expr]] = {}  # a shfl's ARRIVE → its b and c
        self.leaders: dict[tuple, Unspec] = {}  # elect.sync's choices
        self.facts: dict[int, set[Expr]] = {}  # an ARRIVE → what the paths through it assume
        # activemask in a warp wider than FORK_LANES: its Unspec's uid → (the instruction, lanes)
        self.wide_active: dict[int, tuple[WarpOp, int]] = {}


def _state(b: Builder) -> _Warps:
    w = b.__dict__.get("_warps")
    if w is None:
        w = b.__dict__["_warps"] = _Warps(b)
    return w


def _mask(b: Builder, ins: WarpOp, st: State) -> int:
    m, _ = b.val(ins.mask, st, "b32")
    if not isinstance(m, Const):
        _refuse_wide_activemask(_state(b), ins, m)
        raise UnsupportedError(f"a membermask that is no constant in `{ins.text}`", ins.pos,
                               "ptxmm needs each lane's membermask as a value it can compute (not "
                               "from loaded data, nor from activemask, whose value is the "
                               "scheduler's)")
    return m.v


def _refuse_wide_activemask(ws: _Warps, ins: WarpOp, m: Expr) -> None:
    """A membermask made of activemask's value in a warp of more than :data:`FORK_LANES` lanes:
    refused, naming both instructions and the warp's width (activemask is forked into one path
    per set of active lanes only in warps of at most FORK_LANES lanes)."""
    for u in sorted(unspecs_of(m), key=lambda x: x.uid):
        if u.uid in ws.wide_active:
            act, n = ws.wide_active[u.uid]
            src = getattr(act.pos, "src", None)  # the CUDA line (.loc), where there is one
            cu = f", {src.file.rsplit('/', 1)[-1]}:{src.line}" if src is not None and src.line > 0 else ""
            line = f" (line {act.pos.line}{cu})" if act.pos else ""
            raise UnsupportedError(
                f"`{act.text}`{line} as the membermask of `{ins.text}` in a warp of {n} lanes",
                ins.pos, f"ptxmm models activemask as a membermask (cooperative groups' "
                f"coalesced_threads()) in warps of at most {FORK_LANES} lanes, each set of active "
                f"lanes a path of its own: launch blocks of at most {FORK_LANES} threads")


@handles(WarpOp, control=True)
def warp_op(b: Builder, t: Thread, ins: WarpOp, st: State, guard, gdeps, stack) -> State | None:
    if b.p.kernel is None:
        raise UnsupportedError(f"`{ins.text}` in a litmus test", ins.pos,
                               "a litmus thread is one lane whose warp-mates are not in the test: "
                               "warp collectives are modelled in kernels")
    if guard is not None:
        raise UnsupportedError(f"predicated `{ins.text}`", ins.pos,
                               "branch around the warp collective instead")
    ws = _state(b)
    if ins.mode == "active":
        return _activemask(b, t, ins, st, ws, stack)
    _collective(b, t, ins, st, ws)
    st.pc += 1
    return st


def _collective(b: Builder, t: Thread, ins: WarpOp, st: State, ws: _Warps, chosen: int | None = None) -> int:
    """The collective's ARRIVE and WAIT on path ``st`` and its results' placeholders; its ARRIVE.
    ``chosen``: activemask's mask on this path (its lanes meet as at a collective of that mask)."""
    lane = ws.table[t.index][2]
    if ins.form.startswith("bar.red"):
        mask, group = 0, _red_id(b, ins, st)
    else:
        mask = _mask(b, ins, st) if chosen is None else chosen
        group = ws.table[t.index][1]
        if not mask >> lane & 1:
            raise SemanticError(f"thread {t.name} (lane {lane}) executes `{ins.text}` with "
                                f"membermask {mask:#x}, which does not name it", ins.pos,
                                "PTX ISA: the behavior is undefined if the executing thread is "
                                "not in the membermask")
    contrib, deps = _contribution(b, ins, st)
    ids = (Const(zlib.crc32(ins.form.encode()), 32), Const(mask, 32), Const(group, 32))
    key = ("warp", ins.form, mask, group)
    k = st.bars.get(key, 0)
    st.bars[key] = k + 1
    if ins.form.startswith("bar.red"):  # a CTA barrier (sync_barrier), waiting for every thread
        tags = {"BAR", "RED"}
    else:
        tags = {"BAR", "WARP"} | ({"NOSYNC"} if ins.form != SYNC_FORM else set())
    pre = tuple(st.assumes)
    arrive = b.new_event(st, t, Kind.B, ins, None, scope="cta", barrier=(ids, None, k),
                         tags=frozenset(tags | {"ARRIVE"}))
    ws.arrive[arrive] = (contrib, pre)
    if ins.c is not None:
        ws.ops[arrive] = (b.val(ins.b, st, "b32")[0], b.val(ins.c, st, "b32")[0])
    ws.index.setdefault((t.index, tuple(x.v for x in ids), k), []).append(arrive)
    wait = b.new_event(st, t, Kind.B, ins, None, scope="cta", barrier=(ids, None, k),
                       tags=frozenset(tags | {"WAIT"}))
    blocked_at(b, st, wait, "WAIT", None)
    for reg, w, rule, ty in _results(ins, lane, mask):
        n = len(ws.slots)
        ws.slots.append((t.index, arrive, rule, ins))
        hole = Unspec(SLOT_BASE + n, w, f"the result of `{ins.text}`")
        b.set_reg(st, reg, hole, ty, deps, None)
    return arrive


def _red_id(b: Builder, ins: WarpOp, st: State) -> int:
    """bar.red's barrier: a constant, as nvcc writes it (``__syncthreads_and``: barrier 0)."""
    a, _ = b.val(ins.b, st, "u32")
    if not isinstance(a, Const) or a.v > 15:
        raise UnsupportedError(f"the barrier of `{ins.text}`", ins.pos, "a constant 0..15 is modelled")
    return a.v


def _contribution(b: Builder, ins: WarpOp, st: State) -> tuple[Expr, frozenset[int]]:
    """What the lane brings: vote's predicate (negated for ``!a``), the source of shfl, match
    and redux; nothing for bar.warp.sync."""
    if ins.a is None:
        return TRUE, frozenset()
    if ins.form.startswith(("vote", "bar.red")):
        v, deps = b.val(ins.a, st, None)
        v = truth(v)
        return (mk("lnot", v) if ins.neg else v), deps
    ty = "b64" if ins.type == "b64" else "b32"
    return b.val(ins.a, st, ty)


def _results(ins: WarpOp, lane: int, mask: int) -> list[tuple]:
    """(register, width, rule, type) per destination; a rule maps ``lanes`` (lane → (arrived,
    contribution), the own lane's arrived TRUE) and the placeholder's resolver to the value."""
    base = ins.form.split(".")[0]
    out = []
    if base == "vote":
        w, ty = (32, "b32") if ins.mode == "ballot" else (1, "pred")
        out.append((ins.dst, w, _VOTE[ins.mode], ty))
    elif base == "match":
        out.append((ins.dst, 32, lambda ls, r: _match(ls, ins.mode)[0], "b32"))
        if ins.pdst is not None:
            out.append((ins.pdst, 1, lambda ls, r: _match(ls, ins.mode)[1], "pred"))
    elif base == "redux":
        out.append((ins.dst, 32, lambda ls, r: _redux(ls, ins.mode, ins.type, lane), ins.type))
    elif base == "elect":
        if ins.dst is not None:
            out.append((ins.dst, 32, lambda ls, r: r.elect(ls, 0), "b32"))
        out.append((ins.pdst, 1, lambda ls, r: r.elect(ls, 1), "pred"))
    elif ins.form.startswith("bar.red"):
        rule = {"and": _all, "or": _any, "popc": _popc}[ins.mode]
        out.append((ins.dst, 32 if ins.mode == "popc" else 1, rule, ins.type))
    elif base == "shfl":
        out.append((ins.dst, 32, lambda ls, r: r.shfl(ls, 0), "b32"))
        if ins.pdst is not None:
            out.append((ins.pdst, 1, lambda ls, r: r.shfl(ls, 1), "pred"))
    return out


# ----- the rules: the ISA's definitions over the lanes that arrive ---------------------------------

Lanes = dict[int, tuple[Expr, Expr]]


def _all(ls: Lanes, r) -> Expr:
    out: Expr = TRUE
    for arr, v in ls.values():
        out = mk("land", out, mk("lor", mk("lnot", arr), v))
    return out


def _any(ls: Lanes, r) -> Expr:
    out: Expr = FALSE
    for arr, v in ls.values():
        out = mk("lor", out, mk("land", arr, v))
    return out


def _uni(ls: Lanes, r) -> Expr:
    """vote.uni: True iff the predicate has the same value in every non-exited lane of the mask."""
    none: Expr = TRUE
    for arr, v in ls.values():
        none = mk("land", none, mk("lor", mk("lnot", arr), mk("lnot", v)))
    return mk("lor", _all(ls, r), none)


def _ballot(ls: Lanes, r) -> Expr:
    """vote.ballot.b32: bit L is lane L's predicate, 0 for lanes that do not take part."""
    out: Expr = Const(0, 32)
    for lane, (arr, v) in ls.items():
        if lane >= 0:
            out = mk("or", out, mk("ite", mk("land", arr, v), Const(1 << lane, 32), Const(0, 32)))
    return out


def _popc(ls: Lanes, r) -> Expr:
    """bar.red.popc: how many threads that take part have their predicate True."""
    out: Expr = Const(0, 32)
    for key, (arr, v) in ls.items():
        if key >= 0:
            out = mk("add", out, mk("ite", mk("land", arr, v), Const(1, 32), Const(0, 32)))
    return out


_VOTE = {"all": _all, "any": _any, "uni": _uni, "ballot": _ballot}


def _match(ls: Lanes, mode: str) -> tuple[Expr, Expr]:
    """match.any: the lanes (non-exited, in membermask) whose ``a`` equals this lane's; match.all:
    all of them when every one has this lane's value (p True), else 0 (p False)."""
    own = ls[-1][1]
    same: Expr = Const(0, 32)
    present: Expr = Const(0, 32)
    agree: Expr = TRUE
    for lane, (arr, v) in ls.items():
        if lane < 0:
            continue
        bit = Const(1 << lane, 32)
        eq = mk("eq", v, own)
        same = mk("or", same, mk("ite", mk("land", arr, eq), bit, Const(0, 32)))
        present = mk("or", present, mk("ite", arr, bit, Const(0, 32)))
        agree = mk("land", agree, mk("lor", mk("lnot", arr), eq))
    if mode == "any":
        return same, TRUE
    return mk("ite", agree, present, Const(0, 32)), agree


_REDUX = {"add": "add", "and": "and", "or": "or", "xor": "xor"}


def _redux(ls: Lanes, op: str, ty: str, lane: int) -> Expr:
    """redux.sync: the operation over the non-exited lanes of membermask (add wraps; min/max
    signed for .s32, unsigned for .u32)."""
    if op in ("min", "max"):
        name = ("s" if ty == "s32" else "u") + op
    else:
        name = _REDUX[op]
    acc = ls[lane][1]
    for m, (arr, v) in sorted(ls.items()):
        if m in (lane, -1):
            continue
        acc = mk("ite", arr, mk(name, acc, v), acc)
    return acc


# ----- activemask --------------------------------------------------------------------------------


FORK_LANES = 4  # activemask forks its value in warps of at most this many lanes (2^(n-1) paths)


def _activemask(b: Builder, t: Thread, ins: WarpOp, st: State, ws: _Warps, stack) -> State:
    """activemask.b32: "queries predicated-on active threads from the executing warp" — the lanes
    executing it convergently with this one, which is the scheduler's choice, not the program's.
    In a warp of at most :data:`FORK_LANES` lanes the path forks once per set of lanes that
    contains the executing lane (the value a constant on each path, so that it can be a
    membermask: cooperative groups' ``coalesced_threads()`` passes it to shfl.sync), each fork
    assuming an unspecified choice equals its set, and the lanes of the set meet there as at a
    collective of that mask (NOSYNC: no memory ordering) that every one of them must reach with
    the same set (:func:`_converged`: no lane "exits" out of it) — so lanes that report each other
    as active agree on the set, and a lane that does not execute it (diverged, exited) is in no
    one's set. In a larger warp the other lanes' bits are plainly unspecified (the own bit is 1),
    and a membermask made of them is refused where it is used (:func:`_mask`). It waits for no
    lane outside its set."""
    lane = ws.table[t.index][2]
    where = f"`{ins.text}` (line {ins.pos.line if ins.pos else '?'})"
    u = Unspec(len(b.unspecs), 32, f"the lanes active at {where}: which lanes are active is the scheduler's")
    b.unspecs.append(u)
    lanes = warp_lanes(ws.table, t.index)
    others = [m for m in sorted(lanes) if m != lane]
    if id(ins) not in b.warned:
        b.warned[id(ins)] = Diagnostic(f"`{ins.text}`: which other lanes are active is the "
                                       "scheduler's choice", ins.pos,
                                       "ptxmm lets the execution choose them (lanes that name each "
                                       "other agree), the solver's choice: the brute-force engine "
                                       "refuses such a program")
    if len(lanes) > FORK_LANES:
        ws.wide_active[u.uid] = (ins, len(lanes))
        v = mk("or", mk("and", u, Const(sum(1 << m for m in others), 32)), Const(1 << lane, 32))
        b.set_reg(st, ins.dst, v, "b32", frozenset(), None)
        st.pc += 1
        return st
    forks = []
    for n in range(1 << len(others)):
        mask = (1 << lane) | sum(1 << m for i, m in enumerate(others) if n >> i & 1)
        case = st.fork() if n else st
        forks.append((case, mask))
    for case, mask in forks:
        case.assumes.append(mk("eq", u, Const(mask, 32)))
        arrive = _collective(b, t, ins, case, ws, chosen=mask)
        ws.slots.append((t.index, arrive, _converged, ins))
        b.set_reg(case, ins.dst, Const(mask, 32), "b32", frozenset(), None)
        case.pc += 1
    stack += [c for c, _ in forks[1:]]
    return forks[0][0]


def _converged(ls: Lanes, r) -> Expr:
    """activemask's rule: every lane of the chosen set reaches this instance with the same set (an
    assumption of the paths through it, :func:`_fill_path`); no value."""
    every: Expr = TRUE
    for m, (arr, _) in ls.items():
        if m >= 0:
            every = mk("land", every, arr)
    r.ws.facts.setdefault(r.slot[1], set()).add(every)
    return Const(0, 32)


# ----- resolution --------------------------------------------------------------------------------


class _Resolver:
    """Each placeholder's value, once every thread is built (memoised; a placeholder whose value
    needs itself is lanes meeting collectives in different orders: a deadlock)."""

    def __init__(self, b: Builder, ws: _Warps, paths: list[list[PathInfo]]):
        self.b, self.ws, self.paths = b, ws, paths
        self.slot: tuple | None = None
        # id(node) → (node, filled): a pure function of the node, as the placeholders' values
        # (ws.done) are fixed once made; the node is kept so that its id is not reused
        self.memo: dict[int, tuple[Expr, Expr]] | None = {} if FILL_MEMO else None
        self.lane_memo: dict[tuple[int, int], Lanes] = {}  # (thread, arrive) → :meth:`lanes`

    def value(self, n: int) -> Expr:
        ws = self.ws
        if n in ws.done:
            return ws.done[n]
        t, arrive, rule, ins = ws.slots[n]
        if n in ws.active:
            raise UnsupportedError(f"lanes reach `{ins.text}` and other warp collectives in "
                                   "different orders", ins.pos,
                                   "each lane waits for the others at its own collective: a "
                                   "deadlock; ptxmm cannot give the values such lanes exchange")
        ws.active.add(n)
        saved, self.slot = self.slot, (t, arrive, ins)
        v = self.fill(rule(self.lanes(t, arrive), self))
        self.slot = saved
        ws.active.discard(n)
        ws.done[n] = v
        return v

    def fill(self, e: Expr) -> Expr:
        """``e`` with every placeholder replaced by its value (folding constants again)."""
        if isinstance(e, Unspec):
            return self.value(e.uid - SLOT_BASE) if e.uid >= SLOT_BASE else e
        if not isinstance(e, Op):
            return e
        memo = self.memo
        if memo is not None:
            hit = memo.get(id(e))
            if hit is not None:
                return hit[1]
        args = tuple(self.fill(a) for a in e.args)
        out = e if args == e.args else mk(e.op, *args, w=e.w)
        if memo is not None:
            memo[id(e)] = (e, out)
        return out

    def lanes(self, t: int, arrive: int) -> Lanes:
        """lane (bar.red: place in the CTA) → (it arrives at this instance, its contribution)
        for the threads the collective combines (:meth:`members`); ``-1`` → this thread's own
        (TRUE, contribution)."""
        if self.memo is not None:  # both results of one instance (shfl's d and p) combine the same lanes
            hit = self.lane_memo.get((t, arrive))
            if hit is None:
                hit = self.lane_memo[(t, arrive)] = self._lanes(t, arrive)
            return hit
        return self._lanes(t, arrive)

    def _lanes(self, t: int, arrive: int) -> Lanes:
        ws = self.ws
        ev = self.b.events[arrive]
        ids, k = tuple(x.v for x in ev.barrier[0]), ev.barrier[2]
        own = ws.arrive[arrive][0]
        out: Lanes = {-1: (TRUE, own)}
        for lane, th in sorted(self.members(t, ev).items()):
            if th == t:
                out[lane] = (TRUE, own)
                continue
            arr: Expr = FALSE
            val: Expr = Const(0, own.w)
            cands = ws.index.get((th, ids, k), [])
            for e in reversed(cands):
                run = self.runs(th, e)
                arr = mk("lor", run, arr)
                val = mk("ite", run, ws.arrive[e][0], val)
            on = set().union(*(self.b.events[e].paths for e in cands))
            if len(on) == len(self.paths[th]):  # on every path (twins after a branch): it arrives
                arr = TRUE
            out[lane] = (self.fill(arr), self.fill(val))
        return out

    def members(self, t: int, ev) -> dict[int, int]:
        """The threads a collective combines, by lane (warp: those its membermask names) or by
        place in the CTA (bar.red: all of them)."""
        ws = self.ws
        if "RED" in ev.tags:
            cta = ws.table[t][0]
            return {i: th for i, th in enumerate(x for x, row in enumerate(ws.table) if row[0] == cta)}
        mask = ev.barrier[0][1].v
        return {lane: th for lane, th in warp_lanes(ws.table, t).items() if mask >> lane & 1}

    def runs(self, th: int, e: int) -> Expr:
        """Thread ``th`` runs event ``e``: the assumptions its path had made there hold (TRUE
        when every path of the thread runs it)."""
        on = self.b.events[e].paths
        if not on:
            return FALSE
        if len(on) == len(self.paths[th]):
            return TRUE
        out: Expr = TRUE
        for a in self.ws.arrive[e][1]:
            out = mk("land", out, a)
        return out

    def shfl(self, ls: Lanes, which: int) -> Expr:
        """shfl.sync (PTX ISA, shfl.sync, its pseudocode): from b, c and the lane, the source lane
        j and whether it is in range (p); out of range, j is the lane itself. The value of a
        source lane outside membermask, or one that does not take part, is undefined."""
        t, arrive, ins = self.slot
        lane = self.ws.table[t][2]
        bv, cv = self.ws.ops[arrive]
        w = 32
        L = Const(lane, w)
        bval = mk("and", bv, Const(31, w))
        cval = mk("and", cv, Const(31, w))
        seg = mk("and", mk("shr", cv, Const(8, w)), Const(31, w))
        nseg = mk("xor", seg, Const(31, w))
        max_lane = mk("or", mk("and", L, seg), mk("and", cval, nseg))
        min_lane = mk("and", L, seg)
        if ins.mode == "up":
            j = mk("sub", L, bval)
            p = mk("sge", j, max_lane)
        else:
            j = {"down": lambda: mk("add", L, bval), "bfly": lambda: mk("xor", L, bval),
                 "idx": lambda: mk("or", min_lane, mk("and", bval, nseg))}[ins.mode]()
            p = mk("sle", j, max_lane)
        if which == 1:
            return p
        j = mk("ite", p, j, L)
        return self.pick(ls, j, lane, ins)

    def pick(self, ls: Lanes, j: Expr, lane: int, ins: WarpOp) -> Expr:
        """Lane j's contribution, j an expression: lanes that take part give theirs, any other an
        undefined value."""
        own = ls[-1][1]
        undefined = None
        out: Expr | None = None
        for m in range(31, -1, -1):
            if isinstance(j, Const) and j.v != m:
                continue
            arr, v = ls.get(m, (FALSE, Const(0, own.w)))
            if arr != TRUE:
                if undefined is None:
                    undefined = self.undefined(ins, own.w)
                v = mk("ite", arr, v, undefined) if arr != FALSE else undefined
            out = v if out is None else mk("ite", mk("eq", j, Const(m, 32)), v, out)
        if out is None:  # j a constant ≥ 32 cannot happen: it is 5 bits wide
            out = self.undefined(ins, own.w)
        return out

    def elect(self, ls: Lanes, which: int) -> Expr:
        """elect.sync (PTX ISA, elect.sync): one leader among the lanes of membermask that take
        part, the same in every lane (d its lane id, p True in it alone). Which lane, the ISA
        leaves open but for "the leader thread is elected in a deterministic manner": ptxmm
        chooses one lane per membermask and warp for the whole execution (an unspecified value
        naming a lane of the mask) and elects it wherever it takes part; where it does not (it
        exited), another unspecified choice among the lanes that do."""
        t, arrive, ins = self.slot
        ev = self.b.events[arrive]
        key = (self.ws.table[t][0], *(x.v for x in ev.barrier[0]))
        lanes = [m for m in ls if m >= 0]
        u = self.choice(key, ins, "the lane elect.sync elects for its membermask")
        w = self.choice((*key, ev.barrier[2]), ins, "the lane elect.sync elects when that one "
                        "does not take part")
        arrived_u: Expr = FALSE
        in_mask: Expr = FALSE
        arrived_w: Expr = FALSE
        for m in lanes:
            arr = ls[m][0]
            arrived_u = mk("lor", arrived_u, mk("land", mk("eq", u, Const(m, 32)), arr))
            in_mask = mk("lor", in_mask, mk("eq", u, Const(m, 32)))
            arrived_w = mk("lor", arrived_w, mk("land", mk("eq", w, Const(m, 32)), arr))
        self.ws.facts.setdefault(arrive, set()).update({in_mask, arrived_w})
        lead = mk("ite", arrived_u, u, w)
        return lead if which == 0 else mk("eq", lead, Const(self.ws.table[t][2], 32))

    def choice(self, key: tuple, ins: WarpOp, what: str) -> Unspec:
        u = self.ws.leaders.get(key)
        if u is None:
            b = self.b
            line = ins.pos.line if ins.pos else "?"
            u = self.ws.leaders[key] = Unspec(len(b.unspecs), 32, f"{what} (`{ins.text}`, line {line})")
            b.unspecs.append(u)
            b.warned.setdefault(id(ins), Diagnostic(
                f"`{ins.text}`: which lane is elected the PTX ISA leaves open (it is deterministic)",
                ins.pos, "ptxmm lets the execution choose one lane of the membermask (the "
                "brute-force engine refuses such a program)"))
        return u

    def undefined(self, ins: WarpOp, w: int) -> Unspec:
        """One unspecified value per dynamic instance (the placeholder being resolved)."""
        key = self.slot[:2]
        u = self.ws.ub.get(key)
        if u is None:
            b = self.b
            line = ins.pos.line if ins.pos else "?"
            u = Unspec(len(b.unspecs), w, f"the result of `{ins.text}` (line {line}) read from a "
                       "lane outside membermask, exited or absent")
            b.unspecs.append(u)
            self.ws.ub[key] = u
            b.warned.setdefault(id(ins), Diagnostic(
                f"`{ins.text}` may read a lane outside membermask, one that exited or one the "
                "warp lacks: the PTX ISA leaves that value undefined", ins.pos,
                "ptxmm lets the execution choose it (the brute-force engine refuses such a "
                "program)"))
        return u


def resolve(b: Builder, paths: list[list[PathInfo]]) -> list[list[PathInfo]]:
    """Replace every placeholder in the graph under construction by its value."""
    ws = b.__dict__.get("_warps")
    if ws is None or not ws.slots:
        return paths
    r = _Resolver(b, ws, paths)
    for n in range(len(ws.slots)):
        r.value(n)
    f = r.fill
    for e in b.events:
        if e.value is not None:
            e.value = f(e.value)
        e.cond = f(e.cond)
        if e.ok is not None:
            e.ok = f(e.ok)
        if e.barrier is not None:
            e.barrier = (tuple(f(x) for x in e.barrier[0]), *e.barrier[1:])
    out = []
    for ps in paths:
        out.append([_fill_path(p, f, ws.facts) for p in ps])
    return out


def _fill_path(p: PathInfo, f, facts: dict[int, set[Expr]]) -> PathInfo:
    """The path with its placeholders replaced, and what its collectives assume (elect.sync:
    the lanes it elects are lanes of its membermask that take part)."""
    from dataclasses import replace

    extra = tuple(f(x) for e in p.events if e in facts for x in sorted(facts[e], key=repr))
    end = p.end
    if len(end) == 4:
        end = (end[0], tuple(f(x) for x in end[1]), end[2], end[3])
    return replace(p, assumes=tuple(f(x) for x in p.assumes) + extra,
                   regs={r: f(x) for r, x in p.regs.items()}, end=end)


FINISHERS.append(resolve)

__all__ = ["SLOT_BASE", "resolve", "warp_op"]
