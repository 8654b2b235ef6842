"""A kernel's stop sites found by the outcomes' witnesses (queries/sites.REUSE_WITNESSES, issue 40):
a site some listed outcome's witness already reaches asks no solver query of its own, and the
findings are the same as when every site is one query — and as brute force — on random launches
of the histogram (assertion failures), the gather (out-of-bounds reads) and the symmetry kernel
(assertions on values other threads wrote). A reuse that does not look at the witness's paths is
killed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.launches import SETTINGS
from support.launches import gather as _gather
from support.launches import hist as _hist
from support.launches import mixed as _mixed

import ptxmm
from ptxmm.queries import sites


def _answer(res) -> tuple:
    # a site names one thread that stops there (a witness's pick): compared by kind and line
    finds = sorted((f.kind.value, f.name, tuple(sorted((e.line, e.text) for e in f.events))
                    if f.kind.value == "race" else tuple((e.line, e.text) for e in f.events[:1]))
                   for f in res.findings)
    return res.status, res.holds, res.outcome_set, finds, res.liveness


def _check(prog, monkeypatch, reuse: bool, engine: str = "z3"):
    """A check with the site query's reuse on or off; the sites are asked by the site query itself
    (checker.SITES_WITH_RACES off: its joint query would answer a race-free kernel's sites first)."""
    from ptxmm.queries import checker

    monkeypatch.setattr(checker, "SITES_WITH_RACES", False)
    monkeypatch.setattr(sites, "REUSE_WITNESSES", reuse)
    return ptxmm.check(prog, engine=engine)


def _agree(prog, monkeypatch, brute: bool) -> tuple:
    plain = _answer(_check(prog, monkeypatch, False))
    assert _answer(_check(prog, monkeypatch, True)) == plain
    if brute:
        assert _answer(_check(prog, monkeypatch, True, "brute")) == plain
    return plain


@settings(max_examples=10, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=5))
def test_histogram_sites_agree(monkeypatch, vals):
    _agree(_hist(vals), monkeypatch, brute=len(vals) <= 3)


@settings(max_examples=8, **SETTINGS)
@given(st.lists(st.integers(-2, 5), min_size=1, max_size=3))
def test_gather_sites_agree(monkeypatch, idx):
    _agree(_gather(idx), monkeypatch, brute=len(idx) <= 2)


@settings(max_examples=8, **SETTINGS)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=3))
def test_mixed_sites_agree(monkeypatch, modes):
    _agree(_mixed(modes), monkeypatch, brute=False)


def _site_queries(monkeypatch) -> list:
    """The goals of Z3Problem.find calls made from the site query, recorded."""
    asked: list = []
    orig = sites.site_findings

    def counting(eg, pb, *a, **kw):
        find = pb.find

        def spy(goal=None, negate=False):
            asked.append(goal)
            return find(goal, negate)

        pb.find = spy
        try:
            return orig(eg, pb, *a, **kw)
        finally:
            del pb.find

    monkeypatch.setattr(sites, "site_findings", counting)
    return asked


@pytest.mark.parametrize("reuse, queries", [(True, 0), (False, 1)])
def test_a_site_every_outcome_reaches_asks_no_query(monkeypatch, reuse, queries):
    """Five increments of one bin: every execution's third increment fails `before < 2`, so the
    one outcome's witness reaches the site."""
    asked = _site_queries(monkeypatch)
    res = _check(_hist([0, 0, 0, 0, 0]), monkeypatch, reuse)
    assert [str(f.kind) for f in res.findings] == ["assert-fails"]
    assert len(asked) == queries
    assert isinstance(res.findings[0].witness.paths, tuple)


def test_a_site_no_witness_reaches_is_still_asked(monkeypatch):
    """One increment per bin: no witness fails the assertion, and the query says none can."""
    asked = _site_queries(monkeypatch)
    res = _check(_hist([0, 1, 2, 3]), monkeypatch, True)
    assert res.findings == () and len(asked) == 1


def test_a_reuse_blind_to_the_paths_is_caught(monkeypatch):
    """The mutant takes the first witness for every site, whatever path its threads took: the
    histogram's assertion, which holds with one increment per bin, would be reported failing."""
    plain = _answer(_check(_hist([0, 1, 2, 3]), monkeypatch, False))
    assert plain[3] == []

    monkeypatch.setattr(sites, "_reaches", lambda paths, where: True)
    mutant = _answer(_check(_hist([0, 1, 2, 3]), monkeypatch, True))
    assert [f[0] for f in mutant[3]] == ["assert-fails"]
    assert mutant != plain
