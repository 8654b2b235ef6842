"""Random-launch property tests' kernels (the reductions' tests: symmetry, RMW chains, site
reuse, the address memo): a bundled kernel loaded at a launch built from drawn values, and the
hypothesis settings they share."""

from __future__ import annotations

from hypothesis import HealthCheck

import ptxmm

from . import ROOT

KDIR = ROOT / "examples" / "kernels"
MIXED = ROOT / "tests" / "data" / "symmetry" / "symmetry_mixed.ptx"
SETTINGS = dict(deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _ints(vals: list[int]) -> str:
    return ", ".join(map(str, vals))


def hist(vals: list[int]):
    """histogram<<<1, N>>> over the bins ``vals`` (4 bins: an out-of-range one fails its assert)."""
    n = len(vals)
    return ptxmm.load(KDIR / "histogram.ptx",
                      kernel=f"histogram<<<1, {n}>>>(int in[{n}] = {{{_ints(vals)}}}, unsigned hist[4])")


def mixed(modes: list[int]):
    """The symmetry test kernel (tests/data/symmetry) with each thread's mode."""
    n = len(modes)
    return ptxmm.load(MIXED, kernel=f"mixed<<<1, {n}>>>(int mode[{n}] = {{{_ints(modes)}}}, "
                                    "unsigned c[1], unsigned d[1], unsigned flag[1])")


def gather(idx: list[int]):
    """gather<<<1, N>>> reading in[idx[t]] (an index outside 0..3 reads out of bounds)."""
    n = len(idx)
    return ptxmm.load(KDIR / "gather-oob.ptx",
                      kernel=f"gather<<<1, {n}>>>(int idx[{n}] = {{{_ints(idx)}}}, "
                             f"int in[4] = {{10, 11, 12, 13}}, int out[{n}])")
