"""The race query asked before the outcome enumeration (queries.races.EARLY, issue 40): the same
status, verdict, outcomes and findings (kind, name, events, where, witness outcome allowed) as
asked after it, on random litmus programs (tests/support/grammar_gen.py) under two models, on
random programs around an RMW chain (tests/support/chain_gen.py) and on the grid barrier; the
brute-force engine (whose race search at --max-outcomes depends on the enumeration) never asks it
early; an answer the enumeration's status leaves unasked ("capped", a time limit) is dropped as
before; an early query stopped by the time limit stops the check with that status (the mutant
early-races-timeout-ignored is killed here). A kernel's sites asked with the race query in one query
(checker.SITES_WITH_RACES): the same findings and statuses (the mutant joint-sites-forgotten is killed)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT
from support.chain_gen import program
from support.grammar_gen import valid_ptx
from support.programs import TWO_RACING_PATHS

import ptxmm
from ptxmm.engines import TimedOut
from ptxmm.queries import condition, races

_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])


def _answer(res) -> tuple:
    outs = sorted(tuple(sorted(o.outcome.values)) for o in res.outcomes)
    finds = sorted((f.kind.value, f.name, tuple(e.eid for e in f.events), f.where, f.event_pairs)
                   for f in res.findings)
    assert all(f.outcome is None or f.outcome in res.outcome_set for f in res.findings)
    return res.status, res.holds, outs, finds, res.findings_status, res.liveness


def _both(monkeypatch, prog, **kw) -> tuple:
    monkeypatch.setattr(races, "EARLY", False)
    after = _answer(ptxmm.check(prog, **kw))
    monkeypatch.setattr(races, "EARLY", True)
    assert _answer(ptxmm.check(prog, **kw)) == after
    return after


@settings(max_examples=40, **_SETTINGS)
@given(src=valid_ptx(max_threads=3, max_events=6), model=st.sampled_from(["ptx", "ptx-v6.0"]))
def test_generated_litmus_tests_agree(monkeypatch, src, model):
    _both(monkeypatch, ptxmm.parse(src, "t.ptx"), model=model, engine="z3")


@settings(max_examples=6, **_SETTINGS)
@given(seed=st.integers(0, 2**32 - 1))
def test_generated_chain_programs_agree(monkeypatch, seed):
    _both(monkeypatch, ptxmm.parse(program(seed), "generated.ptx"), engine="z3")


def test_the_generators_reach_races(monkeypatch):
    """The chain programs reach what the switch is about: race findings, and none."""
    answers = [_both(monkeypatch, ptxmm.parse(program(s), "generated.ptx"), engine="z3") for s in range(8)]
    assert any(a[3] for a in answers) and any(not a[3] for a in answers)


def _grid(n: int):
    from ptxmm.kernel.kernels import KernelArgs

    launch = f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])"
    return ptxmm.load(ROOT / "examples" / "kernels" / "grid-barrier.ptx", kernel=KernelArgs(launch=launch))


def test_the_grid_barriers_agree(monkeypatch):
    assert _both(monkeypatch, _grid(3))[3] == []
    launch = "exchange<<<2, 1>>>(unsigned count[1], unsigned sense[1], int slot[2], int out[2])"
    nofence = ptxmm.load(ROOT / "examples" / "kernels" / "grid-barrier-no-fence.ptx", kernel=launch)
    assert "race" in [f[0] for f in _both(monkeypatch, nofence)[3]]


RACY = """.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; }
.thread T1 .cta 1 { ld.global.u32 %r0, [x]; st.global.u32 [x], 2; }
exists (x == 2)
"""


def _asked_early(monkeypatch) -> list:
    """Calls of the race search made before the enumeration started."""
    calls: list = []
    real_search, real_enum = races.QUERY.search, condition._enumerate
    state = {"enumerating": False}

    def search(r, pb, bounded):
        calls.append(state["enumerating"])
        return real_search(r, pb, bounded)

    def enum(*a, **k):
        state["enumerating"] = True
        return real_enum(*a, **k)

    monkeypatch.setattr(races.QUERY, "search", search)
    monkeypatch.setattr(condition, "_enumerate", enum)
    return calls


def test_the_z3_engine_asks_first_and_brute_force_after(monkeypatch):
    calls = _asked_early(monkeypatch)
    z = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3")
    assert calls == [False] and z.findings and z.findings_status == "ok"
    calls.clear()
    b = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="brute", max_outcomes=1)
    assert calls == [True] and b.findings_status == "stopped"


def test_under_a_time_limit_a_race_query_past_its_share_keeps_the_verdict(monkeypatch):
    """Under a time limit the race query asked first has its share of the time left
    (races.EARLY_SHARE): past the share, while the check's own limit is not, its answer is dropped
    and the check goes on as without EARLY — the verdict, then the race query after the
    enumeration. Here the first search is stopped (as its share passing stops it)."""
    calls = _asked_early(monkeypatch)
    searched, stopped = races.QUERY.search, []

    def first_stopped(r, pb, bounded):
        if not stopped:
            stopped.append(1)
            calls.append(False)  # the early search, stopped before it asks anything
            raise TimedOut()
        return searched(r, pb, bounded)

    monkeypatch.setattr(races.QUERY, "search", first_stopped)
    res = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3", timeout=60)
    assert calls == [False, True]  # asked first, stopped; asked again after the enumeration
    monkeypatch.setattr(races, "EARLY", False)
    plain = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3", timeout=60)
    assert res.status == plain.status == "ok" and res.holds is plain.holds is not None
    assert _answer(res) == _answer(plain) and res.findings and res.findings_status == "ok"


def test_a_share_already_spent_is_the_plain_order(monkeypatch):
    """No share left (EARLY_SHARE 0): the race query asked first stops at once, and the check
    answers as with EARLY off — the solver's own deadline, not a stand-in."""
    monkeypatch.setattr(races, "EARLY_SHARE", 0.0)
    res = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3", timeout=60)
    monkeypatch.setattr(races, "EARLY", False)
    plain = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3", timeout=60)
    assert res.status == "ok" and _answer(res) == _answer(plain)


def test_a_capped_enumeration_drops_the_early_answer(monkeypatch):
    monkeypatch.setattr(condition, "LIST_MAX", 1)
    res = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3")
    assert res.status == "capped" and res.findings == () and res.findings_status == "not checked"
    monkeypatch.setattr(races, "EARLY", False)
    assert _answer(ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3"))[3:5] == ([], "not checked")


def test_an_early_query_past_the_time_limit_stops_the_check(monkeypatch):
    """The race query asked first is stopped (Ctrl-C, the memory limit: a check with a time limit
    asks it after the verdict): the check's status is the stop's, nothing is enumerated and races
    are "not checked" (as when the stop ends the enumeration)."""
    enumerated = []
    real_enum = condition._enumerate

    def stopped(r, pb, bounded):
        raise TimedOut()

    monkeypatch.setattr(races.QUERY, "search", stopped)
    monkeypatch.setattr(condition, "_enumerate", lambda *a, **k: enumerated.append(1) or real_enum(*a, **k))
    res = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3")
    assert res.status == "timeout" and res.holds is None
    assert res.findings_status == "not checked" and not enumerated and res.outcomes == []


# -- the sites asked with the races (checker.SITES_WITH_RACES) ------------------------------------
def _sited(res) -> tuple:
    """A kernel check's answer; a site by its kind and line (its thread is its witness's)."""
    outs = sorted(tuple(sorted(o.outcome.values)) for o in res.outcomes)
    finds = sorted((f.kind.value, f.name, f.events[0].line if f.events[0].eid == -1
                    else tuple(e.eid for e in f.events)) for f in res.findings)
    return res.status, res.holds, outs, finds, res.findings_status, res.liveness


def _switched(monkeypatch, prog, switch: str) -> tuple:
    """The kernel check's answer with queries.checker's ``switch`` off, held equal to it on."""
    from ptxmm.queries import checker

    monkeypatch.setattr(checker, switch, False)
    off = _sited(ptxmm.check(prog, engine="z3"))
    monkeypatch.setattr(checker, switch, True)
    assert _sited(ptxmm.check(prog, engine="z3")) == off
    return off


def _sites_both(monkeypatch, prog) -> tuple:
    return _switched(monkeypatch, prog, "SITES_WITH_RACES")


@settings(max_examples=8, **_SETTINGS)
@given(st.lists(st.integers(-1, 5), min_size=1, max_size=3))
def test_kernel_sites_agree(monkeypatch, idx):
    """gather-oob (an index outside 0..3 reads out of bounds) and the histogram (its bins bumped
    by atomicAdd, its assertion): sites reached and not, with the joint query and apart."""
    from support.launches import gather, hist

    _sites_both(monkeypatch, gather(idx))
    _sites_both(monkeypatch, hist([i % 6 - 1 for i in idx]))


def test_a_reached_site_is_found_with_the_joint_query(monkeypatch):
    """An index out of bounds and no race: the joint query finds an execution, and each query is
    then asked (the mutant joint-sites-forgotten, whose query asks for races only, reports no site)."""
    from support.launches import gather

    finds = _sites_both(monkeypatch, gather([0, 5]))[3]
    assert [f[0] for f in finds] == ["out-of-bounds"]
    assert _sites_both(monkeypatch, _grid(3))[3] == []


TWO_WITNESSES = TWO_RACING_PATHS + "exists (T1:%r1 == 0)\n"


def test_a_late_race_query_after_a_stopped_enumeration_sees_every_race(monkeypatch):
    """Asked after an enumeration stopped at --max-outcomes (EARLY off), the race query is asked
    outside the enumeration's scope: the race each branch makes is found, whichever outcome the
    enumeration blocked (the mutant race-query-in-enumeration-scope, which leaves that scope in
    place, is killed here: with EARLY on the race query runs before it)."""
    def pairs(res):
        return {(f.name, tuple(sorted(e.line or 0 for e in f.events))) for f in res.findings}

    p = ptxmm.parse(TWO_WITNESSES, "two.ptx")
    full = pairs(ptxmm.check(p, engine="z3"))
    assert len(full) == 2
    monkeypatch.setattr(races, "EARLY", False)
    for k in (1, 2):
        stopped = ptxmm.check(p, max_outcomes=k, engine="z3")
        assert stopped.status == "stopped" and pairs(stopped) == full


# -- the early query's conflict budget (races.EARLY_CONFLICTS) -----------------------------------
def _over_budget(monkeypatch) -> list:
    """Each OverBudget the Z3 engine raised."""
    import ptxmm.engines.z3.problem as z3problem

    seen: list = []
    real = z3problem.Z3Problem._unknown

    def spy(self, s=None):
        e = real(self, s)
        seen.append(type(e).__name__)
        return e

    monkeypatch.setattr(z3problem.Z3Problem, "_unknown", spy)
    return seen


def test_an_early_query_past_its_conflict_budget_is_the_plain_order(monkeypatch):
    """A budget of 0 conflicts: the grid barrier's early query gives up at its first conflict,
    its answer is dropped and the check answers as with EARLY off — the budget lifted for the
    enumeration and the race query after it (the mutants early-budget-stops-the-check and
    early-budget-left-on are killed here)."""
    seen = _over_budget(monkeypatch)
    monkeypatch.setattr(races, "EARLY_CONFLICTS", 0)
    on = _answer(ptxmm.check(_grid(3), engine="z3"))
    assert seen == ["OverBudget"]
    monkeypatch.setattr(races, "EARLY", False)
    assert _answer(ptxmm.check(_grid(3), engine="z3")) == on
    assert on[0] == "ok" and on[4] == "ok" and on[3] == []


def test_a_budget_the_early_query_stays_within_keeps_its_answer(monkeypatch):
    seen = _over_budget(monkeypatch)
    calls = _asked_early(monkeypatch)
    res = ptxmm.check(ptxmm.parse(RACY, "r.ptx"), engine="z3")
    assert seen == [] and calls == [False] and res.findings


# -- the joint query under the symmetry breaking (checker.SYMMETRIC_JOINT) ------------------------
def _joint_both(monkeypatch, prog) -> tuple:
    return _switched(monkeypatch, prog, "SYMMETRIC_JOINT")


@settings(max_examples=10, **_SETTINGS)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=4),
       st.lists(st.integers(-1, 5), min_size=2, max_size=3))
def test_the_joint_query_under_the_symmetry_breaking_agrees(monkeypatch, modes, idx):
    """The symmetry test kernel (interchangeable threads by mode: atomics, a plain store racing
    with them, an acquire RMW fed by a release one, assertions), gather-oob and the histogram at
    random launches: the same findings and statuses with the joint query over every execution
    and over the canonical ones (the mutant joint-symmetric-forgets-races is killed here)."""
    from support.launches import gather, hist, mixed

    _joint_both(monkeypatch, mixed(modes))
    _joint_both(monkeypatch, gather(idx))
    _joint_both(monkeypatch, hist([i % 6 - 1 for i in idx]))


# three interchangeable threads: their stores race, their trap is never reached (y stays 0)
SYMMETRIC_RACES = """.global .u32 x = 0;
.global .u32 y = 0;
""" + "".join(f""".thread T{t} .cta 0 {{ st.global.u32 [x], 1; ld.global.u32 %r0, [y];
    setp.eq.u32 %p0, %r0, 1; @%p0 trap; }}
""" for t in range(3)) + "exists (x == 1)\n"


def test_races_without_a_reached_site_among_interchangeable_threads(monkeypatch):
    """The joint query is unanswered "none" only when there is neither: here its races are found
    (the mutant joint-symmetric-forgets-races, which asks the symmetric joint query for sites only,
    reports none)."""
    prog = ptxmm.parse(SYMMETRIC_RACES, "symmetric.ptx")
    finds = _joint_both(monkeypatch, prog)[3]
    assert sorted(f[0] for f in finds) == ["race"] * 3
