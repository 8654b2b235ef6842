"""The Z3 engine: ONE formula per program.

* control flow: each thread with several paths gets one selector per path (exactly one holds);
  an event's execution guard is "one of its paths is selected" ∧ its value condition;
* values: a bit-vector of the location's width per read; written values and registers are
  bit-vector terms over them (:mod:`ptxmm.values`), wrapping as PTX does;
* existentials: rf (one Boolean per candidate pair), co (per pair not fixed by relation
  analysis; transitive, antisymmetric), an integer rank per fence.sc, barrier phases;
* the cat model is interpreted once over guarded relations (constant-folded, see
  :mod:`ptxmm.cat.relalg`) and its axioms asserted.

Queries: :meth:`Z3Problem.find` answers "is there an allowed execution satisfying this?" with one
call (plus its witness); :meth:`Z3Problem.outcomes` enumerates the allowed outcomes projected on
the observables, depth first with push/pop, so every check sees only the few blocking
constraints of its own branch."""

from __future__ import annotations

import atexit
import ctypes
import weakref
from collections.abc import Callable, Iterator
from itertools import count

import z3

from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model
from ..cat.relalg import Guard, Universe
from ..errors import ModelError
from ..events import Event, EventGraph, final_reg
from ..outcomes import Observable
from ..program import And, Cmp, CondExpr, Not, Or
from ..result import Execution
from ..values import BOOL_OPS, Const, Expr, Op, ReadVal
from ..vocab import Barriers, Candidates, base_env
from . import NO_DEADLINE, Deadline, TimedOut


# Z3's Python And/Or/Not coerce and sort-check every argument; guards are Bool terms of one
# context, so build them through the C API directly (about 7x faster).
def _raw(fn):
    try:
        return fn.__defaults__[0].f
    except (TypeError, IndexError, AttributeError):  # other binding layouts: the checked call
        return fn


_LT, _EQ, _NOT = _raw(z3.Z3_mk_lt), _raw(z3.Z3_mk_eq), _raw(z3.Z3_mk_not)
_ASSERT = _raw(z3.Z3_solver_assert)
_ATMOST = _raw(z3.Z3_mk_atmost)


def _at_most_one(vs: list) -> z3.BoolRef:
    """z3.AtMost(*vs, 1) without the per-argument coercion (vs: Bool constants of one context)."""
    ctx = vs[0].ctx
    arr = (z3.Ast * len(vs))(*[v.as_ast() for v in vs])
    return z3.BoolRef(_ATMOST(ctx.ref(), len(vs), arr, 1), ctx)

# The same C entry points with plain pointer (int) arguments and results, unchecked: the
# Logic's terms are Bool terms of one context, built bottom-up, which cannot fail.
_VP = ctypes.c_void_p


def _proto(fn, restype, *argtypes):
    f = _raw(fn)
    try:
        return ctypes.CFUNCTYPE(restype, *argtypes)(ctypes.cast(f, _VP).value)
    except (TypeError, ctypes.ArgumentError):  # pragma: no cover - other binding layouts
        return None


_P_AND = _proto(z3.Z3_mk_and, _VP, _VP, ctypes.c_uint, ctypes.POINTER(_VP))
_P_OR = _proto(z3.Z3_mk_or, _VP, _VP, ctypes.c_uint, ctypes.POINTER(_VP))
_P_NOT = _proto(z3.Z3_mk_not, _VP, _VP, _VP)
_P_INC = _proto(z3.Z3_inc_ref, None, _VP, _VP)
_P_DEC = _proto(z3.Z3_dec_ref, None, _VP, _VP)
_P_ASSERT = _proto(z3.Z3_solver_assert, None, _VP, _VP, _VP)
_P_ITE = _proto(z3.Z3_mk_ite, _VP, _VP, _VP, _VP, _VP)
_P_CONCAT = _proto(z3.Z3_mk_concat, _VP, _VP, _VP, _VP)


def _assert(s: z3.Solver, c) -> None:
    """Solver.add without the Python API's per-call coercion (``c``: a Z3 Bool, a bool, or a
    term of the Logic the solver's problem attached as ``s.lg``)."""
    if c is True:
        return
    if c is False:
        c = z3.BoolVal(False)
    elif type(c) is int:
        _P_ASSERT(s.ctx.ref().value, s.solver.value, s.lg.ast(c))
        return
    _ASSERT(s.ctx.ref(), s.solver, c.as_ast())


def _eq(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    return z3.BoolRef(_EQ(a.ctx.ref(), a.as_ast(), b.as_ast()), a.ctx)


def _not(a: z3.BoolRef) -> z3.BoolRef:
    return z3.BoolRef(_NOT(a.ctx.ref(), a.as_ast()), a.ctx)


def _const(name: str, sort_fn, cls):
    ctx = z3.main_ctx()
    r = ctx.ref()
    return cls(z3.Z3_mk_const(r, z3.Z3_mk_string_symbol(r, name), sort_fn(r)), ctx)


def mk_bool(name: str) -> z3.BoolRef:
    return _const(name, z3.Z3_mk_bool_sort, z3.BoolRef)


def mk_int(name: str) -> z3.ArithRef:
    return _const(name, z3.Z3_mk_int_sort, z3.ArithRef)


_LEAF, _AND_OP, _OR_OP, _NOT_OP = 0, 1, 2, 3


def _release(ctx: z3.Context, owned: list[int]) -> None:
    if _P_DEC is not None and ctx.ref() is not None:
        r = ctx.ref().value
        for p in owned:
            _P_DEC(r, p)


class Z3Logic:
    """Term construction for the relation algebra (the engine side of :class:`relalg.Logic`).

    A term is an int (≥ 2, never mistaken for True/False): a node of a hash-consed DAG of
    and/or/not over *leaves*, which are Z3 Bool terms. The relation algebra builds many terms
    that no constraint ever reaches; nodes are cheap Python tuples, and only the ones asserted
    (or evaluated) are built in Z3 — once each, through the raw C API (:meth:`ast`). Z3 terms
    built here are owned by the Logic and released with it."""

    def __init__(self) -> None:
        self._tag = count()
        self.ctx = z3.main_ctx()
        self.op: list[int] = [-1, -1]
        self.kids: list = [None, None]  # AND/OR: tuple of ids; NOT: id; LEAF: the BoolRef
        self.ptr: list = [None, None]  # the node's Z3 AST pointer (int) once built
        self._ids: dict = {}  # (op, kids) | (LEAF, pointer) → id
        self._owned: list[int] = []
        weakref.finalize(self, _release, self.ctx, self._owned)
        self._tf = (z3.BoolVal(True, self.ctx), z3.BoolVal(False, self.ctx))  # kept alive
        self._consts = {self._tf[0].as_ast().value: True, self._tf[1].as_ast().value: False}

    def leaf(self, t: z3.BoolRef) -> Guard:
        """The term of a Z3 Bool (True/False for the constants)."""
        p = t.as_ast().value
        key = (_LEAF, p)
        i = self._ids.get(key)
        if i is None:
            if p in self._consts:  # Z3 hash-conses terms: true and false have one pointer each
                return self._consts[p]
            i = self._ids[key] = len(self.op)
            self.op.append(_LEAF)
            self.kids.append(t)
            self.ptr.append(p)
        return i

    def _node(self, op: int, kids) -> int:
        key = (op, kids)
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = len(self.op)
            self.op.append(op)
            self.kids.append(kids)
            self.ptr.append(None)
        return i

    def and_(self, terms: list) -> Guard:
        ks = tuple(sorted(set(terms)))
        return ks[0] if len(ks) == 1 else self._node(_AND_OP, ks)

    def or_(self, terms: list) -> Guard:
        ks = tuple(sorted(set(terms)))
        return ks[0] if len(ks) == 1 else self._node(_OR_OP, ks)

    def not_(self, t) -> Guard:
        if self.op[t] == _NOT_OP:
            return self.kids[t]
        return self._node(_NOT_OP, t)

    # -- the boundary to Z3 --------------------------------------------------------------------
    def ast(self, t: int) -> int:
        """The Z3 AST pointer of term ``t``, building (post-order, iteratively) what is missing."""
        ptr, op, kids = self.ptr, self.op, self.kids
        if ptr[t] is not None:
            return ptr[t]
        ctx = self.ctx.ref().value
        stack = [t]
        while stack:
            x = stack[-1]
            if ptr[x] is not None:
                stack.pop()
                continue
            k = kids[x]
            if op[x] == _NOT_OP:
                if ptr[k] is None:
                    stack.append(k)
                    continue
                p = _P_NOT(ctx, ptr[k])
            else:
                missing = [c for c in k if ptr[c] is None]
                if missing:
                    stack += missing
                    continue
                arr = (_VP * len(k))(*[ptr[c] for c in k])
                p = (_P_AND if op[x] == _AND_OP else _P_OR)(ctx, len(k), arr)
            _P_INC(ctx, p)  # before the next call: a fresh AST of an rc context is not yet owned
            self._owned.append(p)
            ptr[x] = p
            stack.pop()
        return ptr[t]

    def z3(self, g: Guard) -> z3.BoolRef:
        """A guard (or a Z3 Bool, returned as it is) as a Z3 Bool."""
        if g is True or g is False:
            return z3.BoolVal(g, self.ctx)
        if type(g) is not int:
            return g
        if self.op[g] == _LEAF:
            return self.kids[g]
        return z3.BoolRef(z3.Ast.from_buffer_copy(_VP(self.ast(g))), self.ctx)

    def pack(self, bools: list, words: list[z3.BitVecRef]) -> z3.BitVecRef | None:
        """One bit-vector: a bit per Boolean (a guard or a Z3 Bool) then the words, built through
        the C API (the Python API's If and Concat coerce and wrap every intermediate term)."""
        ctx = self.ctx.ref().value
        self._bit = (z3.BitVecVal(1, 1, self.ctx), z3.BitVecVal(0, 1, self.ctx))  # kept alive
        one, zero = (b.as_ast().value for b in self._bit)
        parts = [self._own(ctx, _P_ITE(ctx, self._ptr(t), one, zero)) for t in bools]
        parts += [w.as_ast().value for w in words]
        if not parts:
            return None
        acc = parts[0]
        for p in parts[1:]:
            acc = self._own(ctx, _P_CONCAT(ctx, acc, p))
        return z3.BitVecRef(z3.Ast.from_buffer_copy(_VP(acc)), self.ctx)

    def _ptr(self, g) -> int:
        """The Z3 AST pointer of a guard (True, False, a term) or of a Z3 Bool."""
        if type(g) is bool:
            return self._tf[0 if g else 1].as_ast().value
        return self.ast(g) if type(g) is int else g.as_ast().value

    def _own(self, ctx: int, p: int) -> int:
        _P_INC(ctx, p)  # a fresh AST of an rc context is not yet owned
        self._owned.append(p)
        return p

    def equivalent(self, a, b) -> bool:
        if a == b:
            return True
        s = z3.SimpleSolver()
        s.add(self.z3(a) != self.z3(b))
        return s.check() == z3.unsat

    def simplify(self, g) -> Guard:
        return self.leaf(z3.simplify(self.z3(g)))

    def implies(self, g: Guard, t: Guard) -> Guard:
        return True if g is False or t is True else t if g is True else self.or_([self.not_(g), t])

    def acyclic(self, edges: list[tuple[int, int, Guard]]) -> list[Guard]:
        """rank(a) < rank(b) for every edge that holds (ranks: fresh integers)."""
        tag = next(self._tag)
        rank: dict[int, z3.ArithRef] = {}
        out = []
        for a, b, g in edges:
            for x in (a, b):
                if x not in rank:
                    rank[x] = mk_int(f"rk{tag}_{x}")
            lt = z3.BoolRef(_LT(rank[a].ctx.ref(), rank[a].as_ast(), rank[b].as_ast()), rank[a].ctx)
            out.append(self.implies(g, self.leaf(lt)))
        return out


class Values:
    """:mod:`ptxmm.values` expressions as Z3 bit-vectors (comparisons and logic as Bools)."""

    def __init__(self, read: Callable[[int], z3.BitVecRef]):
        self.read = read
        self._bv: dict[Expr, z3.ExprRef] = {}

    def bv(self, e: Expr) -> z3.BitVecRef:
        t = self._bv.get(e)
        if t is None:
            t = self._bv[e] = self._bv_of(e)
        return t

    def bool(self, e: Expr) -> z3.BoolRef:
        if isinstance(e, Const):
            return z3.BoolVal(e.v != 0)
        if isinstance(e, Op) and e.op in BOOL_OPS:
            return self._cmp(e)
        return self.bv(e) != 0

    def _bv_of(self, e: Expr) -> z3.BitVecRef:
        if isinstance(e, Const):
            return z3.BitVecVal(e.v, e.w)
        if isinstance(e, ReadVal):
            return self.read(e.eid)
        if e.op in BOOL_OPS:
            return z3.If(self._cmp(e), z3.BitVecVal(1, 1), z3.BitVecVal(0, 1))
        if e.op == "ite":
            return z3.If(self.bool(e.args[0]), self.bv(e.args[1]), self.bv(e.args[2]))
        a = [self.bv(x) for x in e.args]
        return _ARITH[e.op](e, *a)

    def _cmp(self, e: Op) -> z3.BoolRef:
        if e.op == "land":
            return z3.And(self.bool(e.args[0]), self.bool(e.args[1]))
        if e.op == "lor":
            return z3.Or(self.bool(e.args[0]), self.bool(e.args[1]))
        if e.op == "lnot":
            return z3.Not(self.bool(e.args[0]))
        a, b = (self.bv(x) for x in e.args)
        return _CMPS[e.op](a, b)


def _shift(kind: str):
    def f(e: Op, a, b):
        w, bw = e.w, b.size()
        if bw < w:
            b = z3.ZeroExt(w - bw, b)
        big = z3.UGE(b, z3.BitVecVal(w, b.size()))
        if bw > w:
            b = z3.Extract(w - 1, 0, b)
        zero = z3.BitVecVal(0, w)
        if kind == "shl":
            return z3.If(big, zero, a << b)
        if kind == "shr":
            return z3.If(big, zero, z3.LShR(a, b))
        return z3.If(big, z3.If(a < 0, z3.BitVecVal(-1, w), zero), a >> b)
    return f


_ARITH: dict[str, Callable] = {
    "add": lambda e, a, b: a + b,
    "sub": lambda e, a, b: a - b,
    "mul": lambda e, a, b: a * b,
    "udiv": lambda e, a, b: z3.UDiv(a, b),
    "sdiv": lambda e, a, b: a / b,  # bvsdiv: truncates toward zero
    "urem": lambda e, a, b: z3.URem(a, b),
    "srem": lambda e, a, b: z3.SRem(a, b),  # the dividend's sign, as PTX rem.s
    "and": lambda e, a, b: a & b,
    "or": lambda e, a, b: a | b,
    "xor": lambda e, a, b: a ^ b,
    "not": lambda e, a: ~a,
    "neg": lambda e, a: -a,
    "shl": _shift("shl"),
    "shr": _shift("shr"),
    "sar": _shift("sar"),
    "smin": lambda e, a, b: z3.If(a <= b, a, b),
    "smax": lambda e, a, b: z3.If(a >= b, a, b),
    "umin": lambda e, a, b: z3.If(z3.ULE(a, b), a, b),
    "umax": lambda e, a, b: z3.If(z3.UGE(a, b), a, b),
    "inc": lambda e, r, b: z3.If(z3.UGE(r, b), z3.BitVecVal(0, e.w), r + 1),
    "dec": lambda e, r, b: z3.If(z3.Or(r == 0, z3.UGT(r, b)), b, r - 1),
    "cas": lambda e, r, b, c: z3.If(r == b, c, r),
    "zext": lambda e, a: z3.ZeroExt(e.w - a.size(), a),
    "sext": lambda e, a: z3.SignExt(e.w - a.size(), a),
    "trunc": lambda e, a: z3.Extract(e.w - 1, 0, a),
}
_CMPS: dict[str, Callable] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
    "ult": z3.ULT, "ule": z3.ULE, "ugt": z3.UGT, "uge": z3.UGE,
}


class Z3Choice:
    """The existential parts of one program's executions, as Z3 variables."""

    def __init__(self, eg: EventGraph, cand: Candidates, lg: Z3Logic):
        self.eg, self.lg = eg, lg
        self.cs: list = []  # well-formedness constraints
        self.vals = {e.eid: z3.BitVec(f"v{e.eid}", e.w) for e in eg.events if e.kind == "R"}
        self.values = Values(self.vals.__getitem__)
        self.sel: list[list[z3.BoolRef] | None] = []
        for t, paths in enumerate(eg.paths):
            if len(paths) == 1:
                self.sel.append(None)
                self.cs += [self.values.bool(a) for a in paths[0].assumes]
                continue
            sel = [mk_bool(f"path{t}_{k}") for k in range(len(paths))]
            self.sel.append(sel)
            self.cs.append(z3.PbEq([(v, 1) for v in sel], 1))
            for k, p in enumerate(paths):
                self.cs += [z3.Implies(sel[k], self.values.bool(a)) for a in p.assumes]
        self.ex: list[Guard] = [self._exec(e) for e in eg.events]
        live = {i for i, g in enumerate(self.ex) if g is not False}
        self.rfv = {p: mk_bool(f"rf{p[0]}_{p[1]}") for p in cand.rf if live.issuperset(p)}
        self.cov = {p: mk_bool(f"co{p[0]}_{p[1]}") for p in cand.co if live.issuperset(p)}
        self.rft = {p: lg.leaf(v) for p, v in self.rfv.items()}  # the same, as the Logic's terms
        self.cot = {p: lg.leaf(v) for p, v in self.cov.items()}
        self.rank = {f: mk_int(f"sc{f}") for f in cand.scf if f in live}
        if len(self.rank) > 1:
            self.cs.append(z3.Distinct(*self.rank.values()))
        self.ph: dict[int, z3.ArithRef] = {}
        last: dict[tuple, z3.ArithRef] = {}
        for e in eg.events:
            if e.kind == "B" and "ARRIVE" in e.tags and e.barrier[1] is not None and e.eid in live:
                v = z3.Int(f"ph{e.eid}")
                self.cs.append(v >= 0)
                for k in e.paths:  # phases grow along each path (paths never run together)
                    key = (e.thread, tuple(map(repr, e.barrier[0])), k)
                    if key in last:
                        self.cs.append(v > last[key])
                    last[key] = v
                self.ph[e.eid] = v

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
        return self.rft.get((w, r), False)

    def co(self, a: int, b: int) -> Guard:
        return self.cot.get((a, b), False)

    def sc(self, f: int, g: int) -> Guard:
        if f in self.rank and g in self.rank:
            return self.lg.leaf(z3.BoolRef(_LT(self.rank[f].ctx.ref(), self.rank[f].as_ast(),
                                               self.rank[g].as_ast()), self.rank[f].ctx))
        return False

    def cond(self, e: Expr) -> Guard:
        return self.lg.leaf(self.values.bool(e))

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


# Small problems share solvers: a finished problem's solver, its scope popped, serves the next one
# (a fresh solver's first check sets up its SMT kernel, ~0.3 ms: a tenth of a litmus check).
# Assertions in a scope miss Z3's base-level preprocessing, which pays off once a problem has more
# than about 48 rf/co choices (measured over the Dat3M corpus and the scale shapes): those get a
# fresh solver of their own. A popped solver keeps a few KB per problem, so each serves at most
# _REUSES problems.
_POOL: list[z3.Solver] = []
atexit.register(_POOL.clear)  # freed while Z3's context still exists, not in module teardown
_POOL_MAX_CHOICES = 48
_REUSES = 100
_NO_TIMEOUT = 4294967295  # Z3's default: none


def _borrow(pooled: bool) -> z3.Solver:
    if not pooled:
        return z3.SimpleSolver()  # incremental, no tactic preprocessing
    s = _POOL.pop() if _POOL else z3.SimpleSolver()
    s.served = getattr(s, "served", 0) + 1
    s.push()
    return s


class Z3Problem:
    """One program under one model, encoded once; queried for witnesses and outcomes."""

    def __init__(self, eg: EventGraph, model: Model, obs: list[Observable], cand: Candidates,
                 flags: bool = False, co_known: set[tuple[int, int]] | None = None,
                 deadline: Deadline = NO_DEADLINE):
        self.eg, self.obs, self.deadline = eg, obs, deadline
        self.lg = Z3Logic()
        ch = self.ch = Z3Choice(eg, cand, self.lg)
        self.pooled = len(ch.rfv) + len(ch.cov) <= _POOL_MAX_CHOICES
        self.s = _borrow(self.pooled)
        self.s.lg = self.lg  # _assert builds the Logic's terms in Z3
        self.co_known = co_known or set()
        env = base_env(eg, ch, cand, co_known)
        self.unsat = False
        deadline.check()  # encoding a large program takes seconds: the deadline is checked
        cs = list(ch.cs) + self._wellformed(cand, env)  # between its phases, not only at
        deadline.check()  # the first query
        ev = interp(model, env, flags=flags)
        deadline.check()
        for st, v in ev.axioms:
            cs += ax.encode(st.check, v)
        self.flag_terms = []  # (name, guard): a flag is raised when its check holds ≠ negated
        for st, v in ev.flags:
            if st.check == "acyclic":
                raise ModelError("`flag acyclic` is not supported", st.pos, "use flag ~empty")
            holds = v.u.all(ax.encode(st.check, v))
            self.flag_terms.append((st.name, v.u.not1(holds) if st.negated else holds))
        for i, c in enumerate(cs):
            if c is False:
                self.unsat = True
            elif c is not True:
                _assert(self.s, c)
            if i % 256 == 255:
                deadline.check()
        self.fin = self._final_values(cand, env["co"])
        self.terms = [self._term(o) for o in obs]
        self._bools: list | None = None  # built by _packing at the first witness read

    def _packing(self) -> None:
        """Everything a leaf of the enumeration reads, packed into two bit-vectors so that one
        model evaluation each gives an outcome and its witness (evaluating term by term through
        the Python API costs more than the solving). Built at the first witness read: a query
        answered "no" needs none."""
        ch = self.ch
        self._bools = []  # (kind, key, term) of every Boolean a witness records
        for i, g in enumerate(ch.ex):
            if g is not True and g is not False:
                self._bools.append(("ex", i, g))
        for t, sel in enumerate(ch.sel):
            for k, v in enumerate(sel or ()):
                self._bools.append(("path", (t, k), v))
        self._bools += [("rf", p, v) for p, v in ch.rfv.items()]
        self._bools += [("co", p, v) for p, v in ch.cov.items()]
        self._bools += [("fin", (loc, w), v) for loc, fv in self.fin.items() for w, v in fv.items()]
        self._bools += [("flag", name, t) for name, t in self.flag_terms if t is not True and t is not False]
        words = list(self.terms) + [ch.vals[r] for r in sorted(ch.vals)]
        self._widths = [1] * len(self._bools) + [w.size() for w in words]
        self._packed = self.lg.pack([t for _, _, t in self._bools], words)

    def _unpack(self, m: z3.ModelRef) -> list[int]:
        if self._bools is None:
            self._packing()
        if self._packed is None:
            return []
        # in base 2: Python refuses decimal strings of over 4300 digits (as_long's route)
        x = int(m.eval(self._packed, model_completion=True).as_binary_string(), 2)
        out = []
        for w in reversed(self._widths):
            out.append(x & ((1 << w) - 1))
            x >>= w
        return out[::-1]

    def _wellformed(self, cand: Candidates, env) -> list:
        """rf: every executed read reads from exactly one executed write, with its value; co:
        only between executed writes, antisymmetric and transitive; counted barrier phases fill
        in arrival order."""
        ch, ev, cs = self.ch, self.eg.events, []
        co = env["co"]
        u = co.u
        by_read: dict[int, list[int]] = {}
        for w, r in ch.rfv:
            by_read.setdefault(r, []).append(w)
        for e in ev:
            if e.kind != "R" or ch.ex[e.eid] is False:
                continue
            ws = by_read.get(e.eid, [])
            vs = [ch.rft[(w, e.eid)] for w in ws]
            cs.append(u.any([u.not1(ch.ex[e.eid])] + vs))
            if len(vs) > 1:
                cs.append(_at_most_one([ch.rfv[(w, e.eid)] for w in ws]))
            for w, v in zip(ws, vs):
                same = ch.lg.leaf(_eq(ch.vals[e.eid], ch.values.bv(ev[w].value)))
                cs.append(u.any([u.not1(v), u.all([ch.ex[w], ch.ex[e.eid], same])]))
        for (a, b), v in ch.cot.items():
            cs.append(u.any([u.not1(v), u.and2(ch.ex[a], ch.ex[b])]))
            if (b, a) in ch.cot and a < b:
                cs.append(u.not1(u.and2(v, ch.cot[(b, a)])))
        cs += self._transitive(cand, co, u)
        cs += self._phases()
        return cs

    def _transitive(self, cand: Candidates, co, u) -> list:
        """co(a,b) ∧ co(b,c) → co(a,c) for every triple with an undecided pair."""
        ev, cot = self.eg.events, self.ch.cot

        def g(a, b):  # co(a, b) with both executed; a co variable implies that already (above)
            v = cot.get((a, b))
            if v is not None:
                return v
            return u.and2(u.ex[a], u.ex[b]) if co.guard(a, b) is True else False

        out = []
        seen = set()
        for p in self.ch.cov:
            loc = ev[p[0]].loc
            for m in cand.writes_at[loc]:
                for a, b, c in ((p[0], p[1], m), (m, p[0], p[1]), (p[0], m, p[1])):
                    if len({a, b, c}) < 3 or (a, b, c) in seen:
                        continue
                    seen.add((a, b, c))
                    ab, bc, ac = g(a, b), g(b, c), g(a, c)
                    if ab is False or bc is False or ac is True:
                        continue
                    out.append(u.any((u.not1(ab), u.not1(bc), ac)))
        return out

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
        """Final-state observers read a co-maximal executed write."""
        ch, u, fin = self.ch, co.u, {}
        for o in self.obs:
            if o.loc is None or o.loc in fin:
                continue
            # a write with a co-successor that always executes is never the final one
            ws = [w for w in cand.writes_at[o.loc] if ch.ex[w] is not False
                  and not co.must.get(w, 0) & u.sure]
            fv = {w: ch.lg.leaf(mk_bool(f"fin_{o.loc}_{w}")) for w in ws}
            _assert(self.s, z3.PbEq([(ch.lg.z3(v), 1) for v in fv.values()], 1))
            for w, v in fv.items():
                later = [u.all((u.ex[w2], co.guard(w, w2))) for w2 in ws if w2 != w]
                _assert(self.s, u.any([u.not1(v), u.all([ch.ex[w]] + [u.not1(x) for x in later])]))
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

    def close(self) -> None:
        """Done with queries: a pooled solver goes back, its scope popped. A problem never closed
        keeps its solver, which is freed with it."""
        s, self.s = self.s, None
        if s is not None and self.pooled:
            s.pop(s.num_scopes())
            if self.deadline.at is not None:  # _sat set one
                s.set("timeout", _NO_TIMEOUT)
            s.lg = None
            if s.served < _REUSES:
                _POOL.append(s)

    # -- queries -------------------------------------------------------------------------------
    def condition(self, e: CondExpr, key: Callable) -> z3.BoolRef:
        """A test condition over the observables (``key(ref)`` names a reference's observable)."""
        by_key = {o.key: (o, t) for o, t in zip(self.obs, self.terms)}
        return _cond(e, lambda r: by_key[key(r)])

    def find(self, goal: z3.BoolRef | None = None, negate: bool = False) -> Execution | None:
        """One allowed execution satisfying ``goal`` (or violating it), or None."""
        if self.unsat:
            return None
        if goal is None:
            return self._extract(self.s.model()) if self._sat() else None
        q = mk_bool(f"query{next(self.lg._tag)}")  # an assumption literal: no push/pop needed
        self.s.add(z3.Implies(q, z3.Not(goal) if negate else goal))
        return self._extract(self.s.model()) if self._sat(q) else None

    def _sat(self, *assumptions) -> bool:
        """``s.check`` within the deadline: raises TimedOut rather than answer "unknown"."""
        ms = self.deadline.left_ms()
        if ms is not None:
            self.s.set("timeout", ms)
        r = self.s.check(*assumptions)
        if r == z3.unknown:
            raise TimedOut
        return r == z3.sat

    def outcomes(self) -> Iterator[tuple[tuple[int, ...], Execution, list[str]]]:
        """Every allowed outcome once: (observable values as unsigned ints, witness, flags)."""
        if self.unsat or not self._sat():
            return
        yield from self._dfs(0, self.s.model())

    def _dfs(self, level: int, m: z3.ModelRef):
        s, terms = self.s, self.terms
        if level == len(terms):
            yield self._leaf(m)
            return
        s.push()
        while True:
            v = m.eval(terms[level], model_completion=True)
            s.push()
            _assert(s, _eq(terms[level], v))
            yield from self._dfs(level + 1, m)
            s.pop()
            _assert(s, _not(_eq(terms[level], v)))
            if not self._sat():
                break
            m = s.model()
        s.pop()

    def _leaf(self, m: z3.ModelRef):
        vals = self._unpack(m)
        nb, nt = len(self._bools), len(self.terms)
        values = tuple(vals[nb:nb + nt])
        truth = {(k, key): bool(v) for (k, key, _), v in zip(self._bools, vals)}
        flags = [name for name, t in self.flag_terms if t is True or truth.get(("flag", name))]
        reads = dict(zip(sorted(self.ch.vals), vals[nb + nt:]))
        return values, self._execution(m, truth, reads), flags

    def _extract(self, m: z3.ModelRef) -> Execution:
        vals = self._unpack(m)
        nb, nt = len(self._bools), len(self.terms)
        truth = {(k, key): bool(v) for (k, key, _), v in zip(self._bools, vals)}
        return self._execution(m, truth, dict(zip(sorted(self.ch.vals), vals[nb + nt:])))

    def _execution(self, m: z3.ModelRef, truth: dict, reads: dict[int, int]) -> Execution:
        ch, ev = self.ch, self.eg.events
        ex = [g is True or (g is not False and truth[("ex", i)]) for i, g in enumerate(ch.ex)]
        paths = tuple(0 if sel is None else next(k for k in range(len(sel)) if truth[("path", (t, k))])
                      for t, sel in enumerate(ch.sel))
        rf = tuple(sorted(p for p in ch.rfv if truth[("rf", p)]))
        co = {p for p in ch.cov if truth[("co", p)]}
        co |= {(a, b) for a, b in self.co_known if ex[a] and ex[b]}
        for w in self.eg.init.values():
            co |= {(w, b) for b in range(len(ev)) if ex[b] and ev[b].kind == "W" and b != w
                   and ev[b].loc == ev[w].loc}
        vals = tuple((r, v) for r, v in sorted(reads.items()) if ex[r])
        sc = ()
        if self.ch.rank:
            sc = tuple(sorted((f for f in ch.rank if ex[f]),
                              key=lambda f: m.eval(ch.rank[f], model_completion=True).as_long()))
        final = tuple((loc, next(w for w in fv if truth[("fin", (loc, w))])) for loc, fv in self.fin.items())
        phases = tuple((a, m.eval(v, model_completion=True).as_long())
                       for a, v in sorted(ch.ph.items()) if ex[a])
        return Execution(paths, rf, tuple(sorted(co)), vals, sc, final, phases)


def _fit(t: z3.BitVecRef, w: int) -> z3.BitVecRef:
    if t.size() == w:
        return t
    return z3.Extract(w - 1, 0, t) if t.size() > w else z3.ZeroExt(w - t.size(), t)


def _cond(e: CondExpr, term: Callable) -> z3.BoolRef:
    """A condition as a Z3 formula; ``term(ref)`` gives (Observable, bit-vector)."""
    if isinstance(e, Cmp):
        o, a = term(e.lhs)
        if isinstance(e.rhs, int):
            b = z3.BitVecVal(e.rhs & ((1 << o.width) - 1), o.width)
            signed = o.signed
        else:
            o2, b = term(e.rhs)
            w = max(o.width, o2.width)
            a = z3.SignExt(w - o.width, a) if o.signed else z3.ZeroExt(w - o.width, a)
            b = z3.SignExt(w - o2.width, b) if o2.signed else z3.ZeroExt(w - o2.width, b)
            signed = o.signed or o2.signed
        if e.op in ("==", "!="):
            return a == b if e.op == "==" else a != b
        ops = {"<": (z3.ULT, "slt"), "<=": (z3.ULE, "sle"), ">": (z3.UGT, "sgt"), ">=": (z3.UGE, "sge")}
        return _CMPS[ops[e.op][1]](a, b) if signed else ops[e.op][0](a, b)
    if isinstance(e, And):
        return z3.And([_cond(a, term) for a in e.args])
    if isinstance(e, Or):
        return z3.Or([_cond(a, term) for a in e.args])
    if isinstance(e, Not):
        return z3.Not(_cond(e.arg, term))
    return z3.BoolVal(True)


__all__ = ["Z3Problem", "Z3Logic", "Z3Choice", "Values"]
