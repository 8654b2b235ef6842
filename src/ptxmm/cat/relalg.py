"""Sets and relations over events whose membership is a *guard*: Python ``True`` (static) or a Z3
Bool term (depends on the execution). Absent pairs are false. Operations fold constants, so the
parts of a model that do not depend on rf/co never reach the solver, and with every guard static
the very same code is the concrete algebra used by the brute-force engine and by explanations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Union

import z3

Guard = Union[bool, z3.BoolRef]


# Z3's Python And/Or/Not coerce and sort-check every argument; guards are always Bool terms of
# one context, so build them through the C API directly (about 7x faster), and skip the per-call
# error check of the generated bindings for these constructors, which cannot fail on well-sorted
# arguments.
def _raw(fn):
    try:
        return fn.__defaults__[0].f
    except (TypeError, IndexError, AttributeError):  # other binding layouts: the checked call
        return fn


_AND, _OR, _NOT = _raw(z3.Z3_mk_and), _raw(z3.Z3_mk_or), _raw(z3.Z3_mk_not)
_IMPLIES, _EQ, _LT = _raw(z3.Z3_mk_implies), _raw(z3.Z3_mk_eq), _raw(z3.Z3_mk_lt)


def _mk(fn, terms: list) -> z3.BoolRef:
    ctx = terms[0].ctx
    arr = (z3.Ast * len(terms))(*(t.as_ast() for t in terms))
    return z3.BoolRef(fn(ctx.ref(), len(terms), arr), ctx)


def mk_bool(name: str) -> z3.BoolRef:
    ctx = z3.main_ctx()
    r = ctx.ref()
    return z3.BoolRef(z3.Z3_mk_const(r, z3.Z3_mk_string_symbol(r, name), z3.Z3_mk_bool_sort(r)), ctx)


def mk_bv(name: str, width: int) -> z3.BitVecRef:
    ctx = z3.main_ctx()
    r = ctx.ref()
    return z3.BitVecRef(z3.Z3_mk_const(r, z3.Z3_mk_string_symbol(r, name), z3.Z3_mk_bv_sort(r, width)), ctx)


def mk_int(name: str) -> z3.ArithRef:
    ctx = z3.main_ctx()
    r = ctx.ref()
    return z3.ArithRef(z3.Z3_mk_const(r, z3.Z3_mk_string_symbol(r, name), z3.Z3_mk_int_sort(r)), ctx)


def int_lt(a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    return z3.BoolRef(_LT(a.ctx.ref(), a.as_ast(), b.as_ast()), a.ctx)


def g_and(a: Guard, b: Guard) -> Guard:
    if a is True:
        return b
    if b is True:
        return a
    if a is False or b is False:
        return False
    return _mk(_AND, [a, b])


def g_or(a: Guard, b: Guard) -> Guard:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return _mk(_OR, [a, b])


def g_implies(a: Guard, b: Guard) -> Guard:
    if a is False or b is True:
        return True
    if a is True:
        return b
    if b is False:
        return g_not(a)
    return z3.BoolRef(_IMPLIES(a.ctx.ref(), a.as_ast(), b.as_ast()), a.ctx)


def _nary(gs: Iterable[Guard], absorbing: bool, fn) -> Guard:
    """And (absorbing False) or Or (absorbing True) of guards, folding constants."""
    terms = []
    for g in gs:
        if g is absorbing:
            return absorbing
        if g is not (not absorbing):
            terms.append(g)
    if not terms:
        return not absorbing
    return terms[0] if len(terms) == 1 else _mk(fn, terms)


def g_all(gs: Iterable[Guard]) -> Guard:
    return _nary(gs, False, _AND)


def bv_eq(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    return z3.BoolRef(_EQ(a.ctx.ref(), a.as_ast(), b.as_ast()), a.ctx)


def assert_all(s: z3.Solver, gs: Iterable[Guard]) -> bool:
    """Assert guards through the C API; False if one is statically false."""
    ref = s.ctx.ref()
    for g in gs:
        if g is True:
            continue
        if g is False:
            return False
        z3.Z3_solver_assert(ref, s.solver, g.as_ast())
    return True


def g_not(a: Guard) -> Guard:
    if a is True:
        return False
    if a is False:
        return True
    return z3.BoolRef(_NOT(a.ctx.ref(), a.as_ast()), a.ctx)


def g_any(gs: Iterable[Guard]) -> Guard:
    return _nary(gs, True, _OR)


class ESet:
    __slots__ = ("m",)

    def __init__(self, m: dict[int, Guard] | None = None):
        self.m = {k: v for k, v in (m or {}).items() if v is not False}

    @classmethod
    def _of(cls, m: dict) -> ESet:
        """Construct from a map known to hold no False guard (no copy, no filter)."""
        s = object.__new__(cls)
        s.m = m
        return s

    def __or__(self, o: ESet) -> ESet:
        out = dict(self.m)
        for k, g in o.m.items():
            out[k] = g_or(out[k], g) if k in out else g
        return ESet._of(out)

    def __and__(self, o: ESet) -> ESet:
        return ESet._of({k: g_and(g, o.m[k]) for k, g in self.m.items() if k in o.m})

    def __sub__(self, o: ESet) -> ESet:
        return ESet({k: (g_and(g, g_not(o.m[k])) if k in o.m else g) for k, g in self.m.items()})

    def __repr__(self) -> str:
        return f"ESet({self.m})"


class Rel:
    __slots__ = ("m",)

    def __init__(self, m: dict[tuple[int, int], Guard] | None = None):
        self.m = {k: v for k, v in (m or {}).items() if v is not False}

    @classmethod
    def _of(cls, m: dict) -> Rel:
        """Construct from a map known to hold no False guard (no copy, no filter)."""
        r = object.__new__(cls)
        r.m = m
        return r

    @staticmethod
    def of_pairs(pairs: Iterable[tuple[int, int]]) -> Rel:
        return Rel({p: True for p in pairs})

    def __or__(self, o: Rel) -> Rel:
        out = dict(self.m)
        for k, g in o.m.items():
            out[k] = g_or(out[k], g) if k in out else g
        return Rel._of(out)

    def __and__(self, o: Rel) -> Rel:
        small, big = (self, o) if len(self.m) <= len(o.m) else (o, self)
        return Rel._of({k: g_and(g, big.m[k]) for k, g in small.m.items() if k in big.m})

    def __sub__(self, o: Rel) -> Rel:
        return Rel({k: (g_and(g, g_not(o.m[k])) if k in o.m else g) for k, g in self.m.items()})

    def inverse(self) -> Rel:
        return Rel._of({(b, a): g for (a, b), g in self.m.items()})

    def seq(self, o: Rel) -> Rel:
        by_src: dict[int, list[tuple[int, Guard]]] = {}
        for (a, b), g in o.m.items():
            by_src.setdefault(a, []).append((b, g))
        acc: dict[tuple[int, int], list[Guard]] = {}
        for (a, m), g1 in self.m.items():
            for b, g2 in by_src.get(m, ()):
                acc.setdefault((a, b), []).append(g_and(g1, g2))
        return Rel._of({k: g_any(gs) for k, gs in acc.items()})

    def restrict(self, dom: ESet | None, rng: ESet | None) -> Rel:
        out = {}
        for (a, b), g in self.m.items():
            if dom is not None:
                if a not in dom.m:
                    continue
                g = g_and(dom.m[a], g)
            if rng is not None:
                if b not in rng.m:
                    continue
                g = g_and(g, rng.m[b])
            out[(a, b)] = g
        return Rel(out)

    def closure(self) -> Rel:
        """Transitive closure, Warshall style, on the sparse guarded matrix."""
        m = dict(self.m)
        nodes = sorted({x for k in m for x in k})
        succ: dict[int, set[int]] = {}
        pred: dict[int, set[int]] = {}
        for a, b in m:
            succ.setdefault(a, set()).add(b)
            pred.setdefault(b, set()).add(a)
        for k in nodes:
            ins = list(pred.get(k, ()))
            outs = list(succ.get(k, ()))
            for i in ins:
                gik = m[(i, k)]
                for j in outs:
                    g = g_and(gik, m[(k, j)])
                    if g is False:
                        continue
                    old = m.get((i, j), False)
                    if old is True:
                        continue
                    m[(i, j)] = g_or(old, g)
                    succ.setdefault(i, set()).add(j)
                    pred.setdefault(j, set()).add(i)
        return Rel._of(m)

    def domain(self) -> ESet:
        acc: dict[int, list[Guard]] = {}
        for (a, _), g in self.m.items():
            acc.setdefault(a, []).append(g)
        return ESet({k: g_any(v) for k, v in acc.items()})

    def range(self) -> ESet:
        return self.inverse().domain()

    def is_static(self) -> bool:
        return all(g is True for g in self.m.values())

    def __repr__(self) -> str:
        return f"Rel({self.m})"


def lift(s: ESet) -> Rel:
    return Rel._of({(k, k): g for k, g in s.m.items()})


def cartesian(a: ESet, b: ESet) -> Rel:
    return Rel._of({(x, y): g_and(ga, gb) for x, ga in a.m.items() for y, gb in b.m.items()})
