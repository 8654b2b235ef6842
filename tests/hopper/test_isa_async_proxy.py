"""The async proxy as the PTX ISA states it (issue 27, D1–D4): each program the issue names gives
the ISA's verdict with both engines, and each CHOICE of models/ptx-async.cat has a test showing
what it decides (the other reading gives the other verdict)."""

from __future__ import annotations

import pytest
from support import agree

import ptxmm
from ptxmm.semantics.builder import Builder, build


def _verdict(src: str, both: bool = True) -> bool:
    prog = ptxmm.parse(src, "t.ptx")
    return (agree(prog) if both else ptxmm.check(prog, engine="z3", flags=False)).holds


# ----- D1: cp.async.bulk.wait_group.read orders the copy's source read before later writes ------

D1 = """
.global .u32 g = 0;
.shared .u32 s = 1;
.thread T0 .cta 0 {
    cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4;
    cp.async.bulk.commit_group;
    %READ%
    st.shared.u32 [s], 2;
    cp.async.bulk.wait_group 0;
    ld.global.u32 %r0, [g];
}
exists (T0:%r0 == 2)
"""


def test_d1_wait_group_read_orders_the_source_read_before_later_writes():
    """ISA (cp.async.bulk.wait_group): .read waits until the copies "have completed … the reading
    from their source locations": the store after it cannot be what the copy read. Without the
    wait the copy may read the later 2 (the reuse race of a TMA-store epilogue)."""
    assert _verdict(D1.replace("%READ%", "cp.async.bulk.wait_group.read 0;")) is False
    assert _verdict(D1.replace("%READ%", "")) is True


def test_d1_wait_group_read_does_not_wait_for_the_write():
    """.read waits for the reads only: a generic load of the destination after it (and no full
    wait) may still see the old value."""
    src = D1.replace("%READ%", "cp.async.bulk.wait_group.read 0;").replace(
        "    cp.async.bulk.wait_group 0;\n", "").replace("exists (T0:%r0 == 2)", "exists (T0:%r0 == 0)")
    assert _verdict(src) is True


def test_d1_wait_group_read_n_leaves_the_newest_groups_pending():
    """wait_group.read 1 with one group committed waits for nothing."""
    assert _verdict(D1.replace("%READ%", "cp.async.bulk.wait_group.read 1;")) is True


# ----- D2: a wait_group with nothing pending is no proxy fence ----------------------------------

D2 = """
.global .u32 g = 7;
.shared .u32 s = 0;
.thread T0 .cta 0 {
    st.shared.u32 [s], 1;
    %FENCE%
    cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    ld.global.u32 %r0, [g];
}
exists (T0:%r0 == 0)
"""


def test_d2_wait_group_with_nothing_pending_is_no_proxy_fence():
    """ISA (async proxy): "The completion of a cp{.reduce}.async.bulk operation is followed by an
    implicit generic-async proxy fence"; a wait with no group pending completes nothing. Allowed,
    like examples/hopper/bulk-store-no-fence.ptx; fence.proxy.async in its place forbids it."""
    assert _verdict(D2.replace("%FENCE%", "cp.async.bulk.wait_group 0;")) is True
    assert _verdict(D2.replace("%FENCE%", "cp.async.bulk.wait_group.read 0;")) is True
    assert _verdict(D2.replace("%FENCE%", "fence.proxy.async.shared::cta;")) is False


def test_d2_a_completed_copy_fences_only_through_its_own_completion():
    """An earlier copy (of another location) that completed before the store orders nothing for
    the store either: its implicit fence precedes the store."""
    src = D2.replace("%FENCE%", "").replace(
        "    st.shared.u32 [s], 1;\n",
        "    cp.async.bulk.global.shared::cta.bulk_group [h], [t], 4;\n    cp.async.bulk.commit_group;\n"
        "    cp.async.bulk.wait_group 0;\n    st.shared.u32 [s], 1;\n")
    src = ".global .u32 h = 0;\n.shared .u32 t = 0;\n" + src
    assert _verdict(src, both=False) is True


# ----- D3: proxy-preserved base causality is a subset of base causality --------------------------

D3 = """
.global .u32 g = 42;
.global .u32 h = 9;
.shared .u32 s = 0;
.shared .u32 d = 0;
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cta 0 {
    st.shared.u32 [s], 1;
    mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 _, [bar], 4;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [g], 4, [bar];
}
.thread T1 .cta 0 {
W:  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    %READER%
}
exists (T1:%r0 == 0)
"""
COPY = ("cp.async.bulk.global.shared::cta.bulk_group [h], [s], 4;\n    cp.async.bulk.commit_group;\n"
        "    cp.async.bulk.wait_group 0;\n    ld.global.u32 %r0, [h];")


def test_d3_issue_edge_does_not_leak_through_the_implicit_fence():
    """ISA 8.9.1.1: the complete-tx "does not transitively establish ordering with respect to prior
    instructions from the issuing thread"; 8.9.5: X precedes Y in proxy-preserved base causality
    "if X precedes Y in base causality order, and …". The store is not bco-before T1's bulk copy of
    s, so the copy may read the stale 0 — as a generic load of s may. With a release arrive, the
    store is released to T1 and, T1 having no proxy fence, the async read still may miss it."""
    assert _verdict(D3.replace("%READER%", COPY), both=False) is True
    assert _verdict(D3.replace("%READER%", "ld.shared.u32 %r0, [s];")) is True
    released = D3.replace("arrive.expect_tx.relaxed", "arrive.expect_tx.release")
    assert _verdict(released.replace("%READER%", "ld.shared.u32 %r0, [s];")) is False
    fenced = released.replace("    st.shared.u32 [s], 1;\n", "    st.shared.u32 [s], 1;\n"
                              "    fence.proxy.async.shared::cta;\n")
    assert _verdict(fenced.replace("%READER%", COPY), both=False) is False


# ----- D4: a copy into another CTA is performed in the destination CTA ----------------------------

D4 = """
.global .u32 g = 42;
.global .u32 h = 9;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(1);
.thread P .cluster 0 .cta 0 {
    mapa.shared::cluster.u64 %rd1, s, 1;
    mapa.shared::cluster.u64 %rd2, bar, 1;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [g], 4, [%rd2];
}
.thread C .cluster 0 .cta 1 {
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 4;
W:  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    %READER%
}
exists (C:%r0 != 42)
"""
TMA_STORE = ("cp.async.bulk.global.shared::cta.bulk_group [h], [s], 4;\n    cp.async.bulk.commit_group;\n"
             "    cp.async.bulk.wait_group 0;\n    ld.global.u32 %r0, [h];")


@pytest.mark.parametrize("reader", ["ld.shared.u32 %r0, [s];", TMA_STORE], ids=["load", "tma-store"])
def test_d4_remote_copy_is_performed_in_the_destination_cta(reader, monkeypatch):
    """CHOICE (models/ptx-async.cat, D4): the write, implicit fence and complete-tx of a copy into
    CTA 1 are performed in CTA 1, so CTA 1's .cta arrive and wait (CUTLASS's defaults) observe it:
    forbidden, for a generic load of s and for CTA 1's own TMA store of s. The other reading — the
    issuing CTA performs them — allows both stale outcomes."""
    src = D4.replace("%READER%", reader)
    assert _verdict(src, both=reader != TMA_STORE) is False
    monkeypatch.setattr(Builder, "owner", lambda self, t, rank: None)
    assert _verdict(src, both=False) is True


def test_d4_attribution_follows_the_mbarrier_and_the_destination():
    """A copy into the issuer's own CTA has no other CTA (Event.at None); the remote copy's read
    of the global source stays in the issuing CTA, its write, fence and complete-tx in CTA 1."""
    eg = build(ptxmm.parse(D4.replace("%READER%", "ld.shared.u32 %r0, [s];"), "d4.ptx"))
    agent = [e for e in eg.events if e.agent >= 0]
    assert [e.kind for e in agent] == ["R", "W", "F", "R", "W"]
    assert agent[0].at is None
    assert {e.at.cta for e in agent[1:]} == {1}
    assert all(e.at is None for e in eg.events if e.agent < 0)



# ----- idioms: multicast, the cluster init fence ------------------------------------------------

MC = """
.global .u32 g = 42;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(1);
.thread P .cluster 0 .cta 0 {
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
        [s], [g], 4, [bar], %MASK%;
}
.thread C1 .cluster 0 .cta 1 {
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 4;
W:  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [s];
}
exists (C1:%r0 != 42)
"""


def test_multicast_writes_and_completes_in_each_cta_of_the_mask():
    """PTX ISA (cp.async.bulk, .multicast::cluster): one read of the source, then per CTA of the
    mask a write at dst's offset, its implicit fence and a complete-tx on the mbarrier at mbar's
    offset, performed in that CTA."""
    eg = build(ptxmm.parse(MC.replace("%MASK%", "3"), "mc.ptx"))
    agent = [e for e in eg.events if e.agent >= 0]
    assert [e.kind for e in agent] == ["R", "W", "F", "R", "W", "W", "F", "R", "W"]
    assert [e.loc for e in agent if e.kind == "W" and "ASYNC" in e.tags] == ["s@0.0.0", "s@0.0.1"]
    assert [e.at and e.at.cta for e in agent] == [None, None, None, None, None, 1, 1, 1, 1]
    assert _verdict(MC.replace("%MASK%", "2"), both=False) is False  # CTA 1 alone


def test_multicast_mask_must_name_ctas_of_the_cluster():
    from ptxmm.errors import SemanticError, UnsupportedError
    with pytest.raises(SemanticError, match="ctaMask"):
        build(ptxmm.parse(MC.replace("%MASK%", "4"), "mc.ptx"))
    with pytest.raises(UnsupportedError, match="ctaMask held in a register"):
        ptxmm.parse(MC.replace("%MASK%", "%rs0"), "mc.ptx")


INIT = """
.global .u32 x = 0;
.shared .b64 bar;
.thread T0 .cluster 0 .cta 0 {
    st.global.u32 [x], 1;
    mbarrier.init.shared::cta.b64 [bar], 1;
    %FENCE%
    barrier.cluster.arrive.relaxed.aligned;
    barrier.cluster.wait.aligned;
}
.thread T1 .cluster 0 .cta 1 {
    barrier.cluster.arrive.relaxed.aligned;
    barrier.cluster.wait.aligned;
    ld.global.u32 %r0, [x];
}
exists (T1:%r0 == 0)
"""


def test_mbarrier_init_fence_releases_only_inits():
    """fence.mbarrier_init releases the thread's prior mbarrier.init only (membar/fence): a
    store before it is not published by the relaxed arrive; fence.release.cluster publishes it."""
    assert _verdict(INIT.replace("%FENCE%", "fence.mbarrier_init.release.cluster;")) is True
    assert _verdict(INIT.replace("%FENCE%", "fence.release.cluster;")) is False


def test_mbarrier_init_fence_ir_and_form():
    from ptxmm.errors import ParseError
    from ptxmm.ir.program import Fence
    p = ptxmm.parse(INIT.replace("%FENCE%", "fence.mbarrier_init.release.cluster;"), "i.ptx")
    f = p.threads[0].instrs[2]
    assert isinstance(f, Fence) and (f.sem, f.scope, f.restrict) == ("release", "cluster", "mbarrier_init")
    with pytest.raises(ParseError, match="fence.mbarrier_init.release.cluster"):
        ptxmm.parse(INIT.replace("%FENCE%", "fence.mbarrier_init.release.cta;"), "i.ptx")


def test_cluster_ctarank_is_the_rank_in_cta_order():
    """%cluster_ctarank: the CTA's rank in its cluster, ranks in the order of the .cta numbers
    (the same ranks mapa uses); it needs no write and no initial value."""
    src = """
.global .u32 x = 0;
.thread T0 .cluster 0 .cta 5 { mov.u32 %r0, %cluster_ctarank; }
.thread T1 .cluster 0 .cta 3 { mov.u32 %r0, %cluster_ctarank; }
.thread T2 .cluster 1 .cta 7 { mov.u32 %r0, %cluster_ctarank; }
exists (T0:%r0 == 1 && T1:%r0 == 0 && T2:%r0 == 0)
"""
    res = ptxmm.check(ptxmm.parse(src, "r.ptx"), flags=False)
    assert res.holds is True and len(res.outcome_set) == 1


# ----- Ampere cp.async ------------------------------------------------------------------------

AMP = """
.global .u32 g = 42;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(%N%);
.thread T0 .cta 0 {
    cp.async.ca.shared.global [s], [g], 4;
    %ARRIVE%
}
.thread T1 .cta 0 {
W:  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [s];
}
exists (T1:%r0 != 42)
"""


def test_cp_async_mbarrier_arrive_without_noinc_raises_the_pending_count_first():
    """PTX ISA (cp.async.mbarrier.arrive): without .noinc the pending count is incremented before
    the asynchronous arrive-on, so with an expected count of 1 the arrive-on alone never
    completes the phase (no execution passes the wait), and the thread's own arrive does."""
    alone = AMP.replace("%N%", "1").replace("%ARRIVE%", "cp.async.mbarrier.arrive.shared.b64 [bar];")
    res = ptxmm.check(ptxmm.parse(alone, "a.ptx"), flags=False)
    assert res.outcome_set == set() or not res.outcome_set
    both = alone.replace("cp.async.mbarrier.arrive.shared.b64 [bar];",
                         "cp.async.mbarrier.arrive.shared.b64 [bar];\n    "
                         "mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];")
    assert _verdict(both) is False
    noinc2 = AMP.replace("%N%", "2").replace("%ARRIVE%", "cp.async.mbarrier.arrive.noinc.shared.b64 [bar];\n"
                                             "    mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];")
    assert _verdict(noinc2) is False


def test_cp_async_wait_all_commits_and_waits():
    src = """
.global .u32 g = 42;
.shared .u32 s = 0;
.thread T0 .cta 0 {
    cp.async.ca.shared.global [s], [g], 4;
    %WAIT%
    ld.shared.u32 %r0, [s];
}
exists (T0:%r0 != 42)
"""
    assert _verdict(src.replace("%WAIT%", "cp.async.wait_all;")) is False
    assert _verdict(src.replace("%WAIT%", "cp.async.wait_group 0;")) is True  # nothing committed
    assert _verdict(src.replace("%WAIT%", "")) is True


def test_cp_async_ir():
    from ptxmm.errors import UnsupportedError
    from ptxmm.ir.program import CpAsync, CpAsyncGroup
    body = ("cp.async.ca.shared.global [s], [g], 4; cp.async.commit_group; cp.async.wait_group 1; "
            "cp.async.wait_all; cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];")
    p = ptxmm.parse(".global .u32 g = 0;\n.shared .u32 s = 0;\n.shared .b64 bar;\n"
                    f".thread T0 {{ {body} }}\nexists (g == 0)\n", "c.ptx")
    i = p.threads[0].instrs
    assert isinstance(i[0], CpAsync) and i[0].src.base.name == "g"
    assert [(x.kind, x.n, x.noinc) for x in i[1:]] == [("commit", 0, False), ("wait", 1, False),
                                                       ("wait_all", 0, False), ("arrive", 0, True)]
    assert all(isinstance(x, CpAsyncGroup) for x in i[1:])
    with pytest.raises(UnsupportedError, match="cp.async.cg"):
        ptxmm.parse(".global .u32 g = 0;\n.shared .u32 s = 0;\n.thread T0 { cp.async.cg.shared.global "
                    "[s], [g], 16; }\nexists (g == 0)\n", "c.ptx")


# ----- every new form assembles (ptxas, where installed) --------------------------------------

NEW_FORMS = [
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
    "[s], [g], 4, [bar], 3",
    "fence.mbarrier_init.release.cluster",
    "mov.u32 %r1, %cluster_ctarank",
    "cp.async.ca.shared.global [s], [g], 4",
    "cp.async.commit_group",
    "cp.async.wait_group 1",
    "cp.async.wait_all",
    "cp.async.mbarrier.arrive.shared.b64 [bar]",
    "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar]",
    "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [s], 5, [bar]",
    "st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.u32 [s], %r1, [bar]",
    "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [s], 1, [bar]",
]


@pytest.mark.parametrize("form", NEW_FORMS)
def test_new_forms_parse_and_assemble(form, tmp_path):
    """ptxmm reads each new form; ptxas (sm_90a, .version 8.6) assembles it (a bulk copy with 16
    bytes: ptxas wants a multiple of 16, the litmus copy is the one 4-byte word)."""
    import shutil
    import subprocess
    ptxmm.parse(".global .u32 g = 0;\n.shared .u32 s = 0;\n.shared .b64 bar;\n"
                f".thread T0 .cluster 0 .cta 0 {{ .reg .u32 %r1 = 1; {form}; }}\n"
                ".thread T1 .cluster 0 .cta 1 { }\n"
                "exists (g == 0)\n", "f.ptx")
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas not on PATH")
    mod = (".version 8.6\n.target sm_90a\n.address_size 64\n.global .u32 g;\n.shared .u32 s;\n"
           ".shared .b64 bar;\n.visible .entry k()\n{\n  .reg .u32 %r<2>;\n"
           f"  {form.replace('[g], 4, [bar]', '[g], 16, [bar]')};\n  ret;\n}}\n")
    (tmp_path / "k.ptx").write_text(mod)
    r = subprocess.run([ptxas, "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_st_async_events_are_performed_in_the_target_cta():
    """st.async: the agent's weak generic write and the complete-tx (release, .cluster, 4 bytes)
    are in the CTA that owns the word and the mbarrier; red.async's read-modify-write is
    relaxed at .cluster scope."""
    from pathlib import Path

    from conftest import ROOT
    eg = build(ptxmm.load(Path(ROOT) / "examples" / "hopper" / "st-async-remote.ptx"))
    agent = [e for e in eg.events if e.agent >= 0]
    assert [e.kind for e in agent] == ["W", "R", "W"]
    assert {e.at.cta for e in agent} == {1} and "GEN" in agent[0].tags and "ASYNC" not in agent[0].tags
    assert agent[2].sem == "release" and agent[2].scope == "cluster"
    eg = build(ptxmm.load(Path(ROOT) / "examples" / "hopper" / "red-async-remote.ptx"))
    red = [e for e in eg.events if e.agent >= 0 and e.loc.startswith("x")]
    assert [(e.kind, e.sem, e.scope) for e in red][:2] == [("R", "relaxed", "cluster"),
                                                           ("W", "relaxed", "cluster")]
