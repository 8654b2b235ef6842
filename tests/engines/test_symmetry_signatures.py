"""Issue 40 (the neighbour exchange at 1,024 threads): ``symmetry.SIGNATURES`` — a thread is
compared only with the representatives of its signature (``symmetry._signature``) — finds the same
classes as comparing it with every representative before it, on random launches of the histogram
and of tests/data/symmetry/symmetry_mixed.cu (whose modes make threads (not) interchangeable), and
on the exchange, whose threads all stay apart."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT
from support.launches import SETTINGS
from support.launches import hist as _hist
from support.launches import mixed as _mixed

import ptxmm
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.queries.sites import observables
from ptxmm.semantics import symmetry
from ptxmm.semantics.builder import build


def _both(prog, monkeypatch) -> tuple:
    eg = build(prog)
    obs = observables(eg)
    monkeypatch.setattr(symmetry, "SIGNATURES", True)
    fast = symmetry.classes(eg, obs)
    monkeypatch.setattr(symmetry, "SIGNATURES", False)
    return fast, symmetry.classes(eg, obs)


@settings(max_examples=15, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=6))
def test_histogram_classes_are_the_same(monkeypatch, vals):
    fast, plain = _both(_hist(vals), monkeypatch)
    assert fast == plain


@settings(max_examples=15, **SETTINGS)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=6))
def test_mixed_classes_are_the_same(monkeypatch, modes):
    fast, plain = _both(_mixed(modes), monkeypatch)
    assert fast == plain


def test_some_launches_have_classes(monkeypatch):
    """The comparisons above compare something: classes found, by both."""
    fast, plain = _both(_hist([0, 1, 0, 0, 2, 1]), monkeypatch)
    assert fast == plain and [c.threads for c in fast] == [(0, 2, 3), (1, 5)]
    fast, plain = _both(_mixed([1, 1, 3, 3, 4]), monkeypatch)
    assert fast == plain and [c.threads for c in fast] == [(0, 1), (2, 3)]


def test_the_exchange_compares_each_thread_with_none(monkeypatch):
    """The exchange at 16 threads: no two threads swap (each writes its own observed out[t]);
    with signatures no pair is compared at all, without them every pair."""
    prog = ptxmm.load(ROOT / "examples" / "kernels" / "syncthreads-exchange.ptx",
                      kernel=KernelArgs(launch="exchange<<<1, 16>>>(int out[16])", forall="out[0] == 2"))
    calls = []
    real = symmetry._swappable

    def spy(*a):
        calls.append(a[-2:])
        return real(*a)

    monkeypatch.setattr(symmetry, "_swappable", spy)
    fast, plain = _both(prog, monkeypatch)
    assert fast == plain == ()
    assert len(calls) == 16 * 15 // 2
