"""Result objects of the public API: outcomes, witness executions, check results."""

from __future__ import annotations

from dataclasses import dataclass, field

from .program import Program


@dataclass(frozen=True)
class Execution:
    """One candidate execution: which path each thread took, rf (read → write), co edges, the
    values reads returned, the order of fence.sc events and the phase each arrival at a counted
    barrier (``bar.sync a, n``) joined."""

    paths: tuple[int, ...]
    rf: tuple[tuple[int, int], ...]  # (write, read)
    co: tuple[tuple[int, int], ...]
    values: tuple[tuple[int, int], ...]  # (read, value)
    sc: tuple[int, ...] = ()  # SC fences in scorder
    final: tuple[tuple[str, int], ...] = ()  # physical location → the write FIN reads
    phases: tuple[tuple[int, int], ...] = ()  # (counted barrier arrival, its phase)


@dataclass(frozen=True)
class Outcome:
    values: tuple[tuple[str, int], ...]  # (ref as text, value), in a stable order

    def __getitem__(self, key: str) -> int:
        return dict(self.values)[key]

    def as_dict(self) -> dict[str, int]:
        return dict(self.values)

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.values)


@dataclass
class OutcomeInfo:
    outcome: Outcome
    satisfies: bool | None  # does it satisfy the test's condition (None: no condition)
    witness: Execution
    flags: list[str] = field(default_factory=list)  # model flags raised by the witness (races)


@dataclass
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
    model_path: str | None = None  # the model's file, for re-evaluating it (races, explanations)
    # False when the condition was answered by one query (``verdict_only``, --observe condition):
    # ``outcomes`` then holds at most that query's witness, and neither the number of allowed
    # outcomes nor their races were computed
    enumerated: bool = True
    _races: list | None = field(default=None, repr=False, compare=False)

    STATUS_TEXT = {
        "stopped": "stopped at {stopped_at} outcomes (--max-outcomes): more may be allowed, the "
                   "verdict is not decided",
        "timeout": "timed out after {timeout} s: the verdict is unknown",
        "no-execution": "no execution finishes within --unroll {unroll}: every execution loops "
                        "past the bound; the verdict is unknown (raise --unroll, or make the loop "
                        "exit)",
    }

    @property
    def status_text(self) -> str | None:
        """The status in words, or None when it is "ok"."""
        t = self.STATUS_TEXT.get(self.status)
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
    def outcome_set(self) -> set[Outcome]:
        return {o.outcome for o in self.outcomes}

    def races(self) -> list:
        """Per outcome, the racing pairs its flags report (explain.Race: flag, both events)."""
        if self._races is None:
            from .explain import result_races

            self._races = result_races(self)
        return self._races

    def _repr_svg_(self) -> str:
        """The witness of the first outcome satisfying the condition (else the first), in SVG."""
        from .graph import result_graph, svg

        return svg(result_graph(self))

    def to_json(self) -> dict:
        cond = self.program.condition
        races = self.races()
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
            "outcomes": [
                {"values": o.outcome.as_dict(), "satisfies": o.satisfies,
                 "flags": o.flags if self.enumerated else None,  # None: not looked for
                 "races": [r.to_json() for r in rs] if self.enumerated else None,
                 "witness": {"paths": list(o.witness.paths),
                             "rf": [list(p) for p in o.witness.rf],
                             "co": [list(p) for p in o.witness.co]}}
                for o, rs in zip(self.outcomes, races)
            ],
            "n_outcomes": len(self.outcomes) if self.enumerated else None,
            "enumerated": self.enumerated,
            "n_events": self.n_events,
            "stopped_at": self.stopped_at,
            "status": self.status,
            "warnings": [{"message": w.message, "position": str(w.pos) if w.pos else None,
                          "hint": w.hint} for w in self.program.warnings],
            "bound": {"unroll": self.unroll, "cut_paths": self.cut_paths, "awaits": self.awaits},
            "time_s": round(self.time_s, 6),
        }
