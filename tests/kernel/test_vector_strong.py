"""Strong vector accesses (``ld/st.relaxed.gpu.v2``, ``ld.volatile.v4``): PTX ISA 8.2.4 models a
vector access as scalar accesses to its elements in an unspecified order, so each element is a
strong access of the instruction's semantics and scope, atomic on its own only — a reader may see
one element of a vector store and miss another (a torn read). CUB's decoupled look-back packs a
tile's status and value in one ``st.relaxed.gpu.v2`` and CUB relies on reading both together."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.ir.program import Load, Store
from ptxmm.kernel import module as ptx_module
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.loading import parse_kernel

HEAD = ".version 8.3\n.target sm_90\n.address_size 64\n"


def entry(body: str, params: int = 0) -> str:
    sig = ",\n".join(f".param .u64 k_param_{i}" for i in range(params))
    return HEAD + f".visible .entry k(\n{sig}\n)\n{{\n{body}\n}}\n"


# volatile is read as relaxed.sys
@pytest.mark.parametrize("ins, sem, scope", [
    ("st.relaxed.gpu.global.v2.u32 [%rd1], {%r1, %r2};", "relaxed", "gpu"),
    ("ld.relaxed.gpu.global.v2.u32 {%r1, %r2}, [%rd1];", "relaxed", "gpu"),
    ("ld.global.relaxed.cta.v2.u32 {%r1, %r2}, [%rd1];", "relaxed", "cta"),
    ("ld.volatile.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];", "relaxed", "sys"),
    ("st.volatile.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};", "relaxed", "sys"),
])
def test_a_strong_vector_access_is_one_strong_access_per_element(ins, sem, scope):
    body = f"\t.reg .b32 %r<5>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [k_param_0];\n\t{ins}"
    fn = ptx_module.parse(entry(body, 1), "k.ptx").entries[0]
    acc = [i for i in fn.body if isinstance(i, (Load, Store))]
    n = 4 if ".v4" in ins else 2
    assert [a.addr.offset for a in acc] == [4 * k for k in range(n)]
    assert {a.sem for a in acc} == {sem}
    if scope is not None:
        assert {a.scope for a in acc} == {scope}
    regs = [(a.dst if isinstance(a, Load) else a.src).name for a in acc]
    assert regs == [f"%r{k + 1}" for k in range(n)]


def test_a_u64_vector_element_is_eight_bytes():
    body = ("\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [k_param_0];\n"
            "\tst.relaxed.gpu.global.v2.u64 [%rd1+16], {%rd2, %rd3};")
    fn = ptx_module.parse(entry(body, 1), "k.ptx").entries[0]
    st = [i for i in fn.body if isinstance(i, Store)]
    assert [(s.addr.offset, s.type, s.sem) for s in st] == [(16, "u64", "relaxed"), (24, "u64", "relaxed")]


# One tile descriptor {status, value}; block 0 publishes {1, 42} with one strong v2 store, block 1
# polls it with one strong v2 load and keeps both elements.
TORN = """\t.reg .b32 %r<5>;
\t.reg .b64 %rd<4>;
\t.reg .pred %p<2>;
\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tmov.u32 %r1, %ctaid.x;
\tsetp.ne.s32 %p1, %r1, 0;
\t@%p1 bra READ;
\tmov.u32 %r2, 1;
\tmov.u32 %r3, 42;
\tst.relaxed.gpu.global.{vec}.u32 [%rd1], {{%r2, %r3}};
\tret;
READ:
\tld.relaxed.gpu.global.{vec}.u32 {{%r2, %r3}}, [%rd1];
\tst.global.u32 [%rd2], %r2;
\tst.global.u32 [%rd2+4], %r3;
\tret;"""


def torn(vec: str, exists: str):
    text = entry(TORN.format(vec=vec), 2)
    return parse_kernel(text, "k.ptx", KernelArgs(launch="k<<<2, 1>>>(unsigned desc[2], unsigned out[2])",
                                                  exists=exists))


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_a_relaxed_v2_read_can_see_the_status_new_and_the_value_old(engine):
    res = ptxmm.check(torn("v2", "out[0] == 1 && out[1] == 0"), engine=engine, flags=False)
    assert res.holds is True  # torn: status from the store, value from the initial write
    outs = ptxmm.check(torn("v2", "out[0] == 1 && out[1] == 0"), engine=engine, flags=False).outcome_set
    assert len(outs) == 4  # {0,1} x {0,42}: every mix of old and new elements


def test_both_engines_agree_on_the_torn_outcomes():
    z = ptxmm.check(torn("v2", "out[0] == 1"), engine="z3", flags=False)
    b = ptxmm.check(torn("v2", "out[0] == 1"), engine="brute", flags=False)
    assert z.outcome_set == b.outcome_set


def test_strong_vector_elements_do_not_race():
    res = ptxmm.check(torn("v2", "out[0] == 1"))
    assert not [f for f in res.findings if str(f.kind) == "race"]
    weak = parse_kernel(entry(TORN.format(vec="v2").replace("relaxed.gpu.", ""), 2), "k.ptx",
                        KernelArgs(launch="k<<<2, 1>>>(unsigned desc[2], unsigned out[2])",
                                   exists="out[0] == 1"))
    assert [f for f in ptxmm.check(weak).findings if str(f.kind) == "race"]
