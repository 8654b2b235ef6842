"""Kernels (issue 25): predicated calls, ``__constant__`` data, dynamic shared memory and
``__syncwarp(mask)``."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.errors import UnsupportedError
from ptxmm.kernels import KernelArgs, parse_kernel

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
