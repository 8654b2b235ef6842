"""Parse speed of both front ends (issue 10: at least 10,000 instructions per second).

    python benchmarks/parse_speed.py [--instrs 20000] [--repeat 3]

Builds one `.ptx` file of N instructions (4 threads of stores, loads, fences, register arithmetic
and branches: every instruction a different line) and one Dat3M `.litmus` test of as many cells,
parses each REPEAT times (the parser is built once before timing) and prints a table: seconds
(best of the runs) and instructions per second. Parsing includes the semantic check pass."""

from __future__ import annotations

import argparse
import time

import ptxmm

TARGET = 10_000  # instructions per second


def ptx_program(n: int, threads: int = 4) -> str:
    per = n // threads
    body = ["st.relaxed.gpu.global.u32 [x], 1;", "ld.acquire.gpu.global.u32 %r0, [y];",
            "add.u32 %r1, %r0, 1;", "fence.sc.cta;", "setp.eq.u32 %p0, %r1, 2;", "@%p0 bra L{k};",
            "st.global.u32 [y], %r1;", "L{k}:"]
    out = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    for t in range(threads):
        lines, k = [], 0
        while len(lines) < per:
            lines += ["    " + b.format(k=k) for b in body]
            k += 1
        out.append(f".thread T{t} {{\n" + "\n".join(lines[:per - per % len(body)]) + "\n}")
    out.append("exists (T0:%r0 == 1)")
    return "\n".join(out) + "\n"


def litmus_program(n: int, threads: int = 4) -> str:
    cells = ["st.relaxed.gpu x, 1", "ld.acquire.gpu r0, y", "add r1, r0, 1", "fence.sc.cta",
             "beq r1, 2, L{k}", "st.weak y, r1", "L{k}:"]
    rows = n // threads
    head = " | ".join(f"P{t}@cta 0,gpu 0" for t in range(threads))
    body = []
    for i in range(rows - rows % len(cells)):
        c = cells[i % len(cells)].format(k=i // len(cells))
        body.append(" " + " | ".join([c] * threads) + " ;")
    return "PTX speed\n{ x = 0; y = 0; }\n " + head + " ;\n" + "\n".join(body) + "\nexists (0:r0 = 1)\n"


def count(p: ptxmm.Program) -> int:
    return sum(len(t.instrs) for t in p.threads)


def measure(text: str, file: str, repeat: int) -> tuple[int, float]:
    ptxmm.parse(text, file)  # untimed: the parser is built and the caches warm
    best = float("inf")
    n = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = ptxmm.parse(text, file)
        best = min(best, time.perf_counter() - t0)
        n = count(p)
    return n, best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instrs", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for name, text, file in (("ptx", ptx_program(args.instrs), "speed.ptx"),
                             ("litmus", litmus_program(args.instrs), "speed.litmus")):
        n, s = measure(text, file, args.repeat)
        rows.append((name, n, s, n / s))
    print(f"{'front end':<10} {'instructions':>12} {'seconds':>8} {'instr/s':>9}  target {TARGET:,}/s")
    for name, n, s, rate in rows:
        ok = "ok" if rate >= TARGET else "BELOW TARGET"
        print(f"{name:<10} {n:>12,} {s:>8.2f} {rate:>9,.0f}  {ok}")


if __name__ == "__main__":
    main()
