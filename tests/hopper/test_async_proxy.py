"""The async proxy (docs/hopper.md): proxy fences, bulk wait_group, complete_tx, async events outside
program order (both engines)."""

from __future__ import annotations

from support import ROOT, verdict

import ptxmm
from ptxmm.semantics.builder import build

# ----- the async proxy ---------------------------------------------------------------------------


def test_async_fence_of_another_state_space_does_not_help():
    src = (ROOT / "examples" / "hopper" / "bulk-store-fence.ptx").read_text()
    assert verdict(src.replace("fence.proxy.async.shared::cta", "fence.proxy.async.global")) is True
    assert verdict(src.replace("fence.proxy.async.shared::cta", "fence.proxy.async")) is False


def test_bulk_wait_group_orders_the_copy_before_later_reads():
    src = (ROOT / "examples" / "hopper" / "bulk-store-fence.ptx").read_text()
    nowait = src.replace("cp.async.bulk.wait_group 0;", "")
    assert verdict(nowait.replace("exists (T0:%r0 != 1)", "exists (T0:%r0 == 7)")) is True
    assert verdict(src.replace("exists (T0:%r0 != 1)", "exists (T0:%r0 == 7)")) is False
    read = src.replace("wait_group 0", "wait_group.read 0")
    assert verdict(read.replace("exists (T0:%r0 != 1)", "exists (T0:%r0 == 7)")) is True


def test_tma_complete_tx_does_not_release_the_issuers_earlier_writes():
    """cp.async.bulk: the complete-tx orders the copy's own accesses only; a generic write the
    issuer made before issuing the copy is not published to the waiter by it."""
    src = """
.global .u32 g = 42;
.shared .u32 s = 0;
.shared .u32 y = 0;
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cta 0 {
    st.shared.u32 [y], 1;
    mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 4;
    mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [bar];
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 4, [bar];
}
.thread T1 .cta 0 {
W:  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [y];
    ld.shared.u32 %r1, [s];
}
exists (T1:%r0 == 0 || T1:%r1 != 42)
"""
    assert verdict(src, both=False) is True
    assert verdict(src.replace("T1:%r0 == 0 || ", ""), both=False) is False


def test_async_events_are_not_in_program_order():
    eg = build(ptxmm.load(ROOT / "examples" / "hopper" / "tma-load-mbarrier.ptx"))
    agents = [e for e in eg.events if e.agent >= 0]
    assert [e.kind for e in agents] == ["R", "W", "F", "R", "W"]
    assert {"ASYNC", "AOP"} <= agents[0].tags and "GEN" in agents[3].tags
    assert agents[4].sem == "release" and agents[4].scope == "cluster"
