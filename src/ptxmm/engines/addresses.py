"""The Z3 address oracle (:class:`ptxmm.kernel.addresses.AddressQuery`): an address computed from
loaded data as a bit-vector over one free bit-vector per read it names, asked under a path's
conditions whether it may satisfy a condition and which values it may take. The loader hands
:class:`Z3Addresses` to the kernel front end (:func:`ptxmm.loading.parse`)."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.values import Expr, ReadVal


class Z3Addresses:
    """Questions about ``addr`` under ``known`` (the path's conditions so far), as Z3 queries on
    one solver; every read may return any value of its width."""

    def __init__(self, addr: Expr, known: Sequence[Expr]):
        import z3

        from .z3 import Values

        vals = Values(lambda eid: reads.setdefault(eid, z3.BitVec(f"read{eid}", widths[eid])))
        reads: dict = {}
        widths = read_widths(addr, list(known))
        s = z3.Solver()
        for c in known:
            s.add(vals.bool(c))
        self.z3, self.s, self.vals, self.a = z3, s, vals, vals.bv(addr)

    def possible(self, *conds: Expr) -> bool:
        return self.s.check(*[self.vals.bool(c) for c in conds]) == self.z3.sat

    def values(self, cond: Expr, limit: int) -> list[int] | None:
        s, a = self.s, self.a
        found: list[int] = []
        s.push()
        s.add(self.vals.bool(cond))
        try:
            while s.check() == self.z3.sat:
                v = s.model().eval(a, model_completion=True).as_long()
                found.append(v)
                if len(found) > limit:
                    return None
                s.add(a != v)
        finally:
            s.pop()
        return found


def read_widths(*exprs) -> dict[int, int]:
    """Each read the expressions name (nested lists included) → its width."""
    out: dict[int, int] = {}
    todo = list(exprs)
    while todo:
        e = todo.pop()
        if isinstance(e, list):
            todo += e
        elif isinstance(e, ReadVal):
            out[e.eid] = e.w
        elif hasattr(e, "args"):
            todo += list(e.args)
    return out


__all__ = ["Z3Addresses", "read_widths"]
