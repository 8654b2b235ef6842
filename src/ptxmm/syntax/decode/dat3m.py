"""Dat3M's ``.litmus`` instruction cells (``ld.acquire.gpu r0, x``): a cell's tokens as mnemonic,
qualifiers and operands, and one decoder per instruction family, with the qualifier cursor and
the semantics/scope rules the ``.ptx`` decoders use (qualifiers.py)."""

from __future__ import annotations

import re

from ..._infra.larkrt import Token
from ..._infra.records import record
from ...errors import ParseError, SourcePos, UnsupportedError
from ...ir.program import (
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Fence,
    Imm,
    Instruction,
    Label,
    Load,
    Mov,
    Operand,
    ProxyFence,
    Red,
    Reg,
    Setp,
    Store,
    Sym,
)
from ..check import did_you_mean
from ..dat3m_lex import word_type
from .qualifiers import LITMUS, SCOPES, SEMS, Quals, fence_scope, fence_sem, mem_sem

TYPE = "s64"  # Dat3M's litmus values: its 64-bit arch type (TypeFactory.getArchType), signed compares
LOADS = {"ld": "generic", "tld": "texture", "suld": "surface", "cold": "constant"}
STORES = {"st": "generic", "sust": "surface"}
ATOMS = {"atom": "generic", "suatom": "surface"}
REDS = {"red": "generic", "sured": "surface"}
# Dat3M's `operation` (add sub mul div and or xor), plus PTX's inc dec min max
RED_OPS = ("add", "sub", "mul", "div", "and", "or", "xor", "inc", "dec", "min", "max")
ATOM_OPS = (*RED_OPS, "exch", "cas")
LOCAL_OPS = ("add", "sub", "mul", "div", "and", "or", "xor")
BRANCH = {"beq": "eq", "bne": "ne", "blt": "lt", "ble": "le", "bgt": "gt", "bge": "ge"}
TAIL = ("locations", "filter", "exists", "forall", "final")  # keywords after the rows
PROXY_FENCES = ("alias", "texture", "surface", "constant", "generic")

RE_NUM = re.compile(r"0x[0-9a-fA-F]+|-?[0-9]+")
RE_REG = re.compile(r"r[0-9]+")
RE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dat3m_int(s: str) -> int:
    """Dat3M's constants: decimal (leading zeros allowed, optional minus) or 0x hexadecimal."""
    return int(s, 16) if s[:2].lower() == "0x" else int(s, 10)


def word64(v: int, pos: SourcePos) -> int:
    """A constant as Dat3M builds it: an IntLiteral of its 64-bit arch type, which holds
    -2^63 <= v < 2^64 (IntegerType.canContain); the value is that bit pattern, read signed."""
    if not -(1 << 63) <= v < 1 << 64:
        raise ParseError(f"constant {v} does not fit in 64 bits", pos,
                         "Dat3M's litmus values are 64-bit words: -9223372036854775808 to "
                         "18446744073709551615 (2^64 - 1 reads as -1)")
    return v - (1 << 64) if v >= 1 << 63 else v


# a qualifier left over is "out of place" when the dialect knows it, else "unknown" (Quals.done)
_LEFTOVER = frozenset((*SEMS, *SCOPES, *ATOM_OPS, "proxy", "cta", "sync", "arrive", "volatile"))


def suggest(word: str, options) -> str:
    return did_you_mean(word.lower(), options)


# ----- one instruction cell ------------------------------------------------------------------------


@record(frozen=False)
class _Cell:
    """One instruction cell: mnemonic qualifiers and operands with their source positions."""

    text: str
    pos: SourcePos  # of the mnemonic
    base: str
    q: Quals  # the qualifiers, in the cursor both dialects share
    ops: list[tuple[str, SourcePos]]
    label: str | None = None  # a label cell `LC00:`

    @property
    def mnemonic(self) -> str:
        return self.text.split(None, 1)[0]

    def operands(self, kinds: str, form: str) -> list:
        """Operands by kind: r register, v value (register or constant), c constant, l location,
        L label; a trailing run of '?' marks that many of the last kinds optional."""
        optional = kinds.count("?")
        kinds = kinds.replace("?", "")
        for s, p in self.ops:
            if not s:
                raise ParseError(f"missing operand in `{self.mnemonic}`", p,
                                 f"operands are separated by single commas: {form}")
        if not len(kinds) - optional <= len(self.ops) <= len(kinds):
            n = f"{len(kinds) - optional} to {len(kinds)}" if optional else str(len(kinds))
            raise ParseError(f"`{self.mnemonic}` takes {n} operand(s), got {len(self.ops)}",
                             self.pos, f"expected form: {form}")
        return [_operand(k, s, p, self.mnemonic, form) for k, (s, p) in zip(kinds, self.ops)]


_KIND = {"r": "a register like r0", "v": "a register (r0) or a constant", "c": "a constant",
         "l": "a location name", "L": "a label like LC00"}


def _operand(kind: str, s: str, pos: SourcePos, mn: str, form: str) -> Operand | str:
    if kind in "vc" and RE_NUM.fullmatch(s):
        return Imm(word64(dat3m_int(s), pos))
    if kind in "rv" and RE_REG.fullmatch(s):
        return Reg(s)
    if kind == "l" and RE_NAME.fullmatch(s) and word_type(s) == "IDENT":
        return Sym(s)
    if kind == "L" and RE_NAME.fullmatch(s):
        return s
    hint = f"expected form: {form}"
    if kind == "l" and RE_REG.fullmatch(s):
        hint = "this dialect addresses memory by location name only (no register-indirect access)"
    elif kind == "l" and RE_NAME.fullmatch(s):
        hint = (f"`{s}` is a keyword of Dat3M's litmus dialect (LitmusPTX.g4): a location name is "
                "an Identifier")
    elif kind == "c" and RE_REG.fullmatch(s):
        hint = "Dat3M's barriers take a constant first: bar.cta.sync 0, r1"
    elif kind in "vc" and RE_NAME.fullmatch(s):
        hint = f"`{s}` is a location: load it into a register first (ld.weak r1, {s})"
    elif kind in "rv" and s.startswith("%"):
        hint = f"registers are written r0, r1, ... here (no %): {s[1:]}"
    raise ParseError(f"`{s}` in `{mn}`: expected {_KIND[kind]}", pos, hint)


_WORDISH = frozenset(("IDENT", "KEYWORD", "REGISTER", "LABEL", "THREADID", "CTA", "GPU",
                      "ALIASES", "PROXYKIND", "WITH", "EXPECT", "TRUE", "LANG"))
_ALNUM = _WORDISH | {"DIGITS", "HEX"}


def _render(toks: list[Token]) -> str:
    """Tokens as one canonical string: a space only between two words or numbers."""
    out = ""
    for prev, t in zip([None, *toks], toks):
        sep = " " if prev is not None and prev.type in _ALNUM and t.type in _ALNUM else ""
        out += sep + str(t)
    return out


def split_cell(file: str, toks: list[Token]) -> _Cell | None:
    """One cell's tokens as mnemonic, qualifiers (each `.word`, whitespace and comments allowed
    around the dot, as Dat3M's lexer allows them) and comma-separated operands."""
    if not toks:
        return None
    at = lambda t: SourcePos(file, t.line, t.column)  # noqa: E731
    first = toks[0]
    if len(toks) == 2 and toks[1].type == "COLON" and first.type in _WORDISH:
        text = f"{first}:"
        return _Cell(text, at(first), text, Quals([], text, at(first), at(toks[1]), LITMUS), [],
                     label=str(first))
    quals, i = [], 1
    while i < len(toks) and toks[i].type == "PERIOD":
        if i + 1 >= len(toks) or toks[i + 1].type not in _ALNUM:
            break
        quals.append((str(toks[i + 1]), at(toks[i + 1])))
        i += 2
    rest = toks[i:]
    if first.type not in _WORDISH or (rest and rest[0].type in ("PERIOD", "COLON")):
        raise ParseError(f"malformed instruction `{_render(toks)}`", at(first),
                         "write mnemonic.qualifiers operands, e.g. ld.acquire.gpu r0, x; a label "
                         "(LC00:) is a cell of its own")
    ops: list[tuple[str, SourcePos]] = []
    if rest:
        group: list[Token] = []
        for t in [*rest, None]:
            if t is None or t.type == "COMMA":
                ops.append((_render(group), at(group[0]) if group else at(t or rest[-1])))
                group = []
            else:
                group.append(t)
    head = str(first) + "".join(f".{q}" for q, _ in quals)
    text = head + (" " + ", ".join(o for o, _ in ops) if ops else "")
    end = SourcePos(file, first.end_line, first.end_column)
    return _Cell(text, at(first), str(first), Quals(quals, head, at(first), end, LITMUS, _LEFTOVER),
                 ops)


def decode_cell(cell: _Cell) -> list[Instruction]:
    """One cell's instructions (a Dat3M branch is two: setp and bra)."""
    c = dict(pos=cell.pos, text=cell.text)
    if cell.label is not None:
        return [Label(name=cell.label, **c)]
    handler = _HANDLERS.get(cell.base)
    if handler is None:
        raise ParseError(f"unknown instruction `{cell.base}`", cell.pos,
                         suggest(cell.base, (*_HANDLERS, *TAIL)) + "instructions: "
                         + " ".join(_HANDLERS))
    return handler(cell, c)


# ----- one decoder per instruction family ---------------------------------------------------------


def _load(cell: _Cell, c: dict) -> list[Instruction]:
    form = f"{cell.base}.weak r, x | {cell.base}.relaxed|acquire.scope r, x | {cell.base} r, value"
    if not cell.q.items:  # Dat3M's localValue: a register move
        if len(cell.ops) == 2 and RE_NAME.fullmatch(cell.ops[1][0]) and not RE_REG.fullmatch(
                cell.ops[1][0]):
            raise ParseError(f"`{cell.base} r, v` (no qualifier) is a register move; "
                             f"`{cell.ops[1][0]}` is a location", cell.pos,
                             f"to load it write {cell.base}.weak {cell.ops[0][0]}, {cell.ops[1][0]}")
        d, v = cell.operands("rv", form)
        return [Mov(dst=d, src=v, type=TYPE, **c)]
    sem, scope, vol = mem_sem(cell.q, ("weak", "relaxed", "acquire"), None,
                                volatile=cell.base == "ld")
    cell.q.done(form)
    d, a = cell.operands("rl", form)
    return [Load(sem=sem, scope=scope, type=TYPE, dst=d, addr=Addr(a), proxy=LOADS[cell.base],
                 volatile=vol, **c)]

def _store(cell: _Cell, c: dict) -> list[Instruction]:
    form = f"{cell.base}.weak x, v | {cell.base}.relaxed|release.scope x, v"
    sem, scope, vol = mem_sem(cell.q, ("weak", "relaxed", "release"), None,
                                volatile=cell.base == "st")
    cell.q.done(form)
    a, v = cell.operands("lv", form)
    return [Store(sem=sem, scope=scope, type=TYPE, addr=Addr(a), src=v, proxy=STORES[cell.base],
                  volatile=vol, **c)]

def _rmw_op(cell: _Cell, ops: tuple[str, ...], form: str) -> str:
    op = cell.q.take_if(ops)
    if op is None:
        got = f" (got .{cell.q.peek()})" if cell.q.items else ""
        cell.q.fail(f"`{cell.mnemonic}` needs an operation{got}",
                  suggest(cell.q.peek() or "", (*ops, *SEMS, *SCOPES)) + f"expected form: {form}")
    if op == "div":
        raise UnsupportedError(f"`{cell.mnemonic}`: division in a read-modify-write", cell.pos,
                               "PTX has no atom.div or red.div; compute it with div.s32")
    cell.q.done(form)
    return op

def _atom(cell: _Cell, c: dict) -> list[Instruction]:
    form = f"{cell.base}.sem.scope.op r, x, v | {cell.base}.sem.scope.cas r, x, expected, new"
    sem, scope, _ = mem_sem(cell.q, ("relaxed", "acquire", "release", "acq_rel"), None, rmw=True,
                           volatile=False)
    op = _rmw_op(cell, ATOM_OPS, form)
    d, a, *vals = cell.operands("rlvv" if op == "cas" else "rlv", form)
    return [Atom(sem=sem, scope=scope, type=TYPE, op=op, dst=d, addr=Addr(a), srcs=tuple(vals),
                 proxy=ATOMS[cell.base], **c)]

def _red(cell: _Cell, c: dict) -> list[Instruction]:
    form = f"{cell.base}.sem.scope.op x, v  (op: {' '.join(RED_OPS)})"
    sem, scope, _ = mem_sem(cell.q, ("relaxed", "acquire", "release", "acq_rel"), None, rmw=True,
                           volatile=False)
    op = _rmw_op(cell, RED_OPS, form)
    a, v = cell.operands("lv", form)
    return [Red(sem=sem, scope=scope, type=TYPE, op=op, addr=Addr(a), src=v,
                proxy=REDS[cell.base], **c)]

def _fence(cell: _Cell, c: dict) -> list[Instruction]:
    form = "fence.sc|acq_rel.scope | fence.proxy.alias|texture|surface|constant"
    if cell.q.take_if({"proxy"}):
        kind = cell.q.take_if(PROXY_FENCES)
        if kind is None:
            cell.q.fail("`fence.proxy` needs a kind", suggest(cell.q.peek() or "", PROXY_FENCES)
                      + f"expected form: {form}")
        if kind == "generic":
            raise UnsupportedError("fence.proxy.generic", cell.pos,
                                   "it would order the generic proxy with itself, which needs "
                                   "no proxy fence (Dat3M's model gives it no effect): delete "
                                   "it, or use fence.proxy.alias/texture/surface/constant")
        cell.q.done(form)
        cell.operands("", form)
        return [ProxyFence(kind=kind, **c)]
    sem = fence_sem(cell.q)
    scope = fence_scope(cell.q, sem)
    cell.q.done(form)
    cell.operands("", form)
    return [Fence(sem=sem, scope=scope, **c)]

def _bar(cell: _Cell, c: dict) -> list[Instruction]:
    """``bar.cta.sync|arrive c{, id{, quorum}}``: the constant and the id identify the barrier,
    the quorum is its number of threads; without one, the threads that hold that barrier instance
    in their code take part (Dat3M's visitor: ``ControlBarrier``/``NamedBarrier`` with instance
    id c; semantics/barrier_waits.py)."""
    form = "bar.cta.sync c{, id{, quorum}} | bar.cta.arrive c{, id{, quorum}}"
    if cell.q.take_if({"cta"}) is None:
        cell.q.fail("expected `bar.cta.`", f"expected form: {form}")
    kind = cell.q.take_if({"sync", "arrive"})
    if kind is None:
        cell.q.fail("`bar.cta` needs .sync or .arrive", f"expected form: {form}")
    cell.q.done(form)
    first, *vals = cell.operands("cvv??", form)
    ids = (first, *vals[:1])
    return [Barrier(kind=kind, ids=ids, count=vals[1] if len(vals) > 1 else None, instance=True, **c)]

def _branch(cell: _Cell, c: dict) -> list[Instruction]:
    """``beq a, b, LC``: set the predicate %branch, then branch on it."""
    form = f"{cell.base} v, v, LC00"
    cell.q.done(form)
    a, b, lab = cell.operands("vvL", form)
    p = Reg("%branch")
    return [Setp(cmp=BRANCH[cell.base], dst=p, a=a, b=b, type=TYPE, **c),
            Branch(target=lab, guard=(p, False), **c)]

def _goto(cell: _Cell, c: dict) -> list[Instruction]:
    cell.q.done("goto LC00")
    (lab,) = cell.operands("L", "goto LC00")
    return [Branch(target=lab, **c)]

def _local(cell: _Cell, c: dict) -> list[Instruction]:
    form = f"{cell.base} r, v, v"
    cell.q.done(form)
    d, a, b = cell.operands("rvv", form)
    # Dat3M's `div` is signed division (makeDiv(..., signed=true)): TYPE is .s32
    return [Alu(op=cell.base, dst=d, srcs=(a, b), type=TYPE, **c)]


_HANDLERS = {
    **dict.fromkeys(LOADS, _load), **dict.fromkeys(STORES, _store),
    **dict.fromkeys(ATOMS, _atom), **dict.fromkeys(REDS, _red),
    "fence": _fence, "bar": _bar, "goto": _goto,
    **dict.fromkeys(BRANCH, _branch), **dict.fromkeys(LOCAL_OPS, _local),
}
