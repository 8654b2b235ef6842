"""Kernels: addresses computed from loaded data (issue 25) — ``hist[in[t]]++``, ``out[idx]`` with a
loaded idx. The event builder splits the access into one case per element the address may name
(``kernels.Layout.targets``, a sound over-approximation) and one out-of-bounds case; these tests
compare the result with the concrete semantics (the index values are known: nothing writes them),
and the Z3 engine with the brute-force one where another thread writes the index."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.errors import UnsupportedError
from ptxmm.ir.layout import MAX_TARGETS
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.loading import parse_kernel

CORPUS = ROOT / "examples" / "kernels"
_OPS = {
    "atom": "atom.global.add.u32 %r3, [%rd6], 1;",
    "red": "red.global.add.u32 [%rd6], 1;",
    "st": "st.global.u32 [%rd6], %r5;",
    "ld": "ld.global.u32 %r3, [%rd6];\n  st.global.u32 [%rd9], %r3;",
}


def _kernel(op: str, guarded: bool, n: int, writer: int | None = None, ty: str = "u32") -> str:
    """Thread t of block 0 loads i = idx[t] and does ``op`` on out[i] (``ld``: copies out[i] to
    res[t]); ``guarded``: only when i < n (unsigned), as a predicate on the access. Block 1 (if
    any) stores ``writer`` into idx[0] with a plain store."""
    guard = "@%p1 " if guarded else ""
    write = "" if writer is None else f"""  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra $L_use;
  st.global.u32 [%rd2], {writer};
  bra.uni $L_end;
$L_use:
"""
    return f""".version 9.0
.target sm_90
.address_size 64
.visible .entry k(
  .param .u64 k_param_0,
  .param .u64 k_param_1,
  .param .u64 k_param_2
)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<9>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  ld.param.u64 %rd10, [k_param_1];
  cvta.to.global.u64 %rd7, %rd10;
  ld.param.u64 %rd11, [k_param_2];
  cvta.to.global.u64 %rd8, %rd11;
  mov.u32 %r1, %tid.x;
  mov.u32 %r4, %ctaid.x;
  add.u32 %r5, %r1, 1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd9, %rd8, %rd3;
{write}  add.s64 %rd4, %rd2, %rd3;
  ld.global.{ty} %r2, [%rd4];
  setp.lt.u32 %p1, %r2, {n};
  mul.wide.s32 %rd5, %r2, 4;
  add.s64 %rd6, %rd7, %rd5;
  {guard}{_OPS[op]}
$L_end:
  ret;
}}
"""


def _check(text: str, launch: str, engine: str = "z3"):
    return ptxmm.check(parse_kernel(text, "k.ptx", KernelArgs(launch=launch)), engine=engine)


def _launch(vals, n: int, blocks: int = 1) -> str:
    init = ", ".join(map(str, vals))
    t = len(vals)
    return f"k<<<{blocks}, {t}>>>(int idx[{t}] = {{{init}}}, unsigned out[{n}], unsigned res[{t}])"


def _lines(cu: str) -> dict[str, int]:
    return {t.strip(): k for k, t in enumerate((CORPUS / cu).read_text().splitlines(), 1)}


def _kinds(res) -> set[str]:
    return {str(f.kind) for f in res.findings}


def _outcomes(res) -> set[tuple]:
    return {tuple(sorted(o.outcome.as_dict().items())) for o in res.outcomes}


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.lists(st.integers(-2, 4), min_size=1, max_size=3), st.booleans(),
       st.sampled_from(["atom", "red"]))
def test_loaded_index_increments_the_element_it_names(n, vals, guarded, op):
    """``atomicAdd(&out[idx[t]], 1)``: the one outcome counts each index value; an index outside
    out[0..n) is an out-of-bounds finding — unless the access is guarded by ``i < n``."""
    res = _check(_kernel(op, guarded, n), _launch(vals, n))
    inside = [v for v in vals if 0 <= v < n]
    assert _kinds(res) == (set() if guarded or len(inside) == len(vals) else {"out-of-bounds"})
    counts = Counter(inside)
    (o,) = res.outcomes
    got = o.outcome.as_dict()
    assert {k: v for k, v in got.items() if k.startswith("out")} == \
        {f"out[{k}]": counts[k] for k in range(n) if f"out[{k}]" in got}
    assert all(f"out[{k}]" in got for k in counts)  # every element incremented is observed


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.lists(st.integers(-1, 3), min_size=1, max_size=2), st.booleans(),
       st.sampled_from(["atom", "st", "ld"]), st.integers(-1, 3))
def test_z3_equals_brute_force_when_another_thread_writes_the_index(n, vals, guarded, op, writer):
    """Block 1 writes idx[0] (plain) while block 0's threads use their loaded indexes: the Z3
    engine and the brute-force one agree on the outcomes and on the findings."""
    text, launch = _kernel(op, guarded, n, writer), _launch(vals, n, blocks=2)
    a, b = _check(text, launch, "z3"), _check(text, launch, "brute")
    assert _outcomes(a) == _outcomes(b)
    assert _kinds(a) == _kinds(b)
    assert "race" in _kinds(a)  # idx[0]: block 1's plain store, block 0's thread 0's plain load


def test_loaded_copy_reads_the_element_the_index_names():
    res = _check(_kernel("ld", False, 3), "k<<<1, 2>>>(int idx[2] = {2, 0}, unsigned out[3] = {7, 8, 9}, "
                                          "unsigned res[2])")
    assert _kinds(res) == set()
    (o,) = res.outcomes
    assert o.outcome.as_dict() == {"res[0]": 9, "res[1]": 7}


def test_a_guard_that_is_false_skips_an_access_outside_every_buffer():
    """The guard is part of each case ("guard → address = element"): a thread whose guard is
    false and whose address names nothing still runs on (and the others' increments stay)."""
    res = _check(_kernel("atom", True, 2), _launch([5, 1], 2))
    (o,) = res.outcomes
    assert res.findings == () and o.outcome.as_dict() == {"out[0]": 0, "out[1]": 1}
    res = _check(_kernel("atom", True, 2), _launch([-1, 0], 2))
    (o,) = res.outcomes
    assert res.findings == () and o.outcome.as_dict() == {"out[0]": 1, "out[1]": 0}


def test_race_through_a_loaded_index_names_both_lines():
    """A loaded index that may name the element another thread stores: the race is reported on
    the two stores (and on the index itself)."""
    res = ptxmm.check(ptxmm.load(CORPUS / "scatter-race.ptx"))
    races = [f for f in res.findings if str(f.kind) == "race"]
    pairs = {tuple(sorted(int(e.text.split("scatter-race.cu:")[1].split()[0].rstrip("]")) for e in f.events))
             for f in races}
    line = _lines("scatter-race.cu")
    assert pairs == {(line["out[1] = 5;"], line["out[i] = 7;"]),
                     (line["idx[0] = 1;"], line["int i = idx[0];"])}
    assert _kinds(res) == {"race"} and res.holds is True


def test_out_of_bounds_loaded_index_is_found_with_its_line():
    res = ptxmm.check(ptxmm.load(CORPUS / "gather-oob.ptx"))
    (f,) = res.findings
    assert str(f.kind) == "out-of-bounds" and f.events[0].thread == "b0t1"
    assert f.events[0].text == f"gather-oob.cu:{_lines('gather-oob.cu')['int v = in[i];']} int v = in[i];"


def test_too_many_elements_is_located():
    """An unbounded loaded index into a large buffer may name more elements than the case split
    takes: a located "not supported yet", never a silent cut."""
    text = _kernel("atom", False, 200)
    with pytest.raises(UnsupportedError, match=f"more than {MAX_TARGETS} elements") as e:
        _check(text, "k<<<1, 1>>>(int idx[1], unsigned out[200], unsigned res[1])")
    line = next(k for k, t in enumerate(text.splitlines(), 1) if t.strip().startswith("atom."))
    assert e.value.pos is not None and e.value.pos.line == line


def test_a_bounds_test_narrows_the_elements():
    """``if (i < 40) atomicAdd(&out[i], 1)`` on out[200]: the guard (a condition of the path)
    leaves 40 elements, under the limit; the increment lands where the index says."""
    res = _check(_kernel("atom", True, 40),
                 "k<<<1, 1>>>(int idx[1] = {39}, unsigned out[200], unsigned res[1])")
    (o,) = res.outcomes
    assert res.findings == () and o.outcome.as_dict()["out[39]"] == 1
    assert sum(o.outcome.as_dict().values()) == 1


def test_an_index_that_may_name_part_of_an_element_is_located():
    """A byte index (no scaling) into a buffer of 4-byte elements may name a byte inside one."""
    text = _kernel("atom", True, 3).replace("mul.wide.s32 %rd5, %r2, 4;", "cvt.s64.s32 %rd5, %r2;")
    with pytest.raises(UnsupportedError, match="not an element's start"):
        _check(text, _launch([0], 3))
