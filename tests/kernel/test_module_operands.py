"""Issue 38, item 6: a PTX module is checked as ptxas checks it. Every instruction goes through the
``.ptx`` front end's operand rules (the forms the litmus decoder reads) or ptxas's rules for the
forms the module reader lowers (src/ptxmm/kernel/module/checks.py, each rule asked of ptxas); a
tensor copy's ``.Nd`` must be its map's rank. The issue's cases are located errors, the forms nvcc
writes (a byte loaded into a 16-bit register, a 32-bit .shared address) still read and compute what
the hardware does, every bundled module still reads, and a differential test asks ptxas about small
generated modules (tests/support/module_gen.py). The ptxas tests skip, visibly, without ptxas."""

from __future__ import annotations

import glob
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from support import ROOT
from support import module_gen as gen
from support.ptxas_oracle import PTXAS

import ptxmm
from ptxmm.errors import PtxmmError, SemanticError
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.module import parse
from ptxmm.loading import parse_kernel

needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed (CUDA toolkit)")


def kernel(body: str, regs: str = ".reg .b16 %rs<3>;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<4>;") -> str:
    """A one-buffer kernel: %rd2 is out's global address; ``body`` at line 15 on (the
    declarations on line 10)."""
    return f"""// ptxmm: launch k<<<1, 1>>>(int out[1])
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
\t.param .u64 k_param_0
)
{{
\t{" ".join(regs.split())}


\tld.param.u64 \t%rd1, [k_param_0];
\tcvta.to.global.u64 \t%rd2, %rd1;
{body}
\tret;
}}
"""


def refused(text: str) -> PtxmmError:
    with pytest.raises(PtxmmError) as e:
        parse(text, "k.ptx")
    return e.value


def out0(text: str, launch: str = "k<<<1, 1>>>(int out[1])") -> list[int]:
    prog = parse_kernel(text, "k.ptx", KernelArgs(launch=launch))
    return sorted({o.outcome.as_dict()["out[0]"] for o in ptxmm.check(prog, engine="brute").outcomes})


# ----- the cases ------------------------------------------------------------------------------

def test_add_s32_on_a_64_bit_register_is_refused_where_it_is_written():
    """Was: a truncated 6 (ptxas: "Arguments mismatch for instruction 'add'")."""
    text = kernel("\tmov.u64 \t%rd3, 4294967298;\n\tadd.s32 \t%rd3, %rd3, 4;\n"
                  "\tcvt.u32.u64 \t%r1, %rd3;\n\tst.global.u32 \t[%rd2], %r1;")
    e = refused(text)
    assert isinstance(e, SemanticError)
    assert str(e).startswith("k.ptx:16:11: error: %rd3 is a .b64 register; the destination of `add.s32` "
                             "is a .s32"), str(e)
    assert "it takes a .u32, .s32 or .b32 register" in str(e)
    # the well-typed program: the 64-bit sum, then cvt's truncation (what the hardware computes)
    assert out0(text.replace("add.s32", "add.s64")) == [6]


def test_ld_u32_into_a_16_bit_register_is_refused_where_it_is_written():
    """Was: 4464 (ptxas: "Arguments mismatch for instruction 'ld'")."""
    text = kernel("\tld.global.u32 \t%rs1, [%rd2];\n\tcvt.u32.u16 \t%r1, %rs1;\n"
                  "\tst.global.u32 \t[%rd2], %r1;")
    e = refused(text)
    assert str(e).startswith("k.ptx:15:17: error: %rs1 is a .b16 register; the destination of "
                             "`ld.global.u32` is a .u32"), str(e)
    assert "(or a wider integer one)" in str(e)


def test_loads_into_wider_registers_extend_as_the_isa_says():
    """ptxas takes ld.u8/ld.s8 into a 16- or 32-bit register (nvcc's `ld.global.u8 %rs1`): zero- or
    sign-extended by the load's type."""
    body = ("\tld.global.s8 \t%rs1, [%rd2];\n\tcvt.s32.s16 \t%r1, %rs1;\n\tshr.u32 \t%r2, %r1, 24;\n"
            "\tst.global.u8 \t[%rd2], %r2;")
    launch = "k<<<1, 1>>>(uint8_t out[1] = {200})"  # 0xC8: -56 read signed
    assert out0(kernel(body), launch) == [255]  # sign-extended to 16 bits, then to 32
    assert out0(kernel(body.replace("ld.global.s8", "ld.global.u8")), launch) == [0]
    body = "\tld.global.s16 \t%r1, [%rd2];\n\tshr.u32 \t%r2, %r1, 24;\n\tst.global.u16 \t[%rd2], %r2;"
    launch = "k<<<1, 1>>>(uint16_t out[1] = {0x8234})"
    assert out0(kernel(body), launch) == [255]
    assert out0(kernel(body.replace("ld.global.s16", "ld.global.u16")), launch) == [0]


# ----- the rules, each asked of ptxas -----------------------------------------------------------------

REFUSED = [  # (instruction, message fragment, column); ptxas refuses each (see checks.py)
    ("\tcvt.s64.s32 \t%r1, %r2;", "%r1 is a .b32 register; the destination of `cvt.s64.s32` is a .s64", 15),
    ("\tcvt.b32.u16 \t%r1, %rs1;", "`cvt.b32.u16` does not take the type .b32", 2),
    ("\tmul.wide.u32 \t%r1, %r2, %r2;", "the destination of `mul.wide.u32` is a .u64", 16),
    ("\tmul.wide.u64 \t%rd3, %rd1, %rd1;", "`mul.wide.u64` does not take the type .u64", 2),
    ("\tmad.wide.u32 \t%rd3, %r1, %r2, %r2;", "the third source of `mad.wide.u32` is a .u64", 32),
    ("\tabs.u32 \t%r1, %r2;", "`abs.u32` does not take the type .u32", 2),
    ("\tbfe.u32 \t%r1, %rd1, 2, 3;", "the first source of `bfe.u32` is a .u32", 16),
    ("\tcvta.to.global.u64 \t%r1, %rd1;", "the destination of `cvta.to.global.u64` is a .u64", 22),
    ("\tld.global.v2.u32 \t{%r1, %rs1}, [%rd2];", "the registers of the vector", 20),
    ("\tld.param.u64 \t%r1, [k_param_0];", "the destination of `ld.param.u64` is a .u64", 16),
    ("\t@%r1 bra \tL;\nL:", "the guard %r1 is not a .pred", 3),
    ("\tld.param.pred \t%p1, [k_param_0];", "`ld.param.pred` does not take the type .pred", 2),
    ("\tcvta.to.shared.u32 \t%r1, %r2;", "`cvta.to.shared.u32` does not take the type .u32", 2),
    ("\tadd.u32 \t%r1, %tid.x, 1;", "the special register %tid.x as an operand of `add.u32`", 16),
    ("\tmov.u64 \t%rd3, %tid.x;", "`mov.u64` reads the 32-bit special register %tid.x at .u64", 17),
    ("\tmov.u16 \t%rs1, %laneid;", "reads the 32-bit special register %laneid at .u16", 17),
    ("\tsetp.eq.s32 \t%p1, %rd1, 0;", "%rd1 is a .b64 register; the first source of `setp.eq.s32`", 20),
]
REGS = ".reg .pred %p<2>;\n\t.reg .b16 %rs<3>;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<4>;"


@pytest.mark.parametrize("line, says, col", REFUSED, ids=[r[0].split()[0] for r in REFUSED])
def test_a_form_ptxas_refuses_is_a_located_error(line, says, col):
    e = refused(kernel(line, REGS))
    assert says in str(e), str(e)
    assert str(e).startswith(f"k.ptx:15:{col}:"), str(e)


ACCEPTED = ["\tcvt.u32.u16 \t%r1, %r2;", "\tcvt.u16.u32 \t%rd3, %r1;", "\tmov.u16 \t%rs1, %tid.x;",
            "\tcvt.u64.u32 \t%rd3, %laneid;", "\tld.global.v2.u8 \t{%r1, %r2}, [%rd2];",
            "\tmul.wide.s16 \t%r1, %rs1, %rs2;", "\tbfi.b32 \t%r1, %r2, %r1, 2, 3;",
            "\tld.param.u32 \t%rd3, [k_param_0];", "\tmov.u32 \t%r1, %clusterid.x;"]


@pytest.mark.parametrize("line", ACCEPTED)
def test_a_form_ptxas_accepts_reads(line):
    parse(kernel(line, REGS), "k.ptx")


@needs_ptxas
def test_the_tables_agree_with_ptxas():
    """Each refused form is refused by ptxas, each accepted one assembles (one run per form)."""
    for line, *_ in REFUSED:
        assert not gen.ptxas_verdict(kernel(line, REGS))[0], line
    for line in ACCEPTED:
        ok, said = gen.ptxas_verdict(kernel(line, REGS))
        assert ok, (line, said)


# ----- tensor copies against their map's rank --------------------------------------------------------

LITMUS_1D = """.global .b32 a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.global .tensormap tm = tensormap(a, dims {8}, box {4});
.shared .u32 s[4];
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cta 0 {
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 16;
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [tm, {1, 1}], [bar];
WAIT:
    mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra WAIT;
    ld.shared.u32 %r0, [s];
}
exists (T0:%r0 == 0)
"""


def test_a_1d_map_given_to_a_2d_copy_in_a_litmus_test_is_a_located_error():
    """Was: a silent zero fill (row 1 of a 1-d tensor is outside it)."""
    with pytest.raises(SemanticError) as e:
        ptxmm.check(ptxmm.parse(LITMUS_1D, "t.ptx"))
    assert str(e.value).startswith("t.ptx:7:5: error: `cp.async.bulk.tensor.2d"), str(e.value)
    assert "copies a 2-d box, but tensor map tm is 1-d (dims {8}, box {4})" in str(e.value)
    right = LITMUS_1D.replace("tensor.2d", "tensor.1d").replace("{1, 1}", "{1}")
    assert [o.outcome.as_dict() for o in ptxmm.check(ptxmm.parse(right, "t.ptx")).outcomes] == [{"T0:%r0": 2}]


def test_a_1d_map_given_to_a_2d_copy_in_a_kernel_is_a_located_error_at_launch():
    """Was: a bogus hang (a 4-word box where the mbarrier expects 8)."""
    from test_tensor_maps_in_kernels import IN16, module

    text = module()
    launch = (f"k<<<1, 1>>>(CUtensorMap tm = tensormap(int in[16] = {IN16}, dims {{16}}, box {{8}}), "
              "int out[2])")
    with pytest.raises(SemanticError) as e:
        ptxmm.check(parse_kernel(text, "k.ptx", KernelArgs(launch=launch)))
    assert "copies a 2-d box, but the launch's tensor map tm is 1-d (dims {16}, box {8})" in str(e.value)
    assert str(e.value).startswith("k.ptx:"), str(e.value)
    assert "in the launch" in str(e.value)


# ----- every bundled module still reads --------------------------------------------------------------

BUNDLED = sorted(f for d in ("examples/kernels", "examples/hopper/kernels", "tests/data/kernels")
                 for f in glob.glob(str(ROOT / d / "*.ptx")))


def test_every_bundled_module_reads():
    assert len(BUNDLED) >= 40
    refusals = []
    for f in BUNDLED:
        try:
            parse(open(f).read(), f)
        except PtxmmError as e:
            refusals.append(str(e))
    assert refusals == []


# ----- the differential test against ptxas -----------------------------------------------------------

EXAMPLES = int(os.environ.get("PTXMM_MODULE_EXAMPLES", "40"))
COUNTS: Counter = Counter()


def _agree(m) -> None:
    regs, lines = m
    text = gen.module(regs, lines)
    ok, said = gen.ptxas_verdict(text)
    verdict, message = gen.ptxmm_verdict(text)
    COUNTS[f"ptxas {'accepts' if ok else 'rejects'}, ptxmm {verdict}"] += 1
    if verdict == "unsupported":
        return
    assert verdict == ("accept" if ok else "reject"), (
        f"ptxas {'accepts' if ok else 'rejects'} and ptxmm says {verdict}:\n{text}\nptxas: {said}\n"
        f"ptxmm: {message}")
    if verdict == "reject":
        assert message.startswith("k.ptx:"), message  # located


@needs_ptxas
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen.modules())
def test_ptxmm_refuses_exactly_what_ptxas_refuses(m):
    _agree(m)


@needs_ptxas
@pytest.mark.slow  # ~1000 ptxas runs, about a minute
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen.modules(max_instrs=5))
def test_ptxmm_refuses_exactly_what_ptxas_refuses_at_length(m):
    _agree(m)


def test_a_vector_access_through_a_32_bit_address_is_refused():
    """Found by the differential test: ptxas has no 32-bit .global addressing on sm_90, for a
    vector access as for a scalar one."""
    text = kernel("\tld.global.v2.u32 \t{%r1, %r2}, [%r1];", REGS)
    e = refused(text)
    assert "%r1 is a 32-bit register: the address of `ld.global.v2.u32`" in str(e), str(e)
    assert PTXAS is None or not gen.ptxas_verdict(text)[0]


@pytest.mark.parametrize("regs, ok", [(".reg .f32 %f<2>;\n\t.reg .u32 %u<2>;", False),
                                      (".reg .f32 %f<2>;\n\t.reg .b32 %u<2>;", True),
                                      (".reg .s32 %f<2>;\n\t.reg .u32 %u<2>;", True)])
def test_a_vector_mixing_float_and_integer_registers_is_refused(regs, ok):
    """Found by the differential test: ptxas refuses `{%f1, %u1}` of a .f32 and a .u32 register
    ("Vector with elements of different types"); a .b register goes with either."""
    text = kernel("\tld.global.v2.b32 \t{%f1, %u1}, [%rd2];", REGS + "\n\t" + regs)
    if ok:
        parse(text, "k.ptx")
    else:
        assert "mixes float and integer registers: %f1 (.f32), %u1 (.u32)" in str(refused(text))
    assert PTXAS is None or gen.ptxas_verdict(text)[0] == ok
