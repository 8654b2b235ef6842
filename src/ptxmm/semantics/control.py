"""Control flow: bra (a conditional branch forks the path; a backward one is taken ``unroll`` times
at most, or its loop reduced to an await where that is sound: :func:`await_sound`, and the
module doc of :mod:`.builder`), ret, and the paths of liveness graphs that hang: stuck in a loop
(:func:`stuck_at`) or blocked at a barrier wait (:func:`blocked_at`)."""

from __future__ import annotations

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
from .loops import negates, note_cut, stuck_at


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
    if backward and ins.guard is not None and b.reduce and await_sound(t, target, st.pc) \
            and (side_effect_free(t, target, st.pc) or cas_retry(b, t, target, st, cond)):
        b.awaits += 1  # await: assume the loop exits in this iteration
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
    st.pc += 1
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


def blocked_at(b: Builder, st: State, wait: int, part: str, guard: Expr | None) -> None:
    """Liveness graphs: the path that stops at this barrier wait (its thread blocked there)."""
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


def side_effect_free(t: Thread, start: int, end: int) -> bool:
    """Only loads, mbarrier waits and register arithmetic (an await, see the module doc), and
    ``nanosleep`` (a back-off: no event, guarded or not; semantics/misc.py)."""
    return all(isinstance(i, Nanosleep)
               or ((isinstance(i, (Label, Load, Mov, Alu, Setp, Selp))
                    or (isinstance(i, MBarrier) and i.op in ("test_wait", "try_wait")))
                   and i.guard is None) for i in t.instrs[start:end])
