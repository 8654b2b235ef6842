"""Floating point in kernels: nvcc's float instructions lowered bit-exactly (ir/floats.py), float
literals, float buffers and conditions, the ISA's unspecified NaNs, atom.add.f32's subnormal rule
by state space, and the examples thread-fence-reduction.cu (ok) and its variant without the last
block's fence (race)."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.errors import ParseError, SemanticError, UnsupportedError
from ptxmm.ir import floats as F
from ptxmm.ir.program import Alu
from ptxmm.kernel import module as ptx_module
from ptxmm.kernel.directives import float_literals
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.launch import parse_launch
from ptxmm.kernel.module.floats import literal_bits
from ptxmm.kernel.module.operands import FloatLit
from ptxmm.loading import parse_kernel

HEAD = ".version 8.3\n.target sm_90\n.address_size 64\n"
REGS = ("\t.reg .pred %p<4>;\n\t.reg .f32 %f<9>;\n\t.reg .f64 %fd<4>;\n\t.reg .b32 %r<5>;\n"
        "\t.reg .b64 %rd<4>;\n")


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def kernel(body: str, launch: str, cond: str | None = None, quant: str = "forall"):
    text = HEAD + (".visible .entry k(\n.param .u64 k_param_0\n)\n{\n" + REGS
                   + "\tld.param.u64 %rd1, [k_param_0];\n" + body + "\n\tret;\n}\n")
    kw = {quant: cond} if cond else {}
    return parse_kernel(text, "k.ptx", KernelArgs(launch=launch, **kw))


def holds(body: str, cond: str, launch: str = "k<<<1, 1>>>(float x[4] = {1.5, 2.25, 0.1, -0.0})",
          quant: str = "forall") -> bool:
    return ptxmm.check(kernel(body, launch, cond, quant), flags=False).holds


# ----- arithmetic, bit-exact -------------------------------------------------------------------------

@pytest.mark.parametrize("ins, expect", [
    ("add.f32 %f3, %f1, %f2;", 1.5 + 2.25),
    ("sub.rn.f32 %f3, %f1, %f2;", 1.5 - 2.25),
    ("mul.rz.f32 %f3, %f1, %f2;", 1.5 * 2.25),
    ("div.rn.f32 %f3, %f1, %f2;", 0.6666666865348816),  # 2/3 rounded to nearest float
    ("fma.rn.f32 %f3, %f1, %f2, %f1;", 1.5 * 2.25 + 1.5),
    ("min.f32 %f3, %f1, %f2;", 1.5),
    ("max.f32 %f3, %f1, %f2;", 2.25),
    ("neg.f32 %f3, %f1;", -1.5),
    ("add.sat.f32 %f3, %f1, %f2;", 1.0),
])
def test_float_arithmetic_on_loaded_values(ins, expect):
    body = (f"\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+4];\n\t{ins}\n"
            "\tst.global.f32 [%rd1+12], %f3;")
    assert holds(body, f"x[3] == 0f{bits(expect):08X}")
    assert not holds(body, f"x[3] == 0f{bits(expect) ^ 1:08X}")


def test_an_f32_sum_rounds_to_nearest():
    # 0.1f + 0.2f is 0x3E99999A in binary32 (not the double 0.30000000000000004 rounded)
    body = "\tld.global.f32 %f1, [%rd1+8];\n\tadd.f32 %f2, %f1, %f1;\n\tadd.f32 %f3, %f2, %f1;\n" \
           "\tst.global.f32 [%rd1+12], %f3;"
    assert holds(body, "x[3] == 0f3E99999A")


def test_float_literals_in_instructions():
    body = "\tmov.f32 %f1, 0f3FC00000;\n\tadd.f32 %f2, %f1, 1.5;\n\tmul.f32 %f3, %f2, 0d4000000000000000;\n" \
           "\tst.global.f32 [%rd1+12], %f3;"
    assert holds(body, "x[3] == 6.0")


def test_setp_unordered_and_ordered_with_nan():
    body = ("\tmov.f32 %f1, 0f7FC00000;\n\tld.global.f32 %f2, [%rd1];\n"
            "\tsetp.lt.f32 %p1, %f1, %f2;\n\tsetp.ltu.f32 %p2, %f1, %f2;\n"
            "\tselp.u32 %r1, 1, 0, %p1;\n\tselp.u32 %r2, 1, 0, %p2;\n"
            "\tst.global.u32 [%rd1+8], %r1;\n\tst.global.u32 [%rd1+12], %r2;")
    assert holds(body, "out[2] == 0 && out[3] == 1", "k<<<1, 1>>>(unsigned out[4] = {0x3FC00000, 0, 0, 0})")


def test_cvt_between_integers_and_floats():
    body = ("\tld.global.f32 %f1, [%rd1];\n\tcvt.rzi.s32.f32 %r1, %f1;\n\tcvt.rni.s32.f32 %r2, %f1;\n"
            "\tcvt.rn.f32.s32 %f2, %r2;\n\tcvt.f64.f32 %fd1, %f2;\n\tcvt.rn.f32.f64 %f3, %fd1;\n"
            "\tst.global.u32 [%rd1+4], %r1;\n\tst.global.u32 [%rd1+8], %r2;\n\tst.global.f32 [%rd1+12], %f3;")
    assert holds(body, "out[1] == 2 && out[2] == 3 && out[3] == 0x40400000",
                 "k<<<1, 1>>>(unsigned out[4] = {0x40300000, 0, 0, 0})")  # 2.75


# ----- NaN results: unspecified bits ------------------------------------------------------------------

def test_a_nan_result_may_be_any_nan():
    body = "\tld.global.f32 %f1, [%rd1+12];\n\tdiv.rn.f32 %f2, %f1, %f1;\n\tst.global.f32 [%rd1+8], %f2;"
    # 0/0: a NaN, whose bits the ISA leaves open — any NaN, never a number
    for nan in ("0x7FC00000", "0xFFFFFFFF", "0x7F800001"):
        assert holds(body, f"x[2] == {nan}", quant="exists")
    assert not holds(body, "x[2] == 0x7F800000", quant="exists")
    body += "\n\ttestp.notanumber.f32 %p1, %f2;\n\tselp.u32 %r1, 1, 0, %p1;\n\tst.global.u32 [%rd1+4], %r1;"
    assert holds(body, "x[1] == 0x1")


# ----- atom.add.f32: round to nearest, subnormals flushed on global memory only ----------------------

SUB = "0f00000001"  # the smallest subnormal


@pytest.mark.parametrize("space, expect", [("global", 0), ("shared", 2)])
def test_atom_add_f32_flushes_subnormals_on_global_memory_only(space, expect):
    if space == "global":
        body = f"\tatom.global.add.f32 %f1, [%rd1], {SUB};\n\tld.global.f32 %f2, [%rd1];\n" \
               "\tst.global.f32 [%rd1+4], %f2;"
    else:
        body = (f"\t.shared .align 4 .f32 s;\n\tst.shared.f32 [s], {SUB};\n"
                f"\tatom.shared.add.f32 %f1, [s], {SUB};\n\tld.shared.f32 %f2, [s];\n"
                "\tst.global.f32 [%rd1+4], %f2;")
    assert holds(body, f"x[1] == {expect:#x}", "k<<<1, 1>>>(float x[4] = {0f00000001})")


def test_two_threads_adding_floats_atomically_round_in_either_order():
    # x = 2^-24; one thread adds 2^-24, the other 1.0: 2^-23 + 1.0 = 1 + 2^-23 exactly, but
    # (2^-24 + 1.0) rounds to 1.0 (a tie, to even) and 1.0 + 2^-24 again to 1.0
    body = ("\tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n"
            "\tselp.f32 %f1, 0f3F800000, 0f33800000, %p1;\n\tred.global.add.f32 [%rd1], %f1;")
    launch = "k<<<1, 2>>>(float x[1] = {0f33800000})"
    for result in ("0f3F800001", "0f3F800000"):
        res = ptxmm.check(kernel(body, launch, f"x[0] == {result}", "exists"))
        assert res.holds is True and not [f for f in res.findings if str(f.kind) == "race"]
    assert ptxmm.check(kernel(body, launch, "x[0] == 0f3F800000 || x[0] == 0f3F800001")).holds


def test_a_generic_atom_add_f32_is_not_supported_yet():
    with pytest.raises(UnsupportedError, match="generic address") as e:
        kernel("\tatom.add.f32 %f1, [%rd1], %f2;", "k<<<1, 1>>>(float x[1])")
    assert e.value.pos.line == 14


# ----- forms refused, located --------------------------------------------------------------------------

@pytest.mark.parametrize("ins, err, match", [
    ("div.approx.f32 %f1, %f2, %f3;", UnsupportedError, "approximate"),
    ("div.full.f32 %f1, %f2, %f3;", UnsupportedError, "approximate"),
    ("add.f16 %r1, %r2, %r3;", UnsupportedError, "f16"),
    ("min.NaN.f32 %f1, %f2, %f3;", UnsupportedError, "NaN"),
    ("fma.f32 %f1, %f2, %f3, %f4;", ParseError, "rounding modifier"),
    ("cvt.s32.f32 %r1, %f1;", ParseError, "integer rounding"),
    ("setp.lt.and.f32 %p1, %f1, %f2, %p2;", UnsupportedError, "setp"),
    ("atom.global.max.f32 %f1, [%rd1], %f2;", SemanticError, "adds"),  # ptxas: .max takes integers
])
def test_unmodelled_float_forms_are_located(ins, err, match):
    with pytest.raises(err, match=match) as e:
        kernel(f"\t{ins}", "k<<<1, 1>>>(float x[1])")
    assert e.value.pos.line == 14


def test_the_lowered_ir_names_the_operation_and_its_modifiers():
    text = HEAD + ".visible .entry k()\n{\n" + REGS + "\tadd.rz.ftz.sat.f32 %f1, %f2, %f3;\n" \
        "\tcvt.rmi.u16.f64 %r1, %fd1;\n\ttestp.subnormal.f32 %p1, %f1;\n}\n"
    alus = [i for i in ptx_module.parse(text, "k.ptx").entries[0].body if isinstance(i, Alu)]
    assert [(a.op, a.type) for a in alus] == [("f.add.rz.ftz.sat", "f32"), ("f.toint.rmi.u:f64", "u16"),
                                              ("f.testp.subnormal:f32", "pred")]


# ----- launch buffers and conditions --------------------------------------------------------------------

def test_float_buffers_take_c_initialisers():
    launch = parse_launch("k<<<1, 1>>>(float x[6] = {1.5, -0.0, 0.1, 1.1f, inf, 0f00000001}, "
                          "double d[2] = {0.1, -2})")
    x, d = launch.buffers
    assert x.init == (0x3FC00000, 0x80000000, 0x3DCCCCCD, 0x3F8CCCCD, 0x7F800000, 1)
    assert d.init == (0x3FB999999999999A, 0xC000000000000000)


def test_a_double_literal_for_a_float_is_rounded_as_c_does():
    # 1.1 is first a double, then a float (C's conversion): the same float as 1.1f here
    assert parse_launch("k<<<1, 1>>>(float x[1] = {1.1})").buffers[0].init == (0x3F8CCCCD,)


def test_a_condition_on_a_float_buffer_compares_bits():
    body = "\tld.global.f32 %f1, [%rd1];\n\tst.global.f32 [%rd1+8], %f1;"
    assert holds(body, "x[2] == 1.5 && 2.25 == x[1] && x[3] == -0.0")
    assert not holds(body, "x[3] == 0.0")  # -0.0 and +0.0 are different bits
    with pytest.raises(UnsupportedError, match="use == or !="):
        kernel(body, "k<<<1, 1>>>(float x[4])", "x[3] < 2.0")


def test_an_f32_hex_literal_for_a_double_buffer_is_refused():
    with pytest.raises(SemanticError, match="32-bit float"):
        parse_launch("k<<<1, 1>>>(double d[1] = {0f3F800000})")


# ----- both engines, where the brute-force one can run -----------------------------------------------

def test_constant_float_arithmetic_gives_the_same_outcomes_on_both_engines():
    body = ("\tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n\tmul.rn.f32 %f2, %f1, 0f3FC00000;\n"
            "\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.f32 [%rd3], %f2;")
    prog = kernel(body, "k<<<1, 2>>>(float x[2])")
    z, b = (ptxmm.check(prog, engine=e, flags=False).outcome_set for e in ("z3", "brute"))
    assert z == b and len(z) == 1
    assert dict(next(iter(z)).values) == {"x[0]": 0, "x[1]": 0x3FC00000}


# ----- the example -------------------------------------------------------------------------------------

TFR = ROOT / "examples" / "kernels" / "thread-fence-reduction.ptx"


def test_thread_fence_reduction_is_correct_bit_exactly():
    res = ptxmm.check(ptxmm.load(TFR))
    assert res.holds is True and not [f for f in res.findings if str(f.kind) != "flag"]


def test_thread_fence_reduction_without_the_last_blocks_fence_races():
    text = TFR.read_text()
    first = text.index("membar.gl")
    second = text.index("membar.gl", first + 1)
    line_end = text.index("\n", second)
    unfenced = text[:text.rfind("\n", 0, second)] + text[line_end:]
    prog = parse_kernel(unfenced, "k.ptx", KernelArgs(
        launch="reduceSinglePass<<<2, 2>>>(float in[4] = {0.1, 0.2, 0.3, 0.4}, float out[2])",
        forall="out[0] == 0f3F800000"))
    res = ptxmm.check(prog)
    assert res.holds is False
    assert {str(f.kind) for f in res.findings} >= {"race"}


# ----- literals: property tests ----------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 32) - 1))
def test_an_f32_hex_literal_is_its_bits(b):
    c = {"pos": None, "text": "mov.f32"}
    assert literal_bits(FloatLit(f"0f{b:08X}"), 32, c) == b
    if not F.is_nan(b, 32):  # widened exactly to f64, and back
        wide = literal_bits(FloatLit(f"0f{b:08X}"), 64, c)
        assert F.convert(wide, 64, 32, "rn") == b


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_a_decimal_initialiser_is_the_double_python_reads(x):
    got = parse_launch(f"k<<<1, 1>>>(double d[1] = {{{x!r}}})").buffers[0].init[0]
    assert got == struct.unpack("<Q", struct.pack("<d", x))[0]


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_a_float_initialiser_and_a_condition_literal_agree(x):
    text = repr(x)  # the shortest decimal of the double; the float is that double rounded, exactly x
    assert parse_launch(f"k<<<1, 1>>>(float f[1] = {{{text}}})").buffers[0].init[0] == bits(x)
    assert float_literals(f"f[0] == {text}", {"f": 32}) == f"f[0] == {bits(x)}"


# ----- against ptxas and nvcc (skipped where they are not installed) ----------------------------------

PTXAS, NVCC = shutil.which("ptxas"), shutil.which("nvcc")
ACCEPTED = [
    "add.rz.ftz.sat.f32 %f1, %f2, %f3;",
    "sub.rm.f64 %fd1, %fd2, %fd3;",
    "mul.f32 %f1, %f2, 0f3F800000;",
    "fma.rp.ftz.f32 %f1, %f2, %f3, %f4;",
    "mad.rn.f64 %fd1, %fd2, %fd3, %fd1;",
    "div.rn.ftz.f32 %f1, %f2, %f3;",
    "min.ftz.f32 %f1, %f2, %f3;",
    "max.f64 %fd1, %fd2, %fd3;",
    "neg.ftz.f32 %f1, %f2;",
    "abs.f64 %fd1, %fd2;",
    "copysign.f32 %f1, %f2, %f3;",
    "testp.subnormal.f32 %p1, %f1;",
    "setp.geu.ftz.f32 %p1, %f1, %f2;",
    "setp.num.f64 %p1, %fd1, %fd2;",
    "cvt.rzi.s32.f32 %r1, %f1;",
    "cvt.rpi.u16.f64 %rs1, %fd1;",
    "cvt.rm.f32.u32 %f1, %r1;",
    "cvt.rn.f64.s64 %fd1, %rd1;",
    "cvt.f64.f32 %fd1, %f1;",
    "cvt.rz.ftz.f32.f64 %f1, %fd1;",
    "cvt.rni.ftz.f32.f32 %f1, %f2;",
    "cvt.ftz.f32.f32 %f1, %f2;",
    "cvt.rzi.s64.f64 %rd1, %fd1;",
    "mov.f32 %f1, 1.5;",
    "mov.f64 %fd1, 0d3FF0000000000000;",
    "selp.f32 %f1, 0f3F800000, %f2, %p1;",
    "atom.global.add.f32 %f1, [%rd1], %f2;",
    "atom.shared.add.f32 %f1, [%rd1], %f2;",
    "red.global.add.f64 [%rd1], %fd1;",
    "st.global.f32 [%rd1], 0f3F800000;",
]
DECLS = ("\t.reg .pred %p<3>;\n\t.reg .f32 %f<5>;\n\t.reg .f64 %fd<4>;\n\t.reg .b32 %r<3>;\n"
         "\t.reg .b16 %rs<2>;\n\t.reg .b64 %rd<3>;\n")


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_every_float_form_ptxmm_reads_assembles(tmp_path):
    body = "".join(f"\t{ins}\n" for ins in ACCEPTED)
    text = HEAD + ".visible .entry k(.param .u64 p)\n{\n" + DECLS + body + "\tret;\n}\n"
    path = tmp_path / "f.ptx"
    path.write_text(text)
    r = subprocess.run([PTXAS, "-arch=sm_90", str(path), "-o", os.devnull], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    fn = ptx_module.parse(text, "f.ptx").entries[0]
    assert len([i for i in fn.body if isinstance(i, Alu) and i.op.startswith("f.")]) >= 18


SNIPPETS = {
    # atomicAdd(float*): atom.global.add.f32, each block adding a float sum of its loads
    "sum.cu": ("""__global__ void k(const float *in, float *sum) {
    atomicAdd(sum, in[2 * blockIdx.x] + in[2 * blockIdx.x + 1]);
}""", r"atom\.global\.add\.f32|red\.global\.add\.f32"),
    # a float4 read through a volatile pointer, as NCCL's LL protocol polls its flag+data words
    "vec.cu": ("""__device__ float4 ld_volatile(const float4 *p) {
    float4 v;
    asm volatile("ld.volatile.global.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
__global__ void k(const float4 *in, float *out) {
    float4 v = ld_volatile(in);
    out[0] = (v.x + v.y) + (v.z + v.w);
}""", r"ld\.volatile\.global\.v4\.f32"),
    # a struct in shared memory, its field reached through a generic pointer
    "struct.cu": ("""struct S { int a; float b; };
__device__ __noinline__ void put(float *p, float v) { *p = v; }
__global__ void k(const float *in, float *out) {
    __shared__ S s;
    if (threadIdx.x == 0) put(&s.b, in[0] * 2.0f);
    __syncthreads();
    out[threadIdx.x] = s.b;
}""", r"\.shared\.f32|cvta\.shared"),
}
LAUNCHES = {
    "sum.cu": ("k<<<2, 1>>>(float in[4] = {1.0, 2.0, 3.0, 4.0}, float sum[1])", None),
    "vec.cu": ("k<<<1, 1>>>(float in[4] = {0.1, 0.2, 0.3, 0.4}, float out[1])", "out[0] == 0f3F800000"),
    "struct.cu": ("k<<<1, 2>>>(float in[1] = {1.25}, float out[2])", "out[0] == 2.5 && out[1] == 2.5"),
}


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_what_nvcc_makes_of_float_code_is_read(name, tmp_path):
    src, must = SNIPPETS[name]
    cu = tmp_path / name
    cu.write_text(src + "\n")
    ptx = tmp_path / (name[:-3] + ".ptx")
    subprocess.run([NVCC, "-ptx", "-arch=sm_90", "-O3", str(cu), "-o", str(ptx)], check=True,
                   capture_output=True)
    text = ptx.read_text()
    assert re.search(must, text)
    launch, cond = LAUNCHES[name]
    prog = parse_kernel(text, str(ptx), KernelArgs(launch=launch, forall=cond))
    if cond is not None:  # (the atomicAdd sum is read only: Z3 takes long over chains of float adds)
        res = ptxmm.check(prog)
        assert res.holds is True and not [f for f in res.findings if str(f.kind) != "flag"]


@pytest.mark.parametrize("ins, reg, expect", [
    ("cvt.rzi.s32.f32 %r1, %f1;", "%r1", 0),            # f32 → 32-bit: 0
    ("cvt.rzi.u16.f32 %rs1, %f1;", "%rs1", 0),
    ("cvt.rzi.s64.f32 %rd2, %f1;", "%rd2", 1 << 63),    # to a 64-bit integer: 1 << 63 (MININT)
    ("cvt.rzi.s32.f64 %r1, %fd1;", "%r1", 1 << 31),     # from .f64: 1 << 31
])
def test_a_nan_converts_to_an_integer_by_the_isas_width_rule(ins, reg, expect):
    src = "%fd1" if ".f64 " in ins else "%f1"
    mov = "\tmov.f64 %fd1, 0d7FF8000000000000;" if src == "%fd1" else "\tmov.f32 %f1, 0f7FC00000;"
    w = 64 if reg.startswith("%rd") else 16 if reg.startswith("%rs") else 32
    body = (f"\t.reg .b16 %rs<2>;\n{mov}\n\t{ins}\n\tst.global.u{w} [%rd1], {reg};")
    buf = "unsigned long long" if w == 64 else "unsigned short" if w == 16 else "unsigned"
    assert holds(body, f"x[0] == {expect}", f"k<<<1, 1>>>({buf} x[1])")


def test_cvt_f32_f32_is_the_value_and_ftz_flushes_it():
    body = "\tmov.f32 %f1, 0f00000003;\n\tcvt.f32.f32 %f2, %f1;\n\tcvt.ftz.f32.f32 %f3, %f1;\n" \
           "\tst.global.f32 [%rd1], %f2;\n\tst.global.f32 [%rd1+4], %f3;"
    assert holds(body, "x[0] == 0f00000003 && x[1] == 0f00000000")


def test_ftz_on_a_double_to_float_cvt_flushes_the_float_result_only():
    # the smallest double subnormal, rounded up to the smallest float subnormal, then flushed
    body = ("\tmov.f64 %fd1, 0d0000000000000001;\n\tcvt.rp.ftz.f32.f64 %f1, %fd1;\n"
            "\tcvt.rp.f32.f64 %f2, %fd1;\n\tst.global.f32 [%rd1], %f1;\n\tst.global.f32 [%rd1+4], %f2;")
    assert holds(body, "x[0] == 0f00000000 && x[1] == 0f00000001")
