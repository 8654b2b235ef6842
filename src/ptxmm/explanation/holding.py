"""A drawing for a condition whose target no execution reaches (issue 42: ``ptxmm graph`` and
the playground answered "nothing to draw" for a kernel whose ``forall`` holds, e.g.
latch-arrive-wait.cu and cg-warp-aggregated-inc.cu, and for a litmus test whose ``exists`` is
forbidden, e.g. liveness/spin-weak-flag.ptx).

``explain`` draws the execution of its target: for ``forall C`` that is ``not C``, for ``exists C``
and ``~exists C`` it is ``C``. When the target is forbidden, no allowed execution reaches it; when
moreover no *candidate* execution reaches it (the values are fixed by the program, not by the
model), there is no rejected candidate either, and so nothing to draw. A user still expects a
picture of what the program does: :func:`holding_graph` draws one allowed execution — one
satisfying ``C`` for ``forall C``, one not satisfying ``C`` otherwise (every allowed execution is
such an execution: the target is forbidden) — and its title says which outcome it is and that the
forall holds in every allowed execution (the ``~exists`` holds, the ``exists`` is reached by none).
The execution is the first outcome's witness that ``check`` enumerates, so which one is drawn
is the engine's choice among them. The caller has found the target
forbidden (``explain``: not allowed, and no verdict unknown): this module does not decide it.

Where explain cannot list a forbidden target's rejected candidates at all — their concrete
enumeration cannot leave a value the ISA leaves free, such as a ``%globaltimer`` read, to the
solver — :func:`explained` answers the solver's verdict instead (the target decided by one query,
or by the check the caller hands over), says why no candidate is listed, and draws one allowed
execution as above: ``ptxmm explain`` and the playground's Explain answered "not supported yet"
for atomic-ref-wait.cu. A caller's check (``checked``: the playground's worker keeps its last,
web/reuse.py) spares the queries it answered."""

from __future__ import annotations

from dataclasses import replace

from ..cat.parser import Model, load_model
from ..errors import PtxmmError, UnsupportedError
from ..ir.program import Condition, Not, Program
from .explain import forbidden_by, known_graph
from .graphdata import GraphData, graph_data


def holding_graph(prog: Program, model: str | Model = "ptx", unroll: int = 2,
                  decide: bool = False, checked=None) -> tuple[GraphData, str] | None:
    """One allowed execution of ``prog`` where its condition's target is forbidden (the caller
    knows, or with ``decide`` one more query asks): the drawing and the sentence that says what
    it shows; None without a condition, when the target is not forbidden (``decide``), or when
    no execution finishes within the bound. ``checked``: a check of ``prog`` under the same
    model and bound that the caller has (the playground's worker keeps its last, web/reuse.py):
    where it decided the condition, ``decide`` asks nothing; where it enumerated outcomes, its
    first one is drawn (:func:`_enumerated`) and no check runs at all."""
    from ..queries.checker import check

    cond = prog.condition
    if cond is None:
        return None
    m = load_model(model) if isinstance(model, str) else model
    if decide and not forbidden_by(checked, prog, m, unroll):
        target = Not(cond.expr) if cond.quantifier == "forall" else cond.expr
        asked = replace(prog, condition=Condition("exists", target, "exists (the condition's target)"))
        if check(asked, m, unroll=unroll, verdict_only=True, flags=False, properties=("condition",),
                 graph=known_graph(prog, m, unroll, checked)).holds is not False:
            return None
    # the target forbidden, every allowed execution is one to draw: the first one enumerated
    # (the enumeration, as `ptxmm check` runs it, also where a verdict query's witness leaves a
    # free value such as %globaltimer out of its outcome)
    res = _enumerated(prog, m, unroll, checked) or check(
        prog, m, unroll=unroll, flags=False, max_outcomes=1, properties=("condition",),
        graph=known_graph(prog, m, unroll, checked))
    if not res.outcomes:
        return None
    o = res.outcomes[0]
    said = " ".join((cond.text or f"{cond.quantifier} the condition").split())
    if cond.quantifier == "exists":
        note = f"{said} is reached by no allowed execution; drawn: one allowed execution, outcome {o.outcome}"
    else:
        note = f"{said} holds in every allowed execution; drawn: one of them, outcome {o.outcome}"
    return graph_data(res.graph, o.witness, title=f"{prog.name}: {note}"), note


# a check the caller hands over (``checked``) that enumerated the allowed outcomes gives the
# execution drawn for a holding condition (its first outcome's witness) instead of a check of
# its own; False: a check of its own always (the tests compare the two)
REUSE_OUTCOMES = True


def _enumerated(prog: Program, m: Model, unroll: int, checked):
    """``checked`` where it is a finished enumeration of ``prog``'s allowed outcomes under ``m``
    at ``unroll`` (an outcome's witness there is an allowed execution of the same event graph);
    else None. Its first outcome may be another than a check of its own would list first: any
    allowed execution is one to draw, and the drawing's title names the outcome."""
    if not REUSE_OUTCOMES or checked is None or not checked.enumerated or checked.status != "ok" \
            or not checked.outcomes or known_graph(prog, m, unroll, checked) is None:
        return None
    return checked


def condition_drawing(prog: Program, model: str | Model = "ptx", *, outcome: str | None = None,
                      unroll: int = 2, checked=None) -> tuple[GraphData, str | None]:
    """What ``ptxmm graph`` (and the playground's ``/api/graph``) draws for ``outcome`` (default:
    the condition's target): the explanation's execution; where it has none and the target is
    the condition's, one allowed execution and the note saying so (:func:`holding_graph`). Where
    explain's concrete enumeration of rejected candidates cannot run (a value the ISA leaves
    free, ``%globaltimer``: "not supported yet"), the solver decides the target and draws the
    same; else that error. A located error when there is nothing to draw. ``checked``: a check
    of ``prog`` under the same model and bound the caller has (the playground's, web/reuse.py):
    handed to explain (its graph and a verdict it decided not asked again) and to
    :func:`holding_graph`."""
    from .explain import explain

    m = load_model(model) if isinstance(model, str) else model
    try:
        x = explain(prog, m, outcome=outcome, unroll=unroll, checked=checked)
    except UnsupportedError:
        held = holding_graph(prog, m, unroll, decide=True, checked=checked) if outcome is None else None
        if held is None:
            raise
        return held
    if x.unknown:
        raise PtxmmError(x.unknown, None, "nothing to draw without an execution")
    if x.graph is not None:
        return x.graph, None
    held = holding_graph(prog, m, unroll, checked=checked) if outcome is None and not x.allowed else None
    if held is None:
        raise PtxmmError("no candidate execution produces this outcome", None,
                         "the explanation lists why; nothing to draw")
    return held


def explained(prog: Program, model: str | Model = "ptx", *, outcome: str | None = None, unroll: int = 2,
              checked=None, **options):
    """``explain`` (``options``: its fix options), and where it cannot list the rejected
    candidates of the condition's forbidden target — a value the ISA leaves free, such as a
    ``%globaltimer`` read, cannot be enumerated concretely ("not supported yet": the explain of
    atomic-ref-wait.cu, on the command line and in the page) — the solver's verdict instead:
    ``(explanation, why)``, the explanation forbidden with no candidate listed and one allowed
    execution drawn (:func:`holding_graph`), ``why`` the reason none is listed (None when explain
    answered itself). A named outcome, or a target the solver finds reachable: that error."""
    from .explain import Explanation, explain
    from .targets import target_of

    m = load_model(model) if isinstance(model, str) else model
    try:
        return explain(prog, m, outcome=outcome, unroll=unroll, checked=checked, **options), None
    except UnsupportedError as e:
        held = holding_graph(prog, m, unroll, decide=True, checked=checked) if outcome is None else None
        if held is None:
            raise
        t = target_of(prog, None)
        return Explanation(prog.name, prog.file, m.name, t.text, False, True, graph=held[0],
                           program=prog), e.message


def unlisted_text(x, why: str) -> str:
    """The text of :func:`explained`'s answer where the candidates are not listed."""
    return "\n".join([f"{x.name}  ({x.file})  model {x.model}", f"outcome  {x.outcome}",
                      "verdict  FORBIDDEN — no allowed execution produces it (decided by the solver)",
                      f"the rejected candidate executions are not listed: {why}",
                      f"the execution drawn (ptxmm graph): {x.graph.title}" if x.graph is not None
                      else ""]).rstrip()


__all__ = ["condition_drawing", "explained", "holding_graph", "unlisted_text"]
