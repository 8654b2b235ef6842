"""ptxmm — an axiomatic checker for the NVIDIA PTX memory consistency model (Z3 backend).

Typical use::

    import ptxmm
    prog = ptxmm.load("examples/mp-relaxed-acquire.ptx")
    res = ptxmm.check(prog)                 # model "ptx" (models/ptx.cat)
    print(res.holds, [str(o.outcome) for o in res.outcomes])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (
    ArgumentError,
    ArgumentTypeError,
    ModelError,
    ParseError,
    PtxmmError,
    SemanticError,
    SourcePos,
    UnsupportedError,
)
from .ir.program import Program
from .loading import load, parse
from .queries.checker import check
from .semantics.result import CheckResult, Execution, Finding, FindingKind, Outcome, OutcomeInfo

if TYPE_CHECKING:
    from .explanation.explain import Explanation, explain

__version__ = "0.1.0"

# ``ptxmm.explain`` and ``ptxmm.Explanation`` are loaded on first use: ``ptxmm check`` does without
# them (6 ms of its start-up). They live in ``ptxmm.explanation.explain``; no submodule of this
# package is named ``explain``, so the attribute is always the function.
_LAZY = ("explain", "Explanation")


def __getattr__(name: str):
    if name in _LAZY:
        from .explanation import explain as _explain

        return getattr(_explain, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = ["load", "parse", "check", "explain", "Explanation", "Program", "CheckResult", "Outcome",
           "OutcomeInfo", "Finding", "FindingKind", "Execution", "PtxmmError", "ParseError",
           "SemanticError", "UnsupportedError", "ModelError", "ArgumentError", "ArgumentTypeError",
           "SourcePos"]
