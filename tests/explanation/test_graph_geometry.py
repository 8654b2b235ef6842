"""The geometry of the drawings (issue 42: "the rf edge from `init data=0` runs straight through T0's
`st [data], 42` box with its label inside it"): in the SVG Graphviz lays out, no edge passes
through a box it does not connect and no two labels overlap (nor a label a box) — over every
tutorial step's graph, the README's MP figure (and the docs' other figures as committed), kernel
graphs and dense Hopper graphs (laid out again with more room where dot's first placement of
their labels is not clear: graph.laid_out); also as the playground lays them out (the vendored
WebAssembly Graphviz, run by Node.js when it is installed). The checker itself fails on the old
grid layout's positions."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT
from support.svg_geometry import (
    Box,
    Edge,
    Geometry,
    edges_through_boxes,
    faults,
    overlapping_labels,
    parse,
    text_box,
)

import ptxmm
from ptxmm.explanation.explain import explain
from ptxmm.explanation.findings import finding_graph
from ptxmm.explanation.graph import SPACINGS, GEdge, GraphData, Node, dot_layout, dot_source, laid_out, svg
from ptxmm.explanation.labelfit import overlaps

pytestmark = pytest.mark.skipif(shutil.which("dot") is None,
                                reason="Graphviz's dot is not installed (apt install graphviz): "
                                       "ptxmm draws its grid layout, whose geometry this does not check")

TEACHING = sorted((ROOT / "examples" / "teaching").glob("*.ptx"))
README_MP = ROOT / "examples" / "classic" / "MP-rel-acq.ptx"  # docs/img/mp-rel-acq.svg
KERNELS = [ROOT / "examples" / "kernels" / f for f in
           ("mp-relaxed-flag.ptx", "exchange-off-by-one.ptx", "grid-barrier-no-fence.ptx")]
FIGURES = sorted((ROOT / "docs" / "img").glob("*.svg"))
# dense Hopper drawings (up to 40 events and 80 edges): at the first spacing dot put one of their
# labels on a box; graph.laid_out gives them more room (graph.SPACINGS)
HOPPER = [ROOT / "examples" / "hopper" / f for f in
          ("pipeline-tma-async-no-consumer-fence.ptx", "pipeline-tma-async-no-empty-wait.ptx",
           "wgmma-tma-war-early-release.ptx", "ring-2stage-no-empty-wait.ptx",
           "kernels/tma-tensor-store.ptx")]
WASM = ROOT / "src" / "ptxmm" / "web" / "static" / "graphviz" / "graphviz.js"


def _graph(path):
    prog = ptxmm.load(path)
    if prog.format == "kernel" and prog.condition is None:
        return finding_graph(prog)  # as `ptxmm graph` draws a kernel: its first finding
    return explain(prog).graph


_GRAPHS: dict = {}


def graph_of(path):
    if path not in _GRAPHS:
        _GRAPHS[path] = _graph(path)
    return _GRAPHS[path]


@pytest.mark.parametrize("path", [*TEACHING, README_MP, *KERNELS, *HOPPER],
                         ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_no_edge_through_a_box_and_no_label_on_another(path):
    drawing = svg(graph_of(path))
    geo = parse(drawing)
    assert geo.nodes and geo.edges  # something was drawn, and parsed
    assert faults(drawing) == []


@pytest.mark.parametrize("path", FIGURES, ids=lambda p: p.name)
def test_the_figures_in_the_docs_as_committed(path):
    drawing = path.read_text()
    assert parse(drawing).nodes, f"{path.name} is not laid out by Graphviz: regenerate it"
    assert faults(drawing) == []


def test_a_dense_drawing_gets_more_room_until_its_labels_are_clear():
    """wgmma-tma-war-early-release at the first spacing: an rf label on a box (both checkers say
    so); laid out again with more room: none, and what the drawing says is the same."""
    g = graph_of(ROOT / "examples" / "hopper" / "wgmma-tma-war-early-release.ptx")
    first = dot_layout(dot_source(g, SPACINGS[0])).decode()
    assert overlapping_labels(parse(first)) and overlaps(first) > 0
    source, drawn = laid_out(g)
    assert source != dot_source(g, SPACINGS[0]) and overlaps(drawn) == 0 and faults(drawn) == []
    texts = lambda s: sorted(re.findall(r"<text[^>]*>([^<]*)</text>", s))  # noqa: E731
    assert texts(drawn) == texts(first)
    # a sparse drawing keeps the first spacing (the committed figures do not move)
    assert laid_out(graph_of(README_MP))[0] == dot_source(graph_of(README_MP))


@pytest.mark.parametrize("path", [*HOPPER, README_MP, *TEACHING[:6]], ids=lambda p: p.name)
def test_the_label_check_of_the_layout_agrees_with_the_tests_geometry(path):
    """graph.laid_out's own check (labelfit.py) and this test's (support/svg_geometry.py, written
    apart) find the same drawings faulty, at every spacing tried."""
    g = graph_of(path)
    for spacing in SPACINGS[:3]:
        drawn = dot_layout(dot_source(g, spacing)).decode()
        assert (overlaps(drawn) > 0) == bool(overlapping_labels(parse(drawn))), spacing


def test_kernel_boxes_show_the_cuda_line():
    text = dot_source(graph_of(KERNELS[0]))
    assert "mp-relaxed-flag.cu:30 data[0] = 42;" in text
    assert "mp-relaxed-flag.cu:31 f.store(1, cuda::std::memory_order_relaxed);" in text


def _grid_geometry(g) -> Geometry:
    """The old hand-written grid layout's SVG (now only the fallback without ``dot``: gridsvg),
    read into the same geometry: its node boxes are the ``rect``s with ``rx="6"`` in node order,
    its edges the ``path``s (``M x,y Q cx,cy x,y`` or ``L``) in edge order, each followed by its
    label."""
    from ptxmm.explanation.gridsvg import grid_svg

    root = ET.fromstring(grid_svg(g))
    ns = "{http://www.w3.org/2000/svg}"
    rects = [r for r in root.iter(f"{ns}rect") if r.get("rx") == "6"]
    nodes = {}
    for n, r in zip(g.nodes, rects, strict=True):
        x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
        nodes[f"e{n.eid}"] = Box(f"e{n.eid}", x, y, x + w, y + h)
    kids = list(root)
    paths = [k for k in kids if k.tag == f"{ns}path"]
    edges, labels = [], []
    for e, p in zip(g.edges, paths, strict=True):
        nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", p.get("d"))]
        if len(nums) == 6:  # a quadratic Bézier, sampled
            (x0, y0, cx, cy, x1, y1) = nums
            pts = tuple(((1 - t) ** 2 * x0 + 2 * (1 - t) * t * cx + t * t * x1,
                         (1 - t) ** 2 * y0 + 2 * (1 - t) * t * cy + t * t * y1)
                        for t in (k / 24 for k in range(25)))
        else:
            pts = tuple((nums[0] + (nums[2] - nums[0]) * k / 24, nums[1] + (nums[3] - nums[1]) * k / 24)
                        for k in range(25))
        edges.append(Edge(f"e{e.src}", f"e{e.dst}", pts))
        label = kids[kids.index(p) + 1]
        labels.append(text_box(label, f"label of e{e.src}->e{e.dst}"))
    return Geometry(nodes, tuple(edges), tuple(labels))


def test_the_check_fails_on_the_old_grid_layout():
    """Tutorial step 6 as the grid layout drew it: the rf edge from `init data=0` to T1's load of
    data crosses T0's column through its `st [data], 42` box (the issue's complaint), and
    labels pile up; the same graph laid out by dot has neither."""
    g = graph_of(ROOT / "examples" / "teaching" / "06-relaxed-store-is-not-release.ptx")
    geo = _grid_geometry(g)
    bad = edges_through_boxes(geo)
    init = next(n.eid for n in g.nodes if n.thread == "init")
    st_data = next(n.eid for n in g.nodes if n.thread == "T0" and "[data]" in n.text)
    assert f"e{init}->e{next(e.dst for e in g.edges if e.src == init)} passes through e{st_data}" in bad
    assert overlapping_labels(geo)
    assert faults(svg(g)) == []


def test_the_check_sees_labels_on_top_of_each_other():
    geo = parse(dot_layout(dot_source(graph_of(README_MP))).decode())
    assert len(geo.labels) >= 2 and overlapping_labels(geo) == []
    a, b = geo.labels[:2]  # the second label moved onto the first: caught
    moved = dataclasses.replace(b, x0=a.x0 + 1, x1=a.x0 + 1 + (b.x1 - b.x0), y0=a.y0, y1=a.y0 + (b.y1 - b.y0))
    assert overlapping_labels(dataclasses.replace(geo, labels=(a, moved, *geo.labels[2:])))


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed: the playground's "
                                                         "WebAssembly Graphviz is not run here")
def test_the_playground_layout_has_the_same_geometry(tmp_path):
    """The page lays the same DOT out with the vendored WebAssembly Graphviz (another Graphviz
    version than the system's `dot`): its SVG passes the same checks."""
    paths = [*TEACHING, README_MP, *KERNELS]
    dots = {str(p): dot_source(graph_of(p)) for p in paths}
    script = tmp_path / "layout.mjs"
    script.write_text(
        'import { readFileSync } from "fs";\nimport { pathToFileURL } from "url";\n'
        'const { Graphviz } = await import(pathToFileURL(process.argv[2]).href);\n'
        'const gv = await Graphviz.load();\nconst dots = JSON.parse(readFileSync(0, "utf8"));\n'
        'const out = {};\nfor (const k of Object.keys(dots)) out[k] = gv.dot(dots[k], "svg");\n'
        'process.stdout.write(JSON.stringify(out));\n')
    r = subprocess.run(["node", str(script), str(WASM)], input=json.dumps(dots).encode(),
                       capture_output=True, timeout=300, check=True)
    drawn = json.loads(r.stdout)
    assert set(drawn) == set(dots)
    bad = {k: faults(v) for k, v in drawn.items() if faults(v)}
    assert bad == {}
    assert all(parse(v).nodes for v in drawn.values())


_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF, exclude_categories=("Cc", "Cs", "Zl",
                                                                                           "Zp")),
                min_size=1, max_size=24).map(str.strip).filter(bool)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_TEXT, min_size=2, max_size=4), rel=_TEXT, title=_TEXT, cuda=st.none() | _TEXT)
def test_any_text_survives_the_dot_source(texts, rel, title, cuda):
    """The DOT writer quotes what it is given (instruction text, a kernel's CUDA line — an HTML-like
    label —, a model's relation name, a title): Graphviz reads it back, and the drawing shows it as
    it was."""
    nodes = tuple(Node(i, i, 0, f"T{i}", t, i + 1, cuda=cuda if i == 0 else None)
                  for i, t in enumerate(texts))
    edges = tuple(GEdge(i, i + 1, rel, "#2ca02c") for i in range(len(texts) - 1))
    g = GraphData(title, tuple(f"T{i}" for i in range(len(texts))), nodes, edges, ())
    shown = [re.sub(" +", " ", html.unescape(t).replace("\xa0", " "))
             for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg(g))]

    def norm(s: str) -> str:  # Graphviz writes runs of spaces with no-break spaces
        return re.sub(" +", " ", s.replace("\xa0", " "))

    assert norm(texts[0]) in " ".join(shown) and all(norm(t) in shown for t in texts[1:])
    assert cuda is None or norm(cuda) in shown
    assert norm(rel) in [s.strip() for s in shown]
    assert any(norm(title) in s for s in shown)
