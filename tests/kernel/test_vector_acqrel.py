"""Acquire and release vector accesses (``st.release.gpu.v2``, ``ld.acquire.gpu.v4``): PTX ISA 8.2.4
models a vector access as scalar accesses to its elements "executed in an unspecified order", and
for acquire/release elements the order decides what each element orders. ptxmm forks the thread's
path once per order (semantics/vectors.py). Checked here: the lowering, the torn reads the ISA
allows, the one-order-per-execution rule (which an unordered encoding would break), the
equivalence with the union of the programs that fix each order explicitly, and Z3 = brute."""

from __future__ import annotations

from itertools import permutations, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.errors import UnsupportedError
from ptxmm.ir.program import Load, Store
from ptxmm.kernel import module as ptx_module
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.module.lowering import VectorOrder
from ptxmm.loading import parse_kernel

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
    "ld.mmio.relaxed.sys.global.v2.u32 {%r1, %r2}, [%rd1];"])
def test_v8_and_mmio_vectors_stay_located_not_supported_yet(ins):
    body = f"\tld.param.u64 %rd1, [k_param_0];\n\t{ins}"
    with pytest.raises(UnsupportedError, match="unspecified order") as e:
        ptx_module.parse(entry(body, 1), "k.ptx")
    assert e.value.pos.line == 12


# -- what the orders allow ----------------------------------------------------------------------
PUBLISH = "\tmov.u32 %r1, 1;\n\tmov.u32 %r2, 42;\n\tst.release.gpu.global.v2.u32 [%rd1], {%r1, %r2};\n"
POLL = ("\tld.acquire.gpu.global.v2.u32 {%r3, %r4}, [%rd1];\n"
        "\tst.global.u32 [%rd2], %r3;\n\tst.global.u32 [%rd2+4], %r4;\n")


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_a_release_v2_read_by_an_acquire_v2_can_be_torn_either_way(engine):
    # the writer's order (status, value) with the status read first: the status release orders
    # nothing of the vector, so status new / value old; symmetrically value new / status old
    outs = outcomes(kernel([PUBLISH, POLL], "out[0] == 1 && out[1] == 0", out=2), engine)
    assert {o[o.index("out[0]"):] for o in outs} == {"out[0]=0 out[1]=0", "out[0]=1 out[1]=0",
                                                     "out[0]=0 out[1]=42", "out[0]=1 out[1]=42"}


def test_every_element_releases_the_data_written_before_the_vector():
    # data (x[2]) written before the release vector; the acquire vector sees an element new: then
    # whichever element that is, its acquire orders the data load after it
    writer = "\tst.global.u32 [%rd1+8], 7;\n" + PUBLISH
    reader = POLL + "\tld.global.u32 %r5, [%rd1+8];\n\tst.global.u32 [%rd2+8], %r5;\n"
    for cond in ("out[0] == 1 && out[2] == 0", "out[1] == 42 && out[2] == 0"):
        for engine in ("z3", "brute"):
            res = ptxmm.check(kernel([writer, reader], cond, out=3), engine=engine, flags=False)
            assert res.holds is False
    assert ptxmm.check(kernel([writer, reader], "out[0] == 1 && out[1] == 42 && out[2] == 7", out=3),
                       flags=False).holds is True


def _reader(first: int, then: int, slot: int) -> str:
    """Acquire element ``first``, then read element ``then`` (relaxed): into out[slot], out[slot+1]."""
    return (f"\tld.acquire.gpu.global.u32 %r3, [%rd1+{4 * first}];\n"
            f"\tld.relaxed.gpu.global.u32 %r4, [%rd1+{4 * then}];\n"
            f"\tst.global.u32 [%rd2+{8 * slot}], %r3;\n\tst.global.u32 [%rd2+{8 * slot + 4}], %r4;\n")


@pytest.mark.parametrize("engine", ["z3", "brute"])
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


def test_a_v4_release_may_store_the_last_element_first():
    w = ("\tmov.u32 %r1, 1;\n\tst.release.gpu.global.v4.u32 [%rd1], {%r1, %r1, %r1, %r1};\n")
    assert ptxmm.check(kernel([w, _reader(3, 0, 0)], "out[0] == 1 && out[1] == 0", out=2),
                       flags=False).holds is True
    # a scalar release of x[3] after a relaxed x[0] orders it: the reader then sees x[0] new
    fixed = ("\tmov.u32 %r1, 1;\n\tst.relaxed.gpu.global.u32 [%rd1], %r1;\n"
             "\tst.release.gpu.global.u32 [%rd1+12], %r1;\n")
    assert ptxmm.check(kernel([fixed, _reader(3, 0, 0)], "out[0] == 1 && out[1] == 0", out=2),
                       flags=False).holds is False


def test_no_race_between_release_and_acquire_vector_elements():
    res = ptxmm.check(kernel([PUBLISH, POLL], "out[0] == 1", out=2))
    assert not [f for f in res.findings if str(f.kind) == "race"]


# -- the fork = the union of the programs that fix each order -----------------------------------
def _vec(op: str, sem: str, off: int, regs: tuple[str, str], order: tuple[int, int] | None) -> str:
    """A v2 access at x[off], or (``order`` given) its two scalar elements in that order."""
    if order is None:
        return (f"\tst.{sem}.gpu.global.v2.u32 [%rd1+{4 * off}], {{{regs[0]}, {regs[1]}}};\n" if op == "st"
                else f"\tld.{sem}.gpu.global.v2.u32 {{{regs[0]}, {regs[1]}}}, [%rd1+{4 * off}];\n")
    out = ""
    for k in order:
        out += (f"\tst.{sem}.gpu.global.u32 [%rd1+{4 * (off + k)}], {regs[k]};\n" if op == "st"
                else f"\tld.{sem}.gpu.global.u32 {regs[k]}, [%rd1+{4 * (off + k)}];\n")
    return out


# an op: ("stv", offset) a release v2 store of two fresh values | ("ldv", offset) an acquire v2 load
# | ("st", element, sem) | ("ld", element, sem)
OPS = st.one_of(st.tuples(st.just("stv"), st.integers(0, 1)), st.tuples(st.just("ldv"), st.integers(0, 1)),
                st.tuples(st.just("st"), st.integers(0, 2), st.sampled_from(["relaxed", "release"])),
                st.tuples(st.just("ld"), st.integers(0, 2), st.sampled_from(["relaxed", "acquire"])))


def _program(threads, orders) -> tuple[list[str], int]:
    """The blocks of a program; ``orders`` (None: keep the vectors) fixes each vector's order."""
    blocks, slot, val, v = [], 0, 1, 0
    for ops in threads:
        b = ""
        for op in ops:
            if op[0] in ("stv", "ldv"):
                order = None if orders is None else orders[v]
                v += 1
                if op[0] == "stv":
                    b += f"\tmov.u32 %r10, {val};\n\tmov.u32 %r11, {val + 1};\n"
                    b += _vec("st", "release", op[1], ("%r10", "%r11"), order)
                    val += 2
                else:
                    b += _vec("ld", "acquire", op[1], ("%r12", "%r13"), order)
                    b += (f"\tst.global.u32 [%rd2+{4 * slot}], %r12;\n"
                          f"\tst.global.u32 [%rd2+{4 * slot + 4}], %r13;\n")
                    slot += 2
            elif op[0] == "st":
                b += f"\tmov.u32 %r14, {val};\n\tst.{op[2]}.gpu.global.u32 [%rd1+{4 * op[1]}], %r14;\n"
                val += 1
            else:
                b += f"\tld.{op[2]}.gpu.global.u32 %r15, [%rd1+{4 * op[1]}];\n"
                b += f"\tst.global.u32 [%rd2+{4 * slot}], %r15;\n"
                slot += 1
        blocks.append(b)
    return blocks, v


def _outs(blocks, engine="z3") -> set[str]:
    slots = max(1, sum(b.count("[%rd2") for b in blocks))
    return outcomes(kernel(blocks, "out[0] == 0", x=3, out=slots), engine)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.lists(st.lists(OPS, min_size=1, max_size=3), min_size=2, max_size=3)
       .filter(lambda ts: 1 <= sum(op[0] in ("stv", "ldv") for t in ts for op in t) <= 2))
def test_the_fork_is_the_union_of_the_fixed_orders_and_the_engines_agree(threads):
    blocks, nvec = _program(threads, None)
    forked = _outs(blocks)
    union: set[str] = set()
    for orders in product(list(permutations(range(2))), repeat=nvec):
        union |= _outs(_program(threads, orders)[0])
    assert forked == union
    assert _outs(blocks, "brute") == forked
