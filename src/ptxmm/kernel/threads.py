"""A launch's threads: each one's special registers (``%tid``, ``%ctaid``, ``%laneid``, cluster
ranks, lane masks) from its CTA and thread index, and the special registers a kernel body reads
(any other undeclared register is a located error). The timers and %envreg have no value here:
the event builder reads them (ir/sregs.py), except the grid workspace's %envreg1 and %envreg2,
which kernel/instantiate.py gives every thread (the workspace's address in a cooperative launch,
null otherwise)."""

from __future__ import annotations

import re

from ..errors import UnsupportedError
from ..ir.program import Addr, Reg, operands
from .launch import Launch


def dims(d: tuple[int, int, int], i: int) -> tuple[int, int, int]:
    return (i % d[0], i // d[0] % d[1], i // (d[0] * d[1]))


def special_registers(launch: Launch, cta: int, tid: int) -> dict[str, int]:
    """The values of the special registers for thread ``tid`` (linear) of CTA ``cta``."""
    grid, block = launch.grid, launch.block
    cl = launch.cluster or (1, 1, 1)
    c, t = dims(grid, cta), dims(block, tid)
    clid = tuple(c[k] // cl[k] for k in range(3))
    nclu = tuple(grid[k] // cl[k] for k in range(3))
    cc = tuple(c[k] % cl[k] for k in range(3))
    lane = tid % 32
    out = {"%laneid": lane, "%cluster_ctarank": cc[0] + cl[0] * (cc[1] + cl[1] * cc[2]),
           "%cluster_nctarank": cl[0] * cl[1] * cl[2],
           "%is_explicit_cluster": int(launch.cluster is not None),
           "%lanemask_eq": 1 << lane, "%lanemask_lt": (1 << lane) - 1, "%lanemask_le": (2 << lane) - 1,
           "%lanemask_gt": 0xFFFFFFFF & ~((2 << lane) - 1), "%lanemask_ge": 0xFFFFFFFF & ~((1 << lane) - 1)}
    for k, x in enumerate("xyz"):
        out |= {f"%tid.{x}": t[k], f"%ntid.{x}": block[k], f"%ctaid.{x}": c[k], f"%nctaid.{x}": grid[k],
                f"%clusterid.{x}": clid[k], f"%nclusterid.{x}": nclu[k], f"%cluster_ctaid.{x}": cc[k],
                f"%cluster_nctaid.{x}": cl[k]}
    return out



SPECIAL = re.compile(r"^%(tid|ntid|ctaid|nctaid|clusterid|nclusterid|cluster_ctaid|cluster_nctaid)\.[xyz]$"
                      r"|^%(laneid|cluster_ctarank|cluster_nctarank|is_explicit_cluster|"
                      r"lanemask_(eq|lt|le|gt|ge)|clock|clock_hi|clock64|globaltimer|globaltimer_lo|"
                      r"globaltimer_hi|envreg([0-9]|[12][0-9]|3[01]))$")


def specials_used(body: tuple, declared: dict[str, str]) -> list[str]:
    """The special registers the body reads (each known one gets its value; any other register
    the function does not declare is a located error, never a silent 0)."""
    out: list[str] = []
    for ins in body:
        regs = [o.base if isinstance(o, Addr) else o for o in operands(ins)]
        if ins.guard is not None:
            regs.append(ins.guard[0])
        for r in regs:
            if not isinstance(r, Reg) or r.name.startswith("%ptxmm.") or r.name in declared \
                    or r.name in out:
                continue
            if SPECIAL.match(r.name):
                out.append(r.name)
                continue
            raise UnsupportedError(f"register {r.name} in `{ins.text}`", ins.pos,
                                   "special registers modelled: %tid %ntid %ctaid %nctaid "
                                   "%laneid %clusterid %nclusterid %cluster_ctaid %cluster_nctaid "
                                   "%cluster_ctarank %cluster_nctarank %lanemask_* %clock "
                                   "%clock_hi %clock64 %globaltimer %globaltimer_lo "
                                   "%globaltimer_hi %envreg0..31; %warpid, %nwarpid, %smid and "
                                   "the performance counters are not (their values are the "
                                   "hardware's, and %warpid may change as the thread runs): "
                                   "compute %tid.x / 32")
    return out


__all__ = ["SPECIAL", "dims", "special_registers", "specials_used"]
