"""The candidate-execution layer (src/ptxmm/executions.py): the enumerator yields only executions
that satisfy the one well-formedness statement, exactly the executions the Z3 engine allows under
a model without axioms, and a change to that statement changes both engines."""

from __future__ import annotations

import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.cat.parser import Model
from ptxmm.engines.z3 import Z3Problem
from ptxmm.semantics import executions
from ptxmm.semantics.builder import build
from ptxmm.semantics.executions import ExecutionSpace, violations
from ptxmm.semantics.outcomes import observables
from ptxmm.semantics.result import Execution
from ptxmm.semantics.vocab import candidates

NO_AXIOMS = Model("no-axioms", "<test>")

# ----- small programs: constant stores (no out-of-thin-air values), loads, fence.sc, a store
# predicated on a loaded value (an execution guard that depends on rf), a branch (two paths)


@st.composite
def programs(draw) -> str:
    locs = ["x", "y"]
    threads = []
    n = draw(st.integers(1, 3))
    for t in range(n):
        lines, loaded = [], []
        for k in range(draw(st.integers(1, 2 if n == 3 else 3))):
            kind = draw(st.sampled_from(["st", "st", "ld", "ld", "fence", "pred", "branch"]))
            loc = draw(st.sampled_from(locs))
            v = draw(st.integers(1, 2))
            if kind in ("pred", "branch") and not loaded:
                kind = "ld"
            if kind == "st":
                sem = draw(st.sampled_from(["", ".relaxed.gpu", ".release.gpu"]))
                lines.append(f"st{sem}.global.u32 [{loc}], {v};")
            elif kind == "ld":
                sem = draw(st.sampled_from(["", ".relaxed.gpu", ".acquire.gpu"]))
                lines.append(f"ld{sem}.global.u32 %r{k}, [{loc}];")
                loaded.append(k)
            elif kind == "fence":
                lines.append("fence.sc.gpu;")
            elif kind == "pred":
                lines += [f"setp.eq.u32 %p{k}, %r{loaded[-1]}, {v};", f"@%p{k} st.global.u32 [{loc}], {v};"]
            else:
                lines += [f"setp.eq.u32 %p{k}, %r{loaded[-1]}, {v};", f"@%p{k} bra $L{k};",
                          f"st.global.u32 [{loc}], {v};", f"$L{k}:"]
        threads.append(f".thread T{t} .cta {t} {{\n    " + "\n    ".join(lines) + "\n}")
    head = "".join(f".global .u32 {x} = 0;\n" for x in locs)
    return head + "\n".join(threads) + "\n"


def _key(exe: Execution, execd) -> tuple:
    """What identifies an execution: paths, rf, co, the executed reads' values, fence.sc order,
    final writes (the reads of an event that did not run have no value)."""
    vals = tuple((r, v) for r, v in exe.values if r in execd)
    return exe.paths, exe.rf, exe.co, vals, exe.scorder, tuple(sorted(exe.final))


def generated(eg, cand, fin_locs) -> list[tuple]:
    return [_key(c.execution, c.execd) for c in ExecutionSpace(eg, cand, fin_locs=fin_locs)]


def z3_executions(eg, cand) -> set[tuple]:
    """Every execution the Z3 engine's formula allows under a model with no axioms, one model per
    choice of paths, rf, co, final writes and fence.sc order (values follow from rf here)."""
    pb = Z3Problem(eg, NO_AXIOMS, observables(eg, "all"), cand)
    ch = pb.ch
    lits = [v for sel in ch.sel if sel for v in sel] + list(ch.rfv.values()) + list(ch.cov.values())
    lits += [pb.lg.z3(v) for fv in pb.fin.values() for v in fv.values()]
    lits += [ch.rank[f] < ch.rank[g] for f in ch.rank for g in ch.rank if f != g]
    out = set()
    try:
        while not pb.unsat and pb._sat():
            m = pb.s.model()
            exe = pb._extract(m)
            execd = {i for i, g in enumerate(ch.ex) if g is True or (g is not False and z3.is_true(
                m.eval(pb.lg.z3(g), model_completion=True)))}
            out.add(_key(exe, execd))
            pb.s.add(z3.Or([x != m.eval(x, model_completion=True) for x in lits]) if lits
                     else z3.BoolVal(False))
    finally:
        pb.close()
    return out


def _space(src: str):
    eg = build(ptxmm.parse(src))
    fin_locs = sorted({o.loc for o in observables(eg, "all") if o.loc is not None})
    return eg, candidates(eg), fin_locs


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_every_generated_candidate_is_wellformed_and_z3_allows_the_same(src):
    eg, cand, fin_locs = _space(src)
    gen = generated(eg, cand, fin_locs)
    for c in ExecutionSpace(eg, cand, fin_locs=fin_locs):
        assert violations(eg, cand, c.execution) == [], (src, c.execution)
    assert len(gen) == len(set(gen)), "a candidate generated twice"
    assert set(gen) == z3_executions(eg, cand), src


MP = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; fence.sc.gpu; st.global.u32 [y], 1; }
.thread T1 .cta 1 { ld.global.u32 %r0, [y]; fence.sc.gpu; ld.global.u32 %r1, [x]; }
"""


THREE_WRITES = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; }
.thread T1 .cta 1 { st.global.u32 [x], 2; }
.thread T2 .cta 2 { st.global.u32 [x], 3; }
"""

def test_violations_name_what_is_broken():
    eg, cand, fin_locs = _space(MP)
    exe = next(iter(ExecutionSpace(eg, cand, fin_locs=fin_locs))).execution
    assert violations(eg, cand, exe) == []
    (w, r), *rest = exe.rf
    assert "rf" in violations(eg, cand, exe.__class__(exe.paths, tuple(rest), exe.co, exe.values, exe.scorder,
                                                     exe.final))
    eg3, cand3, fin3 = _space(THREE_WRITES)
    w1, w2, w3 = cand3.writes_at["x"][1:]
    for c in ExecutionSpace(eg3, cand3, fin_locs=fin3):
        e3 = c.execution
        if (w1, w2) in e3.co and (w2, w3) in e3.co:
            break
    assert violations(eg3, cand3, e3) == []
    both_ways = e3.__class__(e3.paths, e3.rf, e3.co + ((w2, w1),), e3.values, e3.scorder, e3.final)
    assert "co" in violations(eg3, cand3, both_ways)
    gap = e3.__class__(e3.paths, e3.rf, tuple(p for p in e3.co if p != (w1, w3)), e3.values, e3.scorder,
                       e3.final)
    assert violations(eg3, cand3, gap) == ["co-transitive"]
    final = tuple((loc, eg.init[loc]) for loc, _ in exe.final)
    bad = exe.__class__(exe.paths, exe.rf, exe.co, exe.values, exe.scorder, final)
    assert "final" in violations(eg, cand, bad)


# tests/semantics/test_exact_outcome_sets.py::test_coherence_order_is_transitive: (2, 3, 1) needs a co that is
# not transitive
CO_TRANSITIVE = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; st.relaxed.gpu.global.u32 [x], 2; }
.thread T1 .cta 1 { ld.relaxed.gpu.global.u32 %r0, [x]; st.relaxed.gpu.global.u32 [x], 3; }
.thread T2 .cta 2 { ld.relaxed.gpu.global.u32 %r1, [x]; ld.global.u32 %r2, [x]; }
"""


def _outcomes(src: str, engine: str) -> set[tuple]:
    res = ptxmm.check(ptxmm.parse(src), "ptx", engine=engine, flags=False)
    return {tuple(v for k, v in o.outcome.values if k.startswith("T")) for o in res.outcomes}


def test_one_statement_drives_both_engines(monkeypatch):
    """Dropping transitivity from the one statement of well-formedness changes the enumerator's
    candidates and the Z3 engine's executions alike (they still agree), and both engines then
    allow the outcome that only a non-transitive co gives."""
    eg, cand, fin_locs = _space(THREE_WRITES)
    before = set(generated(eg, cand, fin_locs))
    assert before == z3_executions(eg, cand)
    assert (2, 3, 1) not in _outcomes(CO_TRANSITIVE, "z3")  # brute force: test_mutant_killers.py
    monkeypatch.setattr(executions, "co_transitive", lambda *a, **k: [])
    after = set(generated(eg, cand, fin_locs))
    assert after > before
    assert after == z3_executions(eg, cand)
    assert (2, 3, 1) in _outcomes(CO_TRANSITIVE, "z3")
    assert (2, 3, 1) in _outcomes(CO_TRANSITIVE, "brute")


def test_partial_coherence_orders_of_three_writes():
    """co is a strict partial order per location, the initial write first: on three writes of
    three threads, the 19 strict partial orders of three elements, each once with every final
    write that is co-maximal."""
    eg, cand, fin_locs = _space(THREE_WRITES)
    gen = generated(eg, cand, fin_locs)
    ws = cand.writes_at["x"]
    by_order: dict[tuple, list] = {}
    for k in gen:
        by_order.setdefault(k[2], []).append(dict(k[5])["x"])
    assert len(by_order) == 19
    for co, finals in by_order.items():
        assert all((eg.init["x"], w) in co for w in ws if w != eg.init["x"])
        assert sorted(finals) == [w for w in ws if not any(a == w for a, _ in co)]


def test_explain_and_brute_use_the_layer():
    """explain's forbidden-outcome search and the brute-force engine enumerate through
    ExecutionSpace (the copies are gone)."""
    import importlib
    import inspect

    explain = importlib.import_module("ptxmm.explanation.explain")
    brute = importlib.import_module("ptxmm.engines.brute")

    assert "ExecutionSpace" in inspect.getsource(brute.BruteProblem.executions)
    assert "ExecutionSpace" in inspect.getsource(explain._Search.executions)
    for name in ("partial_orders", "rf_candidates", "consistent_execd", "_resolve_values"):
        assert not hasattr(brute, name)
    assert not hasattr(explain, "_values")
