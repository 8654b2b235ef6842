"""barrier.cluster (docs/hopper.md): arrive and wait across the CTAs of a cluster, hangs and deadlocks."""

from __future__ import annotations

from support import ROOT, verdict

# ----- cluster barriers --------------------------------------------------------------------------


def test_cluster_wait_without_arrive_hangs():
    src = """
.global .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { barrier.cluster.wait; st.global.u32 [x], 1; }
.thread T1 .cluster 0 .cta 1 { barrier.cluster.arrive; barrier.cluster.wait; }
exists (x == 1)
"""
    assert verdict(src) is False  # T0 waits for itself: no execution writes x
    assert verdict(src.replace("{ barrier.cluster.wait; st", "{ barrier.cluster.arrive; "
                                "barrier.cluster.wait; st")) is True


def test_cluster_barrier_deadlock_is_no_execution():
    src = """
.global .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { barrier.cluster.arrive; barrier.cluster.wait; barrier.cluster.arrive;
    barrier.cluster.wait; st.global.u32 [x], 1; }
.thread T1 .cluster 0 .cta 1 { barrier.cluster.arrive; barrier.cluster.wait; }
exists (x == 1)
"""
    assert verdict(src) is True  # T1 exits after phase 0: it is not waited for in phase 1


def test_cta_fence_before_relaxed_arrive_does_not_reach_a_peer_cta():
    src = (ROOT / "examples" / "hopper" / "cluster-dsmem-fence-relaxed.ptx").read_text()
    assert verdict(src.replace("fence.acq_rel.cluster", "fence.acq_rel.cta")) is True


def test_cluster_barriers_of_different_clusters_do_not_synchronize():
    src = """
.global .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { st.global.u32 [x], 1; barrier.cluster.arrive; barrier.cluster.wait; }
.thread T1 .cluster 1 .cta 1 { barrier.cluster.arrive; barrier.cluster.wait; ld.global.u32 %r0, [x]; }
exists (T1:%r0 == 0)
"""
    assert verdict(src) is True
