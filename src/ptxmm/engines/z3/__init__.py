"""The Z3 engine: one formula per program (:mod:`.program` encodes the event graph over
:mod:`.logic` and :mod:`.values`; :mod:`.problem` asserts it with the cat model and answers the
queries; :mod:`.witness` reads an execution back from a model; :mod:`.enumerate` helps enumerate
outcomes). What other modules use is exported here."""

from ..base import Deadline
from .logic import Z3Logic
from .problem import _POOL, _POOL_MAX_CHOICES, _REUSES, Z3Problem, _groups
from .program import Z3Choice
from .values import Values

__all__ = ["Z3Problem", "Z3Logic", "Z3Choice", "Values", "Deadline", "_POOL", "_POOL_MAX_CHOICES",
           "_REUSES", "_groups"]
