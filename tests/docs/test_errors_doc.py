"""docs/errors.md is what tools/errors_doc.py generates from real runs of the tool: a changed
message makes it stale, and this test says so (regenerate: python tools/errors_doc.py)."""

from __future__ import annotations

import re

from support import ROOT, tool_module


def _module():
    return tool_module("errors_doc")


def test_errors_doc_is_up_to_date():
    text = _module().render()
    assert (ROOT / "docs" / "errors.md").read_text() == text, \
        "docs/errors.md is stale: run python tools/errors_doc.py"


def test_errors_doc_has_no_machine_paths():
    text = (ROOT / "docs" / "errors.md").read_text()
    assert str(ROOT) not in text
    assert not re.search(r"(^|\s)/(work|home|tmp|usr)/", text)


def test_every_error_class_is_shown():
    text = (ROOT / "docs" / "errors.md").read_text()
    for kind in ("syntax error:", "error:", "not supported yet:", "model error:", "warning:",
                 "status timeout", "status no-execution", "no such file"):
        assert kind in text, kind
