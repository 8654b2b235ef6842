"""Acquire and release vector accesses: the order of their elements is the execution's choice.

PTX ISA 8.2.4 (memory operations on vector data types): a vector access is "modelled as a set of
equivalent memory operations with a scalar data type, executed in an unspecified order on the
elements in the vector". The front end lowers ``ld.acquire``/``st.release`` ``.v2``/``.v4`` to a
:class:`~ptxmm.kernel.module.lowering.VectorOrder` followed by one scalar access per element; here
the thread's path forks once per permutation of the elements, each fork running the elements in
its order (program order among them follows it), so every order is checked and none is promised.
An element that stops the thread (an out-of-bounds access) or forks the path itself (a guard, an
address computed from loaded data) is followed on every path it makes, with the rest of its
order."""

from __future__ import annotations

from itertools import permutations

from ..ir.program import Thread
from ..kernel.module.lowering import VectorOrder
from .builder import Builder, State, handles


@handles(VectorOrder, control=True)
def vector_order(b: Builder, t: Thread, ins: VectorOrder, st: State, guard, gdeps, stack) -> State | None:
    """Run the ``ins.n`` accesses after ``ins`` in every order: the path ``st`` takes the first
    order (element order), a fork of it each other one; returns the path that continues, pushing
    the others on ``stack``."""
    base = st.pc + 1
    orders = list(permutations(range(ins.n)))
    forks = [st] + [st.fork() for _ in orders[1:]]
    done: list[State] = []
    for s, order in zip(forks, orders):
        done += _run(b, t, s, base, order, stack)
    for s in done:
        if s.pc < 10**9:  # not stopped: after the vector's last element
            s.pc = base + ins.n
            s.last = s.pc - 1
    stack.extend(done[1:])
    return done[0] if done else None


def _run(b: Builder, t: Thread, st: State, base: int, order: tuple[int, ...], stack) -> list[State]:
    """The elements at ``base + k`` for ``k`` in ``order`` on path ``st``: the paths that result
    (a path that stopped keeps its pc)."""
    work = [(st, order)]
    out: list[State] = []
    while work:
        s, rest = work.pop()
        if not rest or s.pc >= 10**9:
            out.append(s)
            continue
        pc = base + rest[0]
        s.pc = pc
        mark = len(stack)
        r = b.step(t, t.instrs[pc], s, stack)
        made = [r, *stack[mark:], *b.pending]
        del stack[mark:]
        b.pending = []
        for x in made:
            if x is not None:
                work.append((x, rest[1:] if x.pc == pc + 1 else ()))
    return out
