"""The ``// ptxmm:`` lines of a kernel file: its launch, its condition over buffer elements and the
finding kinds it expects (``expect``), each with its position; an unknown or repeated directive is
a located error."""

from __future__ import annotations

import re

from ..errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir.program import Condition

FINDING_KINDS = ("assert-fails", "hang", "out-of-bounds", "race", "trap")


def read_directives(lines: list[tuple[str, SourcePos]]) -> dict[str, tuple[str, SourcePos]]:
    out: dict[str, tuple[str, SourcePos]] = {}
    for text, pos in lines:
        word, _, rest = text.partition(" ")
        if word == "not" and rest.startswith("exists"):
            word, rest = "~exists", rest[len("exists"):]
        if word not in ("launch", "exists", "forall", "~exists", "expect"):
            raise ParseError(f"unknown ptxmm directive `{word}`", pos,
                             "directives: launch, exists, forall, ~exists, expect")
        if word in out:
            raise SemanticError(f"a second `ptxmm: {word}` line", pos,
                                f"the first is line {out[word][1].line}")
        off = text.find(rest.strip()) if rest.strip() else 0
        out[word] = (rest.strip(), SourcePos(pos.file, pos.line, pos.col + len("ptxmm: ") + off))
    conds = [q for q in ("exists", "forall", "~exists") if q in out]
    if len(conds) > 1:  # one condition a kernel: never one of them silently dropped
        first, second = sorted(conds, key=lambda q: (out[q][1].line, out[q][1].col))[:2]
        raise SemanticError(f"a `ptxmm: {second}` line besides the `ptxmm: {first}` line (line "
                            f"{out[first][1].line}): a kernel has one condition", out[second][1],
                            "keep one; join conditions with && or ||")
    return out


def read_expect(text: str, pos: SourcePos) -> tuple[tuple[str, ...], SourcePos]:
    words = [w.strip() for w in text.split(",") if w.strip()]
    if words == ["ok"]:
        return (), pos
    for w in words:
        if w not in FINDING_KINDS:
            raise ParseError(f"unknown finding kind `{w}` in `expect`", pos,
                             "write `expect ok` or a list of: " + ", ".join(FINDING_KINDS))
    return tuple(sorted(set(words))), pos



_ELEM = r"[A-Za-z_]\w*\s*\[\s*\d+\s*\]"
_LIT = (r"[+-]?(?:0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?)"
        r"(?![\w.\[])")
_CMP = r"==|!=|<=|>=|<|>"


def float_literals(text: str, floats: dict[str, int], pos: SourcePos | None = None) -> str:
    """A condition with each number compared with an element of a float buffer (``floats``: name →
    width) replaced by that number's bits at the buffer's width (rounded to nearest, as the launch's
    initialisers; ``0x…`` stays bits): the condition compares bit patterns, so ``==`` and ``!=``
    only (-0.0 and +0.0 differ; an ordered comparison of floats is not supported yet)."""
    from ..ir.floats import float_bits

    def bits(name: str, op: str, lit: str) -> str:
        w = floats[name]
        if op not in ("==", "!="):
            raise UnsupportedError(f"`{op}` between the float element {name}[…] and {lit}", pos,
                                   "a condition compares a float's bits: use == or !=")
        body = lit.lstrip("+-").rstrip("fF") if lit.lstrip("+-")[:2].lower() not in ("0f", "0d") else lit
        if body[:2].lower() in ("0f", "0d"):
            return str(int(body[2:], 16))
        return str(float_bits(("-" if lit.startswith("-") else "") + body, w))

    def fwd(m: re.Match) -> str:
        name = m.group(1).split("[")[0].strip()
        if name not in floats:
            return m.group(0)
        return f"{m.group(1)} {m.group(2)} {bits(name, m.group(2), m.group(3))}"

    def back(m: re.Match) -> str:
        name = m.group(3).split("[")[0].strip()
        if name not in floats:
            return m.group(0)
        return f"{m.group(3)} {m.group(2)} {bits(name, m.group(2), m.group(1))}"  # == != are symmetric

    text = re.sub(rf"({_ELEM})\s*({_CMP})\s*({_LIT})", fwd, text)
    return re.sub(rf"(?<![\w\]])({_LIT})\s*({_CMP})\s*({_ELEM})", back, text)


def parse_condition(quant: str, text: str, pos: SourcePos | None = None,
                    floats: dict[str, int] | None = None) -> Condition:
    """``out[0] == 1 && x[1] != 2`` under ``quant`` (exists, forall, ~exists, not exists): the
    ``.ptx`` grammar's condition (``&&`` ``||`` ``!``, parentheses, herd's ``/\\`` ``\\/`` ``~``)
    over buffer elements; numbers compared with float buffers' elements as :func:`float_literals`
    reads them."""
    if floats:
        text = float_literals(text, floats, pos)
    from ..ir.program import RegRef, cond_refs
    from ..syntax import ptx

    q = {"exists": "exists", "forall": "forall", "~exists": "~exists", "not exists": "~exists"}[quant]
    cond = ptx.condition(q, text, pos)
    reg = next((r for r in cond_refs(cond.expr) if isinstance(r, RegRef)), None)
    if reg is not None:
        raise ParseError(f"a kernel's condition names buffer elements, not registers "
                         f"({reg.thread}:{reg.reg})", pos, "e.g. out[0] == 1")
    return cond



__all__ = ["FINDING_KINDS", "float_literals", "parse_condition", "read_directives", "read_expect"]
