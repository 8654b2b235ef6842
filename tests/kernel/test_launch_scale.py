"""Issue 40, item 5: launch sizes that follow cost. No fixed small thread limit: a launch below the
ceilings (kernel/launch.py: CUDA's 1024 threads per block, the machine's MAX_THREADS) is read, and
what its check may cost is --timeout (honoured in every phase: a 4-block, 1024-thread kernel under a
1 s limit is reported unknown within about the limit, never hangs or guesses). The barrier-wait
guards (semantics/barrier_waits.py) are computed once per wait and per thread rather than once per
pair: the same answers as the brute-force engine on random small barrier launches, and the
exchange's known verdicts (race-free with its barrier at 2..256 threads, racy without) — a wrong
cache (a guard reused for another wait or thread) breaks one of them."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.kernel.kernels import KernelArgs

KDIR = ROOT / "examples" / "kernels"


def _load(name: str, launch: str, **kw):
    return ptxmm.load(KDIR / f"{name}.ptx", kernel=KernelArgs(launch=launch, **kw))


def test_a_launch_past_32_threads_is_read():
    prog = _load("syncthreads-exchange", "exchange<<<2, 1024>>>(int out[1024])")
    assert len(prog.threads) == 2048


def test_a_large_kernel_under_a_short_timeout_is_unknown_within_about_it():
    prog = _load("syncthreads-exchange", "exchange<<<4, 1024>>>(int out[1024])")
    t0 = time.perf_counter()
    res = ptxmm.check(prog, timeout=1.0)
    took = time.perf_counter() - t0
    assert res.status == "timeout" and res.holds is None, res.status
    assert took < 1.0 + 15, took  # the watchdog pokes a phase that does not look (GRACE); a loaded machine


def _kinds(res) -> set[str]:
    return {str(f.kind) for f in res.findings if str(f.kind) != "flag"}


@settings(max_examples=4, deadline=None)
@given(st.sampled_from(["syncthreads-exchange", "syncthreads-exchange-no-barrier"]), st.just(1),
       st.integers(2, 3))
def test_barrier_kernels_agree_with_brute_force(name, blocks, threads):
    """Random small launches of the neighbour exchange with and without its __syncthreads(): the
    Z3 engine (whose barrier guards are cached) and the brute-force enumeration agree on the
    outcomes, the verdict and the findings."""
    n = threads
    cond = " && ".join(f"out[{t}] == {(t + 1) % n + 1}" for t in range(n))
    prog = _load(name, f"exchange<<<{blocks}, {n}>>>(int out[{n}])", forall=cond)
    z = ptxmm.check(prog, engine="z3", liveness=False)
    b = ptxmm.check(prog, engine="brute", liveness=False)
    assert z.outcome_set == b.outcome_set
    assert (z.holds, _kinds(z)) == (b.holds, _kinds(b))
    if name == "syncthreads-exchange" and blocks == 1:
        assert z.holds and not _kinds(z)  # the barrier orders every conflicting pair


@pytest.mark.parametrize("threads", [64, 256])
def test_the_exchange_scales_past_32_threads(threads):
    """A block of 64 or 256 threads: race-free, every assertion holds (the exchange's argument in
    its header holds for any block size up to its shared array of 1024)."""
    n = threads
    prog = _load("syncthreads-exchange", f"exchange<<<1, {n}>>>(int out[{n}])",
                 forall=f"out[0] == 2 && out[{n - 1}] == 1")
    res = ptxmm.check(prog, observe="condition", liveness=False)
    assert res.holds and not _kinds(res)
