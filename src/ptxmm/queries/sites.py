"""A kernel check's own queries: what it observes (:func:`observables`: the global buffer elements
written, and what the condition names) and its stop sites (:func:`site_findings`: failing asserts
and out-of-bounds accesses, each found by one query on the check's problem for an execution in
which a thread takes a path that stops there, :mod:`ptxmm.ir.stops`)."""

from __future__ import annotations

from pathlib import Path

from ..ir.program import Halt, Label, MemRef, Mov, Program
from ..kernel.info import source_text
from .query import Found

# A site some outcome's witness already reaches is found without a query of its own: that witness is
# an allowed execution of the same problem (the enumeration's, under the same symmetry breaking), so
# the site's query would be satisfiable anyway. At most this many witnesses are looked at (each is
# decoded once); a site none of them reaches is asked as before. False: every site is one query
# (the property tests compare the two).
REUSE_WITNESSES = True
REUSE_MAX = 256
# A program the barrier proof covers (no loop, one unconditional count-less bar.sync sequence per
# CTA) under a built-in model has no grid-ending site the liveness graph reaches and the check's own
# query does not (:func:`barrier_sites_proven`): that second query is not built. False: it is
# always asked (the property tests compare the two).
BARRIER_SITES = True


def observables(eg, scope: str = "all") -> list:
    """A kernel's outcome: the final value of every global buffer element some thread writes (in
    the layout's order), and whatever the condition names."""
    from ..semantics.outcomes import Observable
    from ..semantics.outcomes import observables as cond_observables

    out = []
    if scope == "all":
        written = eg.written if eg.written is not None else \
            {e.loc for e in eg.events if e.thread >= 0 and e.kind == "W"}
        for loc in eg.program.locations:
            if loc.space == "global" and loc.name in written:
                out.append(Observable(loc.name, MemRef(loc.name), loc.type, loc=loc.name))
    keys = {o.key for o in out}
    return out + [o for o in cond_observables(eg, "condition") if o.key not in keys]


def site_findings(eg, pb, outcome_of=None, skip=frozenset(), grid_ending=False, known=(),
                  reused: list | None = None) -> tuple:
    """Assertion failures, traps and out-of-bounds accesses: for every site (a PTX line where
    some path of some thread stops), one query on the check's own problem ``pb`` for an allowed
    execution in which a thread takes a path that stops there. ``skip``: sites (kind, line)
    already found; ``grid_ending``: only the sites of a failed assertion or ``trap``. ``known``:
    allowed executions of ``pb`` found already (the outcomes' witnesses): a site the first of them
    that reaches it is found with it, and asks no query (:data:`REUSE_WITNESSES`); ``reused``, when
    given, gets each such site's (kind, line).
    (Hangs, ``FindingKind.HANG``, are the liveness checker's: its findings join these in
    ``checker.run``, and ``ptxmm test`` compares every kind with a kernel's `expect` line; it asks
    the grid-ending sites this query did not find again on the liveness graph, where a thread
    the trap or assert stops may be mid-loop or at a barrier: :func:`grid_ending_sites`.)"""
    from ..semantics.result import EventRef, Finding, FindingKind

    sites: dict[tuple[str, int], dict[int, set[int]]] = {}
    for t, paths in enumerate(eg.paths):
        for k, p in enumerate(paths):
            if p.stop is not None and (not grid_ending or p.stop.kind.ends_grid) \
                    and (p.stop.kind.value, p.stop.line) not in skip:
                sites.setdefault((p.stop.kind.value, p.stop.line), {}).setdefault(t, set()).add(k)
    found = []
    seen = _Known(known)
    for (kind, line), where in sorted(sites.items()):
        wit = seen.reaching(where)
        if wit is None:
            wit = pb.find(pb.on_paths(where))
        elif reused is not None:
            reused.append((kind, line))
        if wit is None:
            continue
        who = [eg.program.threads[t].name for t, ks in sorted(where.items()) if wit.paths[t] in ks]
        ins = _site_instr(eg.program, line)
        found.append(Finding(FindingKind(kind), kind,
                             tuple(EventRef(-1, n, line, _site_text(eg.program, ins)) for n in who[:1]),
                             wit, outcome_of(wit) if outcome_of else None))
    return tuple(found)


class _Known:
    """The first :data:`REUSE_MAX` of the allowed executions found already (none when
    :data:`REUSE_WITNESSES` is off), each decoded once (a packed witness), when a site first
    looks past the ones decoded."""

    def __init__(self, known):
        self.left = iter(list(known[:REUSE_MAX]) if REUSE_WITNESSES else [])
        self.decoded: list = []

    def reaching(self, where: dict[int, set[int]]):
        """The first execution in which a thread ``t`` takes one of the paths ``where[t]``, or None."""
        for exe in self.decoded:
            if _reaches(exe.paths, where):
                return exe
        for w in self.left:
            exe = w.get() if hasattr(w, "get") else w
            self.decoded.append(exe)
            if _reaches(exe.paths, where):
                return exe
        return None


def _reaches(paths: tuple[int, ...], where: dict[int, set[int]]) -> bool:
    """Whether an execution whose threads take ``paths`` has a thread ``t`` on one of ``where[t]``."""
    return any(paths[t] in ks for t, ks in where.items())


def grid_ending_sites(eg, pb, found: tuple) -> tuple:
    """The failed assertions and traps no complete execution reaches, asked of the liveness graph
    ``eg`` (:func:`ptxmm.queries.hangs.liveness_graph`) and its problem ``pb``: there the other
    threads may also take a path that ends mid-loop (stuck) or at a barrier wait (blocked), and
    no constraint is put on those ends — a trap or failed assertion aborts the grid (PTX ISA,
    trap: "Abort execution and generate an interrupt to the host CPU"), so each other thread
    stops wherever it then is: a thread spinning for a flag the trapping one would have set
    afterwards, or waiting at a barrier it never reaches. Every execution found is one the grid can
    run (a prefix of each thread); ``found``: the findings the check's own query already has."""
    return site_findings(eg, pb, None, _skip(found), grid_ending=True)


def barrier_sites_proven(graph, model) -> bool:
    """Whether the grid-ending sites :func:`grid_ending_sites` would ask of the liveness graph have
    nothing to find beyond the check's own site query (issue 40: at 1,024 threads that liveness
    problem is half the check): ``graph`` is the check's safety graph, and it holds when

    * :data:`BARRIER_SITES` is on, ``model`` is a built-in one (the argument below is about its
      axioms; a user's .cat file may forbid what it uses), and
    * :func:`ptxmm.semantics.barrier_waits.never_blocks` holds for ``graph`` (the caller asks it
      under fair progress: no thread has a loop, every thread of a CTA meets the same count-less
      ``bar.sync`` sequence on every path, failed-assertion and trap paths included).

    Why. Under fair progress and with no loop, the liveness graph's paths are the safety graph's
    (nothing is cut) and the ``blocked`` paths, each a prefix of its thread ending at a barrier wait
    (no ``stuck`` path without a back edge, no ``prefix`` path under fair progress); the site query
    puts no constraint on those ends (:func:`grid_ending_sites`). Take an allowed execution of it
    in which thread A stops at site S, and a thread B blocked at a wait of phase k. B arrives in
    no later phase and does not finish, and a thread of B's CTA that goes past a wait of a later
    phase needs B's arrival there (ISA bar: a count-less ``bar.sync`` completes when all threads of
    the CTA have arrived; ``QUORUM_UNMET`` forbids passing one that does not). So either k is the
    last phase of the CTA's sequence (all arrivals of every phase made; B's missing events follow
    its last barrier), or no thread of B's CTA finishes (A is elsewhere) and every one of them is
    blocked in phase k or k + 1. The missing events are po-suffixes: nothing of the execution lies
    after them in po, and the only edges they add towards its events are arrive → wait of CTAs
    whose threads all arrive in every later phase once extended. Run those suffixes after every
    event of the execution, one at a time, each read reading the coherence-last write of its
    location, each write coherence-last, each fence last in the fence order: every relation the
    built-in models' axioms order (causality, coherence, fence.sc order, barrier phases, which
    every thread of those CTAs now completes in sequence) only gains edges into the new events,
    so no cycle or forbidden pair appears, and the result is a complete execution of the safety
    graph with A on the same path: the check's own query finds S (its symmetry breaking keeps
    every site's verdict). So a site the check did not find is unreachable in the liveness graph
    too. ``False``: the liveness problem is built and asked (the property tests compare the two;
    :mod:`tests.queries.test_barrier_sites`)."""
    from ..cat.parser import builtin_files, find_model
    from ..semantics.barrier_waits import never_blocks

    if not BARRIER_SITES:
        return False
    where = find_model(model) if isinstance(model, str) else Path(model.path)
    if where.resolve() not in {p.resolve() for p in builtin_files().values()}:
        return False
    return never_blocks(graph)


def _skip(found: tuple) -> frozenset:
    return frozenset((str(f.kind), f.events[0].line) for f in found if f.events and f.events[0].eid == -1)


def unfound_grid_ending(eg, found: tuple) -> bool:
    """Whether ``eg`` has a failed-assertion or trap site that ``found`` does not name (one
    :func:`grid_ending_sites` would ask)."""
    skip = _skip(found)
    return any(p.stop is not None and p.stop.kind.ends_grid and (p.stop.kind.value, p.stop.line) not in skip
               for paths in eg.paths for p in paths)


def _site_instr(prog: Program, line: int):
    threads = prog.threads[:1] if prog.layout is not None else prog.threads  # a kernel: one body
    instrs = [i for th in threads for i in th.instrs]
    for ins in instrs:
        if ins.pos is not None and ins.pos.line == line and not isinstance(ins, (Label, Mov)):
            return ins
    return next((i for i in instrs if i.pos is not None and i.pos.line == line), None)


def _site_text(prog: Program, ins) -> str:
    if ins is None:
        return "?"
    return source_text(prog, ins.pos) or ins.text


__all__ = ["barrier_sites_proven", "grid_ending_sites", "observables", "site_findings", "unfound_grid_ending"]


class Sites:
    """A kernel's assertion failures and out-of-bounds accesses, asked of the check's problem once
    its condition is answered (a program without a kernel layout has no sites)."""

    name = "sites"
    own_problem = False

    def applies(self, prog: Program, opts) -> bool:
        return opts.asks("sites") and (prog.layout is not None
                               or any(isinstance(i, Halt) for th in prog.threads for i in th.instrs))

    def run(self, r) -> Found:
        if r.status not in ("ok", "stopped"):
            return Found((), "not checked")
        reused: list = []
        found = site_findings(r.eg, r.pb, r.outcome_of, known=[i.witness for i in r.found], reused=reused)
        if reused:
            r.applied["sites"] = f"site witnesses reused ({len(reused)} site(s) without a query)"
        return Found(found)


QUERY = Sites()
