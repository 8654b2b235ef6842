"""Tensor copies (TMA) in CUDA kernels: the launch's ``CUtensorMap tm = tensormap(...)`` argument and
its cuTensorMapEncodeTiled rules, nvcc's PTX of a ``const __grid_constant__ CUtensorMap`` parameter
(``.param .align 128 .b8 k_param_0[128]``, ``mov.b64 %rd, k_param_0``, ``cvta.param.u64``) and of
the copies, the located refusals, and crossval's planning of such kernels (a fake encoder in place of
the driver's cuTensorMapEncodeTiled).

The kernels of examples/hopper/kernels/tma-tensor-*.cu are checked by tests/kernel/test_hopper_idioms.py
with the others (expect line, condition, litmus twin, recompile equals the committed PTX); here what
is special to tensor maps. Everything runs without nvcc, except the tests that compile a .cu (they
skip, saying so)."""

from __future__ import annotations

import shutil
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.kernel.demangle import param_types
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.launch import TENSOR_DTYPES, parse_launch
from ptxmm.loading import parse_kernel

KDIR = ROOT / "examples" / "hopper" / "kernels"
IN16 = "{" + ", ".join(str(i) for i in range(1, 17)) + "}"
LAUNCH = (f"k<<<1, 1>>>(CUtensorMap tm = tensormap(int in[16] = {IN16}, dims {{8, 2}}, box {{4, 2}}), "
          "int out[2])")
COPY = ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[%r5], [%rd3, {%r8, %r9}], [%r2];")


def module(copy: str = COPY, extra: str = "", params: str | None = None, top: str = "") -> str:
    """A kernel shaped as nvcc writes one (compare examples/hopper/kernels/tma-tensor-load-2d.ptx):
    the map's address from its parameter, an mbarrier expecting 32 bytes, the tensor load at
    {4, 0}, a wait, then out[0] = the box's first word and out[1] = its last."""
    params = params or ".param .align 128 .b8 k_param_0[128],\n\t.param .u64 k_param_1"
    return f"""//
.version 9.0
.target sm_90a
.address_size 64
{top}
.visible .entry k(
\t{params}
)
{{
\t.reg .pred %p<3>;
\t.reg .b32 %r<20>;
\t.reg .b64 %rd<12>;
\t.shared .align 128 .b8 buf[32];
\t.shared .align 8 .u64 bar;
\tmov.b64 %rd1, k_param_0;
\tld.param.u64 %rd2, [k_param_1];
\tcvta.to.global.u64 %rd5, %rd2;
\tmov.u32 %r2, bar;
\tmbarrier.init.shared::cta.b64 [%r2], 1;
\tmov.u32 %r3, 32;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r3;
\tcvta.param.u64 %rd3, %rd1;
\tmov.u32 %r5, buf;
\tmov.u32 %r8, 4;
\tmov.u32 %r9, 0;
{extra}
\t{copy}
$L_wait:
\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;
\t@!%p1 bra $L_wait;
\tld.shared.u32 %r10, [buf];
\tld.shared.u32 %r11, [buf+28];
\tst.global.u32 [%rd5], %r10;
\tst.global.u32 [%rd5+4], %r11;
\tret;
}}
"""


def load(text: str, launch: str = LAUNCH):
    return parse_kernel(text, "k.ptx", KernelArgs(launch=launch))


def outcomes(prog) -> list[dict]:
    return [o.outcome.as_dict() for o in ptxmm.check(prog).outcomes]


def line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


# ----- 1. the launch's tensor maps ---------------------------------------------------------------------

def test_a_tensor_map_argument_is_what_cuTensorMapEncodeTiled_is_given():
    launch = parse_launch(LAUNCH)
    (tm,) = launch.tensormaps
    assert (tm.name, tm.array, tm.dims, tm.box) == ("tm", "in", (8, 2), (4, 2))
    assert (tm.dtype, tm.esize, tm.strides, tm.box_bytes) == (TENSOR_DTYPES["s32"], 4, (32,), 32)
    assert [b.name for b in launch.buffers] == ["in", "out"]  # the map's own buffer is a launch buffer
    assert launch.buffers[0].init[:3] == (1, 2, 3)
    named = parse_launch("k<<<1, 1>>>(const __grid_constant__ CUtensorMap t = tensormap(o, dims {8}, "
                         "box {4}), unsigned o[8])")
    assert named.tensormaps[0].array == "o" and named.tensormaps[0].dtype == TENSOR_DTYPES["u32"]
    assert [b.name for b in named.buffers] == ["o"]
    assert parse_launch("k<<<1, 1>>>(CUtensorMap t = tensormap(float f[4], dims {4}, box {4}))"
                        ).tensormaps[0].dtype == 7  # CU_TENSOR_MAP_DATA_TYPE_FLOAT32


def _tm(dims: str, box: str, buf: str = "int a[64]") -> str:
    return f"k<<<1, 1>>>(CUtensorMap tm = tensormap({buf}, dims {{{dims}}}, box {{{box}}}))"


# (launch, error class, what the message says, the text the error points at)
BAD = [
    ("k<<<1, 1>>>(CUtensorMap tm = tensormap(b, dims {8}, box {4}), int a[8])", SemanticError,
     "no buffer of the launch", "b, dims"),
    (_tm("8", "2"), SemanticError, "not a multiple of 16", "box {2}"),  # 8 bytes of inner box
    (_tm("6, 2", "4, 2"), SemanticError, "stride of dimension 1 is 24 bytes", "dims {6"),
    (_tm("8", "300"), SemanticError, "box size 300", "box {300"),
    (_tm("0", "4"), SemanticError, "dimension size 0", "dims {0"),
    (_tm("8, 2", "4"), SemanticError, "2 dims but 1 box", "box {4}"),
    (_tm("4, 2, 2", "4, 1, 1"), UnsupportedError, "3-dimensional", "dims {4, 2, 2"),
    (_tm("8", "4", "short a[8]"), SemanticError, "4 × 2 = 8 bytes", "box {4"),
    (_tm("16", "16", "char a[16]"), UnsupportedError, "1-byte elements", "char a[16]"),
    (_tm("8, 16", "4, 2"), SemanticError, "has 128 elements, but a holds 64", "int a[64]"),
    (_tm("16, 4", "8, 16"), UnsupportedError, "a box of 128 elements", "box {8, 16"),
    ("k<<<1, 1>>>(CUtensorMap a = tensormap(int a[8], dims {8}, box {4}))", SemanticError,
     "two arguments (buffers or tensor maps) are named a", "int a[8]"),
    ("k<<<1, 1>>>(CUtensorMap tm = tensormap(int a[8], dims {8}, box {4})", ParseError, "expected `)`", None),
    ("k<<<1, 1>>>(CUtensorMap tm = tensor(int a[8], dims {8}, box {4}))", ParseError, "tensormap(...)",
     "tensor("),
    ("k<<<1, 1>>>(CUtensorMap tm = tensormap(int a[8], box {4}, dims {8}))", ParseError, "`dims {...}`",
     "box {4}, dims"),
]


@pytest.mark.parametrize("text,cls,says,at", BAD, ids=[b[2] for b in BAD])
def test_a_bad_tensor_map_is_a_located_error(text, cls, says, at):
    with pytest.raises(cls) as e:
        parse_launch(text)
    assert says in e.value.message, e.value.message
    assert e.value.pos is not None and e.value.pos.file == "<launch>"
    if at is not None:
        assert text[e.value.pos.col - 1:].startswith(at), (text[e.value.pos.col - 1:], at)


# the pieces a launch is made of, and junk; any sequence of them parses or is a located error
_PIECES = ["k<<<", "1", ", ", "2", ">>>", "(", ")", "CUtensorMap ", "tm", " = ", "tensormap(", "int ", "a",
           "[16]", "[8]", " = {1, 2}", "dims ", "box ", "{8, 2}", "{4, 2}", "{4}", "{8}", "{300}", "{0}",
           "short ", "char ", "float ", "const ", "__grid_constant__ ", "int out[8]", ",", "{", "}", "-1",
           "(2, 1)", ";", " ", "x", "[", "]"]
_VALID = ["k<<<1, 2>>>(CUtensorMap tm = tensormap(int a[16], dims {8, 2}, box {4, 2}), int out[8])",
          "k<<<1, 1>>>(CUtensorMap tm = tensormap(o, dims {8}, box {4}), int o[8])"]


@st.composite
def launch_texts(draw) -> str:
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(_PIECES), max_size=40)))
    text = draw(st.sampled_from(_VALID))  # a valid launch, mutated
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 6)))
        text = text[:i] + draw(st.text(string.digits + "{}(),[] abkt", max_size=4)) + text[j:]
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(launch_texts())
def test_any_launch_text_parses_or_is_a_located_error(text):
    """Never a crash: a Launch whose tensor maps keep cuTensorMapEncodeTiled's rules, or a ptxmm
    error located in the launch text."""
    try:
        launch = parse_launch(text)
    except PtxmmError as e:
        assert e.pos is not None and e.pos.file == "<launch>", (text, e)
        assert 1 <= e.pos.col <= len(text) + 1, (text, e)
        return
    buffers = {b.name: b for b in launch.buffers}
    for tm in launch.tensormaps:
        b = buffers[tm.array]
        assert tm.esize == int(b.type[1:]) // 8 == 4 and len(tm.dims) == len(tm.box) <= 2
        assert tm.box[0] * tm.esize % 16 == 0 and all(s % 16 == 0 for s in tm.strides)
        assert all(1 <= x <= 256 for x in tm.box) and b.count >= tm.dims[0] * (tm.dims[1:] or (1,))[0]


# ----- 2. nvcc's PTX of a __grid_constant__ CUtensorMap parameter ------------------------------------

def test_param_types_name_the_tensor_map_struct():
    assert param_types("_Z1k14CUtensorMap_stPi") == ["NCUtensorMap_st", "Pi"]
    assert param_types("_Z1k14CUtensorMap_stS_Pi") == ["NCUtensorMap_st", "NCUtensorMap_st", "Pi"]
    assert param_types("_Z1kPi14CUtensorMap_stS_") == ["Pi", "NCUtensorMap_st", "Pi"]


def test_the_copy_reads_the_box_of_the_map_s_buffer():
    """out[0] = the box's first word (in[4]), out[1] = its last (in[15]); other values in the
    buffer move the outcome with them (nothing is hard-coded)."""
    assert outcomes(load(module())) == [{"out[0]": 5, "out[1]": 16}]
    other = LAUNCH.replace(IN16, "{" + ", ".join(str(100 + i) for i in range(16)) + "}")
    assert outcomes(load(module(), other)) == [{"out[0]": 104, "out[1]": 115}]


def test_cutlass_s_cache_hint_and_the_param_address_without_cvta_read_the_same():
    hint = COPY.replace(".tile.mbarrier::complete_tx::bytes", ".mbarrier::complete_tx::bytes.L2::cache_hint"
                        ).replace("[%r2];", "[%r2], %rd4;")
    policy = "\tmov.b64 %rd4, 1152921504606846976;"  # CUTLASS's EVICT_NORMAL
    assert outcomes(load(module(hint, policy))) == [{"out[0]": 5, "out[1]": 16}]
    direct = COPY.replace("[%rd3,", "[%rd1,")  # the .param address itself: the same number in ptxmm
    assert outcomes(load(module(direct))) == [{"out[0]": 5, "out[1]": 16}]


def test_a_box_crossing_the_tensor_s_boundary_is_zero_filled():
    """dims {8, 1}: the box's second row lies outside the tensor ("Elements in the Bounding Box
    which fall outside of the tensor boundary are set to 0"), though the buffer holds it."""
    launch = LAUNCH.replace("dims {8, 2}", "dims {8, 1}")
    assert outcomes(load(module(), launch)) == [{"out[0]": 5, "out[1]": 0}]


def test_expecting_more_bytes_than_the_box_holds_hangs():
    """box {4, 1} is 16 bytes; the phase expects 32: the complete-tx leaves tx-count 16, the
    phase never completes, the wait spins forever — the liveness query's hang."""
    res = ptxmm.check(load(module(), LAUNCH.replace("box {4, 2}", "box {4, 1}")))
    assert {str(f.kind) for f in res.findings} == {"hang"}
    assert {str(f.kind) for f in ptxmm.check(load(module())).findings} == set()


def test_two_tensor_maps_name_their_own_buffers():
    """Two map parameters, one copy from each into buf (the mbarrier expects both: two arrivals, 64
    bytes): the two boxes' words race, and each load sees one map's word — never another value."""
    params = (".param .align 128 .b8 k_param_0[128],\n\t.param .u64 k_param_1,\n"
              "\t.param .align 128 .b8 k_param_2[128]")
    second = ("\tmov.b64 %rd6, k_param_2;\n\tcvta.param.u64 %rd7, %rd6;\n\tmov.u32 %r12, 32;\n"
              "\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r12;\n\t" + COPY)
    launch = LAUNCH[:-1] + (", CUtensorMap tm2 = tensormap(int in2[16] = {" +
                            ", ".join(str(50 + i) for i in range(16)) + "}, dims {8, 2}, box {4, 2}))")
    text = module(COPY.replace("[%rd3,", "[%rd7,"), second, params).replace(
        "\tmbarrier.init.shared::cta.b64 [%r2], 1;", "\tmbarrier.init.shared::cta.b64 [%r2], 2;")
    prog = load(text, launch)
    res = ptxmm.check(prog)
    got = {(o["out[0]"], o["out[1]"]) for o in (x.outcome.as_dict() for x in res.outcomes)}
    assert {(5, 16), (54, 65)} <= got <= {(a, b) for a in (5, 54) for b in (16, 65)}, got
    assert "race" in {str(f.kind) for f in res.findings}
    layout = prog.layout
    assert layout.base_of("in2") != layout.base_of("in")
    assert {r.ptx for r in layout.regions if r.tensormap is not None} == {"k_param_0", "k_param_2"}


# ----- 3. what stays refused, located ------------------------------------------------------------------

def _raises(text: str, cls, says: str, needle: str | None, launch: str = LAUNCH) -> None:
    with pytest.raises(cls) as e:
        ptxmm.check(load(text, launch))
    assert says in e.value.message, e.value.message
    if needle is not None:
        assert e.value.pos is not None and e.value.pos.line == line_of(text, needle), (e.value.pos, needle)


def test_a_3d_copy_is_not_supported_yet():
    c3 = COPY.replace(".2d.", ".3d.").replace("{%r8, %r9}", "{%r8, %r9, %r9}")
    _raises(module(c3), UnsupportedError, "cp.async.bulk.tensor.3d", "cp.async.bulk.tensor.3d")


def test_im2col_is_not_supported_yet():
    im = COPY.replace(".tile.", ".im2col.")
    _raises(module(im), UnsupportedError, "im2col", "im2col")


def test_tensormap_replace_in_a_kernel_is_not_supported_yet():
    rep = "\ttensormap.replace.tile.global_address.global.b1024.b64 [%rd3], %rd5;"
    _raises(module(extra=rep), UnsupportedError, "a tensor map the kernel modifies", "tensormap.replace")


def test_reading_the_map_s_bytes_is_not_supported():
    _raises(module(extra="\tld.param.u64 %rd8, [k_param_0];"), UnsupportedError,
            "reads the bytes of a tensor map",
            "ld.param.u64 %rd8")
    _raises(module(extra="\tld.u64 %rd8, [%rd3+8];"), UnsupportedError, "accesses the tensor map tm as data",
            "ld.u64 %rd8")


def test_a_map_in_global_or_constant_memory_is_refused():
    on_out = COPY.replace("[%rd3,", "[%rd5,")  # the out buffer's address: a map in global memory
    _raises(module(on_out), SemanticError, "no tensor map the launch gives", "cp.async.bulk.tensor")
    const = COPY.replace("[%rd3,", "[%rd9,")
    _raises(module(const, "\tmov.u64 %rd9, cmap;", top=".const .align 64 .b8 cmap[128];"), UnsupportedError,
            "not a kernel parameter", "cp.async.bulk.tensor")


def test_a_map_address_loaded_from_memory_is_not_supported():
    loaded = COPY.replace("[%rd3,", "[%rd9,")
    _raises(module(loaded, "\tld.global.u32 %r13, [%rd5];\n\tcvt.u64.u32 %rd9, %r13;"), UnsupportedError,
            "tensor map address depends on a loaded value", "cp.async.bulk.tensor")


def test_a_struct_by_value_that_is_not_a_map_is_not_supported():
    text = module(params=".param .align 8 .b8 k_param_0[64],\n\t.param .u64 k_param_1")
    with pytest.raises(UnsupportedError) as e:
        load(text, "k<<<1, 1>>>(int x[4], int out[2])")
    # located at the kernel's header (nvcc's parameter list is one statement)
    assert "k_param_0" in e.value.message and e.value.pos.line == line_of(text, ".entry k(")
    with pytest.raises(UnsupportedError) as e:  # the map's parameter given a buffer
        load(module(), "k<<<1, 1>>>(int x[4], int out[2])")
    assert "CUtensorMap passed by value" in e.value.message
    assert e.value.pos.line == line_of(module(), ".entry")
    with pytest.raises(SemanticError) as e:  # a map for the pointer parameter
        load(module(), "k<<<1, 1>>>(CUtensorMap t = tensormap(int a[8], dims {8}, box {4}), "
                       "CUtensorMap u = tensormap(int b[8], dims {8}, box {4}))")
    assert "not a CUtensorMap" in e.value.message and e.value.pos.col > 40


def test_a_condition_cannot_name_the_map():
    text = module()
    with pytest.raises(SemanticError, match="names the tensor map tm"):
        parse_kernel(text, "k.ptx", KernelArgs(launch=LAUNCH, exists="tm == 0"))


@pytest.mark.skipif(shutil.which("nvcc") is None,
                    reason="nvcc not on the PATH: the libcu++ form is not compiled")
def test_libcu_s_cuda_ptx_tensor_copy_reads_the_box(tmp_path, monkeypatch):
    """cuda::ptx::cp_async_bulk_tensor (libcu++'s <cuda/ptx>: `.tile`, the copy before the
    arrive.expect_tx, the wait a selp in a { } block) reads the same box."""
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    cu = tmp_path / "k.cu"
    cu.write_text(f"""// ptxmm: launch {LAUNCH.replace('k<<<1, 1>>>', 'k<<<1, 2>>>')}
#include <cuda.h>
#include <cuda/ptx>
namespace ptx = cuda::ptx;
__global__ void k(const __grid_constant__ CUtensorMap tm, int *out) {{
  __shared__ alignas(128) int buf[2][4];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {{
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }}
  __syncthreads();
  if (threadIdx.x == 0) {{
    int32_t c[2] = {{4, 0}};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &buf, &tm, c, &bar);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, sizeof(buf));
  }}
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {{
  }}
  out[threadIdx.x] = buf[threadIdx.x][threadIdx.x];
}}
""")
    res = ptxmm.check(ptxmm.load(cu))
    assert [o.outcome.as_dict() for o in res.outcomes] == [{"out[0]": 5, "out[1]": 14}]
    assert not res.findings


# ----- 4. the examples: what the box is ----------------------------------------------------------------

def test_the_load_kernel_moves_the_box_at_4_0_and_its_twin_may_see_zeros():
    res = ptxmm.check(ptxmm.load(KDIR / "tma-tensor-load-2d.ptx"))
    assert [o.outcome.as_dict() for o in res.outcomes] == [
        {f"out[{i}]": v for i, v in enumerate([5, 6, 7, 8, 13, 14, 15, 16])}]
    broken = ptxmm.check(ptxmm.load(KDIR / "tma-tensor-load-2d-no-expect-tx.ptx"))
    firsts = {o.outcome.as_dict()["out[0]"] for o in broken.outcomes}
    assert firsts == {0, 5}  # the stale 0 or the box's word, nothing else


def test_the_store_kernel_writes_only_the_box():
    res = ptxmm.check(ptxmm.load(KDIR / "tma-tensor-store.ptx"), observe="all")
    (o,) = [o.outcome.as_dict() for o in res.outcomes]
    # the written elements, and out[0], out[3] which the condition names: untouched
    assert o == {"out[0]": 0, "out[3]": 0, "out[4]": 1, "out[5]": 2, "out[6]": 3, "out[7]": 4}


def test_z3_and_brute_force_agree_on_the_store_kernels():
    for name in ("tma-tensor-store", "tma-tensor-store-no-fence"):
        prog = ptxmm.load(KDIR / f"{name}.ptx")
        z, b = ptxmm.check(prog), ptxmm.check(prog, engine="brute")
        assert {o.outcome for o in z.outcomes} == {o.outcome for o in b.outcomes}, name
        assert {str(f.kind) for f in z.findings} == {str(f.kind) for f in b.findings}, name


# ----- 5. crossval: the plan of a kernel with a tensor map (CPU; a fake encoder) -----------------------

class FakeEncoder:
    """Records cuTensorMapEncodeTiled's arguments; the map's bytes name the call."""

    def __init__(self):
        self.calls: list[tuple] = []

    def __call__(self, a) -> bytes:  # a tensor.MapArgs
        self.calls.append((a.dtype, len(a.dims), a.address, tuple(a.dims), tuple(a.strides), tuple(a.box),
                           tuple(a.elem_strides)))
        return len(self.calls).to_bytes(8, "little") + a.address.to_bytes(8, "little") + bytes(112)


def _plan(name: str):
    from ptxmm.device.kernel_plan import plan_kernel

    path = KDIR / f"{name}.ptx"
    return plan_kernel(ptxmm.load(path), path.read_text())


def test_the_plan_encodes_the_map_of_each_instance_s_own_buffer():
    from ptxmm.device.kernel_plan import MapPlan
    from ptxmm.device.kernel_run import instance_values

    plan = _plan("tma-tensor-load-2d")
    assert [b.name for b in plan.buffers] == ["in", "out"]
    assert plan.maps == (MapPlan("tm", 0, 3, (8, 2), (32,), (4, 2)),)
    assert plan.args[0].tensormap == 0 and plan.args[1].buffer == 1
    assert len(plan.allowed) == 1  # over in (unchanged) and out (the box)
    (state,) = plan.allowed
    assert state == tuple(range(1, 17)) + (5, 6, 7, 8, 13, 14, 15, 16)
    enc = FakeEncoder()
    bases = [0x7F00_0000_0000 + i * plan.stride for i in range(3)]
    args = [instance_values(plan, base, enc) for base in bases]
    at = [base + plan.buffers[0].offset for base in bases]  # `in` in each instance's block
    assert enc.calls == [(3, 2, a, (8, 2), (32,), (4, 2), (1, 1)) for a in at]
    for k, (base, a) in enumerate(zip(bases, args)):
        tm, out = a
        assert isinstance(tm, bytes) and len(tm) == 128
        assert tm[:16] == (k + 1).to_bytes(8, "little") + at[k].to_bytes(8, "little")
        assert out == base + plan.buffers[1].offset
    assert plan.buffers[0].offset % 16 == 0 and plan.stride % 16 == 0  # globalAddress 16-byte aligned


def test_the_store_kernel_s_map_and_pointer_name_one_buffer():
    from ptxmm.device.kernel_run import instance_values

    plan = _plan("tma-tensor-store")
    assert [b.name for b in plan.buffers] == ["out"] and plan.maps[0].strides == () and plan.maps[0].rank == 1
    enc = FakeEncoder()
    tm, out = instance_values(plan, 0x10000, enc)
    assert enc.calls[0][2] == out == 0x10000 + plan.buffers[0].offset
    with pytest.raises(PtxmmError, match="needs an encoder"):
        instance_values(plan, 0x10000, None)


def test_kernel_args_pass_a_map_as_one_128_byte_element():
    """What CuPy is given (numpy needed: it comes with CuPy, the device extras)."""
    np = pytest.importorskip("numpy", reason="numpy is not installed (it comes with the device extras' CuPy)")
    from ptxmm.device.kernel_run import instance_args

    plan = _plan("tma-tensor-load-2d")
    tm, out = instance_args(plan, 0x10000, FakeEncoder())
    assert tm.shape == (1,) and tm.dtype.itemsize == 128  # CuPy passes a size-one array by value
    assert tm.tobytes()[8:16] == (0x10000 + plan.buffers[0].offset).to_bytes(8, "little")
    assert isinstance(out, np.uint64) and int(out) == 0x10000 + plan.buffers[1].offset


@pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("ptxas") is None,
                    reason="nvcc or ptxas not on the PATH: the .cu files are not compiled and assembled")
def test_crossval_plans_and_assembles_the_tensor_copy_kernels_for_sm_90():
    from ptxmm.device.kernel_cross import KernelJob, plan_kernel_file

    for name in ("tma-tensor-load-2d", "tma-tensor-load-2d-no-expect-tx", "tma-tensor-store",
                 "tma-tensor-store-no-fence"):
        job = plan_kernel_file(KDIR / f"{name}.cu", "ptx", 2)
        assert isinstance(job, KernelJob), getattr(job, "message", job)
        assert job.kplan.maps and Path(job.cubin).is_file()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on the PATH: no recompile to compare")
def test_a_recompile_of_the_tensor_load_equals_the_committed_ptx(tmp_path):
    """test_hopper_kernels compares every kernel (the others under -m slow); the tensor load here,
    unmarked: its PTX is what the launch's map, the cache hint and the cvta.param tests read."""
    from test_hopper_idioms import test_a_recompile_equals_the_committed_ptx as recompile

    recompile("tma-tensor-load-2d", tmp_path)
