"""Random small programs around an RMW chain (the grid barrier's shape, issue 40), for the property
tests of the liveness problem's chains and the grid-barrier proof (tests/queries/test_liveness_chains.py):
each a pure function of a seed, so that hypothesis draws seeds and a failure names its program.

Two to four threads, each in CTA 0 or 1, over a counter ``c``, a flag ``s`` and per-thread slots
``d``. Each thread does one of: a **grid-barrier arrival** — a fence, an atomic add of 1 to ``c``
(relaxed, release or acq_rel; .gpu, sometimes .cta), and the last arriver (the one reading
init + N - 1, sometimes a wrong N) optionally resets ``c`` with an atomic exchange, fences and sets
``s`` (release, relaxed, volatile or weak), the others spin on ``s`` (acquire, relaxed, volatile,
weak; .gpu or .cta) — a **poll** of ``c`` until it reaches a value (a load, or a fetch-add of 0), or
a plain **store** to ``c`` (which leaves it no chain). Sometimes a thread skips its arrival, or
arrives twice."""

from __future__ import annotations

import random

FENCES = ["membar.gl;", "fence.sc.gpu;", "fence.acq_rel.gpu;", ""]
ADDS = ["atom.relaxed.gpu.global.add.u32", "atom.release.gpu.global.add.u32",
        "atom.acq_rel.gpu.global.add.u32", "atom.global.add.u32", "atom.relaxed.cta.global.add.u32"]
SETS = ["st.release.gpu.global.u32", "st.relaxed.gpu.global.u32", "st.volatile.global.u32", "st.global.u32"]
SPINS = ["ld.acquire.gpu.global.u32", "ld.relaxed.gpu.global.u32", "ld.volatile.global.u32", "ld.global.u32",
         "ld.relaxed.cta.global.u32"]


def _pick(rnd: random.Random, good: list[str], bad: list[str], sound: bool) -> str:
    return rnd.choice(good if sound or rnd.random() < 0.7 else bad)


def _arrival(rnd: random.Random, n: int, k: int, lines: list[str], sound: bool) -> None:
    """One arrival at the grid barrier; ``sound``: the barrier as grid-barrier.cu writes it (strong
    .gpu operations, the last arriver reading N - 1), else each part sometimes wrong."""
    last = n - 1 if sound or rnd.random() < 0.7 else rnd.choice([n, n - 2])
    add = _pick(rnd, ADDS[:4], ADDS[4:], sound)
    spin = _pick(rnd, SPINS[:3], SPINS[3:], sound)
    put = _pick(rnd, SETS[:3], SETS[3:], sound)
    lines += [f"st.global.u32 [d{k % n}], {k + 1};", rnd.choice(FENCES), f"{add} %r{k}, [c], 1;",
              f"setp.eq.u32 %p{k}, %r{k}, {last};", f"@%p{k} bra LAST{k};",
              f"W{k}:", f"{spin} %s{k}, [s];", f"setp.ne.u32 %q{k}, %s{k}, 1;", f"@%q{k} bra W{k};",
              f"bra.uni DONE{k};", f"LAST{k}:"]
    if rnd.random() < 0.6:
        lines.append(f"atom.relaxed.gpu.global.exch.b32 %x{k}, [c], 0;")
    lines += [rnd.choice(FENCES), f"{put} [s], 1;", f"DONE{k}:", rnd.choice(FENCES),
              f"ld.global.u32 %v{k}, [d{(k + 1) % n}];"]


def _poll(rnd: random.Random, n: int, k: int, lines: list[str]) -> None:
    v = rnd.choice([1, n - 1, n])
    read = rnd.choice([f"{rnd.choice(SPINS)} %r{k}, [c];", f"atom.relaxed.gpu.global.add.u32 %r{k}, [c], 0;"])
    lines += [f"P{k}:", read, f"setp.lt.u32 %p{k}, %r{k}, {v};", f"@%p{k} bra P{k};"]


def program(seed: int, threads: int | None = None) -> str:
    """The program of ``seed``; ``threads``: that many threads instead of a drawn 2 to 4."""
    rnd = random.Random(seed)
    n = rnd.choice([2, 2, 3, 3, 4])
    n = threads or n
    sound = rnd.random() < 0.5
    out = [".global .u32 c = 0;", ".global .u32 s = 0;", *(f".global .u32 d{i} = 0;" for i in range(n))]
    for t in range(n):
        lines: list[str] = []
        what = "arrive" if sound else rnd.choices(["arrive", "poll", "store", "skip", "twice"],
                                                  [6, 2, 1, 1, 1])[0]
        if what in ("arrive", "twice"):
            _arrival(rnd, n, t, lines, sound)
        if what == "twice":
            _arrival(rnd, n, t + 10, lines, sound)
        elif what == "poll":
            _poll(rnd, n, t, lines)
        elif what == "store":
            lines.append("st.relaxed.gpu.global.u32 [c], 1;")
        regs = " .reg .pred %p<20>; .reg .pred %q<20>;"
        out.append(f".thread T{t} .cta {rnd.choice([0, 0, 1])} {{{regs}\n  "
                   + "\n  ".join(x for x in lines if x) + "\n}")
    out.append("exists (c == 0)")
    return "\n".join(out)
