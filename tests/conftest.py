from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def ptx_files() -> list[Path]:
    return sorted([*(ROOT / "tests" / "litmus").rglob("*.ptx"), *(ROOT / "examples").rglob("*.ptx")])


@pytest.fixture
def root() -> Path:
    return ROOT
