"""Symmetry breaking over interchangeable threads (ptxmm.semantics.symmetry, the Z3 engine's
``symmetry=True``) and the read-only value fold of kernel builds (builder._read_only) change no
answer: the same status, verdict, outcomes and findings as the plain encoding (and as brute force
where the launch is small), on random launches of two kernels — the histogram (commuting atomicAdds
on a bin chosen by loaded data) and tests/data/symmetry/symmetry_mixed.cu, whose per-thread mode picks
what the reduction must NOT merge: a plain store to the atomic location, an increment that differs
by thread, an acquire RMW read by another thread's release, two counters incremented in orders
that may differ. A broken constraint (ordering every key position, not only the first) is killed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.launches import SETTINGS
from support.launches import hist as _hist
from support.launches import mixed as _mixed

import ptxmm
from ptxmm.engines.z3 import symmetry as z3sym
from ptxmm.ir.stops import StopKind
from ptxmm.queries import checker
from ptxmm.queries.sites import observables
from ptxmm.semantics import builder, symmetry
from ptxmm.semantics.builder import build


def _answer(res) -> tuple:
    # (as sets of (observable, value): the fold leaves unwritten elements to the condition's
    # observables, which the report lists after the written ones)
    outs = sorted(tuple(sorted(o.outcome.values)) for o in res.outcomes)
    # a site names one thread that stops there (the solver's pick); a race both accesses, by line
    # and text (the fold renumbers events)
    finds = sorted((f.kind.value, f.name, tuple(sorted((e.line, e.text) for e in f.events))
                    if f.kind.value == "race" else tuple((e.line, e.text) for e in f.events[:1]))
                   for f in res.findings)
    return res.status, res.holds, outs, finds, res.liveness


def _check(prog, monkeypatch, sym: bool, engine: str = "z3"):
    """``sym``: both shortcuts (the read-only fold and symmetry breaking), else neither (each
    call sets both: the monkeypatch is shared by a property test's examples)."""
    monkeypatch.setattr(checker, "SYMMETRY", sym)
    monkeypatch.setattr(builder, "READ_ONLY_FOLD", sym)
    return ptxmm.check(prog, engine=engine)


def _same(reduced: tuple, plain: tuple) -> None:
    """Equal answers. The plain build may observe more elements: a kernel's outcome is the final
    value of every element some event writes, and without the fold a write on a path the initial
    data rules out counts; such an element must keep its initial value (0) in every outcome."""
    extra = {k for o in plain[2] for k, _ in o} - {k for o in reduced[2] for k, _ in o}
    assert all(v == 0 for o in plain[2] for k, v in o if k in extra)
    trimmed = sorted(tuple(kv for kv in o if kv[0] not in extra) for o in plain[2])
    assert (*reduced[:2], reduced[2], *reduced[3:]) == (*plain[:2], trimmed, *plain[3:])


def _agree(prog, monkeypatch, brute: bool = False) -> tuple:
    plain = _answer(_check(prog, monkeypatch, False))
    reduced = _answer(_check(prog, monkeypatch, True))
    _same(reduced, plain)
    if brute:
        _same(_answer(_check(prog, monkeypatch, True, "brute")), plain)
    return plain


# -- which threads are interchangeable ------------------------------------------------------------
def _classes(prog):
    eg = build(prog)
    return [c.threads for c in symmetry.classes(eg, observables(eg))]


def test_threads_with_the_same_data_form_a_class_and_others_stay_apart():
    assert _classes(_hist([0, 1, 0, 0, 2])) == [(0, 2, 3)]
    assert _classes(_hist([0, 1, 2, 3])) == []  # every thread distinguishable by its bin


def test_what_the_reduction_must_not_merge_stays_apart():
    assert _classes(_mixed([2, 2, 2])) == []  # atomicAdd(c, threadIdx.x): increments differ
    assert _classes(_mixed([0, 1, 3, 4])) == []  # every thread does something else
    assert _classes(_mixed([1, 1, 3, 3, 4])) == [(0, 1), (2, 3)]  # plain stores; acquire RMWs


def test_the_read_only_fold_leaves_one_event_per_increment():
    eg = build(_hist([0, 1, 0, 5]))
    rmw_writes = [e for e in eg.events if e.kind == "W" and "RMW_W" in e.tags]
    assert sorted(e.loc for e in rmw_writes) == ["hist[0]", "hist[0]", "hist[1]"]
    assert not any(p.stop and p.stop.kind == StopKind.BOUNDS for ps in eg.paths for p in ps)  # no split


def test_a_written_buffer_is_not_folded():
    """mode 1 writes c: a later load of c would not be folded; the loads of mode[] are."""
    eg = build(_mixed([3, 1]))
    reads = [e for e in eg.events if e.kind == "R" and e.thread >= 0]
    assert {e.loc for e in reads} >= {"c[0]"}


# -- same answers ---------------------------------------------------------------------------------
def test_histogram_with_one_bin_agrees_and_is_decided(monkeypatch):
    status, holds, outs, finds, _ = _agree(_hist([0, 0, 0, 0, 0]), monkeypatch)
    assert status == "ok" and holds is False  # the file's forall names hist[0] == 1
    assert dict(outs[0]) == {"hist[0]": 5, "hist[1]": 0, "hist[2]": 0, "hist[3]": 0}
    assert [f[0] for f in finds] == ["assert-fails"]  # before < 2 fails for the third increment


@settings(max_examples=12, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=5))
def test_histogram_launches_agree_with_the_plain_encoding(monkeypatch, vals):
    _agree(_hist(vals), monkeypatch, brute=len(vals) <= 3)


@settings(max_examples=12, **SETTINGS)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=4))
def test_mixed_launches_agree_with_the_plain_encoding(monkeypatch, modes):
    _agree(_mixed(modes), monkeypatch)


@pytest.mark.parametrize("modes", [[0, 0], [0, 0, 0], [1, 1, 0], [3, 3, 4], [4, 3, 3]])
def test_mixed_fixed_launches_agree(monkeypatch, modes):
    _agree(_mixed(modes), monkeypatch)


def test_a_broken_constraint_is_caught(monkeypatch):
    """The mutant orders the class by EVERY key position (c and d), not only the first one each
    thread executes: "a == b" could then never fail, and the assertion finding is lost."""
    plain = _answer(_check(_mixed([0, 0]), monkeypatch, False))
    assert ("assert-fails" in [f[0] for f in plain[3]])

    def every_position(classes, ex, co, lg):
        import z3
        out = []
        for c in classes:
            for i in range(len(c.threads) - 1):
                for a, b in zip(c.keys[i], c.keys[i + 1]):
                    g = co.guard(b, a)
                    if g is not False:
                        out.append(z3.Not(lg.z3(g)))
        return out

    monkeypatch.setattr("ptxmm.engines.z3.problem.breaking", every_position)
    mutant = _answer(_check(_mixed([0, 0]), monkeypatch, True))
    assert "assert-fails" not in [f[0] for f in mutant[3]]
    with pytest.raises(AssertionError):
        _same(mutant, plain)
    monkeypatch.setattr("ptxmm.engines.z3.problem.breaking", z3sym.breaking)
    _same(_answer(_check(_mixed([0, 0]), monkeypatch, True)), plain)


def test_a_fold_of_a_written_location_is_caught(monkeypatch):
    """The mutant folds every location read, written or not: mode 3's load of flag, which mode 4
    wrote before its release RMW, would read 0 after synchronizing, and the assertion would fail."""
    plain = _answer(_check(_mixed([3, 4]), monkeypatch, False))
    assert "assert-fails" not in [f[0] for f in plain[3]]

    def every_read(eg):
        return {e.loc: eg.events[eg.init[e.loc]].value.v for e in eg.events
                if e.kind == "R" and e.thread >= 0 and e.loc in eg.init}

    monkeypatch.setattr(builder, "_read_only", every_read)
    mutant = _answer(_check(_mixed([3, 4]), monkeypatch, True))
    assert "assert-fails" in [f[0] for f in mutant[3]]
