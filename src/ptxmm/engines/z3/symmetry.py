"""Symmetry breaking in the Z3 encoding: the canonical order of :mod:`ptxmm.semantics.symmetry`
over interchangeable threads, as constraints the queries whose goals the symmetry preserves assume
(the outcome enumeration, the condition, the stop sites) and the others do not (the model's flags:
a data race names two particular events)."""

from __future__ import annotations

from collections.abc import Sequence

import z3

from ...semantics.symmetry import SymClass
from .logic import Z3Logic


def breaking(classes: Sequence[SymClass], ex: list, co, lg: Z3Logic) -> list[z3.BoolRef]:
    """For each adjacent pair (a, b) of a class: a's first executed key position is not after b's
    (a thread executing none counts as last), and when both first execute key position p, b's
    key write there is not co-before a's. ``ex``: the events' execution guards; ``co``: the co
    relation (its ``guard(x, y)``)."""
    out: list[z3.BoolRef] = []
    for c in classes:
        firsts = [_firsts(keys, ex, lg) for keys in c.keys]
        for i in range(len(c.threads) - 1):
            fa, fb = firsts[i], firsts[i + 1]
            ka, kb = c.keys[i], c.keys[i + 1]
            for p in range(len(ka)):
                out.append(z3.Implies(fb[p], z3.Or(fa[:p + 1])))
                back = co.guard(kb[p], ka[p])
                if back is not False:
                    out.append(z3.Not(z3.And(fa[p], fb[p], lg.z3(back))))
    return [c for c in out if not z3.is_true(c)]


def _firsts(keys: tuple[int, ...], ex: list, lg: Z3Logic) -> list[z3.BoolRef]:
    """Per key position p: the thread executes key write p and none before it."""
    out, none_before = [], []
    for e in keys:
        x = lg.z3(ex[e])
        out.append(z3.And(x, *none_before) if none_before else x)
        none_before.append(z3.Not(x))
    return out
