"""Which pairs of each closure the axioms and flags can read (a demand), for the guarded Warshall.

A model's closures are computed whole, but the axioms often read a small part of them: ptx.cat's
base causality ``bco-sync`` (a closure over po and the synchronization patterns) reaches the axioms
through ``ppcb = bco & (vloc & …)`` and ``[Fsc] ; bco ; [Fsc]``: at the grid barrier's 16 blocks
24% of its 37,680 guarded pairs. Told which pairs are read, :meth:`Rel.closure` skips the pairs
no later pivot reads and no consumer reads (``relalg._closure_guarded``'s ``demand``).

The demand is found in two steps, per evaluation of a model:

1. **Skeleton.** Every node's possible pairs, on bitsets (:class:`_Skeletons`): the base
   relations' must and may pairs, each operator over-approximated (a difference keeps its left
   operand, a complement every pair of live events, a sequence composes through every event), so
   that every pair the engine's evaluation can have is in it.
2. **Backward.** From the axioms and flags (each reads every pair of its expression), over the
   statements last first (a name's demand is the union over its uses, each ``let`` handing its
   name's demand to its expression), each operator passes what its operands can contribute to the
   demanded pairs of its result: a union or complement its own demand; an intersection its demand
   within the skeletons of the other operands (a pair the other operand cannot have is absent
   whatever this one holds), a difference likewise for the right operand; a sequence, for each
   operand, the pairs that lie on a demanded path through the skeletons of the others; inverse,
   lift, domain, range and cartesian product their own reading. A closure's operand, a ``let
   rec``'s expressions and anything under them: every pair. Under a demand of every pair a
   sequence still passes each operand only the pairs on a path through the others.

A closure then computes exactly the guards of its demanded pairs (and every static pair); its
other guarded pairs are dropped. ``interp.DEMAND_CLOSURES`` switches it; the property tests compare
the engines' verdicts, outcomes and findings with it off (tests/engines/test_grid_demand.py)."""

from __future__ import annotations

from .ast import (
    Axiom,
    Cart,
    Complement,
    Diff,
    Domain,
    EmptyRel,
    Expr,
    Flag,
    Inter,
    Inverse,
    Let,
    LetRec,
    Lift,
    Name,
    Opt,
    Plus,
    Range,
    Seq,
    Star,
    Stmt,
    Union,
)
from .relalg import ESet, bits, warshall

ALL = "all"  # every pair (or element)
Demand = dict | int | str  # rows of pairs (relation), a bitset (set), or ALL


def _skel(v) -> dict | int:
    """Every pair (rows) or element (bitset) of a value."""
    if isinstance(v, ESet):
        return v.must | sum(1 << e for e in v.may)
    rows = dict(v.must)
    for a, b in v.may:
        rows[a] = rows.get(a, 0) | (1 << b)
    return rows


def _as_rel(s) -> dict:
    return s if isinstance(s, dict) else {e: 1 << e for e in bits(s)}


def _inter(d: Demand, s: dict | int) -> Demand:
    """A demand within a skeleton (of the same kind, sets lifted to the diagonal where mixed)."""
    if d == ALL:
        return s
    if isinstance(d, int) and isinstance(s, int):
        return d & s
    d, s = _as_rel(d), _as_rel(s)
    return {a: r & s[a] for a, r in d.items() if a in s and r & s[a]}


def _restrict(d: Demand, s) -> Demand:
    """``d`` within the skeleton ``s`` of another operand (ALL: unknown, no restriction); a set
    operand of a relation's operation is lifted, a set's demand compared on the diagonal."""
    if s == ALL:
        return d
    if d == ALL:
        return s
    if isinstance(d, int):
        return d & (s if isinstance(s, int) else sum(1 << a for a, r in s.items() if (r >> a) & 1))
    return _inter(d, s)


def _union(a: Demand | None, b: Demand) -> Demand:
    if a is None:
        return b
    if a == ALL or b == ALL:
        return ALL
    if isinstance(a, int) and isinstance(b, int):
        return a | b
    a, b = _as_rel(a), _as_rel(b)
    out = dict(a)
    for k, r in b.items():
        out[k] = out.get(k, 0) | r
    return out


def _empty(d: Demand) -> bool:
    return d != ALL and not d


def _diagonal_rows(rows: dict) -> bool:
    return all(r == 1 << k for k, r in rows.items())


def _compose(a: dict, b: dict) -> dict:
    """a ; b on bitset rows (a lifted set on either side: a restriction)."""
    if _diagonal_rows(b):
        mask = _or(b.values())
        return {x: r & mask for x, r in a.items() if r & mask}
    if _diagonal_rows(a):
        return {x: b[x] for x in a if b.get(x)}
    out = {}
    for x, row in a.items():
        acc = 0
        for y in bits(row):
            acc |= b.get(y, 0)
        if acc:
            out[x] = acc
    return out


def _transpose(a: dict) -> dict:
    out: dict[int, int] = {}
    for x, row in a.items():
        for y in bits(row):
            out[y] = out.get(y, 0) | (1 << x)
    return out


class _Backward:
    """The backward pass over one evaluation's statements, given each node's skeleton."""

    def __init__(self, skel: dict[int, dict | int], n: int) -> None:
        self.skel = skel
        self.full = (1 << n) - 1
        self.names: dict[str, Demand] = {}
        self.closures: dict[int, Demand] = {}  # id(Plus or Star node) → its demand

    def stmts(self, stmts: list[Stmt]) -> None:
        for st in reversed(stmts):
            if isinstance(st, (Axiom, Flag)):
                self.push(st.expr, ALL)
            elif isinstance(st, Let):
                for b in reversed(st.bindings):
                    d = self.names.pop(b.name, None)
                    if d is not None:
                        self.push(b.expr, d)
            elif isinstance(st, LetRec):
                for n in st.names:
                    self.names.pop(n, None)
                for e in st.exprs:
                    self.push(e, ALL)

    def _s(self, node: Expr) -> dict | int:
        s = self.skel.get(id(node))
        return ALL if s is None else s  # not evaluated: nothing known  # type: ignore[return-value]

    def push(self, node: Expr, d: Demand) -> None:  # noqa: C901 — one case per operator
        if _empty(d):
            return
        match node:
            case Name(name=name):
                self.names[name] = _union(self.names.get(name), d)
            case Union():
                for c in node.args:
                    self.push(c, self._fit(c, d))
            case Inter() | Diff():
                self._setop(node, d)
            case Seq():
                self._seq(node, d)
            case Cart():
                rows = self._rows(d)
                if rows is None:
                    self.push(node.args[0], ALL)
                    self.push(node.args[1], ALL)
                else:
                    self.push(node.args[0], sum(1 << a for a in rows))
                    self.push(node.args[1], _or(rows.values()))
            case Plus() | Star():
                self.closures[id(node)] = _union(self.closures.get(id(node)), d)
                self.push(node.arg, ALL)
            case Opt() | Complement():
                self.push(node.arg, self._fit(node.arg, d))
            case Inverse():
                rows = self._rows(d)
                self.push(node.arg, ALL if rows is None else _transpose(rows))
            case Lift():
                rows = self._rows(d)
                self.push(node.arg, ALL if rows is None else _diagonal(rows))
            case Domain():
                self.push(node.arg, d if d == ALL else {a: self.full for a in bits(d)})  # type: ignore[arg-type]
            case Range():
                self.push(node.arg, d if d == ALL else {a: d for a in range(self.full.bit_length())})

    def _rows(self, d: Demand) -> dict | None:
        return None if d == ALL else _as_rel(d)  # type: ignore[arg-type]

    def _fit(self, node: Expr, d: Demand) -> Demand:
        """``d`` in the kind of ``node``'s value: a set operand under a relation's demand is lifted
        (its demand: the diagonal)."""
        if d == ALL:
            return d
        if isinstance(self.skel.get(id(node)), int) and isinstance(d, dict):
            return sum(1 << a for a, r in d.items() if (r >> a) & 1)
        return d

    def _setop(self, node: Inter | Diff, d: Demand) -> None:
        """An intersection: each operand's demand within the others' skeletons; a difference:
        the left operand's own demand, each right one's within the left one's skeleton."""
        args = node.args
        for i, c in enumerate(args):
            di = self._fit(c, d)
            if isinstance(node, Inter):
                others = [o for j, o in enumerate(args) if j != i]
            else:
                others = [args[0]] if i > 0 else []
            for o in others:
                di = _restrict(di, self._s(o))
            self.push(c, di)

    def _seq_all(self, args, rels: list[dict]) -> None:
        for c, di in zip(args, _seq_all_demands(rels)):
            self.push(c, self._fit(c, di))

    def _seq(self, node: Seq, d: Demand) -> None:
        args = node.args
        sk = [self._s(c) for c in args]
        if any(s == ALL for s in sk):
            for c in args:
                self.push(c, ALL)
            return
        rels = [_as_rel(s) for s in sk]  # type: ignore[arg-type]
        if d == ALL:
            self._seq_all(args, rels)
            return
        dr = _as_rel(d)  # type: ignore[arg-type]
        n = len(args)
        pre: list = [None] * n  # pre[i]: a0 ; … ; a(i-1)  (None: the identity)
        for i in range(1, n):
            pre[i] = rels[0] if i == 1 else _compose(pre[i - 1], rels[i - 1])
        suf: list = [None] * n  # suf[i]: a(i+1) ; … ; a(n-1)
        for i in range(n - 2, -1, -1):
            suf[i] = rels[n - 1] if i == n - 2 else _compose(rels[i + 1], suf[i + 1])
        for i, c in enumerate(args):
            # e[x]: the ends z of demanded pairs (u, z) with u before x (u = x first)
            e = dr if pre[i] is None else _compose(_transpose(pre[i]), dr)
            di = {}
            for x, row in rels[i].items():
                ex = e.get(x, 0)
                if not ex:
                    continue
                keep = 0
                for y in bits(row):
                    reach = (1 << y) if suf[i] is None else suf[i].get(y, 0)
                    if reach & ex:
                        keep |= 1 << y
                if keep:
                    di[x] = keep
            self.push(c, self._fit(c, di))


def _seq_all_demands(rels: list[dict]) -> list[dict]:
    """Under a demand of every pair, each operand's pairs (x, y) that lie on a path: x reached by
    the operands before it (any x for the first), y leading on through the ones after it."""
    n = len(rels)
    out = []
    reach = -1  # the events the operands before i end at (-1: any)
    ends = []
    ok = -1
    for i in range(n - 1, -1, -1):  # ends[i]: the events the operands after i start a path from
        ends.append(ok)
        ok = sum(1 << a for a, r in rels[i].items() if r & ok) if ok != -1 else \
            sum(1 << a for a, r in rels[i].items() if r)
    ends.reverse()
    for i in range(n):
        di = {x: r & ends[i] for x, r in rels[i].items() if (reach >> x) & 1 and r & ends[i]}
        out.append(di)
        reach = _or(r & ends[i] for x, r in rels[i].items() if (reach >> x) & 1)
    return out


def _diagonal(rows: dict) -> int:
    """The elements x with (x, x) in ``rows``."""
    return sum(1 << a for a, r in rows.items() if (r >> a) & 1)


def _diag(s: int) -> dict:
    return {e: 1 << e for e in bits(s)}


def _or(xs) -> int:
    out = 0
    for x in xs:
        out |= x
    return out


def closure_demands(stmts: list[Stmt], base, live: int) -> dict[int, Demand]:
    """The demand of every closure node (id(node) → rows or ALL) of the statements, over the
    engine's base environment ``base`` whose executable events are ``live``."""
    sk = _Skeletons(base, live)
    sk.stmts(stmts)
    back = _Backward(sk.skel, live.bit_length())
    back.stmts(stmts)
    return back.closures


class _Skeletons:
    """Every node's skeleton: a superset of the pairs (elements) its value can have in any
    execution, on bitsets. The base relations' are their must and may pairs; the operators
    over-approximate: a difference keeps its left operand, a complement every pair of live
    events, a sequence composes through every intermediate event; so each is a superset of the
    engine's value by induction (the engine's operators only drop pairs)."""

    def __init__(self, base, live: int) -> None:
        self.base = base
        self.live = live
        self.env: dict[str, dict | int] = {}
        self.skel: dict[int, dict | int] = {}

    def name(self, name: str) -> dict | int:
        v = self.env.get(name)
        if v is None:
            if name == "id":
                return {e: 1 << e for e in bits(self.live)}
            v = self.env[name] = _skel(self.base[name])
        return v

    def stmts(self, stmts: list[Stmt]) -> None:
        for st in stmts:
            if isinstance(st, (Axiom, Flag)):
                self.eval(st.expr)
            elif isinstance(st, Let):
                for bd in st.bindings:
                    self.env[bd.name] = self.eval(bd.expr)
            elif isinstance(st, LetRec):
                self._letrec(st)

    def _letrec(self, st: LetRec) -> None:
        """The least fixed point (every operator here is monotone)."""
        for n in st.names:
            self.env[n] = {}
        for _ in range(self.live.bit_length() ** 2 + 2):
            new = [self.eval(e) for e in st.exprs]
            if all(self.env[n] == v for n, v in zip(st.names, new)):
                return
            for n, v in zip(st.names, new):
                self.env[n] = v

    def eval(self, node: Expr) -> dict | int:
        v = self._eval(node)
        self.skel[id(node)] = v
        return v

    def _eval(self, node: Expr) -> dict | int:  # noqa: C901 — one case per operator
        match node:
            case Name(name=name):
                return self.name(name)
            case Union() | Inter() | Diff():
                vals = [self.eval(c) for c in node.args]
                if not all(isinstance(v, int) for v in vals):
                    vals = [_as_rel(v) for v in vals]
                if isinstance(node, Diff):
                    return vals[0]
                return _fold(vals, isinstance(node, Union))
            case Seq():
                vals = [_as_rel(self.eval(c)) for c in node.args]
                out = vals[0]
                for v in vals[1:]:
                    out = _compose(out, v)
                return out
            case Cart():
                a, b = (self.eval(c) for c in node.args)
                return {x: b for x in bits(a)} if isinstance(a, int) and isinstance(b, int) and b else {}
            case EmptyRel():
                return {}
        v = self.eval(node.arg)
        match node:
            case Lift():
                return _as_rel(v)
            case Inverse():
                return _transpose(_as_rel(v))
            case Plus():
                return _close(_as_rel(v))
            case Star() | Opt():
                rows = _close(_as_rel(v)) if isinstance(node, Star) else dict(_as_rel(v))
                for e in bits(self.live):
                    rows[e] = rows.get(e, 0) | (1 << e)
                return rows
            case Complement():
                return self.live & ~v if isinstance(v, int) else {e: self.live for e in bits(self.live)}
            case Domain():
                return sum(1 << a for a, r in _as_rel(v).items() if r)
            case Range():
                return _or(_as_rel(v).values())
        return ALL  # type: ignore[return-value]  # unknown: the backward pass reads every pair


def _fold(vals: list, union: bool):
    if isinstance(vals[0], int):
        out = vals[0]
        for v in vals[1:]:
            out = out | v if union else out & v
        return out
    out = dict(vals[0])
    for v in vals[1:]:
        if union:
            for a, r in v.items():
                out[a] = out.get(a, 0) | r
        else:
            out = {a: r & v[a] for a, r in out.items() if a in v and r & v[a]}
    return out


def _close(rows: dict) -> dict:
    """The transitive closure of bitset rows (Warshall)."""
    rows = {a: r for a, r in rows.items() if r}
    return warshall(rows, list(rows))
