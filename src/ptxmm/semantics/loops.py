"""A thread's loops on its control-flow graph (liveness graphs, :func:`.control.stuck_at`).

The graph's nodes are instruction indices: an instruction falls through to the next one (not
after an unguarded ``bra``, ``ret``/``exit`` or a stop), a branch also goes to its target. A
*back edge* u → h is an edge whose head h dominates u (every path from the entry to u passes h);
its *natural loop* is h and the nodes that reach u without passing h. An iteration of the loop is
what a path does between two consecutive arrivals at h, however the text is laid out: nvcc -O3
rotates loops (``bra COND; BODY: ...; COND: ...; @%p bra BODY``), where the back edge is BODY's
fallthrough into COND and the textually backward branch is the loop's exit test.

A register *matters* to a loop (:attr:`Loops.relevant`) when, through the loop's own data flow, it
reaches the guard of a *deciding* branch, an instruction's guard, an address, an operand of an
instruction with an effect (a store's or an atom's value, a barrier's operands, ...), or a
register written in the loop that matters; ``nanosleep``'s operand matters nothing (a back-off has
no effect), and neither does a timer read (``mov %rd, %globaltimer``: register arithmetic).

A branch of the loop is *deciding* (:func:`deciding`) when the loop's exits or an instruction
with an effect (a memory access, a fence, a barrier: anything but register arithmetic, labels,
branches and ``nanosleep``) is control dependent on it, directly or through another deciding
branch: control dependence as Ferrante, Ottenstein and Warren define it, on the iteration's graph
(the body; a back edge to the header goes to a LATCH node, each exit edge to a node of its own,
all of them to one END) and its post-dominator tree (networkx). A branch that is not deciding
only chooses between ways round the iteration that run the same effects in the same order and
leave by the same edge — libcu++'s back-off (``cuda::atomic_ref::wait``: a spin count
``i < 16`` chooses between counting and reading ``%globaltimer``, the elapsed time chooses the
``nanosleep`` delay), never whether the loop ends — so the registers it reads need not repeat.
A read whose destination matters nothing cannot change the loop's effects, their addresses and
values, nor whether it exits."""

from __future__ import annotations

from .._infra.records import record
from ..ir.program import (
    Addr,
    Alu,
    Atom,
    Branch,
    Halt,
    Label,
    Load,
    MBarrier,
    Mov,
    Nanosleep,
    Reg,
    Ret,
    Selp,
    Setp,
    Thread,
    operands,
)
from ..ir.sregs import TIMERS
from ..ir.values import TRUE, Const, Expr, Op, ReadVal, convert, mk, unspecs_of
from .events import Kind

PURE = (Mov, Alu, Setp, Selp)  # register arithmetic: its operands matter when its result does


@record
class Loops:
    """The natural loops of one thread: back edges (u, h); each header's body (the union of its
    back edges' natural loops) and the registers that matter to it; ``irreducible``: a cycle with
    no back edge (a loop entered at two places) exists."""

    back: frozenset[tuple[int, int]]
    body: dict[int, frozenset[int]]
    relevant: dict[int, frozenset[str]]
    irreducible: bool
    # each header → the registers live where its loop exits (read on some path after the loop
    # before being overwritten, or observed at the thread's end: the condition's registers)
    live_out: dict[int, frozenset[str]] = None  # type: ignore[assignment]
    # the registers live before each instruction; the headers of the loops that may become awaits
    # (:func:`await_loop`)
    live: tuple[frozenset[str], ...] = ()
    awaitable: frozenset[int] = frozenset()

    def containing(self, pc: int) -> list[int]:
        """The headers of the loops whose body holds instruction ``pc``."""
        return [h for h, b in self.body.items() if pc in b]


def successors(t: Thread, labels: dict[str, int], i: int) -> list[int]:
    ins = t.instrs[i]
    out = []
    if isinstance(ins, Branch):
        out.append(labels[ins.target])
    if ins.guard is not None or not isinstance(ins, (Branch, Ret, Halt)):
        if i + 1 < len(t.instrs):
            out.append(i + 1)
    return out


def _backward(succ: list[list[int]]) -> bool:
    """Whether some instruction leads back to itself or an earlier one (else the control-flow
    graph, whose other edges all go forward, has no cycle)."""
    return any(j <= i for i, js in enumerate(succ) for j in js)


def loop_free(t: Thread) -> bool:
    """Whether thread ``t``'s control-flow graph has no cycle: no loop, so no path of a liveness
    graph is stuck in one (.control.stuck_at) and the unrolling cuts nothing."""
    labels = {ins.name: i for i, ins in enumerate(t.instrs) if isinstance(ins, Label)}
    return not _backward([successors(t, labels, i) for i in range(len(t.instrs))])


def ends(t: Thread, i: int) -> bool:
    """Whether the thread may end at instruction ``i``: a ret or a stop (guarded or not), or the
    last instruction when it falls through."""
    ins = t.instrs[i]
    return isinstance(ins, (Ret, Halt)) or (i + 1 == len(t.instrs) and (
        ins.guard is not None or not isinstance(ins, Branch)))


def _live_in(t: Thread, labels: dict[str, int], end_live: frozenset[str]) -> list[set[str]]:
    """Register liveness over the thread's instructions (backward, to a fixpoint): the registers
    each instruction may read before any write on some path from it; a guarded write kills
    nothing; the thread's end reads ``end_live``."""
    n = len(t.instrs)
    live: list[set[str]] = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for i in reversed(range(n)):
            ins = t.instrs[i]
            succ = successors(t, labels, i)
            out = set(end_live) if (isinstance(ins, (Ret, Halt)) and ins.guard is None) or i + 1 == n \
                else set()
            for j in succ:
                out |= live[j]
            dst = getattr(ins, "dst", None)
            if isinstance(dst, Reg) and ins.guard is None:
                out.discard(dst.name)
            new = out | _regs(operands(ins)) | ({ins.guard[0].name} if ins.guard is not None else set())
            if new != live[i]:
                live[i], changed = new, True
    return live


def _exits_live(t: Thread, labels, body: frozenset[int], live: list[set[str]],
                end_live: frozenset[str]) -> frozenset[str]:
    """The registers live on leaving the loop ``body``: at each instruction outside it that an
    instruction of it leads to, and at the thread's end when the loop can end the thread."""
    out: set[str] = set()
    for i in body:
        ins = t.instrs[i]
        for j in successors(t, labels, i):
            if j not in body:
                out |= live[j]
        if isinstance(ins, (Ret, Halt)) or i + 1 == len(t.instrs):
            out |= end_live
    return frozenset(out)


def analyse(t: Thread, labels: dict[str, int], end_live: frozenset[str] = frozenset()) -> Loops:
    """The natural loops of thread ``t`` (dominators on its control-flow graph, networkx) and,
    per loop, the registers that matter to it and those live where it exits (``end_live``: the
    registers read at the thread's end, a litmus condition's)."""
    succ = [successors(t, labels, i) for i in range(len(t.instrs))]
    if not _backward(succ):  # no cycle: no loop (and no networkx)
        return Loops(frozenset(), {}, {}, False, {},
                     tuple(frozenset(x) for x in _live_in(t, labels, end_live)))
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(len(t.instrs)))
    for i in range(len(t.instrs)):
        g.add_edges_from((i, j) for j in succ[i])
    idom = dict(nx.immediate_dominators(g, 0))
    idom[0] = 0  # networkx 3.6 leaves the entry out

    def dominates(h: int, u: int) -> bool:
        while True:
            if u == h:
                return True
            if idom[u] == u:
                return False
            u = idom[u]

    back = frozenset((u, h) for u, h in g.edges if u in idom and dominates(h, u))
    body: dict[int, set[int]] = {}
    for u, h in back:
        seen, todo = {h}, [u]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += g.predecessors(n)
        body.setdefault(h, set()).update(seen)
    forward = g.subgraph(idom).copy()
    forward.remove_edges_from(back)
    live = _live_in(t, labels, end_live)
    bodies = {h: frozenset(b) for h, b in body.items()}
    out = {h: _exits_live(t, labels, b, live, end_live) for h, b in bodies.items()}
    rel = {h: relevant(t, b, h, labels, out[h]) for h, b in bodies.items()}
    return Loops(back, bodies, rel, not nx.is_directed_acyclic_graph(forward), out,
                 tuple(frozenset(x) for x in live),
                 frozenset(h for h, b in bodies.items() if await_loop(t, labels, b, h, rel[h], out[h])))


def _regs(ops) -> set[str]:
    out = set()
    for o in ops:
        o = o.base if isinstance(o, Addr) else o
        if isinstance(o, Reg):
            out.add(o.name)
    return out


def relevant(t: Thread, body, header: int | None = None, labels: dict[str, int] | None = None,
             live_out: frozenset[str] = frozenset()) -> frozenset[str]:
    """The registers that matter to the loop ``body`` (instruction indices) with header
    ``header``, flow-insensitively: a superset, so the stuck test drops no register that could
    matter. The deciding branches and the registers that matter depend on each other (a branch
    that decides the value of a register that matters, or of one live where the loop exits
    (``live_out``), is deciding: ``if (i < 16) x = 1; else x = 2;`` before ``ld [a + x]``): both
    grow together to a fixpoint. Without a header every branch counts as deciding (the test
    before control dependence)."""
    if header is None:
        return _relevant_regs(t, body, None)
    decide: frozenset[int] = frozenset()
    while True:
        rel = _relevant_regs(t, body, decide)
        more = deciding(t, labels, frozenset(body), header, rel | live_out)
        if more == decide:
            return rel
        decide = more


def _relevant_regs(t: Thread, body, decide: frozenset[int] | None) -> frozenset[str]:
    """The registers that reach, through the loop's data flow, the guard of a branch of
    ``decide`` (None: of every branch), an instruction's guard, an address or an effect's
    operand."""
    seeds: set[str] = set()
    feeds: dict[str, set[str]] = {}  # a written register → the registers its value comes from
    for i in body:
        ins = t.instrs[i]
        dst = getattr(ins, "dst", None)
        guard = {ins.guard[0].name} if ins.guard is not None else set()
        if isinstance(ins, PURE) and isinstance(dst, Reg):
            # a predicated register operation: its guard only decides its result's value
            feeds.setdefault(dst.name, set()).update(_regs(operands(ins)) | guard)
            continue
        if isinstance(ins, Branch):
            if decide is None or i in decide:
                seeds |= guard
            continue
        if isinstance(ins, Nanosleep):  # a back-off's guard and delay decide nothing either
            continue
        seeds |= guard
        if isinstance(ins, Load):
            seeds |= _regs([ins.addr])
        elif not isinstance(ins, Label):
            seeds |= _regs(operands(ins))
    out, todo = set(), list(seeds)
    while todo:
        r = todo.pop()
        if r not in out:
            out.add(r)
            todo += feeds.get(r, ())
    return frozenset(out)


def effectful(ins) -> bool:
    """Whether ``ins`` has an effect a loop's iteration must repeat (an event: a memory access,
    a fence, a barrier, a stop, ...): anything but register arithmetic (timer reads included),
    labels, branches and ``nanosleep``."""
    return not isinstance(ins, (*PURE, Label, Branch, Nanosleep))


def _iteration_graph(t: Thread, labels, body: frozenset[int], header: int):
    """The graph of one iteration of the loop: the body's edges, a back edge to ``header`` into
    "latch", an exit edge (u, v) into ("exit", u, v) (the thread's end: v = "end"), each of them
    into "end"."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_node("end")
    for u in body:
        succ: list = successors(t, labels, u)
        if ends(t, u):
            succ.append("end")
        for v in succ:
            if v == header:
                g.add_edge(u, "latch")
            elif v in body:
                g.add_edge(u, v)
            else:
                g.add_edge(u, ("exit", u, v))
                g.add_edge(("exit", u, v), "end")
    if g.has_node("latch"):
        g.add_edge("latch", "end")
    return g


def deciding(t: Thread, labels, body: frozenset[int], header: int,
             matter: frozenset[str] = frozenset()) -> frozenset[int]:
    """The deciding branches of the loop ``body`` (see the module doc): the least set D of its
    conditional branches such that every exit node, every instruction with an effect
    (:func:`effectful`), every write of a register of ``matter`` and every branch of D is
    control dependent only on branches of D. A
    branch with a successor from which the iteration cannot end (an inner loop with no way out)
    is deciding too: whether the thread stays there is its decision."""
    import networkx as nx

    g = _iteration_graph(t, labels, body, header)
    rev = g.reverse(copy=False)
    ipdom = dict(nx.immediate_dominators(rev, "end"))
    ipdom["end"] = "end"
    branches = [u for u in body if isinstance(t.instrs[u], Branch) and len(set(g.successors(u))) > 1]
    controls: dict[int, set] = {}  # branch → the nodes control dependent on it
    dec: set[int] = set()
    for x in branches:
        if x not in ipdom or any(s not in ipdom for s in g.successors(x)):
            dec.add(x)
            continue
        cd: set = set()
        for s in set(g.successors(x)):
            n = s
            while n != ipdom[x] and n != "end":  # Ferrante et al.: walk up to x's post-dominator
                cd.add(n)
                n = ipdom[n]
        controls[x] = cd
    targets = {n for n in g if isinstance(n, tuple)} | dec | {
        u for u in body if effectful(t.instrs[u])
        or isinstance(getattr(t.instrs[u], "dst", None), Reg) and t.instrs[u].dst.name in matter}
    changed = True
    while changed:
        changed = False
        for x, cd in controls.items():
            if x not in dec and cd & targets:
                dec.add(x)
                targets.add(x)
                changed = True
    return frozenset(dec)


AWAIT_OK = (Load, Mov, Alu, Setp, Selp, Label, Branch, Nanosleep)


def await_loop(t: Thread, labels, body: frozenset[int], header: int, rel: frozenset[str],
               live_out: frozenset[str]) -> bool:
    """Whether the loop may become an await (its back edges never taken, .control.branch): it
    only reads (loads, ``mbarrier.test_wait``/``try_wait``, register arithmetic, branches,
    ``nanosleep``; a load or mbarrier wait unguarded), and every register it carries from one
    iteration into the next (read in the iteration before the iteration writes it, and written
    in it) matters nothing to it (:func:`relevant`) and is dead where it exits — libcu++'s spin
    count and its timer. Then an iteration's effects, their values and the way it leaves are the
    same function of its own reads and of the registers the loop never writes, whichever
    iteration it is (the module doc: the branches the carried registers reach are not deciding),
    and the state where it exits is the same too: an execution that goes round k times ends as
    the one that exits in its first iteration with the reads of its last — the await reduction
    of straight-line loops (.control.await_sound), on the control-flow graph, resting on the
    same assumption (dropping the earlier iterations' reads keeps an execution consistent). A
    loop whose staying in depends on a timer read (:func:`timer_matters`) stays unrolled: its
    first iteration need not be able to leave (``while (flag == 0 || now - t0 < T)``), and
    its verdict is "not decided" (:func:`timed`)."""
    for i in body:
        ins = t.instrs[i]
        if isinstance(ins, MBarrier) and ins.op in ("test_wait", "try_wait") and ins.guard is None:
            continue
        if not isinstance(ins, AWAIT_OK) or isinstance(ins, Load) and ins.guard is not None:
            return False
    carried = _carried(t, labels, body, header)
    return not carried & (rel | live_out) and not timer_matters(t, body, rel)


def _carried(t: Thread, labels, body: frozenset[int], header: int) -> set[str]:
    """The registers an iteration of the loop may read before it writes them and also writes:
    liveness at the header over the body, back edges and exits reading nothing."""
    live: dict[int, set[str]] = {i: set() for i in body}
    written: set[str] = set()
    changed = True
    while changed:
        changed = False
        for i in sorted(body, reverse=True):
            ins = t.instrs[i]
            out: set[str] = set()
            for j in successors(t, labels, i):
                if j in body and j != header:
                    out |= live[j]
            dst = getattr(ins, "dst", None)
            if isinstance(dst, Reg):
                written.add(dst.name)
                if ins.guard is None:
                    out.discard(dst.name)
            new = out | _regs(operands(ins)) | ({ins.guard[0].name} if ins.guard is not None else set())
            if new != live[i]:
                live[i], changed = new, True
    return live[header] & written


def loose(ins, rel: frozenset[str]) -> bool:
    """Whether a read of ``ins`` (a ld, an atom) feeds nothing that matters to its loop: its
    destination register does not matter (an atom's write may still be seen: see hangs.py)."""
    return isinstance(ins, (Load, Atom)) and ins.dst.name not in rel


# -- the stuck candidates of liveness graphs (the builder ``b``, its path ``st``) -----------------


def stuck_at(b, st, target: int, cond: Expr, deps, ins) -> None:
    """Liveness graphs: the path that takes the back edge to the loop header ``target`` (at the
    instruction ``ins``: a taken branch, or the body's last instruction falling through into a
    rotated loop's test) and repeats the iteration that just ran — the events since the path
    last arrived at the header — forever (whether it can is :mod:`ptxmm.queries.hangs`'s query):
    the iteration's events, "each register that matters to the loop (.loops.relevant) ends the
    iteration as it began it" (a register the iteration writes before it reads it needs nothing,
    nor does one that matters nothing: a counter of the iterations), and the iteration's reads
    whose value matters nothing (their reads need not see the latest write)."""
    n0, regs0, rbw, _ = st.heads.get(target, (len(st.events), dict(st.regs), set(st.regs), ()))
    rel = b.loops.relevant[target]
    eqs, changed = [], []
    for r in sorted(rbw):  # the registers the iteration reads before it writes them
        v1 = st.regs.get(r)
        if v1 is None:
            continue
        v0 = regs0.get(r, Const(0, v1.w))
        if v1 != v0:
            changed.append(r)
            if r in rel or not b.relevance:
                eqs.append(mk("eq", convert(v0, v1.w), v1))
    events = tuple(st.events[n0:])
    free = tuple(e for e in events if b.relevance and b.events[e].kind == Kind.R
                 and loose(b.events[e].instr, rel))
    # a changed register that matters nothing to the loop and is dead where it exits (a back-off
    # delay, a counter never read after) cannot tell a longer run from one the unrolling has, nor
    # can one the iteration refreshes from its own reads (:func:`refreshed`)
    changed = [r for r in changed if (r in rel or r in b.loops.live_out[target] or not b.relevance)
               and not (b.relevance and refreshed(b, st, target, events, st.regs[r]))]
    note_exact(b, b.events, (b.cur, target), events, changed, cond, ins)
    timer = timed(b, st, target, cond)
    if timer is not None:
        b.inexact[(b.cur, target)] = (f"the loop at line {_line(ins)} is not exact: whether it goes "
                                      f"on depends on {timer}, and time advances")
        return
    stuck = st.fork()
    if cond != TRUE:
        stuck.assumes.append(cond)
        stuck.ctrl = stuck.ctrl | deps
    stuck.end, stuck.pc = ("stuck", (events, tuple(eqs), ins, free)), 10**9
    b.pending.append(stuck)


def refreshed(b, st, target: int, events: tuple[int, ...], v: Expr) -> bool:
    """Whether the value ``v`` a register ends the iteration with is the value of one of the
    iteration's own reads (a fresh value, whatever the register held before; a value computed
    from a read might still be computed from the old value too, so only the read itself counts):
    libcu++'s ``cuda::latch::wait`` reloads the count it then waits to change. In an endless
    run of a loop that writes nothing, memory fairness eventually gives every strong read of an
    iteration the value it read the iteration before, and from then on such a register starts
    each iteration with the same value: the iteration repeats, as the second one of the
    unrolling (``--unroll`` 1 or more) can; and a run that ends after n iterations ends as the
    unrolling's second one with the reads of the last two, the earlier ones dropped (the
    awaits' own assumption, .loops.await_loop)."""
    return b.unroll >= 1 and isinstance(v, ReadVal) and v.eid in events


def timed(b, st, target: int, cond: Expr) -> str | None:
    """The timer read (ir/sregs.py) of this iteration that the path's staying in the loop
    depends on — through the back edge's condition or a branch the iteration took — or None.
    Such an iteration is no stuck candidate: repeating it forever would read the same timer
    values forever, while a timer counts up (an endless run reads ever later values: a timed
    back-off ``while (now - t0 < T)`` ends once T nanoseconds have passed), so "it may repeat"
    would be a false hang; and "it cannot" would claim more than ptxmm decides (a loop
    ``while (flag == 0 || now - t0 < T)`` still hangs when no one sets flag). The loop is marked
    not exact instead: when the unrolling cuts it, liveness answers "not decided" with this
    reason, never a hang it cannot show. A timer read that matters nothing to the loop
    (:func:`timer_matters`: libcu++'s elapsed time, which only picks the ``nanosleep`` delay and
    which of two re-polls runs) leaves the iteration a candidate and the loop exact."""
    if not b.timer_uids or (b.relevance and not timer_matters(
            b.p.threads[b.cur], b.loops.body[target], b.loops.relevant[target])):
        return None
    first = st.head_uid.get(target, len(b.unspecs))
    for c in (cond, *st.assumes):
        if c in b.clock_facts:
            continue
        for u in unspecs_of(c):
            if u.uid >= first and u.uid in b.timer_uids:
                return u.where
    return None


def timer_matters(t: Thread, body, rel: frozenset[str]) -> bool:
    """Whether a timer read of the loop ``body`` (ir/sregs.py) lands in a register that matters
    to the loop: one that only picks a back-off's delay (libcu++'s elapsed time since the wait
    began) cannot decide whether the loop goes on."""
    for i in body:
        ins = t.instrs[i]
        dst = getattr(ins, "dst", None)
        if isinstance(dst, Reg) and dst.name in rel and any(
                isinstance(o, Reg) and o.name in TIMERS for o in operands(ins)):
            return True
    return False


def _line(ins) -> int | str:
    return ins.pos.line if ins is not None and ins.pos is not None else "?"


def exact(events, changed: list[str], cond: Expr) -> str | None:
    """Why an iteration of a loop is not *exact* (None: it is): an exact loop that runs forever is
    caught by the stuck test, and one that ends after more iterations than --unroll ends as one
    the unrolling explored. It is exact when no register it carries changes (each iteration is
    the same function of its own reads, as an await's: .control.await_sound), it holds no barrier
    (an iteration with a barrier is never stuck), and it writes no memory but by a CAS the loop
    goes back only when it failed (.control.cas_retry): then the iterations of an endless run
    write nothing, the whole execution has finitely many writes, memory fairness makes every
    strong read eventually read a co-maximal write, and from there each iteration is the stuck
    candidate the first iteration gives (Dat3M's side-effect-free spin loops; an iteration that
    writes may need Dat3M's infix/suffix repetition, which ptxmm does not encode)."""
    if changed:
        return f"{', '.join(changed)} change{'' if len(changed) > 1 else 's'} in each iteration"
    for x in events:
        if x.kind == Kind.B:
            return "an iteration waits at a barrier"
        if x.kind == Kind.W and not (isinstance(x.instr, Atom) and x.instr.op == "cas"
                                     and negates(cond, x.cond)):
            return "an iteration writes memory"
    return None


def note_exact(b, evs, key, events, changed, cond, ins) -> None:
    why = exact([evs[e] for e in events], changed, cond)
    if why is not None:
        b.inexact[key] = f"the loop at line {_line(ins)} is not exact: {why}"
    else:
        b.inexact.setdefault(key, "")


def note_cut(b, t: Thread, pc: int, target: int) -> None:
    """The unrolling cut the loop of the backward branch at ``pc`` (liveness graphs)."""
    if not b.liveness:
        return
    hs = [h for h in b.loops.containing(pc) if target in b.loops.body[h]]
    if not hs:  # a cycle with no back edge: the stuck test never examines it
        key = (t.index, -1 - pc)
        b.inexact[key] = (f"the loop at line {_line(t.instrs[pc])} is entered at two places "
                          "(its control flow is irreducible)")
    else:
        key = (t.index, min(hs, key=lambda h: len(b.loops.body[h])))
    b.cut_loops.setdefault(key, _line(t.instrs[pc]))


def negates(c: Expr, g: Expr) -> bool:
    """Whether ``c`` is syntactically the negation of the equality ``g`` (ne a b, or not (eq a b))."""
    if not (isinstance(g, Op) and g.op == "eq"):
        return False
    if isinstance(c, Op) and c.op == "lnot":
        return c.args[0] == g
    return isinstance(c, Op) and c.op == "ne" and c.args in (g.args, g.args[::-1])
