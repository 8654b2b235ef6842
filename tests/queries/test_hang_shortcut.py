"""A check whose kernel cannot hang — no loop in any thread, no barrier wait met by its build —
answers liveness "terminates" without building the liveness graph (queries/hangs.LOOP_FREE_SHORTCUT,
issue 40). Where the shortcut applies, that graph has no path that hangs and nothing the unrolling
cut (under a fair and an unfair progress model, whose graph has every prefix of a path); the
checks agree with the shortcut off, on the bundled kernels and on random launches; a shortcut blind
to the waits or to the loops loses a hang and is killed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.queries import hangs
from ptxmm.queries.hangs import Progress, cannot_hang, liveness_graph
from ptxmm.semantics.builder import build

KDIR = ROOT / "examples" / "kernels"
DATA = ROOT / "tests" / "data" / "kernels"
CANNOT = [KDIR / f"{n}.ptx" for n in ("histogram", "gather-oob", "scatter-race", "seqlock",
                                      "syncthreads-exchange-no-barrier")] + \
    [DATA / f"{n}.ptx" for n in ("clock_pair", "const_table", "no_wait", "oob")]
MAY = [KDIR / f"{n}.ptx" for n in ("exchange-off-by-one", "syncthreads-exchange", "mp-relaxed-flag",
                                   "last-block-reset")] + \
    [DATA / f"{n}.ptx" for n in ("cluster_wait", "trap_bar", "assert_syncwarp", "timed_wait", "exit_bar")]


def _hanging(eg) -> int:
    return sum(p.kind in ("stuck", "blocked") for ps in eg.paths for p in ps)


@pytest.mark.parametrize("path", CANNOT + MAY, ids=lambda p: p.stem)
def test_the_shortcut_applies_only_where_no_path_can_hang(path):
    prog = ptxmm.load(path)
    applies = cannot_hang(build(prog))
    assert applies == (path in CANNOT)
    for progress in ("fair", "unfair"):
        lg = liveness_graph(prog, 2, Progress.parse(progress))
        if applies:
            assert _hanging(lg) == 0 and lg.undecided == ()
    if not applies and path.stem != "timed_wait":  # its loop is timed: undecided, no hang path
        assert _hanging(liveness_graph(prog, 2, Progress.parse("fair"))) > 0


def _answer(res) -> tuple:
    finds = sorted((f.kind.value, tuple((e.line, e.text) for e in f.events[:1])) for f in res.findings)
    return res.status, res.holds, res.outcome_set, finds, res.liveness, res.liveness_why


def _check(prog, monkeypatch, shortcut: bool, **kw):
    monkeypatch.setattr(hangs, "LOOP_FREE_SHORTCUT", shortcut)
    return _answer(ptxmm.check(prog, **kw))


@pytest.mark.parametrize("path", CANNOT + MAY[:3], ids=lambda p: p.stem)
def test_bundled_kernels_agree_with_the_liveness_graph(monkeypatch, path):
    prog = ptxmm.load(path)
    assert _check(prog, monkeypatch, True) == _check(prog, monkeypatch, False)


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(-1, 4), min_size=1, max_size=4), st.sampled_from(["fair", "unfair", "obe"]))
def test_random_histograms_agree(monkeypatch, vals, progress):
    n = len(vals)
    prog = ptxmm.load(KDIR / "histogram.ptx",
                      kernel=f"histogram<<<1, {n}>>>(int in[{n}] = {{{', '.join(map(str, vals))}}}, "
                             "unsigned hist[4])")
    on = _check(prog, monkeypatch, True, progress_model=progress)
    assert on == _check(prog, monkeypatch, False, progress_model=progress)
    assert on[4] == "terminates"


@pytest.mark.parametrize("path, blind", [(DATA / "cluster_wait.ptx", "waits"),
                                         (KDIR / "spin-hoisted.ptx", "loops")])
def test_a_blind_shortcut_is_caught(monkeypatch, path, blind):
    """The mutants: one ignores the barrier waits (a cluster wait no thread can pass hangs), one the
    loops (a spin whose load the compiler hoisted hangs): each reports "terminates"."""
    prog = ptxmm.load(path)
    plain = _check(prog, monkeypatch, False)
    assert plain[4] == "hangs"
    if blind == "waits":
        monkeypatch.setattr(hangs, "cannot_hang", lambda eg: True if eg.waits else cannot_hang(eg))
    else:
        monkeypatch.setattr(hangs, "cannot_hang", lambda eg: not eg.waits)
    assert _check(prog, monkeypatch, True)[4] == "terminates"
