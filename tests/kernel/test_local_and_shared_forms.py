"""Memory forms of real kernels beyond plain buffers: ``.local`` arrays (each thread's own
locations, PTX ISA 5.1.5), several ``extern __shared__`` arrays over the launch's one dynamic
region, ``__shared__`` scalars and structs reached through ``cvta``, and ``mapa`` (generic
``.u64`` and ``.shared::cluster.u32``, from a variable or a register) naming another CTA's copy —
each a right answer on both engines or a located error."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.errors import SemanticError, UnsupportedError
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.loading import parse_kernel

HEAD = ".version 8.3\n.target sm_90\n.address_size 64\n"
REGS = "\t.reg .pred %p<3>;\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<9>;\n"


def kernel(body: str, launch: str, cond: str | None = None, decl: str = "", attrs: str = ""):
    text = (HEAD + decl + f".visible .entry k(\n.param .u64 k_param_0\n){attrs}\n{{\n" + REGS
            + "\tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd1, %rd1;\n" + body
            + "\n\tret;\n}\n")
    return parse_kernel(text, "k.ptx", KernelArgs(launch=launch, forall=cond))


def both(prog):
    z = ptxmm.check(prog, engine="z3")
    b = ptxmm.check(prog, engine="brute")
    assert z.outcome_set == b.outcome_set and z.holds == b.holds
    return z


def races(res) -> list:
    return [f for f in res.findings if str(f.kind) == "race"]


# ----- .local: each thread's own ----------------------------------------------------------------------

# nvcc's local depot: every thread writes its %tid.x into element 1 of its own array (through the
# generic address cvta.local makes) and reads it back
LOCAL = """\t.local .align 8 .b8 __local_depot0[8];
\t.reg .b64 %SP;
\t.reg .b64 %SPL;
\tmov.u64 %SPL, __local_depot0;
\tcvta.local.u64 %SP, %SPL;
\tmov.u32 %r1, %tid.x;
\tst.local.u32 [%SPL], 7;
\tst.u32 [%SP+4], %r1;
\tld.local.u32 %r2, [%SPL+4];
\tld.u32 %r3, [%SP];
\tadd.s32 %r4, %r2, %r3;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tst.global.u32 [%rd3], %r4;"""


def test_local_arrays_are_each_threads_own():
    cond = "out[0] == 7 && out[1] == 8 && out[2] == 9 && out[3] == 10"
    res = both(kernel(LOCAL, "k<<<1, 4>>>(int out[4])", cond))
    assert res.holds is True and not races(res)
    assert len(res.outcome_set) == 1


def test_a_local_vector_store_is_one_access_per_element():
    body = LOCAL.replace("\tst.local.u32 [%SPL], 7;\n\tst.u32 [%SP+4], %r1;",
                         "\tmov.u32 %r5, 7;\n\tst.local.v2.u32 [%SPL], {%r5, %r1};")
    assert both(kernel(body, "k<<<1, 2>>>(int out[2])", "out[0] == 7 && out[1] == 8")).holds is True


def test_a_condition_cannot_name_a_local_element():
    with pytest.raises(SemanticError, match="one copy per thread"):
        kernel(LOCAL, "k<<<1, 1>>>(int out[1])", "__local_depot0[0] == 7")


# ----- several extern __shared__ arrays: one dynamic region -------------------------------------------

EXTERN = """.extern .shared .align 16 .b8 s1[];
.extern .shared .align 16 .b8 s2[];
"""
ALIAS = """\tmov.u32 %r1, %tid.x;
\tshl.b32 %r2, %r1, 2;
\tmov.u32 %r3, s1;
\tadd.s32 %r4, %r3, %r2;
\tadd.s32 %r5, %r1, 5;
\tst.shared.u32 [%r4], %r5;
\tbar.sync 0;
\tmov.u32 %r6, s2;
\tadd.s32 %r7, %r6, %r2;
\tld.shared.u32 %r8, [%r7];
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tst.global.u32 [%rd3], %r8;"""


@pytest.mark.parametrize("named", ["s1", "s2"])
def test_extern_shared_arrays_start_at_the_same_address(named):
    res = both(kernel(ALIAS, f"k<<<1, 2, int {named}[2]>>>(int out[2])", "out[0] == 5 && out[1] == 6",
                      decl=EXTERN))
    assert res.holds is True and not races(res)


def test_an_extern_alias_of_another_width_is_a_located_mixed_size_error():
    body = ALIAS.replace("ld.shared.u32 %r8, [%r7]", "ld.shared.u16 %rs1, [%r7]").replace(
        "st.global.u32 [%rd3], %r8", "st.global.u16 [%rd3], %rs1")
    with pytest.raises(UnsupportedError, match="mixed-size") as e:
        ptxmm.check(kernel("\t.reg .b16 %rs<2>;\n" + body, "k<<<1, 2, int s1[2]>>>(int out[2])",
                           decl=EXTERN))
    assert e.value.pos is not None and e.value.pos.line > 0


# ----- __shared__ scalars and structs through cvta -----------------------------------------------------

STRUCT = """\t.shared .align 4 .b8 s[8];
\tmov.u32 %r1, %tid.x;
\tsetp.ne.s32 %p1, %r1, 0;
\t@%p1 bra WAIT;
\tmov.u64 %rd2, s;
\tcvta.shared.u64 %rd3, %rd2;
\tst.u32 [%rd3+4], 2;
WAIT:
\tbar.sync 0;
\tld.shared.u32 %r2, [s+4];
\tmul.wide.u32 %rd4, %r1, 4;
\tadd.s64 %rd5, %rd1, %rd4;
\tst.global.u32 [%rd5], %r2;"""


def test_a_shared_struct_field_through_a_generic_address():
    res = both(kernel(STRUCT, "k<<<1, 2>>>(int out[2])", "out[0] == 2 && out[1] == 2"))
    assert res.holds is True and not races(res)


# ----- mapa: another CTA's copy -------------------------------------------------------------------------

def mapa_kernel(form: str, launch: str = "k<<<2, 1, 2>>>(int out[2])", rank: str = "%r4"):
    """Each CTA of a cluster of 2 stores rank + 1 in its x, waits at the cluster barrier, and
    reads x of the other CTA through ``form``."""
    body = f"""\t.shared .align 4 .u32 x;
\tmov.u32 %r1, %cluster_ctarank;
\tadd.s32 %r2, %r1, 1;
\tst.shared.u32 [x], %r2;
\tbarrier.cluster.arrive;
\tbarrier.cluster.wait;
\txor.b32 %r4, %r1, 1;
{form}
\tmul.wide.u32 %rd6, %r1, 4;
\tadd.s64 %rd7, %rd1, %rd6;
\tst.global.u32 [%rd7], %r5;
\tbarrier.cluster.arrive;
\tbarrier.cluster.wait;""".replace("%r4;", f"{rank};")
    return kernel(body, launch, "out[0] == 2 && out[1] == 1")


GENERIC = """\tmov.u64 %rd2, x;
\tcvta.shared.u64 %rd3, %rd2;
\tmapa.u64 %rd4, %rd3, %r4;
\tld.u32 %r5, [%rd4];"""
CLUSTER32 = """\tmov.u32 %r3, x;
\tmapa.shared::cluster.u32 %r6, %r3, %r4;
\tld.shared::cluster.u32 %r5, [%r6];"""
SYMBOL = """\tmapa.shared::cluster.u64 %rd4, x, %r4;
\tld.shared::cluster.u32 %r5, [%rd4];"""


@pytest.mark.parametrize("form", [GENERIC, CLUSTER32, SYMBOL], ids=["generic-u64", "cluster-u32-register",
                                                                   "cluster-u64-variable"])
def test_mapa_names_the_other_ctas_copy(form):
    res = both(mapa_kernel(form))
    assert res.holds is True and not races(res)


def test_mapa_to_a_rank_outside_the_cluster_is_located():
    with pytest.raises(SemanticError, match="ranks 0..1") as e:
        ptxmm.check(mapa_kernel(GENERIC, rank="5"))
    assert e.value.pos.line > 0


def test_mapa_of_a_global_address_is_located():
    form = "\tmapa.u64 %rd4, %rd1, %r4;\n\tld.u32 %r5, [%rd4];"
    with pytest.raises(SemanticError, match="mapa maps .shared variables") as e:
        ptxmm.check(mapa_kernel(form))
    assert e.value.pos.line > 0


# ----- printf: its argument buffer is .local, its result is read back -----------------------------------

PRINTF_MODULE = HEAD + """.extern .func (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[4] = {37, 100, 10, 0};

.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.local .align 8 .b8 __local_depot0[8];
\t.reg .b64 %SP;
\t.reg .b64 %SPL;
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<9>;
\tmov.u64 %SPL, __local_depot0;
\tcvta.local.u64 %SP, %SPL;
\tld.param.u64 %rd1, [k_param_0];
\tcvta.to.global.u64 %rd2, %rd1;
\tadd.u64 %rd3, %SP, 0;
\tadd.u64 %rd4, %SPL, 0;
\tmov.u32 %r2, %tid.x;
\tst.local.u32 [%rd4], %r2;
\tmov.u64 %rd5, $str;
\tcvta.global.u64 %rd6, %rd5;
\t{
\t.param .b64 param0;
\tst.param.b64 [param0+0], %rd6;
\t.param .b64 param1;
\tst.param.b64 [param1+0], %rd3;
\t.param .b32 retval0;
\tcall.uni (retval0), vprintf, (param0, param1);
\tld.param.b32 %r3, [retval0+0];
\t}
\tmul.wide.u32 %rd7, %r2, 4;
\tadd.s64 %rd8, %rd2, %rd7;
\tst.global.u32 [%rd8], STORED;
\tret;
}
"""


def test_printf_with_its_local_argument_buffer_is_read():
    prog = parse_kernel(PRINTF_MODULE.replace("STORED", "%r2"), "k.ptx",
                        KernelArgs(launch="k<<<1, 2>>>(int out[2])", forall="out[0] == 0 && out[1] == 1"))
    assert both(prog).holds is True


def test_using_printfs_result_is_located():
    with pytest.raises(UnsupportedError, match="the value printf returned") as e:
        parse_kernel(PRINTF_MODULE.replace("STORED", "%r3"), "k.ptx",
                     KernelArgs(launch="k<<<1, 2>>>(int out[2])"))
    assert e.value.pos.line == PRINTF_MODULE.splitlines().index("\tst.global.u32 [%rd8], STORED;") + 1
