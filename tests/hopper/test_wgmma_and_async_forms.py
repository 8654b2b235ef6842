"""Issue 27, the forms built last (docs/hopper.md): wgmma, the one-way async proxy fences,
cp.reduce.async.bulk, mbarrier.inval and elect.sync — each form read with ptxas's operand rules
(ptxas assembles what ptxmm reads, and rejects what ptxmm rejects, where ptxas is installed), and
each rule and CHOICE of models/ptx-async.cat on a program that shows what it decides (both
engines, equal outcome sets)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support import agree

import ptxmm
from ptxmm.errors import ParseError, SemanticError, UnsupportedError
from ptxmm.ir.program import BulkCopy, Elect, MBarrier, ProxyFence, Wgmma
from ptxmm.semantics.builder import build

PTXAS = shutil.which("ptxas")


def _check(src: str, both: bool = True):
    prog = ptxmm.parse(src, "t.ptx")
    return agree(prog, flags=True) if both else ptxmm.check(prog, engine="z3")


def _verdict(src: str, both: bool = True) -> bool:
    return _check(src, both).holds


# ----- ptxas's operand rules -----------------------------------------------------------------

REGS = (".reg .u32 %r<4>;\n  .reg .s32 %d<4>;\n  .reg .u64 %rd<2>;\n  .reg .pred %p<2>;\n")
MMA = "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%d0, %d1, %d2, %d3}, %rd0, %rd1"
# every form ptxmm reads, as the litmus test writes it (a copy of 4 bytes is 16 for ptxas)
FORMS = [
    "wgmma.fence.sync.aligned",
    f"{MMA}, 0",
    f"{MMA}, 1",
    f"{MMA}, %p0",
    "wgmma.mma_async.sync.aligned.m64n8k32.s32.u8.s8.satfinite {%d0, %d1, %d2, %d3}, %rd0, %rd1, 1",
    "wgmma.commit_group.sync.aligned",
    "wgmma.wait_group.sync.aligned 1",
    "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster",
    "fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [g], [s], 4",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [g], [s], 4",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.max.u32 [g], [s], 4",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.u32 [g], [s], 4",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.b32 [g], [s], 4",
    "mbarrier.inval.shared::cta.b64 [bar]",
    "mbarrier.inval.shared.b64 [bar]",
    "elect.sync _|%p1, 0xffffffff",
]
# forms ptxas rejects, and so does ptxmm (a located ParseError)
REJECTED = [
    "wgmma.fence.aligned",                                          # .sync required
    "wgmma.mma_async.sync.aligned.m64n16k32.s32.s8.s8 {%d0, %d1, %d2, %d3}, %rd0, %rd1, 1",  # 8 regs
    f"{MMA}, 2",                                                    # scale-d 0 or 1
    "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%d0, %d1, %d2, %d3}, %r1, %rd1, 1",  # 32-bit desc
    "wgmma.wait_group.sync.aligned %r1",                            # a constant
    "fence.proxy.async::generic.release.sync_restrict::shared::cluster.cluster",
    "fence.proxy.async::generic.acquire.sync_restrict::shared::cta.cluster",
    "fence.proxy.async::generic.release.cluster",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.b32 [g], [s], 4",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.and.u32 [g], [s], 4",
]


def _litmus(form: str) -> str:
    return (".global .u32 g = 0;\n.shared .u32 s = 0;\n.shared .u32 s2 = 0;\n.shared .b64 bar;\n"
            ".thread T0 .cta 0 {\n .reg .u32 %r1 = 1;\n .reg .s32 %d0 = 0;\n .reg .pred %p0 = 1;\n"
            " mov.u64 %rd0, s;\n mov.u64 %rd1, s2;\n wgmma.fence.sync.aligned;\n"
            f" {form};\n"
            + (" wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;\n"
               if "mma_async" in form else "")
            + "}\nexists (g == 0)\n")


def _ptxas(form: str, tmp_path) -> subprocess.CompletedProcess:
    mod = (".version 8.6\n.target sm_90a\n.address_size 64\n.global .u32 g;\n.shared .u32 s;\n"
           ".shared .u32 s2;\n.shared .b64 bar;\n.visible .entry k()\n{\n  " + REGS
           + "  mov.u64 %rd0, s;\n  mov.u64 %rd1, s2;\n"
           + f"  {form.replace('[s], 4', '[s], 16')};\n  ret;\n}}\n")
    (tmp_path / "k.ptx").write_text(mod)
    return subprocess.run([PTXAS, "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)


@pytest.mark.parametrize("form", FORMS)
def test_form_is_read_and_assembles(form, tmp_path):
    ptxmm.parse(_litmus(form), "f.ptx")
    if PTXAS is None:
        pytest.skip("ptxas not on PATH")
    r = _ptxas(form, tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("form", REJECTED)
def test_form_ptxas_rejects_is_a_located_error(form, tmp_path):
    with pytest.raises((ParseError, SemanticError)) as e:
        ptxmm.parse(_litmus(form), "f.ptx")
    assert e.value.pos is not None and e.value.pos.line == 12
    if PTXAS is None:
        pytest.skip("ptxas not on PATH")
    assert _ptxas(form, tmp_path).returncode != 0


def test_forms_decode_to_their_records():
    p = ptxmm.parse(_litmus(f"{MMA}, %p0"), "f.ptx")
    mma = p.threads[0].instrs[3]
    assert isinstance(mma, Wgmma) and mma.kind == "mma" and mma.dst.name == "%d0"
    assert len(mma.accs) == 4 and mma.scale_d.name == "%p0" and mma.shape == "m64n8k32"
    ins = [ptxmm.parse(_litmus(f), "f.ptx").threads[0].instrs[3] for f in FORMS[7:]]
    assert [(x.sem, x.restrict) for x in ins[:2]] == [("release", "shared::cta"),
                                                       ("acquire", "shared::cluster")]
    assert all(isinstance(x, ProxyFence) and x.kind == "async" for x in ins[:2])
    assert [(x.op, x.type) for x in ins[2:7]] == [("add", "u32"), ("min", "s32"), ("max", "u32"),
                                                   ("inc", "u32"), ("xor", "b32")]
    assert all(isinstance(x, BulkCopy) for x in ins[2:7])
    assert all(isinstance(x, MBarrier) and x.op == "inval" for x in ins[7:9])
    assert isinstance(ins[9], Elect) and ins[9].dst.name == "%p1" and ins[9].mask.value == 0xffffffff


@pytest.mark.parametrize("form, what", [
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1, %d2, %d3}, %rd0, %rd1, 1, 1, 1, 0, 0",
     "floating-point"),
    ("elect.sync %r1|%p1, 0xffffffff", "elected lane's id"),
    ("elect.sync _|%p1, %r1", "membermask"),
    ("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 "
     "[s2], [s], 4, [bar]", "shared::cta to shared::cluster"),
    ("tensormap.replace.tile.global_dim.global.b1024.b32 [g], 0, 4", "global_dim"),
])
def test_forms_not_modelled_are_unsupported_and_located(form, what):
    with pytest.raises(UnsupportedError, match=what) as e:
        ptxmm.parse(_litmus(form), "f.ptx")
    assert e.value.pos is not None


# ----- wgmma -------------------------------------------------------------------------------------

WG = """
.shared .u32 a = 3;
.shared .u32 b = 2;
.thread T0 .cta 0 {
    .reg .s32 %d0 = 5;
    .reg .pred %q = %Q;
    mov.u64 %rd0, a;
    mov.u64 %rd1, b;
    wgmma.fence.sync.aligned;
    wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%d0, %d1, %d2, %d3}, %rd0, %rd1, %S;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
}
exists (T0:%d0 == %V)
"""


@pytest.mark.parametrize("scale, q, value", [("0", "0", 6), ("1", "0", 11), ("%q", "1", 11),
                                             ("%q", "0", 6)])
def test_mma_accumulates_a_times_b(scale, q, value):
    """The litmus mma: %d0 = A * B + (scale-d ? %d0 : 0), scale-d an immediate or a predicate."""
    src = WG.replace("%S", scale).replace("%Q", q)
    res = _check(src.replace("%V", str(value)))
    assert res.holds is True and len(res.outcomes) == 1


def test_mma_reads_are_async_proxy_events_of_an_agent():
    eg = build(ptxmm.parse(WG.replace("%S", "0").replace("%Q", "0").replace("%V", "6"), "w.ptx"))
    agent = [e for e in eg.events if e.agent >= 0]
    assert [e.kind for e in agent] == ["R", "R", "F"]
    assert all("ASYNC" in e.tags for e in agent) and agent[0].sem == "weak"
    wait = [e for e in eg.events if "WGWAIT" in e.tags]
    assert wait and (agent[2].eid, wait[0].eid) in eg.edges["done"]


def test_mma_before_any_wgmma_fence_is_a_located_error():
    src = WG.replace("%S", "0").replace("%Q", "0").replace("%V", "6").replace(
        "    wgmma.fence.sync.aligned;\n", "")
    with pytest.raises(SemanticError, match="before any wgmma.fence") as e:
        build(ptxmm.parse(src, "w.ptx"))
    assert e.value.pos.line == 9  # the mma (the fence line removed)


def test_accumulator_read_before_wait_group_is_a_located_error():
    src = WG.replace("%S", "0").replace("%Q", "0").replace("%V", "6").replace(
        "    wgmma.commit_group.sync.aligned;\n",
        "    add.s32 %d2, %d0, 1;\n    wgmma.commit_group.sync.aligned;\n")
    with pytest.raises(SemanticError, match="before a wgmma.wait_group") as e:
        build(ptxmm.parse(src, "w.ptx"))
    assert e.value.pos.line == 11


def test_thread_ending_with_an_mma_pending_is_a_located_error():
    src = WG.replace("%S", "0").replace("%Q", "0").replace("%V", "6").replace(
        "    wgmma.wait_group.sync.aligned 0;\n", "    wgmma.wait_group.sync.aligned 1;\n")
    with pytest.raises(SemanticError, match="ends before a wgmma.wait_group") as e:
        build(ptxmm.parse(src, "w.ptx"))
    assert e.value.pos.line == 10


# ----- the one-way async proxy fences --------------------------------------------------------------

RSR = """
.global .u32 x = 0;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cluster 0 .cta 0 {
    mapa.shared::cluster.u64 %rd1, bar, 1;
    %STORE%
    fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;
    mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%rd1];
}
.thread T1 .cluster 0 .cta 1 {
    mapa.shared::cluster.u64 %rd0, s, 0;
W:  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p0, [bar], 0;
    @!%p0 bra W;
    %LOAD%
}
exists (T1:%r0 == 0)
"""


def test_restricted_release_releases_only_shared_accesses():
    """The release half of fence.proxy.async::generic.release.sync_restrict::shared::cta is
    restricted to shared::cta operations: a shared store before it is released to the acquire
    wait, a global store is not (models/ptx-async.cat, rsr-sync)."""
    shared = RSR.replace("%STORE%", "st.shared.u32 [s], 1;").replace(
        "%LOAD%", "ld.shared::cluster.u32 %r0, [%rd0];")
    glob = RSR.replace("%STORE%", "st.global.u32 [x], 1;").replace("%LOAD%", "ld.global.u32 %r0, [x];")
    assert _verdict(shared) is False
    assert _verdict(glob) is True
    # a full release fence would release both (the restriction is what the global case shows)
    full = glob.replace("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster",
                        "fence.release.cluster")
    assert _verdict(full) is False


def test_restricted_release_is_not_cumulative():
    """CHOICE: a path may start at the thread's shared accesses po-before the restricted fence but
    not enter them: a global store po-before the shared store is not released either."""
    src = RSR.replace("%STORE%", "st.global.u32 [x], 1;\n    st.shared.u32 [s], 1;").replace(
        "%LOAD%", "ld.global.u32 %r0, [x];")
    assert _verdict(src) is True


def test_one_way_fence_is_a_proxy_fence_toward_async_only():
    """The proxy half: the one-way fence is a generic→async proxy fence (uni-fence-bulk-store.ptx:
    forbidden, like the bi-directional fence); without any fence the copy may read the stale 0."""
    from conftest import ROOT
    one_way = (ROOT / "examples" / "hopper" / "uni-fence-bulk-store.ptx").read_text()
    assert _verdict(one_way) is False
    none = one_way.replace("    fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;\n", "")
    assert _verdict(none) is True
    eg = build(ptxmm.parse(one_way, "u.ptx"))
    f = [e for e in eg.events if "UNI" in e.tags]
    assert len(f) == 1 and {"PROXY", "ASYNC", "PFS", "RSR"} <= f[0].tags and f[0].scope == "cluster"


# ----- cp.reduce.async.bulk ----------------------------------------------------------------------

RED = """
.global .u32 g = 5;
.shared .u32 s = 0;
.thread T0 .cta 0 {
    st.shared.u32 [s], %A;
    fence.proxy.async.shared::cta;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.%OP [g], [s], 4;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    ld.global.u32 %r0, [g];
}
exists (T0:%r0 != %V)
"""


@pytest.mark.parametrize("op, a, value", [("add.u32", 3, 8), ("min.u32", 3, 3), ("max.u32", 3, 5),
                                          ("min.s32", 4294967295, 4294967295), ("xor.b32", 1, 4),
                                          ("inc.u32", 9, 6), ("inc.u32", 5, 0)])
def test_bulk_reduction_value(op, a, value):
    """The reduction's value at its type (min.s32 of 5 and -1 is -1; inc wraps to 0 past a)."""
    src = RED.replace("%OP", op).replace("%A", str(a)).replace("%V", str(value))
    assert _verdict(src) is False


def test_bulk_reduction_is_relaxed_gpu_rmw_of_the_async_proxy():
    eg = build(ptxmm.parse(RED.replace("%OP", "add.u32").replace("%A", "1").replace("%V", "6"), "r.ptx"))
    rr, w = [e for e in eg.events if e.agent >= 0 and e.loc == "g"]
    assert (rr.kind, w.kind) == ("R", "W") and (rr.eid, w.eid) in eg.edges["rmw"]
    assert all((e.sem, e.scope) == ("relaxed", "gpu") and "ASYNC" in e.tags for e in (rr, w))
    assert "RedR" in rr.tags


# ----- mbarrier.inval ------------------------------------------------------------------------------

def _flags(path: str) -> set[str]:
    from conftest import ROOT
    res = ptxmm.check(ptxmm.load(ROOT / "examples" / "hopper" / path))
    return {f.name for f in res.findings}


def test_use_after_inval_is_a_finding():
    """An arrive that may come after the inval is reported (mbarrier-use-after-inval); after the
    wait that saw the arrive, nothing uses the invalidated object."""
    assert "mbarrier-use-after-inval" in _flags("mbarrier-inval-early.ptx")
    assert "mbarrier-use-after-inval" not in _flags("mbarrier-inval.ptx")


def test_inval_is_no_init_for_fence_mbarrier_init():
    """fence.mbarrier_init releases prior inits only (mbinit-sync): an inval is no init."""
    src = """
.shared .b64 bar;
.thread T0 .cluster 0 .cta 0 { mbarrier.init.shared::cta.b64 [bar], 1; %INVAL%
    fence.mbarrier_init.release.cluster; barrier.cluster.arrive.relaxed; barrier.cluster.wait; }
.thread T1 .cluster 0 .cta 1 { barrier.cluster.arrive.relaxed; barrier.cluster.wait;
    mapa.shared::cluster.u64 %rd0, bar, 0; ld.relaxed.cluster.shared::cluster.b64 %r0, [%rd0]; }
exists (T1:%r0 == 0)
"""
    assert _verdict(src.replace("%INVAL%", "")) is False  # the init is released: no stale 0
    # with an inval after the init, the init is still released but the inval is not: T1 may
    # read the init's word, which a released inval (co-after it) would have hidden
    inval = src.replace("%INVAL%", "mbarrier.inval.shared::cta.b64 [bar];")
    assert _verdict(inval.replace("T1:%r0 == 0", "T1:%r0 != 0")) is True


# ----- elect.sync ----------------------------------------------------------------------------------

def test_elect_sync_leaves_the_choice_to_the_execution_and_warns():
    src = """
.global .u32 x = 0;
.thread T0 { elect.sync _|%p0, 0xffffffff; @%p0 st.global.u32 [x], 1; }
exists (x == 1)
"""
    res = _check(src)
    assert {o.outcome["x"] for o in res.outcomes} == {0, 1}  # elected or not: both checked
    assert any("elect.sync" in w.message and "%p0" in w.message for w in res.program.warnings)
    quiet = _check(src.replace("@%p0 st.global.u32 [x], 1;", "st.global.u32 [x], 1;"))
    assert not any("elect.sync" in w.message for w in quiet.program.warnings)


def test_elect_sync_paths_are_exactly_two():
    eg = build(ptxmm.parse(".thread T0 { elect.sync _|%p0, 1; }\nexists (T0:%p0 == 1)\n", "e.ptx"))
    assert sorted(str(p.regs["%p0"]) for p in eg.paths[0]) == sorted(["1", "0"]) or \
        len(eg.paths[0]) == 2


ASR = """
.global .u32 x = 0;
.shared .u32 s = 0;
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cluster 0 .cta 1 {
    mapa.shared::cluster.u64 %rd0, s, 0;
    mapa.shared::cluster.u64 %rd1, bar, 0;
    %STORE%
    mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%rd1];
}
.thread T1 .cluster 0 .cta 0 {
W:  mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 %p0, [bar], 0;
    @!%p0 bra W;
    %FENCE%;
    %LOAD%
}
exists (T1:%r0 == 0)
"""


@pytest.mark.parametrize("fence, shared, glob", [
    ("fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster", False, True),
    ("fence.acquire.cluster", False, False),
    ("fence.proxy.async.shared::cta", True, True),
])
def test_restricted_acquire_orders_only_shared_accesses(fence, shared, glob):
    """CHOICE (asr-sync): the acquire half of the one-way fence orders the shared-memory accesses
    after it, not a global load (a full fence.acquire orders both; the bi-directional proxy fence
    neither)."""
    base = ASR.replace("%FENCE%", fence)
    sh = base.replace("%STORE%", "st.shared::cluster.u32 [%rd0], 1;").replace(
        "%LOAD%", "ld.shared.u32 %r0, [s];")
    gl = base.replace("%STORE%", "st.global.u32 [x], 1;").replace("%LOAD%", "ld.global.u32 %r0, [x];")
    assert _verdict(sh) is shared
    assert _verdict(gl) is glob
