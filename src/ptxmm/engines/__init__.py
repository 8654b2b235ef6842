"""Engines: ``z3`` (one formula per program, queries and incremental enumeration) and ``brute``
(streams candidate executions and filters them with the model, as herd7 does; the test oracle).
Both take the same event graph, model, observables and candidates, and yield the same outcome
sets — tests hold them to it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from .._infra.records import record
from ..semantics.events import Kind
from ..semantics.result import Execution

# one allowed outcome: the observables' values (unsigned, at their widths), a witness
# execution, and the model flags the witness raises
Found = tuple[tuple[int, ...], Execution, list[str]]


@record
class Raised:
    """One element of a model flag that an allowed execution raises: the flag's name, the events
    of the element (a pair of a relation, one event of a set, none for a flag on the whole
    execution) and that execution."""

    flag: str
    events: tuple[int, ...]
    witness: Execution


class TimedOut(Exception):
    """The engine ran past its deadline: the question is not answered (checker reports "unknown")."""


@record
class Deadline:
    """A wall-clock limit shared by the encoding and every query of one check."""

    at: float | None = None  # time.perf_counter() value; None: no limit

    @staticmethod
    def after(seconds: float | None) -> Deadline:
        return Deadline(None if seconds is None else time.perf_counter() + seconds)

    def left_ms(self) -> int | None:
        """Milliseconds left (at least 1), or None without a limit; raises TimedOut when past."""
        if self.at is None:
            return None
        left = self.at - time.perf_counter()
        if left <= 0:
            raise TimedOut
        return max(1, int(left * 1000))

    def check(self) -> None:
        if self.at is not None and time.perf_counter() > self.at:
            raise TimedOut


NO_DEADLINE = Deadline()


@runtime_checkable
class Engine(Protocol):
    """A program under a model, encoded (Z3) or ready to enumerate (brute force)."""

    def outcomes(self) -> Iterator[Found]:
        """Every allowed outcome, each once."""
        ...

    def raised(self) -> Iterator[Raised]:
        """Every element of a model flag some allowed execution raises, each once, with one such
        execution (what :mod:`ptxmm.queries.races` asks)."""
        ...

    def condition(self, e, key) -> Any:
        """A test condition as the engine's goal (``key(ref)`` names a reference's observable)."""
        ...

    def on_paths(self, paths: dict[int, set[int]]) -> Any:
        """A goal: some thread ``t`` takes one of the paths ``paths[t]`` (where a kernel thread
        stops: an assertion that fails, an access out of bounds)."""
        ...

    def find(self, goal=None, negate: bool = False) -> Execution | None:
        """One allowed execution satisfying ``goal`` (violating it with ``negate``), or None."""
        ...

    def close(self) -> None:
        """Done: give back what the problem holds (the Z3 engine's solver)."""
        ...


# ``auto`` enumerates (brute) when the candidate space is at most this many executions: below it
# the enumerator answers before the solver library would even have loaded (importing z3 alone
# costs ~40 ms; the enumerator evaluates a litmus-sized candidate in ~0.5 ms).
AUTO_BRUTE_MAX = 16


_BELL = (1, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975)  # set partitions of n elements


def candidate_space(eg, cand, limit: int) -> int | None:
    """An upper bound on the candidate executions the brute-force engine streams (thread paths ×
    an rf source or none per read × coherence orders × fence.sc orders × barrier phases), or None
    past ``limit``."""
    import math

    n = math.prod(len(p) for p in eg.paths)
    reads: dict[int, int] = {}
    for _, r in cand.rf:
        reads[r] = reads.get(r, 1) + 1
    for k in reads.values():
        n *= k
        if n > limit:
            return None
    iw = set(eg.init.values())
    for ws in cand.writes_at.values():
        k = len([w for w in ws if w not in iw])
        n *= 3 ** (k * (k - 1) // 2)
        if n > limit:
            return None
    n *= math.factorial(min(len(cand.scf), 8))
    arrivals = sum(1 for e in eg.events
                   if e.kind == Kind.B and "ARRIVE" in e.tags and e.barrier[1] is not None)
    n *= _BELL[min(arrivals, len(_BELL) - 1)]  # groupings of counted barrier arrivals into phases
    return n if n <= limit else None


def pick(name: str, eg, cand, verdict_only: bool) -> str:
    """The engine ``name`` names; ``auto``: brute for small candidate spaces (not for one-query
    verdicts, which only the solver answers without enumerating), else z3."""
    if name != "auto":
        return name
    if verdict_only:
        return "z3"
    return "brute" if candidate_space(eg, cand, AUTO_BRUTE_MAX) is not None else "z3"


def engine(name: str):
    """The Problem class of an engine by name."""
    if name == "z3":
        from .z3 import Z3Problem

        return Z3Problem
    if name == "brute":
        from .brute import BruteProblem

        return BruteProblem
    raise ValueError(f"unknown engine {name!r}")
