"""Value expressions of a litmus execution: machine integers of a fixed bit width (a float is its
IEEE bit pattern, operated on by the ``f.…`` operations of :mod:`ptxmm.ir.floats`).

Every expression has a width (1 for predicates, 8..64 for PTX types). Arithmetic wraps at the
width; comparisons are explicitly signed (``slt``…) or unsigned (``ult``…) and give a 1-bit value;
``shl``/``shr``/``sar`` by an amount ≥ the width give 0 (``sar``: the sign), as the PTX ISA
clamps them. One small AST, two interpretations: :func:`evaluate` (Python ints) for the
brute-force engine and explanations, and the Z3 bit-vector translation in :mod:`ptxmm.engines.z3`.

A value the PTX ISA leaves unspecified (``div`` and ``rem`` by zero: "an unspecified,
machine-specific value") is an :class:`Unspec` leaf: a free choice of the execution, one per
dynamic instance of the instruction. The Z3 engine gives it a fresh bit-vector constant; a
concrete evaluation takes its value from the execution (``values`` keyed by
:func:`unspec_key`), and has no value to invent when the execution does not give one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Union

from .._infra.records import record
from ..errors import UnsupportedError
from . import floats


@record
class Const:
    v: int  # always in [0, 2**w)
    w: int = 32


@record
class ReadVal:
    """The value returned by read event ``eid`` (width of its location)."""

    eid: int
    w: int = 32


@record
class Op:
    op: str
    args: tuple[Expr, ...]
    w: int


@record
class Unspec:
    """A value the PTX ISA leaves unspecified, chosen freely by each execution: ``uid`` numbers
    the dynamic instance (an unrolled instruction on one path), ``where`` says which instruction
    and why (for messages; not part of the identity). Division by zero, a timer read, an
    ``%envreg`` (ir/sregs.py)."""

    uid: int
    w: int = 32
    where: str = field(default="", compare=False)


Expr = Union[Const, ReadVal, Op, Unspec]


def unspec_key(uid: int) -> int:
    """The key of unspecified value ``uid`` among an execution's values (reads have keys ≥ 0)."""
    return -1 - uid

CMP_OPS = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"}
BOOL_OPS = CMP_OPS | {"land", "lor", "lnot"}


def mask(v: int, w: int) -> int:
    return v & ((1 << w) - 1)


def to_signed(v: int, w: int) -> int:
    v = mask(v, w)
    return v - (1 << w) if w > 1 and v >> (w - 1) else v


def const(v: int, w: int) -> Const:
    return Const(mask(v, w), w)


TRUE = Const(1, 1)
FALSE = Const(0, 1)


def _leaves(e: Expr, kind: type) -> frozenset:
    """The leaves of ``e`` of class ``kind``."""
    if isinstance(e, kind):
        return frozenset({e})
    if isinstance(e, Op):
        out: frozenset = frozenset()
        for a in e.args:
            out |= _leaves(a, kind)
        return out
    return frozenset()


def reads_of(e: Expr) -> frozenset[int]:
    """The reads whose values an expression names (their event ids)."""
    return frozenset(r.eid for r in _leaves(e, ReadVal))


def unspecs_of(e: Expr) -> frozenset[Unspec]:
    """The unspecified values an expression names."""
    return _leaves(e, Unspec)


def _inc(r: int, b: int, w: int) -> int:
    return 0 if r >= b else r + 1


def _dec(r: int, b: int, w: int) -> int:
    return b if (r == 0 or r > b) else r - 1


def _shift(kind: str):
    def f(a: int, b: int, w: int) -> int:
        if b >= w:
            return (mask(-1, w) if to_signed(a, w) < 0 else 0) if kind == "sar" else 0
        if kind == "shl":
            return a << b
        return to_signed(a, w) >> b if kind == "sar" else a >> b
    return f


def _div(kind: str):
    """PTX div/rem (.u: unsigned; .s: signed, truncating toward zero, the remainder taking the
    dividend's sign). Division by zero is unspecified in PTX: the event builder never lets this
    result be used then (it selects an :class:`Unspec` when the divisor is 0, see
    :func:`division`); the value below (SMT-LIB's, as Z3 computes it) only keeps the function
    total for the arm an ``ite`` does not select. (It was the answer before issue 24, and not
    even the machine's: an H100, CUDA 13.0, gave -1 / 0xFFFFFFFF for div and rem by zero alike,
    where SMT-LIB gives rem the dividend and div.s of a negative 1. The same run truncated
    div.s/rem.s of negative operands and gave INT_MIN / -1 = INT_MIN, as below; the ISA's rem
    note calls negative operands machine-dependent, which ptxmm does not model.)"""
    def f(a: int, b: int, w: int) -> int:
        if kind[0] == "s":
            a, b = to_signed(a, w), to_signed(b, w)
        if b == 0:
            return a if kind.endswith("rem") else (1 if a < 0 else -1)
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return a - q * b if kind.endswith("rem") else q
    return f


# concrete semantics: arguments are unsigned ints already masked to their widths; the result is
# masked to the expression's width by the caller
_CONCRETE: dict[str, Callable[..., int]] = {
    "add": lambda a, b, w: a + b,
    "sub": lambda a, b, w: a - b,
    "mul": lambda a, b, w: a * b,
    "udiv": _div("udiv"),
    "sdiv": _div("sdiv"),
    "urem": _div("urem"),
    "srem": _div("srem"),
    "and": lambda a, b, w: a & b,
    "or": lambda a, b, w: a | b,
    "xor": lambda a, b, w: a ^ b,
    "not": lambda a, w: ~a,
    "neg": lambda a, w: -a,
    "shl": _shift("shl"),
    "shr": _shift("shr"),
    "sar": _shift("sar"),
    "smin": lambda a, b, w: a if to_signed(a, w) <= to_signed(b, w) else b,
    "smax": lambda a, b, w: a if to_signed(a, w) >= to_signed(b, w) else b,
    "umin": lambda a, b, w: min(a, b),
    "umax": lambda a, b, w: max(a, b),
    "inc": _inc,
    "dec": _dec,
    "cas": lambda r, b, c, w: c if r == b else r,
    "eq": lambda a, b, w: int(a == b),
    "ne": lambda a, b, w: int(a != b),
    "slt": lambda a, b, w: int(to_signed(a, w) < to_signed(b, w)),
    "sle": lambda a, b, w: int(to_signed(a, w) <= to_signed(b, w)),
    "sgt": lambda a, b, w: int(to_signed(a, w) > to_signed(b, w)),
    "sge": lambda a, b, w: int(to_signed(a, w) >= to_signed(b, w)),
    "ult": lambda a, b, w: int(a < b),
    "ule": lambda a, b, w: int(a <= b),
    "ugt": lambda a, b, w: int(a > b),
    "uge": lambda a, b, w: int(a >= b),
    "land": lambda a, b, w: int(bool(a) and bool(b)),
    "lor": lambda a, b, w: int(bool(a) or bool(b)),
    "lnot": lambda a, w: int(not a),
    "ite": lambda c, a, b, w: a if c else b,
    "zext": lambda a, w: a,
    "sext": None,  # needs the source width: handled in evaluate
    "trunc": lambda a, w: a,
}


def _bfind(signed: bool, shiftamt: bool) -> Callable[[int, int], int]:
    """bfind: the position of the most significant 1 bit (of a signed operand: of the most
    significant bit that differs from the sign), 0xFFFFFFFF when there is none; ``.shiftamt``:
    the left shift that moves that bit to the top instead (PTX ISA, bfind)."""
    def f(a: int, w: int) -> int:
        x = (~a & ((1 << w) - 1)) if signed and a >> (w - 1) else a
        if x == 0:
            return 0xFFFFFFFF
        pos = x.bit_length() - 1
        return w - 1 - pos if shiftamt else pos
    return f


# the bit-counting operations (PTX ISA, Integer Arithmetic: popc, clz, brev, bfind), of an operand
# of width w (the result's width is the expression's: .u32 but for brev)
BIT_OPS: dict[str, Callable[[int, int], int]] = {
    "popc": lambda a, w: a.bit_count(),
    "clz": lambda a, w: w - a.bit_length(),
    "brev": lambda a, w: int(format(a, f"0{w}b")[::-1], 2),
    "ubfind": _bfind(False, False), "sbfind": _bfind(True, False),
    "ubfind.shiftamt": _bfind(False, True), "sbfind.shiftamt": _bfind(True, True),
}


_SHORT = {"land": False, "lor": True}  # the operand value that decides a land / lor


def evaluate(e: Expr, reads: dict[int, int]) -> int:
    """Concrete value (unsigned, masked to the width) of an expression, given read values. An
    ``ite`` evaluates only the arm its condition selects (the other may name a read that did not
    execute), and ``land``/``lor`` stop at their first false/true operand (a path's guard: its
    later operands may name a read of a path not taken, e.g. a second ``mbarrier.try_wait``
    of a lane whose first succeeded, read through a ``shfl`` of that lane)."""
    if isinstance(e, Const):
        return e.v
    if isinstance(e, ReadVal):
        return mask(reads[e.eid], e.w)
    if isinstance(e, Unspec):
        v = reads.get(unspec_key(e.uid))
        if v is None:
            raise UnsupportedError(
                f"{e.where or 'a value'} is unspecified (the PTX ISA does not fix it): a concrete "
                "enumeration (explaining a forbidden outcome, --engine brute) cannot leave it free",
                None, "`ptxmm check` answers with the Z3 engine, which lets the value be anything")
        return mask(v, e.w)
    if e.op == "ite":
        return evaluate(e.args[1] if evaluate(e.args[0], reads) else e.args[2], reads)
    if e.op in _SHORT:
        stop = _SHORT[e.op]
        return int(stop if any(bool(evaluate(a, reads)) is stop for a in e.args) else not stop)
    vals = [evaluate(a, reads) for a in e.args]
    if e.op.startswith("f."):  # floating point (ir/floats.py): bit patterns in, a bit pattern out
        return floats.evaluate(e.op, vals, tuple(a.w for a in e.args), e.w)
    if e.op == "sext":
        return mask(to_signed(vals[0], e.args[0].w), e.w)
    if e.op in BIT_OPS:
        return mask(BIT_OPS[e.op](vals[0], e.args[0].w), e.w)
    if e.op in CMP_OPS:
        return _CONCRETE[e.op](*vals, e.args[0].w)
    return mask(_CONCRETE[e.op](*vals, e.w), e.w)


def mk(op: str, *args: Expr, w: int | None = None) -> Expr:  # noqa: C901 — one case per folding rule
    """Build an expression of width ``w`` (default: the first argument's; comparisons: 1),
    folding constants and the identities used to write fake dependencies (``xor r,r`` = 0,
    ``sub r,r`` = 0, ``and r,0`` = 0, ``mul r,0`` = 0, ``add r,0`` = r)."""
    if w is None:
        w = 1 if op in BOOL_OPS else args[-1].w if op in ("ite", "cas") else args[0].w
    if all(isinstance(a, Const) for a in args):
        return Const(evaluate(Op(op, args, w), {}), w)
    if op in ("zext", "sext", "trunc") and args[0].w == w:
        return args[0]
    if op in ("xor", "sub") and args[0] == args[1]:
        return Const(0, w)
    if op in ("and", "mul") and any(isinstance(a, Const) and a.v == 0 for a in args):
        return Const(0, w)
    if op in ("add", "or", "xor") and len(args) == 2:
        if args[1] == Const(0, w):
            return args[0]
        if args[0] == Const(0, w):
            return args[1]
    if op == "ite" and isinstance(args[0], Const):
        return args[1] if args[0].v else args[2]
    if op == "ite" and args[1] == args[2]:
        return args[1]
    if op == "land":
        if TRUE in args:
            return args[1] if args[0] == TRUE else args[0]
        if FALSE in args:
            return FALSE
    if op == "lor":
        if FALSE in args:
            return args[1] if args[0] == FALSE else args[0]
        if TRUE in args:
            return TRUE
    return Op(op, args, w)


def division(op: str, a: Expr, b: Expr, w: int, unspec: Callable[[], Unspec]) -> Expr:
    """``a op b`` for op in udiv sdiv urem srem at width ``w``: when the divisor may be 0, an
    ``ite`` that selects a fresh unspecified value (``unspec()``) for a zero divisor (PTX ISA,
    div and rem: "Division by zero yields an unspecified, machine-specific value")."""
    if isinstance(b, Const) and b.v != 0:
        return mk(op, a, b, w=w)
    u = unspec()
    if isinstance(b, Const):
        return u
    return mk("ite", mk("eq", b, Const(0, b.w)), u, mk(op, a, b, w=w))


def float_result(op: str, args: list[Expr], w: int, fresh: Callable[[], Unspec]) -> Expr:
    """The value of floating-point operation ``op`` (ir/floats.py) at width ``w``, a NaN result
    replaced by a NaN of unspecified bits (PTX ISA 9.7.3: "Single-precision instructions return
    an unspecified NaN"): ``f.mknan`` of ``fresh()``, asked for only where a NaN may come out."""
    core = mk(op, *args, w=w)
    if not floats.may_be_nan(op) or (isinstance(core, Const) and not floats.is_nan(core.v, w)):
        return core
    nan = mk("f.mknan", fresh(), w=w)
    if isinstance(core, Const):
        return nan
    return mk("ite", mk("f.isnan", core, w=1), nan, core)


def convert(e: Expr, w: int, signed: bool = False) -> Expr:
    """``e`` at width ``w``: truncated, or zero-/sign-extended."""
    if e.w == w:
        return e
    if e.w > w:
        return mk("trunc", e, w=w)
    return mk("sext" if signed else "zext", e, w=w)


def truth(e: Expr) -> Expr:
    """A 1-bit truth value: ``e != 0``."""
    return e if e.w == 1 else mk("ne", e, Const(0, e.w))


def substitute(e: Expr, f: Callable[[int], int], memo: dict[int, tuple[Expr, Expr]] | None = None) -> Expr:
    """Rename the read events of an expression. ``memo`` (id of a node → (the node, its
    renaming)), shared by calls with the same ``f``: a node the expressions share (registers,
    path assumptions and event values are DAGs over the same nodes) is renamed once, and a node
    whose reads keep their names is returned as it is — the same expressions, in linear time."""
    if isinstance(e, (Const, Unspec)):
        return e
    if memo is None:
        memo = {}
    hit = memo.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    if isinstance(e, ReadVal):
        eid = f(e.eid)
        out: Expr = e if eid == e.eid else ReadVal(eid, e.w)
    else:
        args = tuple(substitute(a, f, memo) for a in e.args)
        out = e if all(x is y for x, y in zip(args, e.args)) else Op(e.op, args, e.w)
    memo[id(e)] = (e, out)  # the node kept alive with its id: no other node takes the id meanwhile
    return out
