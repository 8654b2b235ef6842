"""Term construction for the relation algebra over Z3 (the engine side of :class:`relalg.Logic`):
hash-consed and/or/not terms over Z3 Bool leaves, built in Z3 only when asserted or evaluated."""

from __future__ import annotations

import weakref
from itertools import count

import z3

from ...cat.relalg import Guard
from .capi import _LT, _P_AND, _P_CONCAT, _P_DEC, _P_INC, _P_ITE, _P_NOT, _P_OR, _VP, mk_int

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

    def has_disjunct(self, g: Guard, t: Guard) -> bool:
        """Whether guard ``g`` is True, ``t``, or a disjunction with ``t`` among its (nested)
        disjuncts — so ``t`` implies ``g``."""
        if g is True or g == t:
            return True
        todo = [g] if type(g) is int else []
        while todo:
            x = todo.pop()
            if x == t:
                return True
            if self.op[x] == _OR_OP:
                todo.extend(self.kids[x])
        return False

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
