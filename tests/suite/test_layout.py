"""The package's layout, held as the README's "Layout" states it: stages are folders, every import
(at module level or inside a function) goes down the stages, no import circle between modules,
``import z3`` only under engines/, no module over 800 lines, no class over 400, a dozen modules at
most at the top of src/ptxmm. Read from the source text (ast), nothing imported."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import networkx as nx
from support import ROOT

PKG = ROOT / "src" / "ptxmm"

# bottom to top: a module may import from its own stage and the stages before it
STAGES = ["_infra", "errors", "ir", "syntax", "cat", "kernel", "semantics", "engines", "report",
          "loading", "api_args", "queries", "explanation", "ptxmm", "testing", "device", "web",
          "campaigns", "cli", "__main__"]


def _name(p: Path) -> str:
    parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_name(p): p for p in PKG.rglob("*.py")}


def _stage(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "ptxmm"


@cache
def _imports() -> nx.DiGraph:
    """Module → the modules of the package it imports (a submodule named in ``from P import m``
    counts as imported)."""
    mods = _modules()
    g = nx.DiGraph()
    for m, p in mods.items():
        g.add_node(m)
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.ImportFrom):
                base = pkg.split(".")[:len(pkg.split(".")) - (n.level - 1)] if n.level else []
                tgt = ".".join(base + ([n.module] if n.module else [])) if n.level else (n.module or "")
                subs = [f"{tgt}.{a.name}" for a in n.names if f"{tgt}.{a.name}" in mods]
                for t in subs or [tgt]:
                    if t.split(".")[0] == "ptxmm" and t != m:
                        g.add_edge(m, t)
            elif isinstance(n, ast.Import):
                g.add_edges_from((m, a.name) for a in n.names if a.name.split(".")[0] == "ptxmm")
    return g


def test_every_stage_is_listed():
    assert {_stage(m) for m in _modules()} <= set(STAGES)


def test_every_import_goes_down_the_stages():
    rank = {s: i for i, s in enumerate(STAGES)}
    up = [(a, b) for a, b in _imports().edges if rank[_stage(b)] > rank[_stage(a)]]
    assert up == []


def test_no_import_circle_between_modules():
    g = _imports()
    circle = next(iter(nx.simple_cycles(g)), None)
    assert circle is None, " -> ".join(circle)


def test_z3_is_imported_under_engines_only():
    users = {m for m, p in _modules().items()
             for n in ast.walk(ast.parse(p.read_text()))
             if (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "z3" for a in n.names))
             or (isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] == "z3")}
    assert users and all(m.startswith("ptxmm.engines.") for m in users), sorted(users)


def test_modules_and_classes_stay_small():
    long_modules = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > 800}
    long_classes = {f"{m}.{c.name}": c.end_lineno - c.lineno + 1 for m, p in _modules().items()
                    for c in ast.walk(ast.parse(p.read_text()))
                    if isinstance(c, ast.ClassDef) and c.end_lineno - c.lineno + 1 > 400}
    assert long_modules == {} and long_classes == {}


def test_a_dozen_modules_at_most_at_the_top():
    top = sorted(p.name for p in PKG.glob("*.py"))
    assert len(top) <= 12, top


def test_the_layout_catches_an_upward_import(tmp_path, monkeypatch):
    """The rule can fail: an ir module importing the queries is reported."""
    tree = tmp_path / "src" / "ptxmm"
    (tree / "ir").mkdir(parents=True)
    (tree / "queries").mkdir()
    for f in ("__init__.py", "ir/__init__.py", "queries/__init__.py", "queries/checker.py"):
        (tree / f).write_text("")
    (tree / "ir" / "bad.py").write_text("from ..queries import checker\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", tree)
    _modules.cache_clear()
    _imports.cache_clear()
    try:
        rank = {s: i for i, s in enumerate(STAGES)}
        up = [(a, b) for a, b in _imports().edges if rank[_stage(b)] > rank[_stage(a)]]
        assert ("ptxmm.ir.bad", "ptxmm.queries.checker") in up
    finally:
        _modules.cache_clear()
        _imports.cache_clear()
