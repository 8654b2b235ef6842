"""Engines: ``z3`` (one formula per program, queries and incremental enumeration) and ``brute``
(streams candidate executions and filters them with the model, as herd7 does; the test oracle).
Both take the same event graph, model, observables and candidates, and yield the same outcome
sets — tests hold them to it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from ..result import Execution

# one allowed outcome: the observables' values (unsigned, at their widths), a witness
# execution, and the model flags the witness raises
Found = tuple[tuple[int, ...], Execution, list[str]]


class TimedOut(Exception):
    """The engine ran past its deadline: the question is not answered (checker reports "unknown")."""


@dataclass(frozen=True)
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


class Engine(Protocol):
    def outcomes(self) -> Iterator[Found]:
        """Every allowed outcome, each once."""
        ...


def engine(name: str):
    """The Problem class of an engine by name."""
    if name == "z3":
        from .z3 import Z3Problem

        return Z3Problem
    if name == "brute":
        from .brute import BruteProblem

        return BruteProblem
    raise ValueError(f"unknown engine {name!r}")
