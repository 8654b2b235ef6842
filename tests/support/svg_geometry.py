"""The geometry of an SVG that Graphviz's ``dot`` writes (issue 42, "drawings laid out by Graphviz"):
node boxes, edges as sampled Bézier polylines, label boxes — and the two faults the hand-written
grid layout had: an edge passing through a box it does not connect, and labels on top of each
other (or of a box).

Graphviz's SVG: a node is ``<g class="node">`` with ``<title>NAME</title>``, its outline a
``<path>`` (style=rounded) or ``<polygon>``, its text ``<text>`` lines; an edge is
``<g class="edge">`` with ``<title>A->B</title>``, its curve one ``<path d="M x,y C ...">`` (cubic
Béziers), its arrowhead a ``<polygon>``, its label a ``<text>``; the legend and clusters are
``<g class="cluster">``. All share one transform, so coordinates compare as they are.

Text boxes are estimated from the font size (Graphviz does the same without its font metrics):
a character 0.62 em wide (Courier's are 0.6 em, Helvetica's 0.55 em on average), the ink from
0.8 em above the baseline (capitals and ascenders reach about 0.75 em) to 0.22 em below it
(descenders) — a little generous, so that an overlap the eye sees is not missed; the padding
spaces around an edge label are not ink. Legend entries (the graph's own label, below the
drawing) are not edge labels and are not checked."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

NS = "{http://www.w3.org/2000/svg}"
_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


@dataclass(frozen=True)
class Box:
    name: str
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, o: Box, slack: float = 0.5) -> bool:
        return (self.x0 + slack < o.x1 and o.x0 + slack < self.x1
                and self.y0 + slack < o.y1 and o.y0 + slack < self.y1)

    def contains(self, x: float, y: float, margin: float) -> bool:
        return self.x0 + margin < x < self.x1 - margin and self.y0 + margin < y < self.y1 - margin


@dataclass(frozen=True)
class Edge:
    tail: str
    head: str
    points: tuple[tuple[float, float], ...]  # the curve, sampled


@dataclass(frozen=True)
class Geometry:
    nodes: dict[str, Box]
    edges: tuple[Edge, ...]
    labels: tuple[Box, ...]  # edge labels (one box per text line)


def _bbox(name: str, pts: list[float]) -> Box:
    xs, ys = pts[0::2], pts[1::2]
    return Box(name, min(xs), min(ys), max(xs), max(ys))


def text_box(t: ET.Element, name: str) -> Box:
    size = float(t.get("font-size", "14"))
    width = 0.62 * size * len("".join(t.itertext()).strip())  # the ink: padding spaces are not
    x, y = float(t.get("x")), float(t.get("y"))
    anchor = t.get("text-anchor", "start")
    x0 = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
    return Box(name, x0, y - 0.8 * size, x0 + width, y + 0.22 * size)


def _bezier(d: str, steps: int = 24) -> tuple[tuple[float, float], ...]:
    """The points of an ``M x,y C x1,y1 x2,y2 x,y ...`` path, each cubic sampled ``steps`` times."""
    nums = [float(v) for v in _NUM.findall(d)]
    pts = list(zip(nums[0::2], nums[1::2]))
    out = [pts[0]]
    for i in range(1, len(pts) - 2, 3):
        p0, p1, p2, p3 = pts[i - 1], pts[i], pts[i + 1], pts[i + 2]
        for k in range(1, steps + 1):
            t = k / steps
            a, b, c, e = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t ** 3
            out.append((a * p0[0] + b * p1[0] + c * p2[0] + e * p3[0],
                        a * p0[1] + b * p1[1] + c * p2[1] + e * p3[1]))
    return tuple(out)


def _title(g: ET.Element) -> str:
    t = g.find(f"{NS}title")
    return "" if t is None or t.text is None else t.text


def parse(svg: str) -> Geometry:
    """The geometry of one SVG document written by Graphviz (``dot -Tsvg``)."""
    root = ET.fromstring(svg.encode() if isinstance(svg, str) else svg)
    nodes: dict[str, Box] = {}
    edges: list[Edge] = []
    labels: list[Box] = []
    for g in root.iter(f"{NS}g"):
        cls, name = g.get("class"), _title(g)
        if cls == "node":
            shape = g.find(f"{NS}path")
            if shape is not None:
                nodes[name] = _bbox(name, [float(v) for v in _NUM.findall(shape.get("d"))])
            else:
                shape = g.find(f"{NS}polygon")
                nodes[name] = _bbox(name, [float(v) for v in _NUM.findall(shape.get("points"))])
        elif cls == "edge":
            tail, _, head = name.partition("->")
            path = g.find(f"{NS}path")
            edges.append(Edge(tail, head, _bezier(path.get("d")) if path is not None else ()))
            labels += [text_box(t, f"label of {name}") for t in g.iter(f"{NS}text")]
    return Geometry(nodes, tuple(edges), tuple(labels))


def edges_through_boxes(geo: Geometry, margin: float = 1.0) -> list[str]:
    """Each edge that passes through a node box other than its own two ends."""
    out = []
    for e in geo.edges:
        for name, box in geo.nodes.items():
            if name in (e.tail, e.head):
                continue
            if any(box.contains(x, y, margin) for x, y in e.points):
                out.append(f"{e.tail}->{e.head} passes through {name}")
    return out


def overlapping_labels(geo: Geometry) -> list[str]:
    """Each pair of labels on top of each other, and each label on top of a node box."""
    out = []
    for i, a in enumerate(geo.labels):
        out += [f"{a.name} overlaps {b.name}" for b in geo.labels[i + 1:] if a.overlaps(b)]
        out += [f"{a.name} overlaps node {n}" for n, b in geo.nodes.items() if a.overlaps(b)]
    return out


def faults(svg: str) -> list[str]:
    geo = parse(svg)
    return edges_through_boxes(geo) + overlapping_labels(geo)
