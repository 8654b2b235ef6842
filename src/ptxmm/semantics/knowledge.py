"""Relation analysis: what every consistent execution must contain, known before any solving.

The relation algebra already splits every base and derived relation into its static part (must)
and its execution-dependent part (may). This module adds the knowledge about co that comes from
the *axioms* of whatever model is loaded, read from their syntax (never from the model's name):

* ``empty (E \\ co)`` whose ``E`` does not depend on co (PTX's Coherence: causality-ordered
  overlapping writes are co-ordered) makes ``must(E)`` a lower bound of co (``E \\ co^-1``: of
  co's inverse);
* ``empty (E \\ (co | co^-1))`` (co is total on ``E``: SC's co-total, PTX's Coherence-ms) says
  that of two writes related by ``must(E)`` one is co-before the other whenever both execute;
* ``acyclic R`` where ``co`` is one of the operands of ``R``'s top-level union (let-bound unions
  such as ``com = rf | co | fr`` are opened) makes the reverse of every pair of ``must(S)``
  impossible, ``S`` being the union of R's operands that do not depend on co (po under
  ``acyclic (po | rf | co | fr)``): co(b, a) would close a cycle with S(a, b).

A pair is known when a bound gives it, or when the pair is total and its reverse impossible.
Known pairs need no solver variable, their reverse is impossible, and coherence of a thread's own
writes — all of co for a thread of 1,000 stores — is settled statically, under ``--model ptx``
(Coherence) and ``--model sc`` (co-total and the SC axiom) alike. A model that rebinds ``co``
with ``let`` gets no analysis.

Expressions are evaluated with an *uninterpreted* logic: every existential (rf, co, sc, execution
of a conditional event) is an opaque term, so what comes out static holds in every execution.
Only expressions that do not depend on co are evaluated, over an environment whose co has no
candidate pairs (building a term per pair would cost more than the analysis saves)."""

from __future__ import annotations

from dataclasses import replace
from itertools import repeat

from .._infra.records import record
from ..cat.ast import Axiom, Diff, Inverse, Let, LetRec, Name, Union, name_of, names
from ..cat.ast import Expr as CatExpr
from ..cat.interp import evaluate_expr
from ..cat.parser import Model
from ..cat.relalg import Rel, bits
from ..ir.values import TRUE, Expr
from .events import EventGraph
from .vocab import Candidates, base_env, co_rows, ones


class _Opaque:
    __slots__ = ()


_TERM = _Opaque()


class FreeLogic:
    """Terms without meaning: any combination of terms is just another term (``opaque``, the
    only one: relalg's closures then work on pair keys alone, relalg.KEYS_ONLY)."""

    opaque = _TERM

    def and_(self, terms):
        return _TERM

    or_ = and_

    def not_(self, t):
        return _TERM

    def equivalent(self, a, b) -> bool:
        return a is b

    def simplify(self, g):
        return g

    def acyclic(self, edges):
        return [_TERM]


class FreeChoice:
    lg = FreeLogic()

    def __init__(self, eg: EventGraph):
        self.eg = eg

    def exec(self, e: int):
        ev = self.eg.events[e]
        if ev.thread < 0:
            return True
        whole = len(ev.paths) == len(self.eg.paths[ev.thread])
        return True if whole and ev.cond == TRUE else _TERM

    def rf(self, w, r):
        return _TERM

    def co(self, a, b):
        return _TERM

    def scorder(self, f, g):
        return _TERM

    def cond(self, e: Expr):
        return _TERM

    def same_phase(self, a, b):
        return _TERM

    def count(self, guards, op, q):
        return _TERM


def _co_part(t: CatExpr) -> str | None:
    """"co" for ``co``, "inv" for ``co^-1``, else None."""
    match t:
        case Name(name="co"):
            return "co"
        case Inverse(arg=Name(name="co")):
            return "inv"
    return None


@record
class _Member:
    """One operand of a (flattened) union, with the statement whose scope its names live in."""

    tree: CatExpr
    at: int


def _binding(model: Model, name: str, at: int):
    """The expression and statement of the ``let name = e`` in scope at statement ``at``; None for
    a base name, or one bound by ``let rec`` or together with other names (kept opaque)."""
    for j in range(at - 1, -1, -1):
        st = model.stmts[j]
        if isinstance(st, (Let, LetRec)) and name in st.names:
            return (st.exprs[0], j) if isinstance(st, Let) and len(st.names) == 1 else None
    return None


def _members(model: Model, t: CatExpr, at: int) -> list[_Member]:
    """The operands of ``t``'s top-level union, let-bound unions opened (``co`` never is)."""
    if isinstance(t, Union):
        return [m for c in t.args for m in _members(model, c, at)]
    name = name_of(t)
    if name is not None and name != "co":
        b = _binding(model, name, at)
        if b is not None:
            return _members(model, *b)
    return [_Member(t, at)]


def _co_dependent(model: Model) -> set[str]:
    """Names whose value may depend on co (conservatively: any binding of the name that does),
    fr included (the base environment derives its fr from co)."""
    depends = {"co", "fr"}
    for st in model.stmts:
        if isinstance(st, (Let, LetRec)) and any(names(e) & depends for e in st.exprs):
            depends |= set(st.names)
    return depends


@record(frozen=False)
class _Facts:
    """Statically known co facts, as the co-free members to evaluate at each statement."""

    bounds: list[tuple[_Member, str]]  # (E, "co" | "inv"): E ⊆ co, or E ⊆ co^-1
    totals: list[_Member]  # E ⊆ co | co^-1
    orders: list[_Member]  # co(b, a) impossible for (a, b) in E


def _facts(model: Model) -> _Facts:
    f = _Facts([], [], [])
    if any(isinstance(st, (Let, LetRec)) and "co" in st.names for st in model.stmts):
        return f
    depends = _co_dependent(model)
    free = lambda m: not (names(m.tree) & depends)  # noqa: E731
    for i, st in enumerate(model.stmts):
        if not isinstance(st, Axiom):
            continue
        e = st.expr
        if st.check == "acyclic":
            ms = _members(model, e, i)
            if any(_co_part(m.tree) == "co" for m in ms):
                f.orders += [m for m in ms if free(m)]
        elif st.check == "empty" and isinstance(e, Diff) and len(e.args) == 2:
            lhs = _Member(e.args[0], i)
            parts = {_co_part(m.tree) for m in _members(model, e.args[1], i)}
            if None in parts or not free(lhs):
                continue
            if parts == {"co", "inv"}:
                f.totals.append(lhs)
            else:
                f.bounds.append((lhs, parts.pop()))
    return f


def _rows(model: Model, env, members: list[_Member]) -> dict[int, int]:
    """The union of the must parts of ``members``, as row bitsets."""
    out: dict[int, int] = {}
    for m in members:
        r = evaluate_expr(model, env, m.tree, m.at)
        if isinstance(r, Rel):
            for a, row in r.must.items():
                out[a] = out.get(a, 0) | row
    return out


def _transpose(rows: dict[int, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for a, row in rows.items():
        for b in bits(row):
            out[b] = out.get(b, 0) | (1 << a)
    return out


def _forward(model: Model, env, f: _Facts) -> dict[int, int]:
    """Row bitsets of the pairs the facts put in co whenever both ends execute."""
    fwd = _rows(model, env, [m for m, d in f.bounds if d == "co"])
    for a, row in _transpose(_rows(model, env, [m for m, d in f.bounds if d == "inv"])).items():
        fwd[a] = fwd.get(a, 0) | row
    if f.totals and f.orders:
        total = _rows(model, env, f.totals)
        for a, row in _rows(model, env, f.orders).items():
            ok = row & total.get(a, 0)
            for b in bits(row & ~ok):  # total the other way round
                if (total.get(b, 0) >> a) & 1:
                    ok |= 1 << b
            fwd[a] = fwd.get(a, 0) | ok
    return fwd


def co_must(eg: EventGraph, model: Model, cand: Candidates) -> set[tuple[int, int]]:
    """Pairs of writes every consistent execution orders in co whenever both execute (of the
    candidate pairs: writes of threads to one location that may run together)."""
    f = _facts(model)
    if not f.bounds and not (f.totals and f.orders):
        return set()
    fwd = _forward(model, base_env(eg, FreeChoice(eg), replace(cand, co=[])), f)
    rows = {a: r for a, row in co_rows(eg, cand.writes_at).items() if (r := row & fwd.get(a, 0))}
    both: set[tuple[int, int]] = set()  # forced both ways (no consistent execution runs the two
    # together): left to the solver
    for b, row in rows.items():
        for a in bits(row & ((1 << b) - 1)):  # (b, a) with a < b: is (a, b) forced too?
            if (rows.get(a, 0) >> b) & 1:
                both |= {(a, b), (b, a)}
    out = {p for a, row in rows.items() for p in zip(repeat(a), ones(row))}
    return out - both if both else out
