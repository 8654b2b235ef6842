"""The formula constructors a query builds its goals from over a Z3 problem's terms (Z3's own):
what a query outside the engine needs, so that only the engine imports Z3."""

from z3 import And, Bool, BoolVal, If, Implies, Not, Or, Sum

__all__ = ["And", "Bool", "BoolVal", "If", "Implies", "Not", "Or", "Sum"]
