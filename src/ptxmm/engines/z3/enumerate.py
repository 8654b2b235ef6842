"""Outcome enumeration's parts: the clause that excludes an outcome, and a formula that falls into
parts sharing no variable enumerated part by part (the outcomes are the product of the parts')."""

from __future__ import annotations

from itertools import product

import z3

from .capi import (
    _P_APP_ARG,
    _P_APP_DECL,
    _P_ASSERT,
    _P_AST_KIND,
    _P_DECL_KIND,
    _P_NUM_ARGS,
    _P_OR,
    _VP,
    _eq,
    _not,
)


class Enumeration:
    """The enumeration helpers of :class:`~ptxmm.engines.z3.problem.Z3Problem`."""

    def _block(self, s: z3.Solver, values: tuple[int, ...], which) -> None:
        """Assert in ``s`` that the observables ``which`` do not take ``values`` all at once."""
        ctx = self.lg.ctx.ref().value
        atoms = self._atoms
        lits = []
        for i, v in zip(which, values):
            a = atoms.get((i, v))
            if a is None:
                t = self.terms[i]
                a = atoms[(i, v)] = self.lg._own(ctx, _not(_eq(t, z3.BitVecVal(v, t.size()))).as_ast().value)
            lits.append(a)
        c = _P_OR(ctx, len(lits), (_VP * len(lits))(*lits))
        _P_ASSERT(ctx, s.solver.value, c)


    # -- a formula in parts that share no variable ----------------------------------------------
    def _parts(self, base: z3.AstVector) -> list[tuple[list[int], list[int], int]] | None:
        """The problem's assertions (``base``) and packed parts grouped by the variables they
        share, when at least two groups hold an observable: (assertions, observables, digit mask)
        per group. The models of the whole are then exactly the unions of one model per group,
        and every observable and witness digit depends on one group only, so the outcomes are the
        product of each group's outcomes. None when fewer than two groups hold an observable (the
        product would then be the plain enumeration of one group, a Z3 model per outcome and no
        .satenum: a group without an observable, such as the race query's guarded clause asserted
        before the enumeration, adds no outcome) or the witness reads integers (fence.sc ranks,
        barrier phases) or unspecified values from a model."""
        if self.ch.rank or self.ch.ph or self.ch.values.unspec:
            return None
        ctx = self.lg.ctx.ref().value
        asserts = [a.as_ast().value for a in base]
        reps = _groups(ctx, asserts + [p for _, _, p in self._elements])
        groups: dict[int | None, tuple[list[int], list[int], list[int]]] = {}
        for a, r in zip(asserts, reps):
            groups.setdefault(r, ([], [], [0]))[0].append(a)
        width, nb = self._layout.width, len(self._elements) - len(self.terms) - len(self._layout.reads)
        for k, ((i, j, _), r) in enumerate(zip(self._elements, reps[len(asserts):])):
            g = groups.setdefault(r, ([], [], [0]))
            g[2][0] |= ((1 << (j - i)) - 1) << (width - j)
            if nb <= k < nb + len(self.terms):
                g[1].append(k - nb)
        ground = groups.pop(None, ([], [], [0]))
        if sum(1 for _, o, _ in groups.values() if o) < 2:
            return None
        return [(a, o, mk[0]) for a, o, mk in groups.values()] + [([], [], ground[2][0])]

    def _product(self, parts, x: int, seen: set[tuple[int, ...]]):
        """Every outcome not in ``seen``: one per choice of an outcome in each part (``x``: a
        packed value of the whole, which gives the ground digits)."""
        *parts, (_, _, ground) = parts
        each = [self._part_outcomes(a, o, mask) for a, o, mask in parts]
        base = x & ground
        check = self.deadline.check
        for k, choice in enumerate(product(*each)):
            if not k & 63:  # the product may be astronomically long: the deadline is watched
                check()
            out = self._read(base + sum(choice), None)
            if out[0] not in seen:
                yield out

    def _part_outcomes(self, asserts: list[int], obs: list[int], mask: int) -> list[int]:
        """The packed digits (masked to the part's own) of one model per outcome of the part."""
        s = z3.SimpleSolver()
        ctx = self.lg.ctx.ref().value
        for a in asserts:
            _P_ASSERT(ctx, s.solver.value, a)
        lay, out = self._layout, []
        while self._solve(s):
            with self._reading():
                x = self._number(self._model(s)) & mask
            out.append(x)
            if not obs:
                break
            values = [(x >> (lay.width - lay.terms[i][1])) & ((1 << (lay.terms[i][1] - lay.terms[i][0])) - 1)
                      for i in obs]
            self._block(s, values, obs)
        return out


def _groups(ctx: int, roots: list[int]) -> list[int | None]:
    """For each root term (an AST pointer): the group of the constants it mentions (two roots that
    mention one constant are in one group), or None for a ground root. Groups are found by
    union-find over the constants; every term is visited once, iteratively."""
    uf = _UnionFind()
    rep: dict[int, int | None] = {}  # AST pointer → a constant under it, None: ground
    out = [_group_of(ctx, root, rep, uf) for root in roots]
    return [None if r is None else uf.find(r) for r in out]


def _group_of(ctx: int, root: int, rep: dict[int, int | None], uf: _UnionFind) -> int | None:
    stack = [root]
    while stack:
        a = stack[-1]
        if a in rep:
            stack.pop()
            continue
        n = _P_NUM_ARGS(ctx, a) if _P_AST_KIND(ctx, a) == z3.Z3_APP_AST else 0  # numerals: 0
        if n == 0:
            const = _P_AST_KIND(ctx, a) == z3.Z3_APP_AST and \
                _P_DECL_KIND(ctx, _P_APP_DECL(ctx, a)) == z3.Z3_OP_UNINTERPRETED
            rep[a] = uf.add(a) if const else None
            stack.pop()
            continue
        kids = [_P_APP_ARG(ctx, a, i) for i in range(n)]
        missing = [k for k in kids if k not in rep]
        if missing:
            stack += missing
            continue
        rep[a] = uf.join([rep[k] for k in kids])
        stack.pop()
    return rep[root]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def add(self, x: int) -> int:
        self.parent.setdefault(x, x)
        return x

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(self, xs: list[int | None]) -> int | None:
        """One group of every x that is not None (None when there is none)."""
        r = None
        for x in xs:
            if x is None:
                continue
            x = self.find(x)
            if r is None:
                r = x
            elif x != r:
                self.parent[x] = r
        return r

