"""Issue 27 on the device, without a GPU: the forms the H100 harness newly emits (remote mbarrier
arrives, multicast bulk copies, mapa ranks from registers and %cluster_ctarank, st.async /
red.async, Ampere cp.async and its groups, cp.reduce.async.bulk, mbarrier.inval, elect.sync)
— each one's generated CUDA holds the instruction as written and compiles with ptxas for sm_90
(what the harness runs) and sm_90a — and a located refusal, with its reason, for what the
hardware cannot run faithfully (docs/hopper.md, "On the device")."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.device.build import compile_cubin, nvcc_available
from ptxmm.device.codegen import generate
from ptxmm.device.codegen_sync import _hw_mask
from ptxmm.device.layout import make_layout
from ptxmm.errors import UnsupportedError

HOP = ROOT / "examples" / "hopper"
needs_nvcc = pytest.mark.skipif(not nvcc_available(), reason="nvcc not on PATH")


def lay_of(path):
    return make_layout(ptxmm.load(path))


def role_src(src: str, k: int) -> str:
    start = src.index(f"void ptxmm_role_{k}(")
    return src[start:src.index("\n}\n", start)]


# programs of forms no example of examples/hopper uses (each as small as the form allows)
INVAL = """.shared .b64 bar = mbarrier.init(1);
.shared .u32 x = 0;
.thread T0 .cta 0 { st.shared.u32 [x], 1; mbarrier.arrive.release.cta.shared::cta.b64 _, [bar]; }
.thread T1 .cta 0 {
W:  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p0, [bar], 0;
    @!%p0 bra W;
    mbarrier.inval.shared::cta.b64 [bar];
    ld.shared.u32 %r0, [x];
}
exists (T1:%r0 == 0)"""

REMOTE_TX = """.shared .b64 bar = mbarrier.init(2);
.shared .u32 x = 0;
.thread P .cluster 0 .cta 0 {
    mapa.shared::cluster.u32 %r1, bar, 1;
    mapa.shared::cluster.u32 %r2, x, 1;
    mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%r1], 4;
    st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r2], 3, [%r1];
    mbarrier.arrive_drop.release.cluster.shared::cluster.b64 _, [%r1];
    mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%r1], 0;
}
.thread C .cluster 0 .cta 1 {
    mbarrier.arrive.shared::cta.b64 _, [bar];
W:  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [x];
}
exists (C:%r0 != 3)"""

ST_ASYNC_BESIDE_BULK = """.global .u32 g = 5;
.shared .u32 x = 0;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(1);
.thread P .cluster 0 .cta 0 {
    mapa.shared::cluster.u32 %r0, x, 1;
    mapa.shared::cluster.u32 %r1, bar, 1;
    st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r0], 7, [%r1];
}
.thread C .cluster 0 .cta 1 {
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 8;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 4, [bar];
W:  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [x];
    ld.shared.u32 %r2, [s];
}
exists (C:%r0 != 7 || C:%r2 != 5)"""

CP_ASYNC_WAIT_ALL = """.global .u32 g = 3;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cta 0 {
    cp.async.ca.shared::cta.global [s], [g], 4;
    cp.async.mbarrier.arrive.shared::cta.b64 [bar];
    mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];
    cp.async.wait_all;
    ld.shared.u32 %r0, [s];
}
exists (T0:%r0 != 3)"""


def parsed(text: str, name: str = "t.ptx"):
    return make_layout(ptxmm.parse(text, name))


# (what, layout, role, the instruction as the role function issues it)
FORMS = {
    "remote arrive": (lambda: lay_of(HOP / "remote-arrive-2cta.ptx"), 0,
                      'mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "l"(R_rd1)'),
    "remote expect_tx": (lambda: parsed(REMOTE_TX), 0,
                         'mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" :: '
                         '"r"((u32)R_r1), "r"(4U)'),
    "remote arrive_drop": (lambda: parsed(REMOTE_TX), 0,
                           'mbarrier.arrive_drop.release.cluster.shared::cluster.b64 _, [%0];"'),
    "remote complete_tx": (lambda: parsed(REMOTE_TX), 0,
                           'mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;"'),
    "cluster init": (lambda: lay_of(HOP / "cluster-mbarrier-init.ptx"), 1,
                     'mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"'),
    "multicast": (lambda: lay_of(HOP / "tma-multicast.ptx"), 0,
                  "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                  ' [%0], [%1], %2, [%3], %4;" :: '),
    "ctarank": (lambda: lay_of(HOP / "cluster-ctarank-exchange.ptx"), 0,
                'mov.u32 %0, %%cluster_ctarank;" : "=r"(d)); R_cluster_ctarank = (d + CS - RI) % CS;'),
    "mapa register rank": (lambda: lay_of(HOP / "cluster-ctarank-exchange.ptx"), 1,
                           '"r"(((RI + (u32)R_r8) % CS))'),
    "st.async": (lambda: lay_of(HOP / "st-async-remote.ptx"), 0,
                 'st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" :: '
                 '"l"(R_rd0), "r"((u32)7U), "l"(R_rd1)'),
    "st.async v4 beside bulk": (lambda: parsed(ST_ASYNC_BESIDE_BULK), 0,
                                "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.u32 "
                                "[%0], {%1, %1, %1, %1}, [%2];"),
    "red.async": (lambda: lay_of(HOP / "red-async-remote.ptx"), 1,
                  "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 "
                  '[%0], %1, [%2];" :: "l"(R_rd0), "r"((u32)2U), "l"(R_rd1)'),
    "cp.async": (lambda: lay_of(HOP / "ampere-cp-async-wait-group.ptx"), 0,
                 'cp.async.ca.shared.global [%0], [%1], 4;" :: "r"((u32)__cvta_generic_to_shared(A_s1))'),
    "cp.async.commit_group": (lambda: lay_of(HOP / "ampere-cp-async-wait-group.ptx"), 0,
                              'asm volatile("cp.async.commit_group;"'),
    "cp.async.wait_group": (lambda: lay_of(HOP / "ampere-cp-async-wait-group.ptx"), 0,
                            'asm volatile("cp.async.wait_group 1;"'),
    "cp.async.wait_all": (lambda: parsed(CP_ASYNC_WAIT_ALL), 0, 'asm volatile("cp.async.wait_all;"'),
    "cp.async.mbarrier.arrive.noinc": (lambda: lay_of(HOP / "ampere-cp-async-mbarrier.ptx"), 0,
                                       'cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: '
                                       '"r"((u32)__cvta_generic_to_shared(A_bar))'),
    "cp.async.mbarrier.arrive": (lambda: parsed(CP_ASYNC_WAIT_ALL), 0,
                                 'cp.async.mbarrier.arrive.shared::cta.b64 [%0];"'),
    "cp.reduce.async.bulk": (lambda: lay_of(HOP / "bulk-reduce-add.ptx"), 1,
                             'cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], '
                             '%2;" :: "l"(A_g), "r"((u32)__cvta_generic_to_shared(A_s)), "r"(16U)'),
    "mbarrier.inval": (lambda: parsed(INVAL), 1,
                       'mbarrier.inval.shared::cta.b64 [%0];" :: "r"((u32)__cvta_generic_to_shared(A_bar))'),
    "elect.sync": (lambda: lay_of(HOP / "elect-sync-every-lane-arrives.ptx"), 0,
                   'elect.sync _|q, %1; selp.u32 %0, 1, 0, q; }" : "=r"(d) : "r"((u32)4294967295U)'),
}


@pytest.mark.parametrize("what", sorted(FORMS))
def test_new_form_is_emitted_as_written(what):
    make, k, text = FORMS[what]
    assert text in role_src(generate(make()), k)


@needs_nvcc
@pytest.mark.parametrize("what", sorted(FORMS))
@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
def test_new_form_compiles(what, arch, tmp_path, monkeypatch):
    """ptxas assembles the inline PTX: a form it rejected would fail here, not on the H100."""
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    make, k, text = FORMS[what]
    src = generate(make())
    cubin = compile_cubin(src, arch=arch)
    assert cubin.stat().st_size > 1000 and text in src


def test_tx_counts_scale_only_beside_bulk_copies():
    """A bulk copy moves 16 bytes, so tx-counts are ×4 in its tests; st.async and red.async
    complete the 4 bytes they write, so without bulk copies tx-counts stay as written."""
    st_src = role_src(generate(lay_of(HOP / "st-async-remote.ptx")), 1)
    assert 'mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : ' in st_src
    assert '"r"(4U)' in st_src and '"r"(16U)' not in st_src
    red = role_src(generate(lay_of(HOP / "red-async-remote.ptx")), 2)
    assert '"r"(8U)' in red
    both = parsed(ST_ASYNC_BESIDE_BULK)
    assert both.sync.tx_scale == 4 and '"r"(32U)' in role_src(generate(both), 1)


def test_every_cta_of_an_instance_finds_a_location_at_one_offset():
    """Multicast writes (and complete-tx's) the same CTA-relative offset in every CTA of the mask,
    so every role passes the same region expression for a location: the instance's region
    (cluster group, ri), not its CTA's."""
    lay = lay_of(HOP / "tma-multicast.ptx")
    src = generate(lay)
    calls = [ln.split("ptxmm_role_")[1].split("(", 1)[1].rsplit(");", 1)[0]
             for ln in src.splitlines() if "ptxmm_role_" in ln and "li)" in ln]
    assert len(calls) == 3
    s_slots = {a for c in calls for a in c.split(", ") if a.startswith("sh + ")}
    bar_slots = {a for c in calls for a in c.split(", ") if "(mb + " in a}
    assert s_slots == {"sh + ((0 * NREG + (0U * CS + ri)) * bsz + li) * 4U"}
    assert bar_slots == {"(u32*)(mb + (0 * NREG + (0U * CS + ri)) * bsz + li)"}
    assert "#define NREG (NGROUPS * CS)" in src and "for (u32 g = 0; g < NREG; g++)" in src
    assert lay.shared_bytes(256) == (16 + 8) * lay.n_groups * lay.cluster_size * 256
    assert lay.sync.dsmem  # peers' shared memory: cluster-wide sync before, and before the end
    body = src[src.index("ptxmm_litmus("):src.index("ptxmm_check(")]
    assert body.count("barrier.cluster.arrive.release;") == 2
    end = body[body.index("default: {"):]  # the steps' end, then the settling
    assert end.index("__nanosleep(4000);") < end.index("barrier.cluster.arrive.release;")


@given(st.sampled_from([1, 2, 4, 8]), st.data())
def test_multicast_mask_rotation_names_the_hardware_ranks(cs, data):
    """Test rank k plays on hardware rank (ri + k) % CS: the emitted ctaMask expression, evaluated
    as C would, sets exactly those bits."""
    mask = data.draw(st.integers(1, (1 << cs) - 1))
    ri = data.draw(st.integers(0, cs - 1))
    expr = _hw_mask(mask).replace("(unsigned short)", "").replace("U", "")
    got = eval(expr, {"RI": ri, "CS": cs})  # noqa: S307 - our own arithmetic expression
    want = sum(1 << ((ri + k) % cs) for k in range(cs) if mask >> k & 1)
    assert got == want


def test_ctarank_and_mapa_ranks_invert():
    """%cluster_ctarank turns the hardware rank back into the test rank that mapa maps out."""
    for cs in (1, 2, 4, 8):
        for ri, rank in itertools.product(range(cs), repeat=2):
            hw = (ri + rank) % cs
            assert (hw + cs - ri) % cs == rank


def test_cp_async_roles_wait_for_their_copies_before_the_step_ends():
    src = generate(lay_of(HOP / "ampere-cp-async-plain-arrive.ptx"))
    case = src[src.index("case 0: {"):src.index("case 1: {")]
    assert case.index("ptxmm_role_0(") < case.index('asm volatile("cp.async.wait_all;"')
    assert "cp.async.wait_all" not in generate(lay_of(HOP / "st-async-remote.ptx"))


def test_ctarank_alone_makes_a_test_synchronized():
    lay = parsed(""".global .u32 x = 0;
.thread T0 .cluster 0 .cta 0 { mov.u32 %r0, %cluster_ctarank; st.global.u32 [x], %r0; }
.thread T1 .cluster 0 .cta 1 { ld.global.u32 %r1, [x]; }
exists (T1:%r1 == 1)""")
    assert lay.sync is not None
    assert "R_cluster_ctarank = (d + CS - RI) % CS;" in role_src(generate(lay), 0)


# refusals: (program or example, the reason the message or hint gives)
REFUSALS = {
    "wgmma": (HOP / "wgmma-smem-fence.ptx", "no hardware counterpart"),
    "inval then use": (HOP / "mbarrier-inval-early.ptx", "after mbarrier.inval"),
    "mbarrier state observed": (HOP / "mbarrier-inval.ptx", "encoded differently"),
    "elect partial mask": (""".shared .u32 x = 0;
.thread T0 .cta 0 { elect.sync _|%p0, 0x1; @%p0 st.shared.u32 [x], 1; }
exists (x == 1)""", "partial membermask"),
    "elect after branch": (""".shared .u32 x = 0;
.thread T0 .cta 0 { ld.shared.u32 %r0, [x]; setp.eq.u32 %p1, %r0, 0; @%p1 bra L;
L: elect.sync _|%p0, 0xffffffff; @%p0 st.shared.u32 [x], 1; }
exists (x == 1)""", "after a branch"),
    "red.async beside bulk": (ST_ASYNC_BESIDE_BULK.replace(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r0], 7, [%r1]",
        "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r0], 7, [%r1]"),
        "has no 16-byte form"),
    "st.async split": (""".shared .u32 x = 0;
.shared .b64 bar = mbarrier.init(1);
.thread P .cluster 0 .cta 0 { mapa.shared::cluster.u64 %rd0, x, 1; mapa.shared::cluster.u64 %rd1, bar, 0;
 st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%rd0], 7, [%rd1]; }
.thread C .cluster 0 .cta 1 { ld.shared.u32 %r0, [x]; }
exists (C:%r0 != 7)""", "in different CTAs"),
    "multicast outside the cluster": (""".global .u32 g = 42;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(1);
.thread P .cluster 0 .cta 0 {
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s], [g], 4, [bar], 5;
}
.thread C1 .cluster 0 .cta 1 { ld.shared.u32 %r0, [s]; }
exists (C1:%r0 != 42)""", "ctaMask 0x5"),
    "init through mapa": (""".shared .b64 bar;
.thread T0 .cluster 0 .cta 0 { mapa.shared::cluster.u64 %rd0, bar, 1;
  mbarrier.init.shared::cta.b64 [%rd0], 1; }
.thread T1 .cluster 0 .cta 1 { mbarrier.test_wait.parity.shared::cta.b64 %p, [bar], 0; }
exists (T1:%p == 0)""", "only arrive-type operations"),
    "tx-count from a register": (""".shared .b64 bar = mbarrier.init(1);
.thread T0 .cta 0 { mov.u32 %r1, 4; mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], %r1;
  mbarrier.arrive.shared::cta.b64 _, [bar]; }
.thread T1 .cta 0 { mbarrier.test_wait.parity.shared::cta.b64 %p, [bar], 0; }
exists (T1:%p == 1)""", "count from a register"),
    "arrive through mapa without shared::cluster": (""".shared .b64 bar = mbarrier.init(1);
.thread T0 .cluster 0 .cta 0 { mapa.shared::cluster.u64 %rd0, bar, 1;
  mbarrier.arrive.release.cluster.shared::cta.b64 _, [%rd0]; }
.thread T1 .cluster 0 .cta 1 { mbarrier.test_wait.parity.shared::cta.b64 %p, [bar], 0; }
exists (T1:%p == 0)""", "write .shared::cluster"),
}


@pytest.mark.parametrize("what", sorted(REFUSALS))
def test_what_the_device_cannot_run_is_refused_with_its_reason(what):
    prog, why = REFUSALS[what]
    p = ptxmm.load(prog) if not isinstance(prog, str) else ptxmm.parse(prog, "r.ptx")
    with pytest.raises(UnsupportedError) as e:
        make_layout(p)
    assert "on the device" in e.value.message and e.value.pos is not None
    assert why in e.value.message + e.value.hint


def test_wgmma_refusal_says_why_no_hardware_instruction_fits():
    with pytest.raises(UnsupportedError) as e:
        lay_of(HOP / "wgmma-tma-war.ptx")
    for part in ("one 32-bit word of A", "warpgroup", "one warp of 32 independent instances"):
        assert part in e.value.hint


def test_inval_refusal_points_at_the_use():
    with pytest.raises(UnsupportedError) as e:
        lay_of(HOP / "mbarrier-inval-early.ptx")
    assert e.value.pos.line == 10 and "mbarrier.arrive" in e.value.message
    assert parsed(INVAL).sync is not None  # an inval after the last use runs


@pytest.mark.parametrize("name", ["elect-sync-producer.ptx", "st-async-no-expect-tx.ptx",
                                  "red-async-half-expected.ptx", "tma-multicast-no-expect-tx.ptx"])
def test_new_forms_the_model_lets_hang_stay_refused(name):
    """The harness emits their forms, but the model lets a spin last forever: crossval refuses
    them rather than let the GPU spin until the batch's timeout."""
    from ptxmm.device.crossval import prepare

    generate(lay_of(HOP / name))  # the forms are emitted
    with pytest.raises(UnsupportedError, match="lets this test hang"):
        prepare(ptxmm.load(HOP / name))
