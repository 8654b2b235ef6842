"""Guarded sets and relations over events, split by what relation analysis knows statically.

A relation holds its **must** pairs as row bitsets (Python ints: row ``a`` has bit ``b`` set) and
its **may** pairs — those whose membership depends on the execution — as a sparse map from pair
to a solver term. Membership of (a, b) always also needs both events to execute: that condition
is implicit, so ``must`` means "whenever a and b both execute". Operations fold constants, so
everything the model derives from po, scopes and tags alone never reaches the solver, and with
every guard static (the brute-force engine, explanations) the very same code is the concrete
algebra.

Terms are opaque here: a :class:`Logic` supplied by the engine builds them (``and_``, ``or_``,
``not_``), so this module knows no solver. A :class:`Universe` holds each event's execution guard
(True, False, or a term)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

Term = Any  # an engine's Boolean term
Guard = Any  # True | False | Term


@runtime_checkable
class Logic(Protocol):
    """How an engine builds Boolean terms: the relation algebra and the axioms call nothing else.
    Z3Logic builds solver terms, brute force's ConcreteLogic never sees a term (every guard of a
    concrete execution is True or False), knowledge's FreeLogic builds meaningless ones."""

    def and_(self, terms: list[Term]) -> Term: ...
    def or_(self, terms: list[Term]) -> Term: ...
    def not_(self, t: Term) -> Term: ...

    def equivalent(self, a: Guard, b: Guard) -> bool:
        """Whether two guards are known to mean the same (``let rec``'s fixed-point test)."""
        ...

    def simplify(self, g: Guard) -> Guard: ...

    def acyclic(self, edges: list[tuple[int, int, Guard]]) -> list[Guard]:
        """Constraints saying that the guarded edges form no cycle."""
        ...


# Static closures by successors over an acyclic relation (_closure_dag); False: Warshall's
# pivots always (the property tests compare the two).
STATIC_DAG = True
# Guarded closures on pair keys alone (_closure_keys) under a Logic whose every term is one opaque
# value (its ``opaque``: knowledge's FreeLogic, the co analysis); False: the guarded Warshall always
# (tests/engines/test_grid_keys_closure.py compares the two).
KEYS_ONLY = True


def bits(x: int) -> Iterator[int]:
    """Indices of the set bits of ``x``, lowest first."""
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def warshall(rows: dict[int, int], pivots: Iterable[int]) -> dict[int, int]:
    """The transitive closure of bitset ``rows`` (event → its successors), in place, Warshall's
    way through each event of ``pivots`` (every event a path may pass)."""
    for k in pivots:
        rk = rows.get(k)
        if not rk:
            continue
        bk = 1 << k
        for i, ri in rows.items():
            if ri & bk:
                rows[i] = ri | rk
    return rows


class Universe:
    """The events of one program with their execution guards, and the Logic that builds terms.
    ``implied[a]``: the events that execute whenever ``a`` does (every unconditional event, and
    the events of a's thread on all of a's paths) — an intermediate event of a composition in
    there adds nothing to the pair's guard."""

    __slots__ = ("ex", "lg", "live", "sure", "implied", "apart", "_implied_by")

    def __init__(self, ex: list[Guard], lg: Logic, implied: list[int] | None = None):
        self.ex = ex
        self.lg = lg
        self.live = sum(1 << i for i, g in enumerate(ex) if g is not False)
        self.sure = sum(1 << i for i, g in enumerate(ex) if g is True)
        self.implied = implied if implied is not None else [self.sure] * len(ex)
        # apart(a): the events that never execute together with a (a bitset), where the engine
        # knows them (a thread runs one of its paths); None: unknown
        self.apart: Callable[[int], int] | None = None
        self._implied_by: dict[int, int] = {}

    def implied_by(self, m: int) -> int:
        """The events whose execution implies m's (all of them when m always executes)."""
        x = self._implied_by.get(m)
        if x is None:
            x = self._implied_by[m] = sum(1 << j for j, imp in enumerate(self.implied) if (imp >> m) & 1)
        return x

    # guard combinators, folding constants
    def and2(self, a: Guard, b: Guard) -> Guard:
        if a is True:
            return b
        if b is True:
            return a
        if a is False or b is False:
            return False
        return self.lg.and_([a, b])

    def or2(self, a: Guard, b: Guard) -> Guard:
        if a is True or b is True:
            return True
        if a is False:
            return b
        if b is False:
            return a
        return self.lg.or_([a, b])

    def not1(self, a: Guard) -> Guard:
        if a is True:
            return False
        if a is False:
            return True
        return self.lg.not_(a)

    def all(self, gs: Iterable[Guard]) -> Guard:
        terms = []
        for g in gs:
            if g is False:
                return False
            if g is not True:
                terms.append(g)
        return True if not terms else terms[0] if len(terms) == 1 else self.lg.and_(terms)

    def any(self, gs: Iterable[Guard]) -> Guard:
        terms = []
        for g in gs:
            if g is True:
                return True
            if g is not False:
                terms.append(g)
        return False if not terms else terms[0] if len(terms) == 1 else self.lg.or_(terms)


def _has(must: dict[int, int], a: int, b: int) -> bool:
    return (must.get(a, 0) >> b) & 1 == 1


class ESet:
    __slots__ = ("u", "must", "may")

    def __init__(self, u: Universe, must: int = 0, may: dict[int, Term] | None = None):
        self.u = u
        self.must = must
        self.may = may or {}

    @staticmethod
    def of(u: Universe, m: dict[int, Guard]) -> ESet:
        must, may = 0, {}
        for k, g in m.items():
            if g is True:
                must |= 1 << k
            elif g is not False:
                may[k] = g
        return ESet(u, must & u.live, {k: g for k, g in may.items() if (u.live >> k) & 1})

    def guard(self, e: int) -> Guard:
        return True if (self.must >> e) & 1 else self.may.get(e, False)

    def items(self) -> Iterator[tuple[int, Guard]]:
        for e in bits(self.must):
            yield e, True
        yield from self.may.items()

    def __len__(self) -> int:
        return self.must.bit_count() + len(self.may)

    def __or__(self, o: ESet) -> ESet:
        must = self.must | o.must
        may = {}
        for src in (self.may, o.may):
            for k, g in src.items():
                if not (must >> k) & 1:
                    may[k] = self.u.or2(may[k], g) if k in may else g
        return ESet(self.u, must, may)

    def __and__(self, o: ESet) -> ESet:
        u = self.u
        may = {}
        for k, g in self.may.items():
            h = o.guard(k)
            if h is not False:
                may[k] = u.and2(g, h)
        for k, g in o.may.items():
            if (self.must >> k) & 1:
                may[k] = g
        return ESet(u, self.must & o.must, may)

    def __sub__(self, o: ESet) -> ESet:
        u = self.u
        must = self.must & ~o.must
        may = {}
        for k, g in o.may.items():
            if (must >> k) & 1:
                may[k] = u.not1(g)
        must &= ~sum(1 << k for k in may)
        for k, g in self.may.items():
            if (o.must >> k) & 1:
                continue
            h = o.may.get(k)
            may[k] = g if h is None else u.and2(g, u.not1(h))
        return ESet(u, must, {k: g for k, g in may.items() if g is not False})

    def __repr__(self) -> str:
        return f"ESet(must={sorted(bits(self.must))}, may={sorted(self.may)})"


class Rel:
    __slots__ = ("u", "must", "may")

    def __init__(self, u: Universe, must: dict[int, int] | None = None,
                 may: dict[tuple[int, int], Term] | None = None):
        self.u = u
        self.must = must if must is not None else {}
        self.may = may if may is not None else {}

    @staticmethod
    def of(u: Universe, m: dict[tuple[int, int], Guard]) -> Rel:
        must: dict[int, int] = {}
        may = {}
        for (a, b), g in m.items():
            if g is True:
                must[a] = must.get(a, 0) | (1 << b)
            elif g is not False:
                may[(a, b)] = g
        return Rel(u, must, may)

    def guard(self, a: int, b: int) -> Guard:
        return True if _has(self.must, a, b) else self.may.get((a, b), False)

    def pairs(self) -> Iterator[tuple[int, int]]:
        for a, row in self.must.items():
            for b in bits(row):
                yield a, b

    def items(self) -> Iterator[tuple[tuple[int, int], Guard]]:
        for p in self.pairs():
            yield p, True
        yield from self.may.items()

    def __len__(self) -> int:
        return sum(r.bit_count() for r in self.must.values()) + len(self.may)

    def is_static(self) -> bool:
        return not self.may

    def __or__(self, o: Rel) -> Rel:
        must = dict(self.must)
        for a, row in o.must.items():
            must[a] = must.get(a, 0) | row
        may = {}
        for src in (self.may, o.may):
            for k, g in src.items():
                if not _has(must, *k):
                    may[k] = self.u.or2(may[k], g) if k in may else g
        return Rel(self.u, must, may)

    def __and__(self, o: Rel) -> Rel:
        u = self.u
        must = {}
        for a, row in self.must.items():
            r = row & o.must.get(a, 0)
            if r:
                must[a] = r
        may = {}
        for k, g in self.may.items():
            h = o.guard(*k)
            if h is not False:
                may[k] = u.and2(g, h)
        for k, g in o.may.items():
            if _has(self.must, *k):
                may[k] = g
        return Rel(u, must, may)

    def __sub__(self, o: Rel) -> Rel:
        u = self.u
        must = {}
        for a, row in self.must.items():
            r = row & ~o.must.get(a, 0)
            if r:
                must[a] = r
        may = {}
        for k, g in o.may.items():
            if _has(must, *k):
                may[k] = u.not1(g)
                must[k[0]] &= ~(1 << k[1])
        for k, g in self.may.items():
            if _has(o.must, *k):
                continue
            h = o.may.get(k)
            may[k] = g if h is None else u.and2(g, u.not1(h))
        return Rel(u, {a: r for a, r in must.items() if r}, {k: g for k, g in may.items() if g is not False})

    def inverse(self) -> Rel:
        must: dict[int, int] = {}
        for a, row in self.must.items():
            bit = 1 << a
            for b in bits(row):
                must[b] = must.get(b, 0) | bit
        return Rel(self.u, must, {(b, a): g for (a, b), g in self.may.items()})

    def _by_src(self) -> dict[int, list[tuple[int, Term]]]:
        out: dict[int, list[tuple[int, Term]]] = {}
        for (a, b), g in self.may.items():
            out.setdefault(a, []).append((b, g))
        return out

    def seq(self, o: Rel) -> Rel:
        """Composition; an intermediate event must execute too (its guard joins the pair's,
        unless either end implies it)."""
        if not self.may and _diagonal(self.must):  # [S] ; o
            keep = self.must
            return Rel(self.u, {a: r for a, r in o.must.items() if a in keep},
                       {k: g for k, g in o.may.items() if k[0] in keep})
        if not o.may and _diagonal(o.must):  # self ; [S]
            cols = sum(o.must.values())
            return Rel(self.u, {a: r & cols for a, r in self.must.items() if r & cols},
                       {k: g for k, g in self.may.items() if (cols >> k[1]) & 1})
        u = self.u
        must: dict[int, int] = {}
        acc: dict[int, dict[int, list[Guard]]] = {}
        o_must = o.must
        o_may = o._by_src() if o.may else {}
        has_row = sum(1 << m for m in o_must) | sum(1 << m for m in o_may)
        for a, row in self.must.items():
            r = self._seq_static_row(a, row & has_row, o_must, o_may, acc)
            if r:
                must[a] = r
        if self.may:
            self._seq_may(o_must, o_may, has_row, acc)
        return _settle(u, must, acc)

    def _seq_static_row(self, a: int, row: int, o_must: dict[int, int],
                        o_may: dict[int, list[tuple[int, Term]]], acc) -> int:
        """Row a of self;o through the static pairs (a, m): the static part is returned, the
        guarded contributions go to acc[a][c]."""
        u = self.u
        ex, ia = u.ex, u.implied[a]
        r = 0
        acc_a = None
        for m in bits(row):
            om, dm = o_must.get(m, 0), o_may.get(m, ())
            exm = ex[m]
            if exm is True or (ia >> m) & 1:
                r |= om
                if dm:
                    acc_a = acc.setdefault(a, {}) if acc_a is None else acc_a
                    for c, g in dm:
                        acc_a.setdefault(c, []).append(g)
                continue
            if exm is False:
                continue
            ib = u.implied_by(m)
            r |= om & ib
            rest = om & ~ib
            if rest or dm:
                acc_a = acc.setdefault(a, {}) if acc_a is None else acc_a
                for c in bits(rest):
                    acc_a.setdefault(c, []).append(exm)
                for c, g in dm:
                    acc_a.setdefault(c, []).append(g if (ib >> c) & 1 else u.lg.and_([exm, g]))
        return r

    def _seq_may(self, o_must: dict[int, int], o_may: dict[int, list[tuple[int, Term]]],
                 has_row: int, acc) -> None:
        """self;o through the guarded pairs (a, m) of self."""
        u = self.u
        ex, implied, and_ = u.ex, u.implied, u.lg.and_
        for (a, m), g in self.may.items():
            if not (has_row >> m) & 1:
                continue
            exm = ex[m]
            if exm is False:
                continue
            om, dm = o_must.get(m, 0), o_may.get(m, ())
            acc_a = acc.setdefault(a, {})
            if exm is True or (implied[a] >> m) & 1:
                for c in bits(om):
                    acc_a.setdefault(c, []).append(g)
                for c, h in dm:
                    acc_a.setdefault(c, []).append(and_([g, h]))
                continue
            ib = u.implied_by(m)
            for c in bits(om):
                acc_a.setdefault(c, []).append(g if (ib >> c) & 1 else and_([g, exm]))
            for c, h in dm:
                acc_a.setdefault(c, []).append(and_([g, h]) if (ib >> c) & 1 else and_([g, exm, h]))

    def _via(self, a: int, m: int, c: int) -> Guard:
        """The guard an intermediate event m adds to a pair (a, c)."""
        implied = self.u.implied
        return True if (implied[a] >> m) & 1 or (implied[c] >> m) & 1 else self.u.ex[m]

    def restrict(self, dom: ESet | None, rng: ESet | None) -> Rel:
        """[dom] ; self ; [rng]."""
        out = self
        if dom is not None:
            out = lift(dom).seq(out)
        if rng is not None:
            out = out.seq(lift(rng))
        return out

    def closure(self, demand: dict[int, int] | None = None) -> Rel:
        """Transitive closure, Warshall style: on bitsets alone when every pair and every
        intermediate event is static, on guards otherwise. ``demand`` (rows of pairs; None: all):
        the guarded pairs wanted; the others may be missing or incomplete (cat/demand.py)."""
        u = self.u
        nodes = 0
        for a, row in self.must.items():
            nodes |= row | (1 << a)
        for a, b in self.may:
            nodes |= (1 << a) | (1 << b)
        if not self.may and not (nodes & ~u.sure):  # all static: bitsets
            if STATIC_DAG:
                out = _closure_dag(self.must)
                if out is not None:
                    return Rel(u, out, {})
            return Rel(u, warshall(dict(self.must), bits(nodes)), {})
        if self.is_order():
            out = self._closure_order()
            if out is not None:
                return out
        if KEYS_ONLY and keys_only(self):
            return closure_keys(self, nodes)
        return self._closure_guarded(nodes, demand)

    def is_order(self) -> bool:
        """Whether every pair is guarded by an order term x(a) < x(b) (the Logic's ``order``:
        fence.sc ranks), with one integer constant x(e) per event, and no pair is static."""
        order = getattr(self.u.lg, "order", None)
        if not order or not self.may or any(self.must.values()):
            return False
        var: dict[int, int] = {}
        for (a, b), g in self.may.items():
            xy = order.get(g) if type(g) is int else None
            if xy is None or var.setdefault(a, xy[0]) != xy[0] or var.setdefault(b, xy[1]) != xy[1]:
                return False
        return True

    def _closure_order(self) -> Rel | None:
        """The closure of a relation whose pairs are x(a) < x(b) (:meth:`is_order`), when it is
        the relation itself: every two pairs (a, k), (k, b), a ≠ b, are composed by a pair (a, b),
        or a and b never execute together (``Universe.apart``). Then along a path a → v1 → … → b
        (every event of it executed) x(a) < x(v1) < … < x(b), each pair (a, vi) is in the
        relation by induction, so (a, b) is, with its guard x(a) < x(b); a path back to a would
        need x(a) < x(a), so there is no pair (a, a). None when that cannot be shown."""
        apart = self.u.apart
        may = self.may
        succ: dict[int, list[int]] = {}
        for a, b in may:
            succ.setdefault(a, []).append(b)
        for a, ks in succ.items():
            away = None
            for k in ks:
                for b in succ.get(k, ()):
                    if b == a or (a, b) in may:
                        continue
                    if away is None:
                        away = apart(a) if apart is not None else 0
                    if not (away >> b) & 1:
                        return None
        return self

    def _closure_guarded(self, nodes: int, demand: dict[int, int] | None = None) -> Rel:  # noqa: C901 — Warshall's loops, static/guarded cases
        """Warshall on guarded pairs. Rows stay split: a path through pivot k between static
        pairs is static when k always executes or an end implies it, and those are propagated
        on bitsets; only pairs whose guard depends on the execution are built as terms. A
        guarded pair keeps its disjuncts as a list, joined into one disjunction only when a
        later pivot reads the pair (and at the end): the same disjunction as joining them two
        at a time, in far fewer terms. With ``demand`` (rows of the pairs wanted), a guarded pair
        neither of whose ends is a pivot still to come (pivots go last event first) is read by no
        later pivot: one not wanted is not built, and the guarded pairs returned are the wanted
        ones (every static pair is still computed)."""
        u = self.u
        ex, implied = u.ex, u.implied
        and2 = u.and2
        apart = u.apart or (lambda i: 0)
        rows = {a: r for a, r in self.must.items() if r}
        may: dict[int, dict[int, list]] = {}  # i → j → the disjuncts of the guard of (i, j)
        pred: dict[int, int] = {}  # k → the i with a may pair (i, k) (stale bits are skipped)
        for (a, b), g in self.may.items():
            may.setdefault(a, {})[b] = [g]
            pred[b] = pred.get(b, 0) | (1 << a)

        def cur(gs: list) -> Guard:
            if len(gs) > 1:
                gs[:] = [u.any(gs)]
            return gs[0]

        def add_static(i: int, x: int) -> None:
            new = x & ~rows.get(i, 0)
            if new:
                rows[i] = rows.get(i, 0) | new
                mi = may.get(i)
                if mi:
                    for j in [j for j in mi if (new >> j) & 1]:
                        del mi[j]

        def add(i: int, j: int, g: Guard) -> None:
            if g is False or (rows.get(i, 0) >> j) & 1:
                return
            if g is True:
                add_static(i, 1 << j)
                return
            mi = may.setdefault(i, {})
            old = mi.get(j)
            if old is None:
                mi[j] = [g]
                pred[j] = pred.get(j, 0) | (1 << i)
            else:
                old.append(g)

        # pivots last event first (any order gives the same closure; this one builds fewer terms
        # on kernels: grid-barrier-reuse's bco 13.6k Z3 nodes instead of 19.4k)
        fut = nodes  # the pivots still to come (a pair with an end among them may be read)
        want = demand.get if demand is not None else None

        def dead(i: int, j: int) -> bool:
            """A pair no later pivot reads and no consumer wants (never with no demand)."""
            return want is not None and not ((fut >> i) & 1 or (fut >> j) & 1 or (want(i, 0) >> j) & 1)

        for k in sorted(bits(nodes), reverse=True):
            fut = nodes & ((1 << k) - 1)
            rk = rows.get(k, 0)
            dk = [(j, cur(gs)) for j, gs in may[k].items()] if k in may else []
            if not rk and not dk:
                continue
            exk = ex[k]
            if exk is False:  # no path runs through an event that never executes
                continue
            impk = -1 if exk is True else u.implied_by(k)  # the j that imply k
            dpred = [(i, cur(may[i][k])) for i in bits(pred.get(k, 0)) if k in may.get(i, ())]
            for i in [i for i, r in rows.items() if (r >> k) & 1]:
                if exk is True or (implied[i] >> k) & 1:
                    add_static(i, rk)
                    if dk:
                        away = apart(i)
                        for j, g in dk:
                            if not (away >> j) & 1:
                                add(i, j, g)
                    continue
                add_static(i, rk & impk)
                # a guarded pair whose ends never run together is in no execution: not built
                # (nor one that is static already)
                for j in bits(rk & ~impk & ~rows.get(i, 0) & ~apart(i)):
                    add(i, j, exk)
                if dk:
                    away = apart(i)
                    for j, g in dk:
                        if not (away >> j) & 1 and not dead(i, j):
                            add(i, j, g if (impk >> j) & 1 else and2(exk, g))
            for i, gik in dpred:
                via_i = exk is True or (implied[i] >> k) & 1
                away = apart(i)
                for j in bits(rk & ~away):
                    if not dead(i, j):
                        add(i, j, gik if via_i or (impk >> j) & 1 else and2(gik, exk))
                for j, g in dk:
                    if not (away >> j) & 1 and not dead(i, j):
                        add(i, j, and2(gik, g) if via_i or (impk >> j) & 1 else u.all((gik, exk, g)))
        out = {}
        for i, mi in may.items():
            if want is not None:
                wi = want(i, 0)
                mi = {j: gs for j, gs in mi.items() if (wi >> j) & 1}
            for j, gs in mi.items():
                g = cur(gs)
                if g is True:
                    rows[i] = rows.get(i, 0) | (1 << j)
                elif g is not False:
                    out[(i, j)] = g
        return Rel(u, rows, out)

    def domain(self) -> ESet:
        u = self.u
        must = 0
        acc: dict[int, list[Guard]] = {}
        for a, row in self.must.items():
            if row & u.implied[a]:
                must |= 1 << a
            else:
                acc.setdefault(a, []).extend(u.ex[b] for b in bits(row))
        for (a, b), g in self.may.items():
            if not (must >> a) & 1:
                acc.setdefault(a, []).append(u.and2(g, u.ex[b]))
        may = {}
        for a, gs in acc.items():
            if (must >> a) & 1:
                continue
            g = u.any(gs)
            if g is True:
                must |= 1 << a
            elif g is not False:
                may[a] = g
        return ESet(u, must, may)

    def range(self) -> ESet:
        return self.inverse().domain()

    def __repr__(self) -> str:
        return f"Rel(must={sorted(self.pairs())}, may={sorted(self.may)})"


# The co analysis's closures (KEYS_ONLY): Rel.closure's case for a Logic of one opaque term.
def keys_only(rel: Rel) -> bool:
    """Whether every term the closure could see is the Logic's one ``opaque`` term (every
    guarded pair's, every event's guard not True or False): then which pairs the closure has,
    and which of them are static, is all there is to compute."""
    t = getattr(rel.u.lg, "opaque", None)
    if t is None:
        return False
    return (all(g is t for g in rel.may.values())
            and all(g is True or g is False or g is t for g in rel.u.ex))


def closure_keys(rel: Rel, nodes: int) -> Rel:
    """``Rel._closure_guarded`` on row bitsets, for :func:`keys_only` relations: the same
    pivots and the same static/guarded cases, each guarded pair's term the opaque one (any
    and/or of opaque terms is the opaque term, never True or False). Work per pivot and row,
    not per pivot, row and column."""
    u = rel.u
    ex, implied = u.ex, u.implied
    opaque = u.lg.opaque  # type: ignore[attr-defined]
    apart = u.apart or (lambda i: 0)
    rows = {a: r for a, r in rel.must.items() if r}
    may: dict[int, int] = {}  # i → the j with a guarded pair (i, j)
    for a, b in rel.may:
        may[a] = may.get(a, 0) | (1 << b)
    for k in sorted(bits(nodes), reverse=True):
        rk, dk = rows.get(k, 0), may.get(k, 0)
        if not rk and not dk:
            continue
        exk = ex[k]
        if exk is False:
            continue
        impk = -1 if exk is True else u.implied_by(k)
        dpred = [i for i, m in may.items() if (m >> k) & 1]
        for i in [i for i, r in rows.items() if (r >> k) & 1]:
            if exk is True or (implied[i] >> k) & 1:
                new = rk & ~rows[i]
                more = dk & ~apart(i) if dk else 0
            else:
                new = rk & impk & ~rows[i]
                more = ((rk & ~impk) | dk) & ~apart(i)
            row = rows[i] = rows[i] | new
            more &= ~row
            if i in may:
                may[i] = (may[i] & ~new) | more
            elif more:
                may[i] = more
        for i in dpred:
            more = (rk | dk) & ~apart(i) & ~rows.get(i, 0)
            if more:
                may[i] |= more
    out = {(i, j): opaque for i, m in may.items() for j in bits(m)}
    return Rel(u, rows, out)


def _closure_dag(must: dict[int, int]) -> dict[int, int] | None:
    """The transitive closure of static rows ``must`` when they form no cycle (None when they do:
    Warshall then), each row the union of its successors' closed rows, successors first (a
    depth-first post-order): work per pair of the relation, where Warshall's is per pivot and row
    (at the exchange's 1,024 threads, 20,000 events: 4 × 10^8 row tests). A successor already in
    the union through another one is skipped (its row is in it: a closed row is closed). The same
    rows as Warshall's (the closure of a relation is one), for the same keys."""
    done: dict[int, int] = {}
    onstack: set[int] = set()
    for root in must:
        if root in done:
            continue
        stack = [(root, bits(must[root]))]
        onstack.add(root)
        while stack:
            a, it = stack[-1]
            for b in it:
                if b in onstack:
                    return None  # a cycle
                if b not in done and b in must:
                    stack.append((b, bits(must[b])))
                    onstack.add(b)
                    break
            else:
                stack.pop()
                onstack.discard(a)
                row = must[a]
                acc = row
                via = 0  # what the successors' closed rows bring
                for b in bits(row):
                    if not (via >> b) & 1:
                        rb = done.get(b, 0)
                        via |= rb
                acc |= via
                if (acc >> a) & 1:
                    return None
                done[a] = acc
    return {a: done[a] for a in must}


def _settle(u: Universe, must: dict[int, int], acc: dict[int, dict[int, list[Guard]]]) -> Rel:
    may = {}
    for a, acc_a in acc.items():
        row = must.get(a, 0)
        for c, gs in acc_a.items():
            if (row >> c) & 1:
                continue
            g = gs[0] if len(gs) == 1 else u.any(gs)
            if g is True:
                row |= 1 << c
            elif g is not False:
                may[(a, c)] = g
        if row:
            must[a] = row
    return Rel(u, must, may)


def _diagonal(rows: dict[int, int]) -> bool:
    """Whether static rows are a subset of the identity (a lifted set)."""
    return all(r == 1 << a for a, r in rows.items())


def lift(s: ESet) -> Rel:
    return Rel(s.u, {e: 1 << e for e in bits(s.must)}, {(e, e): g for e, g in s.may.items()})


def cartesian(a: ESet, b: ESet) -> Rel:
    u = a.u
    must = {x: b.must for x in bits(a.must)} if b.must else {}
    may = {}
    for x in bits(a.must):
        for y, g in b.may.items():
            may[(x, y)] = g
    for x, g in a.may.items():
        for y in bits(b.must):
            may[(x, y)] = g
        for y, h in b.may.items():
            may[(x, y)] = u.and2(g, h)
    return Rel(u, must, may)


def identity(u: Universe) -> Rel:
    return lift(ESet(u, u.live))
