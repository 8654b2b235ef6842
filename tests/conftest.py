"""Fixtures of the whole suite. Helpers are in tests/support/ (``from support import ROOT``).

The only way a test reaches outside the repository is the ``conformance`` fixture (and the
``dat3m`` / ``dat3m_liveness`` ones built on it): the Dat3M corpora live beside a checkout, in
../shared/conformance, never in it; without them the tests that need them are skipped, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import ROOT

_SHARED = ROOT.parent / "shared"


def _beside(sub: str) -> Path:
    d = _SHARED / "conformance" / sub if sub else _SHARED / "conformance"
    if not d.is_dir():
        pytest.skip(f"../shared/conformance{'/' + sub if sub else ''} not found ({d}): the Dat3M corpus "
                    "lives beside the repository, not in it; put it there to run this test")
    return d


@pytest.fixture(scope="session")
def conformance() -> Path:
    """../shared/conformance, read in place (never copied); skips without it."""
    return _beside("")


@pytest.fixture(scope="session")
def dat3m(conformance) -> Path:
    """The Dat3M PTX corpus: ../shared/conformance/dat3m (PTX/**.litmus, expected.csv)."""
    return _beside("dat3m")


@pytest.fixture(scope="session")
def dat3m_liveness(conformance) -> Path:
    """Dat3M's PTX liveness tests: ../shared/conformance/dat3m-liveness."""
    return _beside("dat3m-liveness")


@pytest.fixture
def root() -> Path:
    return ROOT
