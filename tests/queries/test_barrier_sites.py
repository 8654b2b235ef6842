"""Issue 40: the neighbour exchange at 1,024 threads. ``sites.BARRIER_SITES`` — a program the barrier
proof covers (no loop, one unconditional count-less ``bar.sync`` sequence per CTA) under a built-in
model asks no grid-ending site of the liveness graph (:func:`ptxmm.queries.sites.barrier_sites_proven`)
— compared here with the plain path on random small barrier programs with traps.

The generator draws two or three threads (sometimes in two CTAs) running one shared sequence of
stores, loads, barriers and traps on a loaded value (``@%p trap``), and often one thread's
sequence changed so that the proof does not hold or a thread may hang: a barrier dropped or
predicated on a loaded value, a spin loop before a barrier, a trap before one."""

from __future__ import annotations

import random
import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm import parse
from ptxmm.cat.parser import builtin_files
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.queries import hangs, sites
from ptxmm.semantics.barrier_waits import never_blocks
from ptxmm.semantics.builder import build

CHANGES = ["drop", "predicate", "spin", "trap_first"]


def trap_program(seed: int) -> str:
    """A random small barrier program with traps (module doc), a pure function of ``seed``."""
    rnd = random.Random(seed)
    n = rnd.choice([2, 2, 3])
    ctas = [0] * n if rnd.random() < 0.7 else [t % 2 for t in range(n)]
    seq = [rnd.choice(["st", "ld", "bar0", "bar1", "trap"]) for _ in range(rnd.randint(2, 5))]
    if not any(s.startswith("bar") for s in seq):
        seq.insert(rnd.randrange(len(seq) + 1), "bar0")
    if "trap" not in seq:
        seq.append("trap")
    odd, change = rnd.randrange(n), rnd.choice(CHANGES) if rnd.random() < 0.4 else None
    out = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    for t in range(n):
        lines: list[str] = []
        bars = [i for i, s in enumerate(seq) if s.startswith("bar")]
        at = rnd.choice(bars) if t == odd and change else -1
        for i, s in enumerate(seq):
            if s == "st":
                sem = rnd.choice(["", ".relaxed.gpu"])
                lines.append(f"st{sem}.global.u32 [{rnd.choice('xy')}], {t + 1};")
            elif s == "ld":
                lines.append(f"ld.global.u32 %r{i}, [{rnd.choice('xy')}];")
            elif s == "trap":
                lines += [f"ld{rnd.choice(['', '.relaxed.gpu'])}.global.u32 %t{i}, [{rnd.choice('xy')}];",
                          f"setp.eq.u32 %p, %t{i}, {rnd.choice([0, 1, 2, 3])};", "@%p trap;"]
            else:
                lines += _barrier(s, i, change if i == at else None)
        out.append(f".thread T{t} .cta {ctas[t]} {{ .reg .pred %p;\n  " + "\n  ".join(lines) + "\n}")
    out.append("exists (x == 0)")
    return "\n".join(out)


def _barrier(s: str, i: int, change: str | None) -> list[str]:
    bar = f"bar.sync {s[3]};"
    test = [f"ld.global.u32 %q{i}, [x];", f"setp.eq.u32 %p, %q{i}, 0;"]
    return {None: [bar], "drop": [], "predicate": [*test, f"@%p {bar}"],
            "spin": [f"L{i}:", f"ld.relaxed.gpu.global.u32 %q{i}, [y];", f"setp.eq.u32 %p, %q{i}, 0;",
                     f"@%p bra L{i};", bar],
            "trap_first": [*test, "@%p trap;", bar]}[change]


def _answers(prog, model: str = "ptx") -> tuple:
    res = ptxmm.check(prog, model, liveness=True)
    return (res.status, res.holds, res.outcome_set, res.liveness, res.liveness_why,
            sorted((str(f.kind), f.detail, f.events[0].line if f.events else 0) for f in res.findings))


def _asks(prog) -> bool:
    """Whether the plain path asks a grid-ending site of the liveness graph that the proof spares:
    the proof holds and the check's own query leaves a trap site unfound."""
    graph = build(prog)
    if not never_blocks(graph):
        return False
    res = ptxmm.check(prog, liveness=False)
    return sites.unfound_grid_ending(graph, tuple(res.findings))


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), model=st.sampled_from(["ptx", "ptx", "ptx-v7.5", "sc"]))
def test_the_site_proof_changes_no_answer(monkeypatch, seed, model):
    """With and without the proof: the same verdict, outcomes, findings (traps and hangs) and
    liveness verdict."""
    prog = parse(trap_program(seed), "generated.ptx")
    monkeypatch.setattr(sites, "BARRIER_SITES", True)
    fast = _answers(prog, model)
    monkeypatch.setattr(sites, "BARRIER_SITES", False)
    assert fast == _answers(prog, model), trap_program(seed)


def test_the_generator_draws_what_the_proof_spares():
    """Among the first seeds: programs the proof covers with a trap the check does not reach
    (the plain path asks it again of the liveness graph), programs with a reachable trap, and
    programs the proof does not cover, so that the comparison above compares something."""
    spared = trapping = unproven = 0
    for seed in range(40):
        prog = parse(trap_program(seed), "generated.ptx")
        spared += _asks(prog)
        trapping += any(str(f.kind) == "trap" for f in ptxmm.check(prog).findings)
        unproven += not never_blocks(build(prog))
    assert spared >= 5 and trapping >= 5 and unproven >= 5, (spared, trapping, unproven)


# T0 traps when it reads x == 0 after the barrier; T1 stores x before it: no complete execution traps
ORDERED = """.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { .reg .pred %p; bar.sync 0; ld.global.u32 %r0, [x]; setp.eq.u32 %p, %r0, 0; @%p trap; }
.thread T1 .cta 0 { st.global.u32 [x], 1; bar.sync 0; }
exists (x == 1)"""

# the same, but T1 skips the barrier when it reads y == 0 (not covered by the proof)
DIVERGENT = ORDERED.replace("st.global.u32 [x], 1; bar.sync 0;",
                            ".reg .pred %q; st.global.u32 [x], 1; ld.global.u32 %r1, [y]; "
                            "setp.eq.u32 %q, %r1, 0; @%q bar.sync 0;")


def _spy(monkeypatch) -> list:
    asked: list = []
    real = sites.grid_ending_sites

    def spy(eg, pb, found):
        asked.append(found)
        return real(eg, pb, found)

    monkeypatch.setattr(sites, "grid_ending_sites", spy)
    return asked


def test_the_proof_spares_the_liveness_sites_query(monkeypatch):
    """ORDERED's trap is unreachable and the proof holds: no grid-ending query, the same answers
    as with it (which asks it once and finds nothing)."""
    prog = parse(ORDERED)
    asked = _spy(monkeypatch)
    fast = _answers(prog)
    assert asked == [] and sites.barrier_sites_proven(build(prog), "ptx")
    monkeypatch.setattr(sites, "BARRIER_SITES", False)
    assert _answers(prog) == fast and len(asked) == 1
    assert fast[3] == "terminates" and fast[5] == []


def test_only_where_the_barrier_proof_holds():
    """A barrier some path skips: not proven (the liveness query asks its sites)."""
    assert not sites.barrier_sites_proven(build(parse(DIVERGENT)), "ptx")


def test_only_under_a_built_in_model(monkeypatch, tmp_path):
    """A model from a user's file (here a copy of ptx.cat): the argument is about the built-in
    models' axioms, so the liveness query asks the sites (with the same answers)."""
    mine = tmp_path / "mine.cat"
    for name in ("ptx", "ptx-common", "ptx-proxy", "ptx-async"):
        shutil.copy(builtin_files()[name], tmp_path / f"{name}.cat")
    shutil.copy(builtin_files()["ptx"], mine)
    prog = parse(ORDERED)
    graph = build(prog)
    assert sites.barrier_sites_proven(graph, "ptx") and not sites.barrier_sites_proven(graph, str(mine))
    asked = _spy(monkeypatch)
    assert _answers(prog, str(mine))[3:] == _answers(prog)[3:]
    assert len(asked) == 1


def test_not_under_another_progress_model(monkeypatch):
    """Under unfair progress the proof is not used: the liveness query asks the sites."""
    asked = _spy(monkeypatch)
    ptxmm.check(parse(ORDERED), liveness=True, progress_model="unfair")
    assert len(asked) == 1 and hangs.BARRIER_PROOF


KDIR = ROOT / "examples" / "kernels"


def test_the_exchange_kernel_answers_as_the_plain_path(monkeypatch):
    """The bundled exchange at 3 threads: its assertion site is unreachable, the proof spares the
    liveness sites query, and the whole check answers as without it."""
    prog = ptxmm.load(KDIR / "syncthreads-exchange.ptx",
                      kernel=KernelArgs(launch="exchange<<<1, 3>>>(int out[3])", forall="out[0] == 2"))
    asked = _spy(monkeypatch)
    fast = _answers(prog)
    assert asked == []
    monkeypatch.setattr(sites, "BARRIER_SITES", False)
    assert _answers(prog) == fast and len(asked) == 1
