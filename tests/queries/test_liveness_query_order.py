"""The liveness problem's hang query asked before its grid-ending sites (queries.hangs.HANGS_FIRST,
issue 40): a check's findings (failed assertions and traps reached while other threads spin or
wait, and the threads that can hang: a hang finding's witness may be another) and liveness verdict
are those of the other order, on random programs
around an RMW chain (tests/support/chain_gen.py) with a trap on a loaded value in each thread,
under fair and obe progress, and on the grid barrier; a hang query asked first that stops at the
first witness (the mutant hangs-first-one-witness) is killed."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT
from support.chain_gen import program
from support.launches import SETTINGS

import ptxmm
from ptxmm.queries import hangs, sites


def _with_traps(src: str, seed: int) -> str:
    """Each thread of a chain_gen program ends with a trap on a value it loads."""
    rnd = random.Random(seed)
    out = []
    for line in src.splitlines():
        if line == "}":
            out += [f"  ld.global.u32 %tr, [{rnd.choice(['d0', 'd1', 's'])}];",
                    f"  setp.eq.u32 %p19, %tr, {rnd.choice([0, 1, 2, 5])};", "  @%p19 trap;"]
        out.append(line)
    return "\n".join(out) + "\n"


def _answer(res) -> tuple:
    """What a check answers whatever witness each query returned: its status and verdict, each
    site's (kind, line), the threads that can hang (each hang finding names those of its witness;
    together they are every thread that can hang), the liveness verdict and why."""
    sites = sorted({(f.kind.value, f.events[0].line) for f in res.findings if f.kind.value != "hang"})
    hung = sorted({e.thread for f in res.findings if f.kind.value == "hang" for e in f.events})
    return res.status, res.holds, sites, hung, res.liveness, res.liveness_why


def _both(monkeypatch, prog, **kw) -> tuple:
    monkeypatch.setattr(hangs, "HANGS_FIRST", False)
    apart = _answer(ptxmm.check(prog, liveness=True, **kw))
    monkeypatch.setattr(hangs, "HANGS_FIRST", True)
    assert _answer(ptxmm.check(prog, liveness=True, **kw)) == apart
    return apart


@settings(max_examples=10, derandomize=True, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), progress=st.sampled_from(["fair", "obe"]))
def test_generated_programs_with_traps_agree(monkeypatch, seed, progress):
    prog = ptxmm.parse(_with_traps(program(seed), seed), "generated.ptx")
    _both(monkeypatch, prog, progress_model=progress)


def test_the_generated_programs_reach_both_answers(monkeypatch):
    """Traps reached and not, hangs and none: what the switch is about."""
    progs = [ptxmm.parse(_with_traps(program(s), s), "generated.ptx") for s in range(10)]
    answers = [_both(monkeypatch, p) for p in progs]
    assert any(a[3] for a in answers) and any(not a[3] for a in answers)
    assert any(any(k == "trap" for k, _ in a[2]) for a in answers)
    assert any(a[4] == "terminates" for a in answers)


def _grid(n: int):
    from ptxmm.kernel.kernels import KernelArgs

    launch = f"exchange<<<{n}, 1>>>(unsigned count[1], unsigned sense[1], int slot[{n}], int out[{n}])"
    return ptxmm.load(ROOT / "examples" / "kernels" / "grid-barrier.ptx", kernel=KernelArgs(launch=launch))


@pytest.mark.parametrize("n", [2, 3])
def test_the_grid_barrier_asks_the_hangs_first(monkeypatch, n):
    asked = []
    real_hangs, real_sites = hangs._hangs, sites.grid_ending_sites
    monkeypatch.setattr(hangs, "_hangs", lambda *a: asked.append("hangs") or real_hangs(*a))
    monkeypatch.setattr(sites, "grid_ending_sites", lambda *a: asked.append("sites") or real_sites(*a))
    assert _both(monkeypatch, _grid(n))[2:5] == ([], [], "terminates")
    assert asked == ["sites", "hangs", "hangs", "sites"]  # off, then on


SPIN = """.global .u32 s = 0;
.global .u32 x = 0;
.thread T0 .cta 0 { .reg .pred %p<2>;
  W:
  ld.relaxed.gpu.global.u32 %r0, [s];
  setp.ne.u32 %p0, %r0, 1;
  @%p0 bra W;
}
.thread T1 .cta 1 { .reg .pred %p<2>;
  ld.global.u32 %r1, [x];
  setp.eq.u32 %p1, %r1, 5;
  @%p1 trap;
}
exists (x == 0)
"""


def test_a_hang_beside_a_trap_no_execution_reaches_is_found():
    """T0 waits for a flag nobody sets; T1's trap needs x == 5, which nothing writes: the hang
    is found, the trap is not."""
    res = ptxmm.check(ptxmm.parse(SPIN, "spin.ptx"), liveness=True)
    assert res.liveness == "hangs" and [f.kind.value for f in res.findings] == ["hang"]


EITHER = """.global .u32 a = 0;
.global .u32 b = 0;
.global .u32 c = 0;
.thread T0 .cta 0 { .reg .pred %p<2>;
  WA:
  ld.relaxed.gpu.global.u32 %r0, [a];
  setp.ne.u32 %p0, %r0, 1;
  @%p0 bra WA;
}
.thread T1 .cta 1 { .reg .pred %p<2>;
  WB:
  ld.relaxed.gpu.global.u32 %r1, [b];
  setp.ne.u32 %p1, %r1, 1;
  @%p1 bra WB;
}
.thread T2 .cta 2 { .reg .pred %p<2>;
  ld.relaxed.gpu.global.u32 %r2, [c];
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra SA;
  st.relaxed.gpu.global.u32 [b], 1;
  bra.uni END;
  SA:
  st.relaxed.gpu.global.u32 [a], 1;
  END:
}
.thread T3 .cta 3 {
  st.relaxed.gpu.global.u32 [c], 1;
}
exists (a == 1)
"""


def test_threads_that_hang_in_different_executions_are_all_found(monkeypatch):
    """T2 sets a or b, as it reads c: T0 or T1 hangs, never both — two witnesses, both threads
    reported in either order (the mutant hangs-first-one-witness reports one)."""
    prog = ptxmm.parse(EITHER, "either.ptx")
    assert _both(monkeypatch, prog)[3] == ["T0", "T1"]
