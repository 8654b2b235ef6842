"""The ``.ptx`` front end accepts a thread body exactly when ``ptxas -arch=sm_90`` assembles it
(issue 24, item 1), within the forms ptxmm models: a body ptxmm calls "not supported yet" counts
as neither, and a body with an integer constant too large for its operand must be rejected by
ptxmm whatever ptxas says (ptxas truncates it silently: the one deliberate departure, see
tests/support/ptxas_oracle.py).

500 examples here; ``PTXMM_PTXAS_EXAMPLES=10000 pytest -q -s
tests/syntax/test_ptxas_accepts_what_ptxmm_reads.py`` runs more
and prints the counts (accepted/rejected by each). Skipped, visibly, where ptxas is not installed."""

from __future__ import annotations

import atexit
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from support import ptxas_oracle as oracle

pytestmark = pytest.mark.skipif(oracle.PTXAS is None, reason="ptxas is not installed (CUDA toolkit)")

EXAMPLES = int(os.environ.get("PTXMM_PTXAS_EXAMPLES", "500"))
COUNTS: Counter = Counter()


def _report() -> None:
    if COUNTS and EXAMPLES != 500:
        print("\nptxas vs ptxmm:", dict(sorted(COUNTS.items())))


atexit.register(_report)


def _expected(ptxas_ok: bool, body: oracle.Body) -> str:
    return "reject" if body.oversized else ("accept" if ptxas_ok else "reject")


@pytest.mark.slow  # ~35 s of ptxas runs; by default: the operand rules (test_ptxas_operand_rules.py) and
# the qualifiers and operands the third hunt checked against ptxas (test_forms_ptxas_refuses.py)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(oracle.body())
def test_ptxmm_accepts_what_ptxas_accepts(body):
    ok, said = oracle.ptxas_accepts(body.lines)
    verdict, message = oracle.ptxmm_verdict(body.lines)
    COUNTS[f"ptxas {'accepts' if ok else 'rejects'}, ptxmm {verdict}"
           + (" (oversized constant)" if body.oversized else "")] += 1
    if verdict == "unsupported":
        return
    assert verdict == _expected(ok, body), (
        f"ptxas {'accepts' if ok else 'rejects'} and ptxmm says {verdict}:\n"
        + "\n".join(body.lines) + f"\nptxas: {said}\nptxmm: {message}"
        + (f"\noversized constants: {body.oversized}" if body.oversized else ""))
    if verdict == "reject":
        assert message.startswith("k.ptx:"), message  # located


# ----- the translator itself, so that a disagreement is ptxmm's and not the harness's -----------


def test_kernel_of_a_valid_body_assembles():
    lines = ["ld.global.u32 %r0, [gx];", "setp.ne.u32 %p0, %r0, 1;", "@%p0 bra $Lend;",
             "st.shared.u64 [sw], %rd0;", "atom.global.cas.b32 %b0, [gz], %b1, 0xFFFFFFFF;"]
    assert oracle.ptxas_accepts(lines)[0]
    assert oracle.ptxmm_verdict(lines) == ("accept", "")


@pytest.mark.parametrize("line", ["mov.u32 %r0, %rd0;", "add.u32 %r0, %r1, %p0;",
                                  "st.global.u32 [sx], 1;", "@%r0 bra $Lend;"])
def test_kernel_of_a_wrong_body_does_not(line):
    ok, said = oracle.ptxas_accepts([line])
    assert not ok and "error" in said
    assert oracle.ptxmm_verdict([line])[0] == "reject"


def test_oversized_constant_is_the_departure():
    line = "mov.u32 %r0, 0x1FFFFFFFF;"
    assert oracle.ptxas_accepts([line])[0]  # ptxas truncates it without a word
    verdict, message = oracle.ptxmm_verdict([line])
    assert verdict == "reject" and "does not fit" in message
