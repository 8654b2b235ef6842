"""RMW chains (ptxmm.semantics.rmw_chains, the Z3 engine's ``chains=True``): a location written only
by morally strong read-modify-writes is encoded by the positions of its writes instead of rf/co
choices, and that changes no answer — the same status, verdict, outcomes, findings and liveness as
the plain encoding (and brute force on small launches), on random launches of the histogram (bins
bumped by atomicAdd), of tests/data/symmetry/symmetry_mixed.cu (a plain store to the counter, an
increment that differs by thread, acquire/release RMWs), of the grid barrier (atomicAdd arrivals and
an atomicExch reset that only the last block runs: a chain with the counting lemmas, chains.COUNTING,
else left to the generic encoding) and on litmus tests mixing RMWs of different kinds and scopes;
the counting lemmas change no answer either, and a count one too high is killed. Which locations
qualify, under which models; a witness's rf/co read back from the positions; two mutants (no
distinct positions: a lost update; rf from two positions back) are killed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.launches import SETTINGS
from support.launches import hist as _hist
from support.launches import mixed as _mixed

import ptxmm
from ptxmm.cat.parser import builtin_files, load_model, model_from_text
from ptxmm.engines.z3 import chains as z3chains
from ptxmm.queries import checker
from ptxmm.semantics import rmw_chains
from ptxmm.semantics.builder import build

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "examples" / "kernels" / "grid-barrier.ptx"


def _grid(n: int):
    from ptxmm.kernel.kernels import KernelArgs

    want = " && ".join(f"out[{b}] == {(b + 1) % n + 1}" for b in range(n))
    return ptxmm.load(GRID, kernel=KernelArgs(launch=f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned "
                                                     f"sense[1], int slot[{n}], int out[{n}])", forall=want))


def _answer(res) -> tuple:
    outs = sorted(tuple(sorted(o.outcome.values)) for o in res.outcomes)
    finds = sorted((f.kind.value, f.name, tuple(sorted((e.line, e.text) for e in f.events))
                    if f.kind.value == "race" else tuple((e.line, e.text) for e in f.events[:1]))
                   for f in res.findings)
    return res.status, res.holds, outs, finds, res.liveness


def _check(prog, monkeypatch, chains: bool, engine: str = "z3", **kw):
    monkeypatch.setattr(checker, "RMW_CHAINS", chains)
    return ptxmm.check(prog, engine=engine, **kw)


def _agree(prog, monkeypatch, brute: bool = False, **kw) -> tuple:
    plain = _answer(_check(prog, monkeypatch, False, **kw))
    assert _answer(_check(prog, monkeypatch, True, **kw)) == plain
    if brute:
        assert _answer(_check(prog, monkeypatch, True, "brute", **kw)) == plain
    return plain


def _locs(prog) -> list[str]:
    return sorted(rmw_chains.chains(build(prog)))


# -- which locations are chains, under which models -----------------------------------------------
def test_bins_with_two_increments_are_chains():
    assert _locs(_hist([0, 1, 0, 0, 2])) == ["hist[0]"]  # one increment: nothing to order
    assert _locs(_hist([3, 3, 1, 1])) == ["hist[1]", "hist[3]"]


def test_a_plain_store_a_cas_or_a_narrower_scope_keeps_the_generic_encoding():
    assert _locs(_mixed([0, 0])) == ["c[0]", "d[0]"]
    assert _locs(_mixed([0, 1])) == []  # *c = 7: a plain store to the counter
    assert _locs(_mixed([3, 4])) == ["c[0]"]  # acquire and release RMWs are morally strong too
    cas = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    atom.global.cas.b32 %r1, [%rd2], 0, 1;
    ret;
}
"""
    prog = ptxmm.parse(cas, "k.ptx", kernel="k<<<1, 2>>>(unsigned c[1])")
    assert _locs(prog) == []
    cta = cas.replace("atom.global.cas.b32 %r1, [%rd2], 0, 1", "atom.global.cta.add.u32 %r1, [%rd2], 1")
    assert _locs(ptxmm.parse(cta, "k.ptx", kernel="k<<<1, 2>>>(unsigned c[1])")) == ["c[0]"]
    # .cta RMWs of two CTAs are not morally strong: their order is not total
    assert _locs(ptxmm.parse(cta, "k.ptx", kernel="k<<<2, 1>>>(unsigned c[1])")) == []


def test_only_models_that_order_chains_use_them():
    assert rmw_chains.orders_chains(load_model("ptx"))
    assert rmw_chains.orders_chains(load_model("ptx-v7.5"))
    assert not rmw_chains.orders_chains(load_model("sc"))  # its own Atomicity, no Coherence-ms
    text = builtin_files()["ptx"].read_text()
    weak = text.replace("empty (rmw & ((fr & ms) ; (co & ms))) as Atomicity", "")
    assert weak != text and not rmw_chains.orders_chains(model_from_text(weak))
    assert rmw_chains.orders_chains(model_from_text(text))


# -- same answers ---------------------------------------------------------------------------------
def test_a_histogram_bin_agrees_and_a_witness_reads_back_the_chain(monkeypatch):
    status, holds, outs, finds, _ = _agree(_hist([0, 0, 0, 0]), monkeypatch)
    assert status == "ok" and holds is False and dict(outs[0])["hist[0]"] == 4
    assert [f[0] for f in finds] == ["assert-fails"]
    monkeypatch.setattr(checker, "RMW_CHAINS", True)
    res = ptxmm.check(_hist([0, 0, 0]), engine="z3")
    exe = res.findings[0].witness
    eg = build(_hist([0, 0, 0]))
    writes = [e.eid for e in eg.events if "RMW_W" in e.tags]
    reads = [e.eid for e in eg.events if "RMW_R" in e.tags]
    rf = dict((r, w) for w, r in exe.rf if r in reads)
    assert sorted(rf) == reads  # each RMW read reads one write: the initial one or a chain write
    order = sorted(writes, key=lambda w: sum((x, w) in exe.co for x in writes))
    assert all((a, b) in exe.co for i, a in enumerate(order) for b in order[i + 1:])  # total
    firsts = [r for r in reads if rf[r] == eg.init["hist[0]"]]
    assert len(firsts) == 1


@settings(max_examples=10, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=5))
def test_histogram_launches_agree_with_the_plain_encoding(monkeypatch, vals):
    _agree(_hist(vals), monkeypatch, brute=len(vals) <= 3)


@settings(max_examples=10, **SETTINGS)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=4))
def test_mixed_launches_agree_with_the_plain_encoding(monkeypatch, modes):
    _agree(_mixed(modes), monkeypatch, brute=len(modes) <= 2)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("counting", [True, False])
def test_the_grid_barrier_agrees(monkeypatch, n, counting):
    """count is a chain (atomicAdd arrivals, an atomicExch reset that only the last block runs):
    with the counting lemmas (chains.COUNTING) the Z3 engine encodes it as one, writes that may
    not run included; without them it keeps the generic encoding there (slower otherwise, measured)."""
    monkeypatch.setattr(z3chains, "COUNTING", counting)
    status, holds, _, finds, live = _agree(_grid(n), monkeypatch)
    assert (status, holds, finds, live) == ("ok", True, [], "terminates")
    assert _locs(_grid(n)) == ["count[0]"]
    chained = any("RMW chains" in x for x in _check(_grid(n), monkeypatch, True).reductions)
    assert chained == counting


@settings(max_examples=8, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=4))
def test_the_counting_lemmas_change_no_answer(monkeypatch, vals):
    """The columns and counter values (chains.COUNTING) are implied by the positions: the same
    answers with and without them, and as the plain encoding."""
    plain = _answer(_check(_hist(vals), monkeypatch, False))
    monkeypatch.setattr(z3chains, "COUNTING", False)
    assert _answer(_check(_hist(vals), monkeypatch, True)) == plain
    monkeypatch.setattr(z3chains, "COUNTING", True)
    assert _answer(_check(_hist(vals), monkeypatch, True)) == plain


def test_a_counter_value_one_too_high_is_killed(monkeypatch):
    """Mutant: the RMW at position k reads init + c·(k+1): the grid barrier's last arrival is
    never seen (its assertion, its hang or its outcome changes)."""
    plain = _answer(_check(_grid(3), monkeypatch, False))
    monkeypatch.setattr(z3chains, "_counted", lambda init, c, k: init + c * (k + 1))
    assert _answer(_check(_grid(3), monkeypatch, True)) != plain


_OPS = ["atom.relaxed.{sc}.global.add.u32 %r{i}, [x], 1", "atom.relaxed.{sc}.global.exch.b32 %r{i}, [x], 5",
        "atom.relaxed.{sc}.global.add.u32 %r{i}, [x], 2", "ld.relaxed.{sc}.global.u32 %r{i}, [x]",
        "atom.relaxed.{sc}.global.cas.b32 %r{i}, [x], 1, 9", "st.relaxed.{sc}.global.u32 [x], 3",
        "atom.acquire.{sc}.global.add.u32 %r{i}, [x], 1", "atom.relaxed.{sc}.global.inc.u32 %r{i}, [x], 2",
        "atom.release.{sc}.global.add.u32 %r{i}, [x], 1"]


def _litmus(threads: list[list[tuple[int, str]]]) -> str:
    """Threads of RMWs, loads and stores of x at .gpu or .cta scope, in CTAs 0 and 1; thread 0 then
    writes y, the others read it (an observation across the chain)."""
    lines = [".test RmwChain", ".global .u32 x = 0;", ".global .u32 y = 0;"]
    for t, ops in enumerate(threads):
        lines.append(f".thread T{t} .cta {t % 2} {{")
        if t > 0:
            lines.append("    ld.acquire.gpu.global.u32 %r9, [y];")
        lines += [f"    {_OPS[op].format(sc=sc, i=i)};" for i, (op, sc) in enumerate(ops)]
        if t == 0:
            lines.append("    st.release.gpu.global.u32 [y], 1;")
        lines.append("}")
    lines.append("exists (x == 1 /\\ T1:%r9 == 1)")
    return "\n".join(lines) + "\n"


_THREAD = st.lists(st.tuples(st.integers(0, len(_OPS) - 1), st.sampled_from(["gpu", "gpu", "cta"])),
                   min_size=1, max_size=2)


@settings(max_examples=10, **SETTINGS)
@given(st.lists(_THREAD, min_size=2, max_size=3))
def test_litmus_tests_with_rmws_of_every_kind_agree(monkeypatch, threads):
    prog = ptxmm.parse(_litmus(threads), "t.ptx")
    _agree(prog, monkeypatch, brute=sum(map(len, threads)) <= 3)


# -- mutants ------------------------------------------------------------------------------------------
def test_positions_with_a_gap_are_caught(monkeypatch):
    """Positions up to n instead of n - 1: a gap leaves the read after it reading no write, its
    count (and what it writes) anything — more outcomes than two atomicAdds can give. (The
    counting lemmas' columns close such a gap as well: the positions alone are tested.)"""
    monkeypatch.setattr(z3chains, "COUNTING", False)
    plain = _answer(_check(_hist([0, 0]), monkeypatch, False, max_outcomes=3))
    assert {o for o in plain[2]} == {(("hist[0]", 2), ("hist[1]", 0), ("hist[2]", 0), ("hist[3]", 0))}
    assert _answer(_check(_hist([0, 0]), monkeypatch, True, max_outcomes=3)) == plain
    monkeypatch.setattr(z3chains.Ranks, "_count", lambda self, ws: len(ws) + 1)
    mutant = _answer(_check(_hist([0, 0]), monkeypatch, True, max_outcomes=3))
    assert mutant != plain and len(mutant[2]) > 1


def test_reading_two_positions_back_is_caught(monkeypatch):
    """rf from the write two positions earlier: three increments could count to 2."""
    plain = _answer(_check(_hist([0, 0, 0]), monkeypatch, False, max_outcomes=3))

    def two_back(self, w, r):
        own = self.read_of[r]
        if w == self.init_of[r]:
            return self._term(self.pos[own] <= 1, own)
        if w not in self.pos or w == own:
            return False
        return self._term(self.pos[w] + 2 == self.pos[own], w, own)

    monkeypatch.setattr(z3chains.Ranks, "rf", two_back)
    assert _answer(_check(_hist([0, 0, 0]), monkeypatch, True, max_outcomes=3)) != plain


def test_the_report_names_the_reductions_that_applied(monkeypatch):
    res = _check(_hist([0, 0, 1, 1]), monkeypatch, True)
    assert res.reductions == ("symmetry (2 class(es) of 2/2 interchangeable threads)",
                              "read-only fold (4 location(s))", "RMW chains (2 location(s))",
                              "address memo (3 question(s) answered from it)",
                              "loop-free liveness shortcut (no liveness graph)")
    assert res.to_json()["bound"]["reductions"] == list(res.reductions)
    assert "RMW chains" not in " ".join(_check(_hist([0, 0, 1, 1]), monkeypatch, False).reductions)
    assert _check(_hist([0, 0]), monkeypatch, True, engine="brute").reductions == \
        ("read-only fold (2 location(s))", "address memo (1 question(s) answered from it)",
         "loop-free liveness shortcut (no liveness graph)")


# -- the value bounds (chains.VALUE_BOUNDS) -------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3])
def test_the_value_bounds_change_no_answer_on_the_grid_barrier(monkeypatch, n):
    """atomicAdd arrivals and a constant atomicExch reset: the lemma applies, and the answers are
    those of the plain encoding with it on and off (a bound one add too strong, the mutant
    chain-value-bound-one-high, leaves the last arrival no place: killed here)."""
    plain = _answer(_check(_grid(n), monkeypatch, False))
    monkeypatch.setattr(z3chains, "VALUE_BOUNDS", False)
    assert _answer(_check(_grid(n), monkeypatch, True)) == plain
    monkeypatch.setattr(z3chains, "VALUE_BOUNDS", True)
    assert _answer(_check(_grid(n), monkeypatch, True)) == plain
    assert plain[0:2] == ("ok", True) and plain[3:] == ([], "terminates")


@settings(max_examples=8, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=4))
def test_the_value_bounds_change_no_answer_on_histograms(monkeypatch, vals):
    plain = _answer(_check(_hist(vals), monkeypatch, False))
    monkeypatch.setattr(z3chains, "VALUE_BOUNDS", False)
    assert _answer(_check(_hist(vals), monkeypatch, True)) == plain
    monkeypatch.setattr(z3chains, "VALUE_BOUNDS", True)
    assert _answer(_check(_hist(vals), monkeypatch, True)) == plain


@settings(max_examples=10, **SETTINGS)
@given(st.lists(_THREAD, min_size=2, max_size=3))
def test_the_value_bounds_change_no_answer_on_mixed_rmws(monkeypatch, threads):
    """adds of 1 and 2, exchanges of 5, increments, CAS, plain stores and loads: the lemma applies
    (adds of one constant and constant writes), or is left out, and no answer changes."""
    prog = ptxmm.parse(_litmus(threads), "t.ptx")
    plain = _answer(_check(prog, monkeypatch, False))
    monkeypatch.setattr(z3chains, "VALUE_BOUNDS", False)
    assert _answer(_check(prog, monkeypatch, True)) == plain
    monkeypatch.setattr(z3chains, "VALUE_BOUNDS", True)
    assert _answer(_check(prog, monkeypatch, True)) == plain


def test_the_value_bounds_apply_only_where_their_proof_does():
    """Where the lemma is stated: adds of one constant c > 0 with constant writes and no wrap."""
    import z3

    from ptxmm.engines.z3.logic import Z3Logic

    def bounds(steps: list[int | None], consts: dict[int, int], init: int = 0, width: int = 32) -> int:
        lg = Z3Logic()
        n = len(steps)
        ch = rmw_chains.Chain("x", 0, tuple((1 + 2 * i, 2 + 2 * i) for i in range(n)))
        reads = {0: z3.BitVecVal(init, width)} | {1 + 2 * i: z3.BitVec(f"r{i}", width) for i in range(n)}
        adds = {2 + 2 * i: (None if s is None else z3.BitVecVal(s, width)) for i, s in enumerate(steps)}
        written = {2 + 2 * i: (z3.BitVecVal(consts[i], width) if i in consts else z3.BitVec(f"w{i}", width))
                   for i in range(n)}
        rk = z3chains.Ranks({}, [True] * (2 * n + 1), lg, (), adds, reads, written)
        for w in ch.writes:
            rk.pos[w] = z3.Int(f"p{w}")
        before = len(rk.cs)
        rk._bounds(ch, list(ch.writes))
        return len(rk.cs) - before

    assert bounds([1, 1, 1], {}) == 3 * 2  # per RMW, j = 1..2
    assert bounds([1, 1, None], {2: 0}) == 2 * 1 + 2  # the exchange's read bounded too
    assert bounds([1, 2, 1], {}) == 0  # two steps
    assert bounds([1, 1, None], {}) == 0  # a write whose value is not a constant
    assert bounds([1, 1, 1], {}, init=253, width=8) == 0  # 253 + 3 wraps at 8 bits
    assert bounds([1, 1, 1], {}, init=252, width=8) == 6  # 252 + 3 = 255: no wrap
    assert bounds([1, 1, None], {2: 254}, width=8) == 0  # 254 + 2 wraps
