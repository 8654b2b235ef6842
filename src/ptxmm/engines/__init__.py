"""Engines: ``z3`` (one formula per program, queries and incremental enumeration) and ``brute``
(streams candidate executions and filters them with the model, as herd7 does; the test oracle).
Both take the same event graph, model, observables and candidates, and yield the same outcome
sets — tests hold them to it."""

from __future__ import annotations

from ..semantics.events import Kind
from .base import NO_DEADLINE, Deadline, Engine, Found, Raised, TimedOut

# ``auto`` enumerates (brute) when the candidate space is at most this many executions: below it
# the enumerator answers before the solver library would even have loaded (importing z3 alone
# costs ~40 ms; the enumerator evaluates a litmus-sized candidate in ~0.5 ms).
AUTO_BRUTE_MAX = 16



def start_fresh() -> None:
    """Begin the next check in a fresh Z3 context where no problem is open. Which allowed
    execution Z3 returns as a witness follows its context's history (the ids of the terms it built
    and freed before): a process that checks many programs in turn (the playground's worker) then
    answers each as a fresh ``ptxmm`` process does, with the same witnesses. Costs about 2.5 ms; a
    process that never imported Z3 has nothing to forget."""
    import sys

    if "z3" in sys.modules:
        from .z3.problem import _fresh_context

        _fresh_context()

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


__all__ = ["NO_DEADLINE", "AUTO_BRUTE_MAX", "Deadline", "Engine", "Found", "Raised", "TimedOut",
           "candidate_space", "engine", "pick"]
