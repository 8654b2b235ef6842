"""Kernels (issue 25): predicated calls, ``__constant__`` data, dynamic shared memory and
``__syncwarp(mask)``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.errors import ParseError, SemanticError, UnsupportedError
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.launch import parse_launch
from ptxmm.loading import parse_kernel

DATA = ROOT / "tests" / "data" / "kernels"

_HEAD = """.version 9.0
.target sm_90
.address_size 64
"""


def _check(text: str, launch: str, engine: str = "z3"):
    return ptxmm.check(parse_kernel(_HEAD + text, "k.ptx", KernelArgs(launch=launch)), engine=engine)


def _outcome(res) -> dict:
    (o,) = res.outcomes
    return o.outcome.as_dict()


_PUT = """.func put(.param .b64 put_param_0, .param .b32 put_param_1)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.b64 %rd1, [put_param_0];
  ld.param.b32 %r1, [put_param_1];
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry k(.param .u64 k_param_0)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  add.u32 %r2, %r1, 10;
  setp.ne.u32 %p1, %r1, 1;
  { .param .b64 param0;
  st.param.b64 [param0+0], %rd4;
  .param .b32 param1;
  st.param.b32 [param1+0], %r2;
  @%p1 call.uni put, (param0, param1);
  }
  ret;
}
"""


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_a_predicated_call_runs_only_where_its_predicate_holds(engine):
    res = _check(_PUT, "k<<<1, 3>>>(int out[3])", engine)
    assert res.findings == () and _outcome(res) == {"out[0]": 10, "out[2]": 12}  # thread 1 skips it
    neg = _check(_PUT.replace("@%p1 call", "@!%p1 call"), "k<<<1, 3>>>(int out[3])", engine)
    assert _outcome(neg) == {"out[1]": 11}


def test_a_predicated_call_with_a_return_value_is_located():
    text = _PUT.replace(".func put(", ".func (.param .b32 func_retval0) put(").replace(
        "  @%p1 call.uni put, (param0, param1);",
        "  .param .b32 retval0;\n  @%p1 call.uni (retval0), put, (param0, param1);")
    with pytest.raises(UnsupportedError, match="predicated call with a return value"):
        _check(text, "k<<<1, 3>>>(int out[3])")


# ----- __constant__ data ---------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_constant_table_read_by_thread_id_and_by_a_loaded_index(engine):
    """tests/data/kernels/const_table.cu: `tab[threadIdx.x] + tab[idx[t] & 3] + zero` — every
    read of __constant__ data returns its initial value (nvcc's `.b8 tab[16] = {5, 0, 0, 0, ...}`
    read as 4-byte words)."""
    res = ptxmm.check(ptxmm.load(DATA / "const_table.ptx"), engine=engine)
    assert res.findings == () and res.holds is True
    assert _outcome(res) == {"out[0]": 11, "out[1]": 13}
    # no event reads constant memory: its values are known
    assert all(e.loc is None or not e.loc.startswith(("tab", "zero")) for e in res.graph.events)


_CONST = """.const .align 4 .b8 tab[8] = {1, 0, 0, 0, 2};
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u64 %rd3, tab;
BODY
  ret;
}
"""


def test_writing_constant_data_is_out_of_bounds():
    """A kernel cannot write __constant__ memory: a store (or an atom) at its address is an access
    no buffer allows — out of bounds; a generic load of it reads the value."""
    res = _check(_CONST.replace("BODY", "  ld.u32 %r1, [%rd3+4];\n  st.global.u32 [%rd2], %r1;\n"
                                        "  st.u32 [%rd3], 7;"), "k<<<1, 1>>>(int out[1])")
    assert {str(f.kind) for f in res.findings} == {"out-of-bounds"} and _outcome(res) == {"out[0]": 2}


def test_ld_const_of_a_global_buffer_is_out_of_bounds():
    res = _check(_CONST.replace("BODY", "  ld.const.u32 %r1, [%rd2];"), "k<<<1, 1>>>(int out[1])")
    assert {str(f.kind) for f in res.findings} == {"out-of-bounds"}


# ----- dynamic shared memory -------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_dynamic_shared_memory_sized_by_the_launch(engine):
    """tests/data/kernels/dyn_shared.cu: `extern __shared__ int s[]`, launched <<<1, 3, int s[3]>>>."""
    res = ptxmm.check(ptxmm.load(DATA / "dyn_shared.ptx"), engine=engine)
    assert res.findings == () and res.holds is True
    assert _outcome(res) == {"out[0]": 1, "out[1]": 2, "out[2]": 0}
    assert {e.loc.split("@")[0] for e in res.graph.events if e.loc and e.loc.startswith("s[")} == \
        {"s[0]", "s[1]", "s[2]"}


def test_dynamic_shared_memory_too_small_is_out_of_bounds():
    prog = ptxmm.load(DATA / "dyn_shared.ptx",
                      kernel=KernelArgs(launch="rotate<<<1, 3, int s[2]>>>(int out[3])"))
    res = ptxmm.check(prog)
    assert "out-of-bounds" in {str(f.kind) for f in res.findings}


@pytest.mark.parametrize("launch, error, message", [
    ("rotate<<<1, 3>>>(int out[3])", SemanticError, "does not give its size"),
    ("rotate<<<1, 3, int t[3]>>>(int out[3])", SemanticError, "declares no extern __shared__ array"),
    ("rotate<<<1, 3, int s[3] = {1}>>>(int out[3])", SemanticError, "shared memory has no initial values"),
    ("rotate<<<1, 3, int s[3], int u[2]>>>(int out[3])", SemanticError, "a second dynamic shared array"),
    ("rotate<<<1, 3, int s[3], 2>>>(int out[3])", ParseError, "comes last"),
    ("rotate<<<1, 3, int s[0]>>>(int out[3])", SemanticError, "has 0 elements"),
])
def test_dynamic_shared_memory_errors_are_located(launch, error, message):
    with pytest.raises(error, match=message) as e:
        ptxmm.load(DATA / "dyn_shared.ptx", kernel=KernelArgs(launch=launch))
    assert e.value.pos is not None


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 2), st.integers(1, 4), st.sampled_from(["int", "unsigned", "long long", "char"]),
       st.integers(1, 64), st.booleans())
def test_launch_with_dynamic_shared_memory_round_trip(grid, block, ctype, n, cluster):
    text = f"k<<<{grid}, {block}{', (1, 1, 1)' if cluster else ''}, {ctype} smem[{n}]>>>(int out[1])"
    la = parse_launch(text)
    assert (la.grid[0], la.block[0], la.cluster is not None) == (grid, block, cluster)
    (b,) = la.shared
    assert (b.ctype, b.name, b.count) == (ctype, "smem", n) and len(la.args) == 1




@pytest.mark.parametrize("path, line, old, new", [
    ("examples/kernels/exchange-off-by-one.ptx", 39, "ld.param.u64", "ld.param.x64"),
    ("examples/hopper/kernels/pipeline-tma-async.ptx", 156, "st.param.b64", "st.param.b4"),
    ("examples/kernels/exchange-off-by-one.ptx", 39, "ld.param.u64", "ld.param.u64.u32"),
])
def test_a_param_access_without_one_type_is_a_located_error(path, line, old, new, tmp_path):
    """ld.param / st.param with no type ptxmm knows (or two) were an IndexError in the module
    reader (the hunt's find): a syntax error at the line, with the form."""
    lines = (ROOT / path).read_text().splitlines(keepends=True)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    bad = tmp_path / "bad.ptx"
    bad.write_text("".join(lines))
    with pytest.raises(ParseError) as e:
        ptxmm.load(bad)
    assert e.value.pos.line == line and "needs one type" in str(e.value)
