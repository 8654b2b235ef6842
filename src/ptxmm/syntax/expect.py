"""What a test expects — ONE definition for ``ptxmm check`` (the report's ``expected``), ``ptxmm
test``, the pytest plugin and the playground: the ``.expect`` line of a ``.ptx`` test and its
``// ptxmm: expect ...`` comments (``(* ptxmm: expect ... *)`` in a Dat3M litmus file). A comment's
verdict word (holds, fails, allowed, forbidden, required, ok) sets the program's expectation when
it has no ``.expect`` line; one that contradicts the ``.expect`` line, or another comment, is a
located error — never one of them silently preferred. Finding words (race, assert-fails, ...)
are what a check must find (the pytest plugin's rule)."""

from __future__ import annotations

import re
from dataclasses import replace

from ..errors import SemanticError, SourcePos

EXPECT_LINE = re.compile(r"^\s*\.expect(?:-liveness)?\b", re.M)  # .expect, .expect-liveness
EXPECT_COMMENT = re.compile(r"(?://|\(\*)\s*ptxmm:\s*expect\s+([^\n*]+)")
FINDING_WORDS = ("race", "flag", "assert-fails", "hang", "out-of-bounds", "trap")


def comment_words(text: str) -> list[tuple[str, int]]:
    """The words of the text's ``ptxmm: expect`` comments (lower case) with their offsets."""
    return [(w.lower(), m.start(1) + w_m.start()) for m in EXPECT_COMMENT.finditer(text)
            for w_m in re.finditer(r"[^\s,]+", m.group(1).strip()) for w in [w_m.group(0)]]


def expectations(text: str) -> tuple[list[str], bool]:
    """The words of the file's ``ptxmm: expect`` comments, and whether it has an ``.expect`` line
    (the condition's verdict) or an ``.expect-liveness`` line (Program.expect_liveness: whether
    no execution hangs; the front end reads both)."""
    return [w for w, _ in comment_words(text)], bool(EXPECT_LINE.search(text))


def verdict_words(words: list[str], has_condition: bool) -> list[str]:
    """The words that state the condition's verdict (``ok`` does where there is a condition)."""
    return [w for w in words if w not in FINDING_WORDS and not (w == "ok" and not has_condition)]


def _pos(text: str, file: str, off: int) -> SourcePos:
    line = text.count("\n", 0, off) + 1
    return SourcePos(file, line, off - (text.rfind("\n", 0, off) + 1) + 1)


def with_comment_expectation(prog, text: str, file: str):
    """``prog`` (a litmus test's Program) with the expectation its ``ptxmm: expect`` comments
    state, where its ``.expect`` line states none; a contradiction is a SemanticError."""
    from .common import expectation

    found = [(w, off) for w, off in comment_words(text)
             if w in verdict_words([w], prog.condition is not None)]
    if not found:
        return prog
    first = None
    for w, off in found:
        at = _pos(text, file, off)
        v = expectation(w, prog.condition, at)
        if prog.expect is not None and v != prog.expect:
            raise SemanticError(f"`ptxmm: expect {w}` contradicts the test's `.expect` line "
                                f"(which expects the condition to {'hold' if prog.expect else 'fail'})",
                                at, "state the expectation once: keep one of the two")
        if first is not None and v != first[0]:
            raise SemanticError(f"`ptxmm: expect {w}` contradicts `ptxmm: expect {first[1]}`", at,
                                "state the expectation once")
        first = first or (v, w)
    return prog if prog.expect is not None else replace(prog, expect=first[0])


__all__ = ["EXPECT_COMMENT", "EXPECT_LINE", "FINDING_WORDS", "comment_words", "expectations",
           "verdict_words", "with_comment_expectation"]
