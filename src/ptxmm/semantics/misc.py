"""The PTX ISA's miscellaneous instructions: ``nanosleep``, a delay with no memory effect."""

from __future__ import annotations

from ..ir.program import Nanosleep, Thread
from .builder import Builder, State, handles


@handles(Nanosleep)
def nanosleep(b: Builder, t: Thread, ins: Nanosleep, st: State, guard, gdeps) -> None:
    """No event: the model has no time, and the ISA gives a sleep no memory effect and no order
    (PTX ISA, nanosleep: "suspends the thread for a sleep duration approximately close to the
    delay t"). A spin loop that backs off with it is the same loop without it (a liveness check
    judges it by the value it waits for, not by the sleep)."""
