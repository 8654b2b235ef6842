"""Whether Graphviz placed a drawing's edge labels clear of each other and of the boxes (issue 42,
"drawings laid out by Graphviz": no two labels overlap, nor a label a box).

The labels of the edges between threads are ``xlabel``s (graph.py: those edges do not constrain
the ranks, and dot lays out no ``label`` of such an edge inside clusters). dot places xlabels after
the layout, next to their edge, and — ``forcelabels=true``, so that none is dropped — on top of
something where it finds no free place; how much room it finds depends on the spacing of the
ranks and of the nodes. :func:`overlaps` counts the labels that touch another label or a box in
the SVG dot wrote, so that the caller can lay the graph out again with more room
(graph.py's spacings).

The geometry: a node's box is the bounding box of its outline (``<path>`` or ``<polygon>`` of its
``<g class="node">``); a label's box the ink of each of its ``<text>`` lines, estimated from the
font size as Graphviz does without font metrics — a character 0.62 em wide (Courier's are 0.6 em,
Helvetica's 0.55 em on average), from 0.8 em above the baseline to 0.22 em below; the no-break
spaces around a label are no ink. Two boxes overlap when they share more than half a point each
way (the rule tests/support/svg_geometry.py checks, written independently there).

The playground runs the same check in the browser (web/static/app.js, ``overlaps``: the same
boxes and estimate, over the SVG of the WebAssembly Graphviz) to lay a drawing out again at
:data:`~.graph.SPACINGS` as :func:`~.graph.laid_out` does; tests/web/test_graph_layout.py checks
that both count the same."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

_NS = "{http://www.w3.org/2000/svg}"
_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")
SLACK = 0.5

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def _bbox(nums: list[float]) -> Box:
    xs, ys = nums[0::2], nums[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _ink(t: ET.Element) -> Box:
    size = float(t.get("font-size", "14"))
    width = 0.62 * size * len("".join(t.itertext()).strip())
    x, y = float(t.get("x", "0")), float(t.get("y", "0"))
    anchor = t.get("text-anchor", "start")
    x0 = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
    return x0, y - 0.8 * size, x0 + width, y + 0.22 * size


def _touch(a: Box, b: Box) -> bool:
    return a[0] + SLACK < b[2] and b[0] + SLACK < a[2] and a[1] + SLACK < b[3] and b[1] + SLACK < a[3]


def boxes(svg: str) -> tuple[list[Box], list[Box]]:
    """The node boxes and the edge label boxes of an SVG dot wrote."""
    root = ET.fromstring(svg[svg.index("<svg"):])
    nodes, labels = [], []
    for g in root.iter(f"{_NS}g"):
        if g.get("class") == "node":
            shape = g.find(f"{_NS}path")
            nums = _NUM.findall(shape.get("d")) if shape is not None else \
                _NUM.findall(getattr(g.find(f"{_NS}polygon"), "attrib", {}).get("points", ""))
            if nums:
                nodes.append(_bbox([float(v) for v in nums]))
        elif g.get("class") == "edge":
            labels += [_ink(t) for t in g.iter(f"{_NS}text")]
    return nodes, labels


def overlaps(svg: str) -> int:
    """How many labels touch another label or a node box."""
    nodes, labels = boxes(svg)
    return sum(1 for i, a in enumerate(labels)
               if any(_touch(a, b) for b in labels[i + 1:]) or any(_touch(a, n) for n in nodes))


__all__ = ["boxes", "overlaps"]
