"""How a finding names what it is about: an event as a reference (its thread, line and label)
and the location some events access, as the program names it."""

from __future__ import annotations

from collections.abc import Iterable

from ..semantics.events import EventGraph
from ..semantics.result import EventRef


def event_ref(eg: EventGraph, e: int) -> EventRef:
    ev = eg.events[e]
    if ev.thread < 0:
        return EventRef(e, "init", None, ev.label.removeprefix("init "))
    line = ev.instr.pos.line if ev.instr is not None and ev.instr.pos is not None else None
    src = getattr(ev.instr.pos, "src", None) if ev.instr is not None else None  # a kernel's CUDA line
    label = ev.label if src is None else f"{ev.label}  [{src.file.rsplit('/', 1)[-1]}:{src.line}]"
    return EventRef(e, eg.program.threads[ev.thread].name, line, label)


def where(eg: EventGraph, events: Iterable[int]) -> str:
    """The location the events access, as the program names it (``a1 / a2`` for two virtual names
    of one location): a race between the elements of one vector access, or of a loaded address,
    reads alike in its instructions and differs here."""
    names = list(dict.fromkeys(eg.events[e].vloc for e in events if eg.events[e].vloc is not None))
    return " / ".join(names)
