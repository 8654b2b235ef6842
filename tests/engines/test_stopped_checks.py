"""A check stopped from outside (the watchdog: the memory limit, the clock, Ctrl-C) ends with its
stop's Unknown in every engine and every phase: never a Z3 error, never a search that runs on
(red team round 4: F1, F9)."""

from __future__ import annotations

import pytest

import ptxmm

# four threads, two weak stores and three weak loads each: thousands of outcomes, and a race
# search that brute force cannot finish
HEAVY = ".global .u32 x = 0;\n.global .u32 y = 0;\n" + "".join(
    f".thread T{t} {{\n  st.global.u32 [x], {2 * t + 1}; st.global.u32 [y], {2 * t + 2};\n"
    "  ld.global.u32 %r0, [y]; ld.global.u32 %r1, [x]; ld.global.u32 %r2, [y];\n}\n"
    for t in range(4)) + "exists (T0:%r0 == 1)\n"


@pytest.fixture(scope="module")
def heavy(tmp_path_factory):
    f = tmp_path_factory.mktemp("stop") / "l01_heavy.ptx"
    f.write_text(HEAVY)
    return ptxmm.load(f)


def test_a_stop_between_solver_calls_is_the_stops_unknown(heavy):
    """The memory stop interrupts Z3 while no solver call runs: the interrupt stays pending and
    cancels the next push. Before: `z3.Z3Exception: b'push canceled'` (a traceback, exit 1)."""
    from ptxmm.cat.parser import load_model
    from ptxmm.engines import Deadline
    from ptxmm.engines.base import OutOfMemory, Stop
    from ptxmm.engines.z3 import Z3Problem
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.outcomes import observables
    from ptxmm.semantics.vocab import candidates

    eg = build(heavy)
    stop = Stop()
    pb = Z3Problem(eg, load_model("ptx"), observables(eg), candidates(eg), deadline=Deadline(None, stop))
    stop.set("memory")  # the watchdog's hook: ctx.interrupt() with no solver call under way
    with pytest.raises(OutOfMemory):
        next(pb.outcomes())
    pb.close()


def test_check_stopped_for_memory_before_enumerating_says_memory(heavy, monkeypatch):
    """The same race inside check(): the memory limit is passed just as the enumeration starts."""
    from ptxmm.queries import checker

    real = checker._phase

    def phase(stop, what):
        real(stop, what)
        if what == "enumerating outcomes":
            stop.set("memory")

    monkeypatch.setattr(checker, "_phase", phase)
    res = ptxmm.check(heavy, engine="z3")
    assert res.status == "memory" and res.holds is None and "memory limit" in res.status_text
