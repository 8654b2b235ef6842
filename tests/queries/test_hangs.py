"""Liveness (issue 26, src/ptxmm/liveness.py): hang findings, progress models, ``--liveness``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

from ptxmm import check, load, parse
from ptxmm.cli.main import main
from ptxmm.errors import PtxmmError
from ptxmm.queries.hangs import Progress, find_hangs, terminates
from ptxmm.semantics.builder import build
from ptxmm.semantics.result import FindingKind

EX = ROOT / "examples" / "liveness"

# Each teaching example's liveness verdict (True: no execution hangs) under each progress model.
VERDICTS = {
    "spin-weak-flag": dict(fair=False, obe=False, lobe=False, hsa=False, unfair=False),
    "spin-relaxed-flag": dict(fair=True, obe=False, lobe=True, hsa=True, unfair=False),
    "spin-cta-flag": dict(fair=False, obe=False, lobe=False, hsa=False, unfair=False),
    "quorum-missing-arrival": dict(fair=False, obe=False, lobe=False, hsa=False, unfair=False),
    "mbarrier-tx-never-arrives": dict(fair=False, obe=False, lobe=False, hsa=False, unfair=False),
    "lookback-blockidx": dict(fair=True, obe=False, lobe=True, hsa=True, unfair=False),
    "lookback-ticket": dict(fair=True, obe=True, lobe=True, hsa=False, unfair=False),
    "grid-barrier": dict(fair=True, obe=False, lobe=False, hsa=False, unfair=False),
}


@pytest.mark.parametrize("name", sorted(VERDICTS))
@pytest.mark.parametrize("progress", ["fair", "obe", "lobe", "hsa", "unfair"])
def test_examples_under_each_progress_model(name, progress):
    prog = load(EX / f"{name}.ptx")
    ok, finding = terminates(prog, "ptx", progress=progress)
    assert ok is VERDICTS[name][progress]
    if not ok:  # every hang finding has a witness and says where
        assert finding.kind == FindingKind.HANG and finding.witness.paths and finding.events
        assert "forever" in finding.detail and f"progress {progress}" in finding.detail


def test_every_example_states_its_liveness_and_fair_agrees():
    names = {p.stem for p in EX.glob("*.ptx")}
    assert names == set(VERDICTS)
    for p in EX.glob("*.ptx"):
        assert load(p).expect_liveness is VERDICTS[p.stem]["fair"]


def test_weak_spin_witness_in_words():
    (h,) = find_hangs(load(EX / "spin-weak-flag.ptx"), "ptx")
    d = h.finding.detail
    assert d.startswith("T1 spins at line 17 forever") and "weak read of flag" in d
    assert "T0's `st.relaxed.gpu.global.u32 [flag], 1`" in d and "[progress fair]" in d
    assert [e.line for e in h.finding.events] == [15]


def test_scoped_memory_fairness():
    """A CHOICE (docs/liveness.md): a .cta read need never see another CTA's write; with
    ``scoped=False`` (Dat3M's reading) the same spin terminates; in the same CTA it terminates."""
    prog = load(EX / "spin-cta-flag.ptx")
    (h,) = find_hangs(prog, "ptx")
    assert "cta-scope read of flag" in h.finding.detail and "outside the read's scope" in h.finding.detail
    assert find_hangs(prog, "ptx", scoped=False) == []
    same_cta = (EX / "spin-cta-flag.ptx").read_text().replace(".thread T1 .cta 1", ".thread T1 .cta 0")
    assert find_hangs(parse(same_cta), "ptx") == []
    gpu = (EX / "spin-cta-flag.ptx").read_text().replace("ld.relaxed.cta", "ld.relaxed.gpu")
    assert find_hangs(parse(gpu), "ptx") == []


def test_quorum_witness_counts_arrivals():
    hs = find_hangs(load(EX / "quorum-missing-arrival.ptx"), "ptx")
    text = " ".join(h.finding.detail for h in hs)
    assert "waits at `bar.sync 1, 3`" in text and "2 of the 3 threads its count needs arrive" in text


def test_full_cta_barrier_a_thread_never_reaches():
    """T0 spins before the barrier on a flag T1 sets after it (a thread that skips the barrier
    and exits would release it instead: tests/queries/test_barrier_waits.py)."""
    prog = parse(""".global .u32 x = 0;
.thread T0 .cta 0 { .reg .pred %p; L: ld.relaxed.gpu.global.u32 %r0, [x]; setp.eq.u32 %p, %r0, 0;
  @%p bra L; bar.sync 0; }
.thread T1 .cta 0 { bar.sync 0; st.relaxed.gpu.global.u32 [x], 1; }
exists (T0:%r0 == 0)""")
    (h,) = find_hangs(prog, "ptx")
    d = h.finding.detail
    assert "T1 waits at `bar.sync 0`" in d and "T0 of its CTA never arrives" in d
    assert "(T0 spins at line 3)" in d


def test_obe_witness_names_the_thread_never_started():
    ok, f = terminates(load(EX / "lookback-blockidx.ptx"), "ptx", progress="obe")
    assert not ok and "T0 never starts (progress obe)" in f.detail


def test_spin_reading_its_last_value_forever_needs_no_fairness_escape():
    """A relaxed spin whose producer writes the awaited value and then overwrites it hangs: the
    co-maximal write is the last one."""
    prog = parse(""".global .u32 f = 0;
.thread T0 .cta 0 { st.relaxed.gpu.global.u32 [f], 1; st.relaxed.gpu.global.u32 [f], 2; }
.thread T1 .cta 1 { .reg .pred %p; L: ld.relaxed.gpu.global.u32 %r0, [f]; setp.ne.u32 %p, %r0, 1;
  @%p bra L; }
exists (T1:%r0 == 1)""")
    ok, f = terminates(prog, "ptx")
    assert not ok and "value 2" in f.detail


def test_counting_loop_is_not_stuck():
    """A loop that counts its iterations to its exit never repeats its state: not a hang, even
    when the bound cuts it (the bound does not decide liveness) — and not "terminates" either:
    the cut loop is not exact (its counter changes), so the verdict is not decided (issue 37)."""
    prog = parse(""".global .u32 x = 0;
.thread T0 .cta 0 { .reg .pred %p; .reg .u32 %r1 = 0;
  L: ld.relaxed.gpu.global.u32 %r0, [x]; add.u32 %r1, %r1, 1; setp.lt.u32 %p, %r1, 100; @%p bra L; }
exists (T0:%r0 == 0)""")
    assert terminates(prog, "ptx") == (None, None)
    assert terminates(prog, "ptx", unroll=0) == (None, None)


def test_loop_without_exit_hangs_whatever_the_bound():
    prog = parse(""".global .u32 x = 0;
.thread T0 .cta 0 { L: ld.relaxed.gpu.global.u32 %r0, [x]; bra L; }
exists (T0:%r0 == 0)""")
    for unroll in (0, 1, 3):
        assert not terminates(prog, "ptx", unroll=unroll)[0]


# -- verdicts of conditions do not change --------------------------------------------------------

@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_condition_verdict_is_the_same_with_liveness(name):
    prog = load(EX / f"{name}.ptx")
    a, b = check(prog), check(prog, liveness=True)
    assert a.holds == b.holds and a.outcome_set == b.outcome_set and a.agrees is not False
    assert b.liveness == ("terminates" if VERDICTS[name]["fair"] else "hangs")
    assert [f for f in b.findings if f.kind != FindingKind.HANG] == list(a.findings)


def test_plain_graph_is_unchanged_by_the_liveness_builder():
    for name in VERDICTS:
        prog = load(EX / f"{name}.ptx")
        plain = build(prog)
        assert all(p.kind == "done" for ps in plain.paths for p in ps)
        live = build(prog, liveness=True)
        assert len(live.events) >= len(plain.events)


# -- the oracle: a spin on one flag, written by one producer ------------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(writes=st.lists(st.integers(0, 2), max_size=3), want=st.integers(0, 2), init=st.integers(0, 2),
       weak=st.booleans())
def test_single_flag_spin_against_oracle(writes, want, init, weak):
    """T1 spins until flag == want; T0 writes ``writes`` in order (co is program order). Under
    fair progress T1 hangs iff it can keep reading a value != want forever: a strong read only the
    last value (co-maximal), a weak read any value coherence lets it read (any, here)."""
    stores = " ".join(f"st.relaxed.gpu.global.u32 [f], {v};" for v in writes)
    ld = "ld.global.u32" if weak else "ld.relaxed.gpu.global.u32"
    prog = parse(f""".global .u32 f = {init};
.thread T0 .cta 0 {{ {stores} ret; }}
.thread T1 .cta 1 {{ .reg .pred %p; L: {ld} %r0, [f]; setp.ne.u32 %p, %r0, {want}; @%p bra L; }}
exists (T1:%r0 == {want})""")
    values = [init, *writes]
    hangs = any(v != want for v in values) if weak else values[-1] != want
    assert terminates(prog, "ptx")[0] is (not hangs)


# -- progress models, CLI --------------------------------------------------------------------------

def test_progress_parse():
    assert Progress.parse("obe") == Progress("obe", "obe")
    assert Progress.parse("gpu=obe") == Progress("fair", "obe")
    assert str(Progress.parse("gpu=obe,cta=fair")) == "gpu=obe,cta=fair"
    with pytest.raises(PtxmmError):
        Progress.parse("sometimes")


def test_per_level_progress():
    """Threads of one CTA stay fair while CTAs are obe: the look-back across CTAs hangs, the same
    look-back between two threads of one CTA does not."""
    prog = load(EX / "lookback-blockidx.ptx")
    assert not terminates(prog, "ptx", progress="gpu=obe,cta=fair")[0]
    assert terminates(prog, "ptx", progress="gpu=fair,cta=obe")[0] is True


def test_cli_check_liveness_text_and_json():
    r = CliRunner().invoke(main, ["check", "--liveness", str(EX / "spin-weak-flag.ptx")])
    assert r.exit_code == 0, r.output
    assert "hang: T1 spins at line 17 forever" in r.output
    assert "liveness: an execution hangs (progress fair)" in r.output
    r = CliRunner().invoke(main, ["check", "--liveness", "--progress", "obe", "--json",
                                  str(EX / "lookback-ticket.ptx")])
    js = json.loads(r.output)
    obj = js[0] if isinstance(js, list) else js
    assert obj["liveness"] == {"verdict": "terminates", "progress": "obe", "expected": "terminates",
                               "agrees": True}
    r = CliRunner().invoke(main, ["check", "--liveness", "--progress", "often", str(EX / "grid-barrier.ptx")])
    assert r.exit_code == 2 and "progress model" in r.output


def test_cli_test_liveness(tmp_path):
    r = CliRunner().invoke(main, ["test", "--liveness", "-j", "1", str(EX)])
    assert r.exit_code == 0, r.output
    assert "8/8 agree" in r.output and "liveness, progress fair" in r.output
    r = CliRunner().invoke(main, ["test", "--liveness", "--progress", "obe", "-j", "1", str(EX)])
    assert r.exit_code == 1 and "DISAGREE" in r.output
    csv = tmp_path / "exp.csv"
    csv.write_text("# path,ptx\ngrid-barrier.ptx,0\nspin-weak-flag.ptx,0\n")
    r = CliRunner().invoke(main, ["test", "--liveness", "--progress", "obe", "--expected", str(csv),
                                  "-j", "1", str(EX / "grid-barrier.ptx"), str(EX / "spin-weak-flag.ptx")])
    assert r.exit_code == 0 and "2/2 agree" in r.output, r.output


def test_expect_liveness_errors():
    with pytest.raises(PtxmmError, match="terminates or hangs"):
        parse(".expect-liveness maybe\n.global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\n"
              "exists (x == 1)")
    with pytest.raises(PtxmmError, match="second .expect-liveness"):
        parse(".expect-liveness hangs\n.expect-liveness hangs\n.global .u32 x = 0;\n"
              ".thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)")


def test_cli_explain_liveness_shows_the_prefix():
    r = CliRunner().invoke(main, ["explain", "--liveness", "--progress", "obe",
                                  str(EX / "lookback-blockidx.ptx")])
    assert r.exit_code == 0, r.output
    assert "hang: T1 spins at line 22 forever" in r.output and "T0 never starts" in r.output
    assert "reads 0 from the initial value   [repeats forever]" in r.output
    r = CliRunner().invoke(main, ["explain", "--liveness", "--json", str(EX / "quorum-missing-arrival.ptx")])
    js = json.loads(r.output)
    obj = js[0] if isinstance(js, list) else js
    assert obj["progress"] == "fair" and obj["hangs"][0]["kind"] == "hang" and obj["hangs"][0]["prefix"]
