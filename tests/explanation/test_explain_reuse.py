"""``explain(..., checked=res)`` (issue 41: explain of a kernel re-asked the verdict its findings'
check had answered): a check of the same program, model and bound that says the explained outcome
is forbidden spares explain's verdict query (explanation/explain.REUSE_VERDICT); every other
verdict is asked again. The explanation is the same with and without it, for each quantifier
(``exists``, ``~exists``, ``forall``) and both verdicts, and ``ptxmm explain --json`` of a kernel
prints the same; a reuse that misreads a quantifier or takes an allowed verdict is killed here."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from support import ROOT

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.cli.main import main
from ptxmm.explanation import explain as explain_mod
from ptxmm.explanation.explain import explain, forbidden_by
from ptxmm.queries import checker

MP = (ROOT / "examples" / "classic" / "MP-fence-acqrel.ptx").read_text()  # forbidden
MP_RELAXED = (ROOT / "examples" / "classic" / "MP-relaxed.ptx").read_text()  # allowed
COND = "exists (T1:%r0 == 1 && T1:%r1 == 0)"


def _with(text: str, cond: str) -> ptxmm.Program:
    assert COND in text
    text = re.sub(r"^\.expect .*$", "", text, flags=re.M)  # the expectation of the original condition
    return ptxmm.parse(text.replace(COND, cond), "t.ptx")


# (program, whether the explained target — the condition, its negation for forall — is reachable)
CASES = {
    "exists-forbidden": (lambda: _with(MP, COND), False),
    "exists-allowed": (lambda: _with(MP_RELAXED, COND), True),
    "not-exists-holds": (lambda: _with(MP, "~" + COND), False),
    "not-exists-fails": (lambda: _with(MP_RELAXED, "~" + COND), True),
    "forall-holds": (lambda: _with(MP, "forall (!(T1:%r0 == 1 && T1:%r1 == 0))"), False),
    "forall-fails": (lambda: _with(MP_RELAXED, "forall (!(T1:%r0 == 1 && T1:%r1 == 0))"), True),
    "forall-kernel": (lambda: ptxmm.load(ROOT / "examples" / "kernels" / "mp-release-flag.ptx"), False),
}


def _strip(v):
    if isinstance(v, dict):
        return {k: _strip(w) for k, w in v.items() if k != "time_s"}
    if isinstance(v, list):
        return [_strip(w) for w in v]
    return v


def _json(x) -> dict:
    return _strip(x.to_json())


def _verdict_queries(monkeypatch) -> list:
    asked: list = []
    real = checker.check

    def counting(prog, *a, **kw):
        asked.append(kw.get("properties"))
        return real(prog, *a, **kw)

    monkeypatch.setattr(checker, "check", counting)
    return asked


@pytest.mark.parametrize("case", CASES)
def test_a_checked_verdict_gives_the_same_explanation(monkeypatch, case):
    make, reachable = CASES[case]
    prog = make()
    res = ptxmm.check(prog, liveness=False)
    before = _json(explain(prog))
    asked = _verdict_queries(monkeypatch)
    after = explain(prog, checked=res)
    assert after.allowed is reachable
    assert _json(after) == before
    # the verdict query is spared exactly where the check said "forbidden"
    assert asked == ([("condition",)] if reachable else [])
    assert forbidden_by(res, prog, load_model("ptx"), 2) is (not reachable)


def test_only_a_finished_check_of_the_same_program_bound_and_model_counts():
    prog = _with(MP, COND)
    res = ptxmm.check(prog)
    ptx, sc = load_model("ptx"), load_model("sc")
    assert forbidden_by(res, prog, ptx, 2)
    assert not forbidden_by(None, prog, ptx, 2)
    assert not forbidden_by(res, prog, ptx, 3)  # another bound
    assert not forbidden_by(res, prog, sc, 2)  # another model
    other = _with(MP, "exists (T1:%r0 == 1)")  # another condition
    assert not forbidden_by(res, other, ptx, 2)
    res.status, res.holds = "timeout", None  # stopped: no verdict
    assert not forbidden_by(res, prog, ptx, 2)


def test_the_switch_off_asks_again(monkeypatch):
    prog = _with(MP, COND)
    res = ptxmm.check(prog)
    monkeypatch.setattr(explain_mod, "REUSE_VERDICT", False)
    asked = _verdict_queries(monkeypatch)
    assert not explain(prog, checked=res).allowed
    assert asked == [("condition",)]


def _cli(args):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return _strip(json.loads(r.output))


def test_explain_of_a_kernel_prints_the_same(monkeypatch):
    """A kernel's explain checks it for its findings, then explains its condition (forbidden here:
    the condition's verdict comes from that check)."""
    f = str(ROOT / "examples" / "kernels" / "mp-release-flag.ptx")
    asked = _verdict_queries(monkeypatch)
    reused = _cli(["explain", "--json", f])
    assert None in asked and ("condition",) not in asked  # the findings' check only
    monkeypatch.setattr(explain_mod, "REUSE_VERDICT", False)
    assert _cli(["explain", "--json", f]) == reused
    assert reused["verdict"] == "forbidden" and reused["findings"] is not None
