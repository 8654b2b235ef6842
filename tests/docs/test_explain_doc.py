"""docs/explain.md and docs/img/mp-rel-acq.svg are what tools/explain_doc.py generates."""

from __future__ import annotations

from support import ROOT, tool_module


def test_explain_doc_is_current():
    mod = tool_module("explain_doc")
    doc, picture = mod.generate()
    assert (ROOT / "docs" / "explain.md").read_text() == doc, "run python tools/explain_doc.py"
    assert (ROOT / "docs" / "img" / "mp-rel-acq.svg").read_text() == picture, \
        "run python tools/explain_doc.py"
