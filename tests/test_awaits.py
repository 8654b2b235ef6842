"""Spin loops reduced to awaits: side-effect-free loops, and CAS retry loops whose repeated
iterations wrote nothing (the CAS failed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ptxmm

# two threads take a CAS spin lock, increment a counter and unlock with st.release
LOCK = (Path(__file__).resolve().parents[1] / "examples" / "spinlock-cas.ptx").read_text()


def test_cas_retry_loop_is_an_await():
    res = ptxmm.check(ptxmm.parse(LOCK, "lock.ptx"))
    assert res.holds and res.awaits == 2 and res.cut_paths == 0 and res.n_events == 12


@pytest.mark.parametrize("branch", ["setp.eq.u32 %p0, %r0, 0;\n    @!%p0 bra ACQ;",  # not (eq)
                                    "setp.ne.u32 %p0, 0, %r0;\n    @%p0 bra ACQ;"])  # operands swapped
def test_cas_retry_spellings(branch):
    text = LOCK.replace("setp.ne.u32 %p0, %r0, 0;\n    @%p0 bra ACQ;", branch)
    res = ptxmm.check(ptxmm.parse(text, "lock.ptx"))
    assert res.holds and res.awaits == 2 and res.cut_paths == 0


@pytest.mark.parametrize("change", [
    # goes back when the CAS succeeded: a repeated iteration wrote, so it is unrolled
    ("setp.ne.u32 %p0, %r0, 0;", "setp.eq.u32 %p0, %r0, 0;"),
    # compares with another value than the CAS expected: a repeated iteration may have written
    ("setp.ne.u32 %p0, %r0, 0;", "setp.ne.u32 %p0, %r0, 5;"),
    # an exchange always writes
    ("atom.acquire.gpu.global.cas.b32 %r0, [lock], 0, 1;",
     "atom.acquire.gpu.global.exch.b32 %r0, [lock], 1;"),
])
def test_loops_that_write_when_repeating_are_unrolled(change):
    text = LOCK.replace(*change)
    res = ptxmm.check(ptxmm.parse(text, "lock.ptx"))
    assert res.awaits == 0 and res.cut_paths > 0
