"""RMW chains in the Z3 encoding (:mod:`ptxmm.semantics.rmw_chains`): the writes of a chain location
get positions, a permutation of 0..n-1 over the n executed ones; ``co`` between two of them is
"earlier position" and the rf of each RMW read is "its write's position minus one" (the initial
write for position 0). No rf or co variable, no co transitivity: n integers and their distinctness
instead of n² Booleans and n³ clauses. A known co pair (relation analysis) orders the positions.
Writes that may not execute are handled (their count is a sum); :class:`.program.Z3Choice` hands
them over only with the counting lemmas (:data:`COUNTING`): without them, measured, the sum made
checks slower (the grid barrier at 6 blocks: 23 s plain, over 150 s chained)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import z3

from ...cat.relalg import Guard
from ...semantics.rmw_chains import Chain
from .capi import mk_int
from .logic import Z3Logic

# Implied constraints that make a chain's counting cheap (issue 40: a grid barrier's arrival count):
# each position k as a column — at most one write holds it, and it is held exactly when more than
# k writes execute — and, where the chain's writes add one constant c to the value they read, the
# value the RMW at position k reads when every write before it is such an add: init + c·k. Both
# follow from the positions (a permutation of the executed writes; each RMW reads the write one
# position before its own), so they remove no execution; without them the solver proves "some
# arrival reads n-1" by trying orders (a pigeonhole: exponential in the writes; 8 arrivals took
# seconds, 12 did not finish). False: the positions alone (the tests compare the two).
COUNTING = True


def _counted(init, c, k: int):
    """The value the RMW at position ``k`` of a chain of adds of ``c`` reads (``init``: the
    initial write's value); bit-vector arithmetic wraps as the hardware's does."""
    return init + c * k


class Ranks:
    """The positions of every chain's writes and the rf/co terms derived from them. ``adds``:
    per RMW write, the constant its write adds to the value its read read (None: not an add), and
    per chain's initial write its value's term (for :data:`COUNTING`)."""

    def __init__(self, chains: Mapping[str, Chain], ex: list[Guard], lg: Z3Logic,
                 co_known: Iterable[tuple[int, int]] = (), adds: Mapping[int, object] | None = None,
                 reads: Mapping[int, object] | None = None):
        self.lg, self.ex = lg, ex
        self.adds, self.reads = adds or {}, reads or {}
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
        if COUNTING and len(ws) > 1:
            self._counting(ch, ws)

    def _counting(self, ch: Chain, ws: list[int]) -> None:
        """The columns and the counter values of :data:`COUNTING` for the executable writes ``ws``."""
        z = self.lg.z3
        cols = [[self.pos[w] == k for w in ws] for k in range(len(ws))]
        sure = all(self.ex[w] is True for w in ws)
        for k, col in enumerate(cols):
            held = z3.Or(col)
            self.cs.append(z3.AtMost(*col, 1))
            # held exactly when more than k writes execute; then exactly k + 1 hold positions <= k
            more = True if sure else z3.PbGe([(z(self.ex[w]), 1) for w in ws], k + 1)
            self.cs.append(held if sure else held == more)
            below = [self.pos[w] <= k if self.ex[w] is True else z3.And(z(self.ex[w]), self.pos[w] <= k)
                     for w in ws]
            self.cs.append(z3.Implies(more, z3.PbEq([(b, 1) for b in below], k + 1)))
        read = {w: r for r, w in ch.pairs}
        steps = {w: self.adds.get(w) for w in ws}
        c = next((v for v in steps.values() if v is not None), None)
        init = self.reads.get(ch.init)
        if c is None or init is None:
            return
        pure = z3.BoolVal(True)  # every write at a position before k adds c
        for k, col in enumerate(cols):
            for w, at in zip(ws, col):
                if steps[w] is not None and steps[w].eq(c):
                    self.cs.append(z3.Implies(z3.And(at, pure), self.reads[read[w]] == _counted(init, c, k)))
            others = [at for w, at in zip(ws, col) if steps[w] is None or not steps[w].eq(c)]
            if others:
                pure = z3.And(pure, z3.Not(z3.Or(others)))

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
