"""Relation analysis: what every consistent execution must contain, known before any solving.

The relation algebra already splits every base and derived relation into its static part (must)
and its execution-dependent part (may). This module adds the one piece of knowledge that comes
from the *axioms*: an axiom ``empty(E \\ co)`` whose ``E`` does not depend on co (PTX's Coherence:
causality-ordered overlapping writes are co-ordered) makes ``must(E)`` a lower bound of co. Those
pairs need no solver variable, their reverse is impossible, and coherence of a thread's own
writes — all of co for a thread of 1,000 stores — is settled statically.

``E`` is evaluated with an *uninterpreted* logic: every existential (rf, co, sc, execution of a
conditional event) is an opaque term, so what comes out static holds in every execution."""

from __future__ import annotations

from lark import Token, Tree

from .cat.interp import evaluate_expr
from .cat.parser import Model
from .events import EventGraph
from .values import TRUE, Expr
from .vocab import Candidates, base_env


class _Opaque:
    __slots__ = ()


_TERM = _Opaque()


class FreeLogic:
    """Terms without meaning: any combination of terms is just another term."""

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

    def sc(self, f, g):
        return _TERM

    def cond(self, e: Expr):
        return _TERM

    def same_phase(self, a, b):
        return _TERM

    def count(self, guards, op, q):
        return _TERM


def _names(tree) -> set[str]:
    if isinstance(tree, Token):
        return {str(tree)}
    return {str(t) for t in tree.scan_values(lambda v: isinstance(v, Token))}


def _unwrap(t):
    """The grammar keeps one-child operator nodes (``union`` of one ``seq`` …): skip them."""
    while isinstance(t, Tree) and t.data in ("union", "seq", "diff", "inter", "cart") \
            and len(t.children) == 1:
        t = t.children[0]
    return t


def _is_co(t) -> bool:
    return (isinstance(t, Token) and str(t) == "co") or \
        (isinstance(t, Tree) and t.data == "name" and str(t.children[0]) == "co")


def _co_bounds(model: Model) -> list[tuple[int, Tree]]:
    """The E of every axiom ``empty (E \\ co)`` whose E does not depend on co."""
    depends = {"co"}
    for st in model.stmts:
        if st.kind in ("let", "letrec") and any(_names(e) & depends for e in st.exprs):
            depends |= set(st.names)
    out = []
    for i, st in enumerate(model.stmts):
        if st.kind != "axiom" or st.check != "empty":
            continue
        e = _unwrap(st.exprs[0])
        if isinstance(e, Tree) and e.data == "diff" and len(e.children) == 2 \
                and _is_co(_unwrap(e.children[1])) and not (_names(e.children[0]) & depends):
            out.append((i, e.children[0]))
    return out


def co_must(eg: EventGraph, model: Model, cand: Candidates) -> set[tuple[int, int]]:
    """Pairs of writes every consistent execution orders in co whenever both execute."""
    bounds = _co_bounds(model)
    if not bounds:
        return set()
    env = base_env(eg, FreeChoice(eg), cand)
    ev = eg.events
    pairs = set(cand.co)
    out: set[tuple[int, int]] = set()
    for at, e in bounds:
        r = evaluate_expr(model, env, e, at)
        for a, b in r.pairs():
            if (a, b) in pairs:
                out.add((a, b))
    return {(a, b) for a, b in out if (b, a) not in out and ev[a].kind == "W"}
