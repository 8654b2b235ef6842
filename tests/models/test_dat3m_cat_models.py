"""Dat3M's own PTX models (tests/data/dat3m-cat: cat/ptx-v6.0.cat and cat/ptx-v7.5.cat copied
unchanged from Dat3M, MIT licence beside them) load in ptxmm and give the verdicts of ptxmm's own
models on the whole Dat3M corpus (../shared/conformance/dat3m; skipped visibly without it).

They use Dat3M's base vocabulary (syncbar, sync_fence, sr, scta, vloc, the tags, and its implicit
stdlib.cat's po-loc); src/ptxmm/vocab.py gives each name Dat3M's meaning, and the model loader
adds the barrier semantics Dat3M's program encoder gives every model (cat/parser.py,
_PROGRAM_SEMANTICS)."""

from __future__ import annotations

import hashlib

import pytest
from support import ROOT

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.testing.runner import run_tests

CATS = ROOT / "tests" / "data" / "dat3m-cat"
# sha256 of the files as fetched from Dat3M (commit 30640123b88d, see README.md): unchanged copies
SHA256 = {"ptx-v6.0.cat": "f5f425f2b9d638a5ddc064b6075501d394c054d862e3d03e9fbe2b7750547edb",
          "ptx-v7.5.cat": "a2d5f7d98e3ff46b88618bfbbe8098d47024b40c3e8731b03352de44f7a28a99"}
AXIOMS = {"ptx-v6.0.cat": ["axiom-Coherence", "axiom-Coherence2", "axiom-FenceSC",
                           "axiom-Atomicity", "axiom-NoThinAir", "axiom-ScPerLocation",
                           "axiom-Causality"],
          "ptx-v7.5.cat": ["axiom-Coherence", "axiom-Coherence2", "axiom-FenceSC",
                           "axiom-Atomicity", "axiom-NoThinAir", "axiom-Causality"]}


@pytest.mark.parametrize("cat", sorted(SHA256))
def test_dat3m_cat_files_load_unchanged(cat):
    path = CATS / cat
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[cat]
    model = load_model(str(path))
    assert [a.name for a in model.axioms] == AXIOMS[cat]
    assert model.implicit == ("Barrier-progress", "Barrier-quorum")
    assert (CATS / "LICENCE").read_text().startswith("Copyright")


@pytest.mark.parametrize("cat", sorted(SHA256))
def test_dat3m_cat_checks_a_test(cat):
    """Message passing with release/acquire at gpu scope: forbidden, as under ptxmm's models."""
    text = ("PTX MP\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n"
            " st.weak x, 1 | ld.acquire.gpu r0, y ;\n st.release.gpu y, 1 | ld.weak r1, x ;\n"
            "exists (P1:r0 == 1 /\\ P1:r1 == 0)")
    prog = ptxmm.parse(text, "mp.litmus")
    assert ptxmm.check(prog, str(CATS / cat)).holds is False
    assert ptxmm.check(prog, cat.removesuffix(".cat")).holds is False
    relaxed = ptxmm.parse(text.replace("st.release.gpu", "st.relaxed.gpu"), "mp.litmus")
    assert ptxmm.check(relaxed, str(CATS / cat)).holds is True


# (Dat3M's cat file, ptxmm's model, which tests: all, or those the CSV rates under that model)
PAIRS = [("ptx-v7.5.cat", "ptx-v7.5", None), ("ptx-v7.5.cat", "ptx", None),
         ("ptx-v6.0.cat", "ptx-v6.0", "ptx-v6.0")]
# the default run compares one pair (~15 s), -m slow the other two (~50 s)
SAMPLED = [pytest.param(*p, id=f"{p[0]}-vs-{p[1]}", marks=[pytest.mark.slow] if k else [])
           for k, p in enumerate(PAIRS)]


@pytest.mark.parametrize("cat, model, rated", SAMPLED)
def test_dat3m_cat_agrees_with_ptxmm_models_on_the_corpus(cat, model, rated, dat3m):
    files = sorted(str(f) for f in (dat3m / "PTX").rglob("*.litmus"))
    assert len(files) == 189
    if rated:
        csv = [ln.split(",") for ln in (dat3m / "expected.csv").read_text().splitlines()
               if not ln.startswith("#")]
        col = 1 if rated == "ptx-v6.0" else 2  # path,ptx-v6.0,ptx-v7.5
        keep = {str(dat3m / row[0]) for row in csv if len(row) > col and row[col].strip()}
        files = [f for f in files if f in keep]
        assert len(files) == 87
    theirs = run_tests(files, str(CATS / cat), jobs=2)
    ours = run_tests(files, model, jobs=2)
    assert [r.error for r in theirs + ours if r.error] == []
    differ = [(a.name, a.holds, b.holds) for a, b in zip(theirs, ours) if a.holds != b.holds]
    assert differ == []
    assert all(r.holds is not None for r in theirs)
