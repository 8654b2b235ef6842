"""Base causality through fence.sc fences, read off the fence order (issue 40: the grid barrier).

A kernel whose threads synchronize only through ``fence.sc`` (``membar.gl``, ``__threadfence()``)
makes ``bco-sync = (po | sync | …)+`` a closure through the fences' Fence-SC order: every path
between two threads is po to a fence, fence-to-fence edges, po from a fence. Warshall's closure
builds, for each pair, a disjunction over every such path (through every third thread's fences:
at 16 blocks of the grid barrier 452k of the problem's 567k Z3 nodes). Under the model's own
Fence-SC axiom those paths collapse: a bco path between two fences puts them in the fence order.
So this module computes, in place of the closure,

    bco''(a, b) = po(a, b)  |  E(a, b)  |  OR over fences f ∈ A(a), f' ∈ B(b), f ≠ f':  x(f) < x(f')

where E is the operand's edges other than po (all between fences), A(a) is ``a`` (a fence) and the
fences po-after ``a``, B(b) ``b`` (a fence) and the fences po-before ``b``, and ``x(f) < x(f')`` is
the fence order's term (``sc``'s guard of (f, f'), with the execution of f and f' where ``a`` and
``b`` do not imply it). It applies (:func:`licensed`, :func:`fence_closure`) when

1. the model states ``empty ((([Fsc] ; B ; [Fsc]) & ms) \\ sc)`` as an axiom (ptx.cat's Fence-SC),
   ``B`` reaches the closure's name through unions only, and every occurrence of the closure in
   ``B``'s definitions is under monotone operators (union, sequence, ``?``, ``*``, ``+``,
   intersection, lift, inverse); every one of these names is bound once, by ``let``, and
   ``Fsc``, ``ms``, ``sc`` and ``po`` at most once, before the closure (so the closure and
   the axiom read the same values);
2. ``Fsc`` is a static set; ``po`` is static and transitive; every pair of the operand that is
   not a po pair is between two ``Fsc`` fences; every two fences that may execute together are
   ``ms`` (static) and ``sc`` holds between them with an order term ``x(f) < x(f')`` over one integer per
   fence (the engine's fence.sc ranks: then ``sc`` on executed fences is a strict total order);
   and the operand has that term among the disjuncts of its guard of (f, f') (``sc ⊆ sync``).

Why the axioms answer the same (for every execution X, not only the allowed ones). Write C for
the closure and C'' for the relation above. (i) C'' ⊆ C in every X: each disjunct is a path of
the operand (po, an E edge, or po? ; sc-edge ; po?). So B'' ⊆ B (B is monotone in C), and an X
violating Fence-SC with C'' violates it with C. (ii) If X satisfies Fence-SC with C'', then C ⊆
C'' in X: a path of C with no E edge is po (po is transitive); otherwise its non-po steps are
fence-to-fence edges (f1, f1'), …, (fk, fk') joined by po segments. Each E edge is in C'' ⊆ B'',
between ms fences, so Fence-SC puts it in sc: x(fi) < x(fi'); each po segment fi' po f(i+1)
likewise (po ⊆ C''): x(fi') < x(f(i+1)). So x(f1) < x(fk'), f1 ∈ A(a), fk' ∈ B(b): the pair is
in C''. Hence C = C'' in X, and every other axiom and flag sees the same relations. So X is
allowed under the rewritten model iff it is under the model, and raises the same flags: every
verdict, outcome and finding is the same (tests/engines/test_fence_order.py checks it against
the plain closure). :data:`FENCE_ORDER` False: the plain closure (the property tests compare the
two).

The model's axioms must all be asserted, which is the Z3 problem's case: ``interp.run`` applies it
only when its caller says so (``fence_order=True``, :class:`ptxmm.engines.z3.problem.Z3Problem`)."""

from __future__ import annotations

from .ast import (
    Axiom,
    Diff,
    Expr,
    Inter,
    Inverse,
    Let,
    LetRec,
    Lift,
    Name,
    Opt,
    Plus,
    Seq,
    Star,
    Union,
)
from .parser import Model
from .relalg import ESet, Rel, bits

FENCE_ORDER = True
# Without a demand (past interp.DEMAND_MAX_EVENTS), more than this many fence-pair disjuncts and
# the plain closure runs instead (its work is bounded by the operand's pairs, not the events').
MAX_TERMS = 2_000_000

_MONOTONE = (Union, Seq, Opt, Star, Plus, Inter, Lift, Inverse)


def licensed(model: Model) -> frozenset[int]:
    """The ids of the closure nodes of ``model`` that condition 1 allows to rewrite (cached on
    the model's compiled-expression cache)."""
    key = ("fence-order", id(model))
    hit = model.compiled.get(key)
    if hit is None:
        hit = model.compiled[key] = _licensed(model)
    return hit


def _licensed(model: Model) -> frozenset[int]:
    defs: dict[str, list[Expr | None]] = {}
    at: dict[str, int] = {}  # a name → the index of the statement that binds it (the last one)
    for i, st in enumerate(model.stmts):
        if isinstance(st, LetRec):
            for n in st.names:
                defs.setdefault(n, []).extend([None, None])  # never rewritten through
        elif isinstance(st, Let):
            for b in st.bindings:
                defs.setdefault(b.name, []).append(b.expr)
                at[b.name] = i
    once = {n: es[0] for n, es in defs.items() if len(es) == 1 and es[0] is not None}
    fixed = ("Fsc", "ms", "sc", "po")  # read at the closure and by the axiom: one value for both
    if any(n in defs and n not in once for n in fixed):
        return frozenset()
    out = set()
    for st in model.stmts:
        b = _fence_sc_operand(st) if isinstance(st, Axiom) else None
        if b is None:
            continue
        for name, node in _closures_under(b, once):
            ok = all(at.get(n, -1) < at[name] for n in fixed)  # bound before the closure
            if ok and _monotone_in(b, name, once, set(defs)):
                out.add(id(node))
    return frozenset(out)


def _fence_sc_operand(st: Axiom) -> str | None:
    """B when ``st`` is ``empty ((([Fsc] ; B ; [Fsc]) & ms) \\ sc)``."""
    e = st.expr
    if st.check != "empty" or not (isinstance(e, Diff) and len(e.args) == 2 and _is(e.args[1], "sc")):
        return None
    i = e.args[0]
    if not (isinstance(i, Inter) and len(i.args) == 2 and _is(i.args[1], "ms")):
        return None
    s = i.args[0]
    if not (isinstance(s, Seq) and len(s.args) == 3 and isinstance(s.args[1], Name)):
        return None
    if not all(isinstance(x, Lift) and _is(x.arg, "Fsc") for x in (s.args[0], s.args[2])):
        return None
    return s.args[1].name


def _is(e: Expr, name: str) -> bool:
    return isinstance(e, Name) and e.name == name


def _closures_under(b: str, once: dict[str, Expr]) -> list[tuple[str, Plus]]:
    """The names reached from ``b`` through unions of names (b itself included) whose one
    definition is a closure ``(…)+``, with that closure node."""
    out, seen, todo = [], set(), [b]
    while todo:
        n = todo.pop()
        if n in seen or n not in once:
            continue
        seen.add(n)
        e = once[n]
        if isinstance(e, Plus):
            out.append((n, e))
        elif isinstance(e, Union):
            todo += [a.name for a in e.args if isinstance(a, Name)]
        elif isinstance(e, Name):
            todo.append(e.name)
    return out


def _monotone_in(b: str, c: str, once: dict[str, Expr], bound: set[str]) -> bool:
    """Whether every occurrence of ``c`` in ``b``'s definition, and in the definitions of the
    names it mentions (each bound once), is under monotone operators only. A name bound more
    than once or by ``let rec`` on the way: no (not followed)."""
    seen: set[tuple[str, bool]] = set()

    def ok(e: Expr, mono: bool) -> bool:
        if isinstance(e, Name):
            if e.name == c:
                return mono
            if e.name not in bound:  # a base name: no definition to follow
                return True
            if e.name not in once:
                return False
            if (e.name, mono) in seen:
                return True
            seen.add((e.name, mono))
            return ok(once[e.name], mono)
        kids = [e.arg] if hasattr(e, "arg") else list(getattr(e, "args", ()))
        if isinstance(e, Diff):
            return ok(kids[0], mono) and all(ok(k, False) for k in kids[1:])
        return all(ok(k, mono and isinstance(e, _MONOTONE)) for k in kids)

    return b == c or (b in once and ok(once[b], True))


def fence_closure(ev, r: Rel, want: dict[int, int] | None) -> Rel | None:
    """C'' for the closure of ``r`` (the closure node's operand, evaluated in ``ev``), with the
    guarded pairs ``want`` asks for (every pair with None), or None when condition 2 fails."""
    env = ev.env
    try:
        fsc, po, ms, sc = env["Fsc"], env["po"], env["ms"], env["sc"]
    except KeyError:
        return None
    u = r.u
    if not (FENCE_ORDER and isinstance(fsc, ESet) and not fsc.may
            and isinstance(po, Rel) and not po.may and isinstance(ms, Rel) and isinstance(sc, Rel)):
        return None
    fences = fsc.must & u.live
    apart = u.apart or (lambda i: 0)
    if not (_po_closed(po) and _fences_ordered(r, fences, ms, sc, apart)
            and _between_fences(r, po, fences)):
        return None
    return _collapsed(r, po, sc, fences, want, apart)


def _po_closed(po: Rel) -> bool:
    """Whether po's static pairs are transitive (po+ = po: a fence po-after a po-successor of
    ``a`` is po-after ``a``), as the builder makes them (a thread's events in path order)."""
    rows = po.must
    for row in rows.values():
        for b in bits(row):
            if rows.get(b, 0) & ~row:
                return False
    return True


def _fences_ordered(r: Rel, fences: int, ms: Rel, sc: Rel, apart) -> bool:
    """Condition 2's fence part: every two fences that may run together are ms and in sc, whose
    pairs are order terms over one integer per fence (``Rel.is_order``), and the operand holds
    that term (the Logic's ``has_disjunct``: the Z3 engine's)."""
    has = getattr(r.u.lg, "has_disjunct", None)
    if has is None or (sc.may and not sc.is_order()) or any(sc.must.values()):
        return False
    for f in bits(fences):
        others = fences & ~(1 << f) & ~apart(f)
        if (ms.must.get(f, 0) & others) != others:
            return False
        for g in bits(others):
            t = sc.may.get((f, g))
            if t is None or not has(r.guard(f, g), t):
                return False
    return True


def _between_fences(r: Rel, po: Rel, fences: int) -> bool:
    """Condition 2's operand part: every pair that is not a po pair is between two fences."""
    for a, row in r.must.items():
        extra = row & ~po.must.get(a, 0)
        if extra and (not (fences >> a) & 1 or extra & ~fences):
            return False
    return all((fences >> a) & 1 and (fences >> b) & 1 for a, b in r.may)


def _collapsed(r: Rel, po: Rel, sc: Rel, fences: int, want: dict[int, int] | None, apart) -> Rel | None:
    """C'': the static pairs of the operand (po, static E edges: the composites of a static E edge
    are guarded pairs here, which in an execution satisfying Fence-SC hold as they do in C), and
    per wanted pair its guard."""
    u = r.u
    live, ex, implied = u.live, u.ex, u.implied
    must = {a: row & live for a, row in r.must.items() if (live >> a) & 1 and row & live}  # po, static E
    pos = po.must  # transitive (_po_closed)
    after: dict[int, list[int]] = {}  # a → the fences f with a = f or po+(a, f)
    before: dict[int, int] = {}  # b → the fences f' with f' = b or po+(f', b), a bitset
    for a in bits(live):
        succ = (pos.get(a, 0) | (1 << a)) & fences & live
        if succ:
            after[a] = list(bits(succ))
    for f in bits(fences & live):
        for b in bits(pos.get(f, 0) & live):
            before[b] = before.get(b, 0) | (1 << f)
        before[f] = before.get(f, 0) | (1 << f)
    if want is None and len(after) * len(before) * 4 > MAX_TERMS:
        return None
    may: dict[tuple[int, int], object] = {}
    for a, fs in after.items():
        cols = want.get(a, 0) if want is not None else live
        cols &= ~must.get(a, 0) & ~apart(a)
        for b in bits(cols):
            bf = before.get(b, 0)
            if not bf:
                continue
            g = _guard(u, a, b, fs, bf, sc, ex, implied, apart, r.may.get((a, b)))
            if g is True:
                must[a] = must.get(a, 0) | (1 << b)
            elif g is not False:
                may[(a, b)] = g
    for (a, b), g in r.may.items():  # E edges no fence path above reaches: kept as they are
        wanted = want is None or (want.get(a, 0) >> b) & 1
        if wanted and (a, b) not in may and not (must.get(a, 0) >> b) & 1:
            may[(a, b)] = g
    return Rel(u, must, may)


def _guard(u, a: int, b: int, fs: list[int], bf: int, sc: Rel, ex, implied, apart, edge):
    away = apart(a) | apart(b)
    terms = [] if edge is None else [edge]
    for f in fs:
        if (away >> f) & 1:
            continue
        exf = True if f == a or (implied[a] >> f) & 1 else ex[f]
        for g in bits(bf & ~(1 << f) & ~apart(f) & ~away):
            t = sc.may.get((f, g), False)
            if t is False:
                continue
            exg = True if g == b or (implied[b] >> g) & 1 else ex[g]
            terms.append(u.all([exf, exg, t]))
    return u.any(terms)
