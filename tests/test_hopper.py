"""Hopper synchronization (docs/hopper.md): barrier.cluster, mbarrier, cp.async.bulk and the async
proxy. Every example of examples/hopper/ gets its expected verdict from both engines, with equal
outcome sets; then each rule on a small program of its own (both engines), the IR of every
instruction form, and the located errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

import ptxmm
from ptxmm.errors import PtxmmError, SemanticError, UnsupportedError
from ptxmm.ir.mbarrier import decode, init_count
from ptxmm.ir.program import BulkCopy, BulkGroup, ClusterBarrier, Mapa, MBarrier, ProxyFence
from ptxmm.semantics.events import build

EXAMPLES = sorted((ROOT / "examples" / "hopper").glob("*.ptx"))
# every example with both engines: the brute-force engine's model-guarded pruning (issue 27,
# src/ptxmm/engines/prune.py) brings the largest (PipelineTmaAsync, 44 events) within seconds;
# tests/test_hopper_brute.py compares their findings as well


def test_examples_are_there():
    assert len(EXAMPLES) >= 8


def _agree(prog, model: str = "ptx"):
    z = ptxmm.check(prog, model, engine="z3", flags=False)
    b = ptxmm.check(prog, model, engine="brute", flags=False)
    assert z.outcome_set == b.outcome_set, (z.outcome_set, b.outcome_set)
    assert z.holds == b.holds
    return z


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_verdict_both_engines(path: Path):
    prog = ptxmm.load(path)
    assert prog.expect is not None
    assert _agree(prog).holds == prog.expect


def _verdict(src: str, both: bool = True) -> bool:
    """The verdict of ``src`` (both engines, equal outcome sets; ``both=False``: Z3 only, for
    the programs whose brute-force search takes seconds)."""
    prog = ptxmm.parse(src, "t.ptx")
    return (_agree(prog) if both else ptxmm.check(prog, flags=False)).holds


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
    assert _verdict(MB2.replace("%WAIT%", "")) is False


def test_wait_on_state_returned_by_arrive():
    """test_wait with the state an arrive returned: True once that phase completed."""
    src = MB2.replace("%WAIT%", "V: mbarrier.test_wait.shared.b64 %q, [bar], %s; @!%q bra V; "
                      "ld.shared.u32 %r2, [x];").replace("exists (C:%r0 == 0 || C:%r1 == 0)",
                                                        "exists (B:%r2 == 0)")
    assert _verdict(src) is False


def test_relaxed_arrive_does_not_release():
    src = MB2.replace("mbarrier.arrive.release.cta", "mbarrier.arrive.relaxed.cta").replace("%WAIT%", "")
    assert _verdict(src.replace("C:%r0 == 0 || C:%r1 == 0", "C:%r0 == 0")) is True
    fenced = src.replace("st.shared.u32 [x], 1;", "st.shared.u32 [x], 1; fence.acq_rel.cta;")
    assert _verdict(fenced.replace("C:%r0 == 0 || C:%r1 == 0", "C:%r0 == 0")) is False


def test_one_arrival_does_not_complete_a_phase_of_two():
    src = """
.shared .b64 bar = mbarrier.init(2);
.thread A .cta 0 { mbarrier.arrive.shared.b64 _, [bar]; }
.thread C .cta 0 { mbarrier.test_wait.parity.shared.b64 %p, [bar], 0; }
exists (C:%p == 1)
"""
    assert _verdict(src) is False
    assert _verdict(src.replace("init(2)", "init(1)")) is True


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
    assert _verdict(src.replace("%N", "2").replace("%W", str(pending1)).replace("%P", "0")) is True
    done = (1 << 48) | (1 << 16) | 1
    assert _verdict(src.replace("%N", "1").replace("%W", str(done)).replace("%P", "1")) is False


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
    assert _verdict(src, both=False) is True
    assert _verdict(src.replace("arrive_drop", "arrive"), both=False) is False


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
    assert _verdict(src.replace("%CT%", "")) is False
    full = "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 8;"
    assert _verdict(src.replace("%CT%", full), both=False) is True
    half = "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 4;"
    assert _verdict(src.replace("%CT%", half), both=False) is False


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
    assert _verdict(src.replace("%S", "cluster")) is False
    assert _verdict(src.replace("%S", "cta")) is True


def test_mbarrier_word_encoding():
    assert decode(init_count(3)) == {"phase": 0, "pending": 3, "expected": 3, "tx": 0}


def test_mbarrier_init_instruction_before_cta_barrier():
    p = ptxmm.load(ROOT / "examples" / "hopper" / "tma-load-mbarrier.ptx")
    kinds = [type(i).__name__ for i in p.threads[0].instrs]
    assert kinds == ["MBarrier", "Barrier", "MBarrier", "BulkCopy"]


# ----- cluster barriers --------------------------------------------------------------------------


def test_cluster_wait_without_arrive_hangs():
    src = """
.global .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { barrier.cluster.wait; st.global.u32 [x], 1; }
.thread T1 .cluster 0 .cta 1 { barrier.cluster.arrive; barrier.cluster.wait; }
exists (x == 1)
"""
    assert _verdict(src) is False  # T0 waits for itself: no execution writes x
    assert _verdict(src.replace("{ barrier.cluster.wait; st", "{ barrier.cluster.arrive; "
                                "barrier.cluster.wait; st")) is True


def test_cluster_barrier_deadlock_is_no_execution():
    src = """
.global .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { barrier.cluster.arrive; barrier.cluster.wait; barrier.cluster.arrive;
    barrier.cluster.wait; st.global.u32 [x], 1; }
.thread T1 .cluster 0 .cta 1 { barrier.cluster.arrive; barrier.cluster.wait; }
exists (x == 1)
"""
    assert _verdict(src) is True  # T1 exits after phase 0: it is not waited for in phase 1


def test_cta_fence_before_relaxed_arrive_does_not_reach_a_peer_cta():
    src = (ROOT / "examples" / "hopper" / "cluster-dsmem-fence-relaxed.ptx").read_text()
    assert _verdict(src.replace("fence.acq_rel.cluster", "fence.acq_rel.cta")) is True


def test_cluster_barriers_of_different_clusters_do_not_synchronize():
    src = """
.global .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { st.global.u32 [x], 1; barrier.cluster.arrive; barrier.cluster.wait; }
.thread T1 .cluster 1 .cta 1 { barrier.cluster.arrive; barrier.cluster.wait; ld.global.u32 %r0, [x]; }
exists (T1:%r0 == 0)
"""
    assert _verdict(src) is True


# ----- the async proxy ---------------------------------------------------------------------------


def test_async_fence_of_another_state_space_does_not_help():
    src = (ROOT / "examples" / "hopper" / "bulk-store-fence.ptx").read_text()
    assert _verdict(src.replace("fence.proxy.async.shared::cta", "fence.proxy.async.global")) is True
    assert _verdict(src.replace("fence.proxy.async.shared::cta", "fence.proxy.async")) is False


def test_bulk_wait_group_orders_the_copy_before_later_reads():
    src = (ROOT / "examples" / "hopper" / "bulk-store-fence.ptx").read_text()
    nowait = src.replace("cp.async.bulk.wait_group 0;", "")
    assert _verdict(nowait.replace("exists (T0:%r0 != 1)", "exists (T0:%r0 == 7)")) is True
    assert _verdict(src.replace("exists (T0:%r0 != 1)", "exists (T0:%r0 == 7)")) is False
    read = src.replace("wait_group 0", "wait_group.read 0")
    assert _verdict(read.replace("exists (T0:%r0 != 1)", "exists (T0:%r0 == 7)")) is True


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
    assert _verdict(src, both=False) is True
    assert _verdict(src.replace("T1:%r0 == 0 || ", ""), both=False) is False


def test_async_events_are_not_in_program_order():
    eg = build(ptxmm.load(ROOT / "examples" / "hopper" / "tma-load-mbarrier.ptx"))
    agents = [e for e in eg.events if e.agent >= 0]
    assert [e.kind for e in agents] == ["R", "W", "F", "R", "W"]
    assert {"ASYNC", "AOP"} <= agents[0].tags and "GEN" in agents[3].tags
    assert agents[4].sem == "release" and agents[4].scope == "cluster"


# ----- syntax: instruction forms and their IR ------------------------------------------------------

DECL = ".shared .b64 bar;\n.shared .u32 s = 0;\n.global .u32 g = 0;\n"


def _ins(text: str):
    src = DECL + f".thread T0 .cluster 0 .cta 0 {{ .reg .b64 %st = 0; .reg .u32 %c = 1;\n{text};\n}}\n" \
        ".thread T1 .cluster 0 .cta 1 { }\nexists (g == 0)\n"
    return ptxmm.parse(src, "p.ptx").threads[0].instrs[0]


@pytest.mark.parametrize("text,want", [
    ("barrier.cluster.arrive", ClusterBarrier(kind="arrive", sem="release")),
    ("barrier.cluster.arrive.relaxed.aligned", ClusterBarrier(kind="arrive", sem="relaxed", aligned=True)),
    ("barrier.cluster.arrive.release", ClusterBarrier(kind="arrive", sem="release")),
    ("barrier.cluster.wait.acquire.aligned", ClusterBarrier(kind="wait", sem="acquire", aligned=True)),
    ("barrier.cluster.wait", ClusterBarrier(kind="wait", sem="acquire")),
    ("fence.proxy.async", ProxyFence(kind="async")),
    ("fence.proxy.async.global", ProxyFence(kind="async", space="global")),
    ("fence.proxy.async.shared::cta", ProxyFence(kind="async", space="shared")),
    ("fence.proxy.async.shared::cluster", ProxyFence(kind="async", space="shared")),
    ("cp.async.bulk.commit_group", BulkGroup(kind="commit")),
    ("cp.async.bulk.wait_group.read 1", BulkGroup(kind="wait", n=1, read=True)),
])
def test_instruction_ir(text, want):
    got = _ins(text)
    assert type(got) is type(want)
    for f in ("kind", "sem", "aligned", "space", "n", "read"):
        if hasattr(want, f):
            assert getattr(got, f) == getattr(want, f), f


@pytest.mark.parametrize("text,fields", [
    ("mbarrier.init.shared::cta.b64 [bar], 2", dict(op="init", sem="weak")),
    ("mbarrier.init.shared.b64 [bar], %c", dict(op="init")),
    ("mbarrier.arrive.shared.b64 %st, [bar]", dict(op="arrive", sem="release", scope="cta")),
    ("mbarrier.arrive.relaxed.cluster.shared::cta.b64 %st, [bar], 2", dict(op="arrive", sem="relaxed",
                                                                         scope="cluster")),
    ("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 4", dict(op="arrive", dst=None)),
    ("mbarrier.arrive_drop.shared.b64 _, [bar]", dict(op="arrive_drop")),
    ("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 4", dict(op="expect_tx", sem="relaxed")),
    ("mbarrier.complete_tx.shared::cta.b64 [bar], 4", dict(op="complete_tx")),
    ("mbarrier.test_wait.shared.b64 %p, [bar], %st", dict(op="test_wait", parity=False, sem="acquire")),
    ("mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 %p, [bar], 1",
     dict(op="try_wait", parity=True, sem="relaxed", scope="cluster")),
])
def test_mbarrier_ir(text, fields):
    got = _ins(text)
    assert isinstance(got, MBarrier)
    for k, v in fields.items():
        assert getattr(got, k) == v, k


def test_bulk_copy_and_mapa_ir():
    c = _ins("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 4, [bar]")
    assert isinstance(c, BulkCopy) and (c.dst_space, c.src_space) == ("shared", "global")
    assert c.mbar is not None
    c = _ins("cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4")
    assert isinstance(c, BulkCopy) and c.mbar is None and c.dst_space == "global"
    m = _ins("mapa.shared::cluster.u64 %rd0, s, 1")
    assert isinstance(m, Mapa)


@pytest.mark.parametrize("text,cls,words", [
    ("cp.async.bulk.global.shared::cta.bulk_group [g], [s], 8", PtxmmError, "of 8 bytes"),
    ("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [g], [bar]",
     UnsupportedError, "tensor.3d"),
    ("cp.async.cg.shared.global [s], [g], 16", UnsupportedError, "cp.async.cg"),
    ("cp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [g], [s], 4", PtxmmError,
     "bulk_group"),
    ("mbarrier.arrive.noComplete.shared.b64 %st, [bar], 1", UnsupportedError, "noComplete"),
    ("mbarrier.pending_count.b64 %r1, %st", UnsupportedError, "pending_count"),
    ("mbarrier.try_wait.parity.shared::cluster.b64 %p, [bar], 0", PtxmmError, "shared::cluster"),
    ("mbarrier.arrive.shared.global.b64 %st, [bar]", PtxmmError, "b64"),
    ("barrier.cluster.sync", PtxmmError, "arrive or .wait"),
    ("barrier.cluster.wait.release", PtxmmError, "release"),
    ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [g], [s], 128",
     UnsupportedError, "tensormap.cp_fenceproxy"),
])
def test_rejected_forms(text, cls, words):
    with pytest.raises(cls) as e:
        _ins(text)
    assert words in str(e.value)
    assert e.value.pos is not None and e.value.pos.line == 5


@pytest.mark.parametrize("decl,words", [
    (".global .b64 b = mbarrier.init(1);", "is a .shared .b64 location"),
    (".shared .u32 b = mbarrier.init(1);", "is a .shared .b64 location"),
    (".shared .b64 b = mbarrier.init(0);", "out of range"),
    (".shared .b64 b = barrier.init(1);", "unknown initialiser"),
])
def test_mbarrier_declaration_errors(decl, words):
    with pytest.raises(PtxmmError) as e:
        ptxmm.parse(decl + "\n.thread T0 { }\nexists (true)\n", "d.ptx")
    assert words in str(e.value) and e.value.pos.line == 1


@pytest.mark.parametrize("body,cls,words", [
    ("mbarrier.arrive.shared.b64 _, [s];", SemanticError, "must be a .shared .b64 location"),
    ("mapa.shared::cluster.u64 %rd0, bar, 0; mbarrier.try_wait.parity.shared.b64 %p, [%rd0], 0;",
     UnsupportedError, "another CTA's mbarrier"),
    ("mapa.shared::cluster.u64 %rd0, bar, 3;", SemanticError, "ranks 0..1"),
    ("mapa.shared::cluster.u64 %rd0, g, 0;", SemanticError, "not a .shared location"),
    ("cp.async.bulk.global.shared::cta.bulk_group [s], [g], 4;", SemanticError, "must be a .shared"),
    ("ld.global.u32 %r, [g]; setp.eq.u32 %q, %r, 0; @%q barrier.cluster.arrive;", UnsupportedError,
     "predicated"),
])
def test_event_building_errors(body, cls, words):
    src = DECL + f".thread T0 .cluster 0 .cta 0 {{ .reg .pred %p = 0; {body} }}\n" \
        ".thread T1 .cluster 0 .cta 1 { }\nexists (g == 0)\n"
    with pytest.raises(cls) as e:
        build(ptxmm.parse(src, "e.ptx"))
    assert words in str(e.value)


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
    assert _verdict(src.replace("%W", str((3 << 16) | 1))) is False
    assert _verdict(src.replace("%W", str((1 << 48) | (3 << 16) | 3))) is True


def test_relaxed_wait_then_acquire_fence():
    """try_wait.relaxed acquires nothing; followed by fence.acquire it forms an acquire pattern
    (8.8: a strong read followed in program order by an acquire fence), as in the ISA's
    examples of mbarrier.try_wait.relaxed."""
    src = (ROOT / "examples" / "hopper" / "tma-load-mbarrier.ptx").read_text()
    relaxed = src.replace("try_wait.parity.acquire.cta", "try_wait.parity.relaxed.cta")
    assert _verdict(relaxed) is True
    load = "    ld.shared.u32 %r0, [s];"
    fenced = relaxed.replace(load, "    fence.acquire.cta;\n" + load)
    assert _verdict(fenced) is False
