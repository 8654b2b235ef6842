"""The herd/Dat3M PTX ``.litmus`` front end: grammar/litmus.lark → the same Program objects.

The dialect is Dat3M's (its LitmusPTX and LitmusAssertions grammars), with the meaning Dat3M's
visitor gives each form::

    PTX NAME "optional doc strings"
    {
    x = 0; flag = 0;              a location and its initial value (decimal, leading zeros
                                  allowed, or 0x hexadecimal)
    P1:r0 = 0;  1:r1 = &x;        a register's initial value, or the address of a location
                                  (``P1:r1 = x`` is the same address)
    y @ generic aliases x;        y: a virtual alias of x (a second generic address, same memory)
    s @ surface aliases y;        s: y's address seen through the surface proxy (also texture,
                                  constant); an alias's target must be declared before it
    z = x;  z = &x;               z: a location of its own, initialised with x's initial value
    }
     P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;      one column per thread, in order P0, P1, ... (or 0, 1)
     st.weak x, 1   | ld.acquire.gpu r0, y ;  one instruction (or nothing) per cell
    locations [x; P1:r0;]                     optional, names checked and recorded
    filter (P1:r0 == 1)                       optional, see below
    exists (P1:r0 == 1 /\\ ~(x = 2))          or ~exists / not exists / forall / final ... with ...

Tokens are Dat3M's (its lexer's rules, reproduced by :func:`dat3m_tokens`): the longest match,
ties to the rule ANTLR lists first, so ``r0`` is a register, ``LC00`` a label, ``P01`` thread 1,
every keyword its own token (a keyword cannot name a location) and ``ldx`` a name. Whitespace,
newlines, ``(* ... *)`` comments and the ``<< ... >>`` ExecConfig (``<<grid ...>>``, which Dat3M
skips) may stand between any two tokens: ``st . weak x , 1``, ``P1 : r0``, ``x=- 1``.

Instructions (registers are ``r0``, ``r1``, ...; a value is a register or a constant; memory is
addressed by location name; every value is a 64-bit word, Dat3M's arch type, compared signed; a
constant is -2^63 to 2^64 - 1, the upper half read as the negative word of the same bits):

- ``ld.weak r, x`` / ``ld.relaxed.S r, x`` / ``ld.acquire.S r, x`` with S in cta gpu sys: loads
  through the generic proxy; ``tld``, ``suld`` and ``cold`` load through the texture, surface and
  constant proxies. ``st.weak x, v`` / ``st.relaxed.S x, v`` / ``st.release.S x, v``; ``sust``
  stores through the surface proxy. A weak access takes no scope, the others need one.
- ``ld r, v`` (any load mnemonic, no qualifier): register move; ``add|sub|mul|div r, v, v``:
  register arithmetic (``div`` is signed, as Dat3M's).
- ``atom.M.S.op r, x, v`` (op: add sub mul and or xor, also inc dec min max), ``atom.M.S.exch r, x,
  v``, ``atom.M.S.cas r, x, expected, new``, with M in relaxed acquire release acq_rel; ``suatom``
  through the surface proxy. ``red.M.S.op x, v``; ``sured`` through the surface proxy.
- ``fence.sc.S`` / ``fence.acq_rel.S``; ``fence.proxy.alias``; ``fence.proxy.texture|surface|
  constant`` (that proxy and the generic one).
- ``bar.cta.sync c{, id{, quorum}}`` and ``bar.cta.arrive ...``: c a constant, id and quorum
  values; ``LC00:`` labels, ``goto LC00``, ``beq|bne|blt|ble|bgt|bge v, v, LC00``.

Looser than Dat3M, as the ``.ptx`` front end is: ``ld.volatile``/``st.volatile`` (relaxed at sys
scope, volatile) and ``.mmio.relaxed.sys``; the ``.cluster`` scope; ``atom``/``red`` without
semantics (relaxed) or scope (gpu); ``fence.S`` (acq_rel); ``and|or|xor r, v, v``; labels with any
name; ``//`` line comments after the header (in the header ``//`` is two slashes, as in Dat3M);
``&& || !`` and ``true`` in conditions; fewer cells than threads in a row.

Conditions compare ``P1:r0`` (or ``1:r0``), a location's final value ``x`` (or ``x[0]``,
``[x]``) and constants with ``= == != < <= > >=`` under ``/\\ \\/ ~ not`` and parentheses (also
``&& || !`` and ``true``). As in Dat3M, a bare ``x`` or ``[x]`` on the right of a comparison
stands for the *address* of x: that is rejected (put the location on the left, or write ``x[0]``
for its value). ``filter F`` keeps only the executions where F holds, i.e. ``exists C`` becomes
``exists (F /\\ C)`` and ``forall C`` becomes ``forall (~F \\/ C)``. ``final C with ...`` is
``exists C`` (the expectation list is read and ignored).

Rejected with a located error and a hint — Dat3M's own rejections, and typos that would otherwise
change a verdict: a weak access with a scope; a strong ld/st without one; semantics an instruction
does not take (``st.acquire``, ``ld.release``, ``fence.relaxed``, ``atom.weak``, ...); unknown
mnemonics and qualifiers; operands of the wrong kind or number; unknown or duplicate labels;
threads out of order; registers of unknown threads; an alias or ``z = x`` naming a location not
declared before it; a location or register declared twice; names in ``locations``, ``filter`` or
the condition that nothing declares. ``fence.proxy.generic`` (a generic-to-generic proxy fence,
which Dat3M's model gives no effect) and ``div`` are "not supported yet"."""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from functools import cache
from pathlib import Path

from .._infra import larkrt
from .._infra.gcpause import no_gc
from .._infra.larkrt import Token, Tree
from ..errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir.program import (
    MEMORY_INSTRS,
    And,
    Cmp,
    CondExpr,
    Condition,
    Instruction,
    Label,
    Location,
    MemRef,
    Not,
    Or,
    Placement,
    Program,
    Reg,
    RegRef,
    Sym,
    Thread,
    TrueC,
    operands,
)
from . import check, lark_errors
from .dat3m_lex import LEXED, Dat3mLexer, LexError, dat3m_tokens
from .decode.dat3m import RE_REG, TYPE, dat3m_int, decode_cell, split_cell, suggest, word64

FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


@cache
def _parser() -> larkrt.Lark:
    from .._infra.lark_build import build

    return build("litmus.lark", parser="lalr", propagate_positions=True, lexer=Dat3mLexer)


def parse(text: str, file: str = "<string>") -> Program:
    with no_gc():
        try:
            tokens = dat3m_tokens(text)
            LEXED.pair = (text, tokens)
            tree = _parser().parse(text)
        except LexError as e:
            raise ParseError(e.message, SourcePos(file, e.line, e.col), e.hint) from None
        except larkrt.LarkError as e:
            raise _syntax_error(e, file, text) from None
        finally:
            LEXED.pair = None
        return _Builder(file, text, tokens).build(tree)


_EXPECTED = {"SEMI": "';'", "BAR": "'|'", "COMMA": "','", "LBRACE": "'{'", "RBRACE": "'}'",
             "COLON": "':'", "EQUALS": "'='", "AT": "'@'", "AMP": "'&'", "LPAR": "'('",
             "RPAR": "')'", "LBRACKET": "'['", "RBRACKET": "']'", "MINUS": "'-'",
             "IDENT": "a name", "REGISTER": "a register like r0", "THREADID": "a thread like P0",
             "DIGITS": "a number", "HEX": "a number", "CMPOP": "a comparison",
             "ANDOP": "/\\", "OROP": "\\/", "TILDE": "~", "EXCL": "!", "PROXYKIND":
             "generic/texture/surface/constant", "EXISTS": "exists", "FORALL": "forall",
             "FINAL": "final", "FILTER": "filter", "LOCATIONS": "locations", "NOT": "not",
             "CTA": "cta", "GPU": "gpu", "ALIASES": "aliases", "WITH": "with", "TRUE": "true",
             "EXPECT": "tso/cc/optic/default", "CELL": "an instruction"}


def _syntax_error(e: larkrt.LarkError, file: str, text: str) -> ParseError:
    expected = set(getattr(e, "allowed", None) or getattr(e, "expected", None) or ())
    tok = getattr(e, "token", None)
    if tok is not None and tok.type == "$END" and not text.strip():
        tok = None
    if isinstance(e, larkrt.UnexpectedToken) and tok is not None:
        pos = SourcePos(file, tok.line, tok.column)
        if "SEMI" in expected and "BAR" in expected and tok.type in _TAIL_TYPES:
            return _unterminated(_row_start(text, tok, file))
        if tok.type == "HEADER" or (tok.line == 1 and tok.column == 1 and tok.type != "LANG"
                                    and "HEADER" in expected):
            return _no_header(file)
        if "HEADER" in expected:
            return _no_header(file)
        got = "end of file" if tok.type == "$END" else repr(str(tok))
        hint = "expected " + ", ".join(sorted({_EXPECTED.get(x, x.lower()) for x in expected}))
        if tok.type in ("KEYWORD", "CTA", "GPU", "PROXYKIND", "ALIASES", "WITH", "EXPECT",
                        "LANG", "TRUE", "NOT") and "IDENT" in expected:
            hint = (f"`{tok}` is a keyword of Dat3M's litmus dialect (LitmusPTX.g4, "
                    f"LitmusAssertions.g4): it cannot name a location; " + hint)
        return ParseError(f"unexpected {got}", pos, hint)
    if not text.strip() or isinstance(e, larkrt.UnexpectedEOF):
        return _no_header(file)
    return lark_errors.convert(e, file, text)


_TAIL_TYPES = ("LOCATIONS", "FILTER", "EXISTS", "FORALL", "FINAL", "NOT", "TILDE", "$END")


def _row_start(text: str, tok: Token, file: str) -> SourcePos:
    """Where the row that ``tok`` leaves unterminated starts (the token after the last ';')."""
    end = len(text) if tok.type == "$END" else tok.start_pos
    prev = [t for t in dat3m_tokens(text) if t.end_pos <= end]
    semi = max((i for i, t in enumerate(prev) if t.type == "SEMI"), default=-1)
    first = prev[semi + 1] if semi + 1 < len(prev) else (prev[-1] if prev else None)
    return SourcePos(file, first.line, first.column) if first else SourcePos(file, 1, 1)


def _unterminated(pos: SourcePos) -> ParseError:
    return ParseError("instruction row not terminated", pos,
                      "end every row of instructions with ';' (cells are separated by '|'); "
                      "a condition starts with exists, ~exists, not exists, forall or final")


def _no_header(file: str) -> ParseError:
    return ParseError("a PTX litmus test starts with `PTX <name>`", SourcePos(file, 1, 1),
                      "first line: PTX MP (then the init block { ... })")


def _const(tree: Tree, file: str) -> int:
    """Dat3M's ``constant``: ``Minus? DigitSequence | HexDigitSequence`` (``- 1`` is -1)."""
    toks = tree.children
    return word64(dat3m_int("".join(map(str, toks))), SourcePos(file, toks[0].line, toks[0].column))


def _tid(tree: Tree) -> Token:
    return tree.children[0]


_NO_SPACE_AFTER = ("LPAR", "LBRACKET", "COLON", "TILDE", "EXCL", "MINUS")
_NO_SPACE_BEFORE = ("RPAR", "RBRACKET", "COLON", "SEMI")


def _cond_text(toks: list[Token]) -> str:
    """A condition's tokens as canonical text: ``(P1:r0 == 1 /\\ ~(x[0] = -1))``."""
    out = ""
    for prev, t in zip([None, *toks], toks):
        glued = prev is None or prev.type in _NO_SPACE_AFTER or t.type in _NO_SPACE_BEFORE or (
            (prev.type, t.type) in (("IDENT", "LBRACKET"), ("AMP", "AMP"), ("BAR", "BAR")))
        out += ("" if glued else " ") + str(t)
    return out


# ----- the builder -----------------------------------------------------------------------------------


class _Builder:
    def __init__(self, file: str, text: str, tokens: list[Token]):
        self.file, self.text, self.tokens = file, text, tokens
        self.locs: dict[str, Location] = {}
        self.regs: list[dict[str, int | str]] = []
        self.names: list[str] = []

    def pos(self, tok) -> SourcePos:
        return SourcePos(self.file, tok.line, tok.column)

    def build(self, tree: Tree) -> Program:
        header, init, threads, *rest = tree.children
        name, docs = self.header(header)
        decls = self.threads(threads)
        self.init(init)
        rows = [t for t in rest if t.data == "row"]
        tail = {t.data: t for t in rest if t.data != "row"}
        code = self.code(rows, len(decls))
        out = []
        for i, (pname, placement, pos) in enumerate(decls):
            init_regs = tuple(self.regs[i].items())
            out.append(Thread(pname, i, placement, tuple(code[i]), init_regs, pos=pos))
        self.implicit_locations(out)
        observed = tuple(self.locations(tail["locations"], out)) if "locations" in tail else None
        for part in ("filter", "condition"):  # before cond_expr recurses into them
            if part in tail:
                check.check_depth(tail[part].children[1], self.file)
        filt = None
        if "filter" in tail:
            filt = (self.cond_expr(tail["filter"].children[1], out), self.source(tail["filter"]))
        cond = self.condition(tail["condition"], out, filt) if "condition" in tail else None
        prog = Program(name=name, description=" ".join(docs), threads=tuple(out),
                       locations=tuple(self.locs.values()), condition=cond, file=self.file,
                       format="litmus", observed=observed, filter=filt[0] if filt else None)
        return check.check(prog, check.Sources(dialect="litmus"))

    # --- header, threads, init ---

    def header(self, tok: Token) -> tuple[str, list[str]]:
        first, _, more = str(tok).partition("\n")
        name = first[3:].strip() or Path(self.file).stem
        return name, [" ".join(d.split()) for d in re.findall(r'"([^"]*)"', more)]

    def threads(self, tree: Tree) -> list[tuple[str, Placement, SourcePos]]:
        out = []
        for i, d in enumerate(t for t in tree.children if isinstance(t, Tree)):
            tid = _tid(d.children[0])
            cta, gpu = (c for c in d.children if isinstance(c, Token) and c.type == "DIGITS")
            name = self.thread_name(tid)
            if name != f"P{i}":
                raise ParseError(f"thread {tid} out of order (expected P{i})", self.pos(tid),
                                 "declare the threads as P0, P1, ... from left to right")
            out.append((name, Placement(gpu=int(gpu), cta=int(cta)), self.pos(tid)))
            self.regs.append({})
        self.names = [n for n, _, _ in out]
        return out

    @staticmethod
    def thread_name(tid: str) -> str:
        """Dat3M's threadId: the number after an optional P (``P01`` is thread 1)."""
        return f"P{int(tid.removeprefix('P'))}"

    def thread_index(self, tid: str, pos: SourcePos) -> int:
        name = self.thread_name(tid.strip())
        if name not in self.names:
            raise SemanticError(f"unknown thread {tid}", pos,
                                f"threads of this test: {', '.join(self.names)}")
        return self.names.index(name)

    def init(self, tree: Tree) -> None:
        for d in tree.children:
            if isinstance(d, Tree):
                getattr(self, d.data)(d, self.pos(d.meta))

    def declare(self, loc: Location, tok: Token) -> None:
        if loc.name in self.locs:
            raise SemanticError(f"location {loc.name} is declared twice", self.pos(tok),
                                "declare each location once in the init block")
        self.locs[loc.name] = loc

    def init_loc(self, d: Tree, pos: SourcePos) -> None:
        name, _, val = d.children
        self.declare(Location(str(name), type=TYPE, init=_const(val, self.file), pos=pos), name)

    def target(self, tok: Token, what: str) -> Location:
        """The location a declaration refers to; Dat3M requires it declared earlier."""
        loc = self.locs.get(str(tok))
        if loc is None:
            raise SemanticError(f"{what} names {tok}, which is not declared before it",
                                self.pos(tok), f"declare {tok} first, e.g. `{tok} = 0;`")
        return loc

    def init_loc_loc(self, d: Tree, pos: SourcePos) -> None:
        """``y = x`` / ``y = &x``: Dat3M's initVirLocEqLoc makes y a location of its own whose
        initial value is x's (not an alias of x, not x's address)."""
        name, tgt = d.children[0], d.children[-1].children[0]
        src = self.target(tgt, f"the initialisation of {name}")
        self.declare(Location(str(name), type=TYPE, init=src.init, pos=pos), name)

    def init_alias(self, d: Tree, pos: SourcePos) -> None:
        """``y @ P aliases x``: a virtual alias of x through proxy P (Dat3M's
        initVirLocEqLocAlias{Gen,Proxy}); x may itself be an alias."""
        name, _, proxy, _, tgt = d.children
        src = self.target(tgt, f"the alias {name}")
        self.declare(Location(str(name), type=TYPE, init=src.init, alias_of=src.name,
                              proxy=str(proxy), pos=pos), name)

    def register(self, d: Tree) -> tuple[dict, str]:
        tid, reg = _tid(d.children[0]), d.children[2].children[0]
        regs = self.regs[self.thread_index(str(tid), self.pos(tid))]
        if not RE_REG.fullmatch(str(reg)):
            raise ParseError(f"`{reg}` is not a register", self.pos(reg), "registers are r0, r1, ...")
        if str(reg) in regs:
            raise SemanticError(f"register {tid}:{reg} is initialised twice", self.pos(reg))
        return regs, str(reg)

    def init_reg(self, d: Tree, pos: SourcePos) -> None:
        regs, reg = self.register(d)
        regs[reg] = _const(d.children[4], self.file)

    def init_reg_loc(self, d: Tree, pos: SourcePos) -> None:
        """``P0:r0 = &x`` / ``P0:r0 = x``: r0 holds the address of x (Dat3M's initRegEqLocPtr)."""
        regs, reg = self.register(d)
        tok = d.children[-1].children[0]
        loc = str(tok)
        if tok.type == "REGISTER":
            raise ParseError(f"`{loc}` is a register; a register starts with a constant or the "
                             "address of a location", self.pos(tok))
        regs[reg] = loc
        if loc not in self.locs:
            self.locs[loc] = Location(loc, type=TYPE, pos=pos)

    def implicit_locations(self, threads: list[Thread]) -> None:
        """Locations the code uses without declaring them start at 0 (Dat3M's
        getOrNewVirtualMemoryObject)."""
        for t in threads:
            for ins in t.instrs:
                if isinstance(ins, MEMORY_INSTRS) and isinstance(ins.addr.base, Sym):
                    name = ins.addr.base.name
                    if name not in self.locs:
                        self.locs[name] = Location(name, type=TYPE)

    # --- code ---

    def code(self, rows: list[Tree], n: int) -> list[list[Instruction]]:
        code: list[list[Instruction]] = [[] for _ in range(n)]
        labels: list[dict[str, SourcePos]] = [{} for _ in range(n)]
        starts = [t.start_pos for t in self.tokens]
        for row in rows:
            cells: list[Token | None] = [None]
            for c in row.children:
                if c.type == "CELL":
                    cells[-1] = c
                elif c.type == "BAR":
                    cells.append(None)
            if len(cells) > n:
                bar = [c for c in row.children if c.type == "BAR"][n - 1]
                raise ParseError(f"{len(cells)} columns in a row of a test with {n} thread(s)",
                                 self.pos(bar), "one column per thread, separated by '|'")
            for i, c in enumerate(cells):
                toks = [] if c is None else self.tokens[
                    bisect_right(starts, c.start_pos) - 1:bisect_right(starts, c.end_pos - 1)]
                cell = split_cell(self.file, toks)
                if cell is not None:
                    instrs = decode_cell(cell)
                    self.check_label(instrs[0], labels[i])
                    code[i] += instrs
        return code

    def check_label(self, ins: Instruction, seen: dict[str, SourcePos]) -> None:
        if isinstance(ins, Label):
            if ins.name in seen:
                raise SemanticError(f"label {ins.name} is defined twice in this thread", ins.pos,
                                    f"first defined at line {seen[ins.name].line}")
            seen[ins.name] = ins.pos

    # --- locations, filter, condition ---

    def locations(self, tree: Tree, threads: list[Thread]) -> list:
        return [self.ref(t, threads, right=False) for t in tree.children if isinstance(t, Tree)]

    def source(self, tree: Tree) -> str:
        """A filter's or condition's expression as canonical text (whitespace and comments
        between its tokens do not change it; the tree has dropped its parentheses)."""
        head = tree.children[0]  # FILTER, FINAL or the quant tree
        start = head.end_pos if isinstance(head, Token) else head.meta.end_pos
        toks = [t for t in self.tokens if start <= t.start_pos < tree.meta.end_pos]
        cut = next((i for i, t in enumerate(toks) if t.type == "WITH"), len(toks))
        toks = toks[:cut]
        while toks and toks[-1].type == "SEMI":
            toks.pop()
        return _cond_text(toks)

    def condition(self, tree: Tree, threads: list[Thread], filt: tuple | None) -> Condition:
        """The condition; a filter F folds in as exists (F /\\ C) or forall (~F \\/ C)."""
        head = tree.children[0]
        words = [str(t) for t in head.children] if isinstance(head, Tree) else [str(head)]
        quant = "exists" if words[0] == "final" else "~exists" if len(words) == 2 else words[0]
        expr, text = self.cond_expr(tree.children[1], threads), self.source(tree)
        if filt is not None:
            f, c = _parenthesised(filt[1]), _parenthesised(text)
            if quant == "forall":
                expr, text = Or((Not(filt[0]), expr)), f"~{f} \\/ {c}"
            else:
                expr, text = And((filt[0], expr)), f"{f} /\\ {c}"
        return Condition(quant, expr, f"{quant} {text}")  # type: ignore[arg-type]

    def cond_expr(self, t, threads: list[Thread]) -> CondExpr:
        if t.data in ("c_or", "c_and"):
            kids = [self.cond_expr(k, threads) for k in t.children if isinstance(k, Tree)]
            return kids[0] if len(kids) == 1 else (Or if t.data == "c_or" else And)(tuple(kids))
        if t.data == "c_not":
            return Not(self.cond_expr(t.children[1], threads))
        if t.data == "c_true":
            return TrueC()
        lhs, op, rhs = t.children
        a, b = self.ref(lhs, threads, right=False), self.ref(rhs, threads, right=True)
        op = "==" if str(op) == "=" else str(op)
        if isinstance(a, int) and isinstance(b, int):
            return TrueC() if COMPARE[op](a, b) else Not(TrueC())
        if isinstance(a, int):
            return Cmp(FLIP[op], b, a)
        return Cmp(op, a, b)

    def ref(self, t: Tree, threads: list[Thread], right: bool) -> RegRef | MemRef | int:
        if t.data == "num":
            return _const(t.children[0], self.file)
        if t.data == "regref":
            return self.regref(t, threads)
        tok = t.children[1] if t.data == "membrk" else t.children[0]
        name = str(tok)
        if name not in self.locs:
            raise SemanticError(f"the condition names unknown location {name}", self.pos(tok),
                                suggest(name, self.locs) + "locations: " + ", ".join(self.locs))
        if t.data == "memidx" and int(t.children[2]) != 0:
            raise UnsupportedError(f"{name}[{t.children[2]}]: an offset into a location",
                                   self.pos(tok), "each location is one word: write x or x[0]")
        if right and t.data in ("memref", "membrk"):
            raise UnsupportedError(f"`{name}` on the right of a comparison: Dat3M reads it as the "
                                   f"address of {name}", self.pos(tok),
                                   f"compare values with the location on the left ({name} = 1), "
                                   f"or write {name}[0] for its final value")
        return MemRef(name)

    def regref(self, ref: Tree, threads: list[Thread]) -> RegRef:
        tok = ref.children[0].children[0]
        tid, reg = str(tok), str(ref.children[2].children[0])
        t = threads[self.thread_index(tid, self.pos(tok))]
        known = _registers(t)
        if reg not in known:
            raise SemanticError(f"thread {t.name} has no register {reg}", self.pos(tok),
                                f"registers of {t.name}: {', '.join(sorted(known)) or 'none'}")
        return RegRef(t.name, reg)


def _parenthesised(text: str) -> str:
    """``text`` wrapped in one pair of parentheses, unless one pair already encloses it all."""
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and i < len(text) - 1:
            return f"({text})"
    return text if text.startswith("(") else f"({text})"


def _registers(t: Thread) -> set[str]:
    out = {name for name, _ in t.init_regs}
    for ins in t.instrs:
        dst = getattr(ins, "dst", None)
        regs = [o for o in operands(ins) if isinstance(o, Reg)] + ([dst] if dst else [])
        out |= {r.name for r in regs if not r.name.startswith("%")}
    return out


def narrowed_to_32_bits(prog: Program) -> Program:
    """A ``.litmus`` test with Dat3M's 64-bit words read as 32-bit ones, for the device harness
    (whose test locations are 32-bit): refused when a constant does not fit in 32 bits. Its
    arithmetic then wraps at 32 bits on the device, which the comparison with the model's
    outcomes (computed at 64 bits) shows as an outcome the model does not allow."""
    def fits(v: object, pos: SourcePos | None, what: str) -> None:
        if isinstance(v, int) and not -(1 << 31) <= v < 1 << 31:
            raise UnsupportedError(f"{what} {v} beyond 32 bits on the device", pos,
                                   "the device harness runs Dat3M's 64-bit litmus values as "
                                   "32-bit words; check this test with the model only")

    threads = []
    for t in prog.threads:
        instrs = []
        for ins in t.instrs:
            for o in operands(ins):
                fits(getattr(o, "value", None), ins.pos, "constant")
            instrs.append(dataclasses.replace(ins, type="s32") if getattr(ins, "type", None) == TYPE
                          else ins)
        for _, v in t.init_regs:
            fits(v, t.pos, "initial value")
        threads.append(dataclasses.replace(t, instrs=tuple(instrs)))
    locs = []
    for loc in prog.locations:
        fits(loc.init, loc.pos, "initial value")
        locs.append(dataclasses.replace(loc, type="s32") if loc.type == TYPE else loc)
    return dataclasses.replace(prog, threads=tuple(threads), locations=tuple(locs))


__all__ = ["narrowed_to_32_bits", "parse"]
