"""Relation analysis of co (ptxmm.semantics.knowledge.co_must) for any model.

By hand: small cat texts whose axioms do (SC's co-total plus an acyclic axiom with co and po in a
union, let-bound unions opened, ``E \\ co`` and ``E \\ co^-1`` bounds) or do not (no totality, po
restricted to reads, co not an operand of the union, co rebound, a multi-binding let) force
co pairs on one thread's stores, conditional stores included ("whenever both execute").

By property (hypothesis, grammar_gen's programs with more writes): every pair the analysis gives
is co-ordered in every consistent execution where both writes execute (Z3 without the analysis
finds no counter-example), and the Z3 engine with the analysis always on gives brute force's
outcome set and verdict, under sc, ptx and two user models: SC through a let, and SC without its
totality axiom."""

from __future__ import annotations

from unittest import mock

import pytest
import z3
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.grammar_gen import valid_ptx

import ptxmm
import ptxmm.queries.checker
from ptxmm.cat.parser import load_model
from ptxmm.engines import candidate_space
from ptxmm.engines.z3 import Z3Problem
from ptxmm.semantics.builder import build
from ptxmm.semantics.knowledge import co_must
from ptxmm.semantics.vocab import candidates

STORES = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 {
    ld.global.u32 %r0, [y];
    st.global.u32 [x], 1;
    setp.eq.u32 %p0, %r0, 1;
    @%p0 st.global.u32 [x], 2;
    st.global.u32 [x], 3;
    st.global.u32 [x], 4;
}
.thread T1 .cta 1 {
    st.global.u32 [x], 5;
    st.global.u32 [y], 1;
}
exists (x == 1)
"""

TOTAL = "empty ((((W * W) & loc) \\ id) \\ (co | co^-1)) as co-total\n"
FR = "let fr = (rf^-1 ; co) \\ id\n"


def _analyse(tmp_path, cat: str, src: str = STORES) -> tuple[set[tuple[int, int]], dict]:
    """co_must on ``src`` under the model ``cat``, as pairs of store values (and the events).
    A file per model text: load_model keeps one Model per path and process."""
    path = tmp_path / f"m{len(list(tmp_path.iterdir()))}.cat"
    path.write_text('"test model"\n' + cat)
    eg = build(ptxmm.parse(src, "t.ptx"), unroll=1)
    known = co_must(eg, load_model(str(path)), candidates(eg))
    val = {e.eid: e.value.v for e in eg.events if e.kind == "W" and e.thread >= 0}
    return {(val[a], val[b]) for a, b in known}, val


T0_ORDER = {(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)}


@pytest.mark.parametrize("cat, expected", [
    # SC as models/sc.cat states it: all of T0's po-ordered stores, the predicated one included
    (FR + TOTAL + "acyclic (po | rf | co | fr) as SC\n", T0_ORDER),
    # the union behind a let (and a let behind that one)
    (FR + TOTAL + "let com = rf | co | fr\nlet hb = po | com\nacyclic hb as SC\n", T0_ORDER),
    # po-loc, a user's own name
    (FR + TOTAL + "let po-loc = po & loc\nacyclic (po-loc | co) as SC-per-loc\n", T0_ORDER),
    # co partial (no totality axiom): co(b, a) is impossible, but co(a, b) is not forced
    (FR + "acyclic (po | rf | co | fr) as SC\n", set()),
    # po restricted to reads: no order between writes
    (FR + TOTAL + "acyclic ((po & (R * R)) | rf | co | fr) as SC\n", set()),
    # po rebound to reads only
    (FR + TOTAL + "let po = po & (R * M)\nacyclic (po | rf | co) as SC\n", set()),
    # the acyclic axiom lacks po
    (FR + TOTAL + "acyclic (rf | co | fr) as no-po\n", set()),
    # co not an operand of the union
    (FR + TOTAL + "acyclic (po | rf | fr) as SC\n", set()),
    (FR + TOTAL + "acyclic ((po | co) \\ (W * W)) as SC\n", set()),
    (FR + TOTAL + "acyclic (po | (co ; co)) as SC\n", set()),
    # co^-1 in the union orders the other way round: not read (never a wrong pair)
    (FR + TOTAL + "acyclic (po | co^-1) as Reverse\n", set()),
    # co rebound by the model: no analysis at all
    ("let co = co | co^-1\n" + FR + TOTAL + "acyclic (po | rf | co | fr) as SC\n", set()),
    # a let of several names is kept opaque
    (FR + TOTAL + "let a = po and b = co\nacyclic (a | b) as SC\n", set()),
    # total only between threads: nothing of T0's own order follows
    (FR + "empty (((((W * W) & loc) \\ id) & ext) \\ (co | co^-1)) as part\n"
     "acyclic (po | co) as SC\n", set()),
])
def test_acyclic_and_total(tmp_path, cat, expected):
    known, _ = _analyse(tmp_path, cat)
    assert known == expected


def test_bounds_either_way(tmp_path):
    """``empty (E \\ co)`` puts must(E) in co; ``empty (E \\ co^-1)`` its inverse."""
    po_ww = "((W * W) & loc & po)"
    assert _analyse(tmp_path, f"empty ({po_ww} \\ co) as B\n")[0] == T0_ORDER
    rev = {(b, a) for a, b in T0_ORDER}
    assert _analyse(tmp_path, f"empty ({po_ww} \\ co^-1) as B\n")[0] == rev
    # both: every pair is forced both ways, which no execution with both writes allows: none kept
    both = f"empty ({po_ww} \\ co) as B\nempty ({po_ww} \\ co^-1) as C\n"
    assert _analyse(tmp_path, both)[0] == set()


def test_cross_thread_pairs_never_forced_by_po(tmp_path):
    known, _ = _analyse(tmp_path, FR + TOTAL + "acyclic (po | rf | co | fr) as SC\n")
    assert not any(5 in p for p in known)


def test_builtin_sc_and_ptx_models():
    """sc.cat: T0's order; ptx.cat: at least T0's order (Coherence), and the same as before."""
    eg = build(ptxmm.parse(STORES, "t.ptx"), unroll=1)
    cand = candidates(eg)
    val = {e.eid: e.value.v for e in eg.events if e.kind == "W" and e.thread >= 0}
    for name in ("sc", "ptx"):
        known = {(val[a], val[b]) for a, b in co_must(eg, load_model(name), cand)}
        assert known == T0_ORDER, name


def test_one_thread_of_stores_needs_no_co_variable():
    src = ".global .u32 x = 0;\n.thread T0 .cta 0 {\n" + \
        "".join(f"    st.global.u32 [x], {i};\n" for i in range(1, 61)) + "}\nforall (x == 60)\n"
    p = ptxmm.parse(src, "t.ptx")
    eg = build(p)
    cand = candidates(eg)
    known = co_must(eg, load_model("sc"), cand)
    assert len(known) == 60 * 59 // 2
    assert candidates(eg, known).co == []
    r = ptxmm.check(p, "sc")
    assert r.holds is True and len(r.outcomes) == 1


def test_candidates_rows_keep_the_order_and_exclusions():
    """candidates' co pairs: by location, then write, then partner, in event order; writes of one
    thread on disjoint paths never paired; known pairs left out both ways."""
    src = """
.global .u32 x = 0;
.thread T0 .cta 0 {
    ld.global.u32 %r0, [x];
    setp.eq.u32 %p0, %r0, 0;
    @%p0 bra $L;
    st.global.u32 [x], 1;
    bra $E;
$L:
    st.global.u32 [x], 2;
$E:
    st.global.u32 [x], 3;
}
.thread T1 .cta 1 {
    st.global.u32 [x], 4;
}
exists (x == 1)
"""
    eg = build(ptxmm.parse(src, "t.ptx"))
    ev = eg.events
    ws = [e.eid for e in ev if e.kind == "W" and e.thread >= 0]
    expected = [(a, b) for a in ws for b in ws
                if a != b and not (ev[a].thread == ev[b].thread and not ev[a].paths & ev[b].paths)]
    cand = candidates(eg)
    assert cand.co == expected
    assert len(expected) < len(ws) * (len(ws) - 1)  # the branch's two stores are never paired
    a, b = expected[0]
    assert all({p, (p[1], p[0])} != {(a, b), (b, a)} for p in candidates(eg, {(a, b)}).co)


# ----- property: sound for every pair, Z3 with the analysis = brute force -------------------------

USER = {  # SC stated through a let; and without its totality axiom (co partial: no pair forced)
    "user": FR + TOTAL + "let com = rf | co | fr\nacyclic (po | com) as SC\n",
    "partial": FR + "acyclic (po | rf | co | fr) as SC\n",
}
_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.data_too_large])


@st.composite
def _co_heavy(draw) -> str:
    """Few locations, many stores: plain and strong stores, exchanges, loads, fences, stores
    predicated on a loaded value and stores a branch skips (co pairs between conditional
    writes)."""
    n = draw(st.integers(1, 3))
    value = iter(range(1, 100))
    threads = []
    for t in range(n):
        lines, k = [], 0
        for _ in range(draw(st.integers(1, 4 if n < 3 else 3))):
            op = draw(st.sampled_from(["st", "st", "st.relaxed.gpu", "st.release.gpu", "atom",
                                       "ld", "fence", "pred", "skip"]))
            loc = draw(st.sampled_from(["x", "x", "x", "y"]))
            v = next(value)
            k += 1
            if op.startswith("st"):
                lines.append(f"{op}.global.u32 [{loc}], {v};")
            elif op == "atom":
                lines.append(f"atom.relaxed.gpu.global.exch.b32 %r{k}, [{loc}], {v};")
            elif op == "ld":
                lines.append(f"ld.global.u32 %r{k}, [{loc}];")
            elif op == "fence":
                lines.append("fence.sc.gpu;")
            else:
                lines += [f"ld.global.u32 %r{k}, [{draw(st.sampled_from(['x', 'y']))}];",
                          f"setp.eq.u32 %p{k}, %r{k}, {draw(st.integers(0, 2))};"]
                if op == "pred":
                    lines.append(f"@%p{k} st.global.u32 [{loc}], {v};")
                else:
                    lines += [f"@%p{k} bra $L{k};", f"st.global.u32 [{loc}], {v};", f"$L{k}:"]
        body = "".join(f"    {ln}\n" for ln in lines)
        threads.append(f".thread T{t} .cta {t} {{\n{body}}}\n")
    return ".global .u32 x = 0;\n.global .u32 y = 0;\n" + "".join(threads) + "exists (x == 1)\n"


def _programs():
    progs = lambda k: st.one_of(_co_heavy(), _co_heavy(), valid_ptx(max_threads=2, max_events=7, max_writes=4,  # noqa: E731
                                                        unroll=k))
    return st.tuples(st.sampled_from(["sc", "ptx", "user", "partial"]), st.integers(1, 2)).flatmap(
        lambda mk: st.tuples(st.just(mk[0]), st.just(mk[1]), progs(mk[1])))


@pytest.fixture(scope="module")
def user_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("cat")
    for name, text in USER.items():
        (d / f"{name}.cat").write_text(f'"{name}"\n{text}')
    return {name: load_model(str(d / f"{name}.cat")) for name in USER}


def _no_counterexample(eg, model, known) -> None:
    """No consistent execution runs both writes of a known pair without co-ordering them."""
    pb = Z3Problem(eg, model, [], candidates(eg))
    try:
        lg = pb.lg
        for a, b in sorted(known):
            v = pb.ch.cov.get((a, b))
            assert v is not None, (a, b)
            both = [lg.z3(g) for g in (pb.ch.ex[a], pb.ch.ex[b]) if g is not True]
            assert pb.find(z3.And(*both, z3.Not(v))) is None, (a, b)
    finally:
        pb.close()


@settings(max_examples=80, **_SETTINGS)
@given(case=_programs())
def test_pairs_sound_and_z3_equals_brute(case, user_models):
    name, unroll, src = case
    model = user_models.get(name) or load_model(name)
    p = ptxmm.parse(src, "t.ptx")
    eg = build(p, unroll=unroll)
    cand = candidates(eg)
    assume(candidate_space(eg, cand, 1500) is not None)
    known = co_must(eg, model, cand)
    _no_counterexample(eg, model, known)
    with mock.patch.object(ptxmm.queries.checker, "CO_ANALYSIS_MIN", -1):
        z = ptxmm.check(p, model, engine="z3", flags=False, unroll=unroll)
    b = ptxmm.check(p, model, engine="brute", flags=False, unroll=unroll)
    assert z.outcome_set == b.outcome_set, f"{name}, unroll {unroll}:\n{src}"
    assert z.holds == b.holds, f"{name}, unroll {unroll}:\n{src}"
