"""Model-guarded pruning for the brute-force engine (issue 27): skip, while enumerating, the
candidate executions that an axiom *of the model being checked* already rejects.

The plain enumerator (:class:`~ptxmm.semantics.executions.ExecutionSpace`) is model-blind: it yields every
well-formed candidate and the engine evaluates the model on each. For programs with mbarrier
objects that is hopeless (each arrive, complete-tx and wait on one 64-bit word may read any write
of it: the PipelineTmaAsync examples have 1.8e12 rf choices). Two axioms of ``models/ptx.cat``
settle most of those choices long before the model is evaluated:

* ``MBarrier-order`` — ``empty (([W] ; mbar-loc ; [W]) \\ (co | co^-1))``: the MBAR writes of one
  location are totally ordered by co;
* ``MBarrier-atomicity`` — ``empty (rmw & ((fr & mbar-loc) ; (co & mbar-loc)))``: no MBAR write
  lies strictly co-between the write an MBAR rmw read reads from and the rmw's own (MBAR) write.

A model is recognised as stating one of them by the axiom's **expression**, not its name: the cat
AST of the axiom with every ``let`` it uses inlined (down to the engine's base names, and the base
``fr`` read as ``(rf^-1 ; co) \\ id``) must equal the reference text below. A model that states
neither — Dat3M's cat files, a user's model — is enumerated exactly as before
(``tests/engines/test_model_guarded_pruning.py``).

What :class:`GuidedSpace` does with them (each a restriction the axiom's own statement implies on
every execution the model accepts, so the executions the model accepts are exactly the same):

* with MBarrier-order, a location whose active writes are its initial write and MBAR writes that
  run on every execution of the chosen paths gets its coherence order chosen **first**, as one of
  the permutations of those writes (every other order the enumerator would build leaves a pair
  unordered); other locations keep their enumerated orders, less those that leave two MBAR writes
  unordered;
* with MBarrier-atomicity as well, the rf source of each MBAR rmw read at such a location is then
  only a write with no MBAR write co-between it and the rmw's write: the co-predecessor of that
  write, or a write co-after it (the latter always form a value cycle through the rmw chain when
  every MBAR write of the location is an rmw, which the rf search drops as before); elsewhere the
  axiom is checked on each candidate before the model is.

Monotonicity is what makes an early rejection safe: the violation is stated over rf, co and static
relations (rmw, loc, the tags) only, and a partial candidate that has the violating rf pair and co
pairs keeps them in every completion. ``tests/engines/test_model_guarded_pruning.py`` compares whole
check results (outcomes, verdicts, flags) with and without the pruning on random mbarrier programs, under
``ptx`` and under a model that lacks the axioms."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import cache

from .._infra.records import record
from ..cat import axioms as ax
from ..cat.ast import Axiom, Complement, Diff, Let, LetRec, Name, children
from ..cat.interp import run as interp
from ..cat.parser import Model, Stmt
from ..cat.relalg import ESet, Rel
from ..ir.values import TRUE, evaluate, reads_of
from ..semantics.events import EventGraph, Kind
from ..semantics.executions import ConcreteChoice, ExecutionSpace, RfSearch, coherence_orders
from ..semantics.vocab import SCOPE_TAG, SEM_TAG, base_env

# ----- recognising the axioms ----------------------------------------------------------------

# the engine's base names that are derived from others (vocab.base_env), as the cat text that
# defines them: a model that does not define ``fr`` itself uses the engine's
_BASE_DEFS = {"fr": "(rf^-1 ; co) \\ id"}

MBAR_LOC = "(([MBAR] ; loc ; [MBAR]) \\ id)"
REFERENCE = {
    "mbar_total": f"empty (([W] ; {MBAR_LOC} ; [W]) \\ (co | co^-1))",
    "mbar_atomic": f"empty (rmw & ((((rf^-1 ; co) \\ id) & {MBAR_LOC}) ; (co & {MBAR_LOC})))",
}


@cache
def _reference(text: str) -> tuple[str, object]:
    """(check, canonical expression) of one reference axiom."""
    from ..cat.parser import parse_stmts

    (st,) = parse_stmts(text, "<reference>")
    return st.check, _canon(st.expr, {})


def _canon(node, defs: dict[str, object]) -> object:
    """The expression as nested tuples (operator class name, operands), each name replaced by the
    canonical expression it was last defined as (``defs``), base names kept (``_BASE_DEFS``
    expanded)."""
    if isinstance(node, Name):
        return _name(node.name, defs)
    return (type(node).__name__, *(_canon(c, defs) for c in children(node)))


def _name(name: str, defs: dict[str, object]) -> object:
    if name in defs:
        return defs[name]
    if name in _BASE_DEFS:
        return _reference(f"empty {_BASE_DEFS[name]}")[1]
    return name


def _axioms(model: Model) -> Iterator[tuple[Stmt, object]]:
    """Every axiom of the model with its canonical, fully inlined expression."""
    defs: dict[str, object] = {}
    for st in model.stmts:
        if isinstance(st, Let):
            new = {n: _canon(e, defs) for n, e in zip(st.names, st.exprs)}
            defs.update(new)
        elif isinstance(st, LetRec):  # a fixed point is never one of the references
            defs.update({n: ("letrec", n, id(st)) for n in st.names})
        elif isinstance(st, Axiom):
            yield st, _canon(st.expr, defs)


@record
class Implied:
    """What the model's axioms say of every execution it accepts, as the enumerator uses it:
    ``mbar_total`` (MBarrier-order) and ``mbar_atomic`` (MBarrier-atomicity), each named after
    its reference text in ``REFERENCE``."""

    mbar_total: bool = False
    mbar_atomic: bool = False

    def __bool__(self) -> bool:
        return self.mbar_total or self.mbar_atomic


def implied(model: Model) -> Implied:
    """The facts ``model`` states among those the guided enumeration knows (by the axioms'
    inlined expressions, whatever their names)."""
    refs = {k: _reference(t) for k, t in REFERENCE.items()}
    found = set()
    for st, expr in _axioms(model):
        for k, (check, ref) in refs.items():
            if st.check == check and expr == ref:
                found.add(k)
    return Implied(**{k: True for k in found})


# ----- the guided enumeration ------------------------------------------------------------------


class GuidedSpace(ExecutionSpace):
    """:class:`~ptxmm.semantics.executions.ExecutionSpace` (with ``prune``) less candidates that ``model``
    rejects: those the facts :func:`implied` reads off it exclude, and partial candidates an
    axiom of :func:`early_axioms` already fails on. The candidates the model accepts are all still
    there, in another order."""

    def __init__(self, eg: EventGraph, cand, model: Model, **kw):
        super().__init__(eg, cand, prune=True, **kw)
        self.rules = implied(model)
        early = {id(st) for st in early_axioms(model)}
        self.early = Model(model.name, model.path, [st for st in model.stmts if id(st) in early or
                                                    isinstance(st, (Let, LetRec))]) if early else None
        self.checked = self.rejected = 0  # partial candidates the early axioms judged, and rejected
        ev = eg.events
        self.partner = {r: w for r, w in eg.edges["rmw"]
                        if "MBAR" in ev[r].tags and "MBAR" in ev[w].tags and ev[r].loc == ev[w].loc}
        self._fixed: dict[str, list[int]] = {}  # the co chosen first: location → its MBAR writes in order

    # rf: the co of the mbarrier words first, then their rmw reads' sources from it

    def _choices(self):
        eg, cand, ev = self.eg, self.cand, self.eg.events
        for paths in itertools.product(*(range(len(p)) for p in eg.paths)):
            active = [e for e in ev if e.thread < 0 or paths[e.thread] in e.paths]
            act_ids = {e.eid for e in active}
            reads = [e.eid for e in active if e.kind == Kind.R]
            first = self._first_locations(active) if self.rules.mbar_total else {}
            # the rmw reads of those words first, then their other reads, then the rest
            order = sorted(reads, key=lambda r: (0 if r in self.partner and ev[r].loc in first else
                                                 1 if ev[r].loc in first else 2, r))
            sure = {r for r in reads if ev[r].cond == TRUE}
            opts = {r: ([] if r in sure else [None]) + [w for w, r2 in cand.rf if r2 == r and w in act_ids]
                    for r in reads}
            checks = [a for t, k in enumerate(paths) for a in eg.paths[t][k].assumes]
            locs = sorted(first)
            for perms in itertools.product(*(itertools.permutations(first[loc]) for loc in locs)):
                self.tick()
                fixed = dict(zip(locs, (list(p) for p in perms)))
                narrowed = self._narrowed(opts, fixed)
                co = {(a, b) for o in fixed.values() for i, a in enumerate(o) for b in o[i + 1:]}
                further = None if self.early is None else \
                    (lambda src, vals, active=active, co=co: self._early_ok(active, co, src, vals))
                search = RfSearch(eg, order, [narrowed[r] for r in order], checks, bool(self.domain),
                                  self.tick, further)
                for source_of in search.run():
                    self._fixed = fixed
                    yield paths, active, reads, source_of

    def _first_locations(self, active) -> dict[str, list[int]]:
        """The locations whose coherence order is chosen first: every active write is the initial
        one or an MBAR write, and every active MBAR event runs whenever its path does."""
        by_loc: dict[str, list] = {}
        for e in active:
            if e.loc is not None and e.kind in (Kind.R, Kind.W):
                by_loc.setdefault(e.loc, []).append(e)
        out = {}
        for loc, es in by_loc.items():
            ws = [e for e in es if e.kind == Kind.W and "IW" not in e.tags]
            if ws and all("MBAR" in e.tags and e.cond == TRUE for e in ws) and \
                    all(e.cond == TRUE for e in es if "MBAR" in e.tags):
                out[loc] = [e.eid for e in ws]
        return out

    def _narrowed(self, opts: dict[int, list], fixed: dict[str, list[int]]) -> dict[int, list]:
        """With MBarrier-atomicity, each rmw read of a word whose order is fixed keeps only the
        sources with no MBAR write co-between them and the rmw's write (the initial write is
        co-first, and not MBAR)."""
        if not self.rules.mbar_atomic:
            return opts
        out = dict(opts)
        ev = self.eg.events
        for r, w in self.partner.items():
            loc = ev[r].loc
            if r not in opts or loc not in fixed or w not in fixed[loc]:
                continue  # (a liveness prefix path may stop between an rmw's read and its write)
            pos = {x: i for i, x in enumerate(fixed[loc])}  # the initial write: -1
            at = pos[w]
            out[r] = [s for s in opts[r] if s is None or pos.get(s, -1) >= at - 1]
        return out

    def _early_ok(self, active, co: set[tuple[int, int]], src: dict[int, int | None],
                  vals: dict[int, int]) -> bool:
        """Whether the early axioms all hold on the lower bounds of a partial candidate (sources
        ``src``, co ``co`` so far)."""
        execd = _executed(active, vals)
        if execd is None:
            return True
        self.checked += 1
        env = partial_env(self.eg, self.cand, PartialChoice(execd, src, co, vals))
        res = interp(self.early, env, flags=False)
        if all(ax.holds(st.check, v) for st, v in res.axioms):
            return True
        self.rejected += 1
        return False

    # co: the fixed orders as they are, the others total on MBAR writes

    def _coherence(self, u, execd: set[int]) -> list[list[set[tuple[int, int]]]]:
        ev, out = self.eg.events, []
        for loc, ws in self.cand.writes_at.items():
            if loc in self._fixed:
                order = self._fixed[loc]
                out.append([{(a, b) for i, a in enumerate(order) for b in order[i + 1:]}])
                continue
            mine = tuple(w for w in ws if w in execd and "IW" not in ev[w].tags)
            got = self._orders.get(mine)
            if got is None:
                got = list(coherence_orders(self.eg, u, loc, list(mine), self.tick))
                if self.rules.mbar_total:
                    mb = [w for w in mine if "MBAR" in ev[w].tags]
                    got = [o for o in got if all((a, b) in o or (b, a) in o
                                                 for a, b in itertools.combinations(mb, 2))]
                self._orders[mine] = got
            out.append(got)
        return out

    def _with_values(self, paths, active, reads, source_of, vals):
        cands = super()._with_values(paths, active, reads, source_of, vals)
        if not self.rules.mbar_atomic:
            yield from cands
            return
        for c in cands:
            if self._atomic(c):
                yield c

    def _atomic(self, c) -> bool:
        """MBarrier-atomicity on a whole candidate (for the words whose order was not fixed)."""
        ev = self.eg.events
        co = c.co
        for r, w in self.partner.items():
            if ev[r].loc in self._fixed or w not in c.execd or r not in c.source_of:
                continue
            s = c.source_of[r]
            for x in self.cand.writes_at[ev[r].loc]:
                if x != w and x != r and "MBAR" in ev[x].tags and (s, x) in co and (x, w) in co:
                    return False
        return True


# ----- early checks: the model's monotone axioms on partial candidates -------------------------

# Base names whose value the choice of rf, co, the fence.sc order, barrier phases or read values
# decides (vocab.base_env), each with how a partial candidate bounds it from below: rf and co by
# the pairs chosen so far, fr and the rf/co/fr parts by composing those, MBOK by the waits whose
# value is known; the fence.sc order and the barrier relations by nothing (empty).
_CHOSEN = frozenset({"rf", "co", "fr", "rfe", "rfi", "coe", "coi", "fre", "fri", "MBOK"})
_EMPTY = frozenset({"scorder", "sync_fence", "sync_barrier", "syncbar", "exit_barrier",
                    "QUORUM_UNMET"})
# Base names fixed by the events that execute (their tags, threads, scopes, locations, static
# dependencies and placements): exact on a partial candidate whose executed events are known.
_STATIC = frozenset({
    "_", "id", "R", "W", "M", "F", "B", "IW", "RMW", "RedR", "VOL", "GEN", "TEX", "SUR", "CON",
    "PROXY", "ALIAS", "ASYNC", "AOP", "SHM", "PFG", "PFS", "MBAR", "MBWAIT", "MBI", "UNI", "RSR",
    "ASR", "MBINV", "TMAP", "TMREL", "TMACQ", "CBA", "CBW", "CB_HANG", "po", "rmw", "addr", "data",
    "ctrl", "async_int", "bulk_done", "tm_range", "issue", "sync_cluster_barrier", "loc", "vloc",
    "int", "ext", "sr", "scta", "scluster", "sgpu", "po-loc", *SEM_TAG.values(), *SCOPE_TAG.values()})


def _polarity(node, defs: dict[str, dict[str, set[int]]], sign: int, out: dict[str, set[int]]) -> None:
    """The base names ``node`` depends on, each with the signs it occurs with (+1: the value
    grows with the name's; -1: it shrinks): ``diff`` turns its right operands, ``~`` its operand."""
    if isinstance(node, Name):
        _occurs(node.name, defs, sign, out)
        return
    for k, c in enumerate(children(node)):
        flip = (isinstance(node, Diff) and k > 0) or isinstance(node, Complement)
        _polarity(c, defs, -sign if flip else sign, out)


def _occurs(name: str, defs, sign: int, out: dict[str, set[int]]) -> None:
    for base, signs in defs.get(name, {name: {1}}).items():
        out.setdefault(base, set()).update(s * sign for s in signs)


def early_axioms(model: Model) -> list[Stmt]:
    """The axioms of ``model`` a partial candidate can already violate for good: each depends on
    base names of ``_STATIC`` (exact once the executed events are known) and of ``_CHOSEN`` and
    ``_EMPTY`` (bounded from below), the latter only where its value grows with theirs, and on
    some name of ``_CHOSEN`` (an axiom of the others alone is decided no sooner on a partial
    candidate than on a whole one). Every
    operator of cat but difference and complement is monotone, and ``empty``, ``irreflexive`` and
    ``acyclic`` fail on a relation if they fail on a part of it: an axiom that fails on the lower
    bounds fails on every completion."""
    defs: dict[str, dict[str, set[int]]] = {}
    out = []
    for st in model.stmts:
        if isinstance(st, (Let, LetRec)):
            new = {}
            for n, e in zip(st.names, st.exprs):
                deps: dict[str, set[int]] = {}
                if isinstance(st, LetRec):  # a fixed point: not analysed
                    deps = {"<letrec>": {1, -1}}
                else:
                    _polarity(e, defs, 1, deps)
                new[n] = deps
            defs.update(new)
        elif isinstance(st, Axiom):
            deps = {}
            _polarity(st.expr, defs, 1, deps)
            if deps.keys() & _CHOSEN and all(
                    n in _STATIC or ((n in _CHOSEN or n in _EMPTY) and signs == {1})
                    for n, signs in deps.items()):
                out.append(st)
    return out


class PartialChoice:
    """A partial candidate as a Choice whose every relation is a lower bound of its value in any
    completion: rf of the reads with a chosen source, co ``co`` (and the initial writes first),
    MBOK of the waits whose value is known; the executed events exactly."""

    lg = ConcreteChoice.lg

    def __init__(self, execd: set[int], src: dict[int, int | None], co: set[tuple[int, int]],
                 values: dict[int, int]):
        self.execd, self.src, self.cos, self.values = execd, src, co, values

    def exec(self, e: int) -> bool:
        return e in self.execd

    def rf(self, w: int, r: int) -> bool:
        return self.src.get(r, -1) == w

    def co(self, a: int, b: int) -> bool:
        return (a, b) in self.cos

    def scorder(self, f: int, g: int) -> bool:
        return False

    def cond(self, e) -> bool:
        return all(x in self.values for x in reads_of(e)) and bool(evaluate(e, self.values))

    def same_phase(self, a: int, b: int) -> bool:
        return False

    def count(self, guards, op: str, q: int) -> bool:
        return False


def partial_env(eg: EventGraph, cand, ch: PartialChoice):
    """The base environment of a partial candidate, the names of ``_EMPTY`` empty."""
    env = base_env(eg, ch, cand)
    u = env["_"].u
    for name in _EMPTY:
        env.later.pop(name, None)
        env[name] = ESet(u) if name == "QUORUM_UNMET" else Rel(u)
    return env


def _executed(active, vals: dict[int, int]) -> set[int] | None:
    """The active events that run, or None while a condition names a read without a value."""
    out = set()
    for e in active:
        if e.thread < 0 or e.cond == TRUE:
            out.add(e.eid)
        elif all(x in vals for x in reads_of(e.cond)):
            if evaluate(e.cond, vals):
                out.add(e.eid)
        else:
            return None
    return out


def guided_space(eg: EventGraph, cand, model: Model, **kw) -> ExecutionSpace:
    """The candidates the brute-force engine judges under ``model``: a :class:`GuidedSpace` where
    the model states something it can use, else the model-blind pruned enumeration."""
    if implied(model) or early_axioms(model):
        return GuidedSpace(eg, cand, model, **kw)
    return ExecutionSpace(eg, cand, prune=True, **kw)
