"""The typed syntax of cat models: one frozen record per operator and statement form (after Dat3M's
cat AST), built once from the parse tree by :mod:`ptxmm.cat.parser` and matched on by class by the
interpreter, the relation analysis and the explanations; positions are kept for error messages
but take no part in equality, so equal texts give equal expressions."""

from __future__ import annotations

from dataclasses import field

from .._infra.records import record

Pos = tuple[int, int]  # (line, column) in the statement's file


def _pos():
    """A source position: kept for messages, left out of equality and repr."""
    return field(default=None, compare=False, repr=False)


class Expr:
    """A set or relation expression."""

    __slots__ = ()


# ----- atoms -----------------------------------------------------------------------------------

@record
class Name(Expr):
    """A set or relation by name (the base vocabulary, a model's definition, or ``id``)."""

    name: str
    pos: Pos | None = _pos()


@record
class EmptyRel(Expr):
    """``0``: the empty relation."""

    pos: Pos | None = _pos()


# ----- n-ary operators (as written: ``a | b | c`` is one Union of three operands) ---------------

@record
class Union(Expr):
    args: tuple[Expr, ...]
    pos: Pos | None = _pos()


@record
class Inter(Expr):
    args: tuple[Expr, ...]
    pos: Pos | None = _pos()


@record
class Diff(Expr):
    """``a \\ b \\ c``: the first operand less the others, left to right."""

    args: tuple[Expr, ...]
    pos: Pos | None = _pos()


@record
class Seq(Expr):
    """``r1 ; r2 ; ...``: relational composition."""

    args: tuple[Expr, ...]
    pos: Pos | None = _pos()


@record
class Cart(Expr):
    """``S1 * S2``: the cartesian product of two sets."""

    args: tuple[Expr, ...]
    pos: Pos | None = _pos()


# ----- unary operators ---------------------------------------------------------------------------

@record
class Inverse(Expr):
    arg: Expr
    pos: Pos | None = _pos()


@record
class Plus(Expr):
    """``r+``: transitive closure."""

    arg: Expr
    pos: Pos | None = _pos()


@record
class Star(Expr):
    """``r*``: reflexive-transitive closure."""

    arg: Expr
    pos: Pos | None = _pos()


@record
class Opt(Expr):
    """``r?``: reflexive closure."""

    arg: Expr
    pos: Pos | None = _pos()


@record
class Complement(Expr):
    """``~e``: of a set, the events not in it; of a relation, the pairs not in it."""

    arg: Expr
    pos: Pos | None = _pos()


@record
class Lift(Expr):
    """``[S]``: the identity relation on a set."""

    arg: Expr
    pos: Pos | None = _pos()


@record
class Domain(Expr):
    arg: Expr
    pos: Pos | None = _pos()


@record
class Range(Expr):
    arg: Expr
    pos: Pos | None = _pos()


NARY = (Union, Inter, Diff, Seq, Cart)
CLOSURES = (Plus, Star, Opt)
UNARY = (Inverse, Plus, Star, Opt, Complement, Lift, Domain, Range)


# ----- statements --------------------------------------------------------------------------------

@record
class Binding:
    name: str
    expr: Expr


class _Bindings:
    """What a ``let`` and a ``let rec`` share: their names and expressions, in order."""

    __slots__ = ()
    bindings: tuple[Binding, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bindings)

    @property
    def exprs(self) -> tuple[Expr, ...]:
        return tuple(b.expr for b in self.bindings)


@record
class Let(_Bindings):
    """``let a = e1 and b = e2``: definitions, each over the names before the statement."""

    bindings: tuple[Binding, ...]
    pos: object = _pos()  # SourcePos


@record
class LetRec(_Bindings):
    """``let rec a = e1 and b = e2``: the least fixed point of the bindings together."""

    bindings: tuple[Binding, ...]
    pos: object = _pos()


@record
class Axiom:
    """``acyclic|irreflexive|empty e as name``: a constraint on every accepted execution."""

    check: str  # acyclic irreflexive empty
    expr: Expr
    name: str
    pos: object = _pos()


@record
class Flag:
    """``flag ~?check e as name``: reported when it holds (``~``: when it fails), never a constraint."""

    check: str
    expr: Expr
    name: str
    negated: bool = False
    pos: object = _pos()


@record
class Include:
    """``include "file.cat"``: resolved by the loader (a Model's statements hold none)."""

    file: str
    pos: object = _pos()


@record
class Show:
    """``show e as name`` / ``unshow e``: display directives, ignored."""

    expr: Expr | None = None
    name: str = ""
    pos: object = _pos()


Stmt = Let | LetRec | Axiom | Flag


# ----- helpers every consumer shares -------------------------------------------------------------

def name_of(e: Expr) -> str | None:
    """The name of a bare name, else None."""
    return e.name if isinstance(e, Name) else None


def children(e: Expr) -> tuple[Expr, ...]:
    """The operands of an expression (none for atoms)."""
    if isinstance(e, NARY):
        return e.args
    if isinstance(e, UNARY):
        return (e.arg,)
    return ()


def names(e: Expr) -> set[str]:
    """Every name ``e`` mentions."""
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Name):
            out.add(x.name)
        else:
            stack.extend(children(x))
    return out


_INFIX = {Union: " | ", Seq: " ; ", Diff: " \\ ", Inter: " & ", Cart: " * "}
_POSTFIX = {Inverse: "^-1", Plus: "+", Star: "*", Opt: "?"}


def text_of(e: Expr) -> str:
    """The cat text of an expression (re-printed, parenthesised where needed)."""
    match e:
        case Name(name=n):
            return n
        case Union() | Seq() | Diff() | Inter() | Cart():
            return _INFIX[type(e)].join(_paren(c) for c in e.args)
        case Inverse() | Plus() | Star() | Opt():
            return _paren(e.arg) + _POSTFIX[type(e)]
        case Lift(arg=a):
            return f"[{text_of(a)}]"
        case Complement(arg=a):
            return "~" + _paren(a)
        case EmptyRel():
            return "0"
        case Domain(arg=a):
            return f"domain({text_of(a)})"
        case Range(arg=a):
            return f"range({text_of(a)})"
    raise TypeError(f"not a cat expression: {e!r}")


def _paren(e: Expr) -> str:
    s = text_of(e)
    if isinstance(e, (Name, Lift, Domain, Range, EmptyRel, Inverse, Plus, Star, Opt)):
        return s
    return f"({s})"
