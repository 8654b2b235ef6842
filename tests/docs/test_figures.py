"""docs/img's drawings are what tools/figures.py regenerates (one command for all of docs/img), by
the rule its docstring states: byte for byte under the Graphviz version that laid out the
committed files (docs/img/figures.json), what each drawing says under another version or none."""

from __future__ import annotations

import json
import shutil

import pytest
from support import ROOT, tool_module

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def _module():
    return tool_module("figures")


def test_every_drawing_of_docs_img_has_its_command_and_the_doc_tools_name_the_same():
    mod = _module()
    assert {p.name for p in (ROOT / "docs" / "img").glob("*.svg")} == set(mod.FIGURES)
    tutorial, explain = tool_module("tutorial_doc"), tool_module("explain_doc")
    for src, pic in tutorial.PICTURES.items():
        assert mod.FIGURES[pic.removeprefix("docs/img/")] == (f"{tutorial.TEACH}/{src}",)
    assert mod.FIGURES[explain.SVG.name] == ("examples/classic/MP-rel-acq.ptx",)
    recorded = mod.recorded_version()
    assert recorded and all(f"docs/img/{n}" in c for n, c in
                            json.loads(mod.MANIFEST.read_text())["figures"].items())


def test_the_committed_drawings_are_current():
    assert _module().stale() == [], "run python tools/figures.py"


def test_a_drawing_that_says_something_else_is_stale(tmp_path, monkeypatch):
    mod = _module()
    name = "mp-rel-acq.svg"
    (tmp_path / name).write_text((mod.IMG / name).read_text().replace(">rf<", ">co<", 1))
    monkeypatch.setattr(mod, "IMG", tmp_path)
    assert ">co<" in (tmp_path / name).read_text()
    assert mod.stale([name]) == [name]
    (tmp_path / name).unlink()
    assert mod.stale([name]) == [name]  # missing: stale too


@needs_dot
def test_under_the_recorded_graphviz_a_moved_label_is_stale(tmp_path, monkeypatch):
    mod = _module()
    if mod.graphviz_version() != mod.recorded_version():
        pytest.skip(f"dot {mod.graphviz_version()} is not the recorded {mod.recorded_version()}: "
                    "only what the drawings say is compared")
    name = "teach-06-relaxed-not-release.svg"
    text = (mod.IMG / name).read_text()
    moved = text.replace('x="', 'x="1', 1)  # the same texts, one label elsewhere
    assert moved != text and mod.picture_content(moved) == mod.picture_content(text)
    (tmp_path / name).write_text(moved)
    monkeypatch.setattr(mod, "IMG", tmp_path)
    assert mod.stale([name]) == [name]
