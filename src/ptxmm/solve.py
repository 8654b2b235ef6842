"""Outcome enumeration and condition verdicts, with two engines over one model interpreter.

* ``z3``: existential rf/co/scorder/path choices become Z3 variables; the model is interpreted
  once over guarded relations (constant-folded) and its axioms asserted; distinct outcomes are
  enumerated with blocking clauses, keeping one witness execution per outcome.
* ``brute``: every candidate execution (paths × rf × partial co × SC-fence order) is built
  concretely and the same interpreter checks the axioms. Slow; the test oracle for ``z3``."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import z3

from .cat import axioms as ax
from .cat.interp import run as interp
from .cat.parser import Model, load_model
from .cat.relalg import (
    Guard,
    assert_all,
    bv_eq,
    g_all,
    g_and,
    g_any,
    g_implies,
    g_not,
    int_lt,
    mk_bool,
    mk_bv,
    mk_int,
)
from .errors import SemanticError
from .events import EventGraph, build, final_reg_expr
from .program import And, Cmp, MemRef, Not, Or, Program, RegRef, cond_refs, eval_cond, format_ref
from .result import CheckResult, Execution, Outcome, OutcomeInfo
from .values import WIDTH, Const, evaluate, signed, to_z3_bool, to_z3_value
from .vocab import Candidates, base_env, candidates

# ----- observables ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observable:
    key: str
    ref: RegRef | MemRef
    thread: int = -1
    ploc: str | None = None


def observables(eg: EventGraph, scope: str = "all") -> list[Observable]:
    """What an outcome records: registers loaded into (ld/atom destinations) and final values of
    locations written by the program (``scope="all"``), plus everything the condition names."""
    p = eg.program
    refs: list = []
    if scope == "all":
        for t in p.threads:
            seen = []
            for ins in t.instrs:
                if ins.op in ("ld", "atom") and ins.dst.name not in seen:
                    seen.append(ins.dst.name)
            refs += [RegRef(t.name, r) for r in seen]
        written = []
        for t in p.threads:
            for ins in t.instrs:
                if ins.op in ("st", "atom", "red") and ins.addr.base.__class__.__name__ == "Sym":
                    loc = p.location(ins.addr.base.name)
                    name = loc.alias_of or loc.name
                    if name not in written:
                        written.append(name)
        refs += [MemRef(n) for n in written if len(eg.loc_of_name.get(n, [])) == 1]
    if p.condition is not None:
        for r in cond_refs(p.condition.expr):
            r = canonical(p, eg, r)
            if r not in refs:
                refs.append(r)
    out = []
    for r in refs:
        if isinstance(r, RegRef):
            out.append(Observable(format_ref(r), r, thread=eg.thread_of(r.thread)))
        else:
            plocs = eg.loc_of_name.get(r.loc, [])
            if len(plocs) != 1:
                raise SemanticError(f"location {r.loc} has one copy per CTA; the condition cannot "
                                    "name its final value", None,
                                    "read it into a register in one thread instead")
            out.append(Observable(r.loc, r, ploc=plocs[0]))
    return out


def outcome_of(eg: EventGraph, obs: list[Observable], ex: Execution) -> Outcome:
    vals = dict(ex.values)
    final = dict(ex.final)
    out = []
    for o in obs:
        if o.ploc is not None:
            w = eg.events[final[o.ploc]]
            v = evaluate(w.value, vals)
        else:
            v = evaluate(final_reg_expr(eg, o.ref)[ex.paths[o.thread]], vals)
        out.append((o.key, signed(v)))
    return Outcome(tuple(out))


def verdict(quant: str, sat: list[bool]) -> bool:
    if quant == "exists":
        return any(sat)
    if quant == "~exists":
        return not any(sat)
    return all(sat)


def canonical(p: Program, eg: EventGraph, r: RegRef | MemRef) -> RegRef | MemRef:
    """A condition's reference with its thread named as the program names it (``1:r0`` →
    ``P1:r0``), i.e. as observables and outcomes key it."""
    return RegRef(p.threads[eg.thread_of(r.thread)].name, r.reg) if isinstance(r, RegRef) else r


def satisfies(p: Program, eg: EventGraph, o: Outcome) -> bool | None:
    if p.condition is None:
        return None
    vals = o.as_dict()
    env = {r: vals[format_ref(canonical(p, eg, r))] for r in cond_refs(p.condition.expr)}
    return eval_cond(p.condition.expr, env)


# ----- concrete choice (brute force, witnesses) -------------------------------------------------


class ConcreteChoice:
    def __init__(self, execd: set[int], rf: dict[int, int], co: set[tuple[int, int]],
                 sc: list[int], values: dict[int, int] | None = None):
        self.execd, self.rfm, self.cos = execd, rf, co
        self.values = values or {}
        self.rank = {f: i for i, f in enumerate(sc)}

    def exec(self, e: int) -> Guard:
        return e in self.execd

    def rf(self, w: int, r: int) -> Guard:
        return self.rfm.get(r) == w

    def co(self, a: int, b: int) -> Guard:
        return (a, b) in self.cos

    def sc(self, f: int, g: int) -> Guard:
        return f in self.rank and g in self.rank and self.rank[f] < self.rank[g]

    def cond(self, e) -> Guard:
        return bool(evaluate(e, self.values))

    def phase(self, arrive: int):
        return None  # concrete executions use occurrence indices as phases


def executed_events(eg: EventGraph, ex: Execution) -> set[int]:
    vals = dict(ex.values)
    out = set()
    for e in eg.events:
        if e.thread < 0:
            out.add(e.eid)
        elif ex.paths[e.thread] in e.paths and evaluate(e.guard, vals):
            out.add(e.eid)
    return out


def concrete_env(eg: EventGraph, ex: Execution, cand: Candidates | None = None) -> dict:
    cand = cand or candidates(eg)
    ch = ConcreteChoice(executed_events(eg, ex), {r: w for w, r in ex.rf}, set(ex.co), list(ex.sc),
                        dict(ex.values))
    return base_env(eg, ch, cand)


def flags_of(eg: EventGraph, model: Model, ex: Execution, cand: Candidates | None = None):
    ev = interp(model, concrete_env(eg, ex, cand))
    return [st.name for st, v in ev.flags if ax.holds(st.check, v) != st.negated]


# ----- Z3 engine --------------------------------------------------------------------------------


class _Z3Choice:
    """Existentials of one path combination (each thread's path fixed): execution guards fold to
    constants except where a value decides (failed cas, predicated instructions)."""

    def __init__(self, eg: EventGraph, cand: Candidates, s: z3.Solver, paths: tuple[int, ...]):
        self.eg, self.s, self.paths = eg, s, paths
        self._value: dict[int, z3.BitVecRef] = {}
        self.vals = {e.eid: mk_bv(f"v{e.eid}", WIDTH) for e in eg.events
                     if e.kind == "R" and (e.thread < 0 or paths[e.thread] in e.paths)}
        self.ex: list[Guard] = []
        for e in eg.events:
            g: Guard = True
            if e.thread >= 0:
                if paths[e.thread] not in e.paths:
                    g = False
                elif e.guard != Const(1):
                    g = to_z3_bool(e.guard, self.vals.__getitem__)
                    if not isinstance(g, bool):
                        x = z3.Bool(f"x{e.eid}")
                        s.add(x == g)
                        g = x
            self.ex.append(g)
        live = [i for i, g in enumerate(self.ex) if g is not False]
        self.live = set(live)
        self.rfv = {p: mk_bool(f"rf{p[0]}_{p[1]}") for p in cand.rf if self.live.issuperset(p)}
        self.cov = {p: mk_bool(f"co{p[0]}_{p[1]}") for p in cand.co if self.live.issuperset(p)}
        self.rank = {f: mk_int(f"sc{f}") for f in cand.scf if f in self.live}
        if len(self.rank) > 1:
            s.add(z3.Distinct(*self.rank.values()))
        # barriers with a thread count: which arrivals form a phase is chosen by the execution;
        # a thread's successive arrivals at one barrier take increasing phases
        self.ph: dict[int, z3.ArithRef] = {}
        last: dict[tuple, z3.ArithRef] = {}
        for e in eg.events:
            if e.kind == "B" and "ARRIVE" in e.tags and e.barrier[1] is not None and e.eid in self.live:
                v = z3.Int(f"ph{e.eid}")
                key = (e.thread, tuple(map(repr, e.barrier[0])))
                s.add(v >= 0 if key not in last else v > last[key])
                last[key] = v
                self.ph[e.eid] = v

    def exec(self, e):
        return self.ex[e]

    def rf(self, w, r):
        return self.rfv.get((w, r), False)

    def co(self, a, b):
        return self.cov.get((a, b), False)

    def sc(self, f, g):
        if f in self.rank and g in self.rank:
            return int_lt(self.rank[f], self.rank[g])
        return False

    def phase(self, arrive: int):
        return self.ph.get(arrive)

    def cond(self, e) -> Guard:
        if isinstance(e, Const):
            return bool(e.v)
        g = to_z3_bool(e, self.vals.__getitem__)
        return True if z3.is_true(g) else False if z3.is_false(g) else g

    def value(self, eid: int) -> z3.BitVecRef:
        v = self._value.get(eid)
        if v is None:
            v = self._value[eid] = to_z3_value(self.eg.events[eid].value, self.vals.__getitem__)
        return v


def _wellformed(eg: EventGraph, cand: Candidates, ch: _Z3Choice, s: z3.Solver) -> None:
    """rf: every executed read reads from exactly one executed write, with its value; co: only
    between executed writes, antisymmetric and transitive; the path's branch assumptions."""
    cs: list[Guard] = []
    by_read: dict[int, list[int]] = {}
    for w, r in ch.rfv:
        by_read.setdefault(r, []).append(w)
    for e in eg.events:
        if e.kind != "R" or e.eid not in ch.live:
            continue
        ws = by_read.get(e.eid, [])
        vs = [ch.rfv[(w, e.eid)] for w in ws]
        cs.append(g_implies(ch.ex[e.eid], g_any(vs)))
        if len(vs) > 1:
            cs.append(z3.AtMost(*vs, 1))
        for w, v in zip(ws, vs):
            cs.append(g_implies(v, g_all([ch.ex[w], ch.ex[e.eid], bv_eq(ch.vals[e.eid], ch.value(w))])))
    for (a, b), v in ch.cov.items():
        cs.append(g_implies(v, g_and(ch.ex[a], ch.ex[b])))
        if (b, a) in ch.cov and a < b:
            cs.append(g_not(g_and(v, ch.cov[(b, a)])))
    for ws in cand.writes_at.values():
        ws = [w for w in ws if "IW" not in eg.events[w].tags and w in ch.live]
        for a, b, c in itertools.permutations(ws, 3):
            if (a, b) in ch.cov and (b, c) in ch.cov and (a, c) in ch.cov:
                cs.append(g_implies(g_and(ch.cov[(a, b)], ch.cov[(b, c)]), ch.cov[(a, c)]))
    for t, k in enumerate(ch.paths):
        for a in eg.paths[t][k].assumes:
            cs.append(to_z3_bool(a, ch.vals.__getitem__))
    if not assert_all(s, cs):
        s.add(z3.BoolVal(False))


def _b(g: Guard):
    return z3.BoolVal(g) if isinstance(g, bool) else g


def _enumerate_z3(eg: EventGraph, model: Model, obs: list[Observable], want_flags: bool, goal=None):
    """All outcomes; or, with ``goal`` (a function from observable terms to a Z3 condition), only
    the first execution satisfying it — the verdict-only search of ``ptxmm test``."""
    cand = candidates(eg)
    found: list = []
    seen: set[Outcome] = set()
    for paths in itertools.product(*(range(len(p)) for p in eg.paths)):
        _solve_paths(eg, model, obs, want_flags, cand, paths, found, seen, goal)
        if goal is not None and found:
            break
    return found, cand


def _cond_z3(e, term):
    """A condition as a Z3 formula; ``term(ref)`` gives the bit-vector of a reference."""
    if isinstance(e, Cmp):
        a = term(e.lhs)
        b = z3.BitVecVal(e.rhs & ((1 << WIDTH) - 1), WIDTH) if isinstance(e.rhs, int) else term(e.rhs)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[e.op]
    if isinstance(e, And):
        return z3.And([_cond_z3(a, term) for a in e.args])
    if isinstance(e, Or):
        return z3.Or([_cond_z3(a, term) for a in e.args])
    if isinstance(e, Not):
        return z3.Not(_cond_z3(e.arg, term))
    return z3.BoolVal(True)


def _solve_paths(eg, model, obs, want_flags, cand, paths, found, seen, goal=None) -> None:
    s = z3.SimpleSolver()  # incremental, no tactic preprocessing: ~2.5x faster on litmus sizes
    ch = _Z3Choice(eg, cand, s, paths)
    _wellformed(eg, cand, ch, s)
    env = base_env(eg, ch, cand)
    ev = interp(model, env, flags=False)  # flags are computed on concrete witnesses (flags_of)
    for st, v in ev.axioms:
        for c in ax.encode(st.check, v):
            if c is False:
                return
            if c is not True:
                s.add(c)
    # final-state observers read a co-maximal write
    fin = {}
    co = env["co"]
    for o in obs:
        if o.ploc is None or o.ploc in fin:
            continue
        ws = [w for w in cand.writes_at[o.ploc] if w in ch.live]
        fv = {w: z3.Bool(f"fin_{o.ploc}_{w}") for w in ws}
        s.add(z3.PbEq([(v, 1) for v in fv.values()], 1))
        for w, v in fv.items():
            succ = [co.m[(w, w2)] for w2 in ws if (w, w2) in co.m]
            s.add(z3.Implies(v, z3.And(_b(ch.ex[w]), *[z3.Not(_b(g)) for g in succ])))
        fin[o.ploc] = fv
    terms = []
    for o in obs:
        if o.ploc is not None:
            t = z3.BitVecVal(0, WIDTH)
            for w, v in fin[o.ploc].items():
                t = z3.If(v, ch.value(w), t)
        else:
            t = to_z3_value(final_reg_expr(eg, o.ref)[paths[o.thread]], ch.vals.__getitem__)
        terms.append(t)

    def block(values) -> None:
        s.add(z3.Or([t != z3.BitVecVal(v, WIDTH) for t, v in zip(terms, values)]))

    if goal is not None:
        s.add(goal(dict(zip((o.key for o in obs), terms))))
        if s.check() == z3.sat:
            exe = _extract(eg, ch, s.model(), fin)
            found.append((outcome_of(eg, obs, exe), exe, []))
        return

    if not terms:
        if found:
            return
    for o in seen:
        block([v for _, v in o.values])
    while s.check() == z3.sat:
        m = s.model()
        exe = _extract(eg, ch, m, fin)
        outc = outcome_of(eg, obs, exe)
        flags = flags_of(eg, model, exe, cand) if want_flags else []
        found.append((outc, exe, flags))
        seen.add(outc)
        if not terms:
            return
        block([v for _, v in outc.values])


def _extract(eg: EventGraph, ch: _Z3Choice, m: z3.ModelRef, fin) -> Execution:
    ex = [z3.is_true(m.eval(_b(g), model_completion=True)) for g in ch.ex]
    rf = tuple(sorted(p for p, v in ch.rfv.items() if z3.is_true(m.eval(v, model_completion=True))))
    co = [p for p, v in ch.cov.items() if z3.is_true(m.eval(v, model_completion=True))]
    for w in eg.init.values():
        co += [(w, b) for b in range(len(eg.events)) if ex[b] and eg.events[b].kind == "W"
               and b != w and eg.events[b].ploc == eg.events[w].ploc]
    vals = tuple((r, m.eval(v, model_completion=True).as_long()) for r, v in ch.vals.items()
                 if ex[r])
    sc = tuple(sorted((f for f in ch.rank if ex[f]),
                      key=lambda f: m.eval(ch.rank[f], model_completion=True).as_long()))
    final = tuple((p, next(w for w, v in fv.items() if z3.is_true(m.eval(v, model_completion=True))))
                  for p, fv in fin.items())
    return Execution(ch.paths, rf, tuple(sorted(co)), vals, sc, final)


# ----- brute-force engine -----------------------------------------------------------------------


def _partial_orders(ws: list[int]):
    """All strict partial orders on ws, as sets of pairs (transitively closed)."""
    pairs = list(itertools.combinations(ws, 2))
    for choice in itertools.product((0, 1, 2), repeat=len(pairs)):
        rel = set()
        for (a, b), c in zip(pairs, choice):
            if c == 1:
                rel.add((a, b))
            elif c == 2:
                rel.add((b, a))
        if all((a, d) in rel for (a, b) in rel for (c, d) in rel if b == c):
            yield rel


def _resolve_values(eg: EventGraph, rf: dict[int, int]) -> dict[int, int] | None:
    vals: dict[int, int] = {}
    busy: set[int] = set()

    def val_of(r: int) -> int | None:
        if r in vals:
            return vals[r]
        if r in busy or r not in rf:
            return None
        busy.add(r)
        w = eg.events[rf[r]]
        from .values import reads_of

        sub = {}
        for x in reads_of(w.value):
            v = val_of(x)
            if v is None:
                return None
            sub[x] = v
        vals[r] = evaluate(w.value, sub)
        busy.discard(r)
        return vals[r]

    for r in rf:
        if val_of(r) is None:
            return None
    return vals


def _enumerate_brute(eg: EventGraph, model: Model, obs: list[Observable], want_flags: bool):
    cand = candidates(eg)
    found: dict[Outcome, tuple] = {}
    ev = eg.events
    for paths in itertools.product(*(range(len(p)) for p in eg.paths)):
        active = [e for e in ev if e.thread < 0 or paths[e.thread] in e.paths]
        act_ids = {e.eid for e in active}
        reads = [e.eid for e in active if e.kind == "R"]
        opts = [[None] + [w for w, r2 in cand.rf if r2 == r and w in act_ids] for r in reads]
        for rfc in itertools.product(*opts):
            rf = {r: w for r, w in zip(reads, rfc) if w is not None}
            vals = _resolve_values(eg, rf)
            if vals is None:
                continue
            full = {r: vals.get(r, 0) for r in reads}
            execd = {e.eid for e in active if e.thread < 0 or evaluate(e.guard, full)}
            if any((r in execd) != (r in rf) for r in reads):
                continue
            if any(w not in execd for w in rf.values()):
                continue
            if not all(evaluate(a, full) for t, k in enumerate(paths)
                       for a in eg.paths[t][k].assumes):
                continue
            per_loc = []
            for ws in cand.writes_at.values():
                live = [w for w in ws if w in execd and "IW" not in ev[w].tags]
                per_loc.append(list(_partial_orders(live)))
            scf = [f for f in cand.scf if f in execd]
            for cos in itertools.product(*per_loc):
                co = set().union(*cos) if cos else set()
                for w in eg.init.values():
                    co |= {(w, b) for b in execd if ev[b].kind == "W" and b != w
                           and ev[b].ploc == ev[w].ploc}
                for sc in itertools.permutations(scf):
                    ch = ConcreteChoice(execd, rf, co, list(sc), full)
                    res = interp(model, base_env(eg, ch, cand), flags=False)
                    if not all(ax.holds(st.check, v) for st, v in res.axioms):
                        continue
                    exe0 = Execution(paths, tuple(sorted((w, r) for r, w in rf.items())),
                                     tuple(sorted(co)), tuple(sorted(vals.items())), sc)
                    fin_locs = sorted({o.ploc for o in obs if o.ploc is not None})
                    maxes = [[w for w in cand.writes_at[p] if w in execd and
                              not any((w, w2) in co for w2 in execd)] for p in fin_locs]
                    for fc in itertools.product(*maxes):
                        exe = Execution(exe0.paths, exe0.rf, exe0.co, exe0.values, exe0.sc,
                                        tuple(zip(fin_locs, fc)))
                        o = outcome_of(eg, obs, exe)
                        if o not in found:
                            flags = flags_of(eg, model, exe, cand) if want_flags else []
                            found[o] = (o, exe, flags)
    return list(found.values()), cand


# ----- public entry -----------------------------------------------------------------------------


def check(prog: Program, model: str | Model = "ptx", *, engine: str = "z3", unroll: int = 2,
          observe: str = "all", flags: bool = True, verdict_only: bool = False) -> CheckResult:
    """Enumerate every outcome of ``prog`` the model allows and judge its condition.

    ``verdict_only``: decide the condition with one satisfiability search per path combination
    (stopping at the first witness) instead of enumerating outcomes; ``outcomes`` then holds at
    most that witness."""
    t0 = time.perf_counter()
    m = load_model(model) if isinstance(model, str) else model
    eg = build(prog, unroll=unroll)
    obs = observables(eg, observe)
    want_flags = flags and any(st.kind == "flag" for st in m.stmts)
    holds = None
    if verdict_only and prog.condition is not None and engine == "z3":
        cond = prog.condition

        # exists/~exists: is there an execution satisfying the condition? forall: one violating it?
        def goal(terms):
            c = _cond_z3(cond.expr, lambda r: terms[format_ref(canonical(prog, eg, r))])
            return z3.Not(c) if cond.quantifier == "forall" else c

        found, _ = _enumerate_z3(eg, m, obs, False, goal)
        witness = bool(found)
        holds = {"exists": witness, "~exists": not witness, "forall": not witness}[cond.quantifier]
    else:
        run = _enumerate_z3 if engine == "z3" else _enumerate_brute
        found, _ = run(eg, m, obs, want_flags)
    infos = [OutcomeInfo(o, satisfies(prog, eg, o), exe, fl) for o, exe, fl in found]
    infos.sort(key=lambda i: i.outcome.values)
    if prog.condition is not None and holds is None:
        holds = verdict(prog.condition.quantifier, [bool(i.satisfies) for i in infos])
    return CheckResult(prog, m.name, infos, holds, time.perf_counter() - t0, engine,
                       eg.cut_paths, eg.awaits, unroll, len(eg.events),
                       tuple(o.key for o in obs))
