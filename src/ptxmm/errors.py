"""Typed errors a user can cause. Each carries a source position and a hint; the CLI prints them
as ``file:line:col: error: message`` plus the hint, and exits with code 2 (never a traceback)."""

from __future__ import annotations

from ._infra.records import record


@record
class SourcePos:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def located(pos: SourcePos | None, kind: str, message: str, hint: str | None) -> str:
    """``file:line:col: kind: message`` and, on its own line, the hint: how errors and warnings
    print."""
    text = f"{pos}: {kind}: {message}" if pos else f"{kind}: {message}"
    return text + (f"\n  hint: {hint}" if hint else "")


class PtxmmError(Exception):
    """Base class of every error caused by user input (program, model or command line)."""

    kind = "error"

    def __init__(self, message: str, pos: SourcePos | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.hint = hint

    def __str__(self) -> str:
        return located(self.pos, self.kind, self.message, self.hint)


class ParseError(PtxmmError):
    kind = "syntax error"


class UnsupportedError(PtxmmError):
    kind = "not supported yet"


class SemanticError(PtxmmError):
    kind = "error"


class ModelError(PtxmmError):
    kind = "model error"


class ArgumentError(PtxmmError, ValueError):
    """A Python API argument with a value the command line would refuse too (the same words)."""

    kind = "argument error"


class ArgumentTypeError(ArgumentError, TypeError):
    """A Python API argument of the wrong type (``check(None)``, ``model=123``)."""


@record
class Diagnostic:
    """A non-fatal finding about a program (``Program.warnings``): printed as
    ``file:line:col: warning: message`` plus the hint; it never changes a verdict or exit code."""

    message: str
    pos: SourcePos | None = None
    hint: str | None = None
    kind = "warning"

    def __str__(self) -> str:
        return located(self.pos, self.kind, self.message, self.hint)
