"""ptxmm gen: the edge vocabulary, cycle → test, names, symmetry, and that every generated test
parses (.ptx and .litmus) and checks under every bundled model — and is forbidden under SC (a cycle
of program order and communication) yet reachable in some candidate execution (the condition is a
consistent observation of the cycle)."""

from __future__ import annotations

import random
import re
from itertools import permutations
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.campaigns.cycle import Litmus, Place, Thread
from ptxmm.campaigns.edges import EdgeError, parse_edge, parse_edges
from ptxmm.campaigns.gen import GenOptions, generate
from ptxmm.campaigns.render import canonical, renumber
from ptxmm.cat.parser import builtin_models
from ptxmm.cli import main

MODELS = sorted(builtin_models())
SIZE4 = list(generate(GenOptions(size=4)))


@pytest.fixture(scope="module")
def no_axioms(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("m") / "none.cat"
    p.write_text('"every candidate execution"\nempty 0 as trivial\n')
    return p


def _sample6(k: int = 40) -> list:
    allg = list(generate(GenOptions(size=6)))
    return random.Random(6).sample(allg, k)


# ----- the vocabulary --------------------------------------------------------------------------


def test_edges_read_and_print_back():
    for text in ("Rfe", "Fre", "Coe", "PodWR", "PosRR", "Fence.sc.gpu.dWR", "Fence.acq_rel.cta.sWW",
                 "DpAddrdR", "DpDatadW", "DpCtrldW", "RfeLgAg", "PodWRPRc"):
        assert str(parse_edge(text)) == text
    assert [str(e) for e in parse_edges("Pod**")] == ["PodRR", "PodRW", "PodWR", "PodWW"]
    assert len(parse_edges("Fence.sc.*.dW*")) == 8


@pytest.mark.parametrize("bad, words", [("Rfx", "unknown edge"), ("DpDatadR", "ends at a store"),
                                        ("RfeAgAg", "does not apply to a store")])
def test_bad_edges_are_typed_errors(bad, words):
    with pytest.raises(EdgeError, match=words):
        parse_edge(bad)


@pytest.mark.parametrize("cycle, words", [
    ("Rfe PodWR Fre", "ends at a R but PodWR starts at a W"),
    ("Rfe PodRR", "ends at a R but Rfe starts at a W"),
    ("RfeLgAg PodRRRgRg Fre PodWW", "annotate their access differently"),
    ("PosWW PosWW", "two communication edges")])
def test_cycles_that_cannot_be_tests_are_refused(cycle, words):
    with pytest.raises(EdgeError, match=words):
        list(generate(GenOptions(cycles=(cycle,))))
    r = CliRunner().invoke(main, ["gen", "--cycle", cycle])
    assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output


# ----- classic shapes from their cycles ------------------------------------------------------------


@pytest.mark.parametrize("cycle, name", [
    ("Rfe PodRR Fre PodWW", "MP+pos"), ("PodWR Fre PodWR Fre", "SB+pos"),
    ("PodRW Rfe PodRW Rfe", "LB+pos"), ("PodWW Coe PodWW Coe", "2+2W+pos"),
    ("PodWW Rfe PodRW Coe", "S+pos"), ("PodWW Coe PodWR Fre", "R+pos"),
    ("Rfe PodRR Fre Rfe PodRR Fre", "IRIW+pos"), ("Rfe PodRW Rfe PodRR Fre", "WRC+pos"),
    ("Rfe PosRR Fre", "CoRR+po"), ("Fence.sc.gpu.dWR Fre PodWR Fre", "SB+fence.sc.gpu+po"),
    ("Rfe DpAddrdR Fre PodWW", "MP+po+addr"), ("RfeLgAg PodRR Fre PodWW", "MP+po-rel.gpu+acq.gpu-po")])
def test_classic_cycles_give_diy_names(cycle, name):
    (g,) = generate(GenOptions(cycles=(cycle,)))
    assert g.name == name


def test_mp_is_built_as_herd_writes_it():
    (g,) = generate(GenOptions(cycles=("Rfe PodRR Fre PodWW",)))
    prog = ptxmm.parse(g.text())
    assert [len(t.instrs) for t in prog.threads] == [2, 2]
    assert "exists (T1:%r0 == 1 && T1:%r1 == 0)" in g.text()
    assert ptxmm.check(prog, "ptx").holds is True and ptxmm.check(prog, "sc").holds is False


def test_a_location_written_twice_is_observed_finally():
    (g,) = generate(GenOptions(cycles=("PodWW Coe PodWW Coe",)))
    assert "exists (x == 2 && y == 2)" in g.text()


def test_dependencies_order_load_buffering_under_every_ptx_model():
    for dep in ("DpDatadW", "DpCtrldW", "DpAddrdW"):
        (g,) = generate(GenOptions(cycles=(f"{dep} Rfe {dep} Rfe",)))
        for m in ("ptx", "ptx-v7.5", "ptx-v6.0"):
            assert ptxmm.check(ptxmm.parse(g.text()), m).holds is False, (dep, m)
    (g,) = generate(GenOptions(cycles=("PodRW Rfe PodRW Rfe",)))
    assert ptxmm.check(ptxmm.parse(g.text()), "ptx").holds is True


# ----- every generated test ---------------------------------------------------------------------


def test_size4_counts_and_families():
    assert len(SIZE4) == 161
    assert {g.family for g in SIZE4} == {"MP", "SB", "LB", "2+2W", "S", "R"}


def _check_everywhere(g, none_cat: Path) -> None:
    prog = ptxmm.parse(g.text())
    for m in MODELS:
        assert ptxmm.check(prog, m).holds is not None, (g.name, m)
    assert ptxmm.check(prog, "sc").holds is False, g.name  # a cycle: forbidden under SC
    assert ptxmm.check(prog, none_cat).holds is True, g.name  # ... and a consistent observation
    try:
        lit = g.text("litmus")
    except EdgeError:
        return
    assert ptxmm.parse(lit, fmt="litmus").condition is not None
    assert ptxmm.check(ptxmm.parse(lit, fmt="litmus"), "ptx").holds == ptxmm.check(prog, "ptx").holds


def test_every_size4_test_parses_and_checks_under_every_model(no_axioms):
    for g in SIZE4:
        _check_everywhere(g, no_axioms)


def test_a_sample_of_size6_parses_and_checks_under_every_model(no_axioms):
    for g in _sample6(30):
        _check_everywhere(g, no_axioms)


_LOC = re.compile(r"\[(x|y|z|a|b|c)\]|, (x|y|z|a|b|c);")


def _rename_locs(text: str, ren: dict[str, str]) -> str:
    def sub(m: re.Match) -> str:
        old = m.group(1) or m.group(2)
        return m.group(0).replace(old, ren.setdefault(old, f"L{len(ren)}"))

    return _LOC.sub(sub, text)


def _permuted(threads: list[str], ctas: list[int], conds: list[str], perm: tuple[int, ...]) -> str:
    ren: dict[str, str] = {}
    cmap: dict[int, int] = {}
    out = [f"cta{cmap.setdefault(ctas[old], len(cmap))}:{_rename_locs(threads[old], ren)}"
           for old in perm]
    regs = sorted(re.sub(r"T(\d+):", lambda m: f"T{perm.index(int(m.group(1)))}:", c)
                  for c in conds if c.startswith("T"))
    finals = sorted(ren.get(c.split()[0], c.split()[0]) + c[1:] for c in conds if not c.startswith("T"))
    return "|".join(out) + str(regs) + str(finals)


def _text_key(text: str) -> str:
    """Independent of the generator: the least text over thread permutations, locations and
    registers renamed in order of first use, CTAs renumbered (.ptx as gen writes it)."""
    body = text.split(".thread")[1:]
    conds = [c.strip() for c in text.split("exists (")[1].rstrip(")\n").split(" && ")]
    threads = ["".join(b.split("\n", 1)[1:]).rsplit("}", 1)[0] for b in body]
    ctas = [int(re.search(r"\.cta (\d+)", b).group(1)) for b in body]
    return min(_permuted(threads, ctas, conds, p) for p in permutations(range(len(threads))))


def test_no_two_generated_tests_are_equal_up_to_symmetry():
    for tests in (SIZE4, _sample6(400)):
        keys = [_text_key(g.text()) for g in tests]
        assert len(set(keys)) == len(keys)
        assert len({g.name for g in tests}) == len(tests)


def test_generation_is_deterministic():
    a = [(g.name, g.text()) for g in generate(GenOptions(size=5))]
    b = [(g.name, g.text()) for g in generate(GenOptions(size=5))]
    assert a == b and len(a) == 673
    sizes = [g.size for g in generate(GenOptions(size=5))]
    assert sizes == sorted(sizes)  # smallest first


def test_annotation_and_placement_crosses():
    opts = GenOptions(cycles=("Rfe PodRR Fre PodWW",), sems=("relaxed", "acquire", "release"),
                      scopes=("cta", "gpu"))
    names = [g.name for g in generate(opts)]
    assert len(names) == 4 ** 4 and len(set(names)) == len(names)  # 2 sems x 2 scopes per access
    placed = list(generate(GenOptions(cycles=("Rfe PodRR Fre Rfe PodRR Fre",), placement="all")))
    # IRIW's 15 groupings into CTAs, fewer up to symmetry (T0<->T2 with T1<->T3)
    assert 8 <= len(placed) < 15
    clu = list(generate(GenOptions(cycles=("Rfe PodRR Fre PodWW",), placement="cluster")))
    assert any(".cluster 0" in g.text() for g in clu)
    for g in clu:
        ptxmm.check(ptxmm.parse(g.text()), "ptx")


# ----- the symmetry key (a shortcut: it must identify exactly the symmetric tests) -----------------


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(SIZE4) - 1), st.randoms(use_true_random=False))
def test_canonical_key_is_invariant_under_symmetry(i, rnd):
    t = SIZE4[i].test
    order = list(range(len(t.threads)))
    rnd.shuffle(order)
    other = renumber(t, tuple(order))
    locs = list(range(t.n_locs))
    rnd.shuffle(locs)
    from dataclasses import replace

    moved = replace(other, threads=tuple(Thread(tuple(replace(a, loc=locs[a.loc]) for a in th.accesses),
                                                th.links, Place(th.place.cta + 7)) for th in other.threads),
                    finals=tuple((locs[lc], v) for lc, v in other.finals))
    assert canonical(moved) == canonical(t)
    j = rnd.randrange(len(SIZE4))
    assert (canonical(SIZE4[j].test) == canonical(t)) == (i == j)


def test_canonical_key_tells_placements_apart():
    (g,) = generate(GenOptions(cycles=("Rfe PodRR Fre PodWW",)))
    same = Litmus(g.name, g.test.cycle, tuple(Thread(t.accesses, t.links, Place(0)) for t in g.test.threads),
                g.test.finals, g.test.n_locs)
    assert canonical(same) != canonical(g.test)


# ----- the CLI and the families ---------------------------------------------------------------------


def test_gen_cli_writes_files_that_parse(tmp_path):
    r = CliRunner().invoke(main, ["gen", "--size", "4", "-o", str(tmp_path / "p")])
    assert r.exit_code == 0 and "161 tests" in r.output
    assert len(list((tmp_path / "p").glob("*.ptx"))) == 161
    r = CliRunner().invoke(main, ["gen", "--size", "4", "--format", "litmus", "-o", str(tmp_path / "l")])
    files = list((tmp_path / "l").glob("*.litmus"))
    assert r.exit_code == 0 and "skipped" in r.output and 0 < len(files) < 161
    for f in files[:20]:
        ptxmm.load(f)


def test_families_come_from_the_product(tmp_path):
    from ptxmm.campaigns import families

    r = CliRunner().invoke(main, ["gen", "--families", "2", "-o", str(tmp_path)])
    assert r.exit_code == 0 and "24 variants" in r.output
    assert (tmp_path / "MP-00.ptx").read_text() == families.render(families.sample(2, 14)[0], "MP-00")
    for f in sorted(tmp_path.glob("*.ptx"))[:6]:
        ptxmm.check(ptxmm.load(f), "ptx")


def test_herd_format_is_lisa(tmp_path):
    (g,) = generate(GenOptions(cycles=("Rfe PodRR Fre PodWW",)))
    text = g.text("herd")
    assert text.startswith("LISA MP+pos") and "r[] r0 y" in text and "exists (1:r0=1 /\\ 1:r1=0)" in text


def test_engines_agree_on_generated_tests():
    """The brute-force engine (herd-style enumeration) is the oracle for Z3 on generated programs."""
    for g in random.Random(4).sample(SIZE4, 25):
        prog = ptxmm.parse(g.text())
        for m in ("ptx", "ptx-v6.0"):
            assert ptxmm.check(prog, m, engine="brute").holds == ptxmm.check(prog, m, engine="z3").holds
