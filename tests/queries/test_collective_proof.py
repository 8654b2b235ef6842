"""Issue 40: a warp-collective kernel at <<<2, 64>>>. ``hangs.COLLECTIVE_PROOF`` — a liveness graph
whose every thread of a CTA meets the same sequence of count-less barriers and constant-mask warp
collectives unconditionally cannot hang under fair progress
(:func:`ptxmm.semantics.collective_proof.never_hangs`): the hang query is not built. Compared here
with the plain encoding (both proofs off) on random small warp kernels; and
``barrier_waits.SURE_ARRIVALS`` (no exit pair for a thread sure to arrive) with its plain encoding.

The generator draws a launch of one or two CTAs of two to four lanes and one shared sequence of
steps — a store or load of a global element, ``shfl.sync``, ``vote.sync.ballot``,
``bar.warp.sync``, ``bar.sync``, a loop of two iterations round a collective (its trip count a
constant: the unrolling decides it), then a store of 7 to ``x[2]`` — and often one change for one
lane so that it may hang: a collective it branches around, predicated on a loaded value, a
different membermask value, two collectives in the other order, an early ``exit``, or a spin
loop until ``x[2]`` is 7 before it."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_barrier_proof import barrier_program

import ptxmm
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.loading import parse_kernel
from ptxmm.queries import hangs
from ptxmm.semantics import barrier_waits
from ptxmm.semantics.collective_proof import never_hangs

HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n"
CHANGES = ["around", "predicate", "mask", "swap", "exit", "spin"]
STEPS = ["st", "ld", "shfl", "shfl", "vote", "syncwarp", "bar", "loop"]


def _step(s: str, i: int) -> list[str]:
    """The PTX of one step (registers numbered by the step's index ``i``)."""
    return {
        "st": [f"st.global.u32 [%rd4+{4 * (i % 2)}], %r1;"],
        "ld": [f"ld.global.u32 %r{10 + i}, [%rd4+{4 * (i % 2)}];"],
        "shfl": [f"shfl.sync.down.b32 %r{10 + i}, %r1, 1, 31, -1;"],
        "vote": [f"vote.sync.ballot.b32 %r{10 + i}, %p1, -1;"],
        "syncwarp": ["bar.warp.sync -1;"],
        "bar": ["bar.sync 0;"],
        "loop": [f"mov.u32 %r{10 + i}, 0;", f"L{i}:", f"shfl.sync.idx.b32 %r{40 + i}, %r1, 0, 31, -1;",
                 f"add.u32 %r{10 + i}, %r{10 + i}, 1;", f"setp.lt.u32 %p{10 + i}, %r{10 + i}, 2;",
                 f"@%p{10 + i} bra L{i};"],
    }[s]


def _changed(s: str, i: int, change: str, odd: int) -> list[str]:
    """Step ``i`` as the lane ``odd`` (by %tid.x; the others run it as drawn) may change it."""
    me = [f"setp.eq.u32 %p{30 + i}, %r1, {odd};"]
    body = _step(s, i)
    if change == "around":
        return [*me, f"@%p{30 + i} bra S{i};", *body, f"S{i}:"]
    if change == "predicate":  # lane `odd` skips it when it reads 0
        return [f"ld.global.u32 %r{60 + i}, [%rd4];", f"setp.eq.u32 %p{30 + i}, %r{60 + i}, 0;",
                f"@%p{30 + i} bra S{i};", *body, f"S{i}:"]
    if change == "mask":  # lane `odd` names only itself and lane 0
        mask = (1 << odd) | 1
        alt = [ln.replace(", -1;", f", {mask};").replace("sync -1;", f"sync {mask};")
               .replace(f"L{i}", f"M{i}") for ln in body]
        return [*me, f"@%p{30 + i} bra A{i};", *body, f"bra.uni S{i};", f"A{i}:", *alt, f"S{i}:"]
    if change == "swap":  # lane `odd` meets a bar.warp.sync first
        return [*me, f"@%p{30 + i} bra A{i};", *body, "bar.warp.sync -1;", f"bra.uni S{i};", f"A{i}:",
                "bar.warp.sync -1;", *(ln.replace(f"L{i}", f"M{i}") for ln in body), f"S{i}:"]
    if change == "exit":
        return [*me, f"@%p{30 + i} exit;", *body]
    # spin: lane `odd` waits for x[2] == 7, which the lanes store after the step (a deadlock)
    return [*me, f"@!%p{30 + i} bra S{i};", f"W{i}:", f"ld.relaxed.gpu.global.u32 %r{60 + i}, [%rd4+8];",
            f"setp.eq.u32 %p{50 + i}, %r{60 + i}, 7;", f"@!%p{50 + i} bra W{i};", f"S{i}:", *body]


def warp_kernel(seed: int) -> tuple[str, str]:
    """A random small warp kernel and its launch (module doc), a pure function of ``seed``."""
    rnd = random.Random(seed)
    grid, block = rnd.choice([(1, 2), (1, 3), (1, 4), (2, 2)])
    seq = [rnd.choice(STEPS) for _ in range(rnd.randint(1, 4))]
    colls = [i for i, s in enumerate(seq) if s not in ("st", "ld")]
    if not colls:
        seq.append("shfl")
        colls = [len(seq) - 1]
    change = rnd.choice(CHANGES) if rnd.random() < 0.6 else None
    at, odd = rnd.choice(colls), rnd.randrange(block)
    lines = []
    for i, s in enumerate(seq):
        lines += _changed(s, i, change, odd) if change and i == at else _step(s, i)
    body = "\n\t".join(lines)
    text = HEAD + f""".visible .entry k(.param .u64 k_param_0)
{{
\t.reg .pred %p<80>;
\t.reg .b32 %r<80>;
\t.reg .b64 %rd<8>;
\tld.param.u64 %rd1, [k_param_0];
\tcvta.to.global.u64 %rd4, %rd1;
\tmov.u32 %r1, %tid.x;
\tsetp.ne.u32 %p1, %r1, 0;
\t{body}
\tst.global.u32 [%rd4+8], 7;
\tret;
}}
"""
    return text, f"k<<<{grid}, {block}>>>(unsigned x[3])"


def _prog(seed: int):
    text, launch = warp_kernel(seed)
    return parse_kernel(text, "k.ptx", KernelArgs(launch=launch, forall="x[0] == x[0]"))


def _answers(prog) -> tuple:
    res = ptxmm.check(prog)
    return (res.status, res.holds, res.outcome_set, res.liveness, res.liveness_why,
            sorted((str(f.kind), f.detail) for f in res.findings))


def _proofs(monkeypatch, on: bool) -> None:
    monkeypatch.setattr(hangs, "COLLECTIVE_PROOF", on)
    monkeypatch.setattr(hangs, "BARRIER_PROOF", on)


def _proven(prog) -> bool:
    return never_hangs(hangs.liveness_graph(prog, 2, hangs.Progress()))


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_proof_changes_no_answer(monkeypatch, seed):
    """With and without the proofs: the same verdict, outcomes, findings (hangs included) and
    liveness verdict; where the collective proof holds, the plain hang query finds no hang."""
    prog = _prog(seed)
    _proofs(monkeypatch, True)
    fast = _answers(prog)
    _proofs(monkeypatch, False)
    plain = _answers(prog)
    src = warp_kernel(seed)
    assert fast == plain, src
    if _proven(prog):
        assert plain[3] == "terminates", src


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), barriers=st.booleans())
def test_sure_arrivals_change_no_answer(monkeypatch, seed, barriers):
    """``barrier_waits.SURE_ARRIVALS`` (no exit pair for a thread that arrives at the wait's
    instance on every finishing path), forced on in every problem, with the proofs off so that
    the hang query runs on the exit pairs: the same verdict, outcomes, findings and liveness
    verdict, on the random warp kernels and on the random barrier programs of
    test_barrier_proof.py (early exits, dropped and renumbered barriers: exit pairs that stay)."""
    src = barrier_program(seed) if barriers else warp_kernel(seed)
    prog = ptxmm.parse(src, "generated.ptx") if barriers else _prog(seed)
    _proofs(monkeypatch, False)
    monkeypatch.setattr(barrier_waits, "_SURE", {"on": True})  # in every problem, the hang query's too
    sure = _answers(prog)
    monkeypatch.setattr(barrier_waits, "_SURE", {"on": False})
    assert sure == _answers(prog), src


def test_the_generator_draws_both_kinds():
    """Among the first seeds: kernels the proof covers (warp collectives, constant loops round
    them) and kernels that do hang (a lane that skips a collective, swaps two, exits, spins), so
    that the comparison above compares something."""
    proven = hanging = 0
    for seed in range(40):
        prog = _prog(seed)
        proven += _proven(prog)
        hanging += ptxmm.check(prog).liveness == "hangs"
    assert proven >= 8 and hanging >= 5, (proven, hanging)


def _kernel(body: str, block: int = 3) -> object:
    text = HEAD + f""".visible .entry k(.param .u64 k_param_0)
{{
\t.reg .pred %p<9>;
\t.reg .b32 %r<20>;
\t.reg .b64 %rd<8>;
\tld.param.u64 %rd1, [k_param_0];
\tcvta.to.global.u64 %rd4, %rd1;
\tmov.u32 %r1, %tid.x;
\tsetp.ne.u32 %p1, %r1, 0;
{body}
\tst.global.u32 [%rd4+8], 7;
\tret;
}}
"""
    return parse_kernel(text, "k.ptx", KernelArgs(launch=f"k<<<1, {block}>>>(unsigned x[3])",
                                                  forall="x[0] == x[0]"))


UNIFORM = """\tshfl.sync.down.b32 %r2, %r1, 1, 31, -1;
\tvote.sync.ballot.b32 %r3, %p1, -1;
\tbar.sync 0;
\tbar.warp.sync -1;"""
# lane 1 skips the shuffle: lane 0 waits for it forever
SKIPPED = """\tsetp.eq.u32 %p2, %r1, 1;
\t@%p2 bra S;
\tshfl.sync.down.b32 %r2, %r1, 1, 31, -1;
S:
\tbar.warp.sync -1;"""
# the same loop of two shuffles in every lane: the unrolling decides it
LOOP = """\tmov.u32 %r4, 0;
L:
\tshfl.sync.idx.b32 %r2, %r1, 0, 31, -1;
\tadd.u32 %r4, %r4, 1;
\tsetp.lt.u32 %p2, %r4, 2;
\t@%p2 bra L;"""


# lane 1 spins until x[2] is 7, which lane 0 stores only after the shuffle that waits for lane 1
SPIN = """\tsetp.eq.u32 %p2, %r1, 1;
\t@!%p2 bra S;
W:
\tld.relaxed.gpu.global.u32 %r5, [%rd4+8];
\tsetp.eq.u32 %p3, %r5, 7;
\t@!%p3 bra W;
S:
\tshfl.sync.down.b32 %r2, %r1, 1, 31, -1;"""


@pytest.mark.parametrize("body, proven, live", [(UNIFORM, True, "terminates"), (LOOP, True, "terminates"),
                                                (SKIPPED, False, "hangs"), (SPIN, False, "hangs")])
def test_what_the_proof_covers(body, proven, live):
    """Every lane meets the same collectives (and a constant loop round one): proven, no hang. A
    lane that branches around a shuffle, or spins before it for a store made after it: not proven,
    and the query finds the hang."""
    prog = _kernel(body)
    assert _proven(prog) is proven
    assert ptxmm.check(prog).liveness == live


def test_the_proof_needs_fair_progress(monkeypatch):
    """Under another progress model the proof is not used: the query runs and answers as without it."""
    prog = _kernel(UNIFORM)
    res = ptxmm.check(prog, progress_model="unfair")
    _proofs(monkeypatch, False)
    plain = ptxmm.check(prog, progress_model="unfair")
    assert (res.liveness, len(res.findings)) == (plain.liveness, len(plain.findings))


def test_the_bundled_block_reduce_at_a_small_launch(monkeypatch):
    """CUB's block reduce (examples/kernels/block-reduce-shfl.ptx) at <<<1, 4>>>: the whole check
    with the proof equals the plain encoding's, and the proof holds."""
    from support import ROOT

    prog = ptxmm.load(ROOT / "examples" / "kernels" / "block-reduce-shfl.ptx",
                      kernel=KernelArgs(launch="block_sum<<<1, 4>>>(int out[1])", forall="out[0] == 10"))
    _proofs(monkeypatch, True)
    fast = _answers(prog)
    assert _proven(prog) and fast[3] == "terminates"
    _proofs(monkeypatch, False)
    assert fast == _answers(prog)


# T0 exits after barrier 1 on one path only (it read T1's store); T1 waits at barrier 0 first. On
# that path T0 passes barrier 1 only once T1 has, and T1 passes barrier 0 only once T0 has exited
# (the exit pairs): a cycle, so no execution has T0 read 1
EXIT_ON_ONE_PATH = """.global .u32 x = 0;
.thread T0 .cta 0 { .reg .pred %p; ld.global.u32 %r0, [x]; bar.sync 1; setp.ne.u32 %p, %r0, 0;
  @%p exit; bar.sync 0; }
.thread T1 .cta 0 { st.global.u32 [x], 1; bar.sync 0; bar.sync 1; }
exists (T0:%r0 == 1)"""


@pytest.mark.parametrize("sure", [True, False])
@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_an_exit_on_one_path_keeps_its_exit_pairs(monkeypatch, sure, engine):
    """A thread that arrives at a wait's barrier on one finishing path and exits before it on
    another is not sure to arrive: its exit pairs stay, and the deadlock of the exiting path is
    no execution (either engine, with and without SURE_ARRIVALS)."""
    monkeypatch.setattr(barrier_waits, "_SURE", {"on": sure})
    res = ptxmm.check(ptxmm.parse(EXIT_ON_ONE_PATH), engine=engine)
    assert res.holds is False and res.outcome_set == set()


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), barriers=st.booleans())
def test_the_partner_index_changes_no_answer(monkeypatch, seed, barriers):
    """``barrier_waits.PARTNER_INDEX`` (arrive → wait pairs looked for only among waits whose
    constant operands may match), with the proofs off: the same answers as asking every wait."""
    src = barrier_program(seed) if barriers else warp_kernel(seed)
    prog = ptxmm.parse(src, "generated.ptx") if barriers else _prog(seed)
    _proofs(monkeypatch, False)
    monkeypatch.setattr(barrier_waits, "PARTNER_INDEX", True)
    fast = _answers(prog)
    monkeypatch.setattr(barrier_waits, "PARTNER_INDEX", False)
    assert fast == _answers(prog), src


# T1 waits at the barrier named by a loaded value (0): T0's arrive at the constant barrier 0 is
# its partner, and T1 then reads T0's store
REGISTER_BARRIER = """.global .u32 x = 0;
.global .u32 z = 0;
.thread T0 .cta 0 { st.global.u32 [z], 0; st.global.u32 [x], 1; bar.sync 0; }
.thread T1 .cta 0 { ld.global.u32 %r1, [z]; bar.sync %r1; ld.global.u32 %r2, [x]; }
exists (T1:%r2 == 0)"""


@pytest.mark.parametrize("index", [True, False])
@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_a_register_operand_wait_is_every_arrive_s_partner(monkeypatch, index, engine):
    """A wait whose barrier operand is a register is a candidate partner of every arrive of its
    CTA, with and without the partner index, on either engine: T1 never reads x before T0's store."""
    monkeypatch.setattr(barrier_waits, "PARTNER_INDEX", index)
    res = ptxmm.check(ptxmm.parse(REGISTER_BARRIER), engine=engine)
    assert res.holds is False and res.status == "ok"
