"""The ``// ptxmm:`` lines of a kernel file: its launch, its condition over buffer elements and the
finding kinds it expects (``expect``), each with its position; an unknown or repeated directive is
a located error."""

from __future__ import annotations

from ..errors import ParseError, SemanticError, SourcePos
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



def parse_condition(quant: str, text: str, pos: SourcePos | None = None) -> Condition:
    """``out[0] == 1 && x[1] != 2`` under ``quant`` (exists, forall, ~exists, not exists): the
    ``.ptx`` grammar's condition (``&&`` ``||`` ``!``, parentheses, herd's ``/\\`` ``\\/`` ``~``)
    over buffer elements."""
    from ..ir.program import RegRef, cond_refs
    from ..syntax import ptx

    q = {"exists": "exists", "forall": "forall", "~exists": "~exists", "not exists": "~exists"}[quant]
    cond = ptx.condition(q, text, pos)
    reg = next((r for r in cond_refs(cond.expr) if isinstance(r, RegRef)), None)
    if reg is not None:
        raise ParseError(f"a kernel's condition names buffer elements, not registers "
                         f"({reg.thread}:{reg.reg})", pos, "e.g. out[0] == 1")
    return cond



__all__ = ["FINDING_KINDS", "parse_condition", "read_directives", "read_expect"]
