"""Encoding of the three axiom forms — acyclic, irreflexive, empty — for a guarded relation.

``holds`` is the concrete check (every guard static); ``encode`` returns Z3 constraints. For
``acyclic``, only edges inside a non-trivial strongly connected component of the *possible*
edges can lie on a cycle (networkx finds them); those get an integer rank encoding:
acyclic(r) ⇔ ∃ rank. r(a,b) → rank(a) < rank(b)."""

from __future__ import annotations

from itertools import count

import networkx as nx

from .relalg import ESet, Guard, Rel, g_implies, g_not, int_lt, mk_int

_fresh = count()


def _graph(r: Rel) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_edges_from(r.m)
    return g


def cycle_edges(r: Rel) -> list[tuple[int, int]]:
    """Edges that lie inside a strongly connected component (self-loops included)."""
    g = _graph(r)
    comp = {}
    for i, scc in enumerate(nx.strongly_connected_components(g)):
        for v in scc:
            comp[v] = (i, len(scc))
    return [(a, b) for (a, b) in r.m if comp[a][0] == comp[b][0] and (comp[a][1] > 1 or a == b)]


def holds(check: str, v: Rel | ESet) -> bool:
    """Concrete evaluation (all guards True)."""
    if check == "empty":
        return not v.m
    assert isinstance(v, Rel)
    if check == "irreflexive":
        return not any(a == b for a, b in v.m)
    return not cycle_edges(v)


def encode(check: str, v: Rel | ESet) -> list[Guard]:
    """Z3 constraints (or Python False) that together say the axiom holds."""
    if check == "empty":
        return [g_not(g) for g in v.m.values()]
    assert isinstance(v, Rel)
    if check == "irreflexive":
        return [g_not(g) for (a, b), g in v.m.items() if a == b]
    edges = cycle_edges(v)
    if not edges:
        return []
    if all(v.m[e] is True for e in edges):
        return [False]
    tag = next(_fresh)
    rank = {}
    out: list[Guard] = []
    for a, b in edges:
        g = v.m[(a, b)]
        if a == b:
            out.append(g_not(g))
            continue
        for x in (a, b):
            if x not in rank:
                rank[x] = mk_int(f"rk{tag}_{x}")
        out.append(g_implies(g, int_lt(rank[a], rank[b])))
    return out
