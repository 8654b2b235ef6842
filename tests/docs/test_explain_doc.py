"""docs/explain.md and docs/img/mp-rel-acq.svg are what tools/explain_doc.py generates."""

from __future__ import annotations

import shutil

import pytest
from support import ROOT, tool_module


def test_explain_doc_is_current():
    mod = tool_module("explain_doc")
    doc, picture = mod.generate()
    assert (ROOT / "docs" / "explain.md").read_text() == doc, "run python tools/explain_doc.py"
    if shutil.which("dot") is None:
        pytest.skip("docs/img/mp-rel-acq.svg is laid out by Graphviz's dot, which is not installed "
                    "here (apt install graphviz)")
    # the picture is laid out by Graphviz (another version places things elsewhere): what it says
    assert mod.picture_content((ROOT / "docs" / "img" / "mp-rel-acq.svg").read_text()) == \
        mod.picture_content(picture), "run python tools/explain_doc.py"
