"""Tensor copies on the device, without a GPU (issue 27, item 4; docs/hopper.md, "On the device"):
the layout and map arithmetic (a model word is a 16-byte chunk: dims {d0, d1} → {4·d0, d1, n},
coordinate c0 → 4·c0, the instance's row as the outermost coordinate), the zero fill it keeps, the
cuTensorMapEncodeTiled call (through a recording stand-in) and the launch parameters, the CUDA the
harness emits for the four tma-tensor examples and a multicast load (compiled with nvcc for sm_90,
the harness's target, and sm_90a), and the located refusals of tensormap.replace and the
tensormap acquire fence."""

from __future__ import annotations

import ctypes
import itertools
import re

import pytest
from support import ROOT

import ptxmm
from ptxmm.device.build import compile_cubin, nvcc_available
from ptxmm.device.codegen import generate
from ptxmm.device.env import PRESETS, fit
from ptxmm.device.harness import SHARED_LIMIT, fit_sync
from ptxmm.device.layout import make_layout
from ptxmm.device.tensor import MapArgs, encode_tiled, kernel_arg
from ptxmm.errors import PtxmmError, UnsupportedError

HOP = ROOT / "examples" / "hopper"
TENSOR_EXAMPLES = [f"tma-tensor-{n}.ptx" for n in ("load-2d", "load-2d-no-expect-tx", "store",
                                                    "store-no-fence")]
needs_nvcc = pytest.mark.skipif(not nvcc_available(), reason="nvcc not on PATH")

MULTICAST = """.global .b32 a[4] = {1, 2, 3, 4};
.global .tensormap tm = tensormap(a, dims {4}, box {2});
.shared .u32 s[2];
.shared .b64 bar = mbarrier.init(1);
.thread P .cluster 0 .cta 0 {
    .reg .u32 %r5 = 2;
    cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster \
[s], [tm, {%r5}], [bar], 3;
}
.thread C0 .cluster 0 .cta 0 {
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 8;
W:  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [s+4];
}
.thread C1 .cluster 0 .cta 1 {
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 8;
W:  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [s];
}
exists (C0:%r0 != 4 || C1:%r0 != 3)"""


def lay_of(name: str):
    return make_layout(ptxmm.load(HOP / name))


def role_src(src: str, k: int) -> str:
    start = src.index(f"void ptxmm_role_{k}(")
    return src[start:src.index("\n}\n", start)]


def multicast_prog():
    return ptxmm.parse(MULTICAST, "mc.ptx")


# -- the layout and the map's arguments ------------------------------------------------------------

def test_load_2d_plan_and_map_arguments():
    lay = lay_of("tma-tensor-load-2d.ptx")
    t = lay.tensor
    assert [(a.name, a.elements, a.offset, a.words, a.pitch) for a in t.arrays] == [("a", 8, 0, 32, 128)]
    assert t.arrays[0].perm_slot == lay.globals_.index("a[0]")
    assert "tm" not in lay.globals_  # a kernel parameter, not a location slot
    assert t.boxes == (("s", 4, 8),)  # 4 chunks in a 128-byte row per (region, lane)
    a = t.map("tm").encoding(t.arrays[0], 4096, 0x7000_0000)
    # {4, 2} model words → {16, 2} .b32 elements, plus the instance dimension; box {2, 2} → {8, 2, 1}
    assert (a.dims, a.strides, a.box) == ((16, 2, 4096), (64, 128), (8, 2, 1))
    a.check()


def test_rows_where_the_map_finds_them():
    """The map's address and outermost stride name the words the check kernel and the roles use:
    instance slot q's element k at address + q·pitch + 16·k, two arrays' regions apart."""
    text = (HOP / "tma-tensor-load-2d.ptx").read_text().replace(
        ".shared .u32 s[4];", ".global .b32 b[2] = {5, 6};\n"
        ".global .tensormap tb = tensormap(b, dims {2}, box {2});\n.shared .u32 s[4];")
    text = text.replace("    cp.async.bulk.tensor.2d", "    cp.async.bulk.tensor.1d.global.shared::cta"
                        ".tile.bulk_group [tb, {0}], [s];\n    cp.async.bulk.tensor.2d", 1)
    lay = make_layout(ptxmm.parse(text, "two.ptx"))
    t = lay.tensor
    assert [(a.name, a.offset, a.words) for a in t.arrays] == [("b", 0, 8), ("a", 8, 32)]
    slots, n, base = 4096, 1024, 1 << 24
    for arr in t.arrays:
        m = next(m for m in t.maps if m.array == arr.name)
        args = m.encoding(arr, n, base + 4 * arr.start(slots, n))
        for q, k in ((0, 0), (5, 1), (n - 1, arr.elements - 1)):
            assert base + 4 * arr.word(slots, n, q, k) == args.address + q * args.strides[-1] + 16 * k
    b, a = t.arrays  # b's region ends where a's begins
    assert b.start(slots, n) + n * b.words == a.start(slots, n)
    # each row placed by its array's first element's permutation (a[0] is slot 0, b[0] slot 8)
    assert (a.perm_slot, b.perm_slot) == (0, 8)
    assert lay.global_word("a[5]") == "ptxmm_tword(p, 0, i, n, stride, 8U, 32U, 20U)"
    assert lay.global_word("b[1]") == "ptxmm_tword(p, 8, i, n, stride, 0U, 8U, 4U)"


def test_store_1d_map_arguments_and_words():
    lay = lay_of("tma-tensor-store.ptx")
    arr = lay.tensor.arrays[0]
    a = lay.tensor.map("tm").encoding(arr, 1 << 17, 1 << 20)
    assert (a.dims, a.strides, a.box) == ((16, 1 << 17), (64,), (8, 1))
    # element 3 of g: word 12 of the instance's row (the chunk's first u32)
    assert lay.global_word("g[3]") == "ptxmm_tword(p, 0, i, n, stride, 0U, 16U, 12U)"
    # the shared box: element 1 is chunk 1 of the row
    assert lay.shared_word("s[1]", "g", "li") == "(0U * NREG * bsz + (g * bsz + li) * 8U + 1U) * 4U"


def _device_box(dims, box, coords):
    """TMA tile mode on the device tensor (zero fill out of bounds): per box element in row-major
    order, the device element it reads or None (a sketch of PTX ISA, Tensor › tile mode)."""
    out = []
    for j in itertools.product(*(range(b) for b in reversed(box))):
        idx = [c + k for c, k in zip(coords, reversed(j))]
        inside = all(0 <= x < d for x, d in zip(idx, dims))
        out.append(tuple(idx) if inside else None)
    return out


@pytest.mark.parametrize("c0, c1", [(1, 0), (3, 0), (-1, 1), (2, -1), (0, 1), (4, 0), (-2, 0)])
def test_scaled_box_zero_fills_the_model_words(c0, c1):
    """Chunk k of the device box (elements 4k..4k+3) is model box word k, read from the model
    element the model's box names, and all-zero exactly where the model's word is zero-filled."""
    from ptxmm.semantics.tensor import box_words

    lay = lay_of("tma-tensor-load-2d.ptx")
    m = lay.tensor.map("tm")
    args = m.encoding(lay.tensor.arrays[0], 8, 0)
    dev = _device_box(args.dims, args.box, (4 * c0, c1, 5))
    tm = lay.program.location("tm").tensormap
    model = box_words(None, None, tm, "a", [c0, c1])
    assert len(dev) == 4 * len(model)
    for k, want in enumerate(model):
        chunk = dev[4 * k:4 * k + 4]
        if want is None:
            assert chunk == [None] * 4
        else:
            x, y = (int(want[2:-1]) % 4, int(want[2:-1]) // 4)
            assert chunk == [(4 * x + r, y, 5) for r in range(4)]


def test_map_argument_checks_follow_the_driver():
    ok = MapArgs(1 << 20, (16, 2, 256), (64, 128), (8, 2, 1))
    ok.check()
    for bad in (MapArgs(8, ok.dims, ok.strides, ok.box),  # address not 16-byte aligned
                MapArgs(1 << 20, ok.dims, (72, 128), ok.box),  # stride not a multiple of 16
                MapArgs(1 << 20, ok.dims, ok.strides, (2, 2, 1)),  # inner box 8 bytes
                MapArgs(1 << 20, ok.dims, ok.strides, (512, 2, 1))):  # box over 256
        with pytest.raises(PtxmmError, match="cuTensorMapEncodeTiled"):
            bad.check()


def test_encode_calls_the_driver_with_u32_tiles_and_zero_fill():
    seen = {}

    def fake(tmap, dtype, rank, addr, dims, strides, box, estr, inter, swz, l2, oob):
        seen.update(tmap=tmap.value, dtype=dtype, rank=rank, addr=addr.value,
                    dims=list(dims[:rank]), strides=list(strides[:rank - 1]), box=list(box[:rank]),
                    estr=list(estr[:rank]), rest=(inter, swz, l2, oob))
        ctypes.memset(tmap.value, 0xAB, 128)
        return 0

    buf = encode_tiled(MapArgs(1 << 20, (16, 2, 256), (64, 128), (8, 2, 1)), encoder=fake)
    assert seen == dict(tmap=buf.address, dtype=2, rank=3, addr=1 << 20, dims=[16, 2, 256],
                        strides=[64, 128], box=[8, 2, 1], estr=[1, 1, 1], rest=(0, 0, 0, 0))
    assert buf.address % 128 == 0 and buf.bytes() == b"\xab" * 128
    with pytest.raises(PtxmmError, match="CUresult 1"):
        encode_tiled(MapArgs(1 << 20, (16, 256), (64,), (8, 1)), encoder=lambda *a: 1)


def test_a_kernel_s_map_keeps_its_element_type_and_strides():
    """The kernel harness's per-instance maps go through the same binding with the launch's
    element type (INT32 = 3 here) and element strides; the inner box is checked in its bytes."""
    seen = []

    def fake(tmap, dtype, rank, addr, dims, strides, box, estr, *rest):
        seen.append((dtype, rank, list(dims[:rank]), list(box[:rank]), list(estr[:rank])))
        return 0

    encode_tiled(MapArgs(1 << 20, (8, 2), (32,), (4, 2), 3, (1, 1)), encoder=fake)
    assert seen == [(3, 2, [8, 2], [4, 2], [1, 1])]
    with pytest.raises(PtxmmError, match="requirements"):  # 2 UINT8 elements: a 2-byte inner box
        encode_tiled(MapArgs(1 << 20, (64,), (), (2,), 0), encoder=fake)
    encode_tiled(MapArgs(1 << 20, (64,), (), (2,), 0), encoder=fake, check=False)  # the driver's call
    assert len(seen) == 2


def test_a_map_is_passed_by_value_as_one_128_byte_element():
    pytest.importorskip("numpy", reason="numpy is not installed (it comes with the device extras' CuPy)")
    arg = kernel_arg(bytes(range(128)))
    assert arg.shape == (1,) and arg.dtype.itemsize == 128 and arg.tobytes() == bytes(range(128))
    with pytest.raises(PtxmmError, match="128 bytes"):
        kernel_arg(bytes(64))


def test_shared_memory_stays_under_48k():
    lay = lay_of("tma-tensor-load-2d.ptx")
    # (4 columns of 16 bytes padded to 8, + an 8-byte mbarrier) per lane, + 128 bytes of slack
    assert lay.shared_bytes(256) == (16 * 8 + 8) * 256 + 128
    env = fit_sync(fit(PRESETS["none"], lay.warps_per_cta, 1), lay)
    assert PRESETS["none"].threads * 2 > env.threads and lay.shared_bytes(env.threads) <= SHARED_LIMIT
    assert env.reps == 1 and env.stride % 4 == 0


# -- the CUDA ------------------------------------------------------------------------------------------

def test_load_2d_code():
    src = generate(lay_of("tma-tensor-load-2d.ptx"))
    r0 = role_src(src, 0)
    # .2d becomes .3d: c0 = 1 → 4 elements, c1 = 0, the instance's row last
    assert ('cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes '
            '[%0], [%1, {%2, %3, %4}], [%5];" :: "r"((u32)__cvta_generic_to_shared(A_s_0_)), '
            '"l"((u64)TM_tm), "r"(4U), "r"(0U), "r"(TQ_tm)') in r0
    assert '"r"(64U)' in r0  # expect_tx 16 model bytes = 4 chunks of 16
    assert "const __grid_constant__ CUtensorMap TMAP_tm) {" in src and "#include <cuda.h>" in src
    assert "&TMAP_tm, ptxmm_tq(p, 0, i, n)" in src
    assert "u32* sh = (u32*)(((u64)ptxmm_shraw + 127ULL) & ~127ULL);" in src
    assert "u64* mb = (u64*)(sh + 8U * NREG * bsz * 4U);" in src  # after the 8-chunk box row
    assert "__nanosleep(4000);" in src  # an unwaited box may still land after the steps
    # the harness's initial shared words reach the async proxy before the test starts
    head = src[src.index("ptxmm_litmus("):src.index("const u32 W = bsz >> 5;")]
    assert head.index("sh[(0U * NREG * bsz") < head.index("fence.proxy.async.shared::cta;") \
        < head.rindex("__syncthreads();")


def test_store_1d_code():
    src = generate(lay_of("tma-tensor-store.ptx"))
    r0 = role_src(src, 0)
    order = ["st.shared.u32", "fence.proxy.async.shared::cta;",
             'cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" :: '
             '"l"((u64)TM_tm), "r"(8U), "r"(TQ_tm)', "cp.async.bulk.commit_group;",
             "cp.async.bulk.wait_group 0;", "ld.global.u32"]
    pos = [r0.index(x) for x in order]
    assert pos == sorted(pos)
    # the final value of g[3] is read from the instance's row, and the row reset there
    assert "atomicExch(&mem[ptxmm_tword(p, 0, i, n, stride, 0U, 16U, 12U)], 0U)" in src
    assert "fence.proxy.async" not in role_src(generate(lay_of("tma-tensor-store-no-fence.ptx")), 0)


def test_multicast_load_code():
    lay = make_layout(multicast_prog())
    src = generate(lay)
    r0 = role_src(src, 0)
    assert ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;") in r0
    assert '"r"((4U * (u32)R_r5))' in r0  # a register coordinate, scaled at run time
    assert re.search(r'"h"\(\(unsigned short\)\(\(\(3U << RI\)', r0)  # the mask rotated
    assert '"r"(32U)' in src  # expect_tx 8 → 32
    assert lay.sync.dsmem


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("name", [*TENSOR_EXAMPLES, "multicast"])
def test_tensor_copies_compile(name, arch, tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    lay = make_layout(multicast_prog()) if name == "multicast" else lay_of(name)
    cubin = compile_cubin(generate(lay), arch=arch)
    assert cubin.stat().st_size > 1000


# -- what stays refused -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tensormap-update-fence.ptx", "tensormap-update-no-fence.ptx"])
def test_tensormap_replace_is_refused_with_its_reason(name):
    with pytest.raises(UnsupportedError, match="tensormap.replace") as e:
        lay_of(name)
    lines = (HOP / name).read_text().splitlines()
    line = next(k for k, t in enumerate(lines, 1) if t.strip().startswith("tensormap.replace"))
    assert "on the device" in e.value.message and e.value.pos.line == line
    assert "sm_90a" in e.value.hint and "__grid_constant__" in e.value.hint


def _variant(old: str, new: str) -> str:
    text = (HOP / "tensormap-update-fence.ptx").read_text()
    assert old in text
    return text.replace(old, new)


def test_tensormap_acquire_fence_is_refused_release_runs():
    # without the replace: the release fence runs as written, the acquire fence is refused
    text = _variant("    tensormap.replace.tile.global_address.global.b1024.b64 [tm], %rd0;\n", "")
    with pytest.raises(UnsupportedError, match="fence.proxy.tensormap::generic.acquire") as e:
        make_layout(ptxmm.parse(text, "acq.ptx"))
    assert ".global" in e.value.hint and e.value.pos is not None
    text = _variant("    fence.proxy.tensormap::generic.acquire.gpu [tm], 128;\n", "")
    text = text.replace("    tensormap.replace.tile.global_address.global.b1024.b64 [tm], %rd0;\n", "")
    src = generate(make_layout(ptxmm.parse(text, "rel.ptx")))
    assert 'asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");' in src


def test_box_not_at_an_array_start_is_refused():
    text = (HOP / "tma-tensor-load-2d.ptx").read_text().replace(".shared .u32 s[4];",
                                                                 ".shared .u32 s[8];")
    text = text.replace("[s], [tm, {1, 0}]", "[s+16], [tm, {1, 0}]")
    with pytest.raises(UnsupportedError, match=r"box at `s\[4\]`") as e:
        make_layout(ptxmm.parse(text, "off.ptx"))
    assert "128-byte aligned" in e.value.hint


def test_map_named_outside_a_tensor_copy_is_refused():
    text = (HOP / "tma-tensor-store.ptx").read_text().replace(
        "    ld.global.u32 %r0, [g+12];", "    ld.global.u32 %r0, [g+12];\n    mov.u64 %rd9, tm;")
    with pytest.raises(UnsupportedError, match="tensor map `tm` named by `mov.u64") as e:
        make_layout(ptxmm.parse(text, "mov.ptx"))
    assert "kernel parameters" in e.value.hint


def test_box_through_a_mapa_register_is_refused():
    text = (HOP / "tma-tensor-load-2d.ptx").read_text()
    text = text.replace(".thread T0 .cta 0 {", ".thread T0 .cluster 0 .cta 0 {\n"
                        "    mapa.shared::cluster.u32 %r1, s, 1;")
    text = text.replace(".thread T1 .cta 0 {", ".thread T1 .cluster 0 .cta 1 {")
    text = text.replace("complete_tx::bytes [s], [tm", "complete_tx::bytes [%r1], [tm")
    with pytest.raises(UnsupportedError, match="tensor copy through a register address") as e:
        make_layout(ptxmm.parse(text, "remote.ptx"))
    assert e.value.pos.line == text.splitlines().index(
        next(t for t in text.splitlines() if "[%r1], [tm" in t)) + 1
