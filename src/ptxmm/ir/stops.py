"""Where a kernel thread stops early: a failing ``assert()`` (the kernel front end lowers nvcc's
call of ``__assertfail`` to a :class:`~ptxmm.ir.instructions.Halt`) or an out-of-bounds access
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

    @property
    def ending(self) -> str:
        """How a witness tells the thread's end (``stops: <ending> <where>``)."""
        return _ENDINGS[self]


_ENDINGS = {StopKind.ASSERTION: "its assertion fails at", StopKind.BOUNDS: "an out-of-bounds access at"}


@record
class Stop:
    """One stop site: its kind and the PTX line of the failing call or access."""

    kind: StopKind
    line: int


__all__ = ["Stop", "StopKind"]
