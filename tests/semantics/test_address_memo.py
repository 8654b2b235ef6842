"""A computed address's elements asked of the oracle once per question up to the names of the reads
(semantics/memory.targets, ADDRESS_MEMO; issue 40): the threads of one kernel body ask one
question, and the event graph is the same as when every access asks its own — with and without the
read-only fold — on random launches of the gather (an index that may be out of bounds: the
condition "outside every buffer" names each thread's own read) and the histogram. A memo that
forgets to rename that condition back to the asking thread's read is killed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.launches import SETTINGS
from support.launches import gather as _gather
from support.launches import hist as _hist

from ptxmm.ir.layout import Layout
from ptxmm.semantics import builder, memory
from ptxmm.semantics.builder import build


def _graphs(prog, monkeypatch, fold: bool):
    monkeypatch.setattr(builder, "READ_ONLY_FOLD", fold)
    monkeypatch.setattr(memory, "ADDRESS_MEMO", False)
    plain = build(prog)
    monkeypatch.setattr(memory, "ADDRESS_MEMO", True)
    return build(prog), plain


def _same(a, b) -> None:
    assert (a.events, a.paths, a.edges, a.init, a.written) == (b.events, b.paths, b.edges, b.init, b.written)


@settings(max_examples=10, **SETTINGS)
@given(st.lists(st.integers(-3, 6), min_size=1, max_size=4), st.booleans())
def test_gather_graphs_are_the_same(monkeypatch, idx, fold):
    _same(*_graphs(_gather(idx), monkeypatch, fold))


@settings(max_examples=8, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=1, max_size=5), st.booleans())
def test_histogram_graphs_are_the_same(monkeypatch, vals, fold):
    _same(*_graphs(_hist(vals), monkeypatch, fold))


def test_one_body_asks_one_question(monkeypatch):
    asked = []
    orig = Layout.targets

    def counting(self, addr, known, width, ins):
        asked.append(addr)
        return orig(self, addr, known, width, ins)

    monkeypatch.setattr(Layout, "targets", counting)
    monkeypatch.setattr(builder, "READ_ONLY_FOLD", False)
    prog = _gather([0, 1, 2, 5, 3, 1])
    build(prog)
    assert len(asked) == 1  # six threads, one question (the first build only: no fold)
    monkeypatch.setattr(memory, "ADDRESS_MEMO", False)
    asked.clear()
    build(prog)
    assert len(asked) == 6


def test_a_memo_that_does_not_rename_back_is_caught(monkeypatch):
    """The mutant returns the condition "outside every buffer" in the first thread's names: the
    second thread's out-of-bounds path would assume something of the first thread's read."""
    prog = _gather([1, 4])
    memo, plain = _graphs(prog, monkeypatch, False)
    _same(memo, plain)
    orig = memory.substitute
    monkeypatch.setattr(memory, "substitute", lambda e, f: orig(e, lambda x: x) if f.__name__ == "__getitem__"
                        else orig(e, f))
    mutant = build(prog)
    assert (mutant.paths, mutant.events) != (plain.paths, plain.events)
