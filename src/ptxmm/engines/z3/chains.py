"""RMW chains in the Z3 encoding (:mod:`ptxmm.semantics.rmw_chains`): the writes of a chain location
get positions, a permutation of 0..n-1 over the n executed ones; ``co`` between two of them is
"earlier position" and the rf of each RMW read is "its write's position minus one" (the initial
write for position 0). No rf or co variable, no co transitivity: n integers and their distinctness
instead of n² Booleans and n³ clauses. A known co pair (relation analysis) orders the positions.
Writes that may not execute are handled (their count is a sum), but :class:`.program.Z3Choice`
hands over only chains whose writes surely execute: measured, the sum made checks slower."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import z3

from ...cat.relalg import Guard
from ...semantics.rmw_chains import Chain
from .capi import mk_int
from .logic import Z3Logic


class Ranks:
    """The positions of every chain's writes and the rf/co terms derived from them."""

    def __init__(self, chains: Mapping[str, Chain], ex: list[Guard], lg: Z3Logic,
                 co_known: Iterable[tuple[int, int]] = ()):
        self.lg, self.ex = lg, ex
        self.pos: dict[int, z3.ArithRef] = {}
        self.read_of: dict[int, int] = {}  # RMW read → its write
        self.init_of: dict[int, int] = {}  # RMW read → its location's initial write
        self.cs: list = []
        for ch in chains.values():
            self._chain(ch)
        for a, b in co_known:
            if a in self.pos and b in self.pos:
                self.cs.append(z3.Implies(self._both(a, b), self.pos[a] < self.pos[b]))

    def _chain(self, ch: Chain) -> None:
        ws = [w for w in ch.writes if self.ex[w] is not False]
        for r, w in ch.pairs:
            if self.ex[w] is not False:
                self.read_of[r] = w
                self.init_of[r] = ch.init
        for w in ws:
            self.pos[w] = mk_int(f"pos{w}")
        sure = [w for w in ws if self.ex[w] is True]
        maybe = [w for w in ws if self.ex[w] is not True]
        n = self._count(ws)
        for w in ws:
            p = self.pos[w]
            inside = z3.And(p >= 0, p < n)
            self.cs.append(inside if w in sure else z3.Implies(self.lg.z3(self.ex[w]), inside))
        if len(sure) > 1:
            self.cs.append(z3.Distinct(*[self.pos[w] for w in sure]))
        for i, a in enumerate(maybe):
            for b in sure + maybe[i + 1:]:
                self.cs.append(z3.Implies(self._both(a, b), self.pos[a] != self.pos[b]))

    def _count(self, ws: list[int]):
        """How many of the writes ``ws`` execute (a number when all surely do)."""
        if all(self.ex[w] is True for w in ws):
            return len(ws)
        return z3.Sum([z3.If(self.lg.z3(self.ex[w]), 1, 0) for w in ws])

    def _both(self, a: int, b: int):
        z = self.lg.z3
        return z3.And(z(self.ex[a]), z(self.ex[b]))

    def _term(self, cond, *events: int) -> Guard:
        lg = self.lg
        gs = [self.ex[e] for e in events if self.ex[e] is not True]
        if any(g is False for g in gs):
            return False
        return lg.and_(gs + [lg.leaf(cond)]) if gs else lg.leaf(cond)

    # -- the derived relations -------------------------------------------------------------------
    def covers_co(self, a: int, b: int) -> bool:
        return a in self.pos and b in self.pos

    def co(self, a: int, b: int) -> Guard:
        return self._term(self.pos[a] < self.pos[b], a, b)

    def covers_rf(self, r: int) -> bool:
        return r in self.read_of

    def rf(self, w: int, r: int) -> Guard:
        """w → r for an RMW read r of a chain: w is the initial write and r's write is first, or
        w is the chain write one position before r's."""
        own = self.read_of[r]
        if w == self.init_of[r]:
            return self._term(self.pos[own] == 0, own)
        if w not in self.pos or w == own:
            return False
        return self._term(self.pos[w] + 1 == self.pos[own], w, own)


__all__ = ["Ranks"]
