"""The hand-written SCC of cat/axioms.py (kept off networkx for start-up time) against networkx,
and explanations' shortest paths (networkx) against a breadth-first search."""

from __future__ import annotations

from collections import deque

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxmm.cat.axioms import scc_ids
from ptxmm.explanation.evaluate import _shortest_path

graphs = st.dictionaries(st.integers(0, 11), st.lists(st.integers(0, 11), max_size=4), max_size=12)


@settings(max_examples=300, deadline=None)
@given(graphs)
def test_scc_ids_equal_networkx(succ):
    comp = scc_ids(succ)
    g = nx.DiGraph()
    g.add_nodes_from(succ)
    g.add_edges_from((a, b) for a, bs in succ.items() for b in bs)
    want = {frozenset(c) for c in nx.strongly_connected_components(g)}
    got: dict[int, set] = {}
    for v, c in comp.items():
        got.setdefault(c, set()).add(v)
    assert {frozenset(c) for c in got.values()} == want


def _bfs_len(succ, a, b):
    seen, q = {a: 0}, deque([a])
    while q:
        x = q.popleft()
        for y in succ.get(x, ()):
            if y == b:
                return seen[x] + 1
            if y not in seen:
                seen[y] = seen[x] + 1
                q.append(y)
    return None


@settings(max_examples=300, deadline=None)
@given(graphs, st.integers(0, 11), st.integers(0, 11))
def test_shortest_path_is_a_shortest_walk_of_the_graph(succ, a, b):
    p = _shortest_path(succ, a, b)
    n = _bfs_len(succ, a, b)
    if n is None:
        assert p is None
        return
    assert p[0] == a and p[-1] == b and len(p) - 1 == n
    assert all(y in succ.get(x, ()) for x, y in zip(p, p[1:]))
