"""crossval --hunt without a GPU: which environments the plan picks for a test's shape and how it
splits the budget, and how the hunt loop books found / not found outcomes, instances and violations
(a fake run stands in for the device)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from rich.console import Console
from support import ROOT

from ptxmm import load
from ptxmm.device.crossval import prepare
from ptxmm.device.env import Env
from ptxmm.device.hunt import MIN_SLICE_S, PORTFOLIO, Shape, Target, hunt, order, plan_hunt, targets_of
from ptxmm.device.report import render_hunt
from ptxmm.semantics.result import Outcome

EX = ROOT / "examples"


def _shape(name: str) -> Shape:
    return Shape.of(prepare(load(EX / name))[1])


def test_shape_of_examples():
    assert _shape("classic/IRIW-relaxed.ptx") == Shape(ctas=4, roles=4, locations=2, loops=False)
    assert _shape("classic/MP-rel-acq-cta-samecta.ptx").ctas == 1
    assert _shape("device/MP-spin.ptx").loops


def test_order_depends_on_shape(monkeypatch):
    monkeypatch.delenv("PTXMM_PTXAS_129", raising=False)
    two_ctas = order(Shape(2, 2, 2, False))
    assert two_ctas[:6] == ["none", "runner", "light", "runner-stress", "spread", "packed"]
    one_cta = order(Shape(1, 2, 2, False))
    assert "spread" not in one_cta and one_cta[2:4] == ["lines", "sectors"]
    iriw = order(Shape(4, 4, 2, False))
    assert iriw.index("light") < iriw.index("bar50")  # stress early for 3+ roles
    spin = order(Shape(2, 2, 2, True))
    assert spin[-2:] == ["wide-stress", "heavy"]
    for o in (two_ctas, one_cta, iriw, spin):
        assert len(o) == len(set(o)) and set(o) <= set(PORTFOLIO)
        assert o[-1] == "heavy"


def test_runner_cuda12_is_tried_second_across_ctas_where_its_ptxas_is(monkeypatch):
    monkeypatch.setenv("PTXMM_PTXAS_129", "/opt/cuda-12.9/bin/ptxas")
    assert order(Shape(2, 3, 3, False))[:4] == ["none", "runner-cuda12", "runner-cuda12-stress", "runner"]
    o = order(Shape(2, 3, 3, False))
    assert o.index("runner-random") == o.index("runner-stress") + 1
    assert PORTFOLIO["runner-random"][0].random_config and PORTFOLIO["runner-cuda12-stress"][0].ptxas == 129
    assert "runner-cuda12" not in order(Shape(1, 2, 2, False))  # one CTA: block fences order it there
    assert PORTFOLIO["runner-cuda12"][0].ptxas == 129
    monkeypatch.delenv("PTXMM_PTXAS_129")
    assert not {"runner-cuda12", "runner-cuda12-stress", "runner-random"} & set(order(Shape(2, 3, 3, False)))


def test_plan_splits_budget():
    s = Shape(2, 2, 2, False)
    full = plan_hunt(s, 100.0)
    assert [h.name for h in full] == order(s)
    assert abs(sum(h.seconds for h in full) - 100.0) < 1e-9
    small = plan_hunt(s, 1.0)
    assert len(small) == int(1.0 // MIN_SLICE_S) and all(h.seconds == 0.25 for h in small)
    assert [h.name for h in plan_hunt(s, 0.1)] == ["none"]  # at least one environment
    assert plan_hunt(s, 5.0) == plan_hunt(s, 5.0)  # deterministic


@dataclass
class FakeRow:
    outcome: Outcome
    count: int
    verdict: str
    satisfies: bool | None = None
    same_sm: int = 0


@dataclass
class FakeRun:
    env: Env
    instances: int
    seconds: float


@dataclass
class FakeCross:
    run: FakeRun
    rows: list[FakeRow] = field(default_factory=list)


A = Outcome((("T0:%r0", 1),))
B = Outcome((("T0:%r0", 2),))
BAD = Outcome((("T0:%r0", 9),))


def _fake(shows: dict[str, list[FakeRow]]):
    calls = []

    def run_env(env: Env, seconds: float, seed: int) -> FakeCross:
        name = next(n for n, (e, _) in PORTFOLIO.items() if e == env)
        calls.append((name, seconds, seed))
        return FakeCross(FakeRun(env, 1000, seconds), shows.get(name, []))

    return run_env, calls


def test_hunt_books_found_and_not_found():
    run_env, calls = _fake({"spread": [FakeRow(A, 5, "ok", True, 2)], "packed": [FakeRow(A, 50, "ok")]})
    plan = plan_hunt(Shape(2, 2, 2, False), 3.0)
    res = hunt([Target(A, True), Target(B, False)], plan, run_env, seed=7)
    assert [c[0] for c in calls] == [h.name for h in plan]  # B never found: every env ran
    assert [c[2] for c in calls] == list(range(8, 8 + len(plan)))  # a seed per environment
    a, b = res.targets
    assert a.best.env == "packed" and a.best.rate == 0.05 and [f.env for f in a.found] == ["spread", "packed"]
    assert a.instances_before == 4000  # none, runner, light and runner-stress ran before spread showed it
    assert not b.found and res.instances == 1000 * len(plan) and res.violations == 0
    js = res.to_json()
    json.dumps(js)
    assert js["found"] == 1 and js["outcomes"][1] == {"values": {"T0:%r0": 2}, "satisfies": False,
                                                      "status": "not found", "instances": res.instances,
                                                      "rate_bound": round(3 / res.instances, 12)}
    assert js["outcomes"][0]["env"] == "packed" and js["outcomes"][0]["found_in"] == ["spread", "packed"]
    con = Console(record=True, width=160)
    render_hunt(res, con)
    text = con.export_text()
    assert "1 of 2 unseen outcome(s) found" in text and "not found in" in text and "packed" in text


def test_hunt_stops_when_all_found_and_counts_violations():
    run_env, calls = _fake({"barrier": [FakeRow(A, 1, "ok"), FakeRow(BAD, 3, "VIOLATION")]})
    res = hunt([Target(A, True)], plan_hunt(Shape(1, 2, 2, False), 10.0), run_env)
    assert [c[0] for c in calls] == ["none", "barrier"]
    assert res.violations == 1 and res.trials[1].violations == 1
    assert res.to_json()["violation_outcomes"] == [{"env": "barrier", "values": {"T0:%r0": 9}, "count": 3}]


def test_targets_are_the_unseen_rows():
    rows = [FakeRow(A, 0, "unseen", True), FakeRow(B, 4, "ok"), FakeRow(BAD, 1, "VIOLATION")]
    ts = targets_of(FakeCross(FakeRun(Env(), 1, 1.0), rows))
    assert [(t.outcome, t.satisfies) for t in ts] == [(A, True)]
