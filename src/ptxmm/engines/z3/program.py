"""The event graph encoded: its existential parts as Z3 variables (:class:`Z3Choice`: path
selectors, read values, rf, co, fence.sc ranks, barrier phases) and the well-formedness, final
values and observable terms the problem asserts over them (:class:`Encoding`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import z3

from ...cat.relalg import Guard, Universe
from ...ir.values import Const, Expr
from ...semantics import executions
from ...semantics.events import Event, EventGraph, Kind, final_reg
from ...semantics.outcomes import Observable
from ...semantics.rmw_chains import Chain
from ...semantics.vocab import Barriers, Candidates
from . import chains as chains_mod
from .capi import _at_most_one, _eq, mk_bool, mk_int
from .chains import Ranks
from .logic import Z3Logic
from .values import Values, _fit


def _exactly_one(vs: list) -> z3.BoolRef:
    """Exactly one of the Bool terms ``vs`` holds; none to choose from (a thread every path of which
    the unrolling bound cut) is False. z3-solver 4.x's PbEq does not take an empty list."""
    if not vs:
        return z3.BoolVal(False)
    return z3.PbEq([(v, 1) for v in vs], 1)


class Z3Choice:
    """The existential parts of one program's executions, as Z3 variables."""

    def __init__(self, eg: EventGraph, cand: Candidates, lg: Z3Logic,
                 chains: Mapping[str, Chain] | None = None, co_known: Iterable[tuple[int, int]] = ()):
        self.eg, self.lg = eg, lg
        self.cs: list = []  # well-formedness constraints
        self.vals = {e.eid: z3.BitVec(f"v{e.eid}", e.w) for e in eg.events if e.kind == Kind.R}
        self.values = Values(self.vals.__getitem__)
        self.sel: list[list[z3.BoolRef] | None] = []
        for t, paths in enumerate(eg.paths):
            if len(paths) == 1:
                self.sel.append(None)
                self.cs += [self.values.bool(a) for a in paths[0].assumes]
                continue
            sel = [mk_bool(f"path{t}_{k}") for k in range(len(paths))]
            self.sel.append(sel)
            self.cs.append(_exactly_one(sel))
            for k, p in enumerate(paths):
                self.cs += [z3.Implies(sel[k], self.values.bool(a)) for a in p.assumes]
        self.ex: list[Guard] = [self._exec(e) for e in eg.events]
        live = {i for i, g in enumerate(self.ex) if g is not False}
        # RMW chains (.chains): positions instead of rf/co variables on their locations whose
        # writes all surely execute (measured: with writes that may not, e.g. a grid barrier's
        # reset, the count of executed writes in the formula made checks slower, not faster)
        # (with the counting lemmas, .chains.COUNTING, those are taken too: the columns say how
        # many execute)
        chains = {loc: c for loc, c in (chains or {}).items()
                  if chains_mod.COUNTING or all(self.ex[w] is True for w in c.writes)}
        rk = self.ranks = Ranks(chains, self.ex, lg, co_known, *self._steps(chains)) if chains else None
        self.chains = tuple(sorted(chains))
        self.cs += rk.cs if rk else []
        self.rfv = {p: mk_bool(f"rf{p[0]}_{p[1]}") for p in cand.rf
                    if live.issuperset(p) and not (rk and rk.covers_rf(p[1]))}
        self.cov = {p: mk_bool(f"co{p[0]}_{p[1]}") for p in cand.co
                    if live.issuperset(p) and not (rk and rk.covers_co(*p))}
        self.rft = {p: lg.leaf(v) for p, v in self.rfv.items()}  # the same, as the Logic's terms
        self.cot = {p: lg.leaf(v) for p, v in self.cov.items()}
        self.rf_chain: dict[tuple[int, int], Guard] = {}  # the chains' rf and co, derived
        self.co_chain: dict[tuple[int, int], Guard] = {}
        if rk:
            self.rf_chain = {p: g for p in cand.rf if live.issuperset(p) and rk.covers_rf(p[1])
                             and (g := rk.rf(*p)) is not False}
            self.co_chain = {p: g for p in cand.co if live.issuperset(p) and rk.covers_co(*p)
                             and (g := rk.co(*p)) is not False}
        self.rank = {f: mk_int(f"sc{f}") for f in cand.scf if f in live}
        if len(self.rank) > 1:
            self.cs.append(z3.Distinct(*self.rank.values()))
        self.ph: dict[int, z3.ArithRef] = {}
        last: dict[tuple, z3.ArithRef] = {}
        for e in eg.events:
            if e.kind == Kind.B and "ARRIVE" in e.tags and e.barrier[1] is not None and e.eid in live:
                v = z3.Int(f"ph{e.eid}")
                self.cs.append(v >= 0)
                for k in e.paths:  # phases grow along each path (paths never run together)
                    key = (e.thread, tuple(map(repr, e.barrier[0])), k)
                    if key in last:
                        self.cs.append(v > last[key])
                    last[key] = v
                self.ph[e.eid] = v

    def _steps(self, chains: Mapping[str, Chain]) -> tuple[dict[int, z3.BitVecRef | None], dict, dict]:
        """Per chain RMW write, the constant it adds to the value its read read (None: another
        update, or one that is not a constant), the terms of the values the chains' reads
        read and their initial writes write (:data:`.chains.COUNTING`), and per RMW write the
        (simplified) term of the value it writes (:data:`.chains.VALUE_BOUNDS`)."""
        ev = self.eg.events
        adds: dict[int, z3.BitVecRef | None] = {}
        terms: dict[int, z3.BitVecRef] = {}
        written: dict[int, z3.BitVecRef] = {}
        for c in chains.values():
            terms[c.init] = self.values.bv(ev[c.init].value)
            for r, w in c.pairs:
                terms[r] = self.vals[r]
                written[w] = z3.simplify(self.values.bv(ev[w].value))
                step = z3.simplify(written[w] - self.vals[r])
                adds[w] = step if z3.is_bv_value(step) else None
        return adds, terms, written

    def _exec(self, e: Event) -> Guard:
        if e.thread < 0:
            return True
        lg = self.lg
        g: Guard = True
        sel = self.sel[e.thread]
        if sel is not None and len(e.paths) < len(sel):
            g = lg.or_([lg.leaf(sel[k]) for k in sorted(e.paths)])
        if e.cond != Const(1, 1):
            c = self.values.bool(e.cond)
            if z3.is_false(c):
                return False
            if not z3.is_true(c):
                x = mk_bool(f"x{e.eid}")
                self.cs.append(x == c)
                g = lg.leaf(x) if g is True else lg.and_([g, lg.leaf(x)])
        return g

    # the Choice protocol
    def exec(self, e: int) -> Guard:
        return self.ex[e]

    def rf(self, w: int, r: int) -> Guard:
        g = self.rft.get((w, r))
        return self.rf_chain.get((w, r), False) if g is None else g

    def co(self, a: int, b: int) -> Guard:
        g = self.cot.get((a, b))
        return self.co_chain.get((a, b), False) if g is None else g

    def scorder(self, f: int, g: int) -> Guard:
        if f in self.rank and g in self.rank:
            return self.lg.lt(self.rank[f], self.rank[g])
        return False

    def cond(self, e: Expr) -> Guard:
        return self.lg.leaf(self.values.bool(e))

    def path(self, t: int, k: int) -> Guard:
        sel = self.sel[t]
        return k == 0 if sel is None else self.lg.leaf(sel[k])

    def same_phase(self, a: int, b: int) -> Guard:
        pa, pb = self.ph.get(a), self.ph.get(b)
        if pa is None or pb is None:
            return self.eg.events[a].barrier[2] == self.eg.events[b].barrier[2]
        return self.lg.leaf(pa == pb)

    def count(self, guards: list[Guard], op: str, q: int) -> Guard:
        """A counted barrier phase completes with exactly q arrivals (phases are chosen)."""
        z = self.lg.z3
        total = z3.Sum([z3.If(z(g), 1, 0) for g in guards]) if guards else z3.IntVal(0)
        return self.lg.leaf(total == q)


class Encoding:
    """What :class:`~ptxmm.engines.z3.problem.Z3Problem` asserts beyond the model: well-formedness
    of its choice (``self.ch``) and the final values and terms of its observables."""

    def _wellformed(self, cand: Candidates, env) -> list:
        """Well-formedness as :mod:`ptxmm.semantics.executions` states it (rf, co, transitivity), each
        cardinality constraint in Z3's own form; counted barrier phases fill in arrival order."""
        ch, ev = self.ch, self.eg.events
        co = env["co"]
        u = co.u

        def same_value(w: int, r: int):
            return ch.lg.leaf(_eq(ch.vals[r], ch.values.bv(ev[w].value)))

        chained = ch.ranks.read_of if ch.ranks else ()
        cs = executions.rf_wellformed(self.eg, u, ch.rft, same_value, skip=chained)
        # a chain read reads the write its position names (its rf well-formed by construction)
        cs += [u.any([u.not1(g), same_value(w, r)]) for (w, r), g in ch.rf_chain.items()]
        cs += executions.co_wellformed(u, ch.cot)
        cs += self._transitive(cand, co, u)
        cs += self._phases()
        return [self._lower(c) for c in cs]

    def _lower(self, c):
        """A constraint of :mod:`ptxmm.semantics.executions` as a guard or a Z3 Bool."""
        if isinstance(c, executions.AtMostOne):
            return _at_most_one([self.lg.z3(g) for g in c.guards])
        if isinstance(c, executions.ExactlyOne):
            return _exactly_one([self.lg.z3(g) for g in c.guards])
        return c

    def _transitive(self, cand: Candidates, co, u) -> list:
        """co(a,b) ∧ co(b,c) → co(a,c) for every triple with an undecided pair."""
        cot = self.ch.cot

        def g(a, b):  # co(a, b) with both executed; a co variable implies that already (above)
            v = cot.get((a, b))
            if v is not None:
                return v
            return u.and2(u.ex[a], u.ex[b]) if co.guard(a, b) is True else False

        return executions.co_transitive(self.eg, u, cand.writes_at, self.ch.cov, g)

    def _phases(self) -> list:
        """At most q arrivals per phase; phase p > 0 only once phase p-1 has its q arrivals."""
        ch, ev = self.ch, self.eg.events
        if not ch.ph:
            return []
        bars = Barriers(self.eg, ch, Universe(ch.ex, ch.lg))
        out = []
        for a_id, pa in ch.ph.items():
            a = ev[a_id]
            q = a.barrier[1]
            same, prev = [], []
            for b_id, pb in ch.ph.items():
                gb = bars.same_barrier(ev[b_id], a)
                if gb is False:
                    continue
                gb = ch.lg.z3(gb)
                same.append(z3.If(z3.And(gb, pb == pa), 1, 0))
                prev.append(z3.If(z3.And(gb, pb == pa - 1), 1, 0))
            bad = z3.Or(z3.Sum(same) > q, z3.And(pa > 0, z3.Sum(prev) != q))
            out.append(z3.Not(z3.And(ch.lg.z3(ch.ex[a_id]), bad)))
        return out

    def _final_values(self, cand: Candidates, co) -> dict[str, dict[int, Guard]]:
        """Final-state observers read a co-maximal executed write (:mod:`ptxmm.semantics.executions`)."""
        ch, u, fin = self.ch, co.u, {}
        for o in self.obs:
            if o.loc is None or o.loc in fin:
                continue
            ws = executions.final_candidates(u, cand.writes_at[o.loc], lambda w: co.must.get(w, 0))
            fv = {w: ch.lg.leaf(mk_bool(f"fin_{o.loc}_{w}")) for w in ws}
            for c in executions.final_wellformed(u, fv, co.guard):
                self._put(self._lower(c))
            fin[o.loc] = fv
        return fin

    def _term(self, o: Observable) -> z3.BitVecRef:
        ch = self.ch
        if o.loc is not None:
            t = z3.BitVecVal(0, o.width)
            for w, v in self.fin[o.loc].items():
                t = z3.If(ch.lg.z3(v), _fit(ch.values.bv(self.eg.events[w].value), o.width), t)
            return t
        sel = ch.sel[o.thread]
        paths = range(len(self.eg.paths[o.thread]))
        if not paths:  # the bound cut every path of the thread: there is no execution at all
            return z3.BitVecVal(0, o.width)
        vals = [_fit(ch.values.bv(final_reg(self.eg, o.thread, o.ref.reg, k)), o.width) for k in paths]
        if sel is None:
            return vals[0]
        t = vals[-1]
        for k in reversed(range(len(vals) - 1)):
            t = z3.If(sel[k], vals[k], t)
        return t
