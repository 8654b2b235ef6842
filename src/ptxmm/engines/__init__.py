"""Engines: ``z3`` (one formula per program, queries and incremental enumeration) and ``brute``
(streams candidate executions and filters them with the model, as herd7 does; the test oracle).
Both take the same event graph, model, observables and candidates, and yield the same outcome
sets — tests hold them to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from ..result import Execution

# one allowed outcome: the observables' values (unsigned, at their widths), a witness
# execution, and the model flags the witness raises
Found = tuple[tuple[int, ...], Execution, list[str]]


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
