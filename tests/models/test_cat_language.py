"""The cat dialect and per-CTA shared memory."""

from __future__ import annotations

from support import ROOT

import ptxmm

MP = ROOT / "examples" / "mp-release-acquire.ptx"


def test_let_rec_observation_matches_closure(tmp_path):
    """A model whose observation is written with `let rec` (as Dat3M-6.0 does) gives the same
    outcomes as ptx.cat, which writes it with +."""
    text = (ROOT / "models" / "ptx.cat").read_text().replace(
        'include "ptx-common.cat"',
        f'include "{ROOT / "models" / "ptx-common.cat"}"\n'
        "let rec obs-r = ([W] ; rf & ms ; [R]) | (obs-r ; rmw ; obs-r)\n"
        "let obs = obs-r")
    m = tmp_path / "rec.cat"
    m.write_text(text)
    for f in (MP, ROOT / "examples" / "classic" / "WRC-rel-acq.ptx",
              ROOT / "tests" / "litmus" / "isa" / "S9-mp-atom.ptx"):
        p = ptxmm.load(f)
        assert ptxmm.check(p, str(m)).outcome_set == ptxmm.check(p, "ptx").outcome_set


def test_model_by_path_and_sc():
    p = ptxmm.load(ROOT / "examples" / "classic" / "SB-weak.ptx")
    assert ptxmm.check(p, str(ROOT / "models" / "sc.cat")).holds is False
    assert ptxmm.check(p, "ptx").holds is True


def test_shared_memory_is_per_cta():
    src = """.shared .u32 s = 0;
.thread T0 .cta 0 { st.shared.u32 [s], 1; }
.thread T1 .cta 1 { ld.shared.u32 %r0, [s]; }
.thread T2 .cta 0 { ld.relaxed.cta.shared.u32 %r1, [s]; }
exists (T1:%r0 == 1)
"""
    r = ptxmm.check(ptxmm.parse(src))
    assert r.holds is False  # CTA 1 has its own copy of s, never written
    assert {o.outcome["T2:%r1"] for o in r.outcomes} == {0, 1}


def test_parsed_model_cache_follows_edits(tmp_path, monkeypatch):
    """The on-disk cache of parsed models is keyed by the text of every file the model reads:
    editing an included file is seen at once."""
    from ptxmm.cat.parser import _load, load_model

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "lib.cat").write_text("let r = po\n")
    model = tmp_path / "m.cat"
    model.write_text('include "lib.cat"\nacyclic r as A\n')
    for expected in (["A"], ["B", "A"]):  # included statements come first
        _load.cache_clear()  # the in-process cache of Model objects, by resolved path
        assert [s.name for s in load_model(str(model)).axioms] == expected
        (tmp_path / "lib.cat").write_text("let r = po\nacyclic rf as B\n")
    assert list((tmp_path / "cache" / "ptxmm" / "models").glob("*.pickle"))
