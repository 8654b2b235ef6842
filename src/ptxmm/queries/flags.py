"""Findings: what a check reports beyond the outcomes — data races today; assertion failures,
hangs and out-of-bounds accesses as the kernel and liveness front ends add them.

A finding is the answer to a query on the same formula the condition uses: the engine is asked
for an allowed execution in which some element of a model flag's relation is present (one query
for every element not yet found: a witness settles all the elements it raises), so a finding
always comes with its witness execution and never depends on which outcomes were enumerated.

The kind of a model flag comes from its name: a flag whose name ends in ``race`` (the PTX models'
``data-race``) reports data races as the PTX ISA defines them (two conflicting accesses, not both
morally strong, unordered by causality); any other flag is reported under its own name."""

from __future__ import annotations

from collections.abc import Iterable

from ..semantics.events import EventGraph
from ..semantics.result import EventRef, Finding, FindingKind


def kind_of_flag(name: str) -> FindingKind:
    return FindingKind.RACE if name.endswith("race") else FindingKind.FLAG


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


def of_raised(eg: EventGraph, raised: Iterable, outcome_of=None) -> tuple[Finding, ...]:
    """Findings from an engine's raised flag elements (``engines.Raised``), in a stable order
    (kind, name, events); ``outcome_of(execution)`` names each witness's outcome; a race says the
    location its accesses touch."""
    out = [Finding(kind_of_flag(r.flag), r.flag, tuple(event_ref(eg, e) for e in r.events), r.witness,
                   outcome_of(r.witness) if outcome_of else None,
                   where=where(eg, r.events) if kind_of_flag(r.flag) == FindingKind.RACE else "")
           for r in raised]
    out.sort(key=lambda f: (f.kind, f.name, tuple(e.eid for e in f.events)))
    return tuple(out)
