"""docs/explain.md and docs/img/mp-rel-acq.svg are what benchmarks/explain_doc.py generates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_explain_doc_is_current():
    spec = importlib.util.spec_from_file_location("explain_doc", ROOT / "benchmarks" / "explain_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    doc, picture = mod.generate()
    assert (ROOT / "docs" / "explain.md").read_text() == doc, "run python benchmarks/explain_doc.py"
    assert (ROOT / "docs" / "img" / "mp-rel-acq.svg").read_text() == picture, \
        "run python benchmarks/explain_doc.py"
