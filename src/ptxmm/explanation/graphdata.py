"""What an execution graph shows, before any layout: threads in program order, CTA/cluster
placement, rf / co / fr and the derived relations an explanation uses as coloured edges, the
violating cycle highlighted. :mod:`.graph` lays it out (Graphviz's ``dot``, or the grid of
:mod:`.gridsvg` without it) and draws it as text.

A node carries the instruction's full text and its line; a kernel's node also the CUDA line it
came from (nvcc ``-lineinfo``'s ``.loc``: :class:`ptxmm.kernel.module.records.KernelPos.src`) with
that line's text when the ``.cu`` is at hand, since PTX registers mean little to the author of the
kernel (issue 42). A read shows the value it returned in the drawn execution."""

from __future__ import annotations

from .._infra.records import record
from ..kernel.info import source_text
from ..semantics.events import EventGraph, Kind
from ..semantics.result import Execution

COLORS = {"po": "#444444", "rf": "#d62728", "co": "#1f77b4", "fr": "#ff7f0e"}
DERIVED = ("#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
HIGHLIGHT = "#c00060"
MISSING = "#999999"


@record
class Node:
    eid: int
    col: int
    row: int
    thread: str
    text: str
    line: int | None
    cuda: str | None = None  # a kernel's CUDA line: "mp.cu:13 data[0] = 42;" (the text when at hand)
    value: int | None = None  # a read: the value it returned in this execution
    where: str | None = None  # a kernel's access: the element it touches ("data[0]")


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
    vals = dict(exe.values)
    nodes = []
    rows: dict[int, int] = {}
    for e in eg.events:
        if e.eid not in execd or (e.thread < 0 and not any(w == e.eid for w, _ in exe.rf)):
            continue
        col = 0 if e.thread < 0 else e.thread + off
        row = rows.get(col, 0)
        rows[col] = row + 1
        pos = e.instr.pos if e.instr is not None else None
        cuda = source_text(prog, pos) if pos is not None else None
        nodes.append(Node(e.eid, col, row, "init" if e.thread < 0 else prog.threads[e.thread].name,
                          e.label.removeprefix("init ") if e.thread < 0 else e.label,
                          pos.line if pos is not None else None, cuda,
                          vals.get(e.eid) if e.kind == Kind.R else None,
                          e.vloc if cuda is not None else None))
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
            out.append(GEdge(m.missing.src.eid, m.missing.dst.eid, f"missing {m.missing.rel}", MISSING))
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


def result_graph(res, index: int | None = None) -> GraphData | None:
    """The graph of a CheckResult's witness (the first outcome satisfying the condition, else the
    first outcome): base relations only."""
    if not res.outcomes:
        return None
    if index is None:
        index = next((i for i, o in enumerate(res.outcomes) if o.satisfies), 0)
    o = res.outcomes[index]
    return graph_data(res.graph, o.witness, title=f"{res.name}: {o.outcome}")
