"""The three axiom forms — acyclic, irreflexive, empty — checked on a concrete relation
(:func:`holds`) or encoded as constraints for a solver (:func:`encode`).

A pair of a relation is in it only when both events execute, so each constraint is about the
guard ``ex(a) ∧ ex(b) ∧ φ(a,b)``. For ``acyclic`` only edges inside a non-trivial strongly
connected component of the *possible* edges can lie on a cycle; those get the rank encoding
acyclic(r) ⇔ ∃ rank. r(a,b) → rank(a) < rank(b), built by the engine's Logic (``lg.acyclic``)."""

from __future__ import annotations

from .relalg import ESet, Guard, Rel, Universe, bits


def _edges(v: Rel) -> dict[int, list[int]]:
    succ: dict[int, list[int]] = {}
    for a, row in v.must.items():
        succ.setdefault(a, []).extend(bits(row))
    for a, b in v.may:
        succ.setdefault(a, []).append(b)
    return succ


def scc_ids(succ: dict[int, list[int]]) -> dict[int, int]:
    """Strongly connected components (iterative Tarjan): node → component id.

    Written here, not networkx's ``strongly_connected_components`` (which explanations use), for
    a reason: every check runs it, and importing networkx takes ~110 ms — more than a whole
    ``ptxmm check`` of a small test (~90 ms). tests/models/test_scc_and_shortest_paths.py compares
    it with networkx on random graphs."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    comp: dict[int, int] = {}
    stack: list[int] = []
    on: set[int] = set()
    counter = 0
    for root in list(succ):
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(succ.get(nxt, ()))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp[x] = v
                    if x == v:
                        break
    return comp


def cycle_edges(v: Rel) -> list[tuple[int, int]]:
    """Edges that may lie on a cycle: inside one strongly connected component, or self-loops."""
    succ = _edges(v)
    comp = scc_ids(succ)
    size: dict[int, int] = {}
    for c in comp.values():
        size[c] = size.get(c, 0) + 1
    return [(a, b) for a, bs in succ.items() for b in bs
            if comp[a] == comp[b] and (a == b or size[comp[a]] > 1)]


def holds(check: str, v: Rel | ESet) -> bool:
    """Concrete evaluation (every guard static)."""
    if check == "empty":
        return len(v) == 0
    assert isinstance(v, Rel)
    if check == "irreflexive":
        return not any((row >> a) & 1 for a, row in v.must.items()) and \
            not any(a == b for a, b in v.may)
    return not cycle_edges(v)


def _pair_guard(u: Universe, v: Rel, a: int, b: int) -> Guard:
    return u.all((u.ex[a], u.ex[b], v.guard(a, b)))


def encode(check: str, v: Rel | ESet) -> list[Guard]:
    """Constraints (or Python False) that together say the axiom holds."""
    u = v.u
    if check == "empty":
        if isinstance(v, ESet):
            return [u.not1(u.and2(u.ex[e], g)) for e, g in v.items()]
        return [u.not1(u.all((u.ex[a], u.ex[b], g))) for (a, b), g in v.items()]
    assert isinstance(v, Rel)
    if check == "irreflexive":
        return [u.not1(u.and2(u.ex[a], v.guard(a, a))) for a in _edges(v) if v.guard(a, a) is not False]
    edges = cycle_edges(v)
    if not edges:
        return []
    guarded = [(a, b, _pair_guard(u, v, a, b)) for a, b in edges]
    if all(g is True for _, _, g in guarded):
        return [False]
    out = [u.not1(g) for a, b, g in guarded if a == b]
    rest = [(a, b, g) for a, b, g in guarded if a != b and g is not False]
    if rest:
        out += u.lg.acyclic(rest)
    return out


def offending(check: str, v: Rel | ESet) -> dict[tuple[int, ...], Guard]:
    """The elements whose presence makes an ``empty`` or ``irreflexive`` check fail, each with the
    guard of its presence (both events executed): a pair (a, b) of a relation, (e,) of a set.
    Concrete relations give True guards only; a solver's give terms. The same description serves
    the brute-force engine (which keeps the True ones) and the Z3 engine (which queries them)."""
    u = v.u
    if check == "empty":
        if isinstance(v, ESet):
            return {(e,): u.and2(u.ex[e], g) for e, g in v.items() if g is not False}
        return {(a, b): _pair_guard(u, v, a, b) for (a, b), g in v.items() if g is not False}
    if check == "irreflexive":
        assert isinstance(v, Rel)
        return {(a, a): u.and2(u.ex[a], v.guard(a, a)) for a in _edges(v) if v.guard(a, a) is not False}
    raise ValueError(f"no elements for a {check} check")


def merge_symmetric(elements: dict[tuple[int, ...], Guard], either) -> dict[tuple[int, ...], Guard]:
    """Pairs (a, b) and (b, a) of a flag's relation report one unordered pair (a race of a with b
    is a race of b with a): their guards are joined with ``either(g1, g2)``."""
    out: dict[tuple[int, ...], Guard] = {}
    for k, g in elements.items():
        if len(k) == 2 and k[0] > k[1]:
            k = (k[1], k[0])
        out[k] = g if k not in out else either(out[k], g)
    return out
