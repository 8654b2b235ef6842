"""Renaming the reads of expressions (ir/values.substitute), as the builder does when it freezes a
graph: with one memo shared by many expressions, the same renamed expressions as one at a time,
shared nodes renamed once (a DAG of 2^k paths in k steps), unchanged nodes kept as they are."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptxmm.ir.values import Const, Expr, Op, ReadVal, Unspec, substitute


def _plain(e: Expr, f) -> Expr:
    """The renaming node by node, no memo (the definition)."""
    if isinstance(e, ReadVal):
        return ReadVal(f(e.eid), e.w)
    if isinstance(e, (Const, Unspec)):
        return e
    return Op(e.op, tuple(_plain(a, f) for a in e.args), e.w)


@st.composite
def dags(draw) -> list[Expr]:
    """Expressions over a pool of nodes that later nodes reuse (shared subexpressions)."""
    pool: list[Expr] = [ReadVal(i, 32) for i in range(draw(st.integers(1, 5)))]
    pool += [Const(draw(st.integers(0, 9)), 32), Unspec(0, 32, "u")]
    for _ in range(draw(st.integers(1, 25))):
        op = draw(st.sampled_from(["add", "xor", "ite"]))
        n = 3 if op == "ite" else 2
        pool.append(Op(op, tuple(draw(st.sampled_from(pool)) for _ in range(n)), 32))
    return draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8))


@settings(max_examples=200, deadline=None)
@given(dags(), st.dictionaries(st.integers(0, 4), st.integers(0, 9)))
def test_one_memo_for_many_expressions_renames_as_one_at_a_time(exprs, moves):
    def f(i):
        return moves.get(i, i)

    memo: dict = {}
    shared = [substitute(e, f, memo) for e in exprs]
    assert shared == [_plain(e, f) for e in exprs]
    assert [substitute(e, f) for e in exprs] == shared
    for e, x in zip(exprs, shared):  # a node none of whose reads moves is returned as it is
        if x == e:
            assert x is e


def test_a_shared_node_is_renamed_once():
    e: Expr = ReadVal(0, 32)
    for _ in range(200):  # 2^200 paths from the top to the read, 201 nodes
        e = Op("add", (e, e), 32)
    calls = []

    def f(i):
        calls.append(i)
        return i + 1

    out = substitute(e, f)
    assert len(calls) == 1
    node = out
    for _ in range(200):
        assert node.args[0] is node.args[1]  # the renamed DAG shares its nodes too
        node = node.args[0]
    assert node == ReadVal(1, 32)
