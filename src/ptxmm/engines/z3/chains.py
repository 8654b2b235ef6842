"""RMW chains in the Z3 encoding (:mod:`ptxmm.semantics.rmw_chains`): the writes of a chain location
get positions, a permutation of 0..n-1 over the n executed ones; ``co`` between two of them is
"earlier position" and the rf of each RMW read is "its write's position minus one" (the initial
write for position 0). No rf or co variable, no co transitivity: n integers and their distinctness
instead of n² Booleans and n³ clauses. A known co pair (relation analysis) orders the positions.
Writes that may not execute are handled (their count is a sum); :class:`.program.Z3Choice` hands
them over only with the counting lemmas (:data:`COUNTING`): without them, measured, the sum made
checks slower (the grid barrier at 6 blocks: 23 s plain, over 150 s chained). Where a chain counts
(adds of one constant, constant resets), :data:`VALUE_BOUNDS` adds the converse: a read of a high
count has that many adds before it."""

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

# The converse lemma (issue 40, session 18): an RMW that reads at least M + c·j, where every
# write of the chain is an add of one constant c > 0 or writes a constant, M the largest of those
# constants and of the initial value, and M + c·(number of adds) does not wrap, has at least j of
# the chain's adds before it. Without it the solver proved "the block whose atomicAdd read n-1 is
# the last arrival, its atomicExch after every arrival" by trying orders (the grid barrier at 8
# blocks, its race query asked alone: 5.5 s without, 1.0 s with it; the whole check 22.5 -> 10.6
# CPU s, measured the same minute on the shared 2-core machine). Proof (the positions of
# :class:`Ranks`): let the RMW's write be at position k and j0 < k the position of the last
# write before it that is not an add (-1: the initial write); that write wrote v ≤ M, and each of
# the a writes between adds c, so the RMW reads v + c·a exactly (no wrap), ≥ M + c·j only when
# a ≥ j — and those a writes are adds before it. False: the positions and the counting lemmas
# alone (the tests compare the two).
VALUE_BOUNDS = True

# A write of a chain that does not execute has position -1 (issue 40, session 19). Its position
# is read nowhere else (co, rf, the ranges and distinctness are all guarded by its execution), so
# fixing it removes no execution and adds none; without it the solver could park a reset that
# does not run at any position k, which makes the column literal ``pos = k`` true for it and
# switches off the counter values of :data:`COUNTING` past k (their "every write before k adds c"
# counts such a write as one that does not): the grid barrier's hang query at 10 blocks then
# proved "someone reads n-1" by trying orders again (7,430 conflicts, 6.8 s; with it 81
# conflicts, 2.0 s, the liveness problem asked alone). False: the position stays free.
IDLE_POSITION = True


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
                 reads: Mapping[int, object] | None = None, written: Mapping[int, object] | None = None):
        self.lg, self.ex = lg, ex
        self.adds, self.reads, self.written = adds or {}, reads or {}, written or {}
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
            if w in sure:
                self.cs.append(inside)
            else:
                runs = self.lg.z3(self.ex[w])
                self.cs.append(z3.Implies(runs, inside))
                if IDLE_POSITION:
                    self.cs.append(z3.Implies(z3.Not(runs), p == -1))
        if len(sure) > 1:
            self.cs.append(z3.Distinct(*[self.pos[w] for w in sure]))
        for i, a in enumerate(maybe):
            for b in sure + maybe[i + 1:]:
                self.cs.append(z3.Implies(self._both(a, b), self.pos[a] != self.pos[b]))
        if COUNTING and len(ws) > 1:
            self._counting(ch, ws)
            if VALUE_BOUNDS:
                self._bounds(ch, ws)

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

    def _bounds(self, ch: Chain, ws: list[int]) -> None:
        """The lemma of :data:`VALUE_BOUNDS` for the executable writes ``ws``, where it applies:
        per RMW and per j from 1 to the number of adds other than its own, "it reads at least
        M + c·j (unsigned) → at least j of those adds execute at earlier positions"."""
        init = self.reads.get(ch.init)
        c = next((self.adds[w] for w in ws if self.adds.get(w) is not None), None)
        if c is None or init is None or not z3.is_bv_value(init) or c.as_long() == 0:
            return
        adds = [w for w in ws if self.adds.get(w) is not None]
        consts = [self.written.get(w) for w in ws if self.adds.get(w) is None]
        if any(not self.adds[w].eq(c) for w in adds) or \
                any(v is None or not z3.is_bv_value(v) for v in consts):
            return  # another step, or a write whose value is not a constant
        top = max([init.as_long()] + [v.as_long() for v in consts])
        step, width = c.as_long(), init.size()
        if top + step * len(adds) >= 1 << width:
            return  # the count could wrap
        z = self.lg.z3
        read = {w: r for r, w in ch.pairs}
        if any(self.reads[read[w]].size() != width for w in ws):
            return
        for w in ws:
            others = [a for a in adds if a != w]
            before = [(self.pos[a] < self.pos[w] if self.ex[a] is True
                        else z3.And(z(self.ex[a]), self.pos[a] < self.pos[w]), 1) for a in others]
            mine = [] if self.ex[w] is True else [z(self.ex[w])]
            for j in range(1, len(others) + 1):
                at_least = z3.UGE(self.reads[read[w]], z3.BitVecVal(top + step * j, width))
                self.cs.append(z3.Implies(z3.And(mine + [at_least]), z3.PbGe(before, j)))

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
