"""Silently wrong answers found by the third hunt (issue "nothing silently wrong, round 3"): each
test is the minimal input that showed one, with the answer ptxmm gave and the one the PTX ISA (or
ptxas) gives. Front-end properties against ptxas skip visibly where ptxas is not installed."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.errors import SemanticError, UnsupportedError

# ----- 1. an address computed by arithmetic named whatever location the sum happened to hit -------

ARITH = """.global .u32 x = 0;
.global .u32 a[4] = {0, 1, 2, 3};
.global .u32 y = 7;
.global .u64 q = 0;
.thread T0 {
    BODY
}
exists (T0:%r6 == 7)
"""


@pytest.mark.parametrize("body", [
    "mov.u64 %rd3, x; add.u64 %rd3, %rd3, 8192; ld.global.u32 %r6, [%rd3];",   # x + 8 KiB
    "mov.u64 %rd3, a; add.u64 %rd3, %rd3, 4096; ld.global.u32 %r6, [%rd3];",   # a + 4 KiB
    "mov.u64 %rd3, y; sub.u64 %rd3, %rd3, 4096; ld.global.u32 %r6, [%rd3];",
    "mov.u64 %rd3, a; add.u64 %rd3, %rd3, 4; ld.global.u32 %r6, [%rd3];",      # a[1], by arithmetic
])
def test_address_arithmetic_is_refused_not_resolved(body):
    """ptxmm placed location i at 0x1000 * (i + 1) and resolved a register address by its value,
    so `x + 8192` read y (the condition was ALLOWED, on a word the program never names): in PTX
    the address lies outside x and what it holds is not the litmus test's to say. Refused, located
    at the access; the array element is reachable as [a+4]."""
    with pytest.raises(UnsupportedError, match="computed from the address") as e:
        ptxmm.check(ptxmm.parse(ARITH.replace("BODY", body), "arith.ptx"))
    assert e.value.pos is not None and e.value.pos.line == 6


@pytest.mark.parametrize("value", ["4096", "0x3000", "8192"])
def test_an_integer_is_not_a_location_address(value):
    """`mov.u64 %rd3, 4096` then `[%rd3]` read the first location declared: a plain integer is
    no location's address."""
    src = ARITH.replace("BODY", f"mov.u64 %rd3, {value}; ld.global.u32 %r6, [%rd3];")
    with pytest.raises(SemanticError, match="does not hold a location address"):
        ptxmm.check(ptxmm.parse(src, "int.ptx"))


@pytest.mark.parametrize("body, value", [
    ("mov.u64 %rd3, y; ld.global.u32 %r6, [%rd3];", 7),
    ("mov.u64 %rd3, y; mov.u64 %rd4, %rd3; ld.global.u32 %r6, [%rd4];", 7),
    ("mov.u64 %rd3, y; add.u64 %rd3, %rd3, 0; ld.global.u32 %r6, [%rd3];", 7),
    ("ld.global.u64 %rd1, [q]; xor.b64 %rd2, %rd1, %rd1; mov.u64 %rd3, y; "
     "add.u64 %rd3, %rd3, %rd2; ld.global.u32 %r6, [%rd3];", 7),
    ("mov.u64 %rd3, y; mov.u64 %rd4, x; setp.eq.u32 %p1, 1, 1; selp.u64 %rd5, %rd3, %rd4, %p1; "
     "ld.global.u32 %r6, [%rd5];", 7),
    ("ld.global.u32 %r6, [a+8];", 2),
])
def test_exact_addresses_still_resolve(body, value):
    """A register that holds a location's address — moved, copied, plus a fake dependency that
    folds to 0, selected — still names it."""
    res = ptxmm.check(ptxmm.parse(ARITH.replace("BODY", body).replace("== 7", f"== {value}"),
                                  "ok.ptx"))
    assert res.holds is True and len(res.outcome_set) == 1
