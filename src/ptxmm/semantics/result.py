"""Result objects of the public API: outcomes, witness executions, check results — plain records
(they compute nothing: explanations and drawings take a result, :mod:`ptxmm.explanation.explain`,
:mod:`ptxmm.explanation.graph`)."""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from typing import TYPE_CHECKING

from .._infra.records import record
from ..ir.program import Program

if TYPE_CHECKING:
    from .events import EventGraph


@record
class Execution:
    """One candidate execution: which path each thread took, rf ((write, read) pairs), co edges, the
    values reads returned, the order of fence.sc events and the phase each arrival at a counted
    barrier (``bar.sync a, n``) joined."""

    paths: tuple[int, ...]
    rf: tuple[tuple[int, int], ...]  # (write, read)
    co: tuple[tuple[int, int], ...]
    values: tuple[tuple[int, int], ...]  # (read, value)
    scorder: tuple[int, ...] = ()  # the fence.sc events in the cat files' scorder
    final: tuple[tuple[str, int], ...] = ()  # physical location → the write FIN reads
    phases: tuple[tuple[int, int], ...] = ()  # (counted barrier arrival, its phase)


@record
class Outcome:
    values: tuple[tuple[str, int], ...]  # (ref as text, value), in a stable order

    def __getitem__(self, key: str) -> int:
        return dict(self.values)[key]

    def as_dict(self) -> dict[str, int]:
        return dict(self.values)

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.values)


class FindingKind(StrEnum):
    RACE = "race"
    FLAG = "flag"  # a model flag that is not a race: reported under the flag's name
    ASSERT_FAILS = "assert-fails"
    HANG = "hang"
    OUT_OF_BOUNDS = "out-of-bounds"
    TRAP = "trap"


GRID_ENDING = (FindingKind.ASSERT_FAILS, FindingKind.TRAP)  # a failed assertion and `trap` abort the grid


@record
class EventRef:
    """An event as the user wrote it: thread, source line and instruction text."""

    eid: int
    thread: str  # thread name, or "init"
    line: int | None
    text: str

    def __str__(self) -> str:
        return f"{self.thread} {self.text}" + (f" (line {self.line})" if self.line else "")

    def short(self) -> str:
        return f"{self.thread} {self.text}"

    def to_json(self) -> dict:
        return {"event": self.eid, "thread": self.thread, "line": self.line, "text": self.text}


@record
class Finding:
    kind: FindingKind
    name: str  # the model's name for it (the flag's name)
    events: tuple[EventRef, ...]
    witness: Execution
    outcome: Outcome | None = None  # the witness's outcome, projected on the check's observables
    detail: str = ""  # the finding in words, where its events alone do not say it (a hang: where, why)
    where: str = ""  # the location a race's accesses touch (its elements differ where the text does not)
    event_pairs: int = 1  # a race: the dynamic event pairs of these two source operations it stands for

    def __str__(self) -> str:
        if self.detail:
            return f"{self.name}: {self.detail}"
        on = f" on {self.where}" if self.where else ""
        times = f"   ({self.event_pairs} event pairs)" if self.event_pairs > 1 else ""
        return f"{self.name}{on}: " + "  ~  ".join(str(e) for e in self.events) + times

    def to_json(self) -> dict:
        w = self.witness
        return {"kind": str(self.kind), "name": self.name,
                "events": [e.to_json() for e in self.events],
                "outcome": None if self.outcome is None else self.outcome.as_dict(),
                "witness": {"paths": list(w.paths), "rf": [list(p) for p in w.rf],
                            "co": [list(p) for p in w.co]}} \
            | ({"detail": self.detail} if self.detail else {}) \
            | ({"location": self.where} if self.where else {}) \
            | ({"event_pairs": self.event_pairs} if self.kind == FindingKind.RACE else {})


@record(frozen=False)
class OutcomeInfo:
    outcome: Outcome
    satisfies: bool | None  # does it satisfy the test's condition (None: no condition)
    witness: Execution
    flags: list[str] = field(default_factory=list)  # model flags raised by the witness (races)


@record(frozen=False)
class CheckResult:
    program: Program
    model: str
    outcomes: list[OutcomeInfo]
    holds: bool | None  # the condition's verdict in herd's sense
    time_s: float
    engine: str = "z3"
    cut_paths: int = 0
    awaits: int = 0
    unroll: int = 2
    n_events: int = 0
    observables: tuple[str, ...] = ()
    stopped_at: int | None = None  # enumeration stopped after this many outcomes (--max-outcomes)
    # "ok"; "stopped" (at max_outcomes); "timeout" (past `timeout` seconds: verdict unknown);
    # "no-execution" (no execution finishes within the unroll bound)
    status: str = "ok"
    timeout: float | None = None
    model_path: str | None = None  # the model's file, for re-evaluating it (explanations)
    findings: tuple[Finding, ...] = ()  # data races (later: assertions, hangs), each with a witness
    # "ok" (every finding query answered), "timeout", "not checked" (flags off, or the check did not
    # finish), "no flags in model"
    findings_status: str = "ok"
    graph: EventGraph | None = field(default=None, repr=False, compare=False)  # the one it built
    # False when the condition was answered by one query (``verdict_only``, --observe condition):
    # ``outcomes`` then holds at most that query's witness, and neither the number of allowed
    # outcomes nor the flags of each were computed (the findings were: they are queries of their own)
    enumerated: bool = True
    # liveness (``check(..., liveness=True)``, ptxmm.queries.hangs): "terminates" (no execution hangs),
    # "hangs" (the findings hold a hang), "undecided" (no hang found, but a loop the unrolling cut
    # is not one the stuck test decides, or no execution finishes within the bound: why in
    # ``liveness_why``), "timeout"; None when not asked; the progress model assumed
    liveness: str | None = None
    progress_model: str | None = None
    liveness_why: str | None = None
    # the properties the check was not asked (``check(..., properties=...)``, ``--properties``) that
    # apply to the program: no verdict, finding or liveness answer is reported for them; () for the
    # defaults (then ``liveness`` None and findings_status "not checked" say what was not asked)
    not_asked: tuple[str, ...] = ()
    # the reductions that applied (issue 40), e.g. "symmetry (1 class of 4 threads)", "read-only
    # fold (8 locations)", "RMW chains (4 locations)", the site witnesses reused, the liveness
    # shortcuts, the address memo; each changes no answer (property-tested). In the JSON
    # (bound.reductions) and the text report's "reductions:" line
    reductions: tuple[str, ...] = ()

    STATUS_TEXT = {
        "stopped": "stopped at {stopped_at} outcomes (--max-outcomes): more may be allowed, the "
                   "verdict is not decided",
        "timeout": "timed out after {timeout} s: the verdict is unknown",
        "interrupted": "interrupted (Ctrl-C): the verdict is unknown; the outcomes are those found so far",
        "memory": "stopped at the memory limit (--max-memory): the verdict is unknown; the outcomes "
                  "are those found so far",
        "capped": "more than {stopped_at} allowed outcomes: the rest are not enumerated (the listing "
                  "stops there; --max-outcomes sets another limit) and the verdict is unknown (--observe "
                  "condition decides it with one query)",
        "no-execution": "no execution finishes within --unroll {unroll}: every execution loops "
                        "past the bound; the verdict is unknown (raise --unroll, or make the loop "
                        "exit)",
    }

    @property
    def status_text(self) -> str | None:
        """The status in words, or None when it is "ok"."""
        t = self.STATUS_TEXT.get(self.status)
        if self.status == "no-execution" and any(f.kind in GRID_ENDING for f in self.findings):
            t = ("no execution runs to its end within --unroll {unroll}: each one the model allows ends "
                 "the grid early (the trap or failed assertion above) or loops past the bound; the "
                 "condition's verdict is unknown")
        return t.format(stopped_at=self.stopped_at, timeout=self.timeout, unroll=self.unroll) if t else None

    @property
    def name(self) -> str:
        return self.program.name

    @property
    def expected(self) -> bool | None:
        return self.program.expect

    @property
    def agrees(self) -> bool | None:
        if self.expected is None or self.holds is None:
            return None
        return self.expected == self.holds

    @property
    def expected_liveness(self) -> str | None:
        """The test's ``.expect-liveness`` line: "terminates", "hangs", or None."""
        e = self.program.expect_liveness
        return None if e is None else "terminates" if e else "hangs"

    @property
    def liveness_agrees(self) -> bool | None:
        """Whether the liveness verdict is the ``.expect-liveness`` line's; None when either is
        not known (liveness not checked, undecided, timed out)."""
        if self.expected_liveness is None or self.liveness not in ("terminates", "hangs"):
            return None
        return self.liveness == self.expected_liveness

    @property
    def expected_findings(self) -> tuple[str, ...] | None:
        """A kernel's ``// ptxmm: expect KIND, ...`` line (() for ``expect ok``), or None."""
        k = self.program.kernel
        return None if k is None else k.expect

    @property
    def found_kinds(self) -> tuple[str, ...]:
        return tuple(sorted({str(f.kind) for f in self.findings}))

    @property
    def findings_agree(self) -> bool | None:
        """Whether the kinds found are the ``expect`` line's — the rule ``ptxmm test``, the pytest
        plugin and the playground share; None when there is no such line or a query it rests on
        did not answer (findings incomplete, or the hang query not asked or stopped)."""
        if self.expected_findings is None or self.findings_status not in ("ok", "no flags in model") \
                or self.liveness in (None, "timeout") or self.status in ("timeout", "no-execution"):
            return None
        return self.found_kinds == self.expected_findings

    @property
    def outcome_set(self) -> set[Outcome]:
        return {o.outcome for o in self.outcomes}

    def to_json(self) -> dict:
        cond = self.program.condition
        return {
            "name": self.name,
            "file": self.program.file,
            "description": self.program.description,
            "model": self.model,
            "engine": self.engine,
            "condition": None if cond is None else {"quantifier": cond.quantifier,
                                                    "text": cond.text},
            "holds": self.holds,
            "expected": self.expected,
            "agrees": self.agrees,
            "observables": list(self.observables),
            "outcomes": [outcome_json(o, self.enumerated) for o in self.outcomes],
            "findings": [f.to_json() for f in self.findings],
            "findings_status": self.findings_status,
            "n_outcomes": len(self.outcomes) if self.enumerated else None,
            "enumerated": self.enumerated,
            "n_events": self.n_events,
            "stopped_at": self.stopped_at,
            "status": self.status,
            "warnings": [{"message": w.message, "position": str(w.pos) if w.pos else None,
                          "hint": w.hint} for w in self.program.warnings],
            "bound": {"unroll": self.unroll, "cut_paths": self.cut_paths, "awaits": self.awaits,
                      "reductions": list(self.reductions)},
            "time_s": round(self.time_s, 6),
        } | ({"liveness": {"verdict": self.liveness, "progress": self.progress_model,
                           "expected": self.expected_liveness, "agrees": self.liveness_agrees}
                           | ({"why": self.liveness_why} if self.liveness_why else {})}
             if self.liveness is not None else {}) | (
            {"expect": {"findings": list(self.expected_findings), "found": list(self.found_kinds),
                        "agrees": self.findings_agree}} if self.expected_findings is not None else {}) | (
            {"not_asked": list(self.not_asked)} if self.not_asked else {})


def outcome_json(o: OutcomeInfo, enumerated: bool = True) -> dict:
    """One element of a result's JSON ``outcomes`` (docs/json-schema.md); the flags are None when
    they were not looked for (a one-query verdict's witness)."""
    w = o.witness
    return {"values": o.outcome.as_dict(), "satisfies": o.satisfies,
            "flags": o.flags if enumerated else None,
            "witness": {"paths": list(w.paths), "rf": [list(p) for p in w.rf],
                        "co": [list(p) for p in w.co]}}
