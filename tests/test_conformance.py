"""The Dat3M PTX corpus (../shared/conformance, read in place, never copied) against its expected
results. Skips cleanly when the corpus is absent. The asserted agreement is what the closing
note of the conformance issue reports, so a regression cannot pass silently."""

from __future__ import annotations

import pytest
from conftest import SHARED

from ptxmm.runner import run_tests

DAT3M = SHARED / "conformance" / "dat3m"
pytestmark = pytest.mark.skipif(not DAT3M.is_dir(), reason="../shared/conformance not present")

# Known disagreements, each argued next to its entry (none at present).
KNOWN: set[str] = set()


# (model, CSV column): the current model is compared with the newest rated version
MODELS = [("ptx", "ptx-v7.5"), ("ptx-v7.5", "ptx-v7.5"), ("ptx-v6.0", "ptx-v6.0")]


@pytest.fixture(scope="module", params=MODELS, ids=[m for m, _ in MODELS])
def results(request):
    model, column = request.param
    dirs = [str(DAT3M / "PTX" / d) for d in ("Manual", "Barrier", "Nvidia")]
    return run_tests(dirs, model, str(DAT3M / "expected.csv"), column, jobs=2)


def test_non_proxy_tests_parse_and_agree(results):
    non_proxy = [r for r in results if "/proxy/" not in r.path]
    assert len(non_proxy) == 87
    assert all(r.status in ("agree", "DISAGREE") for r in non_proxy), [
        (r.path, r.error) for r in non_proxy if r.error]
    disagree = {r.path.rsplit("/", 1)[1].removesuffix(".litmus") for r in non_proxy
                if r.status == "DISAGREE"}
    assert disagree <= KNOWN, disagree - KNOWN
    assert sum(r.status == "agree" for r in non_proxy) == 87


def test_proxy_tests_are_rejected_clearly(results):
    proxy = [r for r in results if "/proxy/" in r.path]
    assert proxy and all(r.status == "unsupported" and "proxy" in r.error for r in proxy)
