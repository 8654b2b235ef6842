"""Acquire and release vector accesses (``st.release.gpu.v2``, ``ld.acquire.gpu.v4``): PTX ISA 8.2.4
models a vector access as scalar accesses to its elements "executed in an unspecified order", and
for acquire/release elements the order decides what each element orders (semantics/vectors.py: the
order is a value the execution chooses; the plain encoding forks the path once per order). Checked
here, under both encodings: the lowering, the torn reads the ISA allows, the one-order-per-execution
rule (which an unordered encoding would break), the equivalence with the union of the programs that
fix each order explicitly, and Z3 = brute (the brute-force engine on the plain encoding)."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.errors import UnsupportedError
from ptxmm.ir.program import Load, Store
from ptxmm.kernel import module as ptx_module
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.module.lowering import VectorOrder
from ptxmm.loading import parse_kernel
from ptxmm.semantics import vectors

# (encoding, engine): the one used, and the plain fork under both engines
SETUPS = [("choose", "z3"), ("fork", "z3"), ("fork", "brute")]


@pytest.fixture(params=SETUPS, ids=[f"{a}-{b}" for a, b in SETUPS])
def engine(request, monkeypatch):
    """The engine to check with, the encoding set for the test."""
    monkeypatch.setattr(vectors, "ENCODING", request.param[0])
    return request.param[1]

HEAD = ".version 8.3\n.target sm_90\n.address_size 64\n"
REGS = "\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<4>;\n"


def entry(body: str, params: int = 2) -> str:
    sig = ",\n".join(f".param .u64 k_param_{i}" for i in range(params))
    return HEAD + f".visible .entry k(\n{sig}\n)\n{{\n{REGS}{body}\n}}\n"


def kernel(blocks: list[str], exists: str, x: int = 4, out: int = 4):
    """One thread per block; block k runs ``blocks[k]`` (%rd1: x, %rd2: out)."""
    head = "\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u64 %rd2, [k_param_1];\n\tmov.u32 %r0, %ctaid.x;\n"
    for k in range(1, len(blocks)):
        head += f"\tsetp.eq.s32 %p1, %r0, {k};\n\t@%p1 bra B{k};\n"
    body = head + blocks[0] + "\tret;\n" + "".join(f"B{k}:\n{b}\tret;\n" for k, b in enumerate(blocks) if k)
    launch = f"k<<<{len(blocks)}, 1>>>(unsigned x[{x}], unsigned out[{out}])"
    return parse_kernel(entry(body), "k.ptx", KernelArgs(launch=launch, exists=exists))


def outcomes(k, engine: str = "z3") -> set[str]:
    return {str(o) for o in ptxmm.check(k, engine=engine, flags=False).outcome_set}


# -- lowering -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ins, n, sem", [
    ("ld.acquire.gpu.global.v2.u32 {%r1, %r2}, [%rd1];", 2, "acquire"),
    ("st.release.gpu.global.v2.u32 [%rd1], {%r1, %r2};", 2, "release"),
    ("st.release.sys.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};", 4, "release"),
])
def test_an_acquire_or_release_vector_is_an_order_choice_then_one_access_per_element(ins, n, sem):
    body = f"\tld.param.u64 %rd1, [k_param_0];\n\t{ins}"
    fn = ptx_module.parse(entry(body, 1), "k.ptx").entries[0]
    k = next(i for i, x in enumerate(fn.body) if isinstance(x, VectorOrder))
    assert fn.body[k].n == n
    acc = fn.body[k + 1:k + 1 + n]
    assert all(isinstance(a, (Load, Store)) and a.sem == sem for a in acc)
    assert [a.addr.offset for a in acc] == [4 * j for j in range(n)]


@pytest.mark.parametrize("ins", [
    "st.release.gpu.global.v8.b32 [%rd1], {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8};",
    "ld.mmio.relaxed.sys.global.v2.u32 {%r1, %r2}, [%rd1];",
    "ld.acquire.gpu.global.v2.u64 {%rd1, %rd2}, [%rd1];"])
def test_v8_mmio_and_self_addressed_vectors_stay_located_not_supported_yet(ins):
    body = f"\tld.param.u64 %rd1, [k_param_0];\n\t{ins}"
    with pytest.raises(UnsupportedError, match="unspecified order") as e:
        ptx_module.parse(entry(body, 1), "k.ptx")
    assert e.value.pos.line == 12 and e.value.pos.col == 2


# -- what the orders allow ----------------------------------------------------------------------
PUBLISH = "\tmov.u32 %r1, 1;\n\tmov.u32 %r2, 42;\n\tst.release.gpu.global.v2.u32 [%rd1], {%r1, %r2};\n"
POLL = ("\tld.acquire.gpu.global.v2.u32 {%r3, %r4}, [%rd1];\n"
        "\tst.global.u32 [%rd2], %r3;\n\tst.global.u32 [%rd2+4], %r4;\n")


def test_a_release_v2_read_by_an_acquire_v2_can_be_torn_either_way(engine):
    # the writer's order (status, value) with the status read first: the status release orders
    # nothing of the vector, so status new / value old; symmetrically value new / status old
    outs = outcomes(kernel([PUBLISH, POLL], "out[0] == 1 && out[1] == 0", out=2), engine)
    assert {o[o.index("out[0]"):] for o in outs} == {"out[0]=0 out[1]=0", "out[0]=1 out[1]=0",
                                                     "out[0]=0 out[1]=42", "out[0]=1 out[1]=42"}


def test_every_element_releases_the_data_written_before_the_vector(engine):
    # data (x[2]) written before the release vector; the acquire vector sees an element new: then
    # whichever element that is, its acquire orders the data load after it
    writer = "\tst.global.u32 [%rd1+8], 7;\n" + PUBLISH
    reader = POLL + "\tld.global.u32 %r5, [%rd1+8];\n\tst.global.u32 [%rd2+8], %r5;\n"
    for cond in ("out[0] == 1 && out[2] == 0", "out[1] == 42 && out[2] == 0"):
        res = ptxmm.check(kernel([writer, reader], cond, out=3), engine=engine, flags=False)
        assert res.holds is False
    assert ptxmm.check(kernel([writer, reader], "out[0] == 1 && out[1] == 42 && out[2] == 7", out=3),
                       engine=engine, flags=False).holds is True


def _reader(first: int, then: int, slot: int) -> str:
    """Acquire element ``first``, then read element ``then`` (relaxed): into out[slot], out[slot+1]."""
    return (f"\tld.acquire.gpu.global.u32 %r3, [%rd1+{4 * first}];\n"
            f"\tld.relaxed.gpu.global.u32 %r4, [%rd1+{4 * then}];\n"
            f"\tst.global.u32 [%rd2+{8 * slot}], %r3;\n\tst.global.u32 [%rd2+{8 * slot + 4}], %r4;\n")


def test_one_execution_stores_the_elements_in_one_order(engine):
    # R1 sees x[1] new and then x[0] old: the store ran x[1] before x[0]; R2 sees x[0] new and then
    # x[1] old: x[0] before x[1]. Each is allowed (no element order is promised) but not both in one
    # execution; an encoding that left the elements unordered would allow both
    w = "\tmov.u32 %r1, 1;\n\tmov.u32 %r2, 1;\n\tst.release.gpu.global.v2.u32 [%rd1], {%r1, %r2};\n"
    r1, r2 = _reader(1, 0, 0), _reader(0, 1, 1)
    one = kernel([w, r1, r2], "out[0] == 1 && out[1] == 0")
    other = kernel([w, r1, r2], "out[2] == 1 && out[3] == 0")
    both = kernel([w, r1, r2], "out[0] == 1 && out[1] == 0 && out[2] == 1 && out[3] == 0")
    assert ptxmm.check(one, engine=engine, flags=False).holds is True
    assert ptxmm.check(other, engine=engine, flags=False).holds is True
    assert ptxmm.check(both, engine=engine, flags=False).holds is False


def test_a_v4_release_may_store_the_last_element_first(engine):
    w = ("\tmov.u32 %r1, 1;\n\tst.release.gpu.global.v4.u32 [%rd1], {%r1, %r1, %r1, %r1};\n")
    assert ptxmm.check(kernel([w, _reader(3, 0, 0)], "out[0] == 1 && out[1] == 0", out=2),
                       engine=engine, flags=False).holds is True
    # but not with x[0] new and x[3] old as well for a second reader acquiring x[0] first
    two = kernel([w, _reader(3, 0, 0), _reader(0, 3, 1)], "out[0] == 1 && out[1] == 0 && out[2] == 1 && "
                 "out[3] == 0")
    assert ptxmm.check(two, engine=engine, flags=False).holds is False
    # a scalar release of x[3] after a relaxed x[0] orders it: the reader then sees x[0] new
    fixed = ("\tmov.u32 %r1, 1;\n\tst.relaxed.gpu.global.u32 [%rd1], %r1;\n"
             "\tst.release.gpu.global.u32 [%rd1+12], %r1;\n")
    assert ptxmm.check(kernel([fixed, _reader(3, 0, 0)], "out[0] == 1 && out[1] == 0", out=2),
                       flags=False).holds is False


def test_no_race_between_release_and_acquire_vector_elements(engine):
    res = ptxmm.check(kernel([PUBLISH, POLL], "out[0] == 1", out=2), engine=engine)
    assert not [f for f in res.findings if str(f.kind) == "race"]
    weak = POLL.replace("ld.acquire.gpu.global.v2", "ld.global.v2")
    res = ptxmm.check(kernel([PUBLISH, weak], "out[0] == 1", out=2), engine=engine)
    assert [f for f in res.findings if str(f.kind) == "race"]


def test_the_brute_force_engine_names_the_order_it_cannot_enumerate():
    with pytest.raises(UnsupportedError, match=r"order of the elements of `st\.release\.gpu\.global\.v2"):
        ptxmm.check(kernel([PUBLISH, POLL], "out[0] == 1", out=2), engine="brute")


def test_one_path_per_thread_for_a_spin_on_an_acquire_vector(monkeypatch):
    # a poll loop unrolled: the plain encoding forks at every iteration's vector, the one used not
    # (its count is stored after the loop, so the loop is no await: semantics/loops.py)
    spin = ("SPIN:\n\tld.acquire.gpu.global.v2.u32 {%r3, %r4}, [%rd1];\n\tadd.s32 %r9, %r9, 1;\n"
            "\tsetp.eq.s32 %p2, %r3, 0;\n\t@%p2 bra SPIN;\n\tadd.s32 %r4, %r4, %r9;\n"
            "\tst.global.u32 [%rd2], %r4;\n")
    from ptxmm.semantics.builder import build

    k = kernel([PUBLISH, spin], "out[0] == 0", out=1)
    plain = len(build(k.program if hasattr(k, "program") else k, unroll=3).paths[1])
    monkeypatch.setattr(vectors, "ENCODING", "fork")
    forked = len(build(k.program if hasattr(k, "program") else k, unroll=3).paths[1])
    assert forked > 2 * plain
