"""docs/explain.md and docs/img/mp-rel-acq.svg are what benchmarks/explain_doc.py generates."""

from __future__ import annotations

from pathlib import Path

from conftest import benchmark_module

ROOT = Path(__file__).resolve().parents[1]


def test_explain_doc_is_current():
    mod = benchmark_module("explain_doc")
    doc, picture = mod.generate()
    assert (ROOT / "docs" / "explain.md").read_text() == doc, "run python benchmarks/explain_doc.py"
    assert (ROOT / "docs" / "img" / "mp-rel-acq.svg").read_text() == picture, \
        "run python benchmarks/explain_doc.py"
