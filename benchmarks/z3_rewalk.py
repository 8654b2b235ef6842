"""Z3's polymorphism plugin walks the asserted formulas again after every pop (found in session 18:
the grid barrier's race query after the outcome enumeration, and its --timeout overrun).

    python benchmarks/z3_rewalk.py [--terms N] [--formulas K]
    PYTHONPATH=<a z3-solver 5.x install> python benchmarks/z3_rewalk.py   # the same under another Z3

K assertions share one term of N disjunctions; the script checks once, pushes/asserts/checks/pops, and
checks again. Measured on the 2-core workstation with the defaults:
z3-solver 5.4.1: first 14.8 s, after the pop 70.3 s; z3-solver 4.15.4: 16.2 s, 0.09 s. perf on 5.4.1
puts the time in polymorphism::util::collect_poly_instances (for_each_ast, ast_mark::is_marked), from
smt::theory_polymorphism::add_theory_assumptions, which never looks at the cancel flag.
Every 5.x release does it (5.0.0 to 5.4.1, benchmarks/results/s19-z3.md); pyproject bounds z3-solver
below 5."""

from __future__ import annotations

import argparse
import time

import z3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--terms", type=int, default=20000)
    ap.add_argument("--formulas", type=int, default=300)
    a = ap.parse_args()
    ctx = z3.Context()
    bs = [z3.Bool(f"b{i}", ctx) for i in range(a.terms)]
    big = z3.And(*[z3.Or(bs[i], bs[i + 1]) for i in range(a.terms - 1)])
    s = z3.Solver(ctx=ctx)
    for i in range(a.formulas):
        s.add(z3.Implies(z3.Bool(f"a{i}", ctx), z3.And(big, z3.Bool(f"c{i}", ctx))))
    t = time.perf_counter()
    s.check(z3.Bool("q", ctx))
    first = time.perf_counter() - t
    s.push()
    s.add(bs[3])
    s.check()
    s.pop()
    t = time.perf_counter()
    s.check(z3.Bool("q2", ctx))
    print(f"z3 {z3.get_version_string()}: first check {first:.2f} s, the check after a pop "
          f"{time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
