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
the observables: each model gives one outcome and its witness, and one clause over shared
equality atoms then excludes that outcome (one check, one model and one evaluation per outcome)."""

from __future__ import annotations

import atexit
import ctypes
import weakref
from collections.abc import Callable, Iterator
from itertools import count, product

import z3

from .._infra.records import record
from ..cat import axioms as ax
from ..cat.interp import run as interp
from ..cat.parser import Model
from ..cat.relalg import Guard, Universe
from ..errors import ModelError
from ..ir.program import And, Cmp, CondExpr, Not, Or
from ..ir.values import BOOL_OPS, Const, Expr, Op, ReadVal, Unspec, unspec_key
from ..semantics import executions
from ..semantics.events import Event, EventGraph, Kind, final_reg
from ..semantics.outcomes import Observable
from ..semantics.result import Execution
from ..semantics.vocab import Barriers, Candidates, base_env, exclusive
from . import NO_DEADLINE, Deadline, Raised, TimedOut


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
_P_EVAL = _proto(z3.Z3_model_eval, ctypes.c_bool, _VP, _VP, _VP, ctypes.c_bool, ctypes.POINTER(_VP))
_P_BINARY = _proto(z3.Z3_get_numeral_binary_string, ctypes.c_char_p, _VP, _VP)
_P_CHECK = _proto(z3.Z3_solver_check, ctypes.c_int, _VP, _VP)
_P_AST_KIND = _proto(z3.Z3_get_ast_kind, ctypes.c_uint, _VP, _VP)
_P_NUM_ARGS = _proto(z3.Z3_get_app_num_args, ctypes.c_uint, _VP, _VP)
_P_APP_ARG = _proto(z3.Z3_get_app_arg, _VP, _VP, _VP, ctypes.c_uint)
_P_APP_DECL = _proto(z3.Z3_get_app_decl, _VP, _VP, _VP)
_P_DECL_KIND = _proto(z3.Z3_get_decl_kind, ctypes.c_uint, _VP, _VP)
_P_DECIMAL = _proto(z3.Z3_get_numeral_string, ctypes.c_char_p, _VP, _VP)
_DECIMAL_MAX_BITS = 14000  # 10^4300 > 2^14284: Python's int() reads a numeral this wide in decimal


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
        # term → (x, y) (AST pointers of two integer constants) for a leaf that is exactly x < y:
        # what lets the relation algebra see that a relation is transitive (relalg.Rel.closure)
        self.order: dict[int, tuple[int, int]] = {}

    def lt(self, x: z3.ArithRef, y: z3.ArithRef) -> Guard:
        """The term of x < y over two integer constants, remembered as an order term."""
        ctx = x.ctx
        i = self.leaf(z3.BoolRef(_LT(ctx.ref(), x.as_ast(), y.as_ast()), ctx))
        if type(i) is int:
            self.order[i] = (x.as_ast().value, y.as_ast().value)
        return i

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
            out.append(self.implies(g, self.lt(rank[a], rank[b])))
        return out


class Values:
    """:mod:`ptxmm.values` expressions as Z3 bit-vectors (comparisons and logic as Bools). An
    unspecified value is a fresh constant, unconstrained: the solver chooses it (``unspec``)."""

    def __init__(self, read: Callable[[int], z3.BitVecRef]):
        self.read = read
        self._bv: dict[Expr, z3.ExprRef] = {}
        self.unspec: dict[int, z3.BitVecRef] = {}  # Unspec.uid → its constant

    def chosen(self, m: z3.ModelRef) -> tuple[tuple[int, int], ...]:
        """The unspecified values model ``m`` chose, as an execution's values
        (:func:`ptxmm.values.unspec_key` → value)."""
        return tuple((unspec_key(u), m.eval(c, model_completion=True).as_long())
                     for u, c in sorted(self.unspec.items()))

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
        if isinstance(e, Unspec):
            c = self.unspec[e.uid] = z3.BitVec(f"unspec{e.uid}", e.w)
            return c
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
            if e.kind == Kind.B and "ARRIVE" in e.tags and e.barrier[1] is not None and e.eid in live:
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

    def scorder(self, f: int, g: int) -> Guard:
        if f in self.rank and g in self.rank:
            return self.lg.lt(self.rank[f], self.rank[g])
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
# An enumeration looks for parts of the formula that share no variable once it has found this
# many outcomes: the look costs about as much as a few outcomes, and pays off only on many.
_SPLIT_AFTER = 64


# Problems not yet closed (a fresh context is started only when there is none).
_OPEN: weakref.WeakSet = weakref.WeakSet()


def _fresh_context() -> None:
    """Start a new main Z3 context for a large problem when no problem is open. Z3 recycles the
    ids of freed terms, and its solver's choices follow term ids: in a context that has built and
    freed earlier problems, the same large problem took 1.5-2x as long (grid-barrier-reuse checked
    four times in one process: 2.6, 4.1, 4.7, 5.5 s; in a fresh context each time: 2.2-2.7 s).
    Terms of the old context stay valid (they keep it alive) and are never mixed with new ones:
    every problem builds its terms after this call, in its own context, and pooled solvers of the
    old one are dropped. Nothing changes where the Z3 module does not keep its main context where
    this looks for it."""
    if _OPEN or getattr(z3.z3, "_main_ctx", None) is None:
        return
    _POOL.clear()
    z3.z3._main_ctx = None


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
        if len(cand.rf) + len(cand.co) > _POOL_MAX_CHOICES:  # before any term of this problem
            _fresh_context()
        _OPEN.add(self)
        self.eg, self.obs, self.deadline = eg, obs, deadline
        self.lg = Z3Logic()
        ch = self.ch = Z3Choice(eg, cand, self.lg)
        self.pooled = len(ch.rfv) + len(ch.cov) <= _POOL_MAX_CHOICES
        self.s = _borrow(self.pooled)
        self.s.lg = self.lg  # _assert builds the Logic's terms in Z3
        self.co_known = co_known or set()
        env = base_env(eg, ch, cand, co_known)
        env["_"].u.apart = _apart(eg)
        self.unsat = False
        deadline.check()  # encoding a large program takes seconds: the deadline is checked
        cs = list(ch.cs) + self._wellformed(cand, env)  # between its phases, not only at
        deadline.check()  # the first query
        ev = interp(model, env, flags=flags)
        deadline.check()
        for st, v in ev.axioms:
            cs += ax.encode(st.check, v)
        self.flag_terms = []  # (name, guard): a flag is raised when its check holds ≠ negated
        self.flag_values = ev.flags  # (statement, value): the elements each flag raises
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
        self._layout: _Layout | None = None  # built by _packing at the first witness read
        self._atoms: dict[tuple[int, int], int] = {}  # (observable, value) → ¬(term = value)

    def _packing(self) -> None:
        """Everything a leaf of the enumeration reads, packed into one bit-vector so that one
        model evaluation gives an outcome and its witness (evaluating term by term through the
        Python API costs more than the solving), and where each part lies in its binary digits
        (:class:`_Layout`). Built at the first witness read: a query answered "no" needs none."""
        ch = self.ch
        bools: list = []  # the term of every Boolean a witness records; its bit: its index
        ex_bit: list = []
        for g in ch.ex:
            ex_bit.append(g if g is True or g is False else len(bools))
            if g is not True and g is not False:
                bools.append(g)
        path_bits = []
        for sel in ch.sel:
            path_bits.append(None if sel is None else list(range(len(bools), len(bools) + len(sel))))
            bools += sel or ()
        rf_bits = [(p, len(bools) + k) for k, p in enumerate(ch.rfv)]
        bools += ch.rfv.values()
        co_bits = [(p, len(bools) + k) for k, p in enumerate(ch.cov)]
        bools += ch.cov.values()
        fin_bits = []
        for loc, fv in self.fin.items():
            fin_bits.append((loc, [(w, len(bools) + k) for k, w in enumerate(fv)]))
            bools += fv.values()
        flag_bits = []
        for name, t in self.flag_terms:
            if t is True or t is False:
                flag_bits.append((name, t))
            else:
                flag_bits.append((name, len(bools)))
                bools.append(t)
        reads = sorted(ch.vals)
        words = list(self.terms) + [ch.vals[r] for r in reads]
        spans, at = [], len(bools)
        for w in words:
            spans.append((at, at + w.size()))
            at += w.size()
        nt = len(self.terms)
        ev = self.eg.events
        init_co = [(w, b) for w in self.eg.init.values() for b in range(len(ev))
                   if ev[b].kind == Kind.W and b != w and ev[b].loc == ev[w].loc]
        self._layout = _Layout(at, ex_bit, path_bits, sorted(rf_bits), co_bits, fin_bits, flag_bits,
                               spans[:nt], list(zip(reads, spans[nt:])), sorted(self.co_known), init_co)
        self._packed = self.lg.pack(bools, words)
        # (first digit, end, AST pointer) of every packed part: what the split into parts reads
        self._elements = [(k, k + 1, self.lg._ptr(t)) for k, t in enumerate(bools)]
        self._elements += [(i, j, w.as_ast().value) for (i, j), w in zip(spans, words)]

    def _number(self, m: z3.ModelRef) -> int:
        """The packed term's value in the model. Read in decimal: Z3 writes a numeral in binary
        about a hundred times slower (0.09 ms for 726 bits); past what Python converts from
        decimal (4300 digits), in binary."""
        if self._layout is None:
            self._packing()
        if self._packed is None:  # nothing to read: no Boolean, no observable, no read
            return 0
        ctx = self.lg.ctx.ref().value
        out = _VP()
        _P_EVAL(ctx, m.model.value, self._packed.as_ast().value, True, ctypes.byref(out))
        _P_INC(ctx, out.value)
        if self._layout.width <= _DECIMAL_MAX_BITS:
            x = int(_P_DECIMAL(ctx, out.value))
        else:
            x = int(_P_BINARY(ctx, out.value), 2)
        _P_DEC(ctx, out.value)
        return x

    def _digits(self, m: z3.ModelRef) -> str:
        """The packed term's value in the model, as ``_layout.width`` binary digits."""
        x = self._number(m)
        return format(x, "b").rjust(self._layout.width, "0")

    def _wellformed(self, cand: Candidates, env) -> list:
        """Well-formedness as :mod:`ptxmm.executions` states it (rf, co, transitivity), each
        cardinality constraint in Z3's own form; counted barrier phases fill in arrival order."""
        ch, ev = self.ch, self.eg.events
        co = env["co"]
        u = co.u

        def same_value(w: int, r: int):
            return ch.lg.leaf(_eq(ch.vals[r], ch.values.bv(ev[w].value)))

        cs = executions.rf_wellformed(self.eg, u, ch.rft, same_value)
        cs += executions.co_wellformed(u, ch.cot)
        cs += self._transitive(cand, co, u)
        cs += self._phases()
        return [self._lower(c) for c in cs]

    def _lower(self, c):
        """A constraint of :mod:`ptxmm.executions` as a guard or a Z3 Bool."""
        if isinstance(c, executions.AtMostOne):
            return _at_most_one([self.lg.z3(g) for g in c.guards])
        if isinstance(c, executions.ExactlyOne):
            return z3.PbEq([(self.lg.z3(g), 1) for g in c.guards], 1)
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
        """Final-state observers read a co-maximal executed write (:mod:`ptxmm.executions`)."""
        ch, u, fin = self.ch, co.u, {}
        for o in self.obs:
            if o.loc is None or o.loc in fin:
                continue
            ws = executions.final_candidates(u, cand.writes_at[o.loc], lambda w: co.must.get(w, 0))
            fv = {w: ch.lg.leaf(mk_bool(f"fin_{o.loc}_{w}")) for w in ws}
            for c in executions.final_wellformed(u, fv, co.guard):
                _assert(self.s, self._lower(c))
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
        _OPEN.discard(self)
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

    def on_paths(self, paths: dict[int, set[int]]) -> z3.BoolRef:
        """A goal: some thread ``t`` takes one of the paths ``paths[t]`` (indices into
        ``eg.paths[t]``) — where a thread stops, observed without an observable."""
        terms = []
        for t, ks in paths.items():
            sel = self.ch.sel[t]
            terms += [z3.BoolVal(0 in ks)] if sel is None else [sel[k] for k in sorted(ks)]
        return z3.Or(terms) if terms else z3.BoolVal(False)

    def find(self, goal: z3.BoolRef | None = None, negate: bool = False) -> Execution | None:
        """One allowed execution satisfying ``goal`` (or violating it), or None."""
        if self.unsat:
            return None
        if goal is None:
            return self._extract(self.s.model()) if self._sat() else None
        q = mk_bool(f"query{next(self.lg._tag)}")  # an assumption literal: no push/pop needed
        self.s.add(z3.Implies(q, z3.Not(goal) if negate else goal))
        return self._extract(self.s.model()) if self._sat(q) else None

    def raised(self) -> Iterator[Raised]:
        """For every element of a model flag that some allowed execution raises (a racing pair),
        one such execution: each query asks for an allowed execution raising any element not yet
        found, and its witness settles every element it raises."""
        terms = {} if self.unsat else _raised_terms(self)
        while terms:
            q = mk_bool(f"query{next(self.lg._tag)}")
            self.s.add(z3.Implies(q, z3.Or(list(terms.values()))))
            if not self._sat(q):
                return
            m = self.s.model()
            exe = self._extract(m)
            for k in [k for k, t in terms.items() if z3.is_true(m.eval(t, model_completion=True))]:
                del terms[k]
                yield Raised(k[0], k[1], exe)

    def _sat(self, *assumptions) -> bool:
        """``s.check`` within the deadline: raises TimedOut rather than answer "unknown"."""
        return self._solve(self.s, *assumptions)

    def _solve(self, s: z3.Solver, *assumptions) -> bool:
        ms = self.deadline.left_ms()
        if ms is not None:
            s.set("timeout", ms)
        if assumptions or _P_CHECK is None:
            r = s.check(*assumptions)
            if r == z3.unknown:
                raise TimedOut
            return r == z3.sat
        ctx = self.lg.ctx.ref()
        r = _P_CHECK(ctx.value, s.solver.value)  # the unchecked call: a tenth of a check less
        if r == 0:  # undef: out of time, unless Z3 reports an error
            if z3.Z3_get_error_code(ctx) != z3.Z3_OK:
                raise z3.Z3Exception(z3.Z3_get_error_msg(ctx, z3.Z3_get_error_code(ctx)))
            raise TimedOut
        return r > 0

    def outcomes(self) -> Iterator[tuple[tuple[int, ...], Execution, list[str]]]:
        """Every allowed outcome once: (observable values as unsigned ints, witness, flags).

        Each model gives one outcome; a clause then excludes it (one atom ``term = value`` per
        observable, the atoms shared between clauses) and the next check finds an outcome not yet
        seen, until none is left. The clauses live in a scope popped at the end. Past
        ``_SPLIT_AFTER`` outcomes, a formula that falls into parts sharing no variable is
        enumerated part by part (:meth:`_parts`)."""
        if self.unsat:
            return
        s = self.s
        base = s.assertions()  # the problem's (a copy: the blocking clauses come after)
        s.push()
        # Models not compacted (a global parameter, restored at the end): a model is built ~15%
        # faster. (Relevancy off would make checks ~40% faster, but switching it on a solver that
        # holds assertions loses some of them: Z3 defers terms until they become relevant.)
        compact = z3.get_param("model.compact")
        z3.set_param("model.compact", False)
        seen: set[tuple[int, ...]] = set()
        try:
            while self._sat():
                m = s.model()
                x = self._number(m)
                out = self._read(x, m)
                self._block(s, out[0], range(len(self.terms)))
                yield out
                seen.add(out[0])
                if len(seen) == _SPLIT_AFTER:
                    parts = self._parts(base)
                    if parts:
                        yield from self._product(parts, x, seen)
                        return
        finally:
            z3.set_param("model.compact", compact)
            if self.s is s:  # not yet closed (close() pops every scope of a pooled solver)
                s.pop()

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

    def _read(self, x: int, m: z3.ModelRef | None):
        """(values, witness, flags) of the packed value ``x`` (``m``: its model, which only
        fence.sc ranks and barrier phases are read from)."""
        lay = self._layout
        b = format(x, "b").rjust(lay.width, "0")
        values = tuple(int(b[i:j], 2) for i, j in lay.terms)
        flags = [name for name, k in lay.flags if k is True or (k is not False and b[k] == _ONE)]
        return values, self._execution(m, b), flags

    # -- a formula in parts that share no variable ----------------------------------------------
    def _parts(self, base: z3.AstVector) -> list[tuple[list[int], list[int], int]] | None:
        """The problem's assertions (``base``) and packed parts grouped
        by the variables they share, when there are at least two groups: (assertions, observables,
        digit mask) per group. The models of the whole are then exactly the unions of one model
        per group, and every observable and witness digit depends on one group only, so the
        outcomes are the product of each group's outcomes. None when the formula is one group or
        the witness reads integers (fence.sc ranks, barrier phases) or unspecified values from a
        model."""
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
        if len(groups) < 2:
            return None
        return [(a, o, mk[0]) for a, o, mk in groups.values()] + [([], [], ground[2][0])]

    def _product(self, parts, x: int, seen: set[tuple[int, ...]]):
        """Every outcome not in ``seen``: one per choice of an outcome in each part (``x``: a
        packed value of the whole, which gives the ground digits)."""
        *parts, (_, _, ground) = parts
        each = [self._part_outcomes(a, o, mask) for a, o, mask in parts]
        base = x & ground
        for choice in product(*each):
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
            x = self._number(s.model()) & mask
            out.append(x)
            if not obs:
                break
            values = [(x >> (lay.width - lay.terms[i][1])) & ((1 << (lay.terms[i][1] - lay.terms[i][0])) - 1)
                      for i in obs]
            self._block(s, values, obs)
        return out

    def _extract(self, m: z3.ModelRef) -> Execution:
        return self._execution(m, self._digits(m))

    def _execution(self, m: z3.ModelRef | None, b: str) -> Execution:
        """The witness the model's packed digits ``b`` describe."""
        ch, lay = self.ch, self._layout
        ex = [k if k is True or k is False else b[k] == _ONE for k in lay.ex]
        paths = tuple(0 if ks is None else next(i for i, k in enumerate(ks) if b[k] == _ONE)
                      for ks in lay.paths)
        rf = tuple(p for p, k in lay.rf if b[k] == _ONE)
        co = {p for p, k in lay.co if b[k] == _ONE}
        co.update(p for p in lay.co_known if ex[p[0]] and ex[p[1]])
        co.update(p for p in lay.init_co if ex[p[1]])
        vals = tuple((r, int(b[i:j], 2)) for r, (i, j) in lay.reads if ex[r])
        if m is not None and ch.values.unspec:  # the values the ISA leaves to the solver
            vals = tuple(sorted(ch.values.chosen(m) + vals))
        sc = ()
        if ch.rank:
            sc = tuple(sorted((f for f in ch.rank if ex[f]),
                              key=lambda f: m.eval(ch.rank[f], model_completion=True).as_long()))
        final = tuple((loc, next(w for w, k in ws if b[k] == _ONE)) for loc, ws in lay.fin)
        phases = tuple((a, m.eval(v, model_completion=True).as_long())
                       for a, v in sorted(ch.ph.items()) if ex[a])
        return Execution(paths, rf, tuple(sorted(co)), vals, sc, final, phases)


def _apart(eg: EventGraph) -> Callable[[int], int]:
    """apart(a): the events of a's thread on none of a's paths (a thread runs one path), as a
    bitset: they never execute together with a."""
    memo: dict[int, int] = {}

    def apart(a: int) -> int:
        x = memo.get(a)
        if x is None:
            ea = eg.events[a]
            x = memo[a] = sum(1 << e.eid for e in eg.events if exclusive(ea, e))
        return x
    return apart


def _raised_terms(pb: Z3Problem) -> dict[tuple[str, tuple[int, ...]], z3.BoolRef]:
    """Every element a model flag may raise (its events: a pair, one event, or none for a flag
    on the whole execution), with the Z3 term of its being raised."""
    out = {}
    for (st, v), (name, term) in zip(pb.flag_values, pb.flag_terms):
        if st.negated and st.check in ("empty", "irreflexive"):
            u = v.u
            elems = ax.merge_symmetric(ax.offending(st.check, v), lambda a, b, u=u: u.any([a, b]))
        else:
            elems = {(): term}
        for k, g in elems.items():
            if g is not False:
                out[(name, k)] = pb.lg.z3(g)
    return out


_ONE = "1"


@record
class _Layout:
    """Where a witness's parts lie in the packed term's binary digits (most significant first):
    a digit per Boolean, then the observables' words, then the reads' values."""

    width: int  # digits in all
    ex: list  # per event: True, False, or the digit of its execution guard
    paths: list  # per thread: None (one path) or the digit of each path's selector
    rf: list  # ((write, read), digit), sorted
    co: list  # ((a, b), digit)
    fin: list  # (location, [(write, digit)]): the write its final value comes from
    flags: list  # (name, True | False | digit)
    terms: list  # (start, end) of each observable's word
    reads: list  # (read, (start, end)), by read
    co_known: list  # co pairs known beforehand: in co when both ends execute
    init_co: list  # (initial write, write of its location): in co when the write executes


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
