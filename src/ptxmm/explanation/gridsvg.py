"""ptxmm's own grid layout of an execution graph, the fallback when Graphviz's ``dot`` is not
installed (:func:`ptxmm.explanation.graph.svg` says so): a column per thread, a row per
program-order position, edges as quadratic curves between the columns. It needs no binary, but
it routes an edge straight across the boxes between its ends and piles cross-thread labels up in
the gutter (issue 42) — which is why Graphviz lays the drawings out whenever it can."""

from __future__ import annotations

from xml.sax.saxutils import escape

from .graphdata import GEdge, GraphData, Node

COL_W, ROW_H, NODE_W, NODE_H, TOP, LEFT = 250, 74, 210, 34, 86, 30


def _xy(n: Node) -> tuple[float, float]:
    return LEFT + 20 + n.col * COL_W + NODE_W / 2, TOP + 30 + n.row * ROW_H + NODE_H / 2


def grid_svg(g: GraphData | None) -> str:
    """The graph as a standalone SVG document laid out on a grid (deterministic; needs no binary)."""
    if g is None:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'
    ncols = max(len(g.columns), 1)
    nrows = max((n.row for n in g.nodes), default=0) + 1
    w = LEFT * 2 + ncols * COL_W
    h = TOP + 60 + nrows * ROW_H + 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif">']
    colors = sorted({e.color for e in g.edges})
    out.append("<defs>")
    for i, c in enumerate(colors):
        out.append(f'<marker id="a{i}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
                   f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
                   f'fill="{c}"/></marker>')
    out.append("</defs>")
    out.append(f'<rect width="{w}" height="{h}" fill="white"/>')
    out.append(f'<text x="{LEFT}" y="28" font-size="16" font-weight="bold">{escape(g.title)}</text>')
    for b in sorted(g.boxes, key=lambda b: -b.depth):
        x0 = LEFT + min(b.cols) * COL_W + 6 - 8 * b.depth
        x1 = LEFT + (max(b.cols) + 1) * COL_W - 6 + 8 * b.depth
        y0 = TOP - 8 - 12 * b.depth
        y1 = h - 40 + 12 * b.depth
        out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="8" fill="none" '
                   f'stroke="#888" stroke-dasharray="5,4"/>')
        out.append(f'<text x="{x0 + 6}" y="{y1 - 6}" font-size="11" fill="#666">{escape(b.label)}</text>')
    for i, name in enumerate(g.columns):
        out.append(f'<text x="{LEFT + 20 + i * COL_W + NODE_W / 2}" y="{TOP + 12}" font-size="13" '
                   f'font-weight="bold" text-anchor="middle">{escape(name)}</text>')
    pos = {n.eid: _xy(n) for n in g.nodes}
    for k, e in enumerate(g.edges):
        out.append(_svg_edge(e, pos, colors.index(e.color), k))
    for n in g.nodes:
        x, y = pos[n.eid]
        out.append(f'<rect x="{x - NODE_W / 2}" y="{y - NODE_H / 2}" width="{NODE_W}" height="{NODE_H}" '
                   f'rx="6" fill="#f7f7f7" stroke="#333"/>')
        # the full text: a long one is squeezed into the box (textLength), never cut (issue 42)
        fit = f' textLength="{NODE_W - 10}" lengthAdjust="spacingAndGlyphs"' if len(n.text) > 34 else ""
        out.append(f'<text x="{x}" y="{y - 2}" font-size="10.5" font-family="Courier, monospace" '
                   f'text-anchor="middle"{fit}>{escape(n.text)}</text>')
        under = n.cuda or (f"line {n.line}" if n.line else "")
        if under:
            fit = f' textLength="{NODE_W - 10}" lengthAdjust="spacingAndGlyphs"' if len(under) > 44 else ""
            out.append(f'<text x="{x}" y="{y + 11}" font-size="9" fill="#777" text-anchor="middle"{fit}>'
                       f'{escape(under)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _svg_edge(e: GEdge, pos, marker: int, k: int) -> str:
    (x1, y1), (x2, y2) = pos[e.src], pos[e.dst]
    width = 3 if e.highlight else 1.4
    dash = ' stroke-dasharray="6,4"' if e.rel.startswith("missing") else ""
    if abs(x1 - x2) < 1 and e.rel == "po":
        y1, y2 = (y1 + NODE_H / 2, y2 - NODE_H / 2) if y2 > y1 else (y1 - NODE_H / 2, y2 + NODE_H / 2)
        d = f"M{x1},{y1} L{x2},{y2}"
        lx, ly = x1 + 6, (y1 + y2) / 2
    else:
        if abs(x1 - x2) < 1:  # same column, not po: bow out to the side
            side = NODE_W / 2 + 18 + 10 * (k % 3)
            x1, x2 = x1 + NODE_W / 2, x2 + NODE_W / 2
            cx, cy = x1 + side, (y1 + y2) / 2
        else:
            sgn = 1 if x2 > x1 else -1
            x1, x2 = x1 + sgn * NODE_W / 2, x2 - sgn * NODE_W / 2
            bend = 18 + 12 * (k % 4)
            cx, cy = (x1 + x2) / 2, (y1 + y2) / 2 - bend
        d = f"M{x1},{y1} Q{cx},{cy} {x2},{y2}"
        lx, ly = (x1 + 2 * cx + x2) / 4, (y1 + 2 * cy + y2) / 4 - 3
    return (f'<path d="{d}" fill="none" stroke="{e.color}" stroke-width="{width}"{dash} '
            f'marker-end="url(#a{marker})"/>'
            f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="10" fill="{e.color}" '
            f'font-weight="{"bold" if e.highlight else "normal"}">{escape(e.rel)}</text>')
