"""Control flow: bra (a conditional branch forks the path; a backward one is taken ``unroll`` times
at most, or its loop reduced to an await where that is sound: :func:`await_sound`, and the
module doc of :mod:`.builder`), ret, and the paths of liveness graphs that hang: stuck in a loop
(:func:`stuck_at`) or blocked at a barrier wait (:func:`blocked_at`)."""

from __future__ import annotations

import re

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
from ..ir.values import TRUE, Const, Expr, mk, truth
from .builder import Builder, State, handles
from .events import Kind
from .loops import negates, note_cut, stuck_at, timer_matters


@handles(Branch, control=True)
def branch(b: Builder, t: Thread, ins: Branch, st: State, guard, gdeps, stack) -> State | None:
    """bra, its guard read here (the builder evaluates no guard of a branch): taken and not taken
    fork; a backward branch is taken ``unroll`` times at most, or reduced to an await."""
    target = b.labels[ins.target]
    if ins.guard is None:
        cond: Expr = TRUE
        deps: frozenset[int] = frozenset()
    else:
        g, deps = b.val(ins.guard[0], st, None)
        cond = mk("lnot", truth(g)) if ins.guard[1] else truth(g)
    backward = target <= st.pc
    if b.liveness and (st.pc, target) in b.loops.back and cond != Const(0, 1):
        stuck_at(b, st, target, cond, deps, ins)
    if b.reduce and reduces(b, t, ins, st, target, cond):
        b.awaits += 1  # await: assume the loop exits in this iteration
        if cond == TRUE:  # an unconditional back edge: the path that goes round is dropped
            return None
        st.assumes.append(mk("lnot", cond))
        st.ctrl = st.ctrl | deps
        st.pc += 1
        return st
    taken: State | None = None
    if cond != Const(0, 1):
        taken = st.fork() if cond != TRUE else st
        if cond != TRUE:
            taken.assumes.append(cond)
            taken.ctrl = taken.ctrl | deps
        taken.pc = target
        if backward:
            taken.back[st.pc] = taken.back.get(st.pc, 0) + 1
            if taken.back[st.pc] > b.unroll:
                b.cut += 1
                note_cut(b, t, st.pc, target)
                taken = None
    if cond == TRUE:
        return taken
    st.assumes.append(mk("lnot", cond))
    st.ctrl = st.ctrl | deps
    st.pc = past_repeats(b, t, st.pc, target) if not backward else st.pc + 1
    if taken is not None:
        stack.append(taken)
    return st



@handles(Halt, control=True)
def halt(b: Builder, t: Thread, ins: Halt, st: State, guard, gdeps, stack) -> State | None:
    """The thread stops, and the path records why (a kernel's failing assert)."""
    return b.stop(st, ins.stop, guard, gdeps, stack)


@handles(Ret, control=True)
def ret(b: Builder, t: Thread, ins: Ret, st: State, guard, gdeps, stack) -> State | None:
    if guard is None:
        st.pc = len(t.instrs)
        return st
    return b.finish_guarded(st, guard, gdeps, stack)


def reduces(b: Builder, t: Thread, ins: Branch, st: State, target: int, cond: Expr) -> bool:
    """Whether the branch at ``st.pc`` is never taken, the path assumed to go on (an await): the
    back edge of a straight-line await (:func:`await_sound`: side-effect free, or a CAS retry)
    or of a loop that may become one on the control-flow graph (.loops.await_loop). Never a loop
    whose staying in depends on a timer read (.loops.timer_matters). The loops of the control-flow
    graph become awaits in kernels only: a litmus outcome shows every register a load wrote
    (.outcomes.observables), and an earlier iteration may have loaded one the last did not."""
    backward = target <= st.pc
    lp = b.loops
    if lp is not None and target in lp.body and timer_matters(t, lp.body[target], lp.relevant[target]):
        return False
    if backward and ins.guard is not None and await_sound(t, target, st.pc) \
            and (side_effect_free(t, target, st.pc) or cas_retry(b, t, target, st, cond)):
        return True
    if lp is None or not b.relevance or b.layout is None:  # a litmus outcome shows every loaded register
        return False
    return (st.pc, target) in lp.back and target in lp.awaitable


def blocked_at(b: Builder, st: State, wait: int, part: str, guard: Expr | None) -> None:
    """Liveness graphs: the path that stops at this barrier wait (its thread blocked there). Every
    build notes that it met a wait (``Builder.waits``)."""
    if part == "WAIT":
        b.waits = True
    if not b.liveness or part != "WAIT":
        return
    blocked = st.fork()
    if guard is not None:
        blocked.assumes.append(guard)
    blocked.end, blocked.pc = ("blocked", (wait,)), 10**9
    b.pending.append(blocked)


def cas_retry(b: Builder, t: Thread, start: int, st: State, cond: Expr) -> bool:
    """A CAS retry loop (``L: atom.cas %r, [x], e, n; setp.ne %p, %r, e; @%p bra L``): the
    body holds what an await allows plus unguarded atom.cas, and the loop goes back only
    when every one of them failed — the branch condition is the negation of each CAS's write
    condition. A repeated iteration then wrote nothing: it is read-only, as an await's
    iterations are, and the loop becomes an await too (Dat3M's dynamic spin-loop detection
    likewise counts an iteration whose stores did not execute as side-effect free)."""
    body = t.instrs[start:st.pc]
    cas = [i for i in body if isinstance(i, Atom)]
    plain = (Label, Load, Mov, Alu, Setp, Selp, Atom)
    if not cas or not all(isinstance(i, Nanosleep) or (isinstance(i, plain) and i.guard is None)
                          for i in body):
        return False
    for ins in cas:
        w = next((e for e in reversed(st.events)
                  if b.events[e].instr is ins and b.events[e].kind == Kind.W), None)
        if ins.op != "cas" or w is None or not negates(cond, b.events[w].cond):
            return False
    return True


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
    execution consistent; tests/semantics/test_spin_loops_as_awaits.py compares the reduction with the plain
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


POLL_OK = (Load, Mov, Alu, Setp, Selp, Nanosleep)
_REG = re.compile(r"%[A-Za-z_$][\w$]*")


def past_repeats(b: Builder, t: Thread, pc: int, target: int) -> int:
    """Where the path goes on when the forward branch at ``pc`` to ``target`` is not taken: the
    next instruction, or the first one after the polls that repeat the one this branch ends
    (:func:`repeated_poll`: a spin loop the compiler unrolled, libcu++'s sixteen polls before its
    back-off), when no register they write is live there either. Those polls are not built: an
    execution that leaves at a repeated poll ends as the one that leaves at this poll with the
    repeated poll's read, and one that passes them all as the one that skips them, the failed
    polls' reads dropped — the awaits' own assumption (.loops.await_loop)."""
    if not (b.reduce and b.relevance and b.loops is not None) or b.layout is None:
        return pc + 1  # a litmus outcome shows every register loaded into (.outcomes.observables)
    end = pc
    while True:
        nxt = next((j for j in range(end + 1, len(t.instrs))
                    if isinstance(t.instrs[j], (Branch, Label))), None)
        if nxt is None or not isinstance(t.instrs[nxt], Branch) \
                or not repeated_poll(t, b.labels, b.loops.live, nxt, target):
            break
        end = nxt
    if end == pc or end + 1 >= len(t.instrs):
        return pc + 1
    wrote = {i.dst.name for i in t.instrs[pc + 1:end + 1] if isinstance(getattr(i, "dst", None), Reg)}
    if wrote & b.loops.live[end + 1]:
        return pc + 1
    b.awaits += 1
    return end + 1


def repeated_poll(t: Thread, labels: dict[str, int], live, pc: int, target: int) -> bool:
    """Whether the forward branch at ``pc`` to ``target`` repeats a poll: it ends a straight-line
    segment (loads, register arithmetic, ``nanosleep``; no label, unguarded) that follows a
    branch to the same target and is, but for the names of the registers it writes, the segment
    that ends at that branch — a spin loop the compiler unrolled (libcu++'s 16 polls before its
    back-off: ``ld; setp; @%p bra DONE`` sixteen times) — and every register the two segments
    write is dead at ``target``. An execution that leaves at this poll then ends as the one that
    leaves at the previous poll with this poll's read, which that path has: as for an await,
    the failed polls' reads are dropped (.loops.await_loop), so the path that leaves here is not
    built (the branch is assumed not taken)."""
    prev = next((j for j in range(pc - 1, -1, -1) if isinstance(t.instrs[j], (Branch, Label))), None)
    if prev is None or not isinstance(t.instrs[prev], Branch) or t.instrs[prev].guard is None \
            or labels.get(t.instrs[prev].target) != target:
        return False
    n = pc - prev
    if prev + 1 - n < 0:
        return False
    seg, before = t.instrs[prev + 1:pc], t.instrs[prev + 1 - n:prev]
    if not all(isinstance(i, POLL_OK) and i.guard is None for i in (*seg, *before)):
        return False
    m: dict[str, str] = {}
    for a, c in zip((*seg, t.instrs[pc]), (*before, t.instrs[prev])):
        if type(a) is not type(c) or _REG.sub("%", a.text) != _REG.sub("%", c.text):
            return False
        ta, tc = _REG.findall(a.text), _REG.findall(c.text)
        dc, da = getattr(c, "dst", None), getattr(a, "dst", None)
        if isinstance(dc, Reg):  # the first register of the text is the one written
            if not (ta and tc and ta[0] == da.name and tc[0] == dc.name):
                return False
            ta, tc = ta[1:], tc[1:]
        if any(m.get(rc, rc) != ra for ra, rc in zip(ta, tc)):
            return False
        if isinstance(dc, Reg):
            m[dc.name] = da.name
    wrote = {i.dst.name for i in (*seg, *before) if isinstance(getattr(i, "dst", None), Reg)}
    return not wrote & live[target]


def side_effect_free(t: Thread, start: int, end: int) -> bool:
    """Only loads, mbarrier waits and register arithmetic (an await, see the module doc), and
    ``nanosleep`` (a back-off: no event, guarded or not; semantics/misc.py)."""
    return all(isinstance(i, Nanosleep)
               or ((isinstance(i, (Label, Load, Mov, Alu, Setp, Selp))
                    or (isinstance(i, MBarrier) and i.op in ("test_wait", "try_wait")))
                   and i.guard is None) for i in t.instrs[start:end])
