"""A check's ``reductions`` (and the JSON's ``bound.reductions``) name every reduction that applied
to it and no other: besides symmetry, the read-only fold and RMW chains (tests/engines/
test_rmw_chains.py), the site witnesses reused (queries/sites.REUSE_WITNESSES), the loop-free
liveness shortcut (hangs.LOOP_FREE_SHORTCUT), the barrier proof (hangs.BARRIER_PROOF), RMW chains
in the liveness problem (hangs.CHAINS) and the address memo (semantics/memory.ADDRESS_MEMO) — each
only when it applied: named with its switch on where it applies, absent with its switch off, and
absent where it does not apply."""

from __future__ import annotations

from pathlib import Path

import pytest

import ptxmm
from ptxmm.queries import hangs, sites
from ptxmm.semantics import memory

KDIR = Path(__file__).resolve().parents[2] / "examples" / "kernels"


def _reductions(stem: str) -> tuple[str, ...]:
    res = ptxmm.check(ptxmm.load(KDIR / f"{stem}.ptx"))
    assert res.to_json()["bound"]["reductions"] == list(res.reductions)
    return res.reductions


def _named(stem: str, prefix: str) -> list[str]:
    return [x for x in _reductions(stem) if x.startswith(prefix)]


# (switch's module, name, the words' start, a kernel where it applies, one where it does not)
CASES = [
    (sites, "REUSE_WITNESSES", "site witnesses reused", "exchange-off-by-one", "histogram"),
    (hangs, "LOOP_FREE_SHORTCUT", "loop-free liveness shortcut", "histogram", "grid-barrier"),
    (hangs, "BARRIER_PROOF", "barrier proof", "syncthreads-exchange", "grid-barrier"),
    (hangs, "CHAINS", "RMW chains in the liveness problem", "grid-barrier", "syncthreads-exchange"),
    (memory, "ADDRESS_MEMO", "address memo", "histogram", "grid-barrier"),
]


@pytest.mark.parametrize("mod, switch, words, applies, not_applies", CASES, ids=[c[1] for c in CASES])
def test_a_reduction_is_named_exactly_when_it_applied(monkeypatch, mod, switch, words, applies,
                                                       not_applies):
    assert len(_named(applies, words)) == 1
    assert _named(not_applies, words) == []
    monkeypatch.setattr(mod, switch, False)
    assert _named(applies, words) == []


def test_the_counts_say_how_much_each_saved():
    # the off-by-one exchange's out-of-bounds site is reached by the witness of its one outcome
    assert "site witnesses reused (1 site(s) without a query)" in _reductions("exchange-off-by-one")
    # the histogram's 2 threads share one body: its one computed address is asked once, not per thread
    memo = _named("histogram", "address memo")
    assert memo and memo[0].startswith("address memo (") and not memo[0].startswith("address memo (0")


def test_a_site_reached_by_no_witness_is_not_counted(monkeypatch):
    monkeypatch.setattr(sites, "REUSE_MAX", 0)  # no witness is looked at: every site is a query
    assert _named("exchange-off-by-one", "site witnesses reused") == []
