"""Dat3M's lexer for the ``.litmus`` front end (its BaseLexer.g4, LitmusAssertions.g4 and
LitmusPTX.g4 rules), and the token stream it feeds Lark: each cell of the instruction rows one
CELL token."""

from __future__ import annotations

import re
import threading
from bisect import bisect_right

from .._infra import larkrt
from .._infra.larkrt import Token

# ----- Dat3M's lexer -------------------------------------------------------------------------------
# BaseLexer.g4, LitmusAssertions.g4 and LitmusPTX.g4 as ANTLR combines them: at each point the
# longest match wins, and of equally long matches the rule listed first (LitmusPTX's own rules,
# then LitmusAssertions', then BaseLexer's). Every keyword precedes Identifier, so a word is a
# keyword exactly when the whole word is one; `r7` is a Register, `LC00` a Label, `P01` a
# ThreadIdentifier (thread 1), `_x` an Identifier but `_1` an underscore and a number.

_WORD_TYPES = {
    "locations": "LOCATIONS", "exists": "EXISTS", "forall": "FORALL", "final": "FINAL",
    "filter": "FILTER", "not": "NOT", "with": "WITH", "cta": "CTA", "gpu": "GPU",
    "aliases": "ALIASES", "PTX": "LANG", "ptx": "LANG", "true": "TRUE",
    **dict.fromkeys(("tso", "cc", "optic", "default"), "EXPECT"),
    **dict.fromkeys(("generic", "constant", "surface", "texture"), "PROXYKIND"),
    **dict.fromkeys((
        "ld", "tld", "suld", "cold", "st", "sust", "atom", "suatom", "red", "sured", "fence", "bar",
        "sync", "arrive", "sys", "weak", "relaxed", "acquire", "release", "acq_rel", "sc", "add",
        "sub", "mul", "div", "and", "or", "xor", "cas", "exch", "proxy", "alias", "beq", "bne",
        "blt", "bgt", "ble", "bge", "goto"), "KEYWORD"),
}
_PUNCT = {"{": "LBRACE", "}": "RBRACE", ";": "SEMI", ":": "COLON", "=": "EQUALS", "@": "AT",
          "&": "AMP", "|": "BAR", ",": "COMMA", ".": "PERIOD", "(": "LPAR", ")": "RPAR",
          "[": "LBRACKET", "]": "RBRACKET", "~": "TILDE", "-": "MINUS", "!": "EXCL",
          "==": "CMPOP", "!=": "CMPOP", "<=": "CMPOP", ">=": "CMPOP", "<": "CMPOP", ">": "CMPOP",
          "/\\": "ANDOP", "\\/": "OROP", **dict.fromkeys("\"#$%'*+/?\\^_", "PUNCT")}
_RE_TOKEN = re.compile(r"""
    (?:[ \t\n]+|\r\n?|\(\*[\s\S]*?\*\)|<<[\s\S]*?>>)*   # skipped: space, newline, comment, ExecConfig
    (?: (?P<line>//[^\n]*)
      | (?P<word>_*[A-Za-z][A-Za-z0-9_]*)
      | (?P<hex>0x[0-9a-fA-F]+)
      | (?P<num>[0-9]+)
      | (?P<punct>==|!=|<=|>=|/\\|\\/|[{};:=@&|,.()\[\]~\-!<>"\#$%'*+/?\\^_]) )?
""", re.VERBOSE)
_RE_NL = re.compile(r"\n")
_RE_WORD_KIND = re.compile(r"(?P<REGISTER>r[0-9]+)|(?P<LABEL>LC[0-9]+)|(?P<THREADID>P[0-9]+)")


class LexError(Exception):
    def __init__(self, line: int, col: int, message: str, hint: str):
        super().__init__(message)
        self.line, self.col, self.message, self.hint = line, col, message, hint


def word_type(word: str) -> str:
    kind = _WORD_TYPES.get(word)
    if kind is None:
        m = _RE_WORD_KIND.fullmatch(word)
        kind = m.lastgroup if m else "IDENT"
    return kind  # type: ignore[return-value]


def dat3m_tokens(text: str) -> list[Token]:
    """``text`` as Dat3M's lexer splits it (skipped tokens left out), except that everything from
    the leading ``PTX`` up to the init block's ``{`` is one HEADER token (its comments and
    ExecConfigs each replaced by a space), and that ``//`` line comments (a ptxmm extension) are
    skipped after the header."""
    out: list[Token] = []
    starts = [0, *(m.end() for m in _RE_NL.finditer(text))]  # offset of each line
    pos, n = 0, len(text)
    header = False  # the header is open: from a leading PTX up to the first '{'
    match, new = _RE_TOKEN.match, Token
    while pos < n:
        m = match(text, pos)
        kind, start, pos = m.lastgroup, m.start(m.lastgroup or 0), m.end()
        if kind is None:
            if pos < n:
                line = bisect_right(starts, pos)
                raise LexError(line, pos - starts[line - 1] + 1, f"character {text[pos]!r} is not "
                                "part of Dat3M's litmus dialect", "Dat3M's lexer (BaseLexer.g4, "
                                "LitmusPTX.g4) has no token for it; comments are (* ... *)")
            break
        value = m.group(kind)
        if kind == "line":
            if not header and out:
                continue
            kind, value, pos = "punct", "/", start + 1  # Dat3M: in the header `//` is two slashes
        tt = (word_type(value) if kind == "word" else "HEX" if kind == "hex"
              else "DIGITS" if kind == "num" else _PUNCT[value])
        line = bisect_right(starts, start)
        col = start - starts[line - 1] + 1
        out.append(new(tt, value, start, line, col, line, col + len(value), pos))
        if tt == "LANG" and len(out) == 1:
            header = True
        elif tt == "LBRACE" and header:
            out[:-1] = [_header_token(text, out[0], out[-2])]
            header = False
    if header:
        out[:] = [_header_token(text, out[0], out[-1])]
    return out


def _header_token(text: str, first: Token, last: Token) -> Token:
    raw = text[first.start_pos:last.end_pos]
    body = re.sub(r"\(\*[\s\S]*?\*\)|<<[\s\S]*?>>", " ", raw)  # skipped, as Dat3M skips them
    return Token("HEADER", body, first.start_pos, first.line, first.column, last.end_line,
                 last.end_column, last.end_pos)


LEXED = threading.local()  # (text, its tokens): parse() lexes once, for Lark and the builder


class Dat3mLexer(larkrt.Lexer):
    """Feeds Lark the tokens of :func:`dat3m_tokens`. Lark's current custom-lexer interface
    (``__future_interface__ = 2``: ``lex(lexer_state, parser_state)``): with an older one, Lark
    wraps the class in a local class of its own, which cannot be pickled, so the parser would be
    built afresh by Lark's grammar compiler at every start (``_infra.lark_build``)."""

    __future_interface__ = 2

    def __init__(self, lexer_conf) -> None:
        pass

    def lex(self, lexer_state, *_):
        text = lexer_state.text  # Lark's TextSlice of the whole text (the str in older Larks)
        text = getattr(text, "text", text)
        done = getattr(LEXED, "pair", None)
        return _cells(done[1] if done is not None and done[0] is text else dat3m_tokens(text))


def _cells(tokens: list[Token]):
    """The tokens, each cell of the instruction rows as one CELL token (its run of tokens up to
    '|' or ';'): the builder decodes a cell from its tokens, and Lark need not shift each one.
    Rows start after the thread declarations (the first ';' after the init block's '}' and its
    optional ';') and end at a keyword that opens the tail (or at the end)."""
    phase, run = 0, 0  # 0: before '}', 1: after it, 2: threads, 3: rows, 4: the tail
    for i, t in enumerate(tokens):
        tt = t.type
        if phase == 3:
            if tt in _TAIL_START:
                phase = 4
            elif tt not in ("BAR", "SEMI"):
                run += 1
                continue
            if run:
                first, last = tokens[i - run], tokens[i - 1]
                yield Token("CELL", first, first.start_pos, first.line, first.column, last.end_line,
                            last.end_column, last.end_pos)
                run = 0
        elif phase < 3:
            phase = (1 if tt == "RBRACE" else 0) if phase == 0 else (
                2 if phase == 1 and tt != "SEMI" else 3 if tt == "SEMI" and phase == 2 else 2)
        yield t
    if run:
        first, last = tokens[-run], tokens[-1]
        yield Token("CELL", first, first.start_pos, first.line, first.column, last.end_line,
                    last.end_column, last.end_pos)


_TAIL_START = frozenset(("LOCATIONS", "FILTER", "EXISTS", "FORALL", "FINAL", "NOT", "TILDE"))
