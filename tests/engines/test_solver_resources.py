"""What a check holds and leaves behind: solver terms freed with the check (never by the cyclic
collector, which may run in another thread while this one is inside Z3), pooled solvers given
back clean, and the collector paused while a check runs."""

from __future__ import annotations

import gc
import threading

import pytest
from support import ROOT

import ptxmm
from ptxmm.cli.main import _others_alive
from ptxmm.engines import z3 as z3engine

EX = ROOT / "examples"
PROGRAMS = ["mp-relaxed-acquire.ptx", "spinlock-cas.ptx", "classic/SB-fence-sc.ptx",
            "hopper/ring-2stage-full-empty.ptx", "hopper/cluster-dsmem-release-acquire.ptx"]


def _programs():
    out = []
    for name in PROGRAMS:
        path = EX / name
        if not path.exists():  # a renamed example must not silently shrink the test
            pytest.fail(f"{path} is missing: update PROGRAMS")
        out.append(ptxmm.load(str(path)))
    return out


@pytest.mark.parametrize("kw", [dict(engine="z3"), dict(engine="z3", verdict_only=True),
                                dict(engine="z3", flags=False), dict(engine="z3", max_outcomes=1)])
@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5"])
def test_a_check_leaves_no_cyclic_garbage_holding_solver_terms(model, kw):
    progs = _programs()
    gc.collect()
    was = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for p in progs:
            ptxmm.check(p, model, **kw)
        gc.collect()
        held = [type(o).__name__ for o in gc.garbage
                if type(o).__module__.startswith(("z3", "ptxmm.engines", "ptxmm.cat",
                                                  "ptxmm.semantics.vocab"))]
    finally:
        gc.set_debug(was)
        gc.garbage.clear()
    assert held == []


def _pool_is_clean() -> None:
    for s in z3engine._POOL:
        assert s.num_scopes() == 0 and len(s.assertions()) == 0 and s.lg is None


def test_pooled_solvers_come_back_clean_after_every_way_a_check_ends():
    mp = ptxmm.load(str(EX / "mp-relaxed-acquire.ptx"))
    full = ptxmm.check(mp, engine="z3").outcome_set
    _pool_is_clean()
    assert len(ptxmm.check(mp, engine="z3", max_outcomes=1).outcomes) == 1  # enumeration cut short
    _pool_is_clean()
    assert ptxmm.check(mp, engine="z3", timeout=1e-9).status == "timeout"
    _pool_is_clean()
    assert ptxmm.check(mp, engine="z3", verdict_only=True).holds is True
    _pool_is_clean()
    assert ptxmm.check(mp, engine="z3").outcome_set == full  # nothing left over changes answers
    assert z3engine._POOL, "a finished check gives its solver back"


def test_a_pooled_solver_serves_a_bounded_number_of_problems():
    """Z3 keeps a little memory per popped scope: solvers are retired after _REUSES problems."""
    mp = ptxmm.load(str(EX / "mp-relaxed-acquire.ptx"))
    ptxmm.check(mp, engine="z3")
    first = z3engine._POOL[-1]
    for _ in range(z3engine._REUSES + 1):
        ptxmm.check(mp, engine="z3", verdict_only=True)
    assert all(s is not first for s in z3engine._POOL)
    assert all(s.served <= z3engine._REUSES for s in z3engine._POOL)


def test_the_cyclic_collector_is_paused_during_a_check_and_restored_after():
    seen = []
    sb = ptxmm.load(str(EX / "classic" / "SB-fence-sc.ptx"))
    assert gc.isenabled()
    ptxmm.check(sb, engine="z3", progress=lambda n: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()
    gc.disable()  # a caller's own setting is kept
    try:
        ptxmm.check(sb, engine="z3")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_quick_exit_waits_for_worker_threads_but_not_for_daemons():
    stop = threading.Event()
    daemon = threading.Thread(target=stop.wait, daemon=True)
    worker = threading.Thread(target=stop.wait)
    daemon.start()
    try:
        assert not _others_alive()
        worker.start()
        assert _others_alive()
    finally:
        stop.set()
        daemon.join()
        if worker.is_alive():
            worker.join()
    assert not _others_alive()


def test_only_small_problems_share_a_solver():
    """Scoped assertions miss Z3's base-level preprocessing: a problem with many rf/co choices
    gets a fresh solver at base level, which is not pooled afterwards."""
    from ptxmm.cat.parser import load_model
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.outcomes import observables
    from ptxmm.semantics.vocab import candidates

    def problem(src: str):
        eg = build(ptxmm.parse(src, "t.ptx"))
        return z3engine.Z3Problem(eg, load_model("sc"), observables(eg, "all"), candidates(eg))

    stores = lambda n: ".global .u32 x = 0;\n.thread T0 {\n" + "".join(  # noqa: E731
        f"    st.global.u32 [x], {i + 1};\n" for i in range(n)) + "}\n"
    small, big = problem(stores(3)), problem(stores(12))  # 3·2 and 12·11 co choices
    assert small.pooled and small.s.num_scopes() == 1
    assert not big.pooled and big.s.num_scopes() == 0
    s_big = big.s
    big.close()
    small.close()
    assert all(s is not s_big for s in z3engine._POOL)
    assert small.pooled and any(s.served for s in z3engine._POOL)
