"""A check's queries: the options of a check, the check under way as its queries see it
(:class:`CheckRun`: the one engine problem and what was found so far), and the :class:`Query`
protocol every kind of finding implements — ``applies`` says whether the check asks it, ``run``
asks it and returns its findings and what became of the question (:class:`Found`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any, Protocol

from .._infra.records import record
from ..cat.parser import Model
from ..engines import Deadline
from ..ir.program import Program
from ..semantics.events import EventGraph
from ..semantics.outcomes import Observable, outcome_of
from ..semantics.result import Finding, Outcome


@record
class CheckOptions:
    """How a check runs (see :func:`ptxmm.queries.checker.check` for each field's meaning)."""

    engine: str = "auto"
    unroll: int = 2
    observe: str = "all"
    flags: bool = True
    verdict_only: bool = False
    max_outcomes: int | None = None
    progress: Callable[[int], None] | None = None
    timeout: float | None = None
    allow_no_axioms: bool = False
    liveness: bool = False
    progress_model: str = "fair"
    # the properties asked (``check(..., properties=...)``, api_args.PROPERTIES); None: the
    # defaults, as ``flags`` and ``liveness`` say
    asked: frozenset[str] | None = None

    def asks(self, prop: str) -> bool:
        """Whether the check asks ``prop`` ("condition", "races", "sites"; liveness is ``liveness``)."""
        if prop == "condition":
            return self.asked is None or prop in self.asked
        return self.flags and (self.asked is None or prop in self.asked)


@record(frozen=False)
class CheckRun:
    """One check under way: what every stage reads and what it found so far."""

    prog: Program
    eg: EventGraph
    model: Model
    obs: list[Observable]
    opts: CheckOptions
    deadline: Deadline
    found: list
    findings: tuple[Finding, ...] = ()
    listed: list[Observable] = field(default_factory=list)  # what an enumeration lists (see condition)
    liveness: str | None = None  # "terminates", "hangs", "undecided", "timeout"; None: not asked
    liveness_why: str | None = None  # "undecided": why, in words
    pb: Any = None  # the engine's problem (an engines.Engine) once built
    status: str = "ok"  # what became of the condition: "ok", "stopped", "timeout", "no-execution"
    reductions: list[str] = field(default_factory=list)  # the reductions that applied, in words
    # the reductions a query applied (the site witnesses reused, a liveness shortcut), in words by
    # name; they join ``reductions`` when the queries are done (checker.reductions)
    applied: dict[str, str] = field(default_factory=dict)
    # a query's answer asked of the problem before the outcome enumeration, by name (races.EARLY,
    # checker.SITES_WITH_RACES); it stands for the query's where the enumeration's status asks it
    early: dict[str, Found] = field(default_factory=dict)

    def outcome_of(self, exe) -> Outcome:
        """The outcome a witness shows on the listed observables."""
        return outcome_of(self.eg, self.listed, exe)


@record
class Found:
    """A query's answer: its findings, and what became of the question ("ok", "timeout", "not
    checked", ...)."""

    findings: tuple[Finding, ...] = ()
    status: str = "ok"


class Query(Protocol):
    """One kind of finding, asked of a check. ``name`` keys its status; a query with
    ``own_problem`` asks a formula of its own (built after the check's problem is closed), the
    others ask the check's problem ``run.pb``."""

    name: str
    own_problem: bool

    def applies(self, prog: Program, opts: CheckOptions) -> bool:
        """Whether the check asks this query at all."""
        ...

    def run(self, run: CheckRun) -> Found:
        """The findings (in report order) and the question's status."""
        ...
