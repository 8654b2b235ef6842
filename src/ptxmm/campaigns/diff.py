"""``ptxmm diff M1 M2``: the tests whose condition verdict differs between two models.

Every test runs under both models (streamed, on any executor); the tests that differ are kept,
in each direction, smallest first and one per shape (diy7's family), and each is explained in both
models: the axiom that forbids its outcome in one, the execution that allows it in the other."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .stream import Item


@dataclass
class DiffSummary:
    m1: str
    m2: str
    total: int = 0
    errors: int = 0
    unknown: int = 0
    same: int = 0
    # rows whose condition holds under one model only, with their items (to explain them later)
    only1: list[tuple[dict, Item]] = field(default_factory=list)  # holds in m1, not in m2
    only2: list[tuple[dict, Item]] = field(default_factory=list)

    def add(self, row: dict, item: Item | None) -> None:
        self.total += 1
        if "error" in row:
            self.errors += 1
            return
        a, b = row[self.m1], row[self.m2]
        if a is None or b is None:
            self.unknown += 1
        elif a == b:
            self.same += 1
        elif item is not None:
            (self.only1 if a else self.only2).append((row, item))

    def to_json(self) -> dict:
        return {"m1": self.m1, "m2": self.m2, "total": self.total, "errors": self.errors,
                "unknown": self.unknown, "same": self.same,
                "holds_only_in_m1": len(self.only1), "holds_only_in_m2": len(self.only2)}


def smallest_per_shape(rows: Iterable[tuple[dict, Item]]) -> list[tuple[dict, Item]]:
    """One row per shape (family): the smallest, then the shortest name (the fewest fences and
    annotations in a generated one), then the first by name; smallest first."""
    def rank(r: dict) -> tuple:
        return (r["size"], len(r["name"]), r["name"])

    best: dict[str, tuple[dict, Item]] = {}
    for r, it in rows:
        k = r.get("family", "")
        if k not in best or rank(r) < rank(best[k][0]):
            best[k] = (r, it)
    return sorted(best.values(), key=lambda x: rank(x[0]))


def why(item: Item, model: str, unroll: int = 2) -> dict:
    """The test's condition outcome explained under ``model``: the verdict and, when forbidden, the
    axioms each failing group of candidate executions violates (the first group's cycle in words)."""
    from ..explanation.explain import explain
    from .work import load_item

    x = explain(load_item(item), model, unroll=unroll)
    out = {"model": model, "verdict": "unknown" if x.unknown else
           "allowed" if x.allowed else "forbidden"}
    if not x.allowed and x.groups:
        out["axioms"] = sorted({a for g in x.groups for a in g.axioms})
        out["text"] = str(x)
    elif x.allowed:
        out["text"] = str(x)
    return out


def explain_both(sel: list[tuple[dict, Item]], m1: str, m2: str, unroll: int = 2) -> list[dict]:
    out = []
    for r, it in sel:
        out.append(r | {"explain": [why(it, m1, unroll), why(it, m2, unroll)]})
    return out
