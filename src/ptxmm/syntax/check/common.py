"""What every check shares: the :class:`Sources` a front end hands the pass, the did-you-mean
of every located message, the limits on a program's size and nesting, and the rules that an
initial value fits its type and an integer constant is at most 64 bits (ptxas's "Constant
overflow")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field

from ..._infra.larkrt import Token, Tree
from ..._infra.records import record
from ...errors import ParseError, SemanticError, SourcePos
from ...ir.program import (
    type_width,
)

MAX_THREADS = 64
MAX_INSTRS = 50_000  # per thread, labels included
MAX_DEPTH = 100  # operators (!, &&, ||) nested in a condition
MAX_REG_RANGE = 65_536  # registers one `.reg .u32 %r<n>` declares


@record(frozen=False)
class Sources:
    """What the IR does not keep and the located messages need: where each name of the condition
    first appears, each constant of the condition with the name it is compared with, and the
    registers an instruction reads that its IR form drops (texture/surface coordinates)."""

    refs: dict = field(default_factory=dict)  # RegRef | MemRef -> SourcePos
    consts: list = field(default_factory=list)  # (RegRef | MemRef, int, SourcePos)
    extra_reads: dict = field(default_factory=dict)  # id(instruction) -> [Reg]
    spots: dict = field(default_factory=dict)  # id(instruction) -> [(operand, SourcePos)]
    dialect: str = "ptx"  # "ptx" | "litmus": how hints spell registers and initial values


def did_you_mean(word: str, options: Iterable[str], prefix: str = "",
                 synonyms: Mapping[str, str] | None = None) -> str:
    """``"did you mean `x`? "`` for the closest of ``options``, or ``""``; a closest word of
    ``synonyms`` is suggested as what it stands for (``store`` as ``st``)."""
    import difflib  # (here: only an error needs it)

    synonyms = synonyms or {}
    close = difflib.get_close_matches(word, sorted({*options, *synonyms}), n=3, cutoff=0.6)
    if not close:
        return ""
    best = next((c for c in close if c.startswith(word)), close[0])  # .ad: .add before .and
    return f"did you mean `{prefix}{synonyms.get(best, best)}`? "


# ----- limits ---------------------------------------------------------------------------------------


def check_thread_count(n: int, pos: SourcePos | None) -> None:
    if n > MAX_THREADS:
        raise SemanticError(f"the test has {n} threads, more than the limit of {MAX_THREADS}", pos,
                            "litmus tests are small: split it into tests of a few threads each")


def check_instr_count(n: int, thread: str, pos: SourcePos | None) -> None:
    if n > MAX_INSTRS:
        raise SemanticError(f"thread {thread} has {n} instructions, more than the limit of "
                            f"{MAX_INSTRS}", pos,
                            "litmus tests are small: express repetition with a loop (a label and "
                            "bra) and --unroll")


def check_depth(tree: Tree, file: str, ops: tuple[str, ...] = ("c_or", "c_and", "c_not"),
                parens: bool = False) -> None:
    """A condition's operators nest at most MAX_DEPTH deep (checked without recursion, before
    anything recursive walks the tree). In a tree that keeps parentheses (``parens``: ``c_paren``,
    the .ptx grammar), a pair of parentheses is one level and a ``c_or``/``c_and`` of one operand (the
    grammar's wrapper of every parenthesised expression) none; the error points at the first
    operator or parenthesis beyond the limit."""
    stack = [(tree, 0)]
    while stack:
        t, d = stack.pop()
        if not isinstance(t, Tree):
            continue
        what = _nesting(t, ops, parens)
        if what:
            d += 1
            if d > MAX_DEPTH:
                _too_deep(t, what, file)
        stack += [(c, d) for c in t.children]


def _nesting(t: Tree, ops: tuple[str, ...], parens: bool) -> str:
    """"parentheses", "operators", or "" for a node that does not nest."""
    if t.data == "c_paren":
        return "parentheses"
    if t.data not in ops:
        return ""
    if parens and t.data != "c_not" and sum(isinstance(c, Tree) for c in t.children) < 2:
        return ""
    return "operators"


def _too_deep(t: Tree, what: str, file: str) -> None:
    tok = _first_token(t)
    pos = SourcePos(file, tok.line, tok.column) if tok is not None else None
    hint = ("drop the redundant parentheses: (e) is e" if what == "parentheses" else
            "write it flatter: !!e is e, and a chain of && or || needs no parentheses")
    raise SemanticError(f"the condition nests {what} more than {MAX_DEPTH} deep", pos, hint)


def _first_token(t: Tree) -> Token | None:
    while isinstance(t, Tree):
        if not t.children:
            return None
        t = t.children[0]
    return t if isinstance(t, Token) else None


# ----- literals -------------------------------------------------------------------------------------


def type_range(ty: str) -> tuple[int, int]:
    """The integers a PTX type holds: .u from 0, .s two's complement, .b (and .f, as bits) either
    reading, .pred 0 and 1."""
    w = type_width(ty)
    if ty == "pred":
        return 0, 1
    if ty.startswith("u"):
        return 0, (1 << w) - 1
    if ty.startswith("s"):
        return -(1 << (w - 1)), (1 << (w - 1)) - 1
    return -(1 << (w - 1)), (1 << w) - 1


def _range_hint(ty: str) -> str:
    lo, hi = type_range(ty)
    w = type_width(ty)
    if ty.startswith("u"):
        return (f"a .{ty} holds 0..{hi} (0x{hi:X}); write 0x{hi:X} for all ones, or declare "
                f".s{w} for negative values")
    if ty.startswith("s"):
        return f"a .{ty} holds {lo}..{hi}; declare .u{w} for values up to {(1 << w) - 1}"
    if ty == "pred":
        return "a .pred holds 0 or 1"
    return f"a .{ty} holds {w} bits: {lo}..{hi}"


def check_init_value(value: int, ty: str, what: str, pos: SourcePos | None) -> None:
    """An initial value (of a location or a register) must fit its declared type."""
    lo, hi = type_range(ty)
    if not lo <= value <= hi:
        raise SemanticError(f"{value} does not fit {what} (.{ty})", pos, _range_hint(ty))


IMM_LIMIT = 1 << 64


def check_immediate(value: int, pos: SourcePos | None) -> None:
    """An integer constant in an instruction fits in 64 bits (a larger one is ptxas's "Constant
    overflow"); in a .ptx test, :func:`check_operands` then asks it to fit its operand's type."""
    if abs(value) >= IMM_LIMIT:
        raise ParseError(f"integer constant {value} overflows 64 bits", pos,
                         "PTX integer constants are 64-bit: at most 0xFFFFFFFFFFFFFFFF")


def line_of(pos: SourcePos | None) -> str:
    return str(pos.line) if pos else "?"
