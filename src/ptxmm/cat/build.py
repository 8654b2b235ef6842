"""The parse tree of a cat file (grammar/cat.lark) turned into the typed syntax of
:mod:`ptxmm.cat.ast`, once per file: every rule name of the grammar is matched here and nowhere
else; a one-operand union, sequence, difference, intersection or product is its operand."""

from __future__ import annotations

from .._infra import larkrt
from ..errors import SourcePos
from . import ast

_NARY = {"union": ast.Union, "inter": ast.Inter, "diff": ast.Diff, "seq": ast.Seq, "cart": ast.Cart}
_UNARY = {"inverse": ast.Inverse, "plus": ast.Plus, "star": ast.Star, "opt": ast.Opt,
          "complement": ast.Complement, "lift": ast.Lift}
_CALLS = {"domain": ast.Domain, "range": ast.Range}


def _pos(t) -> ast.Pos | None:
    return None if t.meta.empty else (t.meta.line, t.meta.column)


def expr(t) -> ast.Expr:
    """The expression of a parse tree."""
    if isinstance(t, larkrt.Token):
        return ast.Name(str(t), (t.line, t.column))
    k = t.data
    kids = [c for c in t.children if isinstance(c, larkrt.Tree) or
            (isinstance(c, larkrt.Token) and c.type == "NAME")]
    if k == "name":
        return ast.Name(str(t.children[0]), _pos(t))
    if k in _NARY:
        if len(kids) == 1:
            return expr(kids[0])
        return _NARY[k](tuple(expr(c) for c in kids), _pos(t))
    if k in _UNARY:
        return _UNARY[k](expr(kids[0]), _pos(t))
    if k == "call":
        return _CALLS[str(t.children[0])](expr(kids[0]), _pos(t))
    if k == "empty_rel":
        return ast.EmptyRel(_pos(t))
    raise ValueError(f"unknown cat construct {k}")


def statement(st, file: str):
    """The statement of a parse tree (``file``: where it was read, for its position)."""
    pos = SourcePos(file, st.meta.line, st.meta.column) if not st.meta.empty else None
    k = st.data
    if k == "include":
        return ast.Include(str(st.children[0])[1:-1], pos)
    if k in ("let", "letrec"):
        binds = tuple(ast.Binding(str(b.children[0]), expr(b.children[1])) for b in st.children)
        return (ast.Let if k == "let" else ast.LetRec)(binds, pos)
    if k == "axiom":
        check, e, *rest = st.children
        return ast.Axiom(str(check), expr(e), str(rest[0]) if rest else "", pos)
    if k == "flag":
        ch = list(st.children)
        neg = str(ch[0]) == "~"
        if neg:
            ch.pop(0)
        check, e, name = ch
        return ast.Flag(str(check), expr(e), str(name), neg, pos)
    if k == "show":
        e = next((c for c in st.children if isinstance(c, larkrt.Tree)), None)
        return ast.Show(expr(e) if e is not None else None, "", pos)
    raise ValueError(f"unknown cat statement {k}")
