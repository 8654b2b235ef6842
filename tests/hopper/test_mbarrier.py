"""mbarrier (docs/hopper.md): phases, arrivals, waits, expect_tx/complete_tx, remote arrives through
mapa, the word's encoding; each rule on a small program of its own (both engines)."""

from __future__ import annotations

from support import ROOT, verdict

import ptxmm
from ptxmm.ir.mbarrier import decode, init_count

# ----- mbarrier --------------------------------------------------------------------------------

MB2 = """
.shared .u32 x = 0;
.shared .u32 y = 0;
.shared .b64 bar = mbarrier.init(2);
.thread A .cta 0 { st.shared.u32 [x], 1; mbarrier.arrive.release.cta.shared::cta.b64 _, [bar]; }
.thread B .cta 0 { st.shared.u32 [y], 1; mbarrier.arrive.shared.b64 %s, [bar]; %WAIT% }
.thread C .cta 0 {
W: mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
   @!%p bra W;
   ld.shared.u32 %r0, [x]; ld.shared.u32 %r1, [y]; }
exists (C:%r0 == 0 || C:%r1 == 0)
"""


def test_phase_completes_after_all_expected_arrivals():
    """Expected count 2: the phase completes with the second arrive, whichever it is, and both
    arrives (release by default) synchronize with the acquire wait."""
    assert verdict(MB2.replace("%WAIT%", "")) is False


def test_wait_on_state_returned_by_arrive():
    """test_wait with the state an arrive returned: True once that phase completed."""
    src = MB2.replace("%WAIT%", "V: mbarrier.test_wait.shared.b64 %q, [bar], %s; @!%q bra V; "
                      "ld.shared.u32 %r2, [x];").replace("exists (C:%r0 == 0 || C:%r1 == 0)",
                                                        "exists (B:%r2 == 0)")
    assert verdict(src) is False


def test_relaxed_arrive_does_not_release():
    src = MB2.replace("mbarrier.arrive.release.cta", "mbarrier.arrive.relaxed.cta").replace("%WAIT%", "")
    assert verdict(src.replace("C:%r0 == 0 || C:%r1 == 0", "C:%r0 == 0")) is True
    fenced = src.replace("st.shared.u32 [x], 1;", "st.shared.u32 [x], 1; fence.acq_rel.cta;")
    assert verdict(fenced.replace("C:%r0 == 0 || C:%r1 == 0", "C:%r0 == 0")) is False


def test_one_arrival_does_not_complete_a_phase_of_two():
    src = """
.shared .b64 bar = mbarrier.init(2);
.thread A .cta 0 { mbarrier.arrive.shared.b64 _, [bar]; }
.thread C .cta 0 { mbarrier.test_wait.parity.shared.b64 %p, [bar], 0; }
exists (C:%p == 1)
"""
    assert verdict(src) is False
    assert verdict(src.replace("init(2)", "init(1)")) is True


def test_failed_wait_acquires_nothing():
    """A test_wait that returns False is not an acquire (mbarrier.test_wait: the acquire pattern
    is a wait that returns True): the wait reads the release arrive's write (the relaxed load
    before it did, and coherence keeps the wait there), yet the data may be stale."""
    src = """
.shared .u32 x = 0;
.shared .b64 bar = mbarrier.init(%N);
.thread A .cta 0 { st.shared.u32 [x], 1; mbarrier.arrive.shared.b64 _, [bar]; }
.thread C .cta 0 {
    ld.relaxed.cta.shared.b64 %w, [bar];
    mbarrier.test_wait.parity.shared.b64 %p, [bar], 0;
    ld.shared.u32 %r0, [x];
}
exists (C:%w == %W && C:%p == %P && C:%r0 == 0)
"""
    pending1 = (2 << 16) | 1
    assert verdict(src.replace("%N", "2").replace("%W", str(pending1)).replace("%P", "0")) is True
    done = (1 << 48) | (1 << 16) | 1
    assert verdict(src.replace("%N", "1").replace("%W", str(done)).replace("%P", "1")) is False


def test_arrive_drop_lowers_the_expected_count():
    """Phase 0 needs 2 arrivals (one is an arrive_drop); phase 1 then needs only 1."""
    src = """
.shared .b64 bar = mbarrier.init(2);
.thread A .cta 0 { mbarrier.arrive_drop.shared.b64 _, [bar]; }
.thread B .cta 0 {
    mbarrier.arrive.shared.b64 _, [bar];
W:  mbarrier.try_wait.parity.shared.b64 %p, [bar], 0;
    @!%p bra W;
    mbarrier.arrive.shared.b64 _, [bar];
    mbarrier.test_wait.parity.shared.b64 %q, [bar], 1;
}
exists (B:%q == 1)
"""
    assert verdict(src, both=False) is True
    assert verdict(src.replace("arrive_drop", "arrive"), both=False) is False


def test_expect_tx_and_complete_tx_instructions():
    """mbarrier.expect_tx raises the tx-count; the phase waits for the complete_tx."""
    src = """
.shared .b64 bar = mbarrier.init(1);
.thread A .cta 0 {
    mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 8;
    mbarrier.arrive.shared.b64 _, [bar];
}
.thread B .cta 0 { %CT% }
.thread C .cta 0 { mbarrier.test_wait.parity.shared.b64 %p, [bar], 0; }
exists (C:%p == 1)
"""
    assert verdict(src.replace("%CT%", "")) is False
    full = "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 8;"
    assert verdict(src.replace("%CT%", full), both=False) is True
    half = "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 4;"
    assert verdict(src.replace("%CT%", half), both=False) is False


def test_remote_arrive_through_mapa():
    """A peer CTA arrives on this CTA's mbarrier (mapa, .shared::cluster, release.cluster); the
    owner's acquire.cluster wait synchronizes with it; a .cta wait is not morally strong with a
    peer CTA's arrive, so it does not."""
    src = """
.global .u32 x = 0;
.shared .b64 bar = mbarrier.init(1);
.thread P .cluster 0 .cta 1 {
    st.global.u32 [x], 1;
    mapa.shared::cluster.u64 %rd0, bar, 0;
    mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%rd0];
}
.thread O .cluster 0 .cta 0 {
W:  mbarrier.try_wait.parity.acquire.%S.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.global.u32 %r0, [x];
}
exists (O:%r0 == 0)
"""
    assert verdict(src.replace("%S", "cluster")) is False
    assert verdict(src.replace("%S", "cta")) is True


def test_mbarrier_word_encoding():
    assert decode(init_count(3)) == {"phase": 0, "pending": 3, "expected": 3, "tx": 0}


def test_mbarrier_init_instruction_before_cta_barrier():
    p = ptxmm.load(ROOT / "examples" / "hopper" / "tma-load-mbarrier.ptx")
    kinds = [type(i).__name__ for i in p.threads[0].instrs]
    assert kinds == ["MBarrier", "Barrier", "MBarrier", "BulkCopy"]


def test_mbarrier_arrivals_are_atomic_across_scopes():
    """A peer CTA's .cluster arrive (2 arrivals) and the owner CTA's .cta arrive (1) are not
    morally strong, yet no arrival is lost (MBarrier-atomicity): once O's arrive has read the
    initial word, P's arrive comes after it and completes the phase, so O never reads a word
    with one arrival pending and phase 0 (what P's arrive writes if it also read the initial
    word)."""
    src = """
.shared .b64 bar = mbarrier.init(3);
.thread P .cluster 0 .cta 1 {
    mapa.shared::cluster.u64 %rd0, bar, 0;
    mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%rd0], 2;
}
.thread O .cluster 0 .cta 0 {
    mbarrier.arrive.relaxed.cta.shared::cta.b64 %s, [bar];
    ld.relaxed.cta.shared.b64 %w, [bar];
}
exists (O:%s == 196611 && O:%w == %W)
"""
    assert verdict(src.replace("%W", str((3 << 16) | 1))) is False
    assert verdict(src.replace("%W", str((1 << 48) | (3 << 16) | 3))) is True


def test_relaxed_wait_then_acquire_fence():
    """try_wait.relaxed acquires nothing; followed by fence.acquire it forms an acquire pattern
    (8.8: a strong read followed in program order by an acquire fence), as in the ISA's
    examples of mbarrier.try_wait.relaxed."""
    src = (ROOT / "examples" / "hopper" / "tma-load-mbarrier.ptx").read_text()
    relaxed = src.replace("try_wait.parity.acquire.cta", "try_wait.parity.relaxed.cta")
    assert verdict(relaxed) is True
    load = "    ld.shared.u32 %r0, [s];"
    fenced = relaxed.replace(load, "    fence.acquire.cta;\n" + load)
    assert verdict(fenced) is False
