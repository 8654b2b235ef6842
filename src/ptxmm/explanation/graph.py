"""Execution graphs drawn: one :class:`~.graphdata.GraphData` (threads in program order, CTA/cluster
placement, rf / co / fr and the derived relations of an explanation, the violating cycle
highlighted) as

 - DOT source (:func:`dot_source`, ``-o out.dot``): each thread a cluster (inside its CTA's and its
   cluster's when they hold several), every instruction's full text, a kernel's CUDA line and
   text above its PTX, a read's value, a legend of the edge kinds in the graph's label;
 - SVG (:func:`svg`): that DOT laid out by Graphviz's ``dot`` when it is installed — the playground
   lays the same DOT out in the browser with a WebAssembly build of Graphviz (web/static/graphviz)
   — else ptxmm's own grid (:mod:`.gridsvg`), with :data:`GRID_NOTE` saying so; PNG/PDF and any
   other format of ``dot`` through it (without it: a :class:`PtxmmError` with a hint);
 - ASCII for the terminal (:func:`ascii_art`).

Edges between threads are laid out as ``constraint=false`` (program order alone ranks the nodes,
so each thread reads top to bottom); their labels are ``xlabel``s, which ``dot`` places after the
layout where they cover no node and no other label, as long as there is room. Where there is
not (a dense graph: some Hopper examples have 40 events and 80 edges), dot still places them
(``forcelabels``), on top of something: :func:`laid_out` then lays the graph out again with more
room between nodes and ranks (:data:`SPACINGS`) until labelfit.py finds every label clear
(tests/explanation/test_graph_geometry.py checks the tutorial's, the docs', kernel and dense
Hopper drawings; the CLI's .svg, .dot and other formats are the laid-out one; the playground
lays the DOT out again at the same spacings in the browser, with labelfit's check ported to
app.js). Threads are not
forced into index order: dot puts two threads side by side when that keeps the edges between
them short, so that no edge runs along a third thread."""

from __future__ import annotations

import shutil
import subprocess

from ..errors import PtxmmError
from .graphdata import (
    COLORS,
    DERIVED,
    HIGHLIGHT,
    MISSING,
    Box,
    GEdge,
    GraphData,
    Node,
    graph_data,
    result_graph,
)
from .gridsvg import grid_svg
from .labelfit import overlaps

GRID_NOTE = ("note: Graphviz's `dot` is not installed: drawn with ptxmm's own grid layout "
             "(install graphviz for a cleaner one)")
DOT_TIMEOUT_S = 60.0
PAD = "\u00a0\u00a0"  # around an edge label: dot keeps the labels of parallel edges a space apart

MEANING = {"po": "program order", "rf": "reads from", "co": "coherence order",
           "fr": "from-read (read before a later write)"}


def dot_available() -> bool:
    return shutil.which("dot") is not None


# ----- DOT ---------------------------------------------------------------------------------------


def _q(s: str) -> str:
    """A DOT string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _html(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _node_label(n: Node) -> str:
    """A node's DOT label: the instruction's full text (and the value a read returns) over its
    line; a kernel's node leads with its CUDA line, the PTX under it smaller and grey."""
    if n.thread == "init":
        return _q(f"init {n.text}")
    text = n.text + (f" → {n.value}" if n.value is not None else "")
    if not n.cuda:
        return _q(text + (f"\nline {n.line}" if n.line else ""))
    ptx = text + (f"   ({n.where})" if n.where else "") + (f"   PTX line {n.line}" if n.line else "")
    return (f"<{_html(n.cuda)}<br/><font point-size=\"8\" color=\"#555555\">{_html(ptx)}</font>>")


def _legend(g: GraphData, labels: bool = True) -> str:
    """The graph's label: its title and one coloured entry per edge kind it shows (HTML-like);
    without ``labels`` (the edges drawn unlabelled) a line saying that the colours name them."""
    kinds: dict[str, str] = {}
    for e in g.edges:
        kinds.setdefault(e.rel, e.color)
    rows = [f'<tr><td colspan="3"><b>{_html(g.title)}</b></td></tr>']
    for rel, color in sorted(kinds.items(), key=lambda kv: (list(MEANING).index(kv[0])
                                                            if kv[0] in MEANING else 9, kv[0])):
        meaning = MEANING.get(rel) or ("an order the outcome lacks: the fix adds it"
                                       if rel.startswith("missing") else "a relation of the model")
        style = "- - -" if rel.startswith("missing") else "———"
        # sample, name and meaning in cells of their own: a browser's font measures the dashes
        # wider than Graphviz's metrics, and one cell for both ran the name into the meaning
        rows.append(f'<tr><td align="right"><font color="{color}">{style}</font></td>'
                    f'<td align="left"><font color="{color}">{_html(rel)}</font></td>'
                    f'<td align="left">{_html(meaning)}</td></tr>')
    if any(e.highlight for e in g.edges):
        rows.append('<tr><td></td><td align="left"><b>thick</b></td><td align="left">the cycle that '
                    'breaks the axiom</td></tr>')
    if not labels:
        rows.append('<tr><td colspan="3">too dense to place every edge label clear of the boxes: the '
                    'edges are unlabelled, their colours name them</td></tr>')
    return "<<table border=\"0\" cellspacing=\"2\" cellpadding=\"2\">" + "".join(rows) + "</table>>"


# (nodesep, ranksep) in inches, tried in this order until dot places every edge label clear of the
# others and of the boxes (labelfit.py): the first suits the sparse drawings (the tutorial's), the
# others give a dense one (a Hopper pipeline's 40 events and 80 edges) the room its labels need;
# the last two are the first where the playground's Graphviz (16.1, WebAssembly: it places xlabels
# otherwise than the 2.43 of Debian's dot) finds room for every label of the three densest Hopper
# drawings (pipeline-tma-async-no-consumer-fence, pipeline-tma-async-no-empty-wait, and its kernel)
SPACINGS = ((0.6, 0.45), (0.9, 0.6), (0.6, 0.6), (0.8, 0.45), (1.0, 0.5), (1.2, 0.7), (1.8, 0.9), (1.8, 1.2))


def dot_source(g: GraphData, spacing: tuple[float, float] = SPACINGS[0], labels: bool = True) -> str:
    """The drawing as Graphviz DOT (the same text the CLI lays out and the playground lays out in
    the browser); ``spacing``: (nodesep, ranksep), see :data:`SPACINGS` and :func:`laid_out`;
    ``labels``: whether the edges between threads carry their relation's name (without: the
    colours and the legend name them, see :func:`laid_out`)."""
    by_col: dict[int, list[Node]] = {}
    for n in g.nodes:
        by_col.setdefault(n.col, []).append(n)
    out = [f"digraph {_q(g.title)} {{",
           f'  graph [rankdir=TB newrank=true nodesep={spacing[0]} ranksep={spacing[1]} fontname="Helvetica" '
           'fontsize=11 labelloc=b forcelabels=true outputorder=edgesfirst pad=0.2]',
           '  node [shape=box style="rounded,filled" fillcolor="#f7f7f7" fontname="Courier" '
           'fontsize=10 margin="0.12,0.06"]',
           '  edge [fontname="Helvetica" fontsize=9 arrowsize=0.7]',
           f"  label={_legend(g, labels)}"]
    ctas = [b for b in g.boxes if b.depth == 0]
    clusters = [b for b in g.boxes if b.depth == 1]
    cta_of = {c: b for b in ctas for c in b.cols}
    placed: set[int] = set()

    def thread(col: int, indent: str) -> list[str]:
        placed.add(col)
        box = cta_of.get(col)
        label = g.columns[col] + (f"  ({box.label})" if box is not None and len(box.cols) == 1 else "")
        lines = [f"{indent}subgraph cluster_t{col} {{",
                 f'{indent}  label={_q(label)} style="rounded,dashed" color="#888888" fontsize=11']
        lines += [f"{indent}  e{n.eid} [label={_node_label(n)}]" for n in by_col.get(col, [])]
        return lines + [f"{indent}}}"]

    def cta(box: Box, indent: str) -> list[str]:
        if len(box.cols) == 1:
            return thread(box.cols[0], indent)
        lines = [f"{indent}subgraph cluster_{box.label.replace(' ', '_')} {{",
                 f'{indent}  label={_q(box.label)} style=dashed color="#aaaaaa" fontsize=11']
        for c in box.cols:
            lines += thread(c, indent + "  ")
        return lines + [f"{indent}}}"]

    tops: list[tuple[int, list[str]]] = []  # (first column, lines): declared left to right
    for k, cl in enumerate(sorted(clusters, key=lambda b: min(b.cols))):
        lines = [f"  subgraph cluster_cl{k} {{", f'    label={_q(cl.label)} style=dotted fontsize=11']
        for b in sorted({id(cta_of[c]): cta_of[c] for c in cl.cols if c in cta_of}.values(),
                        key=lambda b: min(b.cols)):
            lines += cta(b, "    ")
        tops.append((min(cl.cols), lines + ["  }"]))
    for b in sorted(ctas, key=lambda b: min(b.cols)):
        if b.cols[0] not in placed:
            tops.append((min(b.cols), cta(b, "  ")))
    for col in range(len(g.columns)):
        if col not in placed and col in by_col:
            tops.append((col, thread(col, "  ")))
    for _, lines in sorted(tops, key=lambda t: t[0]):
        out += lines
    # every thread starts on the top rank; the invisible chain asks for thread order left to right
    # (dot may still swap two threads to uncross the edges between them)
    firsts = [by_col[c][0] for c in range(len(g.columns)) if c in by_col]
    if len(firsts) > 1:
        out.append("  { rank=same; " + " ".join(f"e{n.eid}" for n in firsts) + " }")
        out.append("  " + " -> ".join(f"e{n.eid}" for n in firsts) + " [style=invis]")
    out += [_dot_edge(e, labels) for e in g.edges]
    return "\n".join(out + ["}"]) + "\n"


def _dot_edge(e: GEdge, labels: bool = True) -> str:
    attrs = [f'color="{e.color}"']
    if e.rel == "po":
        attrs.append("weight=10")
    else:
        attrs += ["constraint=false"]
        if labels:
            attrs += [f"xlabel={_q(PAD + e.rel + PAD)}", f'fontcolor="{e.color}"']
    if e.highlight:
        attrs.append("penwidth=2.6")
    if e.rel.startswith("missing"):
        attrs.append("style=dashed")
    return f"  e{e.src} -> e{e.dst} [{' '.join(attrs)}]"


# ----- layout -----------------------------------------------------------------------------------


def dot_layout(source: str, fmt: str = "svg") -> bytes:
    """``source`` laid out by Graphviz's ``dot`` in ``fmt`` (a PtxmmError when it cannot)."""
    if not dot_available():
        raise PtxmmError(f"writing .{fmt} needs Graphviz's `dot` program, which is not on PATH",
                         None, "install Graphviz (apt install graphviz), or write .svg or .dot")
    try:
        r = subprocess.run(["dot", f"-T{fmt}"], input=source.encode(), capture_output=True,
                           timeout=DOT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PtxmmError(f"dot could not lay the graph out: {e}", None, "write .dot and lay it out "
                         "yourself") from None
    if r.returncode != 0:
        msg = r.stderr.decode(errors="replace").strip().splitlines()
        raise PtxmmError(f"dot could not write .{fmt}: {msg[-1] if msg else r.returncode}", None,
                         "write .svg or .dot")
    return r.stdout


def svg(g: GraphData | None, grid: bool | None = None) -> str:
    """The graph as a standalone SVG document: laid out by Graphviz's ``dot`` when it is on PATH,
    else (or with ``grid=True``) by ptxmm's own grid (:func:`uses_grid` tells which)."""
    if g is None:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'
    if grid or (grid is None and not dot_available()):
        return grid_svg(g)
    text = laid_out(g)[1]
    return text[text.index("<svg"):].rstrip("\n")  # without the XML prolog: embeddable as it is


def laid_out(g: GraphData) -> tuple[str, str]:
    """The DOT source and the SVG dot lays it out as, at the first of :data:`SPACINGS` that
    places every edge label clear of the others and of the boxes (labelfit.py); where none does
    (an allowed execution of a whole kernel: 60 events, a dozen reads of the initial values
    leaving one box), the edges unlabelled at the first spacing — their colours name them, and
    the legend says so — rather than a label on a box, which reads as something it is not."""
    for spacing in SPACINGS:
        source = dot_source(g, spacing)
        text = dot_layout(source).decode()
        if overlaps(text) == 0:
            return source, text
    source = dot_source(g, SPACINGS[0], labels=False)
    return source, dot_layout(source).decode()


def uses_grid() -> bool:
    """Whether :func:`svg` falls back to the grid layout here (``dot`` is not installed)."""
    return not dot_available()


def render_file(g: GraphData, path: str) -> str:
    """Write ``path`` (.svg, .dot/.gv, or any format of the ``dot`` binary, e.g. .png)."""
    from pathlib import Path

    p = Path(path)
    fmt = p.suffix.lstrip(".").lower()
    if fmt == "svg":
        p.write_text(svg(g) + "\n")
    elif fmt in ("dot", "gv"):
        p.write_text(laid_out(g)[0] if dot_available() else dot_source(g))
    else:
        p.write_bytes(dot_layout(laid_out(g)[0], fmt))
    return str(p)


# ----- ASCII -------------------------------------------------------------------------------------


def _cell(n: Node) -> str:
    return n.text if not n.cuda else f"{n.text}  [{n.cuda.split(' ', 1)[0]}]"


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
    names = {n.eid: f"{n.thread} {_cell(n)}" for n in g.nodes}
    lines.append("")
    for e in g.edges:
        if e.rel == "po":
            continue
        mark = "  <== cycle" if e.highlight else ""
        lines.append(f"  {names[e.src]}  --{e.rel}-->  {names[e.dst]}{mark}")
    return "\n".join(lines)


__all__ = ["COLORS", "DERIVED", "GRID_NOTE", "HIGHLIGHT", "MISSING", "Box", "GEdge", "GraphData", "Node",
           "ascii_art", "dot_available", "dot_layout", "dot_source", "graph_data", "render_file",
           "result_graph", "svg", "uses_grid"]
