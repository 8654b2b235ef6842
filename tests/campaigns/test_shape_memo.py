"""Campaign verdicts memoised by test shape (ptxmm.queries.memo): a test answered from an earlier
test of the same shape gets exactly the verdict, status and witness count its own check gives, and
tests the model can tell apart never share a shape."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.campaigns.gen import GenOptions, generate
from ptxmm.cat.parser import load_model
from ptxmm.queries.memo import VerdictMemo, model_reads, shape_key
from ptxmm.semantics.builder import build


def _plain(prog, model: str) -> tuple:
    res = ptxmm.check(prog, model, observe="condition", flags=False, verdict_only=True)
    return res.holds, res.status, len(res.outcomes)


@cache
def _gen4() -> list:
    return [ptxmm.parse(g.text(), file=g.name, fmt="ptx") for g in generate(GenOptions(size=4))]


@pytest.mark.parametrize("model", ["sc", "ptx"])
def test_memoised_verdicts_equal_each_tests_own_check(model):
    memo = VerdictMemo()
    progs = _gen4()
    for p in progs:
        v = memo.verdict(p, model)
        assert (v.holds, v.status, v.n_outcomes) == _plain(p, model), p.name
    if model == "sc":  # SC names no semantics or scope: the generated variants share shapes
        assert memo.hits > len(progs) // 2
    assert len(memo.seen) + memo.hits == len(progs) or memo.given_up


def _two(a: str, b: str) -> str:
    return f""".test T
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 {{
    st{a}.global.u32 [x], 1;
    fence.sc.gpu;
    st{a}.global.u32 [y], 1;
}}
.thread T1 .cta 1 {{
    ld{b}.global.u32 %r0, [y];
    fence.acq_rel.cta;
    ld{b}.global.u32 %r1, [x];
}}
exists (T1:%r0 == 1 && T1:%r1 == 0)
"""


def _key(text: str, model) -> str | None:
    p = ptxmm.parse(text, file="t.ptx", fmt="ptx")
    return shape_key(build(p, unroll=2), model if not isinstance(model, str) else load_model(model))


def test_semantics_and_scopes_separate_shapes_only_where_the_model_names_them():
    weak, rel = _two("", ""), _two(".release.gpu", ".acquire.gpu")
    cta = _two(".relaxed.cta", ".relaxed.cta")
    gpu = _two(".relaxed.gpu", ".relaxed.gpu")
    assert model_reads(load_model("sc")) == (False, False, False)
    assert _key(weak, "sc") == _key(rel, "sc") == _key(cta, "sc")
    assert model_reads(load_model("ptx"))[:2] == (True, True)
    assert len({_key(t, "ptx") for t in (weak, rel, cta, gpu)}) == 4
    # the condition and the values are the shape's too
    assert _key(weak, "sc") != _key(weak.replace("%r1 == 0", "%r1 == 1"), "sc")
    assert _key(weak, "sc") != _key(weak.replace("[y], 1", "[y], 2"), "sc")


def test_a_model_naming_scorder_keeps_fence_sc_apart(tmp_path):
    cat = tmp_path / "scf.cat"
    cat.write_text('"scf"\nlet fr = (rf^-1 ; co) \\ id\n'
                   "empty ((((W * W) & loc) \\ id) \\ (co | co^-1)) as co-total\n"
                   "acyclic (po | rf | co | fr | scorder) as X\n")
    m = load_model(str(cat))
    assert model_reads(m) == (False, False, True)
    sc_fence, ar_fence = _two("", ""), _two("", "").replace("fence.sc.gpu", "fence.acq_rel.gpu")
    assert _key(sc_fence, m) != _key(ar_fence, m)
    assert _key(sc_fence, "sc") == _key(ar_fence, "sc")


_SEMS = ["", ".relaxed.cta", ".relaxed.gpu", ".acquire.gpu", ".release.gpu"]
_FENCES = ["fence.sc.gpu", "fence.acq_rel.cta", "fence.sc.cta", "fence.acq_rel.gpu"]
_op = st.one_of(
    st.tuples(st.just("st"), st.sampled_from("xy"), st.integers(1, 2), st.sampled_from(_SEMS)),
    st.tuples(st.just("ld"), st.sampled_from("xy"), st.just(0), st.sampled_from(_SEMS)),
    st.tuples(st.just("fence"), st.just(""), st.just(0), st.sampled_from(_FENCES)))


def _program(threads: list[list[tuple]], cond: list[tuple[int, int, int]]) -> str:
    out = [".test R", ".global .u32 x = 0;", ".global .u32 y = 0;"]
    loads: list[tuple[int, int]] = []
    for t, ops in enumerate(threads):
        out.append(f".thread T{t} .cta {t} {{")
        r = 0
        for kind, loc, v, q in ops:
            if kind == "st":
                q = q.replace("acquire", "release")
                out.append(f"    st{q}.global.u32 [{loc}], {v};")
            elif kind == "ld":
                q = q.replace("release", "acquire")
                out.append(f"    ld{q}.global.u32 %r{r}, [{loc}];")
                loads.append((t, r))
                r += 1
            else:
                out.append(f"    {q};")
        out.append("}")
    terms = [f"T{loads[i % len(loads)][0]}:%r{loads[i % len(loads)][1]} == {v}" for i, _, v in cond] \
        if loads else []
    out.append(f"exists ({' && '.join(terms) or 'x == 1'})")
    return "\n".join(out) + "\n"


_MEMOS = {"sc": VerdictMemo(), "ptx": VerdictMemo()}  # shared across examples: shapes repeat


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads=st.lists(st.lists(_op, min_size=1, max_size=3), min_size=2, max_size=3),
       cond=st.lists(st.tuples(st.integers(0, 5), st.just(0), st.integers(0, 2)), max_size=2),
       model=st.sampled_from(["sc", "ptx"]))
def test_memo_agrees_with_plain_checks_on_random_tests(threads, cond, model):
    p = ptxmm.parse(_program(threads, cond), file="r.ptx", fmt="ptx")
    v = _MEMOS[model].verdict(p, model)
    assert (v.holds, v.status, v.n_outcomes) == _plain(p, model)


def test_a_model_whose_tests_never_share_a_shape_stops_being_keyed(monkeypatch):
    import ptxmm.queries.memo as memo_mod

    monkeypatch.setattr(memo_mod, "GIVE_UP_AFTER", 3)
    memo = VerdictMemo()
    progs = _gen4()[:6]
    for p in progs:
        v = memo.verdict(p, "ptx")
        assert (v.holds, v.status, v.n_outcomes) == _plain(p, "ptx"), p.name
    assert load_model("ptx").path in memo.given_up
    assert len(memo.seen) == 3 and memo.hits == 0
    # SC's tests share shapes within the first few: it stays keyed
    for p in _gen4()[:6]:
        memo.verdict(p, "sc")
    assert load_model("sc").path not in memo.given_up
