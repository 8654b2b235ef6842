"""What every engine shares: the :class:`Engine` protocol (the problem an engine builds for one
event graph and model), the flags a witness raises (:class:`Raised`) and the deadline every phase
watches (:class:`Deadline`, :class:`TimedOut`). The engines import it; ``ptxmm.engines`` picks one."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from .._infra.records import record
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
    """The engine ran past its deadline: the question is not answered (checker reports "unknown").
    ``reason`` is the check's status then: "timeout", or for the subclasses why it was stopped."""

    reason = "timeout"


class Interrupted(TimedOut):
    """Ctrl-C (SIGINT) stopped the check: what was found so far is kept."""

    reason = "interrupted"


class OutOfMemory(TimedOut):
    """The check's memory passed its limit (``max_memory``): what was found so far is kept."""

    reason = "memory"


class OverBudget(TimedOut):
    """A query asked within a conflict budget (the Z3 engine's ``conflict_budget``) used it up
    unanswered: the caller asks its question another way. Never a check's stop or status."""

    reason = "budget"


STOPPED_BY = {c.reason: c for c in (TimedOut, Interrupted, OutOfMemory)}


class Stop:
    """Why a check must end before it is done, set from another thread or a signal handler (the
    watchdog of :mod:`ptxmm.engines.watch`): ``reason`` (a key of :data:`STOPPED_BY`), and
    ``hooks`` called once it is set (an engine interrupts its solver). ``phase`` and ``found`` say
    where the check is, for progress lines. ``settled``: the check has stopped and is building
    its partial result, which the watchdog's poke must not interrupt."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self.hooks: list = []
        self.phase = "reading"
        self.found = 0
        self.settled = False

    def set(self, reason: str) -> None:
        if self.reason is not None:
            return
        self.reason = reason
        for hook in list(self.hooks):
            try:
                hook()
            except Exception:  # noqa: BLE001 - a hook of a problem already closed
                pass

    def raise_if_set(self) -> None:
        if self.reason is not None:
            raise STOPPED_BY[self.reason]


@record
class Deadline:
    """A wall-clock limit shared by the encoding and every query of one check, and the check's
    :class:`Stop` (None: nothing but the clock stops it)."""

    at: float | None = None  # time.perf_counter() value; None: no limit
    stop: Stop | None = None

    @staticmethod
    def after(seconds: float | None, stop: Stop | None = None) -> Deadline:
        return Deadline(None if seconds is None else time.perf_counter() + seconds, stop)

    def left_ms(self) -> int | None:
        """Milliseconds left (at least 1), or None without a limit; raises TimedOut when past
        (or the reason the check was stopped)."""
        if self.stop is not None:
            self.stop.raise_if_set()
        if self.at is None:
            return None
        left = self.at - time.perf_counter()
        if left <= 0:
            raise TimedOut
        return max(1, int(left * 1000))

    def check(self) -> None:
        if self.stop is not None:
            self.stop.raise_if_set()
        if self.at is not None and time.perf_counter() > self.at:
            raise TimedOut

    def watch(self, hook) -> None:
        """Call ``hook()`` (from another thread) once the check is stopped: a solver's interrupt."""
        if self.stop is not None:
            self.stop.hooks.append(hook)

    def unwatch(self, hook) -> None:
        if self.stop is not None and hook in self.stop.hooks:
            self.stop.hooks.remove(hook)


NO_DEADLINE = Deadline()


@runtime_checkable
class Engine(Protocol):
    """A program under a model, encoded (Z3) or ready to enumerate (brute force)."""

    bounded_is_partial: bool  # whether raised(bounded=True) may leave elements out

    def outcomes(self) -> Iterator[Found]:
        """Every allowed outcome, each once."""
        ...

    def raised(self, bounded: bool = False) -> Iterator[Raised]:
        """Every element of a model flag some allowed execution raises, each once, with one such
        execution (what :mod:`ptxmm.queries.races` asks). ``bounded``: the outcome enumeration
        was stopped (--max-outcomes); an engine whose full search is unbounded then answers from
        the executions it has looked at (brute force); one that asks a query per element (Z3)
        answers in full."""
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
