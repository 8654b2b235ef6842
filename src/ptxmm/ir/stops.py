"""Where a kernel thread stops early: a failing ``assert()`` or an out-of-bounds access. The event
builder records a :class:`Stop` on the paths that stop (``record``); the site queries
(:mod:`ptxmm.queries.sites`) and the finding explanations read it back (:func:`path_stop`). The
record travels in the path's final registers, under one reserved register per kind that no
program names."""

from __future__ import annotations

from enum import Enum

from .._infra.records import record
from .values import Const


class StopKind(Enum):
    """Why a thread stops; the value is the finding kind it reports as."""

    ASSERTION = "assert-fails"
    BOUNDS = "out-of-bounds"

    @property
    def register(self) -> str:
        """The reserved register that holds the site's PTX line on the paths that stop here."""
        return _REGISTERS[self]

    @property
    def ending(self) -> str:
        """How a witness tells the thread's end (``stops: <ending> <where>``)."""
        return _ENDINGS[self]


_REGISTERS = {StopKind.ASSERTION: "%ptxmm.assert", StopKind.BOUNDS: "%ptxmm.oob"}
_ENDINGS = {StopKind.ASSERTION: "its assertion fails at", StopKind.BOUNDS: "an out-of-bounds access at"}


@record
class Stop:
    """One stop site: its kind and the PTX line of the failing call or access."""

    kind: StopKind
    line: int


def path_stops(regs: dict) -> list[Stop]:
    """The stops a path's final registers record (at most one on any path), in StopKind order."""
    out = []
    for kind in StopKind:
        v = regs.get(kind.register)
        if isinstance(v, Const):
            out.append(Stop(kind, v.v))
    return out


def path_stop(regs: dict) -> Stop | None:
    """The stop a path's final registers record, None when the path does not stop."""
    found = path_stops(regs)
    return found[-1] if found else None


__all__ = ["Stop", "StopKind", "path_stop", "path_stops"]
