"""Warp-level instructions: elect.sync, whose elected lane is the execution's choice (a fork)."""

from __future__ import annotations

from ..errors import Diagnostic, UnsupportedError
from ..ir.program import (
    Elect,
    Instruction,
    Thread,
    cond_refs,
    operands,
)
from ..ir.values import Const
from .builder import Builder, State, handles


@handles(Elect)
def elect(b: Builder, t: Thread, ins: Elect, st: State, guard, gdeps) -> None:
    """elect.sync: the thread is the elected lane (p True) on one path and not (p False) on
    another, a path the thread forks here — the execution chooses, never ptxmm; a warning
    when a later instruction or the condition reads p (the outcome may then depend on it)."""
    if guard is not None:
        raise UnsupportedError(f"predicated `{ins.text}`", ins.pos, "elect.sync runs in every lane")
    other = st.fork()
    other.pc += 1
    b.set_reg(other, ins.dst, Const(0, 1), "pred", frozenset(), None)
    b.pending.append(other)
    b.set_reg(st, ins.dst, Const(1, 1), "pred", frozenset(), None)
    if id(ins) not in b.warned and reads_later(b, t, ins.dst.name, ins):
        b.warned[id(ins)] = Diagnostic(
            f"`{ins.text}`: which lane is elected is the execution's choice, and {ins.dst.name} "
            "is read later", ins.pos, f"ptxmm checks both (thread {t.name} elected or not); an "
            "outcome that holds only on one of them depends on the election")


def reads_later(b: Builder, t: Thread, reg: str, ins: Instruction) -> bool:
    cond = b.p.condition
    named = cond is not None and any(getattr(r, "reg", None) == reg and getattr(r, "thread", None)
                                     == t.name for r in cond_refs(cond.expr))
    k = t.instrs.index(ins)
    return named or any(reg in {getattr(o, "name", None) for o in operands(i)}
                        or (i.guard is not None and i.guard[0].name == reg) for i in t.instrs[k + 1:])
