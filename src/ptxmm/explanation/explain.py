"""``explain``: why an outcome is forbidden or allowed, in the model's own terms.

Forbidden outcome: every candidate execution producing it (paths, rf, partial co, fence.sc
order, final writes — as the brute-force engine builds them, but without filtering by the model)
is evaluated with the concrete relation algebra; candidates that fail the same set of axioms form
a group, and for one execution of each group every violated axiom gets its shortest witness (a
cycle, a reflexive edge or a non-empty pair) written as a chain of instructions and named edges
(:mod:`ptxmm.explanation.evaluate`). Allowed outcome: the Z3 engine's witness execution, and, when the
test's condition marks the outcome as the bug, the ordering that is missing: the cheapest
single strengthening that forbids it (:mod:`ptxmm.explanation.fix`) is applied to the same execution, and the
edge of its violation that the original execution lacks is unfolded into what does not hold.

The missing ordering needs the cheapest fix alone: its search stops past the cost of the first
fix found (fix.CHEAPEST_STOP). ``ptxmm explain`` of a kernel hands the check it made for the
findings to :func:`explain` (``checked``): its graph is not built again (:data:`REUSE_CHECK`), nor
its verdict asked again where the check shows the target forbidden (:data:`REUSE_VERDICT`).

The API returns frozen dataclasses (:class:`Explanation`); :func:`render_text` prints them."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from .._infra.records import record
from ..api_args import explain_args
from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model, load_model
from ..ir.program import And, Cmp, Not, Program
from ..queries.refs import EventRef, event_ref, where
from ..semantics.builder import build
from ..semantics.events import EventGraph
from ..semantics.executions import Candidate, ExecutionSpace, concrete_env
from ..semantics.outcomes import observables, outcome_of, satisfies
from ..semantics.result import Execution
from ..semantics.vocab import Candidates, base_env, candidates
from .evaluate import Concrete, Step, text_of
from .targets import Target, parse_outcome, target_of, validate, with_target

MAX_CANDIDATES = 20000  # candidate executions examined for a forbidden outcome
TIME_BUDGET_S = 0.5


# ----- data ----------------------------------------------------------------------------------


@record
class Edge:
    """``src —rel→ dst``; ``via``: the derived relations unfolded to reach it (outermost first)."""

    src: EventRef
    dst: EventRef
    rel: str
    via: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"src": self.src.to_json(), "dst": self.dst.to_json(), "rel": self.rel,
                "via": list(self.via)}


@record
class Unfolding:
    """A derived edge of a chain one level down: its definition, the chain through it, words."""

    edge: Edge
    definition: str
    chain: tuple[Edge, ...]
    words: str

    def to_json(self) -> dict:
        return {"edge": self.edge.to_json(), "definition": self.definition,
                "chain": [e.to_json() for e in self.chain], "words": self.words}


@record
class AxiomWitness:
    axiom: str
    check: str  # acyclic irreflexive empty
    expression: str
    kind: str  # cycle reflexive pair element
    chain: tuple[Edge, ...]
    unfoldings: tuple[Unfolding, ...] = ()
    doc: str = ""

    def to_json(self) -> dict:
        return {"axiom": self.axiom, "check": self.check, "expression": self.expression,
                "kind": self.kind, "chain": [e.to_json() for e in self.chain],
                "unfoldings": [u.to_json() for u in self.unfoldings], "doc": self.doc}


@record
class Race:
    flag: str
    a: EventRef
    b: EventRef
    where: str = ""  # the location both accesses touch (findings.where)

    def to_json(self) -> dict:
        return {"flag": self.flag, "a": self.a.to_json(), "b": self.b.to_json()} | (
            {"location": self.where} if self.where else {})


@record
class ExecutionView:
    """A candidate execution: the raw Execution and its rf / co edges as instructions."""

    execution: Execution
    rf: tuple[tuple[EventRef, EventRef, int], ...]  # (write, read, value)
    co: tuple[tuple[EventRef, EventRef], ...]

    def to_json(self) -> dict:
        return {"rf": [{"write": w.to_json(), "read": r.to_json(), "value": v} for w, r, v in self.rf],
                "co": [[a.to_json(), b.to_json()] for a, b in self.co],
                "paths": list(self.execution.paths), "scorder": list(self.execution.scorder)}


@record
class FailureGroup:
    """Candidate executions producing the outcome that fail exactly these axioms."""

    axioms: tuple[str, ...]
    count: int
    example: ExecutionView
    witnesses: tuple[AxiomWitness, ...]

    def to_json(self) -> dict:
        return {"axioms": list(self.axioms), "count": self.count, "example": self.example.to_json(),
                "witnesses": [w.to_json() for w in self.witnesses]}


@record
class MissingOrder:
    """What the bad outcome's execution lacks: ``wanted`` (a pair the fix orders, in relation
    ``relation``), the edge that does not hold, and why, in words."""

    wanted: tuple[EventRef, EventRef] | None
    relation: str
    missing: Edge | None
    words: str
    fix: str = ""

    def to_json(self) -> dict:
        return {"wanted": None if self.wanted is None else [x.to_json() for x in self.wanted],
                "relation": self.relation, "missing": None if self.missing is None else
                self.missing.to_json(), "words": self.words, "fix": self.fix}


@record(eq=False)
class Explanation:
    name: str
    file: str
    model: str
    outcome: str  # the target, as text
    allowed: bool
    bad: bool | None  # whether the test's condition marks the outcome as the bug
    groups: tuple[FailureGroup, ...] = ()
    candidates: int = 0
    bound_hit: bool = False
    witness: ExecutionView | None = None
    missing: tuple[MissingOrder, ...] = ()
    races: tuple[Race, ...] = ()
    fixes: object = None  # fix.FixReport
    time_s: float = 0.0
    graph: object = None  # explain_graph data (GraphData)
    unknown: str | None = None  # why there is no verdict (as check says: no execution finishes)
    program: object = None  # the Program explained: the fixes said in its own words (advice.py)

    def to_json(self) -> dict:
        return {"name": self.name, "file": self.file, "model": self.model, "outcome": self.outcome,
                "verdict": "unknown" if self.unknown else "allowed" if self.allowed else "forbidden",
                **({"unknown": self.unknown} if self.unknown else {}), "bad": self.bad,
                "candidates": self.candidates, "bound_hit": self.bound_hit,
                "groups": [g.to_json() for g in self.groups],
                "witness": None if self.witness is None else self.witness.to_json(),
                "missing": [m.to_json() for m in self.missing],
                "races": [r.to_json() for r in self.races],
                "fixes": None if self.fixes is None else _fixes_json(self),
                "time_s": round(self.time_s, 4)}

    def __str__(self) -> str:
        if self.unknown:  # no verdict (as check says): nothing to explain or fix
            return "\n".join([f"{self.name}  ({self.file})  model {self.model}",
                              f"outcome  {self.outcome}", f"verdict  UNKNOWN — {self.unknown}",
                              "nothing to explain or fix without a verdict (ptxmm check says the same)"])
        return render_text(self)

    def _repr_svg_(self) -> str:
        from .graph import svg

        return svg(self.graph)


# ----- events and executions as the user wrote them --------------------------------------------


def view(eg: EventGraph, exe: Execution) -> ExecutionView:
    vals = dict(exe.values)
    return ExecutionView(exe, tuple((event_ref(eg, w), event_ref(eg, r), vals.get(r, 0))
                                    for w, r in exe.rf),
                         tuple((event_ref(eg, a), event_ref(eg, b)) for a, b in exe.co
                               if eg.events[a].thread >= 0))


def _edges(eg: EventGraph, steps: list[Step]) -> tuple[Edge, ...]:
    return tuple(Edge(event_ref(eg, s.src), event_ref(eg, s.dst), s.rel, s.via) for s in steps)


# ----- candidate executions --------------------------------------------------------------------


class _OutOfTime(Exception):
    pass


def _domain(prog: Program, t: Target) -> list[int]:
    vals = {0, 1} | {c.rhs for c in _cmps(t.expr) if isinstance(c.rhs, int)}
    return sorted(v for v in vals if v >= 0)


def _cmps(e) -> list[Cmp]:
    if isinstance(e, Cmp):
        return [e]
    if isinstance(e, (And,)):
        return [c for a in e.args for c in _cmps(a)]
    if isinstance(e, Not):
        return _cmps(e.arg)
    return [c for a in getattr(e, "args", ()) for c in _cmps(a)]


class _Search:
    """Candidate executions of a program producing the target, each judged by the model."""

    def __init__(self, prog: Program, eg: EventGraph, model: Model, t: Target):
        self.prog, self.eg, self.model, self.t = prog, eg, model, t
        self.cand: Candidates = candidates(eg)
        self.obs = observables(eg, "condition")
        self.tprog = with_target(prog, t)
        self.fin_locs = sorted({o.loc for o in self.obs if o.loc is not None})
        self.examined = 0
        self.bound_hit = False
        self.deadline = float("inf")

    def tick(self) -> None:
        if time.perf_counter() > self.deadline:
            raise _OutOfTime

    def produces(self, exe: Execution) -> bool:
        return bool(satisfies(self.tprog, self.eg, outcome_of(self.eg, self.obs, exe), self.obs))

    def executions(self, deadline: float) -> Iterator[Candidate]:
        """The candidate executions producing the target (at most MAX_CANDIDATES, within the
        deadline; ``bound_hit`` says when either cut them)."""
        self.deadline = deadline
        space = ExecutionSpace(self.eg, self.cand, fin_locs=self.fin_locs, domain=_domain(self.prog, self.t),
                               tick=self.tick, keep=self.produces, limit=MAX_CANDIDATES)
        try:
            yield from space
        except _OutOfTime:
            self.bound_hit = True
        self.examined = space.examined
        self.bound_hit = self.bound_hit or space.bound_hit

    def violated(self, c: Candidate) -> tuple[str, ...]:
        res = interp(self.model, base_env(self.eg, c.choice(self.eg), self.cand), flags=False)
        return tuple(st.name for st, v in res.axioms if not ax.holds(st.check, v))


def concrete(eg: EventGraph, model: Model, exe: Execution, cand: Candidates | None = None) -> Concrete:
    """The model evaluated on one execution, every named relation kept."""
    return Concrete(model, concrete_env(eg, exe, cand or candidates(eg)))


# ----- witnesses in words ----------------------------------------------------------------------


def witnesses(eg: EventGraph, c: Concrete) -> tuple[AxiomWitness, ...]:
    out = []
    for i, st, v in c.violated():
        kind, steps = c.witness(i, st, v)
        out.append(AxiomWitness(st.name, st.check, text_of(st.expr), kind, _edges(eg, steps),
                                unfoldings(eg, c, steps), _axiom_doc(st)))
    return tuple(out)


def _axiom_doc(st) -> str:
    from .evaluate import comment_before

    return comment_before(st)


def unfoldings(eg: EventGraph, c: Concrete, steps: list[Step]) -> tuple[Unfolding, ...]:
    out = []
    seen = set()
    for s in steps:
        key = (s.src, s.dst, s.rel)
        if key in seen:
            continue
        seen.add(key)
        u = c.unfold(s)
        if u is None:
            continue
        definition, chain = u
        name = s.rel.removesuffix("^-1")
        words = c.doc(name, s.at)
        # a plain union of names unfolds to one of them: go one level further
        depth = 0
        while len(chain) == 1 and chain[0].rel != s.rel and depth < 2:
            inner = c.unfold(chain[0])
            if inner is None or not inner[1]:
                break
            extra = c.doc(chain[0].rel.removesuffix("^-1"), chain[0].at)
            definition = f"{definition}, {chain[0].rel} = {inner[0]}"
            words = f"{words} — {chain[0].rel}: {extra}" if words and extra else words or extra
            chain = inner[1]
            depth += 1
        out.append(Unfolding(Edge(event_ref(eg, s.src), event_ref(eg, s.dst), s.rel, s.via),
                             definition, _edges(eg, chain), _chain_words(chain, c, eg, words)))
    return tuple(out)


def _chain_words(chain: list[Step], c: Concrete, eg: EventGraph, head: str) -> str:
    parts = []
    for s in chain:
        w = c.doc(s.rel.removesuffix("^-1"), s.at)
        a, b = event_ref(eg, s.src).short(), event_ref(eg, s.dst).short()
        rel = f"{s.rel} ({w})" if w else s.rel
        parts.append(f"{a} is {rel} of itself" if s.src == s.dst else f"{a} —{rel}→ {b}")
    body = "; ".join(parts)
    return f"{head}: {body}" if head else body


def races_of(eg: EventGraph, c: Concrete) -> tuple[Race, ...]:
    out = []
    for _, st, v in c.flags:
        if ax.holds(st.check, v) == st.negated:
            continue
        from .evaluate import pairs_of

        seen = set()
        for a, b in pairs_of(v):
            if (b, a) in seen:
                continue
            seen.add((a, b))
            out.append(Race(st.name, event_ref(eg, a), event_ref(eg, b), where(eg, (a, b))))
    return tuple(out)


def races_in(prog: Program, model: str | Model, exe: Execution, unroll: int = 2) -> tuple[Race, ...]:
    """The pairs each raised flag (data-race) reports in one execution."""
    m = load_model(model) if isinstance(model, str) else model
    eg = build(prog, unroll=unroll)
    return races_of(eg, concrete(eg, m, exe))


# ----- explain ---------------------------------------------------------------------------------


FIX_BUDGET_S = 9.0  # seconds of a fix search, as the command line runs it (explain's fix_budget_s)
# A check of the program that decided its condition already (``explain(..., checked=...)``: the
# command line's explain of a kernel checks it for its findings first) answers the outcome's
# verdict when that verdict is "forbidden": then no verdict query is asked again (see
# :func:`forbidden_by`). An allowed verdict is always asked again: its witness is the one-query
# witness that explain draws, not the first enumerated outcome's.
REUSE_VERDICT = True


def forbidden_by(checked, prog: Program, m: Model, unroll: int) -> bool:
    """Whether ``checked`` (a check of ``prog`` under ``m`` at ``unroll``, or None) decided that
    no allowed execution satisfies the target of ``prog``'s own condition (:func:`target_of` with
    no outcome): the condition itself for ``exists`` and ``~exists``, its negation for ``forall``.
    That target is unreachable exactly when an ``exists`` condition fails, and when a ``~exists``
    or ``forall`` condition holds (herd's verdicts, :func:`ptxmm.semantics.outcomes.verdict`).
    Only a finished check counts (status "ok", a verdict) of the same threads, locations,
    condition, bound and model (name and file): anything else is asked again."""
    cond = prog.condition
    if not REUSE_VERDICT or checked is None or cond is None or checked.holds is None \
            or checked.status != "ok" or checked.unroll != unroll \
            or (checked.model, checked.model_path) != (m.name, m.path):
        return False
    p = checked.program
    if p is not prog and (p.condition != cond or p.threads != prog.threads or p.locations != prog.locations):
        return False
    return checked.holds is (cond.quantifier != "exists")


def explain(prog: Program, model: str | Model = "ptx", *, outcome: str | None = None,
            unroll: int = 2, fix: bool = False, fix_bound: int = 400,
            fix_budget_s: float | None = None, checked=None) -> Explanation:
    """Why ``outcome`` (default: the test's condition, or its negation for ``forall``) is
    forbidden or allowed under ``model``; with ``fix``, the smallest strengthenings forbidding it.
    ``fix_budget_s``: about how many seconds the fix search may take (None: 9, the command
    line's; the playground gives what is left of a request's time limit, so that its answer
    arrives with the fixes found so far, the report saying the budget was hit). ``checked``: a
    :class:`~ptxmm.semantics.result.CheckResult` of ``prog`` under the same model and bound that
    the caller has already (``ptxmm explain`` of a kernel checks it for its findings,
    :func:`~.findings.findings_checked`): its event graph is used (:data:`REUSE_CHECK`), and its
    verdict spares the verdict query where it says "forbidden" (:data:`REUSE_VERDICT`)."""
    prog, model = explain_args(**locals())  # typed errors in the CLI's words; a path is loaded
    from ..queries.checker import check

    t0 = time.perf_counter()
    m = load_model(model) if isinstance(model, str) else model
    t = target_of(prog, outcome)
    known = t.default and forbidden_by(checked, prog, m, unroll)
    eg = known_graph(prog, m, unroll, checked) or build(prog, unroll=unroll)
    validate(prog, eg, t)
    if known:
        res = None
        allowed = False
    else:
        res = check(with_target(prog, t), m, unroll=unroll, verdict_only=True, flags=False, graph=eg,
                    properties=("condition",))  # the outcome's verdict only (no hangs of a kernel)
        if res.holds is None:  # no execution finishes within the bound: unknown, as check says
            return Explanation(prog.name, prog.file, m.name, t.text, False, None,
                               time_s=time.perf_counter() - t0, unknown=res.status_text)
        allowed = bool(res.holds)
    bad = True if t.default else _is_bad(prog, eg, res) if allowed else None
    fixes = None
    if fix or (allowed and bad):
        from .fix import search
        from .fixjudge import Judge

        # the missing ordering of every explanation comes from a search bounded by its number of
        # checks only: the same answer on a fast machine and a loaded one (docs are generated)
        judge = Judge(prog, m, t, unroll)  # one for both searches: witnesses and verdicts kept
        if t.default and len(judge.eg.events) == len(eg.events):  # the same graph (registers observed)
            judge.known(not allowed, res.outcomes[0].witness if allowed and res.outcomes else None)
        kernel = fix and prog.format == "kernel"
        found, rank = _kernel_findings(prog, m, unroll) if kernel else ((), None)
        total = FIX_BUDGET_S if fix_budget_s is None else fix_budget_s
        fixes = search(prog, m, t, unroll=unroll, bound=fix_bound if fix else 60,
                       max_size=None if fix else 1, budget_s=(min(3.0, total / 3) if kernel else total)
                       if fix else None, judge=judge, rank=rank, cheapest=not fix)
        if kernel and not fixes.solutions and found:  # the findings' own fixes (fixfind.py)
            from .fixfind import search as finding_search

            left = max(min(4.0, total / 2), total - (time.perf_counter() - t0))
            fixes = finding_search(prog, m, unroll=unroll, budget_s=left, bound=fix_bound,
                                   findings=found) or fixes
        if not fix and not fixes.solutions and not fixes.already:
            # no single change forbids it (e.g. both sides weak): the missing ordering is what
            # the cheapest pair of changes adds
            fixes = search(prog, m, t, unroll=unroll, bound=120, max_size=2, budget_s=None, judge=judge,
                           cheapest=True)
    if allowed:
        exe = res.outcomes[0].witness
        c = concrete(eg, m, exe)
        missing = _missing(prog, eg, m, exe, fixes, unroll) if bad else ()
        from .graphdata import graph_data

        gd = graph_data(eg, exe, c, [], missing)
        return Explanation(prog.name, prog.file, m.name, t.text, True, bad, witness=view(eg, exe),
                           missing=missing, races=races_of(eg, c),
                           fixes=fixes if fix else None, time_s=time.perf_counter() - t0, graph=gd,
                           program=prog)
    groups, n, hit, gd = _forbidden(prog, eg, m, t)
    return Explanation(prog.name, prog.file, m.name, t.text, False, bad, groups, n, hit,
                       fixes=fixes, time_s=time.perf_counter() - t0, graph=gd, program=prog)


# ``explain(..., checked=check)`` takes the check's event graph instead of building it again (its
# verdict: forbidden_by, REUSE_VERDICT); False: every explain builds its own (the tests compare the two)
REUSE_CHECK = True


def known_graph(prog: Program, m: Model, unroll: int, known) -> EventGraph | None:
    """The event graph of ``known`` (a CheckResult) when it is ``prog``'s under ``m`` at
    ``unroll`` (the builder is deterministic: the same program builds the same graph)."""
    if not REUSE_CHECK or known is None or known.graph is None:
        return None
    same = known.model == m.name and known.unroll == unroll and known.graph.unroll == unroll and \
        known.graph.program is prog
    return known.graph if same else None



def _kernel_findings(prog: Program, m: Model, unroll: int):
    """A kernel's findings (sites, else races, else hangs) and the rank of a change by them:
    the fix search tries the changes at the findings' instructions first."""
    from .fixfind import findings_of, ranker, target

    found = findings_of(prog, m, unroll)
    f = target(found)
    return found, ranker(prog, [f, *[g for g in found if g is not f]]) if f is not None else None


def _is_bad(prog: Program, eg: EventGraph, res) -> bool | None:
    """Whether the test's own condition marks the witness's outcome as the bug."""
    cond = prog.condition
    if cond is None:
        return None
    obs = observables(eg, "condition")
    sat = satisfies(prog, eg, outcome_of(eg, obs, res.outcomes[0].witness), obs)
    return bool(sat) if cond.quantifier != "forall" else not sat


def _forbidden(prog: Program, eg: EventGraph, m: Model, t: Target):
    s = _Search(prog, eg, m, t)
    groups: dict[tuple[str, ...], list] = {}
    deadline = time.perf_counter() + TIME_BUDGET_S
    for c in s.executions(deadline):
        key = s.violated(c)
        if key in groups:
            groups[key][1] += 1
        else:
            groups[key] = [c.execution, 1]
    out = []
    gd = None
    for key, (exe, n) in sorted(groups.items(), key=lambda kv: (len(kv[0]), -kv[1][1], kv[0])):
        c = concrete(eg, m, exe, s.cand)
        ws = witnesses(eg, c)
        out.append(FailureGroup(key, n, view(eg, exe), ws))
        if gd is None:
            from .graphdata import graph_data

            gd = graph_data(eg, exe, c, [w for w in ws], ())
    return tuple(out), s.examined, s.bound_hit, gd


# ----- the missing ordering of an allowed bad outcome ------------------------------------------


def _missing(prog: Program, eg: EventGraph, m: Model, exe: Execution, fixes, unroll: int):
    """Apply the cheapest single fix to this very execution: the edges of its violation that the
    original lacks are the missing ordering."""
    if fixes is None or not fixes.solutions:
        return ()
    from .fix import apply
    from .fixjudge import event_map, map_execution

    sol = fixes.solutions[0]
    if any(c.kind == "pack" for c in sol.changes):  # vecpack.py: no ordering added, an access made whole
        return ()
    prog2, inserted = apply(prog, sol.changes)
    eg2 = build(prog2, unroll=unroll)
    emap = event_map(eg, eg2, inserted)
    exe2 = map_execution(exe, emap)
    c1 = concrete(eg, m, exe)
    c2 = concrete(eg2, m, exe2)
    back = {v: k for k, v in emap.items()}
    out = []
    for i, st, v in c2.violated():
        kind, steps = c2.witness(i, st, v)
        for s in steps:
            a, b = back.get(s.src), back.get(s.dst)
            if a is not None and b is not None and c1.has(s.node, s.at, a, b):
                continue
            out.append(_why_not(eg, eg2, c1, c2, s, back, steps, sol.text))
        if out:
            break
    return tuple(out[:len(sol.changes)])


def _why_not(eg, eg2, c1: Concrete, c2: Concrete, s: Step, back, chain, fix_text: str) -> MissingOrder:
    """Words for an edge of the fixed execution's violation that the original lacks."""
    def ref(x):
        return event_ref(eg, back[x]) if x in back else event_ref(eg2, x)

    src, dst = ref(s.src), ref(s.dst)
    top = s.via[0] if s.via else s.rel
    part = [x for x in chain if (x.via[:1] or (x.rel,)) == (top,)] or [s]
    wanted = (ref(part[0].src), ref(part[-1].dst))
    name = s.rel.removesuffix("^-1")
    doc = c2.doc(name, s.at)
    lacking, holding = [], []
    u = c2.unfold(s)
    depth = 0
    while u is not None and len(u[1]) == 1 and u[1][0].rel != s.rel and depth < 2:
        inner = c2.unfold(u[1][0])
        if inner is None or not inner[1]:
            break
        u = inner
        depth += 1
    if u is not None:
        expr_steps = u[1]
        for x in expr_steps:
            a, b = back.get(x.src), back.get(x.dst)
            ok = a is not None and b is not None and c1.has(x.node, x.at, a, b)
            (holding if ok else lacking).append(x)
        holding = _conditions_holding(c1, c2, s, back) + holding
    words = _sentence(ref, c2, s, doc, holding, lacking, wanted, top)
    return MissingOrder(wanted, top, Edge(src, dst, s.rel, s.via), words, fix_text)


def _conditions_holding(c1: Concrete, c2: Concrete, s: Step, back) -> list[Step]:
    """Named conditions of the edge's definition (``ms & ...``) that hold in the original."""
    from ..cat.ast import Inter, Union, name_of

    name = s.rel.removesuffix("^-1")
    expr, d = c2.definition(name, s.at)
    out = []
    if expr is None:
        return out
    e = expr
    if isinstance(e, Union):
        for alt in e.args:
            n = name_of(alt)
            if n is not None and c2.has(alt, d, s.src, s.dst):
                expr, d = c2.definition(n, d)
                e = expr if expr is not None else e
                break
    if isinstance(e, Inter):
        a, b = back.get(s.src), back.get(s.dst)
        for op in e.args:
            n = name_of(op)
            if n is not None and a is not None and b is not None and c1.has(op, d, a, b):
                out.append(Step(s.src, s.dst, n, (), op, d))
    return out


def _sentence(ref, c2: Concrete, s: Step, doc: str, holding, lacking, wanted, top: str) -> str:
    def named(x: Step) -> str:
        w = c2.doc(x.rel.removesuffix("^-1"), x.at)
        return f"{w} ({x.rel})" if w else x.rel

    src, dst = ref(s.src).short(), ref(s.dst).short()
    first = f"`{src}` and `{dst}` are not related by {named(s)}"
    if holding:
        hs = ", ".join(named(x) for x in holding if x.src != x.dst)
        if hs:
            first = f"`{src}` is {hs} with `{dst}`, but not {named(s)}"
    why = []
    for x in lacking:
        w = c2.doc(x.rel.removesuffix("^-1"), x.at) or x.rel
        if x.src == x.dst:
            noun = re.sub(r"\s+pattern$", "", w)
            art = "an" if noun[0] in "aeiou" else "a"
            why.append(f"`{ref(x.src).short()}` is not {art} {noun}: no {w} ({x.rel}) ends at it")
        else:
            why.append(f"no {w} ({x.rel}) from `{ref(x.src).short()}` to `{ref(x.dst).short()}`")
    late = len(c2.model.stmts)
    tail = f"; so nothing puts `{wanted[0].short()}` {c2.doc(top, late) or top} ({top})-before " \
           f"`{wanted[1].short()}`" if wanted and wanted[0] != wanted[1] else ""
    return first + (": " + "; ".join(why) if why else "") + tail


# ----- text ------------------------------------------------------------------------------------


def _chain_text(chain: tuple[Edge, ...], indent: str) -> list[str]:
    if not chain:
        return []
    lines = [f"{indent}{chain[0].src}"]
    for e in chain:
        tag = f"—{e.rel}→"
        lines.append(f"{indent}  {tag:<10s} {e.dst}")
    if chain[0].src.eid == chain[-1].dst.eid and len(chain) > 0:
        lines[-1] += "   (back to the start)"
    return lines


def render_text(x: Explanation) -> str:
    out = [f"{x.name}  ({x.file})  model {x.model}", f"outcome  {x.outcome}"]
    out += _allowed_text(x) if x.allowed else _forbidden_text(x)
    if x.races:
        out.append("races:")
        for r in x.races:
            out.append(f"  {r.flag}{f' on {r.where}' if r.where else ''}: {r.a}  ~  {r.b}")
    if x.fixes is not None:
        out.append("")
        out += _fix_lines(x)
    return "\n".join(out)


def _fix_lines(x: Explanation) -> list[str]:
    """The fixes in the program's own words: CUDA edits for a kernel (advice.py)."""
    if x.program is None:
        return x.fixes.lines()
    from .advice import fix_lines

    return fix_lines(x.program, x.fixes)


def _fixes_json(x: Explanation) -> dict:
    if x.program is None:
        return x.fixes.to_json()
    from .advice import fixes_json

    return fixes_json(x.program, x.fixes)


def _allowed_text(x: Explanation) -> list[str]:
    out = ["verdict  ALLOWED" + ("  — the test's condition marks it as the bad outcome" if x.bad else "")]
    if x.witness is not None:
        out.append("witness execution:")
        for w, r, v in x.witness.rf:
            out.append(f"  {r.short()} reads {v} from {w.short()}")
        for a, b in x.witness.co:
            out.append(f"  co: {a.short()} before {b.short()}")
    for m in x.missing:
        out.append("missing ordering:")
        out.append(f"  {m.words}")
        if m.fix:
            out.append(f"  (the cheapest fix, {m.fix}, adds it)")
    return out


def _forbidden_text(x: Explanation) -> list[str]:
    out = [f"verdict  FORBIDDEN — {x.candidates} candidate execution(s) produce it, every one "
           "fails an axiom" + ("  [bound hit: more candidates exist]" if x.bound_hit else "")]
    for g in x.groups:
        out.append("")
        out.append(f"{g.count} candidate(s) fail {', '.join(g.axioms)}; for example:")
        for w in g.witnesses:
            out.append(f"  {w.axiom}: {w.check} {w.expression}  — a {w.kind}")
            out += _chain_text(w.chain, "    ")
            for u in w.unfoldings:
                out.append(f"    {u.edge.rel} = {u.definition}")
                out.append(f"      {u.words}")
    return out


__all__ = ["explain", "Explanation", "AxiomWitness", "Edge", "EventRef", "FailureGroup",
           "MissingOrder", "Race", "Unfolding", "ExecutionView", "races_in", "parse_outcome",
           "render_text", "concrete_env"]
