"""``sr`` (semantics/vocab.py): a row per placement and scope (issue 40: a block of 1,024 threads
made the site-by-site rows quadratic) equals its site-by-site definition (``sr_pairwise``) — on
litmus tests with CTAs and clusters, on asynchronous agents' events performed in another CTA
(``Event.at``), on kernels of several blocks, and on random placements of scoped accesses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm import parse
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.semantics.builder import build
from ptxmm.semantics.knowledge import FreeChoice
from ptxmm.semantics.vocab import Universe, _Base, implied_execution

FILES = ["examples/hopper/cluster-dsmem-release-acquire.ptx", "examples/hopper/remote-arrive-2cta.ptx",
         "examples/hopper/st-async-remote.ptx", "examples/hopper/tma-multicast.ptx",
         "examples/hopper/red-async-remote.ptx", "examples/hopper/cluster-ctarank-exchange.ptx"]


def _rows(prog) -> tuple[dict, dict]:
    eg = build(prog, unroll=2)
    ex = [FreeChoice(eg).exec(i) for i in range(len(eg.events))]
    base = _Base(eg, Universe(ex, FreeChoice.lg, implied_execution(eg, ex)))
    return base.sr().must, base.sr_pairwise().must


@pytest.mark.parametrize("f", FILES)
def test_sr_rows_equal_the_pairwise_definition(f):
    fast, plain = _rows(ptxmm.load(str(ROOT / f)))
    assert fast == plain and fast


def test_sr_rows_of_a_kernel_of_several_blocks():
    prog = ptxmm.load(ROOT / "examples/kernels/syncthreads-exchange.ptx",
                      kernel=KernelArgs(launch="exchange<<<3, 4>>>(int out[4])"))
    fast, plain = _rows(prog)
    assert fast == plain and fast


SEM = ["ld.relaxed.cta", "ld.relaxed.gpu", "ld.acquire.sys", "ld.volatile", "ld",
       "st.relaxed.cta", "st.release.gpu", "st.relaxed.cluster", "st"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.lists(st.sampled_from(SEM), min_size=1,
                                                                        max_size=3)),
                min_size=1, max_size=4))
def test_random_placements(threads):
    """Threads in random CTAs of two clusters, each a few accesses of random scopes."""
    out = [".global .u32 x = 0;"]
    for t, (cta, cl, ops) in enumerate(threads):
        body = " ".join(f"{op}.global.u32 %r{i}, [x];" if op.startswith("ld") else f"{op}.global.u32 [x], 1;"
                        for i, op in enumerate(ops))
        out.append(f".thread T{t} .cta {cta + 3 * cl} .cluster {cl} {{ {body} }}")
    out.append("exists (x == 0)")
    fast, plain = _rows(parse("\n".join(out)))
    assert fast == plain
