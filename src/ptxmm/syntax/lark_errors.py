"""Turn Lark's exceptions into ptxmm ParseErrors with file:line:col and a readable hint."""

from __future__ import annotations

from .._infra import larkrt
from ..errors import ParseError, SourcePos

_PRETTY = {
    "SEMICOLON": "';'", "COMMA": "','", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['",
    "RSQB": "']'", "LPAR": "'('", "RPAR": "')'", "COLON": "':'", "EQUAL": "'='", "WORD": "a name",
    "REG": "a register like %r0", "INT": "a number", "HEX": "a number", "STRING": "a string",
    "QUANT": "exists/~exists/forall", "SPACE": "a state space like .global", "TYPE": "a type like .u32",
    "PLACE": ".cta/.cluster/.gpu", "CMPOP": "a comparison", "SIGN": "a sign", "BAR": "'|'", "VBAR": "'|'",
}


def _pretty(names) -> str:
    out = sorted({_PRETTY.get(n, n.lower().strip("_")) for n in names if not n.startswith("__")})
    return ", ".join(out[:8]) + (" ..." if len(out) > 8 else "")


def convert(e: larkrt.LarkError, file: str, text: str) -> ParseError:
    if isinstance(e, larkrt.UnexpectedCharacters):
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else "?"
        return ParseError(f"unexpected character {ch!r}", SourcePos(file, e.line, e.column),
                          f"expected {_pretty(e.allowed)}" if e.allowed else None)
    if isinstance(e, larkrt.UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            return ParseError("unexpected end of file", SourcePos(file, _last_line(text), 1),
                              f"expected {_pretty(e.expected)}")
        return ParseError(f"unexpected {tok.value!r}", SourcePos(file, tok.line, tok.column),
                          f"expected {_pretty(e.expected)}")
    if isinstance(e, larkrt.UnexpectedEOF):
        return ParseError("unexpected end of file", SourcePos(file, _last_line(text), 1),
                          f"expected {_pretty(e.expected)}")
    if isinstance(e, larkrt.VisitError) and isinstance(e.orig_exc, ParseError):
        return e.orig_exc
    return ParseError(str(e).splitlines()[0], SourcePos(file, 1, 1))


def _last_line(text: str) -> int:
    return max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
