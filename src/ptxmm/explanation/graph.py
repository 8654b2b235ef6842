"""Execution graphs: threads as columns in program order, CTA/cluster placement as boxes, rf / co
/ fr and the derived relations an explanation uses as labelled coloured edges, the violating
cycle highlighted.

Three renderings of one :class:`GraphData`:
 - DOT source, built with the ``graphviz`` package (``-o out.dot``), and PNG/PDF through it, which
   needs Graphviz's ``dot`` binary (its absence is a :class:`PtxmmError` with a hint);
 - SVG drawn by ptxmm itself (:func:`svg`): the layout is a grid — a column per thread, a row per
   program-order position — so no layout engine is needed, the output is the same on every
   machine (docs and tests rely on that), and Jupyter gets it through ``Explanation._repr_svg_``;
 - ASCII for the terminal (:func:`ascii_art`)."""

from __future__ import annotations

import shutil
from xml.sax.saxutils import escape

from .._infra.records import record
from ..errors import PtxmmError
from ..semantics.events import EventGraph
from ..semantics.result import Execution

COLORS = {"po": "#444444", "rf": "#d62728", "co": "#1f77b4", "fr": "#ff7f0e"}
DERIVED = ("#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
HIGHLIGHT = "#c00060"


@record
class Node:
    eid: int
    col: int
    row: int
    thread: str
    text: str
    line: int | None


@record
class GEdge:
    src: int
    dst: int
    rel: str
    color: str
    highlight: bool = False


@record
class Box:
    label: str
    cols: tuple[int, ...]
    depth: int  # 0: CTA, 1: cluster


@record
class GraphData:
    title: str
    columns: tuple[str, ...]
    nodes: tuple[Node, ...]
    edges: tuple[GEdge, ...]
    boxes: tuple[Box, ...]


def graph_data(eg: EventGraph, exe: Execution, c=None, witnesses=(), missing=(),
               title: str = "") -> GraphData:
    """The graph of one execution; ``witnesses``: AxiomWitness objects whose first chain is
    highlighted and whose derived edges are drawn; ``missing``: MissingOrder edges (dashed)."""
    from ..semantics.executions import executed

    prog = eg.program
    execd = executed(eg, exe)
    has_init = any(eg.events[w].thread < 0 for w, _ in exe.rf)
    cols = (["init"] if has_init else []) + [t.name for t in prog.threads]
    off = 1 if has_init else 0
    nodes = []
    rows: dict[int, int] = {}
    for e in eg.events:
        if e.eid not in execd or (e.thread < 0 and not any(w == e.eid for w, _ in exe.rf)):
            continue
        col = 0 if e.thread < 0 else e.thread + off
        row = rows.get(col, 0)
        rows[col] = row + 1
        line = e.instr.pos.line if e.instr is not None and e.instr.pos is not None else None
        nodes.append(Node(e.eid, col, row, "init" if e.thread < 0 else prog.threads[e.thread].name,
                          e.label.removeprefix("init ") if e.thread < 0 else e.label, line))
    shown = {n.eid for n in nodes}
    edges = _base_edges(eg, exe, shown)
    index = {(e.src, e.dst, e.rel): i for i, e in enumerate(edges)}
    for d in _derived_edges(witnesses, missing, shown):
        i = index.get((d.src, d.dst, d.rel))
        if i is None:
            index[(d.src, d.dst, d.rel)] = len(edges)
            edges.append(d)
        elif d.highlight:
            edges[i] = d
    return GraphData(title or prog.name, tuple(cols), tuple(nodes), tuple(edges), _boxes(eg, off))


def _base_edges(eg: EventGraph, exe: Execution, shown: set[int]) -> list[GEdge]:
    out = []
    by_thread: dict[int, list[int]] = {}
    for e in eg.events:
        if e.eid in shown and e.thread >= 0:
            by_thread.setdefault(e.thread, []).append(e.eid)
    for es in by_thread.values():
        out += [GEdge(a, b, "po", COLORS["po"]) for a, b in zip(es, es[1:])]
    out += [GEdge(w, r, "rf", COLORS["rf"]) for w, r in exe.rf if w in shown and r in shown]
    co = set(exe.co)
    out += [GEdge(a, b, "co", COLORS["co"]) for a, b in sorted(co)
            if a in shown and b in shown and eg.events[a].thread >= 0]
    for w, r in exe.rf:
        for a, b in sorted(co):
            if a == w and b in shown and r in shown and b != r:
                out.append(GEdge(r, b, "fr", COLORS["fr"]))
    return out


def _derived_edges(witnesses, missing, shown: set[int]) -> list[GEdge]:
    out = []
    colors: dict[str, str] = {}
    for k, w in enumerate(witnesses):
        for e in w.chain:
            if e.src.eid not in shown or e.dst.eid not in shown:
                continue
            col = COLORS.get(e.rel) or colors.setdefault(e.rel, DERIVED[len(colors) % len(DERIVED)])
            out.append(GEdge(e.src.eid, e.dst.eid, e.rel, col, highlight=k == 0))
    for m in missing:
        if m.missing is not None and m.missing.src.eid in shown and m.missing.dst.eid in shown:
            out.append(GEdge(m.missing.src.eid, m.missing.dst.eid, f"missing {m.missing.rel}",
                             "#999999"))
    return out


def _boxes(eg: EventGraph, off: int) -> tuple[Box, ...]:
    prog = eg.program
    ctas: dict = {}
    clusters: dict = {}
    for t in prog.threads:
        ctas.setdefault(t.placement.cta_key, []).append(t.index + off)
        if t.placement.cluster is not None:
            clusters.setdefault(t.placement.cluster_key, []).append(t.index + off)
    out = [Box(f"cta {k[-1]}", tuple(v), 0) for k, v in ctas.items()]
    out += [Box(f"cluster {k[1]}", tuple(v), 1) for k, v in clusters.items()]
    return tuple(out)


# ----- DOT (graphviz package) ----------------------------------------------------------------------


def dot_source(g: GraphData) -> str:
    import graphviz

    d = graphviz.Digraph(g.title, graph_attr={"rankdir": "TB", "label": g.title, "fontname": "Helvetica",
                                              "newrank": "true"},
                         node_attr={"shape": "box", "style": "rounded", "fontname": "Courier",
                                    "fontsize": "10"}, edge_attr={"fontname": "Helvetica", "fontsize": "9"})
    by_col: dict[int, list[Node]] = {}
    for n in g.nodes:
        by_col.setdefault(n.col, []).append(n)
    box_of = {c: b for b in g.boxes if b.depth == 0 for c in b.cols}
    done = set()
    for col in sorted(by_col):
        b = box_of.get(col)
        name = f"cluster_{b.label.replace(' ', '_')}" if b is not None else f"cluster_col{col}"
        if name in done:
            continue
        done.add(name)
        with d.subgraph(name=name) as s:
            s.attr(label=b.label if b is not None else g.columns[col], style="dashed")
            for c2 in (b.cols if b is not None else (col,)):
                for n in by_col.get(c2, []):
                    s.node(f"e{n.eid}", f"{n.thread}: {n.text}" + (f"  (l.{n.line})" if n.line else ""))
    for e in g.edges:
        attrs = {"label": e.rel, "color": e.color, "fontcolor": e.color}
        if e.rel == "po":
            attrs["weight"] = "10"
        else:
            attrs["constraint"] = "false"
        if e.highlight:
            attrs["penwidth"] = "2.5"
        if e.rel.startswith("missing"):
            attrs["style"] = "dashed"
        d.edge(f"e{e.src}", f"e{e.dst}", **attrs)
    return d.source


def render_file(g: GraphData, path: str) -> str:
    """Write ``path`` (.svg, .dot/.gv, or any format of the ``dot`` binary, e.g. .png)."""
    from pathlib import Path

    p = Path(path)
    fmt = p.suffix.lstrip(".").lower()
    if fmt == "svg":
        p.write_text(svg(g))
    elif fmt in ("dot", "gv"):
        p.write_text(dot_source(g))
    else:
        if shutil.which("dot") is None:
            raise PtxmmError(f"writing .{fmt} needs Graphviz's `dot` program, which is not on PATH",
                             None, "install Graphviz (apt install graphviz), or write .svg or .dot")
        import graphviz

        try:
            data = graphviz.Source(dot_source(g)).pipe(format=fmt)
        except Exception as e:  # the dot binary's own failure (unknown format, crash)
            raise PtxmmError(f"dot could not write .{fmt}: {e}", None, "write .svg or .dot") from None
        p.write_bytes(data)
    return str(p)


# ----- SVG (own grid layout) ------------------------------------------------------------------------

COL_W, ROW_H, NODE_W, NODE_H, TOP, LEFT = 250, 74, 210, 34, 86, 30


def _xy(n: Node) -> tuple[float, float]:
    return LEFT + 20 + n.col * COL_W + NODE_W / 2, TOP + 30 + n.row * ROW_H + NODE_H / 2


def svg(g: GraphData | None) -> str:
    """The graph as a standalone SVG document (deterministic; needs no binary)."""
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
        label = n.text if len(n.text) <= 34 else n.text[:33] + "…"
        out.append(f'<text x="{x}" y="{y - 2}" font-size="10.5" font-family="Courier, monospace" '
                   f'text-anchor="middle">{escape(label)}</text>')
        if n.line:
            out.append(f'<text x="{x}" y="{y + 11}" font-size="9" fill="#777" text-anchor="middle">'
                       f'line {n.line}</text>')
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


# ----- ASCII -------------------------------------------------------------------------------------


def ascii_art(g: GraphData) -> str:
    width = 38
    cols = len(g.columns)
    grid: dict[tuple[int, int], str] = {(n.col, n.row): n.text for n in g.nodes}
    nrows = max((n.row for n in g.nodes), default=-1) + 1
    lines = [g.title, "  ".join(c.ljust(width) for c in g.columns).rstrip(),
             "  ".join(("-" * len(c)).ljust(width) for c in g.columns).rstrip()]
    for r in range(nrows):
        cells = []
        for c in range(cols):
            t = grid.get((c, r), "")
            cells.append((t if len(t) <= width else t[:width - 1] + "…").ljust(width))
        lines.append("  ".join(cells).rstrip())
    names = {n.eid: f"{n.thread} {n.text}" for n in g.nodes}
    lines.append("")
    for e in g.edges:
        if e.rel == "po":
            continue
        mark = "  <== cycle" if e.highlight else ""
        lines.append(f"  {names[e.src]}  --{e.rel}-->  {names[e.dst]}{mark}")
    return "\n".join(lines)


def result_graph(res, index: int | None = None) -> GraphData | None:
    """The graph of a CheckResult's witness (the first outcome satisfying the condition, else the
    first outcome): base relations only."""
    if not res.outcomes:
        return None
    if index is None:
        index = next((i for i, o in enumerate(res.outcomes) if o.satisfies), 0)
    o = res.outcomes[index]
    return graph_data(res.graph, o.witness, title=f"{res.name}: {o.outcome}")
