"""Where a thread stops early: a failing ``assert()`` (the kernel front end lowers nvcc's
call of ``__assertfail`` to a :class:`~ptxmm.ir.instructions.Halt`), ``trap`` (a Halt too: a
kernel's ``__trap()``, or written in a litmus test) or an out-of-bounds access
(the event builder finds it). The builder records the :class:`Stop` on the paths that stop
(``PathInfo.stop``); the site queries (:mod:`ptxmm.queries.sites`) and the finding explanations
read it there."""

from __future__ import annotations

from enum import Enum

from .._infra.records import record


class StopKind(Enum):
    """Why a thread stops; the value is the finding kind it reports as."""

    ASSERTION = "assert-fails"
    BOUNDS = "out-of-bounds"
    TRAP = "trap"

    @property
    def ends_grid(self) -> bool:
        """A failed assertion and ``trap`` abort the kernel: every thread stops (PTX ISA, trap:
        "Abort execution and generate an interrupt to the host CPU"); no thread hangs after it."""
        return self in (StopKind.ASSERTION, StopKind.TRAP)

    @property
    def ending(self) -> str:
        """How a witness tells the thread's end (``stops: <ending> <where>``)."""
        return _ENDINGS[self]


_ENDINGS = {StopKind.ASSERTION: "its assertion fails at", StopKind.BOUNDS: "an out-of-bounds access at",
            StopKind.TRAP: "it executes `trap` at"}


@record
class Stop:
    """One stop site: its kind and the PTX line of the failing call or access."""

    kind: StopKind
    line: int


__all__ = ["Stop", "StopKind"]
