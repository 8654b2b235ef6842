"""The guarded relation algebra (cat/relalg.py) against naive references.

Random small universes (events that always, never or conditionally execute) and random guarded
relations. Guards are terms over three Boolean variables: the algebra's result, evaluated under
every assignment, must equal the plain set operation on the concrete relations of that
assignment (a pair needs both of its events executed; an intermediate event of a composition or
a path must execute too). The same algebra over Z3 terms (the engine's Logic) is checked against
a naive symbolic reference with a solver."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxmm.cat.relalg import ESet, Rel, Universe, bits, cartesian, identity, lift

N_VARS = 3
SIGMAS = list(itertools.product((False, True), repeat=N_VARS))


class TupleLogic:
    """Terms as nested tuples: ("v", i), ("and", ts), ("or", ts), ("not", t)."""

    def and_(self, terms):
        return ("and", tuple(terms))

    def or_(self, terms):
        return ("or", tuple(terms))

    def not_(self, t):
        return ("not", t)


def value(g, sigma) -> bool:
    if g is True or g is False:
        return g
    k = g[0]
    if k == "v":
        return sigma[g[1]]
    if k == "not":
        return not value(g[1], sigma)
    vals = [value(t, sigma) for t in g[1]]
    return all(vals) if k == "and" else any(vals)


# -- strategies -----------------------------------------------------------------------------------
VAR = st.integers(0, N_VARS - 1).map(lambda i: ("v", i))
GUARD = st.one_of(
    st.just(True), VAR, VAR.map(lambda v: ("not", v)),
    st.tuples(VAR, VAR).map(lambda p: ("and", p)), st.tuples(VAR, VAR).map(lambda p: ("or", p)))
EXEC = st.one_of(st.just(True), st.just(True), st.just(False), VAR)


@st.composite
def universes(draw, static: bool = False):
    n = draw(st.integers(1, 6))
    ex = draw(st.lists(st.just(True) if static else EXEC, min_size=n, max_size=n))
    u = Universe(ex, TupleLogic(), _implied(ex))
    return u


def _implied(ex) -> list[int]:
    """A sound ``implied``: the events that always run, the event itself, and events sharing its
    execution variable."""
    sure = sum(1 << i for i, g in enumerate(ex) if g is True)
    return [sure | (1 << a) | sum(1 << e for e, h in enumerate(ex) if h is not True and h == g)
            for a, g in enumerate(ex)]


@st.composite
def relations(draw, u: Universe, static: bool = False):
    n = len(u.ex)
    m = {}
    for a in range(n):
        for b in range(n):
            if draw(st.integers(0, 2)) == 0:
                m[(a, b)] = True if static else draw(GUARD)
    return Rel.of(u, m)


@st.composite
def esets(draw, u: Universe):
    n = len(u.ex)
    return ESet.of(u, {e: draw(GUARD) for e in range(n) if draw(st.booleans())})


# -- concrete semantics -------------------------------------------------------------------------
def executed(u: Universe, sigma) -> set[int]:
    return {e for e, g in enumerate(u.ex) if value(g, sigma)}


def pairs(r: Rel, sigma) -> set[tuple[int, int]]:
    ex = executed(r.u, sigma)
    out = set()
    for (a, b), g in r.items():
        if a in ex and b in ex and value(g, sigma):
            out.add((a, b))
    return out


def members(s: ESet, sigma) -> set[int]:
    ex = executed(s.u, sigma)
    return {e for e, g in s.items() if e in ex and value(g, sigma)}


def ref_seq(x, y):
    return {(a, c) for a, b in x for b2, c in y if b == b2}


def ref_closure(x):
    out = set(x)
    while True:
        more = out | ref_seq(out, out)
        if more == out:
            return out
        out = more


def well_formed(r: Rel) -> None:
    for a, b in r.may:
        assert not (r.must.get(a, 0) >> b) & 1, "a pair both static and guarded"
    for g in r.may.values():
        assert g is not True and g is not False


def agree(r: Rel, expected) -> None:
    well_formed(r)
    for sigma in SIGMAS:
        assert pairs(r, sigma) == expected(sigma), sigma


# -- properties ---------------------------------------------------------------------------------
SETTINGS = dict(max_examples=300, deadline=None, derandomize=True, database=None)


@settings(**SETTINGS)
@given(st.data())
def test_seq(data):
    u = data.draw(universes())
    r, s = data.draw(relations(u)), data.draw(relations(u))
    agree(r.seq(s), lambda sg: ref_seq(pairs(r, sg), pairs(s, sg)))


@settings(**SETTINGS)
@given(st.data())
def test_seq_with_lifted_sets(data):
    u = data.draw(universes())
    r, a, b = data.draw(relations(u)), data.draw(esets(u)), data.draw(esets(u))
    la, lb = lift(a), lift(b)
    agree(la.seq(r), lambda sg: {(x, y) for x, y in pairs(r, sg) if x in members(a, sg)})
    agree(r.seq(lb), lambda sg: {(x, y) for x, y in pairs(r, sg) if y in members(b, sg)})
    stat = ESet(u, a.must)
    agree(lift(stat).seq(r), lambda sg: {(x, y) for x, y in pairs(r, sg) if x in members(stat, sg)})
    agree(r.seq(lift(stat)), lambda sg: {(x, y) for x, y in pairs(r, sg) if y in members(stat, sg)})
    agree(r.restrict(a, b), lambda sg: {(x, y) for x, y in pairs(r, sg)
                                        if x in members(a, sg) and y in members(b, sg)})


@settings(**SETTINGS)
@given(st.data())
def test_closure(data):
    u = data.draw(universes())
    r = data.draw(relations(u))
    agree(r.closure(), lambda sg: ref_closure(pairs(r, sg)))


@st.composite
def universes_with_paths(draw):
    """Events of one "thread" with two paths: each runs always, on path v0 or on path ¬v0 (or
    under another variable); ``apart`` says which pairs lie on disjoint paths (never together)."""
    n = draw(st.integers(2, 7))
    on = st.sampled_from([True, ("v", 0), ("not", ("v", 0)), ("v", 1)])
    ex = draw(st.lists(on, min_size=n, max_size=n))
    u = Universe(ex, TupleLogic(), _implied(ex))
    other = {("v", 0): ("not", ("v", 0)), ("not", ("v", 0)): ("v", 0)}
    u.apart = lambda a: sum(1 << b for b, g in enumerate(ex) if other.get(ex[a]) == g)
    return u


@settings(**SETTINGS)
@given(st.data())
def test_closure_builds_no_pair_of_events_on_disjoint_paths(data):
    """A guarded pair of two events that never run together (``Universe.apart``) is in no
    execution: the closure does not build it, and still agrees with the reference everywhere."""
    u = data.draw(universes_with_paths())
    r = data.draw(relations(u))
    c = r.closure()
    agree(c, lambda sg: ref_closure(pairs(r, sg)))
    for a, b in c.may:
        if (a, b) not in r.may:
            assert not (u.apart(a) >> b) & 1, (a, b)


@settings(**SETTINGS)
@given(st.data())
def test_closure_static(data):
    """Every event always executes and every pair is static: the bitset path."""
    u = data.draw(universes(static=True))
    r = data.draw(relations(u, static=True))
    c = r.closure()
    assert c.is_static()
    agree(c, lambda sg: ref_closure(pairs(r, sg)))


@settings(**SETTINGS)
@given(st.data())
def test_closure_static_pairs_conditional_events(data):
    """Static pairs over events that may not execute: paths through them are guarded."""
    u = data.draw(universes())
    r = data.draw(relations(u, static=True))
    agree(r.closure(), lambda sg: ref_closure(pairs(r, sg)))
    agree(r.seq(r), lambda sg: ref_seq(pairs(r, sg), pairs(r, sg)))


@settings(**SETTINGS)
@given(st.data())
def test_set_operations(data):
    u = data.draw(universes())
    r, s = data.draw(relations(u)), data.draw(relations(u))
    agree(r | s, lambda sg: pairs(r, sg) | pairs(s, sg))
    agree(r & s, lambda sg: pairs(r, sg) & pairs(s, sg))
    agree(r - s, lambda sg: pairs(r, sg) - pairs(s, sg))
    agree(r.inverse(), lambda sg: {(b, a) for a, b in pairs(r, sg)})
    ex = lambda sg: executed(u, sg)  # noqa: E731
    agree(identity(u), lambda sg: {(e, e) for e in ex(sg)})
    for sigma in SIGMAS:
        assert members(r.domain(), sigma) == {a for a, _ in pairs(r, sigma)}
        assert members(r.range(), sigma) == {b for _, b in pairs(r, sigma)}


@settings(**SETTINGS)
@given(st.data())
def test_eset_operations(data):
    u = data.draw(universes())
    a, b = data.draw(esets(u)), data.draw(esets(u))
    for sigma in SIGMAS:
        ma, mb = members(a, sigma), members(b, sigma)
        assert members(a | b, sigma) == ma | mb
        assert members(a & b, sigma) == ma & mb
        assert members(a - b, sigma) == ma - mb
        assert pairs(cartesian(a, b), sigma) == {(x, y) for x in ma for y in mb}
        assert pairs(lift(a), sigma) == {(x, x) for x in ma}


# -- the same algebra over Z3 terms ------------------------------------------------------------
z3 = pytest.importorskip("z3")


def _z3_universe(u: Universe):
    """The universe and relation guards rebuilt over the Z3 engine's Logic (leaves: Z3 Bools)."""
    from ptxmm.engines.z3 import Z3Logic

    lg = Z3Logic()
    xs = [lg.leaf(z3.Bool(f"p{i}")) for i in range(N_VARS)]

    def conv(g):
        if g is True or g is False:
            return g
        k = g[0]
        if k == "v":
            return xs[g[1]]
        if k == "not":
            return lg.not_(conv(g[1]))
        ts = [conv(t) for t in g[1]]
        return lg.and_(ts) if k == "and" else lg.or_(ts)

    zu = Universe([conv(g) for g in u.ex], lg, u.implied)
    return zu, lg, lambda r: Rel(zu, dict(r.must), {k: conv(g) for k, g in r.may.items()})


def _naive_seq(u: Universe, x: dict, y: dict) -> dict:
    """Guards of x;y by definition: some intermediate m that executes, with both pairs."""
    acc: dict = {}
    for (a, m), g in x.items():
        for (m2, c), h in y.items():
            if m == m2:
                acc.setdefault((a, c), []).append(u.all((g, u.ex[m], h)))
    return {k: u.any(gs) for k, gs in acc.items()}


def _naive_closure(u: Universe, x: dict) -> dict:
    """Paths of length 1 .. n (enough: a longer path repeats an event)."""
    out, step = dict(x), dict(x)
    for _ in range(len(u.ex)):
        step = _naive_seq(u, step, x)
        for k, g in step.items():
            out[k] = u.or2(out.get(k, False), g)
    return out


def _equivalent(u: Universe, lg, got: Rel, want: dict) -> None:
    keys = set(dict(got.items())) | set(want)
    s = z3.Solver()
    for a, b in keys:
        both = u.and2(u.ex[a], u.ex[b])
        lhs, rhs = u.and2(both, got.guard(a, b)), u.and2(both, want.get((a, b), False))
        s.push()
        s.add(lg.z3(lhs) != lg.z3(rhs))
        assert s.check() == z3.unsat, (a, b)
        s.pop()


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_z3_terms_seq_and_closure(data):
    u0 = data.draw(universes())
    r0, s0 = data.draw(relations(u0)), data.draw(relations(u0))
    u, lg, conv = _z3_universe(u0)
    r, s = conv(r0), conv(s0)
    _equivalent(u, lg, r.seq(s), _naive_seq(u, dict(r.items()), dict(s.items())))
    _equivalent(u, lg, r.closure(), _naive_closure(u, dict(r.items())))


def test_bits():
    assert list(bits(0)) == []
    assert list(bits(0b101001)) == [0, 3, 5]


def test_every_logic_and_engine_completes_its_protocol():
    """The relation algebra and the axioms call only the Logic protocol's methods, the checker only
    the Engine protocol's: each implementation provides all of them."""
    import ptxmm
    from ptxmm.cat.relalg import Logic
    from ptxmm.engines import Engine, engine
    from ptxmm.engines.z3 import Z3Logic
    from ptxmm.semantics.executions import ConcreteLogic
    from ptxmm.semantics.knowledge import FreeLogic
    from ptxmm.semantics.outcomes import observables
    from ptxmm.semantics.vocab import candidates

    for lg in (Z3Logic(), ConcreteLogic(), FreeLogic()):
        assert isinstance(lg, Logic), type(lg).__name__
    prog = ptxmm.parse(".global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)", "t.ptx")
    from ptxmm.cat.parser import load_model
    from ptxmm.semantics.builder import build

    eg = build(prog)
    for name in ("z3", "brute"):
        pb = engine(name)(eg, load_model("ptx"), observables(eg), candidates(eg), flags=True)
        try:
            assert isinstance(pb, Engine), name
            assert pb.find(pb.condition(prog.condition.expr, lambda r: r.loc)) is not None
        finally:
            pb.close()


# -- the closure of an order relation (fence.sc ranks): its own closure, shown not assumed -------
@st.composite
def order_relations(draw):
    """A universe over the Z3 Logic, an integer x(e) per event, a relation whose pairs are
    x(a) < x(b), mostly closed under composition except at pairs drawn "apart" (never executed
    together: the background constraint says so), sometimes with a gap or a foreign guard."""
    u0 = draw(universes())
    u, lg, _ = _z3_universe(u0)
    n = len(u.ex)
    xs = [z3.Int(f"x{e}") for e in range(n)]
    apart = {(a, b) for a in range(n) for b in range(a + 1, n) if draw(st.integers(0, 3)) == 0}
    apart |= {(b, a) for a, b in apart}
    chosen = {(a, b) for a in range(n) for b in range(n) if a != b and draw(st.integers(0, 2)) == 0}
    if draw(st.integers(0, 3)) > 0:  # closed under composition, but not at apart pairs
        while True:
            more = {(a, c) for a, b in chosen for b2, c in chosen if b == b2 and a != c} - apart
            if more <= chosen:
                break
            chosen |= more
    may = {p: lg.lt(xs[p[0]], xs[p[1]]) for p in sorted(chosen)}
    if may and draw(st.integers(0, 9)) == 0:  # a guard that is not an order term: no shortcut
        p = sorted(may)[0]
        may[p] = lg.leaf(z3.Bool("other"))
    bits_apart = [sum(1 << b for a2, b in apart if a2 == a) for a in range(n)]
    u.apart = bits_apart.__getitem__
    background = [lg.z3(u.not1(u.and2(u.ex[a], u.ex[b]))) for a, b in apart]
    return u, lg, Rel(u, {}, may), background


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(order_relations())
def test_closure_of_an_order_relation_is_the_plain_closure(case):
    """Rel.closure's order shortcut (a relation of x(a) < x(b) pairs, closed under composition up
    to events that never run together, is its own closure) against the naive closure: equal for
    every pair, (a, a) included, in every execution where apart events never run together."""
    u, lg, r, background = case
    got = r.closure()
    want = _naive_closure(u, dict(r.items()))
    s = z3.Solver()
    s.add(*background)
    for a, b in set(dict(got.items())) | set(want):
        both = u.and2(u.ex[a], u.ex[b])
        lhs, rhs = u.and2(both, got.guard(a, b)), u.and2(both, want.get((a, b), False))
        s.push()
        s.add(lg.z3(lhs) != lg.z3(rhs))
        assert s.check() == z3.unsat, (a, b)
        s.pop()


def test_order_shortcut_is_taken_and_refused():
    """The shortcut returns the relation itself when it applies (fence.sc ranks), and the plain
    closure when a composed pair is missing between events that may run together."""
    u0 = Universe([True, True, True], None, None)
    u, lg, _ = _z3_universe(u0)
    xs = [z3.Int(f"x{e}") for e in range(3)]
    full = Rel(u, {}, {(a, b): lg.lt(xs[a], xs[b]) for a in range(3) for b in range(3) if a != b})
    assert full.closure() is full
    gap = Rel(u, {}, {(0, 1): lg.lt(xs[0], xs[1]), (1, 2): lg.lt(xs[1], xs[2])})
    assert gap._closure_order() is None and (0, 2) in gap.closure().may
    u.apart = lambda e: 0b101 & ~(1 << e)  # 0 and 2 never run together
    assert gap.closure() is gap
