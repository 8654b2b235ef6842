"""The base vocabulary's per-path bitsets (semantics/vocab.py: path_masks, Together,
implied_execution, po, Universe.apart) against their pairwise definitions — two events of one
thread run together when they share a path (``exclusive``), an event implies the events of its
thread on all of its paths — on programs whose threads have many paths (spin loops unrolled, a
kernel's look-back windows), in the safety and the liveness event graphs."""

from __future__ import annotations

import pytest
from support import ROOT

import ptxmm
from ptxmm.ir.values import TRUE
from ptxmm.semantics.builder import build
from ptxmm.semantics.knowledge import FreeChoice
from ptxmm.semantics.vocab import Together, Universe, _Base, exclusive, implied_execution

# (file, liveness graph?): every one has a thread of several paths
GRAPHS = [("examples/mp-spin.ptx", True), ("examples/spinlock-cas.ptx", True),
          ("examples/kernels/real/cub-tile-state-unpacked-no-fence.ptx", False),
          ("examples/kernels/real/cub-tile-state-unpacked-no-fence.ptx", True),
          ("examples/kernels/real/cutlass-semaphore.ptx", False),
          ("examples/kernels/real/cutlass-semaphore.ptx", True)]


def _graphs():
    for f, liveness in GRAPHS:
        yield pytest.param(ptxmm.load(str(ROOT / f)), liveness,
                           id=f"{f.rsplit('/', 1)[-1]}-{'live' if liveness else 'safe'}")


@pytest.mark.parametrize("prog, liveness", list(_graphs()))
def test_path_bitsets_equal_the_pairwise_definitions(prog, liveness):
    eg = build(prog, unroll=2, liveness=liveness)
    ev = eg.events
    assert any(len(ps) > 1 for ps in eg.paths), "a thread with several paths"
    ex = [FreeChoice(eg).exec(i) for i in range(len(ev))]
    sure = sum(1 << i for i, g in enumerate(ex) if g is True)
    implied = implied_execution(eg, ex)
    together = Together(eg)
    base = _Base(eg, Universe(ex, FreeChoice.lg, implied))
    po = base.po().must
    for a in ev:
        same = [b for b in ev if a.thread >= 0 and b.thread == a.thread]
        assert together.of(a.eid) == sum(1 << b.eid for b in same if not exclusive(a, b))
        assert base.apart(a.eid) == sum(1 << b.eid for b in same if exclusive(a, b))
        want = sure | (1 << a.eid)
        if a.thread >= 0 and ex[a.eid] is not True:
            want |= sum(1 << b.eid for b in same if ex[b.eid] is not False and a.paths <= b.paths
                        and b.cond == TRUE)
        assert implied[a.eid] == want
        if a.agent < 0 and a.thread >= 0:
            later = sum(1 << b.eid for b in same if b.agent < 0 and b.index > a.index and a.paths & b.paths)
            assert po.get(a.eid, 0) == later, a.eid
    threaded = sum(1 << e.eid for e in ev if e.thread >= 0)  # po: a thread's own events only
    assert all((threaded >> a) & 1 and not row & ~threaded for a, row in po.items())
