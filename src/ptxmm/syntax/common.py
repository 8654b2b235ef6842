"""What both front ends share: integer literals, condition trees and expectations (the semantic
checks are in :mod:`.check`)."""

from __future__ import annotations

from .._infra.larkrt import Token, Tree
from ..errors import ParseError, SemanticError, SourcePos
from ..ir.program import And, Cmp, Condition, Not, Or, TrueC


def int_literal(text: str, pos: SourcePos | None = None) -> int:
    """A PTX integer constant: 0x.. hexadecimal, 0b.. binary, 0.. octal, else decimal; an
    optional leading minus sign."""
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    body = s.lstrip("-+")
    try:
        if body[:2].lower() == "0x":
            return sign * int(body[2:], 16)
        if body[:2].lower() == "0b":
            return sign * int(body[2:], 2)
        if len(body) > 1 and body.startswith("0"):
            return sign * int(body[1:], 8)
        return sign * int(body, 10)
    except ValueError:
        raise ParseError(f"malformed integer constant `{text}`", pos,
                         "PTX reads a leading 0 as octal (digits 0-7); write decimal without it") from None


def build_cond(t, ref, num) -> object:
    """Condition expression tree (rules c_or c_and c_not c_true c_cmp c_paren, shared by both condition
    grammars) → CondExpr. ``ref`` turns a reference subtree into a Ref, ``num`` a value token
    or subtree into an int."""
    if t.data in ("c_or", "c_and"):
        kids = [c for c in t.children if not isinstance(c, Token)]
        if len(kids) == 1:
            return build_cond(kids[0], ref, num)
        return (Or if t.data == "c_or" else And)(tuple(build_cond(k, ref, num) for k in kids))
    if t.data == "c_not":
        return Not(build_cond(t.children[1], ref, num))
    if t.data == "c_paren":  # the .ptx grammar keeps parentheses: `(` and the expression
        return build_cond(t.children[1], ref, num)
    if t.data == "c_true":
        return TrueC()
    lhs, op, rhs = t.children
    op = "==" if str(op) == "=" else str(op)
    is_ref = isinstance(rhs, Tree) and rhs.data in ("regref", "memref", "elemref")
    return Cmp(op, ref(lhs), ref(rhs) if is_ref else num(rhs))


_EXPECT = {
    "holds": True, "fails": False, "ok": True, "no": False,
}


def expectation(word: str, cond: Condition | None, pos: SourcePos | None) -> bool:
    """`.expect` words: holds/fails (the condition in herd's sense), or allowed/forbidden (for an
    exists condition: the outcome it describes is allowed / forbidden), or required (forall)."""
    w = word.lower()
    if w in _EXPECT:
        return _EXPECT[w]
    q = cond.quantifier if cond else None
    if w in ("allowed", "forbidden"):
        if q == "exists":
            return w == "allowed"
        if q == "~exists":
            return w == "forbidden"
        raise SemanticError(f"`.expect {w}` needs an exists or ~exists condition", pos,
                            "use `.expect holds` or `.expect fails` with forall")
    if w == "required":
        if q != "forall":
            raise SemanticError("`.expect required` needs a forall condition", pos,
                                "use `.expect holds` or `.expect fails`")
        return True
    import difflib  # (here: only an error needs it)

    words = ("holds", "fails", "allowed", "forbidden", "required")
    close = difflib.get_close_matches(w, words, n=1)
    raise SemanticError(f"unknown expectation `{word}`", pos,
                        (f"did you mean `{close[0]}`? " if close else "")
                        + "use holds, fails, allowed, forbidden or required")
