"""Issue 13 on the device, without a GPU: layout and generated CUDA of execution barriers, cluster
barriers, mapa (DSMEM), mbarriers, bulk copies and fence.proxy.async (sync.py, codegen_sync.py),
and, where nvcc is on PATH, that the code compiles for sm_90."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import ROOT

import ptxmm
from ptxmm.device.build import compile_cubin, nvcc_available
from ptxmm.device.codegen import generate
from ptxmm.device.env import PRESETS, fit
from ptxmm.device.harness import fit_sync
from ptxmm.device.layout import make_layout
from ptxmm.errors import UnsupportedError

HOP = ROOT / "examples" / "hopper"


@pytest.fixture
def BAR(dat3m):
    """The Dat3M barrier tests (../shared/conformance): skips without them."""
    return dat3m / "PTX" / "Barrier"


def lay_of(path):
    return make_layout(ptxmm.load(path))


def role_src(src: str, k: int) -> str:
    start = src.index(f"void ptxmm_role_{k}(")
    return src[start:src.index("\n}\n", start)]


def test_cluster_ctas_take_ranks_in_cta_order():
    """mapa's rank is the order of the .cta numbers in the cluster (docs/hopper.md): T0 written
    first with .cta 5 is rank 1 when T1 has .cta 2."""
    prog = ptxmm.parse(""".shared .u32 x = 0;
.thread T0 .cluster 0 .cta 5 { barrier.cluster.arrive; barrier.cluster.wait; ld.shared.u32 %r0, [x]; }
.thread T1 .cluster 0 .cta 2 { mapa.shared::cluster.u64 %rd1, x, 1; st.shared::cluster.u32 [%rd1], 1;
  barrier.cluster.arrive; barrier.cluster.wait; }
exists (T0:%r0 == 0)""", "r.ptx")
    lay = make_layout(prog)
    assert lay.cluster_size == 2 and lay.n_groups == 1
    assert [(r.name, r.cg, r.rank) for r in lay.roles] == [("T0", 0, 1), ("T1", 0, 0)]
    src = generate(lay)
    assert "__cluster_dims__(2, 1, 1)" in src
    # T1's mapa maps its own slot of x (the instance's region: the same offset in every CTA)
    # to the hardware rank that plays test rank 1 in this instance, (RI + 1) % CS
    call = next(ln for ln in src.splitlines() if "ptxmm_role_1(" in ln and "li)" in ln)
    assert "sh + ((0 * NREG + (0U * CS + ri)) * bsz + li)" in call and call.endswith(", ri);")
    r1 = role_src(src, 1)
    assert '"l"((u64)__cvta_generic_to_shared(A_x)), "r"(((RI + 1U) % CS))' in r1


def test_cluster_dsmem_code():
    lay = lay_of(HOP / "cluster-dsmem-release-acquire.ptx")
    assert lay.sync.cluster_phases == 1 and lay.sync.dsmem
    src = generate(lay)
    r0 = role_src(src, 0)
    assert 'mapa.shared::cluster.u64 %0, %1, %2;" : "=l"(d)' in r0
    assert 'st.shared::cluster.u32 [%0], %1;" :: "l"((R_rd1 + 4ULL * z[0]))' in r0
    assert r0.index("mapa.") < r0.index("st.shared::cluster") < r0.index("barrier.cluster.arrive.release;")
    assert r0.index("barrier.cluster.arrive") < r0.index("barrier.cluster.wait.acquire;")
    relaxed = role_src(generate(lay_of(HOP / "cluster-dsmem-relaxed.ptx")), 0)
    assert "barrier.cluster.arrive.relaxed;" in relaxed and ".aligned" not in relaxed
    fenced = role_src(generate(lay_of(HOP / "cluster-dsmem-fence-relaxed.ptx")), 0)
    assert fenced.index("fence.acq_rel.cluster;") < fenced.index("barrier.cluster.arrive.relaxed;")
    # a cluster-wide barrier before the test (peers' shared memory is live) and before exit
    body = src[src.index("ptxmm_litmus("):src.index("ptxmm_check(")]
    assert body.count("barrier.cluster.arrive.release;") == 2


def test_cta_barrier_gets_its_group_hardware_barrier_and_warp_count(BAR):
    lay = lay_of(BAR / "barrier-inscope.litmus") if BAR.exists() else None
    if lay is None:
        pytest.skip("../shared/conformance not present")
    sp = lay.sync
    assert sp.mw == 2 and sp.bar_ids == ((1,),) and not sp.rescues
    src = generate(lay)
    for k in (0, 1):  # one warp per role: the hardware counts 32 threads per role
        assert 'barrier.sync %0, %1;" :: "r"(hb + 0U), "r"(64U)' in role_src(src, k)
    assert "const u32 hb = 1U + (((warp + W - wk) & (W - 1U)) / MW) * NBARIDS;" in src
    # hardware barriers 1..15, one per warp group: at most 15 groups per block
    assert 32 * sp.mw * (15 // len(sp.bar_ids)) >= lay.max_threads
    env = fit_sync(fit(PRESETS["barrier"], lay.warps_per_cta, lay.cluster_size), lay)
    assert (env.threads // 32 // sp.mw) * len(sp.bar_ids) <= 15


def test_quorum_barrier_is_rescued_and_marks_dnf(BAR):
    if not BAR.exists():
        pytest.skip("../shared/conformance not present")
    lay = lay_of(BAR / "quorum1-pass.litmus")  # 3 threads, quorum 2: one is left waiting
    sp = lay.sync
    assert sp.mw == 4 and len(sp.rescues) == 1
    rs = sp.rescues[0]
    assert (rs.wait_for, rs.threads, rs.pads) == (64, 64, 1)
    # P0 (st; bar) may be the one left: nothing follows its barrier. P1 (bar; ld) may not.
    assert not sp.bars[(0, 1)].dnf_after and sp.bars[(1, 0)].dnf_after
    src = generate(lay)
    assert "if (atomicAdd(psd + hb + 0U, 1U) >= 64U) { *dnf = 1U; }" in role_src(src, 1)
    assert "case 3: {  // pad warp" in src and 'barrier.arrive %0, %1;" :: "r"(hb + 0U), "r"(64U)' in src
    assert "if (dnf[i])" in src  # the check kernel counts those instances as did-not-finish
    full = generate(lay_of(BAR / "quorum1-fail.litmus"))  # quorum 3 of 3: no rescue
    assert "pad warp: rescue" not in full and '"r"(96U)' in full


@pytest.mark.parametrize("name", ["quorum1-hang.litmus", "quorum2-hang.litmus"])
def test_barrier_that_can_only_hang_is_refused(name, BAR):
    if not BAR.exists():
        pytest.skip("../shared/conformance not present")
    with pytest.raises(UnsupportedError, match="can only hang|no phase"):
        lay_of(BAR / name)


def test_model_without_execution_is_refused_before_the_device():
    from ptxmm.device.crossval import prepare

    prog = ptxmm.parse(""".global .u32 x = 0;
.thread T0 .cta 0 { bar.sync 0; ld.global.u32 %r0, [x]; bar.sync 1; }
.thread T1 .cta 0 { bar.sync 1; bar.sync 0; st.global.u32 [x], 1; }
exists (T0:%r0 == 1)""", "dead.ptx")
    with pytest.raises(UnsupportedError, match="no execution") as e:
        prepare(prog)
    assert "on the device" in e.value.message and "hang" in e.value.hint


def test_a_test_the_model_lets_hang_is_not_run():
    """A spin the model lets last forever would spin on the GPU until the timeout ends the batch
    (pipeline-tma-async-no-empty-wait did, on the H100): refused with the hang; its fixed twin runs."""
    from ptxmm.device.crossval import prepare

    with pytest.raises(UnsupportedError, match="lets this test hang") as e:
        prepare(ptxmm.load(HOP / "pipeline-tma-async-no-empty-wait.ptx"))
    assert "on the device" in e.value.message and "spins at line" in e.value.message
    assert "check --liveness" in e.value.hint
    res, lay = prepare(ptxmm.load(HOP / "pipeline-tma-async.ptx"))
    assert res.outcomes and lay is not None


def test_mbarrier_and_tma_load_code():
    lay = lay_of(HOP / "tma-load-mbarrier.ptx")
    assert lay.mbars == ("bar",) and lay.shared == ("s",) and lay.chunk == 4 and lay.min_stride == 4
    src = generate(lay)
    r0, r1 = role_src(src, 0), role_src(src, 1)
    assert 'mbarrier.init.shared::cta.b64 [%0], %1;' in r0
    # tx counts and the copy size in the hardware's 16-byte unit (one model word)
    assert 'mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;" : "=l"(st)' in r0
    assert re.search(r'arrive\.expect_tx.*"r"\(16U\)', r0)
    assert ('cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"'
            in r0) and '"r"(16U)' in r0.split("cp.async.bulk")[1]
    assert "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 q, [%1], %2;" in r1
    assert "goto DNF" in r1  # the try_wait spin loop is bounded
    # 16-byte shared chunks; the mbarrier region after the data words
    assert "sh + ((0 * NREG + (0U * CS + ri)) * bsz + li) * 4U" in src
    assert "u64* mb = (u64*)(sh + NSHARED * NREG * bsz * 4U);" in src
    assert lay.shared_bytes(256) == (16 * 1 + 8 * 1) * 1 * 256
    env = fit_sync(fit(PRESETS["barrier"], lay.warps_per_cta, 1), lay)
    assert env.stride % 4 == 0 and env.reps == 1


def test_declared_mbarriers_are_initialised_by_the_harness():
    lay = lay_of(HOP / "ring-2stage-full-empty.ptx")
    assert lay.mbars == ("full0", "full1", "empty0") and lay.shared == ("buf0", "buf1")
    src = generate(lay)
    head = src[src.index("ptxmm_litmus("):src.index("const u32 W = bsz >> 5;")]
    assert head.count('mbarrier.init.shared::cta.b64 [%0], %1;') == 3 and '"r"(1U)' in head
    assert head.index("mbarrier.init") < head.index("fence.mbarrier_init.release.cluster;") \
        < head.rindex("__syncthreads();")
    assert src.count("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1];") == 4  # P 3, C 1
    assert lay.chunk == 1  # no bulk copy: plain words


def test_bulk_store_and_proxy_fence_code():
    src = generate(lay_of(HOP / "bulk-store-fence.ptx"))
    r0 = role_src(src, 0)
    order = ["st.shared.u32", "fence.proxy.async.shared::cta;",
             "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;",
             "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;", "ld.global.u32"]
    pos = [r0.index(x) for x in order]
    assert pos == sorted(pos)
    assert "fence.proxy.async" not in role_src(generate(lay_of(HOP / "bulk-store-no-fence.ptx")), 0)


def test_generic_tests_keep_the_free_rotation():
    lay = lay_of(ROOT / "examples/classic/MP-relaxed.ptx")
    assert lay.sync is None and lay.chunk == 1 and lay.max_threads == 1024
    src = generate(lay)
    assert "u32 k = j + rot;" in src and "const u32 W = bsz >> 5;" not in src


@pytest.mark.parametrize("prog_text, what", [
    (".global .u32 x = 0;\n.thread T0 .cta 0 { ld.global.u32 %r0, [x]; setp.eq.u32 %p, %r0, 0;"
     " @%p bra L; L: bar.sync 0; }\n.thread T1 .cta 0 { bar.sync 0; }\nexists (T0:%r0 == 0)",
     "barrier after a branch"),
    (".shared .u32 x = 0;\n.thread T0 .cluster 0 .cta 0 { barrier.cluster.arrive; barrier.cluster.wait; }\n"
     ".thread T1 .cluster 0 .cta 1 { ld.shared.u32 %r0, [x]; }\nexists (T1:%r0 == 0)",
     "different numbers of cluster-barrier phases"),
])
def test_sync_shapes_the_device_cannot_run(prog_text, what):
    with pytest.raises(UnsupportedError, match=what) as e:
        make_layout(ptxmm.parse(prog_text, "t.ptx"))
    assert "on the device" in e.value.message


# Hopper examples whose forms the device refuses (docs/hopper.md, "On the device"), and why
DEVICE_REFUSED = {
    **{f"wgmma-{n}.ptx": "wgmma" for n in ("smem-fence", "smem-no-fence", "tma-war",
                                            "tma-war-early-release")},
    # the state an arrive returns is opaque on the hardware (the condition reads it)
    "mbarrier-inval.ptx": "observed register %s",
    # an arrive after the inval is undefined behaviour (the model's finding)
    "mbarrier-inval-early.ptx": "after mbarrier.inval",
    # tensormap.replace: sm_90a only, and the device's maps are grid-constant kernel parameters
    # (tests/device/test_tensor_copies_on_device.py; the tma-tensor-* examples run)
    **{f"tensormap-update-{n}.ptx": "tensormap.replace" for n in ("fence", "no-fence")},
}
# the Dat3M barrier tests (PTX/Barrier of the corpus beside the repository) but the hanging ones
BAR_SYNC = ["barrier-inscope.litmus", "barrier-not-inscope.litmus"] + [
    f"quorum{k}-{v}.litmus" for k in (1, 2, 3, 4) for v in ("fail", "pass")]
SYNC_TESTS = sorted(p for p in HOP.glob("*.ptx") if p.name not in DEVICE_REFUSED) + BAR_SYNC


@pytest.mark.parametrize("name", sorted(DEVICE_REFUSED))
def test_hopper_examples_the_device_refuses_say_so(name):
    with pytest.raises(UnsupportedError, match=DEVICE_REFUSED[name]) as e:
        lay_of(HOP / name)
    assert "on the device" in e.value.message and e.value.pos is not None


@pytest.mark.skipif(not nvcc_available(), reason="nvcc not on PATH")
@pytest.mark.parametrize("path", SYNC_TESTS, ids=lambda p: Path(p).name)
def test_synchronized_tests_compile_for_sm90(path, tmp_path, monkeypatch, request):
    if isinstance(path, str):  # a Dat3M barrier test: skips without the corpus
        path = request.getfixturevalue("BAR") / path
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    cubin = compile_cubin(generate(lay_of(path)))
    assert cubin.stat().st_size > 1000


def test_mapa_to_a_rank_outside_the_cluster_is_refused_at_layout():
    prog = ptxmm.parse(""".shared .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { mapa.shared::cluster.u64 %rd1, x, 1; st.shared::cluster.u32 [%rd1], 1; }
exists (x == 1)""", "m.ptx")
    with pytest.raises(UnsupportedError, match="mapa to rank 1") as e:
        make_layout(prog)
    assert e.value.pos.line == 2 and "1 CTA(s)" in e.value.hint
