"""Issue 40 (the neighbour exchange at 1,024 threads): ``relalg.STATIC_DAG`` — the closure of a
relation of static pairs with no cycle built successors first (``relalg._closure_dag``) rather
than by Warshall's pivots — gives the same rows as Warshall, on random relations over up to 40
events, acyclic (pairs forward in a random order) or not (a few pairs back); a cycle leaves it to
Warshall."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptxmm.cat import relalg
from ptxmm.cat.relalg import Rel, Universe, _closure_dag


def _relation(seed: int) -> tuple[Universe, dict[int, int]]:
    rnd = random.Random(seed)
    n = rnd.randint(1, 40)
    order = list(range(n))
    rnd.shuffle(order)
    density = rnd.choice([0.05, 0.1, 0.3])
    rows: dict[int, int] = {}
    for i in range(n):
        for j in range(i + 1, n):
            if rnd.random() < density:
                rows[order[i]] = rows.get(order[i], 0) | (1 << order[j])
    for _ in range(rnd.choice([0, 0, 1, 2])):  # pairs back: maybe a cycle
        a, b = rnd.randrange(n), rnd.randrange(n)
        rows[a] = rows.get(a, 0) | (1 << b)
    if rnd.random() < 0.2 and rows:  # a key with an empty row
        rows[rnd.randrange(n)] = rows.get(0, 0)
    u = Universe([True] * n, None, [(1 << n) - 1] * n)
    return u, rows


def _reference(rows: dict[int, int]) -> dict[int, int]:
    """Reachability by repeated composition until nothing changes."""
    out = dict(rows)
    while True:
        grown = {}
        for a, r in out.items():
            acc = r
            for b in relalg.bits(r):
                acc |= out.get(b, 0)
            grown[a] = acc
        if grown == out:
            return out
        out = grown


def _closure(u: Universe, rows: dict[int, int], dag: bool, monkeypatch) -> Rel:
    monkeypatch.setattr(relalg, "STATIC_DAG", dag)
    return Rel(u, dict(rows), {}).closure()


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_same_rows_as_warshall(monkeypatch, seed):
    u, rows = _relation(seed)
    fast = _closure(u, rows, True, monkeypatch)
    plain = _closure(u, rows, False, monkeypatch)
    assert (fast.must, fast.may) == (plain.must, plain.may) and fast.must == _reference(rows)


def test_acyclic_relations_take_the_dag_path_and_cycles_do_not():
    """A chain 0 → 1 → 2 and a pair 3 → 4: closed successors first; a cycle (and a pair of an event
    with itself): None, Warshall's."""
    assert _closure_dag({0: 0b10, 1: 0b100, 3: 0b10000}) == {0: 0b110, 1: 0b100, 3: 0b10000}
    assert _closure_dag({0: 0b10, 1: 0b1}) is None
    assert _closure_dag({2: 0b100}) is None


def test_the_generator_draws_both_kinds():
    dags = sum(_closure_dag(_relation(s)[1]) is not None for s in range(100))
    assert 20 <= dags <= 95, dags
