"""ptxmm — an axiomatic checker for the NVIDIA PTX memory consistency model (Z3 backend).

Typical use::

    import ptxmm
    prog = ptxmm.load("examples/mp-relaxed-acquire.ptx")
    res = ptxmm.check(prog)                 # model "ptx" (models/ptx.cat)
    print(res.holds, [str(o.outcome) for o in res.outcomes])
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING

from .checker import check
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
from .loading import load, parse
from .program import Program
from .result import CheckResult, Execution, Finding, FindingKind, Outcome, OutcomeInfo

if TYPE_CHECKING:
    from .explain import Explanation, explain

__version__ = "0.1.0"

# ``ptxmm.explain`` and ``ptxmm.Explanation`` are loaded on first use: ``ptxmm check`` does without
# them (6 ms of its start-up). The function ``explain`` shares its name with the submodule that
# defines it; Python's import system sets the package's attribute to a submodule when it first
# imports one (``from .explain import ...`` anywhere), so that assignment is turned into the
# function: ``ptxmm.explain`` is the function whoever imported the submodule first.
_LAZY = ("explain", "Explanation")


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(".explain", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _Package(ModuleType):
    def __setattr__(self, name: str, value) -> None:
        if name == "explain" and isinstance(value, ModuleType):  # the submodule, just imported
            value = value.explain
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = ["load", "parse", "check", "explain", "Explanation", "Program", "CheckResult", "Outcome",
           "OutcomeInfo", "Finding", "FindingKind", "Execution", "PtxmmError", "ParseError",
           "SemanticError", "UnsupportedError", "ModelError", "ArgumentError", "ArgumentTypeError",
           "SourcePos"]
