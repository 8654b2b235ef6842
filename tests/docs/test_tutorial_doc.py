"""docs/tutorial.md is what tools/tutorial_doc.py generates from real runs of the tool (check,
explain, graph) and the H100 crossval JSON: a changed message or verdict makes it stale, and this
test says so (regenerate: python tools/tutorial_doc.py)."""

from __future__ import annotations

import re

from support import ROOT, tool_module


def _module():
    return tool_module("tutorial_doc")


def test_tutorial_is_up_to_date():
    text = _module().render()
    assert (ROOT / "docs" / "tutorial.md").read_text() == text, \
        "docs/tutorial.md is stale: run python tools/tutorial_doc.py"


def test_tutorial_covers_every_teaching_example_and_names_no_machine_paths():
    mod = _module()
    text = (ROOT / "docs" / "tutorial.md").read_text()
    files = {p.name for p in (ROOT / "examples" / "teaching").glob("*.ptx")}
    assert files == {s.file for sec in mod.SECTIONS for s in sec.steps}
    assert "Error:" not in text and "Traceback" not in text
    assert not re.search(r"(^|\s)/(work|home|tmp|usr)/", text)
    for pic in mod.PICTURES.values():
        assert (ROOT / pic).read_text().lstrip().startswith("<")


def test_tutorial_hardware_table_comes_from_a_crossval_run():
    text = (ROOT / "docs" / "tutorial.md").read_text()
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and ".ptx |" in ln]
    assert len(rows) == 20 and not any("not run" in r for r in rows)
    # the teaching point the hardware confirms: the relaxed flag store is not a release
    (row,) = [r for r in rows if r.startswith("| 06-")]
    assert int(row.split("|")[4].replace(",", "")) > 0
