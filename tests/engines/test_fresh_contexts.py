"""The Z3 engine's context handling for large problems (engines/z3/, _fresh_context): a large
problem built when no other is open starts a fresh main context (term ids in creation order, so
the solver's choices do not depend on what earlier problems freed), never while a problem is open,
and never changes an answer."""

from __future__ import annotations

import pytest

import ptxmm

z3 = pytest.importorskip("z3")

# three threads each store x three times and read it once: 9 writes of x, well past the pooled size
_STORES = "    st.relaxed.gpu.global.u32 [x], {};\n"
SRC = "\n".join([".test MANY", ".global .u32 x = 0;"] + [
    f".thread T{t} .cta {t} {{\n" + "".join(_STORES.format(3 * t + k + 1) for k in range(3))
    + "    ld.relaxed.gpu.global.u32 %r0, [x];\n}" for t in range(3)] + ["exists (T0:%r0 == 9)"])


def _problem(prog):
    from ptxmm.cat.parser import load_model
    from ptxmm.engines.z3 import _POOL_MAX_CHOICES, Z3Problem
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.vocab import candidates

    eg = build(prog, unroll=2)
    cand = candidates(eg)
    assert len(cand.rf) + len(cand.co) > _POOL_MAX_CHOICES  # a large problem
    return Z3Problem(eg, load_model("ptx"), [], cand)


def test_a_large_problem_gets_a_fresh_context_only_when_none_is_open():
    prog = ptxmm.parse(SRC)
    z3.Bool("anything")  # the main context exists
    before = z3.main_ctx()
    p1 = _problem(prog)
    try:
        assert z3.main_ctx() is not before and p1.lg.ctx is z3.main_ctx()
        p2 = _problem(prog)  # p1 is open: the same context
        try:
            assert p2.lg.ctx is p1.lg.ctx
            assert p1.find() is not None and p2.find() is not None
        finally:
            p2.close()
    finally:
        p1.close()
    p3 = _problem(prog)
    try:
        assert p3.lg.ctx is not p1.lg.ctx
    finally:
        p3.close()


def test_checks_in_one_process_give_the_same_answers():
    prog = ptxmm.parse(SRC)
    runs = [ptxmm.check(prog) for _ in range(2)]
    assert runs[0].holds is True and runs[0].status == "ok"
    a, b = runs
    assert [o.outcome for o in a.outcomes] == [o.outcome for o in b.outcomes]
    assert [(f.kind, f.name) for f in a.findings] == [(f.kind, f.name) for f in b.findings]
