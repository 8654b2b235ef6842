"""The Z3 engine's problem: ONE formula per program (the event graph's encoding, the cat model
interpreted once over guarded relations and its axioms asserted) and its queries — :meth:`find`
(an allowed execution satisfying a goal, with its witness), :meth:`raised` (the elements of the
model's flags some allowed execution raises) and :meth:`outcomes` (each model gives one outcome,
and one clause over shared equality atoms then excludes it)."""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator

import z3

from ...cat import axioms as ax
from ...cat.interp import run as interp
from ...cat.parser import Model
from ...errors import ModelError
from ...ir.program import CondExpr
from ...semantics import rmw_chains
from ...semantics.events import EventGraph
from ...semantics.outcomes import Observable
from ...semantics.result import Execution
from ...semantics.symmetry import classes as sym_classes
from ...semantics.vocab import Candidates, base_env
from ..base import NO_DEADLINE, Deadline, Interrupted, OverBudget, Raised, TimedOut
from .capi import _P_CHECK, _assert, fresh_thread_context, mk_bool, thread_state
from .enumerate import Enumeration, _groups
from .logic import Z3Logic
from .program import Encoding, Z3Choice
from .satenum import sat_enumerator
from .symmetry import breaking
from .values import _cond
from .witness import Witness, _Layout

__all__ = ["Z3Problem", "_groups"]


# Small problems share solvers: a finished problem's solver, its scope popped, serves the next one
# (a fresh solver's first check sets up its SMT kernel, ~0.3 ms: a tenth of a litmus check).
# Assertions in a scope miss Z3's base-level preprocessing, which pays off once a problem has more
# than about 48 rf/co choices (measured over the Dat3M corpus and the scale shapes): those get a
# fresh solver of their own. A popped solver keeps a few KB per problem, so each serves at most
# _REUSES problems. A solver belongs to its thread's Z3 context (capi.thread_context): the pool and
# the set of open problems are per-thread — _POOL and _OPEN are the main thread's.
_POOL: list[z3.Solver] = []
atexit.register(_POOL.clear)  # freed while Z3's context still exists, not in module teardown
_POOL_MAX_CHOICES = 48
_REUSES = 100
_NO_TIMEOUT = 4294967295  # Z3's default: none
# An enumeration looks for parts of the formula that share no variable once it has found this
# many outcomes: the look costs about as much as a few outcomes, and pays off only on many.
_SPLIT_AFTER = 64
# Past this many outcomes, a formula that does not split goes on in a SAT solver (.satenum: its
# clauses cost about as much as 30-50 outcomes of the SMT enumeration; each outcome then costs a
# fifth or less).
_SAT_AFTER = 64


# Contexts a stop interrupted (the watchdog's hook, on its own thread): an interrupt that arrives
# outside a solver call stays pending in the context and would cancel the next problem's first
# push or solver call. close() clears it; a check stopped before it could close (a poke during the
# encoding) leaves it to the next problem, which clears it before it borrows a solver.
_INTERRUPTED: set = set()


def _interrupter(ctx) -> Callable[[], None]:
    def interrupt() -> None:
        _INTERRUPTED.add(ctx)
        ctx.interrupt()
    return interrupt


def _clear_interrupt(ctx) -> None:
    if ctx in _INTERRUPTED:
        z3.SimpleSolver(ctx=ctx).check()  # a check clears a pending interrupt
        _INTERRUPTED.discard(ctx)


# Problems not yet closed (a fresh context is started only when there is none).
_OPEN: weakref.WeakSet = weakref.WeakSet()


def _pool() -> list[z3.Solver]:
    """The calling thread's pool of solvers."""
    if threading.current_thread() is threading.main_thread():
        return _POOL
    st = thread_state()
    if getattr(st, "pool", None) is None:
        st.pool = []
    return st.pool


def _open() -> weakref.WeakSet:
    """The calling thread's problems not yet closed."""
    if threading.current_thread() is threading.main_thread():
        return _OPEN
    st = thread_state()
    if getattr(st, "open", None) is None:
        st.open = weakref.WeakSet()
    return st.open


def _fresh_context() -> None:
    """Start a new main Z3 context for a large problem when no problem is open. Z3 recycles the
    ids of freed terms, and its solver's choices follow term ids: in a context that has built and
    freed earlier problems, the same large problem took 1.5-2x as long (grid-barrier-reuse checked
    four times in one process: 2.6, 4.1, 4.7, 5.5 s; in a fresh context each time: 2.2-2.7 s).
    Terms of the old context stay valid (they keep it alive) and are never mixed with new ones:
    every problem builds its terms after this call, in its own context, and pooled solvers of the
    old one are dropped. Nothing changes where the Z3 module does not keep its main context where
    this looks for it."""
    if _open():
        return
    if threading.current_thread() is threading.main_thread() and \
            getattr(z3.z3, "_main_ctx", None) is None:
        return
    _pool().clear()
    fresh_thread_context()


def _borrow(pooled: bool) -> z3.Solver:
    if not pooled:
        return z3.SimpleSolver()  # incremental, no tactic preprocessing
    pool = _pool()
    s = pool.pop() if pool else z3.SimpleSolver()
    s.served = getattr(s, "served", 0) + 1
    s.push()
    return s


class Z3Problem(Encoding, Witness, Enumeration):
    """One program under one model, encoded once; queried for witnesses and outcomes."""

    bounded_is_partial = False  # raised(bounded=True) is the full answer
    _budget: z3.Solver | None = None  # the solver under a conflict budget (conflict_budget)

    def __init__(self, eg: EventGraph, model: Model, obs: list[Observable], cand: Candidates,
                 flags: bool = False, co_known: set[tuple[int, int]] | None = None,
                 deadline: Deadline = NO_DEADLINE, symmetry: bool = False, chains: bool = False):
        if len(cand.rf) + len(cand.co) > _POOL_MAX_CHOICES:  # before any term of this problem
            _fresh_context()
        self._opened_in = _open()  # the thread's set (close() may run on another thread)
        self._opened_in.add(self)
        self._pool = _pool()
        self.eg, self.obs, self.deadline = eg, obs, deadline
        self.lg = Z3Logic()
        _clear_interrupt(self.lg.ctx)
        # RMW chains (ptxmm.semantics.rmw_chains): only under a model whose axioms order them
        rmw = rmw_chains.chains(eg) if chains and rmw_chains.orders_chains(model) else None
        ch = self.ch = Z3Choice(eg, cand, self.lg, rmw, co_known or ())
        self.chains = ch.chains  # the locations encoded as chains
        self.pooled = len(ch.rfv) + len(ch.cov) <= _POOL_MAX_CHOICES
        self.s = _borrow(self.pooled)
        self.s.lg = self.lg  # _assert builds the Logic's terms in Z3
        self._interrupt = _interrupter(self.lg.ctx)  # a stopped check (the watchdog) ends a solver call
        deadline.watch(self._interrupt)
        self.co_known = co_known or set()
        env = base_env(eg, ch, cand, co_known)
        self.unsat = False
        self._base: list = []  # what is asserted for good, as built (satenum's clauses start from it)
        deadline.check()  # encoding a large program takes seconds: the deadline is checked
        cs = list(ch.cs) + self._wellformed(cand, env)  # between its phases, not only at
        deadline.check()  # the first query
        # closures: the pairs read (cat/demand.py); every axiom is asserted (cat/fence_order.py)
        ev = interp(model, env, flags=flags, demand=True, fence_order=True)
        self.fenced = ev.fenced  # reported (checker.reductions)
        deadline.check()
        for st, v in ev.axioms:
            cs += ax.encode(st.check, v)
        self.flag_terms = []  # (name, guard): a flag is raised when its check holds ≠ negated
        self.flag_values = ev.flags  # (statement, value): the elements each flag raises
        for st, v in ev.flags:
            if st.check == "acyclic":
                raise ModelError("`flag acyclic` is not supported", st.pos, "use flag ~empty")
            holds = v.u.all(ax.encode(st.check, v))
            self.flag_terms.append((st.name, v.u.not1(holds) if st.negated else holds))
        for i, c in enumerate(cs):
            if c is False:
                self.unsat = True
            elif c is not True:
                self._put(c)
            if i % 256 == 255:
                deadline.check()
        self.symmetric: tuple[int, ...] = ()
        self._sym = self._breaking(env) if symmetry else []
        self.fin = self._final_values(cand, env["co"])
        self.terms = [self._term(o) for o in obs]
        self._layout: _Layout | None = None  # built by _packing at the first witness read
        self._atoms: dict[tuple[int, int], int] = {}  # (observable, value) → ¬(term = value)

    def close(self) -> None:
        """Done with queries: a pooled solver goes back, its scope popped. A problem never closed
        keeps its solver, which is freed with it."""
        s, self.s = self.s, None
        self._opened_in.discard(self)
        self.deadline.unwatch(self._interrupt)
        stopped = self._stopped()
        if stopped:  # an interrupt when no solver call was under way stays pending in the context
            z3.SimpleSolver(ctx=self.lg.ctx).check()  # (a push would fail): a check clears it
            _INTERRUPTED.discard(self.lg.ctx)
        if s is not None and self.pooled and not stopped:  # an interrupted solver is not reused
            s.pop(s.num_scopes())
            if self.deadline.at is not None:  # _sat set one
                s.set("timeout", _NO_TIMEOUT)
            s.lg = None
            if s.served < _REUSES:
                self._pool.append(s)

    def _breaking(self, env) -> list:
        """The symmetry-breaking constraints (:mod:`.symmetry`) behind one assumption literal:
        [the literal], or [] when no threads are interchangeable."""
        classes = sym_classes(self.eg, self.obs)
        self.symmetric = tuple(len(c.threads) for c in classes)  # reported (checker.reductions)
        cs = breaking(classes, self.ch.ex, env["co"], self.lg) if classes else []
        if not cs:
            return []
        lit = mk_bool(f"sym{next(self.lg._tag)}")
        for c in cs:
            self._put(z3.Implies(lit, c))
        return [lit]

    def _put(self, c) -> None:
        """Assert ``c`` (a guard or a Z3 Bool) for good, and keep it as built: the solver keeps
        its assertions rewritten (``x < y`` as ``not(x - y >= 0)``), which :mod:`.satenum` cannot
        turn into clauses."""
        _assert(self.s, c)
        self._base.append(c)

    # -- queries -------------------------------------------------------------------------------
    def condition(self, e: CondExpr, key: Callable) -> z3.BoolRef:
        """A test condition over the observables (``key(ref)`` names a reference's observable)."""
        by_key = {o.key: (o, t) for o, t in zip(self.obs, self.terms)}
        return _cond(e, lambda r: by_key[key(r)])

    def on_paths(self, paths: dict[int, set[int]]) -> z3.BoolRef:
        """A goal: some thread ``t`` takes one of the paths ``paths[t]`` (indices into
        ``eg.paths[t]``) — where a thread stops, observed without an observable."""
        terms = []
        for t, ks in paths.items():
            sel = self.ch.sel[t]
            terms += [z3.BoolVal(0 in ks)] if sel is None else [sel[k] for k in sorted(ks)]
        return z3.Or(terms) if terms else z3.BoolVal(False)

    def find(self, goal: z3.BoolRef | None = None, negate: bool = False) -> Execution | None:
        """One allowed execution satisfying ``goal`` (or violating it), or None. A problem built
        with ``symmetry=True`` assumes its symmetry-breaking constraints here: ``goal`` must be one
        every permutation of interchangeable threads preserves (the condition, a stop site over
        every thread that reaches it; :mod:`ptxmm.semantics.symmetry`), never one that names a
        particular thread of a class."""
        if self.unsat:
            return None
        if goal is None:
            return self._witness() if self._sat(*self._sym) else None
        q = mk_bool(f"query{next(self.lg._tag)}")  # an assumption literal: no push/pop needed
        self.s.add(z3.Implies(q, z3.Not(goal) if negate else goal))
        return self._witness() if self._sat(q, *self._sym) else None

    def _witness(self) -> Execution:
        with self._reading():
            return self._extract(self._model(self.s))

    def raised(self, bounded: bool = False) -> Iterator[Raised]:
        """For every element of a model flag that some allowed execution raises (a pair of events),
        one such execution: each query asks for an allowed execution raising any element not yet
        found, and its witness settles every element it raises (``bounded`` or not: a query per
        element at most)."""
        terms = {} if self.unsat else _raised_terms(self)
        while terms:
            q = mk_bool(f"query{next(self.lg._tag)}")
            self.s.add(z3.Implies(q, z3.Or(list(terms.values()))))
            if not self._sat(q):
                return
            m = self._model(self.s)
            with self._reading():
                exe = self._extract(m)
                hit = [k for k, t in terms.items() if z3.is_true(m.eval(t, model_completion=True))]
            for k in hit:
                del terms[k]
                yield Raised(k[0], k[1], exe)

    def none_raised(self, goal: z3.BoolRef | None = None, symmetric: bool = False) -> bool:
        """Whether no allowed execution raises an element of a model flag nor (``goal``) satisfies
        ``goal``: one query. With ``symmetric``, the problem's symmetry-breaking constraints are
        assumed (as :meth:`find` does): the answer is the same where ``goal`` is one every
        permutation of interchangeable threads preserves, since a permutation of an execution
        raising an element raises the permuted element."""
        terms = [] if self.unsat else list(_raised_terms(self).values())
        if self.unsat or not (terms or goal is not None):
            return True
        q = mk_bool(f"query{next(self.lg._tag)}")
        self.s.add(z3.Implies(q, z3.Or(terms + ([] if goal is None else [goal]))))
        return not self._sat(q, *(self._sym if symmetric else ()))

    def _sat(self, *assumptions) -> bool:
        """``s.check`` within the deadline: raises TimedOut rather than answer "unknown"."""
        return self._solve(self.s, *assumptions)

    def _solve(self, s: z3.Solver, *assumptions) -> bool:
        ms = self.deadline.left_ms()
        if ms is not None:
            s.set("timeout", ms)
        if assumptions or _P_CHECK is None:
            r = s.check(*assumptions)
            if r == z3.unknown:
                raise self._unknown(s)
            return r == z3.sat
        ctx = self.lg.ctx.ref()
        r = _P_CHECK(ctx.value, s.solver.value)  # the unchecked call: a tenth of a check less
        if r == 0:  # undef: out of time, unless Z3 reports an error
            if z3.Z3_get_error_code(ctx) != z3.Z3_OK:
                raise z3.Z3Exception(z3.Z3_get_error_msg(ctx, z3.Z3_get_error_code(ctx)))
            raise self._unknown(s)
        return r > 0

    @contextlib.contextmanager
    def conflict_budget(self, conflicts: int | None):
        """Each query of the problem's solver within: at most ``conflicts`` conflicts (Z3's
        ``max_conflicts``, a count, so the same on every machine), past which it raises
        OverBudget instead of answering. None: no budget."""
        s = self.s
        if conflicts is None or s is None:
            yield
            return
        s.set("max_conflicts", conflicts)
        self._budget = s
        try:
            yield
        finally:
            self._budget = None
            s.set("max_conflicts", _NO_TIMEOUT)  # Z3's default (the same maximum): none

    def _model(self, s: z3.Solver) -> z3.ModelRef:
        """``s.model()`` after a sat check; the stop's interrupt that arrives between the check and
        the model cancels the model's construction: the stop is raised then (TimedOut, ...), never
        Z3's "model is not available"."""
        try:
            return s.model()
        except z3.Z3Exception:
            if self._stopped():
                raise self._unknown() from None
            raise

    @contextlib.contextmanager
    def _reading(self):
        """Reading a model after a sat check (its values, the witness): the stop's interrupt that
        arrives meanwhile cancels Z3's evaluation; the stop is raised then (TimedOut, ...), never
        Z3's "canceled" (found by the playground's browser test: an internal error at the time
        limit)."""
        try:
            yield
        except z3.Z3Exception:
            if self._stopped():
                raise self._unknown() from None
            raise

    def _stopped(self) -> bool:
        return self.deadline.stop is not None and self.deadline.stop.reason is not None

    def _push(self, s: z3.Solver) -> None:
        """``s.push()``; the stop's interrupt (the watchdog: the memory limit, the clock, Ctrl-C)
        that arrives outside a solver call cancels the next push: the check's stop is raised then
        (OutOfMemory, TimedOut, Interrupted), never Z3's "push canceled"."""
        try:
            s.push()
        except z3.Z3Exception:
            self.deadline.check()
            raise

    def _unknown(self, s: z3.Solver | None = None) -> TimedOut:
        """Why the solver answered "unknown": the check was stopped (Ctrl-C, the memory limit),
        its deadline passed, the call used up its conflict budget (:meth:`conflict_budget`; ``s``
        the solver asked), or else Ctrl-C reached Z3's own handler (a solver call catches SIGINT
        while it runs, and Python never sees it)."""
        self.deadline.check()
        if s is not None and s is self._budget and s.reason_unknown() == "max-conflicts-reached":
            return OverBudget()
        if self.deadline.at is not None and time.perf_counter() >= self.deadline.at - 0.05:
            return TimedOut()
        if self.deadline.stop is not None:
            self.deadline.stop.set("interrupted")
        return Interrupted()

    def outcomes(self) -> Iterator[tuple[tuple[int, ...], Execution, list[str]]]:
        """Every allowed outcome once: (observable values as unsigned ints, witness, flags).

        Each model gives one outcome; a clause then excludes it (one atom ``term = value`` per
        observable, the atoms shared between clauses) and the next check finds an outcome not yet
        seen, until none is left. The clauses live in a scope popped at the end. Past
        ``_SPLIT_AFTER`` outcomes, a formula that falls into parts sharing no variable is
        enumerated part by part (:meth:`_parts`); past ``_SAT_AFTER``, one that does not goes on
        in a SAT solver where it can (:mod:`.satenum`)."""
        if self.unsat:
            return
        s = self.s
        base = s.assertions()  # the problem's (a copy: the blocking clauses come after)
        self._push(s)
        # Models not compacted (a global parameter, restored at the end): a model is built ~15%
        # faster. (Relevancy off would make checks ~40% faster, but switching it on a solver that
        # holds assertions loses some of them: Z3 defers terms until they become relevant.)
        compact = z3.get_param("model.compact")
        z3.set_param("model.compact", False)
        seen: set[tuple[int, ...]] = set()
        packed: list[int] = []  # the witnesses' packed values (what .satenum starts from)
        try:
            while self._sat(*self._sym):
                m = self._model(s)
                with self._reading():
                    x = self._number(m)
                    out = self._read(x, m)
                self._block(s, out[0], range(len(self.terms)))
                yield out
                seen.add(out[0])
                packed.append(x)
                if len(seen) == _SPLIT_AFTER:
                    parts = self._parts(base)
                    if parts:
                        yield from self._product(parts, x, seen)
                        return
                if len(seen) == _SAT_AFTER:
                    rest = sat_enumerator(self, seen, packed)
                    if rest is not None:
                        yield from rest
                        return
        finally:
            z3.set_param("model.compact", compact)
            if self.s is s and not self._stopped():  # not yet closed (close() pops every scope of
                s.pop()  # a pooled solver; an interrupted one is dropped, and its pop would fail)


def _raised_terms(pb: Z3Problem) -> dict[tuple[str, tuple[int, ...]], z3.BoolRef]:
    """Every element a model flag may raise (its events: a pair, one event, or none for a flag
    on the whole execution), with the Z3 term of its being raised."""
    out = {}
    for (st, v), (name, term) in zip(pb.flag_values, pb.flag_terms):
        if st.negated and st.check in ("empty", "irreflexive"):
            u = v.u
            elems = ax.merge_symmetric(ax.offending(st.check, v), lambda a, b, u=u: u.any([a, b]))
        else:
            elems = {(): term}
        for k, g in elems.items():
            if g is not False:
                out[(name, k)] = pb.lg.z3(g)
    return out

