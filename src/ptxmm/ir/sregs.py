"""The special registers whose value is not the thread's placement: the timers and the
environment registers (PTX ISA, "Special Registers").

* ``%clock`` (.u32), ``%clock_hi`` (.u32), ``%clock64`` (.u64): "a predefined, read-only 64-bit
  unsigned cycle counter" (%clock64); "the lower 32-bits of %clock64 are identical to %clock";
  %clock_hi is "the upper 32-bits of %clock64". All three wrap silently.
* ``%globaltimer`` (.u64), ``%globaltimer_lo``, ``%globaltimer_hi`` (.u32): "a predefined, 64-bit
  global nanosecond timer"; _lo / _hi its lower / upper 32 bits.
* ``%envreg0`` .. ``%envreg31`` (.b32): "a set of 32 pre-defined read-only registers used to
  capture execution environment of PTX program outside of PTX virtual machine. These registers
  are initialized by the driver prior to kernel launch and can contain cta-wide or grid-wide
  values."

A timer read is a fresh value of its 64-bit counter (``TIMERS``: the counter, the read's width
and the bit it starts at); ptxmm lets the solver choose it, with one constraint per thread: the
counter's reads are non-decreasing in program order (a cycle counter and a nanosecond timer count
up), and, an assumption beyond the ISA, a counter stays below 2^63 (292 years of nanoseconds, or
of cycles at 1 GHz: it never wraps, and signed comparisons of its reads agree with unsigned ones).
``%clock`` and ``%globaltimer_lo`` are the low halves of those same reads, so they do wrap. An
environment register is one unknown value per CTA (the ISA allows cta-wide values, so ptxmm does
not assume two CTAs see the same one), the same for every read of every thread of that CTA —
except the two that hold the grid workspace.

**The grid workspace** (``GRID_WORKSPACE``). CUDA's cooperative groups read the driver's grid
workspace pointer from ``%envreg1`` (high half) and ``%envreg2`` (low half) —
``details::get_grid_workspace()`` in cooperative_groups/details/driver_abi.h of the CUDA 13
toolkit (``load_env_reg64<1, 2>``; CCCL's cudax writes ``mov.b64 %0, {%envreg2, %envreg1}``) —
a ``struct grid_workspace { unsigned int wsSize; unsigned int barrier; }``; ``grid.sync()`` traps
(``_CG_ABORT()``, ``__trap()``) when it is null and otherwise counts arrivals with ``atom.add
.release.gpu`` on ``barrier`` and polls it with ``ld.acquire.gpu`` (details/sync.h). In a
cooperative launch (``cooperative k<<<...>>>``) the two registers hold, in every CTA, the address
of a hidden zero-initialised global buffer of WORKSPACE_WORDS words named WORKSPACE
(kernel/instantiate.py), so the real grid-sync code is checked as written. In any other launch
they hold 0, the null pointer: seen on an H200, a process's non-cooperative launches read 0 in
both until it makes a cooperative launch (afterwards they read that launch's workspace address:
a stale pointer CUDA does not promise, which ptxmm does not model); ``grid.sync()`` then traps,
as cooperative groups' ``grid_group::is_valid()`` intends for a launch that is not cooperative."""

from __future__ import annotations

import re

# name → (counter, width of the read, first bit of the counter it returns)
TIMERS: dict[str, tuple[str, int, int]] = {
    "%clock64": ("clock", 64, 0), "%clock": ("clock", 32, 0), "%clock_hi": ("clock", 32, 32),
    "%globaltimer": ("globaltimer", 64, 0), "%globaltimer_lo": ("globaltimer", 32, 0),
    "%globaltimer_hi": ("globaltimer", 32, 32),
}
# (high half, low half) of the grid workspace pointer (cooperative groups' driver ABI)
GRID_WORKSPACE = ("%envreg1", "%envreg2")
WORKSPACE = "__grid_workspace"  # the hidden buffer's name (a reserved C++ identifier: no launch buffer's)
WORKSPACE_WORDS = 2  # wsSize, barrier
ENVREG = re.compile(r"^%envreg([0-9]|[12][0-9]|3[01])$")


def is_dynamic(name: str) -> bool:
    """Whether ``name`` is a timer or an environment register (no value fixed by the launch)."""
    return name in TIMERS or bool(ENVREG.match(name))


def width(name: str) -> int:
    """The width a dynamic special register is read at (ptxas: mov at exactly this width)."""
    return TIMERS[name][1] if name in TIMERS else 32


__all__ = ["ENVREG", "GRID_WORKSPACE", "TIMERS", "WORKSPACE", "WORKSPACE_WORDS", "is_dynamic", "width"]
