"""Where a kernel thread sits in its warp: lanes form warps of 32 as on the hardware (the CUDA
Programming Guide, SIMT Architecture: a block's threads are split into warps of consecutive
linear thread ids, the first warp holding thread 0; ``%laneid`` is the linear id modulo 32,
kernel/threads.py). A launch lists each CTA's threads in linear-id order (kernel/instantiate.py),
so a thread's place in its CTA's list is its linear id. A partial last warp has fewer lanes: the
missing ones never arrive anywhere, as exited lanes."""

from __future__ import annotations

from ..ir.program import Program


def lane_table(prog: Program) -> list[tuple[tuple, int, int]]:
    """Per thread index: (its CTA's key, its warp in the CTA, its lane)."""
    count: dict[tuple, int] = {}
    out = []
    for th in prog.threads:
        k = th.placement.cta_key
        i = count.get(k, 0)
        count[k] = i + 1
        out.append((k, i // 32, i % 32))
    return out


def warp_lanes(table: list[tuple[tuple, int, int]], t: int) -> dict[int, int]:
    """The threads of thread ``t``'s warp, lane → thread index (``t`` included)."""
    cta, warp, _ = table[t]
    return {lane: i for i, (c, w, lane) in enumerate(table) if c == cta and w == warp}


def warp_members(prog: Program, t: int, mask: int) -> list[int]:
    """The other threads of ``t``'s warp whose lane ``mask`` names (a warp collective's
    membermask): those its wait waits for."""
    table = lane_table(prog)
    return [i for lane, i in sorted(warp_lanes(table, t).items()) if i != t and mask >> lane & 1]
