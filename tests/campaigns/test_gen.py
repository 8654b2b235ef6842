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
from ptxmm.cli.main import main

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
                 "DpAddrdR", "DpDatadW", "DpCtrldW", "RfeLgAg", "PodWRPRc", "Rfi", "Fri", "Coi", "Rmw",
                 "Rmw.cas", "Rmw.add", "RmwAgLg", "Fence.proxy.texture.dRR", "PosWRPTx", "RfeSfCn",
                 "PodWRVaP"):
        assert str(parse_edge(text)) == text
    assert (str(parse_edge("Wsi")), str(parse_edge("Wse"))) == ("Coi", "Coe")  # diy7's older names
    assert not parse_edge("Rfi").ext and parse_edge("Rfe").ext and not parse_edge("Rmw").ext
    assert [str(e) for e in parse_edges("Fence.proxy.*.dWR")] == [
        f"Fence.proxy.{k}.dWR" for k in ("alias", "texture", "surface", "constant")]
    assert [str(e) for e in parse_edges("Pod**")] == ["PodRR", "PodRW", "PodWR", "PodWW"]
    assert len(parse_edges("Fence.sc.*.dW*")) == 8


@pytest.mark.parametrize("bad, words", [("Rfx", "unknown edge"), ("DpDatadR", "ends at a store"),
                                        ("RfeAgAg", "does not apply to a store"),
                                        ("CoeSfTx", "texture does not apply to a store"),
                                        ("RmwPRg", "generic strong access"),
                                        ("RmwAgLc", "one scope")])
def test_bad_edges_are_typed_errors(bad, words):
    with pytest.raises(EdgeError, match=words):
        parse_edge(bad)


@pytest.mark.parametrize("cycle, words", [
    ("Rfe PodWR Fre", "ends at a R but PodWR starts at a W"),
    ("Rfe PodRR", "ends at a R but Rfe starts at a W"),
    ("RfeLgAg PodRRRgRg Fre PodWW", "annotate their access differently"),
    ("PosWW PosWW", "two communication edges"),
    ("Rfe DpAddrdRPTx Fre PodWW", "no register address"),
    ("RfeRgAg RmwRcRc Rfe PodRR Fre PodWW", "annotate their access differently")])
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
    ("Rfe DpAddrdR Fre PodWW", "MP+po+addr"), ("RfeLgAg PodRR Fre PodWW", "MP+po-rel.gpu+acq.gpu-po"),
    ("Rfi PodRR Fre Rfi PodRR Fre", "SB+rfi-pos"), ("PodWW Rfe Rmw Rfe PodRR Fre", "ISA2+po+exch+po"),
    ("RfeLgAg PodRRAgCn Fre PodWW", "MP+po-rel.gpu+acq.gpu-po-const"),
    ("Rfe Fence.proxy.texture.dRRPTx Fre PodWW", "MP+po+wk-fence.proxy.texture-tex")])
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


def test_internal_edges_are_program_order_the_values_observe():
    """Rfi is PosWR as a test (one test, kept once, named by the first cycle that made it); the read
    sees the thread's own write."""
    gs = list(generate(GenOptions(cycles=("Rfe PodRR Fre Rfi PodRR Fre", "Rfe PodRR Fre PosWR PodRR Fre"))))
    assert [g.name for g in gs] == ["RWC+po+rfi-po"]
    assert "T2:%r0 == 1" in gs[0].text()


def test_read_modify_writes_are_atoms_with_their_annotations():
    (g,) = generate(GenOptions(cycles=("PodWW RfeRgAg RmwAgLg RfeLgAg PodRR Fre",)))
    assert "atom.acq_rel.gpu.global.exch.b32 %r0, [y], 2;" in g.text()
    (g,) = generate(GenOptions(cycles=("PodWW Rfe Rmw.cas Rfe PodRR Fre",)))
    assert "atom.relaxed.gpu.global.cas.b32 %r0, [y], 1, 2;" in g.text()
    assert "atom.relaxed.gpu.cas r0, y, 1, 2" in g.text("litmus")
    (g,) = generate(GenOptions(cycles=("PodWW Rfe Rmw.add Coe PodWR Fre",)))
    assert "atom.relaxed.gpu.global.add.u32 %r0, [y], 1;" in g.text() and "y == 3" in g.text()
    # crossing --sems/--scopes never makes an atom weak or splits its scope
    gs = list(generate(GenOptions(cycles=("PodWW Rfe Rmw Rfe PodRR Fre",), sems=("weak", "relaxed"),
                                  scopes=("cta", "gpu"))))
    assert gs and all(".global.exch" in g.text() and ("atom.relaxed.cta" in g.text() or
                                                     "atom.relaxed.gpu" in g.text()) for g in gs)
    with pytest.raises(EdgeError):
        generate(GenOptions(cycles=("Rfe Rmw",))).__next__()


def test_a_proxy_read_without_a_proxy_fence_tells_the_proxy_models_apart():
    """MP whose data is read through the constant proxy: the release/acquire pair orders the
    generic write, not the constant-proxy read — allowed where proxies exist (ptx, ptx-v7.5),
    forbidden in ptx-v6.0 (no proxies); the proxy fence forbids it everywhere."""
    (g,) = generate(GenOptions(cycles=("RfeLgAg PodRRAgCn Fre PodWW",)))
    prog = ptxmm.parse(g.text())
    assert ".const .u32 x_c aliases x;" in g.text() and "ld.const.u32 %r1, [x_c];" in g.text()
    assert [ptxmm.check(prog, m).holds for m in ("ptx", "ptx-v7.5", "ptx-v6.0")] == [True, True, False]
    (g,) = generate(GenOptions(cycles=("RfeLgAg Fence.proxy.constant.dRRAgCn Fre PodWW",)))
    prog = ptxmm.parse(g.text())
    assert [ptxmm.check(prog, m).holds for m in ("ptx", "ptx-v7.5", "ptx-v6.0")] == [False, False, False]


def test_proxies_cross_one_access_at_a_time():
    base = list(generate(GenOptions(cycles=("Rfe PodRR Fre PodWW",))))
    gs = list(generate(GenOptions(cycles=("Rfe PodRR Fre PodWW",), proxies=("texture", "surface"))))
    # 4 accesses: the 2 reads take texture or surface, the 2 writes surface: 1 + 2 + 2 + 1 + 1
    assert len(base) == 1 and len(gs) == 7 and len({g.name for g in gs}) == 7
    assert sum("tex.1d" in g.text() for g in gs) == 2 and sum("sust.b" in g.text() for g in gs) == 2


# ----- every generated test ---------------------------------------------------------------------

NEW_EDGES = GenOptions(size=5, relax="Rmw Rmw.cas Rmw.add Rfi Fri Coi Pos** Fence.proxy.*.d**",
                       safe="Rfe Fre Coe Pod** Fence.acq_rel.gpu.d**",
                       proxies=("alias", "texture", "surface", "constant"))


def _sample_new(k: int) -> list:
    return random.Random(5).sample(list(generate(NEW_EDGES)), k)


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


def test_internal_edges_atoms_and_proxies_parse_and_check_under_every_model(no_axioms):
    """Rfi Fri Coi, the three read-modify-writes, proxy fences and proxy accesses: each test a
    cycle forbidden under SC and a consistent observation (size 5, a sample)."""
    sample = _sample_new(50)
    assert any("atom." in g.text() for g in sample) and any("fence.proxy" in g.text() for g in sample)
    assert any("aliases" in g.text() for g in sample)
    for g in sample:
        _check_everywhere(g, no_axioms)


_LOC = re.compile(r"(?<=[\[ ])(x|y|z|a|b|c)(?=(?:_[vtsc])?[\],;])")


def _rename_locs(text: str, ren: dict[str, str]) -> str:
    def sub(m: re.Match) -> str:
        return ren.setdefault(m.group(1), f"L{len(ren)}")

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
    for tests in (SIZE4, _sample6(400), _sample_new(400)):
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


def test_diff_over_generated_proxy_and_atom_tests(tmp_path):
    """`ptxmm diff ptx-v6.0 ptx-v7.5 --gen` with proxy accesses: the MP whose data is read through
    the constant proxy holds only under ptx-v7.5 (6.0 has no proxies); the atom cycle agrees."""
    out = tmp_path / "d.json"
    r = CliRunner().invoke(main, ["diff", "ptx-v6.0", "ptx-v7.5", "--gen", "-j", "1", "--no-explain",
                                  "--cycle", "RfeLgAg PodRRAgCn Fre PodWW",
                                  "--cycle", "PodWW RfeRgAg RmwAgLg RfeLgAg PodRR Fre",
                                  "--json", str(out)])
    assert r.exit_code == 1, r.output
    import json

    data = json.loads(out.read_text())
    assert data["summary"]["total"] == 2 and data["summary"]["holds_only_in_m2"] == 1
    assert [x["name"] for x in data["holds_only_in_m2"]] == ["MP+po-rel.gpu+acq.gpu-po-const"]


def test_gen_never_overwrites_a_file_it_did_not_write(tmp_path):
    """Red team round 4, F20: a user's file where a test would go is refused, named, and left as it
    is; gen's own files (their marker line) and identical files are rewritten; --force overwrites."""
    from click.testing import CliRunner

    from ptxmm.cli.main import main

    def gen(*more):
        r = CliRunner().invoke(main, ["gen", "--cycle", "Rfe PodRR Fre PodWW", "-o", str(tmp_path), *more])
        return r.exit_code, r.output

    mine = tmp_path / "MP+pos.ptx"
    mine.write_text("my own test\n")
    code, out = gen()
    assert code == 2 and "MP+pos.ptx is already there and ptxmm gen did not write it" in out, out
    assert mine.read_text() == "my own test\n"
    assert gen("--force")[0] == 0 and mine.read_text().startswith("// ptxmm gen:")
    assert gen()[0] == 0  # its own file, from the run before
    assert gen("--format", "litmus")[0] == 0 and gen("--format", "litmus")[0] == 0  # same text
    (tmp_path / "MP+pos.litmus").write_text("PTX MP+pos\n(* mine *)\n")
    assert gen("--format", "litmus")[0] == 2
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / "manifest.json").write_text("{}")
    r = CliRunner().invoke(main, ["gen", "--families", "1", "-o", str(tmp_path / "fam")])
    assert r.exit_code == 2 and "manifest.json is already there" in r.output, r.output
    assert (tmp_path / "fam" / "manifest.json").read_text() == "{}"
