"""The Z3 side of the every-launch-size race check (:mod:`ptxmm.queries.any_launch`): two
arbitrary distinct threads of an unknown one-dimensional launch ``<<<G, B>>>``, 1 ≤ G ≤ Gmax,
1 ≤ B ≤ Bmax, their ids free within it (GPUVerify's two-thread reduction).

Each thread's conditions and addresses are :mod:`ptxmm.ir.values` expressions over the leaves
that :mod:`ptxmm.queries.launch_paths` names: ``%tid.x`` (0), ``%ctaid.x`` (1), ``%ntid.x`` (2),
``%nctaid.x`` (3), and the thread's own unknowns (loaded values, ≥ 1000): thread ``k``'s leaf
``i`` is the constant ``t{k}_v{i}``; ``%ntid.x`` and ``%nctaid.x`` are the launch's B and G, one
pair for both threads. A query is satisfiable iff some launch within the bounds has two such
threads; its model is the witness (the smallest launch: G, then B, minimised). The terms are
integers (:mod:`.intterms`), exact: bit-vector index arithmetic defeats the solver."""

from __future__ import annotations

from collections.abc import Sequence

import z3

from ..._infra.records import record
from ...ir.values import Expr, ReadVal
from .intterms import IntTerms


@record
class PairQuery:
    """Two distinct threads such that every condition of ``first`` holds for thread 1 and every
    one of ``second`` for thread 2 (1-bit expressions); ``same_cta``: True (the two threads in one
    CTA), False (in two), None (either); ``overlap``: (offset1, size1, offset2, size2), the two
    byte ranges overlap; ``differ``: with ``overlap``, the two offsets also differ (two morally
    strong operations of the same size race only where they overlap partially), in every CTA
    placement (``"all"``) or only within one CTA (``"cta"``: the scope of both is the CTA)."""

    first: tuple[Expr, ...]
    second: tuple[Expr, ...]
    same_cta: bool | None = None
    overlap: tuple[Expr, int, Expr, int] | None = None
    differ: str | None = None


@record
class Witness:
    grid: int
    block: int
    threads: tuple[tuple[int, int], tuple[int, int]]  # (ctaid, tid) of thread 1 and thread 2


class TwoThreads:
    """The two threads and the launch as Z3 integers (:mod:`.intterms`: exact, the bit-vector
    terms where an operation may wrap); :meth:`find` answers a :class:`PairQuery`."""

    def __init__(self, widths: dict[int, int], grid_max: int, block_max: int, timeout_ms: int = 60000):
        self.G, self.B = z3.Int("G"), z3.Int("B")
        self.ids = [(z3.Int(f"t{k}_cta"), z3.Int(f"t{k}_tid")) for k in (1, 2)]
        self.grid_max, self.block_max = grid_max, block_max
        self.timeout_ms = timeout_ms
        self.side: list = []  # the ranges of the loaded values' unknowns
        self.terms = [IntTerms(self._leaf(k, widths)) for k in (1, 2)]
        base = [1 <= self.G, self.G <= grid_max, 1 <= self.B, self.B <= block_max]
        for cta, tid in self.ids:
            base += [0 <= cta, cta < self.G, 0 <= tid, tid < self.B]
        (c1, t1), (c2, t2) = self.ids
        base.append(z3.Or(c1 != c2, t1 != t2))
        self.base = base

    def _leaf(self, k: int, widths: dict[int, int]):
        cache: dict[int, tuple] = {}
        g, b = self.grid_max, self.block_max

        def leaf(r: ReadVal):
            if r.eid not in cache:
                cta, tid = self.ids[k - 1]
                fixed = {0: (tid, (0, b - 1)), 1: (cta, (0, g - 1)), 2: (self.B, (1, b)),
                         3: (self.G, (1, g))}
                if r.eid in fixed:
                    cache[r.eid] = fixed[r.eid]
                else:
                    w = widths.get(r.eid, r.w)
                    v = z3.Int(f"t{k}_v{r.eid}")
                    self.side += [0 <= v, v < (1 << w)]
                    cache[r.eid] = (v, (0, (1 << w) - 1))
            return cache[r.eid]

        return leaf

    def _formula(self, q: PairQuery) -> list:
        v1, v2 = self.terms
        fs = [v1.bool(e) for e in q.first] + [v2.bool(e) for e in q.second]
        (c1, _), (c2, _) = self.ids
        if q.same_cta is True:
            fs.append(c1 == c2)
        elif q.same_cta is False:
            fs.append(c1 != c2)
        if q.overlap is not None:
            o1, s1, o2, s2 = q.overlap
            a1, a2 = v1.val(o1)[0], v2.val(o2)[0]
            fs += [a1 < a2 + s2, a2 < a1 + s1]  # the byte ranges meet
            if q.differ == "all":
                fs.append(a1 != a2)
            elif q.differ == "cta":
                fs.append(z3.Or(a1 != a2, c1 != c2))
        return fs

    def find(self, q: PairQuery) -> Witness | None | str:
        """The smallest witness launch of ``q`` (None: no launch within the bounds has one;
        "unknown": the solver gave no answer in time)."""
        # the SMT core directly (no tactic preprocessing): z3-solver 4.16's default Solver took
        # 33 s on the histogram's race query at <<<1024, 1024>>> (5.4.1: 0.08 s), SimpleSolver 0.1 s
        s = z3.SimpleSolver()
        s.set("timeout", self.timeout_ms)
        fs = self._formula(q)
        s.add(*self.base, *self.side, *fs)
        r = s.check()
        if r == z3.unknown:
            return "unknown"
        if r == z3.unsat:
            return None
        # the smallest grid, then the smallest block, then each thread's smallest block and thread
        # ids in turn (a witness that does not depend on which model the solver found first)
        (c1, t1), (c2, t2) = self.ids
        for var, lo0 in ((self.G, 1), (self.B, 1), (c1, 0), (t1, 0), (c2, 0), (t2, 0)):
            lo, hi = lo0, s.model().eval(var).as_long()
            while lo < hi:
                mid = (lo + hi) // 2
                s.push()
                s.add(var <= mid)
                if s.check() == z3.sat:
                    hi = s.model().eval(var).as_long()
                else:
                    lo = mid + 1
                s.pop()
            s.add(var == hi)
            if s.check() != z3.sat:
                return "unknown"
        m = s.model()
        ev = [(m.eval(c).as_long(), m.eval(t).as_long()) for c, t in self.ids]
        return Witness(m.eval(self.G).as_long(), m.eval(self.B).as_long(), (ev[0], ev[1]))


def find_all(widths: dict[int, int], grid_max: int, block_max: int, queries: Sequence[PairQuery],
             timeout_ms: int = 60000) -> list:
    """:meth:`TwoThreads.find` of each query."""
    tt = TwoThreads(widths, grid_max, block_max, timeout_ms)
    return [tt.find(q) for q in queries]


__all__ = ["PairQuery", "TwoThreads", "Witness", "find_all"]
