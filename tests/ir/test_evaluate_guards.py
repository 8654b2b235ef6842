"""A value expression evaluated in an execution names reads of paths that execution did not take
(issue 42: ``check(..., verdict_only=True)`` of cg-awbarrier-block-reduce raised ``KeyError`` —
lane 0's sum read through ``shfl`` lane 1's registers, whose path guard is ``land`` of its first
``mbarrier.try_wait`` and its second, the second never executed when the first succeeded). As an
``ite`` evaluates only its chosen arm, ``land``/``lor`` stop at their first deciding operand; where
every read is there, the answer is the eager one."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.ir.program import Condition
from ptxmm.ir.values import Const, Op, ReadVal, evaluate
from ptxmm.queries.checker import check

MISSING = ReadVal(99, 1)  # a read of a path not taken: not among the execution's values


def test_a_deciding_operand_spares_the_rest():
    assert evaluate(Op("land", (Const(0, 1), MISSING), 1), {}) == 0
    assert evaluate(Op("lor", (Const(1, 1), MISSING), 1), {}) == 1
    with pytest.raises(KeyError):  # an operand that decides nothing is still read
        evaluate(Op("land", (Const(1, 1), MISSING), 1), {})


_bool = st.deferred(lambda: st.one_of(
    st.integers(0, 3).map(lambda i: ReadVal(i, 1)), st.integers(0, 1).map(lambda v: Const(v, 1)),
    st.tuples(st.sampled_from(["land", "lor"]), _bool, _bool).map(lambda t: Op(t[0], (t[1], t[2]), 1)),
    _bool.map(lambda a: Op("lnot", (a,), 1))))


@settings(max_examples=200, deadline=None)
@given(_bool, st.lists(st.integers(0, 1), min_size=4, max_size=4))
def test_with_every_read_there_the_answer_is_the_eager_one(e, vals):
    def eager(x):
        if isinstance(x, Const):
            return x.v
        if isinstance(x, ReadVal):
            return vals[x.eid]
        a = [eager(y) for y in x.args]
        return {"land": lambda: int(a[0] and a[1]), "lor": lambda: int(a[0] or a[1]),
                "lnot": lambda: int(not a[0])}[x.op]()
    assert evaluate(e, dict(enumerate(vals))) == eager(e)


def test_the_verdict_query_of_a_kernel_with_a_second_try_wait_has_its_outcome():
    """The query for an execution where the forall's condition holds (as holding.py asked it)."""
    prog = ptxmm.load(ROOT / "examples/kernels/real/cg-awbarrier-block-reduce.ptx")
    cond = prog.condition
    assert cond.quantifier == "forall"
    asked = replace(prog, condition=Condition("exists", cond.expr, "exists (the forall's condition)"))
    res = check(asked, verdict_only=True, flags=False, properties=("condition",))
    assert res.status == "ok" and res.holds is True
    assert [str(o.outcome) for o in res.outcomes] == ["result[0]=10"]
