"""Acquire and release vector accesses: the order of their elements is the execution's choice.

PTX ISA 8.2.4 (memory operations on vector data types): a vector access is "modelled as a set of
equivalent memory operations with a scalar data type, executed in an unspecified order on the
elements in the vector". The front end lowers ``ld.acquire``/``st.release`` ``.v2``/``.v4`` to a
:class:`~ptxmm.ir.instructions.VectorOrder` followed by one scalar access per element.

The plain encoding (:func:`fork`) forks the thread's path once per permutation of the elements,
each fork running them in its order. It is exact, but every later instruction is then built once
per fork: CUB's look-back, one acquire vector per spin iteration, has thousands of paths.

The encoding used (:func:`choose`) stays on one path. The order is a value the execution chooses,
an unspecified ``u`` below n! (the solver picks it; the brute-force engine, which enumerates no
unspecified value, refuses such a program with the instruction named — :data:`ENCODING` "fork"
gives it the plain encoding). The elements are then accessed n times over: in copy p (p = 0 ..
n-1) every element e, as an access predicated on "the order puts e at position p", a condition
on u. Exactly one copy of each element runs, the p-th access of the chosen order in copy p, so
the accesses that run are the chosen order's, in that program order, with the guard's usual
meaning (an access whose predicate is false is no event of the execution). A loaded element's
register is, after the copies, the value its running copy read (an ``ite`` over the copies), with
the dependencies of the copies' reads only. Each execution therefore is one of the plain
encoding's with the same events, values and order, and each of those is one of these (u = the
order's number): the two allow the same executions, outcomes and findings.
tests/kernel/test_vector_acqrel.py checks both against the union of the programs that fix each
order explicitly, and the plain one with Z3 = brute. An element whose address is computed from
loaded data or lies outside every buffer (it forks or stops the path itself) takes the plain
encoding."""

from __future__ import annotations

from itertools import permutations

from ..ir.instructions import VectorOrder
from ..ir.program import Load, Thread
from ..ir.values import Const, Unspec, mk, truth
from .builder import Builder, State, handles
from .memory import memory

ENCODING = "choose"  # or "fork": the plain encoding (the tests compare the two)


@handles(VectorOrder, control=True)
def vector_order(b: Builder, t: Thread, ins: VectorOrder, st: State, guard, gdeps, stack) -> State | None:
    """The ``ins.n`` accesses after ``ins``, in an order the execution chooses; returns the path
    that continues (pushing any other on ``stack``), its pc past the last element."""
    if ENCODING == "choose" and all(_plain(b, el, st) for el in t.instrs[st.pc + 1:st.pc + 1 + ins.n]):
        return choose(b, t, ins, st)
    return fork(b, t, ins, st, stack)


def _plain(b: Builder, el, st: State) -> bool:
    """An element access at a known address inside a buffer (or a litmus location)."""
    if b.layout is None:
        return True
    return isinstance(b.address(el.addr, st)[0], Const) and b.element(el.addr, st, el)[0] is not None


def choose(b: Builder, t: Thread, ins: VectorOrder, st: State) -> State:
    """One path: the order an unspecified value, each element accessed once per position, the
    access at position p predicated on the order putting it there (module doc)."""
    base, n = st.pc + 1, ins.n
    orders = list(permutations(range(n)))
    w = max(1, (len(orders) - 1).bit_length())
    where = f"the order of the elements of `{ins.text}`" + (f" (line {ins.pos.line})" if ins.pos else "")
    u = Unspec(len(b.unspecs), w, where)
    b.unspecs.append(u)
    if len(orders) < 1 << w:
        st.assumes.append(mk("ult", u, Const(len(orders), w)))
    elems = t.instrs[base:base + n]
    for el in elems:  # a loaded register collects its copies' values and dependencies only
        if isinstance(el, Load):
            st.regs[el.dst.name] = Const(0, 64)
            st.deps[el.dst.name] = frozenset()
    for p in range(n):
        for e, el in enumerate(elems):
            at = None
            for k, order in enumerate(orders):
                if order[p] == e:
                    is_k = mk("eq", u, Const(k, w))
                    at = is_k if at is None else mk("lor", at, is_k)
            g, gd = at, frozenset()
            if el.guard is not None:  # a predicated vector access: its own guard too
                v, gd = b.val(el.guard[0], st, None)
                g = mk("land", g, mk("lnot", truth(v)) if el.guard[1] else truth(v))
            if isinstance(g, Const) and not g.v:
                continue
            st.pc = base + e
            memory(b, t, el, st, g, gd)
    st.pc = base + n
    st.last = st.pc - 1
    return st


def fork(b: Builder, t: Thread, ins: VectorOrder, st: State, stack) -> State | None:
    """The plain encoding: the path ``st`` takes the first order (element order), a fork of it
    each other one."""
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
    (an element may fork the path, or stop it: a stopped path keeps its pc)."""
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
