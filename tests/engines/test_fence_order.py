"""Issue 40 (the grid barrier at 16 blocks): ``cat.fence_order.FENCE_ORDER`` — base causality's
closure computed through the fence.sc order where the model's Fence-SC axiom collapses it
(cat/fence_order.py) — allows the same executions and raises the same flags.

By property: over one Z3 problem's base environment (the same solver variables), the model is
evaluated with and without the rewrite; Z3 proves that the conjunction of the axioms that read a
closure (those the rewrite can change: every ``empty`` and ``irreflexive`` one; the ``acyclic``
ones must come out identical) holds in the same executions, and that under the plain axioms each
flag holds in the same executions — on the grid barrier at 2-3 blocks (the rewrite is seen to
apply), on chain_gen's grid-barrier shapes (fences, release/acquire, RMW chains) and on
grammar_gen's random programs (every fence kind and access semantics), under ptx and ptx-v7.5.
And the whole check (status, verdict, outcomes, findings, liveness) off and on, on the grid
barrier at 2-4 blocks and chain_gen's and grammar_gen's programs. Where the rewrite's conditions
fail (a release store, a CTA barrier, fences of different CTAs that are not morally strong) it
is seen not to apply."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.chain_gen import program
from support.grammar_gen import valid_ptx

import ptxmm
from ptxmm.cat import axioms as ax
from ptxmm.cat import fence_order, interp
from ptxmm.cat.parser import load_model
from ptxmm.engines.z3 import Z3Problem
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.semantics.builder import build
from ptxmm.semantics.vocab import base_env, candidates

ROOT = Path(__file__).resolve().parents[2]
SLOW = dict(deadline=None, derandomize=True,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                   HealthCheck.data_too_large])


def _grid(n: int):
    launch = f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])"
    cond = " && ".join(f"out[{b}] == {(b + 1) % n + 1}" for b in range(n))
    return ptxmm.load(ROOT / "examples/kernels/grid-barrier.ptx",
                      kernel=KernelArgs(launch=launch, forall=cond))


def _spy(monkeypatch) -> list:
    """Each rewrite that applied (its result's size) is appended to the returned list."""
    applied: list = []
    real = fence_order.fence_closure

    def spy(*a):
        out = real(*a)
        if out is not None:
            applied.append(len(out))
        return out
    monkeypatch.setattr(interp, "fence_closure", spy)
    return applied


def _compare(eg, model: str, monkeypatch) -> int:
    """Z3 proves the rewritten and plain axioms equivalent over ``eg`` and the flags equal under
    the plain axioms; how many closures the rewrite replaced."""
    m = load_model(model)
    cand = candidates(eg)
    monkeypatch.setattr(fence_order, "FENCE_ORDER", False)
    pb = Z3Problem(eg, m, [], cand, flags=True, chains=True)
    try:
        env = base_env(eg, pb.ch, cand)
        off = interp.run(m, env, flags=True, demand=True, fence_order=True)
        monkeypatch.setattr(fence_order, "FENCE_ORDER", True)
        applied = _spy(monkeypatch)
        on = interp.run(m, env, flags=True, demand=True, fence_order=True)
        lg = pb.ch.lg
        u = env["_"].u
        a_on, a_off = [], []
        for (sa, a), (sb, b) in zip(on.axioms, off.axioms, strict=True):
            assert sa is sb
            if sa.check == "acyclic":  # fresh ranks each encoding: the values must be the same
                assert (a.must, a.may) == (b.must, b.may), sa.name
                continue
            a_on += ax.encode(sa.check, a)
            a_off += ax.encode(sb.check, b)
        s = z3.SimpleSolver()
        s.add([lg.z3(c) for c in pb.ch.cs if c is not True])
        both_off = lg.z3(u.all(a_off))
        assert s.check(lg.z3(u.all(a_on)) != both_off) == z3.unsat
        for (fa, a), (fb, b) in zip(on.flags, off.flags, strict=True):
            assert fa is fb
            f_on, f_off = (lg.z3(u.all(ax.encode(fa.check, v))) for v in (a, b))
            assert s.check(both_off, f_on != f_off) == z3.unsat, fa.name
        return len(applied)
    finally:
        pb.close()


@pytest.mark.parametrize("n", [2, 3])
def test_grid_barrier_axioms_equivalent(monkeypatch, n):
    assert _compare(build(_grid(n)), "ptx", monkeypatch) > 0  # base causality is rewritten


@settings(max_examples=25, **SLOW)
@given(seed=st.integers(0, 2**32 - 1))
def test_chain_programs_axioms_equivalent(monkeypatch, seed):
    eg = build(ptxmm.parse(program(seed), "generated.ptx"), unroll=2)
    for model in ("ptx", "ptx-v7.5"):
        _compare(eg, model, monkeypatch)


@settings(max_examples=60, **SLOW)
@given(src=valid_ptx(max_threads=3, max_events=6, max_writes=3))
def test_random_programs_axioms_equivalent(monkeypatch, src):
    eg = build(ptxmm.parse(src, "t.ptx"), unroll=1)
    for model in ("ptx", "ptx-v7.5"):
        _compare(eg, model, monkeypatch)


def test_the_generators_reach_the_rewrite(monkeypatch):
    """The property tests above are not vacuous: the rewrite applies to some of chain_gen's first
    30 programs and to message passing through fence.sc."""
    hits = sum(_compare(build(ptxmm.parse(program(seed), "g.ptx"), unroll=2), "ptx", monkeypatch) > 0
               for seed in range(30))
    assert hits >= 3
    assert _compare(build(ptxmm.parse(MP_FENCES, "mp.ptx")), "ptx", monkeypatch) > 0


def _src(writer: str, reader: str, ctas: tuple[int, int] = (0, 1)) -> str:
    return f""".test MP "message passing"
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta {ctas[0]} {{
{writer}
}}
.thread T1 .cta {ctas[1]} {{
{reader}
}}
exists (T1:%r1 == 1 && T1:%r2 == 0)
"""


# a message passed through fence.sc on both sides
MP_FENCES = _src("st.global.u32 [x], 1;\nfence.sc.gpu;\nst.relaxed.gpu.global.u32 [y], 1;",
                 "ld.relaxed.gpu.global.u32 %r1, [y];\nfence.sc.gpu;\nld.global.u32 %r2, [x];")


@pytest.mark.parametrize("writer,reader,why", [
    ("st.global.u32 [x], 1;\nst.release.gpu.global.u32 [y], 1;\nfence.sc.gpu;",
     "ld.acquire.gpu.global.u32 %r1, [y];\nfence.sc.gpu;\nld.global.u32 %r2, [x];",
     "a release store and an acquire load make a sync edge between two accesses"),
    ("st.global.u32 [x], 1;\nfence.sc.cta;\nst.relaxed.gpu.global.u32 [y], 1;",
     "ld.relaxed.gpu.global.u32 %r1, [y];\nfence.sc.cta;\nld.global.u32 %r2, [x];",
     ".cta fences of two CTAs are not morally strong"),
    ("st.global.u32 [x], 1;\nfence.sc.gpu;\nst.relaxed.gpu.global.u32 [y], 1;\nbar.sync 0;",
     "bar.sync 0;\nld.relaxed.gpu.global.u32 %r1, [y];\nfence.sc.gpu;\nld.global.u32 %r2, [x];",
     "a CTA barrier synchronizes an arrive with a wait"),
])
def test_the_rewrite_stays_out_where_its_conditions_fail(monkeypatch, writer, reader, why):
    ctas = (0, 0) if "bar.sync" in writer else (0, 1)
    assert _compare(build(ptxmm.parse(_src(writer, reader, ctas), "t.ptx")), "ptx", monkeypatch) == 0, why


def _answer(res) -> tuple:
    outs = sorted(tuple(o.outcome.values) for o in res.outcomes)
    finds = sorted({(str(f.kind), f.name, tuple(sorted(e.line or 0 for e in f.events)))
                    for f in res.findings})
    return res.status, res.holds, outs, finds, res.liveness


def _checks(prog, monkeypatch, model: str = "ptx") -> tuple:
    monkeypatch.setattr(fence_order, "FENCE_ORDER", False)
    off = _answer(ptxmm.check(prog, model, liveness=True))
    monkeypatch.setattr(fence_order, "FENCE_ORDER", True)
    assert _answer(ptxmm.check(prog, model, liveness=True)) == off
    return off


@pytest.mark.parametrize("n", [2, 3, 4])
def test_grid_barrier_check_unchanged(monkeypatch, n):
    status, holds, _, finds, liveness = _checks(_grid(n), monkeypatch)
    assert (status, holds, finds, liveness) == ("ok", True, [], "terminates")


def test_a_race_through_fences_is_still_found(monkeypatch):
    """Message passing through fence.sc with the reader's fence left after its read of x: the stale
    read is allowed, as without the rewrite; with both fences in place it is forbidden (the read
    of x still races with the write where the flag is not seen: a race is reported either way)."""
    racy = _src("st.global.u32 [x], 1;\nfence.sc.gpu;\nst.relaxed.gpu.global.u32 [y], 1;",
                "ld.relaxed.gpu.global.u32 %r1, [y];\nld.global.u32 %r2, [x];\nfence.sc.gpu;")
    _, holds, _, finds, _ = _checks(ptxmm.parse(racy, "racy.ptx"), monkeypatch)
    assert holds is True and any(k == "race" for k, _, _ in finds)
    _, holds, _, finds, _ = _checks(ptxmm.parse(MP_FENCES, "mp.ptx"), monkeypatch)
    assert holds is False and any(k == "race" for k, _, _ in finds)


@settings(max_examples=12, **SLOW)
@given(seed=st.integers(0, 2**32 - 1))
def test_chain_programs_check_unchanged(monkeypatch, seed):
    _checks(ptxmm.parse(program(seed), "generated.ptx"), monkeypatch)


@settings(max_examples=25, **SLOW)
@given(src=valid_ptx(max_threads=3, max_events=6, max_writes=3))
def test_random_programs_check_unchanged(monkeypatch, src):
    prog = ptxmm.parse(src, "t.ptx")
    for model in ("ptx", "ptx-v7.5"):
        _checks(prog, model=model, monkeypatch=monkeypatch)


# Random programs that synchronize through fences only: each of 2-4 threads (in one or two CTAs)
# a sequence of weak and relaxed loads and stores of x, y, z, relaxed atomics and fence.sc
# (membar.gl, a .cta one now and then) — paths through several threads' fences, the rewrite's core.
_OPS = ["st.global.u32 [{l}], {v};", "st.relaxed.gpu.global.u32 [{l}], {v};",
        "ld.global.u32 %r{r}, [{l}];", "ld.relaxed.gpu.global.u32 %r{r}, [{l}];",
        "atom.relaxed.gpu.global.add.u32 %r{r}, [{l}], 1;", "fence.sc.gpu;", "membar.gl;", "fence.sc.gpu;",
        "fence.sc.cta;"]


@st.composite
def fence_programs(draw) -> str:
    n = draw(st.integers(2, 4))
    ctas = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    body, regs = [], []
    for t in range(n):
        lines, k = [], 0
        for _ in range(draw(st.integers(2, 5))):
            op = draw(st.sampled_from(_OPS))
            if "%r" in op:
                k += 1
                regs.append(f"T{t}:%r{k}")
            lines.append(op.format(l=draw(st.sampled_from("xyz")), v=draw(st.integers(1, 2)), r=k))
        body.append(f".thread T{t} .cta {ctas[t]} {{\n" + "\n".join(lines) + "\n}")
    cond = " && ".join(f"{r} == 0" for r in regs[:3]) or "x == 0"
    return ('.test F "fences"\n.global .u32 x = 0;\n.global .u32 y = 0;\n.global .u32 z = 0;\n'
            + "\n".join(body) + f"\nexists ({cond})\n")


@settings(max_examples=60, **SLOW)
@given(src=fence_programs())
def test_fence_programs_axioms_equivalent(monkeypatch, src):
    _compare(build(ptxmm.parse(src, "f.ptx")), "ptx", monkeypatch)


@settings(max_examples=30, **SLOW)
@given(src=fence_programs())
def test_fence_programs_check_unchanged(monkeypatch, src):
    _checks(ptxmm.parse(src, "f.ptx"), monkeypatch)


def test_fence_programs_reach_the_rewrite(monkeypatch):
    """Of 40 fence programs, the rewrite replaces a closure with guarded pairs in many (17 when
    written)."""
    hits = []

    @settings(max_examples=40, **SLOW)
    @given(src=fence_programs())
    def run(src):
        applied = []
        real = fence_order.fence_closure

        def spy(ev, r, want):
            out = real(ev, r, want)
            if out is not None and out.may:
                applied.append(1)
            return out
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(interp, "fence_closure", spy)
            Z3Problem(build(ptxmm.parse(src, "f.ptx")), load_model("ptx"), [], candidates(
                build(ptxmm.parse(src, "f.ptx"))), flags=True).close()
        hits.append(bool(applied))
    run()
    assert sum(hits) >= 12, hits


# -- condition 1, on the model's text -----------------------------------------------------------
_MODEL = """"fence order test model"
let sync = (([F] ; po ; [W]) ; rf ; ([R] ; po ; [F])) | scorder
let c = (po | sync)+
let b = c | (c ; rf)
{extra}
empty ((([Fsc] ; b ; [Fsc]) & ms) \\ sc) as Fence-SC
acyclic (c | rf) as A
"""


def _licensed(extra: str = "", axiom: str | None = None) -> int:
    import tempfile

    text = _MODEL.format(extra=extra)
    if axiom is not None:
        text = text.replace("empty ((([Fsc] ; b ; [Fsc]) & ms) \\ sc) as Fence-SC", axiom)
    with tempfile.NamedTemporaryFile("w", suffix=".cat", delete=False) as f:
        f.write(text)
    return len(fence_order.licensed(load_model(f.name)))


def test_the_model_licenses_the_closure_fence_sc_reads_through_unions():
    assert _licensed() == 1
    assert len(fence_order.licensed(load_model("ptx"))) == 1
    assert len(fence_order.licensed(load_model("ptx-v7.5"))) == 1
    assert len(fence_order.licensed(load_model("sc"))) == 0


@pytest.mark.parametrize("extra,axiom,why", [
    ("let b = c", None, "b bound twice: the axiom may read another b"),
    ("let sc = po", None, "sc bound twice"),
    ("", "flag ~empty ((([Fsc] ; b ; [Fsc]) & ms) \\ sc) as Fence-SC", "a flag constrains nothing"),
    ("", "empty ((([Fsc] ; b ; [Fsc]) & ms) \\ po) as Fence-SC", "not the fence order"),
    ("", "empty ((([Fsc] ; (b \\ (po \\ c)) ; [Fsc]) & ms) \\ sc) as Fence-SC", "not a name"),
])
def test_the_model_text_must_state_fence_sc(extra, axiom, why):
    assert _licensed(extra, axiom) == 0, why


def test_a_closure_fence_sc_reads_under_a_difference_is_not_licensed():
    """b reaches c through a union but also subtracts it: b is not monotone in c."""
    assert _licensed().__eq__(1)
    import tempfile

    text = _MODEL.format(extra="").replace("let b = c | (c ; rf)", "let b = c | (rf \\ c)")
    with tempfile.NamedTemporaryFile("w", suffix=".cat", delete=False) as f:
        f.write(text)
    assert len(fence_order.licensed(load_model(f.name))) == 0


# A model whose sync patterns need no moral strength and whose causality axiom reads fr only: the
# rewrite must keep the operand's own fence-to-fence edges (ptx.cat's Causality forbids what
# dropping them allows, so only a model like this one shows it) and must stay out where fences
# are not morally strong (ptx.cat's sc has no pair between them, so again only such a model).
WEAK_MODEL = """"fence order: sync patterns without moral strength"
let Fsc = (F \\ PROXY) & SC
let ms = ((int | sr) & (vloc | ((_ * _) \\ (M * M)))) \\ id
let fr = (rf^-1 ; co) \\ id
let sc = ([Fsc] ; scorder ; [Fsc])+
let sync-pat = [Fsc] ; po ; [W & RLX] ; rf ; [R & RLX] ; po ; [Fsc]
let sync = sync-pat | sc
let bco = (po | sync)+
empty ((([Fsc] ; bco ; [Fsc]) & ms) \\ sc) as Fence-SC
irreflexive (fr ; bco) as Causality
"""


@pytest.mark.parametrize("scope,ctas,applies", [("gpu", (0, 1), True), ("cta", (0, 1), False),
                                                ("cta", (0, 0), True)])
def test_a_model_where_every_condition_matters(monkeypatch, tmp_path, scope, ctas, applies):
    path = tmp_path / "weak.cat"
    path.write_text(WEAK_MODEL)
    src = _src(f"st.global.u32 [x], 1;\nfence.sc.{scope};\nst.relaxed.gpu.global.u32 [y], 1;",
               f"ld.relaxed.gpu.global.u32 %r1, [y];\nfence.sc.{scope};\nld.global.u32 %r2, [x];", ctas)
    assert (_compare(build(ptxmm.parse(src, "mp.ptx")), str(path), monkeypatch) > 0) == applies
    _, holds, _, _, _ = _checks(ptxmm.parse(src, "mp.ptx"), monkeypatch, str(path))
    assert holds is False  # the sync pattern forbids the stale read, rewritten or not


def test_po_must_be_transitive(monkeypatch):
    """Over a base environment whose po has its immediate pairs only (not the builder's), the
    fences po-after an event are not read off one row: the rewrite stays out."""
    from ptxmm.cat.relalg import Rel, bits

    eg = build(ptxmm.parse(MP_FENCES, "mp.ptx"))
    cand = candidates(eg)
    pb = Z3Problem(eg, load_model("ptx"), [], cand, flags=True)
    try:
        env = base_env(eg, pb.ch, cand)
        po = env["po"]
        nearest = {a: 1 << min(bits(row), key=lambda b: (po.must[a] & ~po.must.get(b, 0)).bit_count())
                   for a, row in po.must.items() if row}
        reduced = Rel(po.u, nearest, {})

        class Over:
            def __getitem__(self, k):
                return reduced if k == "po" else env[k]

            def __contains__(self, k):
                return k in env

        applied = _spy(monkeypatch)
        interp.run(load_model("ptx"), Over(), flags=True, demand=False, fence_order=True)
        assert any(r.bit_count() > 1 for r in po.must.values()) and not applied
        interp.run(load_model("ptx"), env, flags=True, demand=False, fence_order=True)
        assert applied  # with the builder's po it applies
    finally:
        pb.close()


def test_the_report_names_the_fence_order():
    res = ptxmm.check(_grid(3), "ptx")
    assert any(r.startswith("fence order (base causality through ") for r in res.reductions)
    assert res.to_json()["bound"]["reductions"] == list(res.reductions)
    plain = ptxmm.check(ptxmm.parse(_src("st.global.u32 [x], 1;\nst.release.gpu.global.u32 [y], 1;",
                                         "ld.acquire.gpu.global.u32 %r1, [y];\nld.global.u32 %r2, [x];"),
                                    "mp.ptx"), "ptx")
    assert not any(r.startswith("fence order") for r in plain.reductions)
