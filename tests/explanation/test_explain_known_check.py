"""explain's shortcuts (issue 41: explain in seconds) answer as the plain path does:

- the missing ordering asks the fix search for its cheapest solution alone
  (explanation/fix.CHEAPEST_STOP): the search stops at the first candidate dearer than a solution
  found, and that solution is the full search's first; on random litmus tests and bundled ones;
- ``ptxmm explain`` of a kernel hands the check it made for the findings to the explanation
  (explanation/explain.REUSE_CHECK: its graph; REUSE_VERDICT: its verdict where it shows the target
  forbidden); on random launches of the histogram (its condition holding or not) and on bundled
  kernels of both verdicts, through the command line too.

Each switch off is the plain path; the mutants of each are killed here."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT
from support.launches import SETTINGS
from support.launches import hist as _hist

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation import explain as explain_mod
from ptxmm.explanation import fix
from ptxmm.explanation.explain import explain
from ptxmm.explanation.findings import findings_checked
from ptxmm.explanation.targets import target_of


def _plain(x) -> dict:
    """An explanation's JSON without its timings."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(w) for k, w in v.items() if k != "time_s"}
        if isinstance(v, list):
            return [strip(w) for w in v]
        return v

    return strip(x.to_json())


# ----- the cheapest solution alone ------------------------------------------------------------

SEMS = {"ld": ["", ".relaxed.gpu", ".acquire.gpu"], "st": ["", ".relaxed.gpu", ".release.gpu"]}


@st.composite
def litmus(draw) -> str:
    """Two threads of one to three loads and stores of x and y, of random semantics; the
    condition: some loaded values."""
    lines = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    conds = []
    for t in range(2):
        body = []
        for i in range(draw(st.integers(1, 3))):
            loc = draw(st.sampled_from(["x", "y"]))
            if draw(st.booleans()):
                body.append(f"ld{draw(st.sampled_from(SEMS['ld']))}.global.u32 %r{i}, [{loc}];")
                conds.append(f"T{t}:%r{i} == {draw(st.integers(0, 1))}")
            else:
                sem, v = draw(st.sampled_from(SEMS["st"])), draw(st.integers(1, 2))
                body.append(f"st{sem}.global.u32 [{loc}], {v};")
        lines.append(f".thread T{t} .cta {draw(st.integers(0, 1)) if t else 0} {{ " + " ".join(body) + " }")
    if not conds:
        lines[-1] = lines[-1].replace("{ ", "{ ld.global.u32 %r9, [x]; ", 1)
        conds.append("T1:%r9 == 0")
    lines.append("exists (" + " && ".join(conds[:3]) + ")")
    return "\n".join(lines)


def _first(prog, monkeypatch, stop: bool, max_size: int) -> tuple:
    monkeypatch.setattr(fix, "CHEAPEST_STOP", stop)
    r = fix.search(prog, load_model("ptx"), target_of(prog, None), bound=60, max_size=max_size,
                   budget_s=None, cheapest=True)
    return (r.solutions[0].text, r.solutions[0].cost) if r.solutions else None, r.already, r.checked


@settings(max_examples=10, **SETTINGS)
@given(litmus(), st.integers(1, 2))
def test_the_cheapest_solution_is_the_full_searchs_first(monkeypatch, text, max_size):
    prog = ptxmm.parse(text)
    first, already, checked = _first(prog, monkeypatch, True, max_size)
    full, already2, checked2 = _first(prog, monkeypatch, False, max_size)
    assert (first, already) == (full, already2) and checked <= checked2


@pytest.mark.parametrize("name", ["classic/MP-relaxed.ptx", "classic/SB-relaxed.ptx",
                                  "classic/LB-relaxed.ptx", "kernels/mp-relaxed-flag.ptx"])
def test_explain_says_the_same_with_the_stop(monkeypatch, name):
    prog = ptxmm.load(ROOT / "examples" / name)
    monkeypatch.setattr(fix, "CHEAPEST_STOP", False)
    plain = _plain(explain(prog))
    monkeypatch.setattr(fix, "CHEAPEST_STOP", True)
    assert _plain(explain(prog)) == plain


def test_the_stop_checks_fewer_candidates(monkeypatch):
    """MP with relaxed flag accesses: the cheapest fix is found among the first candidates, and
    the search stops past its cost (the full search checks every candidate up to its bound)."""
    prog = ptxmm.load(ROOT / "examples" / "classic" / "MP-relaxed.ptx")
    first, _, checked = _first(prog, monkeypatch, True, 2)
    full, _, checked_all = _first(prog, monkeypatch, False, 2)
    assert first == full and first is not None
    assert checked < checked_all


def test_a_stop_before_any_solution_is_caught(monkeypatch):
    """The mutant stops at the first dearer candidate even when nothing is found yet: MP's
    missing ordering would be lost."""
    prog = ptxmm.load(ROOT / "examples" / "classic" / "MP-relaxed.ptx")
    plain = _plain(explain(prog))
    assert plain["missing"]
    monkeypatch.setattr(fix, "_past_cheapest", lambda found, cs, rank: sum(c.cost for c in cs) > min(
        (s.cost for s in found), default=0))
    assert _plain(explain(prog)) != plain


# ----- the check's graph and verdict reused ---------------------------------------------------


def _both(prog, monkeypatch, reuse: bool) -> tuple:
    monkeypatch.setattr(explain_mod, "REUSE_CHECK", reuse)
    monkeypatch.setattr(explain_mod, "REUSE_VERDICT", reuse)
    fx, res = findings_checked(prog, "ptx")
    return [f.to_json() for f in fx], _plain(explain(prog, "ptx", checked=res))


@settings(max_examples=6, **SETTINGS)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=3))
def test_histogram_explained_the_same_with_the_check_reused(monkeypatch, vals):
    prog = _hist(vals)
    assert _both(prog, monkeypatch, True) == _both(prog, monkeypatch, False)


def _asked(monkeypatch) -> list:
    """The verdict queries explain asks (check calls with the condition only), recorded."""
    from ptxmm.queries import checker

    asked: list = []
    orig = checker.check

    def spy(*a, **kw):
        if kw.get("properties") == ("condition",):
            asked.append(a[0])
        return orig(*a, **kw)

    monkeypatch.setattr("ptxmm.queries.checker.check", spy)
    return asked


@pytest.mark.parametrize("vals, forbidden", [([0, 2, 2, 3], True), ([0, 1], False)])
def test_a_forbidden_target_asks_no_verdict_query(monkeypatch, vals, forbidden):
    """The histogram's condition holds at its bundled launch's values: the check's enumeration
    shows the target (its negation) forbidden, and explain asks nothing again; at other values
    the target is allowed and its witness comes from the verdict query, as before."""
    prog = _hist(vals)
    monkeypatch.setattr(explain_mod, "REUSE_CHECK", True)
    monkeypatch.setattr(explain_mod, "REUSE_VERDICT", True)
    _, res = findings_checked(prog, "ptx")
    asked = _asked(monkeypatch)
    x = explain(prog, "ptx", checked=res)
    assert x.allowed is not forbidden
    assert (asked == []) is forbidden


def test_a_verdict_read_the_wrong_way_is_caught(monkeypatch):
    """The mutant takes any decided check as showing the target forbidden: an allowed target
    would be explained as forbidden."""
    prog = _hist([0, 1])
    plain = _both(prog, monkeypatch, False)
    monkeypatch.setattr(explain_mod, "forbidden_by",
                        lambda checked, prog, m, unroll: checked is not None and checked.holds is not None)
    assert _both(prog, monkeypatch, True) != plain


@pytest.mark.parametrize("name", ["mp-relaxed-flag.ptx", "mp-block-scope.ptx"])
def test_the_command_line_says_the_same(monkeypatch, name):
    from ptxmm.cli.main import main as cli
    from ptxmm.engines.z3 import capi, problem

    f = str(ROOT / "examples" / "kernels" / name)
    outs = []
    for reuse in (False, True):
        # each run from a fresh Z3 context: which allowed execution Z3 returns as a finding's
        # witness follows the context's history (the tests this worker ran before), and either
        # is right; the same start makes the two runs comparable row by row
        problem._pool().clear()
        capi.fresh_thread_context()
        monkeypatch.setattr(explain_mod, "REUSE_CHECK", reuse)
        monkeypatch.setattr(explain_mod, "REUSE_VERDICT", reuse)
        r = CliRunner().invoke(cli, ["explain", "--json", f])
        assert r.exit_code in (0, 1), r.output
        outs.append(_plain(_Doc(json.loads(r.output))))
    assert outs[0] == outs[1]


class _Doc:
    def __init__(self, doc) -> None:
        self.doc = doc

    def to_json(self):
        return self.doc


# ----- the fenced candidates built with the original's read-only fold --------------------------


def _fenced_graphs_agree(prog, monkeypatch, limit: int = 8) -> int:
    """Every single inserted fence's graph, built with the original's fold and whole: the same."""
    from ptxmm.explanation import fixjudge
    from ptxmm.explanation.fix import apply, single_changes
    from ptxmm.explanation.fixjudge import Judge
    from ptxmm.explanation.targets import with_target
    from ptxmm.semantics.builder import build

    monkeypatch.setattr(fixjudge, "FOLD_HINT", True)
    t = target_of(prog, None)
    judge = Judge(prog, load_model("ptx"), t)
    fences = [c for c in single_changes(prog) if c.kind == "fence"]
    fences = fences[::max(1, len(fences) // limit)][:limit]  # spread over the threads and places
    for c in fences:
        tprog = with_target(apply(prog, (c,))[0], t)
        hinted, whole = judge.fenced_graph(tprog), build(tprog)
        assert (hinted.events, hinted.paths, hinted.edges, hinted.written, hinted.waits, hinted.cut_paths,
                hinted.awaits) == (whole.events, whole.paths, whole.edges, whole.written, whole.waits,
                                   whole.cut_paths, whole.awaits), c.text
    return len(fences) if judge._fold is not None else 0


@pytest.mark.parametrize("name, limit", [("real/cub-tile-state-unpacked-no-fence.ptx", 6),
                                         ("lookback-two-words-no-fence.ptx", 12),
                                         ("real/cub-tile-state-packed.ptx", 6)])
def test_fenced_graphs_with_the_fold_are_the_built_ones(monkeypatch, name, limit):
    """Fences inserted into spin loops too (one ends the loop's await reduction: the loop is
    unrolled, and its reads stay those of the same locations)."""
    assert _fenced_graphs_agree(ptxmm.load(ROOT / "examples" / "kernels" / name), monkeypatch, limit) > 0


@settings(max_examples=5, **SETTINGS)
@given(st.lists(st.integers(-1, 4), min_size=2, max_size=3))
def test_fenced_histogram_graphs_with_the_fold_are_the_built_ones(monkeypatch, vals):
    _fenced_graphs_agree(_hist(vals), monkeypatch, limit=6)


def test_a_fold_of_another_program_is_caught(monkeypatch):
    """The mutant builds each fenced program with an empty fold (its read-only inputs' loads
    read the solver's values, not their initial ones): the graphs differ from the built ones."""
    from ptxmm.explanation import fixjudge
    from ptxmm.semantics.builder import Fold

    prog = ptxmm.load(ROOT / "examples" / "kernels" / "lookback-two-words-no-fence.ptx")
    monkeypatch.setattr(fixjudge.Judge, "fenced_graph", lambda self, tprog: fixjudge.build_with_fold(
        tprog, Fold((), self._fold.written, self._fold.waits), unroll=self.unroll))
    with pytest.raises(AssertionError):
        _fenced_graphs_agree(prog, monkeypatch)
