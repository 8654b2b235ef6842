"""Issue 40: the neighbour exchange at 1,024 threads. Two shortcuts for barrier kernels, each with
its switch, compared here with the plain encoding on random small barrier programs:

* ``hangs.BARRIER_PROOF`` — a program without loops whose every thread of a CTA meets the same
  count-less ``bar.sync`` sequence unconditionally cannot hang under fair progress
  (:func:`ptxmm.semantics.barrier_waits.never_blocks`): the hang query is not built;
* ``barrier_waits.GROUPS`` — the waits of a count-less barrier phase with constant operands share
  one "completes" guard and one "arrives" guard per thread, their sync pairs bitset rows.

The generator draws two or three threads (sometimes in two CTAs) running one shared sequence of
stores, loads and barriers, and often one thread's sequence changed so that it may hang: a
barrier dropped, renumbered, predicated on a loaded value or branched around, given a thread
count no phase reaches, an extra barrier, an early ``exit``, or a spin loop."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm import parse
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.queries import hangs
from ptxmm.semantics import barrier_waits
from ptxmm.semantics.barrier_waits import never_blocks
from ptxmm.semantics.builder import build

CHANGES = ["drop", "renumber", "predicate", "around", "count", "exit", "spin", "exit_after", "extra"]


def barrier_program(seed: int) -> str:
    """A random small barrier program (module doc), a pure function of ``seed``."""
    rnd = random.Random(seed)
    n = rnd.choice([2, 2, 3])
    ctas = [0] * n if rnd.random() < 0.75 else [t % 2 for t in range(n)]
    seq = [rnd.choice(["st", "ld", "bar0", "bar0", "bar1"]) for _ in range(rnd.randint(1, 4))]
    if not any(s.startswith("bar") for s in seq):
        seq.append("bar0")
    odd, change = rnd.randrange(n), rnd.choice(CHANGES) if rnd.random() < 0.7 else None
    out = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    for t in range(n):
        lines: list[str] = []
        bars = [i for i, s in enumerate(seq) if s.startswith("bar")]
        at = rnd.choice(bars) if t == odd and change else -1
        for i, s in enumerate(seq):
            if s == "st":
                lines.append(f"st.global.u32 [{rnd.choice('xy')}], {t + 1};")
            elif s == "ld":
                lines.append(f"ld.global.u32 %r{i}, [{rnd.choice('xy')}];")
            else:
                lines += _barrier(s, i, change if i == at else None, n)
        if t == odd and change == "exit_after":
            lines.append("exit;")
        out.append(f".thread T{t} .cta {ctas[t]} {{ .reg .pred %p;\n  " + "\n  ".join(lines) + "\n}")
    out.append("exists (x == 0)")
    return "\n".join(out)


def _barrier(s: str, i: int, change: str | None, n: int) -> list[str]:
    bar = f"bar.sync {s[3]};"
    test = [f"ld.global.u32 %q{i}, [x];", f"setp.eq.u32 %p, %q{i}, 0;"]
    return {None: [bar], "drop": [], "renumber": [f"bar.sync {1 - int(s[3])};"],
            "predicate": [*test, f"@%p {bar}"], "around": [*test, f"@%p bra S{i};", bar, f"S{i}:"],
            "count": [f"bar.sync {s[3]}, {n + 1};"], "exit": ["exit;", bar],
            "spin": [f"L{i}:", f"ld.relaxed.gpu.global.u32 %q{i}, [y];", f"setp.eq.u32 %p, %q{i}, 7;",
                     f"@%p bra L{i};", bar],
            "exit_after": [bar], "extra": [bar, "bar.sync 1;"]}[change]


def _answers(prog, liveness: bool = True, **kw) -> tuple:
    res = ptxmm.check(prog, liveness=liveness, **kw)
    return (res.status, res.holds, res.outcome_set, res.liveness, res.liveness_why,
            sorted((str(f.kind), f.detail) for f in res.findings))


def _plain(monkeypatch, proof: bool = True, groups: bool = True) -> None:
    monkeypatch.setattr(hangs, "BARRIER_PROOF", proof)
    monkeypatch.setattr(barrier_waits, "GROUPS", groups)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_proof_changes_no_answer(monkeypatch, seed):
    """With and without the barrier proof: the same verdict, outcomes, findings (hangs included)
    and liveness verdict; where the proof holds, the plain hang query finds no hang."""
    prog = parse(barrier_program(seed), "generated.ptx")
    _plain(monkeypatch, proof=True)
    fast = _answers(prog)
    _plain(monkeypatch, proof=False)
    plain = _answers(prog)
    assert fast == plain, barrier_program(seed)
    if never_blocks(build(prog)):
        assert plain[3] == "terminates", barrier_program(seed)


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), engine=st.sampled_from(["z3", "brute"]))
def test_groups_change_no_answer(monkeypatch, seed, engine):
    """With and without barrier groups, on either engine: the same verdict, outcomes, findings
    and (the Z3 engine's, which asks it) liveness verdict; and the two engines agree."""
    prog = parse(barrier_program(seed), "generated.ptx")
    live = engine == "z3"
    _plain(monkeypatch, proof=False, groups=True)
    grouped = _answers(prog, live, engine=engine)
    _plain(monkeypatch, proof=False, groups=False)
    assert grouped == _answers(prog, live, engine=engine), barrier_program(seed)
    other = "brute" if engine == "z3" else "z3"
    assert grouped[1:3] == _answers(prog, False, engine=other)[1:3], barrier_program(seed)


def test_the_generator_draws_both_kinds():
    """Among the first seeds: programs the proof covers and programs that do hang (a divergent
    barrier, a dropped one, a spin), so that the comparisons above compare something."""
    proven = hanging = 0
    for seed in range(40):
        prog = parse(barrier_program(seed), "generated.ptx")
        proven += never_blocks(build(prog))
        hanging += ptxmm.check(prog, liveness=True).liveness == "hangs"
    assert proven >= 5 and hanging >= 5, (proven, hanging)


# T0 skips barrier 0 when it reads T1's store, then waits at barrier 1 while T1 waits at 0
DIVERGENT = """.global .u32 x = 0;
.thread T0 .cta 0 { .reg .pred %p; ld.global.u32 %r0, [x]; setp.eq.u32 %p, %r0, 0; @%p bar.sync 0;
  bar.sync 1; }
.thread T1 .cta 0 { st.global.u32 [x], 1; bar.sync 0; bar.sync 1; }
exists (x == 1)"""

SAME = """.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; bar.sync 0; bar.sync 1; }
.thread T1 .cta 0 { bar.sync 0; ld.global.u32 %r0, [x]; bar.sync 1; }
exists (T1:%r0 == 0)"""

REORDERED = """.global .u32 x = 0;
.thread T0 .cta 0 { bar.sync 0; bar.sync 1; }
.thread T1 .cta 0 { bar.sync 1; bar.sync 0; }
exists (x == 0)"""


@pytest.mark.parametrize("src, proven, live", [(SAME, True, "terminates"), (DIVERGENT, False, "hangs"),
                                               (REORDERED, False, "hangs")])
def test_what_the_proof_covers(src, proven, live):
    """One sequence for every thread: proven, and no hang. A barrier a loaded value predicates,
    or two barriers in opposite orders (a deadlock): not proven, and the query finds the hang."""
    prog = parse(src)
    assert never_blocks(build(prog)) is proven
    assert ptxmm.check(prog, liveness=True).liveness == live


def test_the_proof_needs_fair_progress():
    """Under another progress model the proof is not used (a thread may never be scheduled):
    the query runs and answers as without it."""
    prog = parse(SAME)
    res = ptxmm.check(prog, liveness=True, progress_model="unfair")
    hangs.BARRIER_PROOF = False
    try:
        plain = ptxmm.check(prog, liveness=True, progress_model="unfair")
    finally:
        hangs.BARRIER_PROOF = True
    assert (res.liveness, len(res.findings)) == (plain.liveness, len(plain.findings))


KDIR = ROOT / "examples" / "kernels"


@pytest.mark.parametrize("name", ["syncthreads-exchange", "syncthreads-exchange-no-barrier",
                                  "exchange-off-by-one"])
@pytest.mark.parametrize("threads", [2, 3])
def test_exchange_kernels_answer_as_the_plain_encoding(monkeypatch, name, threads):
    """The bundled exchanges at small launches: the kernel's whole check (races, assertions,
    liveness) with both shortcuts equals the plain encoding's."""
    prog = ptxmm.load(KDIR / f"{name}.ptx",
                      kernel=KernelArgs(launch=f"exchange<<<1, {threads}>>>(int out[{threads}])",
                                        forall="out[0] == 2"))
    _plain(monkeypatch, True, True)
    fast = _answers(prog)
    _plain(monkeypatch, False, False)
    assert fast == _answers(prog)
    if name == "syncthreads-exchange":
        assert fast[3] == "terminates" and never_blocks(build(prog))
