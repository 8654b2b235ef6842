"""``explain`` and ``graph`` of a check's findings (issue 25): each ``race``, ``assert-fails``,
``out-of-bounds`` and ``hang`` finding with its witness execution — every thread's executed
events in program order with the values its reads return and the writes they read from, the
CUDA lines of a kernel, how each thread ends (finishes, stops at a failing assert or an
out-of-bounds access, repeats a loop iteration forever, blocks at a barrier) — and the drawing of
that execution (:func:`finding_graph`).

A finding's witness is the execution the check's own query found (:mod:`ptxmm.queries.races`,
:func:`ptxmm.queries.sites.site_findings`, :func:`ptxmm.queries.hangs.find_hangs`): nothing here searches
again, it only shows the answer."""

from __future__ import annotations

from .._infra.records import record
from ..cat.parser import Model, load_model
from ..errors import SemanticError
from ..ir.values import evaluate
from ..queries.refs import event_ref
from ..semantics.events import EventGraph
from ..semantics.result import Execution, Finding

KINDS = ("race", "assert-fails", "out-of-bounds", "hang", "trap")


@record(eq=False)
class FindingExplanation:
    """One finding and its witness execution, in the program's own words."""

    name: str
    file: str
    model: str
    finding: Finding
    steps: tuple[str, ...]  # the witness, a line per executed event, then how each thread ends
    graph: object = None  # graph.GraphData of the witness

    @property
    def kind(self) -> str:
        return str(self.finding.kind)

    def to_json(self) -> dict:
        return {"name": self.name, "file": self.file, "model": self.model,
                "finding": self.finding.to_json(), "execution": list(self.steps)}

    def __str__(self) -> str:
        out = [f"{self.name}  ({self.file})  model {self.model}", f"finding  {self.finding}"]
        if self.finding.outcome is not None:
            out.append(f"outcome  {self.finding.outcome}")
        out.append("witness execution (each thread in program order):")
        out += [f"  {s}" for s in self.steps]
        return "\n".join(out)

    def _repr_svg_(self) -> str:
        from .graph import svg

        return svg(self.graph)


def explain_findings(prog, model: str | Model = "ptx", *, kind: str | None = None, unroll: int = 2,
                     progress: str = "fair", hangs: bool = True,
                     properties=None) -> tuple[FindingExplanation, ...]:
    """The findings of a check of ``prog`` (of ``kind`` only, if given), each with its witness
    execution; hangs are looked for too (under ``progress``) when ``kind`` is "hang", or None
    and ``hangs``. ``properties`` (api_args.PROPERTIES; None: races and sites, and hangs as
    ``hangs`` says): only the findings of those asked are looked for (the check asks nothing
    else, not the condition)."""
    return explain_findings_checked(prog, model, kind=kind, unroll=unroll, progress=progress, hangs=hangs,
                                    properties=properties)[0]


def explain_findings_checked(prog, model: str | Model = "ptx", *, kind: str | None = None, unroll: int = 2,
                             progress: str = "fair", hangs: bool = True,
                             properties=None) -> tuple[tuple[FindingExplanation, ...], object]:
    """:func:`explain_findings`, and the check it made for the races and sites (a CheckResult;
    None when it made none): ``ptxmm explain`` hands it to :func:`~.explain.explain` (``known``),
    which then neither builds the graph nor, where it shows the target forbidden, asks again."""
    from ..api_args import properties_arg
    from ..queries.checker import check

    res = None
    if kind is not None and kind not in KINDS:
        raise SemanticError(f"unknown finding kind `{kind}`", None, "kinds: " + ", ".join(KINDS))
    asked = properties_arg(properties)
    if asked is not None:
        hangs = "liveness" in asked
    m = load_model(model) if isinstance(model, str) else model
    out: list[FindingExplanation] = []
    checks = None if asked is None else asked & {"races", "sites"}
    if kind != "hang" and checks != frozenset():
        res = check(prog, m, unroll=unroll, liveness=False) if checks is None else \
            check(prog, m, unroll=unroll, properties=checks)
        for f in res.findings:
            if kind is None or str(f.kind) == kind:
                out.append(_explained(res.graph, m, f))
    if kind == "hang" or (kind is None and hangs):
        from ..queries.hangs import Progress, find_hangs, liveness_graph

        found = find_hangs(prog, m, unroll, progress)
        if found:
            eg = liveness_graph(prog, unroll, Progress.parse(progress))
            out += [FindingExplanation(prog.name, prog.file, m.name, h.finding, h.prefix,
                                       _graph(eg, h.finding)) for h in found]
    return tuple(out), res


def _explained(eg: EventGraph, m: Model, f: Finding) -> FindingExplanation:
    prog = eg.program
    return FindingExplanation(prog.name, prog.file, m.name, f, steps(eg, f.witness), _graph(eg, f))


def _graph(eg: EventGraph, f: Finding):
    """The witness drawn; a race's two accesses joined by a highlighted ``race`` edge."""
    from .explain import Edge
    from .graphdata import graph_data

    marks = ()
    evs = [e for e in f.events if e.eid >= 0]
    if str(f.kind) == "race" and len(evs) == 2:  # drawn as a derived edge (the first is a cycle's)
        marks = (_Chain(()), _Chain((Edge(evs[0], evs[1], "race"),)))
    title = f"{eg.program.name}: {f}"
    return graph_data(eg, f.witness, None, marks, (), title=title)


@record
class _Chain:
    chain: tuple


def steps(eg: EventGraph, exe: Execution) -> tuple[str, ...]:
    """Each thread's executed events in program order (with the CUDA line of a kernel), the
    values its reads return and the writes they read from; then how the thread ends."""
    from ..kernel.info import source_text

    src, vals = {r: w for w, r in exe.rf}, dict(exe.values)
    out = []
    for t, k in enumerate(exe.paths):
        p = eg.paths[t][k]
        name = eg.program.threads[t].name
        for e in p.events:
            if not _runs(eg, e, vals):
                continue
            ref = event_ref(eg, e)
            text = f"{name}: {ref.text}" + (f" (line {ref.line})" if ref.line else "")
            if e in src:
                text += f" reads {vals.get(e)} from {_who(eg, src[e])}"
            out.append(text)
        end = "finishes"
        stop = p.stop
        if stop is not None:
            ins = next((i for i in eg.program.threads[t].instrs
                        if i.pos is not None and i.pos.line == stop.line), None)
            where = (source_text(eg.program, ins.pos) if ins is not None else None) or f"line {stop.line}"
            end = f"stops: {stop.kind.ending} {where} (line {stop.line})"
        out.append(f"{name} {end}")
    return tuple(out)


def _runs(eg: EventGraph, e: int, vals: dict) -> bool:
    try:
        return bool(evaluate(eg.events[e].cond, vals))
    except (KeyError, TypeError):
        return True


def _who(eg: EventGraph, w: int) -> str:
    if eg.events[w].thread < 0:
        return "the initial value"
    r = event_ref(eg, w)
    return f"{r.thread}'s `{r.text}`" + (f" (line {r.line})" if r.line else "")


def finding_graph(prog, model: str | Model = "ptx", *, kind: str | None = None, unroll: int = 2,
                  progress: str = "fair", properties=None):
    """The drawing (graph.GraphData) of the first finding (of ``kind``; of the ``properties``
    asked) and its witness; a located error when the check finds none."""
    xs = explain_findings(prog, model, kind=kind, unroll=unroll, progress=progress, properties=properties)
    if not xs:
        raise SemanticError(f"{prog.name}: the check finds no {kind + ' ' if kind else ''}finding", None,
                            "nothing to draw: name an outcome with --outcome, or another --finding kind")
    return xs[0].graph


__all__ = ["FindingExplanation", "KINDS", "explain_findings", "explain_findings_checked", "finding_graph",
           "steps"]
