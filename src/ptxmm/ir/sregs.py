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
not assume two CTAs see the same one), the same for every read of every thread of that CTA."""

from __future__ import annotations

import re

# name → (counter, width of the read, first bit of the counter it returns)
TIMERS: dict[str, tuple[str, int, int]] = {
    "%clock64": ("clock", 64, 0), "%clock": ("clock", 32, 0), "%clock_hi": ("clock", 32, 32),
    "%globaltimer": ("globaltimer", 64, 0), "%globaltimer_lo": ("globaltimer", 32, 0),
    "%globaltimer_hi": ("globaltimer", 32, 32),
}
ENVREG = re.compile(r"^%envreg([0-9]|[12][0-9]|3[01])$")


def is_dynamic(name: str) -> bool:
    """Whether ``name`` is a timer or an environment register (no value fixed by the launch)."""
    return name in TIMERS or bool(ENVREG.match(name))


def width(name: str) -> int:
    """The width a dynamic special register is read at (ptxas: mov at exactly this width)."""
    return TIMERS[name][1] if name in TIMERS else 32


__all__ = ["ENVREG", "TIMERS", "is_dynamic", "width"]
