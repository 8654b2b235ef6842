"""Random small programs for the liveness oracle (tests/queries/test_hangs_brute.py): each a pure
function of a seed, so that hypothesis draws seeds and a failure names its program.

Two or three threads over two flags ``f``, ``g``, each in CTA 0 or 1, each a few steps of: a
store to a flag (weak, relaxed, release; .cta or .gpu), an atomic add, a spin loop until a flag
holds a value (weak, relaxed, acquire loads at .cta or .gpu; sometimes the exit waits for the
value to differ), ``bar.sync`` on barrier 0 or 1 with or without a thread count (one choice per
barrier id and program), ``bar.arrive``, a barrier some executions branch around, a fence.

A spin may carry a back-off as libcu++'s waits do (``backoff``): ``"counter"`` — a spin count
carried round the loop that picks whether to ``nanosleep`` (a branch that decides nothing about
the exit); ``"timer"`` — the same, sleeping for a ``%globaltimer_lo`` read; ``"none"`` — the
plain spin. The random choices are the same in every mode, so that ``program(seed, "timer")``
and ``program(seed, "none")`` are one program with and without its back-off."""

from __future__ import annotations

import random

LD = ["", ".relaxed.gpu", ".relaxed.cta", ".acquire.gpu", ".acquire.cta", ".volatile"]
ST = ["", ".relaxed.gpu", ".relaxed.cta", ".release.gpu", ".release.cta"]


class _Thread:
    def __init__(self, rnd: random.Random, index: int, counts: dict[int, int | None],
                 backoff: str = "counter"):
        self.r, self.index, self.counts, self.backoff = rnd, index, counts, backoff
        self.preds: list[str] = []
        self.lines: list[str] = []
        self.n = 0
        self.used: set[int] = set()  # counted barriers this thread already uses

    def fresh(self) -> int:
        self.n += 1
        return self.n

    def flag(self) -> str:
        return self.r.choice(["f", "f", "g"])

    def store(self) -> None:
        self.lines.append(f"st{self.r.choice(ST)}.global.u32 [{self.flag()}], {self.r.choice([1, 1, 2])};")

    def atom(self) -> None:
        k = self.fresh()
        self.lines.append(f"atom.relaxed.gpu.global.add.u32 %r{k}, [{self.flag()}], 1;")

    def spin(self) -> None:
        k = self.fresh()
        cmp = self.r.choice(["ne", "ne", "eq"])
        v = self.r.choice([0, 1, 1, 2])
        ld = f"ld{self.r.choice(LD)}.global.u32 %r{k}, [{self.flag()}];"
        deco = self.r.random() < 0.5 and self.backoff != "none"
        if not deco:
            self.lines += [f"L{k}:", ld, f"setp.{cmp}.u32 %p{k}, %r{k}, {v};", f"@%p{k} bra L{k};"]
            return
        sleep = ([f"mov.u32 %s{k}, %globaltimer_lo;", f"nanosleep.u32 %s{k};"]
                 if self.backoff == "timer" else ["nanosleep.u32 64;"])
        self.preds.append(f"%q{k}")
        self.lines += [f"mov.u32 %c{k}, 0;", f"L{k}:", ld, f"setp.lt.u32 %q{k}, %c{k}, 1;",
                       f"@%q{k} bra B{k};", *sleep, f"B{k}:", f"add.u32 %c{k}, %c{k}, 1;",
                       f"setp.{cmp}.u32 %p{k}, %r{k}, {v};", f"@%p{k} bra L{k};"]

    def _bar(self, kind: str = "sync") -> str:
        """A barrier instruction; a counted barrier at most once per thread (a second arrival
        while its first phase is incomplete: the engines differ, tests/queries/test_hangs_brute.py
        ``test_reused_counted_barrier_engines_differ``), else a fence."""
        i = self.r.choice(list(self.counts))
        c = self.counts[i]
        if kind == "arrive" and c is None:
            c = 2
        if c is not None and i in self.used:
            return "fence.acq_rel.gpu;"
        if c is not None:
            self.used.add(i)
        return f"bar.{kind} {i}" + ("" if c is None else f", {c}") + ";"

    def barrier(self) -> None:
        self.lines.append(self._bar())

    def arrive(self) -> None:
        self.lines.append(self._bar("arrive"))

    def skipped_barrier(self) -> None:
        k = self.fresh()
        self.lines += [f"ld.relaxed.gpu.global.u32 %r{k}, [{self.flag()}];",
                       f"setp.eq.u32 %p{k}, %r{k}, 0;", f"@%p{k} bra S{k};", self._bar(), f"S{k}:"]

    def fence(self) -> None:
        self.lines.append(self.r.choice(["fence.acq_rel.gpu;", "fence.sc.cta;"]))


STEPS = ["store", "store", "store", "atom", "spin", "spin", "spin", "barrier", "barrier", "arrive",
         "skipped_barrier", "fence"]


def program(seed: int, backoff: str = "counter") -> str:
    rnd = random.Random(seed)
    ids = rnd.sample([0, 1], rnd.randint(1, 2))
    counts: dict[int, int | None] = {i: rnd.choice([None, None, 1, 2, 3]) for i in ids}
    n = rnd.choice([2, 2, 3])
    out = [".global .u32 f = 0;", ".global .u32 g = 0;"]
    for t in range(n):
        th = _Thread(rnd, t, counts, backoff)
        for _ in range(rnd.randint(1, 3)):
            getattr(th, rnd.choice(STEPS))()
        preds = "".join(f" .reg .pred {p};" for p in [f"%p{k}" for k in range(1, th.n + 1)] + th.preds)
        out.append(f".thread T{t} .cta {rnd.choice([0, 0, 1])} {{{preds}\n  " + "\n  ".join(th.lines) + "\n}")
    out.append("exists (f == 0)")
    return "\n".join(out)
