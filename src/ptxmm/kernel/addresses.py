"""The address oracle: what a kernel's layout asks about an address computed from loaded data
(:meth:`.layout.Layout.targets`) — may it satisfy a condition, which values may it take — under a
path's conditions, every read free within its width. The caller that instantiates a kernel hands
one in (an engine's: :class:`ptxmm.engines.addresses.Z3Addresses`); nothing here solves."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ..ir.values import Expr

MAX_TARGETS = 64  # elements one access whose address is computed from loaded data may name


class AddressQuery(Protocol):
    """Questions about one address expression under a path's conditions (``known``)."""

    def possible(self, *conds: Expr) -> bool:
        """Whether some values of the reads satisfy ``known`` and every 1-bit ``conds``."""
        ...

    def values(self, cond: Expr, limit: int) -> list[int] | None:
        """Every value the address takes where ``known`` and ``cond`` hold; None when more than
        ``limit``."""
        ...


# the oracle: (address, known) → its query
AddressOracle = Callable[[Expr, Sequence[Expr]], AddressQuery]

__all__ = ["MAX_TARGETS", "AddressOracle", "AddressQuery"]
