"""A fast path for the ``.ptx`` litmus grammar's plainest files: the tree Lark's parser
(grammar/ptx.lark) would give, built line by line with regular expressions, or None where the file
leaves the narrow subset below (then Lark parses it, as before).

Campaigns parse thousands of generated tests (``ptxmm gen``), and Lark's lexer and LALR parser in
Python cost about a millisecond a test: a third of a campaign's time per test. Generated tests, and
most hand-written litmus tests, are one statement a line in a few forms:

* blank lines and whole-line ``//`` comments;
* ``.test NAME "description"`` and ``.expect WORD`` (each with an optional ``;``);
* ``.global .u32 x = 0;`` (``.global``/``.shared``, a scalar type, an optional decimal initial value);
* ``.thread T0 .cta 0 {`` (any placements), then one statement a line — a label ``$L0:`` or an
  instruction ``[@[!]%p] mnemonic op, op, …;`` whose operands are registers, decimal integers,
  ``[x]`` / ``[%r]`` addresses or bare names — and ``}`` on a line of its own;
* a condition ``exists|~exists|forall (ref OP value && …)``: references ``T1:%r0`` or ``x``,
  OP ``==`` or ``!=``, decimal values.

Anything else — any other line, block or ``#`` comments, carriage returns, a name that is one of
the grammar's keywords, a trailing comment — gives None. Every token carries the type and the
position (line, column, offsets) Lark's lexer gives it, so the tree is equal to Lark's, token by
token (tests/syntax/test_ptx_fast.py holds it to that on every generated test, every bundled
example and random files of the subset); the builder and its errors cannot tell the two apart."""

from __future__ import annotations

import re
from functools import partial

from .._infra.lark_build import module_regexes
from .._infra.larkrt import Token, Tree

_re = module_regexes()  # re.compile, the compiled code kept in ptxmm's cache (the same patterns)

_ID = r"[A-Za-z_$][A-Za-z0-9_$]*"
_WORD = _ID + r"(?:\.[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*)*"
_REG = "%" + _ID
_INT = r"[0-9]+(?![0-9A-Za-z_$.])"  # decimal, no U suffix, not the start of a float or hex literal
# names that are terminals of the grammar: never taken as a WORD here
_new = Token._future_new  # Token(...) less its check for a deprecated keyword
_KEYWORDS = frozenset({"aliases", "true", "exists", "forall"})

_TEST = _re.compile(r'\.test[ \t]+([A-Za-z0-9_$][A-Za-z0-9_$+\-.=]*)(?:[ \t]+("[^"\n]*"))?[ \t]*;?[ \t]*')
_EXPECT = _re.compile(rf"\.expect[ \t]+({_WORD})[ \t]*;?[ \t]*")
_LOC = _re.compile(rf"(\.global|\.shared)[ \t]+(\.[usbf](?:8|16|32|64))[ \t]+({_ID})"
                  rf"(?:[ \t]*=[ \t]*({_INT}))?[ \t]*;[ \t]*")
_THREAD = _re.compile(rf"\.thread[ \t]+({_ID})((?:[ \t]+(?:\.cta|\.cluster|\.gpu)[ \t]+{_INT})*)"
                     r"[ \t]*\{[ \t]*")
_PLACE = _re.compile(rf"(\.cta|\.cluster|\.gpu)[ \t]+({_INT})")
_LABEL = _re.compile(rf"[ \t]*({_ID}):[ \t]*")
_INSTR = _re.compile(rf"[ \t]*(?:(@)(!)?({_REG})[ \t]+)?({_WORD})(?:[ \t]+([^;]*?))?[ \t]*;[ \t]*")
_OPERAND = _re.compile(rf"[ \t]*(?:({_REG})|({_INT})|\[[ \t]*(?:({_REG})|({_ID}))[ \t]*\]|({_ID}))"
                       rf"[ \t]*(,|$)")
_COND = _re.compile(r"(~exists|exists|forall)[ \t]+(\()(.*)\)[ \t]*")
_TERM = _re.compile(rf"[ \t]*(?:({_ID})(:)({_REG})|({_ID}))[ \t]*(==|!=)[ \t]*({_INT})[ \t]*(&&|$)")


class _Lines:
    """Tokens of one line, placed as if the line were the text's first (line 0, offset 0): the
    line's cached maker (:func:`_maker`) moves them to where the line stands."""

    @staticmethod
    def tok(kind: str, m: re.Match, g: int, shift: int = 0) -> Token:
        s, e = m.start(g) + shift, m.end(g) + shift
        return _new(kind, m.group(g), s, 0, s + 1, 0, e + 1, e)


class _At:
    """Tokens of one line placed where it stands (line ``n``, offset ``a``): a line read once."""

    def __init__(self, n: int, a: int):
        self.n, self.a = n, a

    def tok(self, kind: str, m: re.Match, g: int, shift: int = 0) -> Token:
        s, e = m.start(g) + shift, m.end(g) + shift
        return _new(kind, m.group(g), self.a + s, self.n, s + 1, self.n, e + 1, self.a + e)


def parse_fast(text: str) -> Tree | None:
    """Lark's tree of ``text`` (module docstring), or None when ``text`` leaves the subset."""
    if "\r" in text or "/*" in text or "#" in text:
        return None
    items: list[Tree] = []
    thread: Tree | None = None
    cache, n, at = _CACHE, 0, 0
    for line in text.split("\n"):
        n += 1
        spec = cache.get((line, thread is not None), _MISSING)
        if spec is _MISSING:
            spec = _spec(line, thread is not None)
        got = spec if spec is None or spec is _END or spec is _SKIP else spec(n, at)
        at += len(line) + 1
        if got is None:
            return None
        if got is _END:
            items.append(thread)  # type: ignore[arg-type]
            thread = None
        elif got is _SKIP:
            continue
        elif thread is not None:
            thread.children.append(got)
        elif got.data == "thread":
            thread = got
        else:
            items.append(got)
    return None if thread is not None else Tree("start", items)


_END = Tree("}", [])
_SKIP = Tree("", [])
_MISSING = object()
# (line, inside a thread) → a function that makes the line's tree at a given place (or None, _END,
# _SKIP): generated tests repeat their lines, which are then read once. At most _CACHE_MAX kept.
_CACHE: dict[tuple[str, bool], object] = {}
_CACHE_MAX = 4096


def _spec(line: str, in_thread: bool):
    if not in_thread and line.lstrip(" \t").startswith(".test"):  # a test's name: one line per test,
        return partial(_once, line)  # never repeated (neither compiled nor kept)
    got = _line(line, _Lines(), _SKIP if in_thread else None)
    spec = got if got is None or got is _END or got is _SKIP else _maker(got)
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[line, in_thread] = spec
    return spec


def _once(line: str, n: int, a: int) -> Tree | None:
    """The tree of a line read once (a ``.test`` line), made where it stands."""
    return _directive(line, _At(n, a))


def _maker(t: Tree):
    """A function of (line number, line offset) that makes ``t`` (whose tokens lie on line 0 at
    offset 0) anew at that place: one Python expression, compiled once per distinct line (the
    token values enter it by repr)."""
    code = f"lambda n, a: {_expr(t)}"
    return eval(code, {"T": Tree, "K": _new})  # noqa: S307 -- our own expression, literals by repr


def _expr(t: Tree) -> str:
    kids = []
    for c in t.children:
        if isinstance(c, Tree):
            kids.append(_expr(c))
        else:
            s, e = c.start_pos, c.end_pos
            kids.append(f"K({c.type!r}, {c.value!r}, a + {s}, n, {s + 1}, n, {e + 1}, a + {e})")
    return f"T({t.data!r}, [{', '.join(kids)}])"


def _line(line: str, pos: _Lines, thread: Tree | None) -> Tree | None:
    """The line's tree (_SKIP: nothing, _END: the thread's end), or None outside the subset."""
    s = line.strip(" \t")
    if not s or s.startswith("//"):
        return _SKIP
    if thread is not None:
        if s == "}":
            return _END
        return _stmt(line, pos)
    if s[0] == ".":
        return _directive(line, pos)
    return _condition(line, pos)


def _directive(line: str, pos: _Lines) -> Tree | None:
    lead = len(line) - len(line.lstrip(" \t"))
    body = line[lead:]
    if m := _TEST.fullmatch(body):
        kids = [pos.tok("TESTNAME", m, 1, lead)]
        if m.group(2) is not None:
            kids.append(pos.tok("STRING", m, 2, lead))
        return Tree("test_decl", kids)
    if m := _EXPECT.fullmatch(body):
        return Tree("expect_decl", [pos.tok("WORD", m, 1, lead)])
    if m := _LOC.fullmatch(body):
        if m.group(3) in _KEYWORDS:
            return None
        kids = [pos.tok("SPACE", m, 1, lead), pos.tok("TYPE", m, 2, lead), pos.tok("WORD", m, 3, lead)]
        if m.group(4) is not None:
            kids.append(Tree("int_lit", [pos.tok("INT", m, 4, lead)]))
        return Tree("location", kids)
    if m := _THREAD.fullmatch(body):
        if m.group(1) in _KEYWORDS:
            return None
        kids: list = [pos.tok("WORD", m, 1, lead)]
        shift = lead + m.start(2)
        for p in _PLACE.finditer(m.group(2)):
            kids.append(Tree("placement", [pos.tok("PLACE", p, 1, shift), pos.tok("INT", p, 2, shift)]))
        return Tree("thread", kids)
    return None


def _stmt(line: str, pos: _Lines) -> Tree | None:
    """A label or an instruction inside a thread."""
    if m := _LABEL.fullmatch(line):
        return None if m.group(1) in _KEYWORDS else Tree("label", [pos.tok("WORD", m, 1)])
    m = _INSTR.fullmatch(line)
    if m is None:
        return None
    kids: list = []
    if m.group(1):
        guard = [pos.tok("AT", m, 1)]
        if m.group(2):
            guard.append(pos.tok("BANG", m, 2))
        kids.append(Tree("guard", [*guard, pos.tok("REG", m, 3)]))
    if m.group(4) in _KEYWORDS:
        return None
    kids.append(pos.tok("WORD", m, 4))
    if m.group(5) is not None:
        ops = _operands(m.group(5), pos, m.start(5))
        if ops is None:
            return None
        kids.append(Tree("operands", ops))
    return Tree("instr", kids)


def _operands(text: str, pos: _Lines, shift: int) -> list[Tree] | None:
    out: list[Tree] = []
    at = 0
    while True:
        m = _OPERAND.match(text, at)
        if m is None:
            return None
        if m.group(1):
            out.append(Tree("reg", [pos.tok("REG", m, 1, shift)]))
        elif m.group(2):
            out.append(Tree("imm", [Tree("int_lit", [pos.tok("INT", m, 2, shift)])]))
        elif m.group(3) or m.group(4):
            g = 3 if m.group(3) else 4
            if m.group(g) in _KEYWORDS:
                return None
            out.append(Tree("mem", [Tree("mem", [pos.tok("REG" if g == 3 else "WORD", m, g, shift)])]))
        else:
            if m.group(5) in _KEYWORDS:
                return None
            out.append(Tree("sym", [pos.tok("WORD", m, 5, shift)]))
        if not m.group(6):  # the end of the operands
            return out
        at = m.end()


def _condition(line: str, pos: _Lines) -> Tree | None:
    """``exists (a == 1 && …)`` as Lark's tree: c_or/c_and over a c_paren of c_or/c_and/c_cmp."""
    m = _COND.fullmatch(line)
    if m is None:
        return None
    shift, body, at = m.start(3), m.group(3), 0
    conj: list = []
    while True:
        t = _TERM.match(body, at)
        if t is None:
            return None
        if t.group(1) is not None:
            if t.group(1) in _KEYWORDS:
                return None
            ref = Tree("regref", [pos.tok("WORD", t, 1, shift), pos.tok("REG", t, 3, shift)])
        else:
            if t.group(4) in _KEYWORDS:
                return None
            ref = Tree("memref", [pos.tok("WORD", t, 4, shift)])
        conj.append(Tree("c_cmp", [ref, pos.tok("CMPOP", t, 5, shift),
                                   Tree("int_lit", [pos.tok("INT", t, 6, shift)])]))
        if not t.group(7):
            break
        conj.append(pos.tok("ANDOP", t, 7, shift))
        at = t.end()
    inner = Tree("c_or", [Tree("c_and", conj)])
    paren = Tree("c_paren", [pos.tok("LPAR", m, 2), inner])
    return Tree("condition", [pos.tok("QUANT", m, 1), Tree("c_or", [Tree("c_and", [paren])])])
