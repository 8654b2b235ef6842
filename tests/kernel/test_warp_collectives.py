"""Warp collectives in kernels (issue 39, item 2): shfl.sync, vote.sync, match.sync, redux.sync,
activemask and bar.warp.sync, each value checked against the PTX ISA's definition (written out
again here, independently of semantics/warp_collectives.py), on both engines; partial masks, a
lane that exits or never arrives, a thread outside its own membermask, and what orders memory
(bar.warp.sync) and what does not (shfl.sync).

The kernels are PTX as nvcc writes it (tests run without nvcc): thread t loads ``in[t]``, runs
the collective and stores its result(s) to ``out[t]`` (and ``out2[t]``)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.engines.brute_liveness import brute_hangs
from ptxmm.errors import ParseError, SemanticError, UnsupportedError
from ptxmm.ir.program import Imm, Reg
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.module.bodies import _warp
from ptxmm.loading import parse_kernel
from ptxmm.queries.hangs import find_hangs

HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n"
M32 = 0xFFFFFFFF


def kernel(code: str, n: int, ins: list[int], launch: str | None = None, **cond):
    """A kernel of ``n`` threads: %r2 = in[t] (%rd8 its 64-bit extension, %p1 = in[t] != 0),
    then ``code``, whose results are stored from %r3 to out[t] and %r4 to out2[t]."""
    text = HEAD + """.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1, .param .u64 k_param_2)
{
\t.reg .pred %p<9>;
\t.reg .b32 %r<20>;
\t.reg .b64 %rd<12>;
\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tld.param.u64 %rd9, [k_param_2];
\tcvta.to.global.u64 %rd3, %rd1;
\tcvta.to.global.u64 %rd4, %rd2;
\tcvta.to.global.u64 %rd10, %rd9;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd5, %r1, 4;
\tadd.s64 %rd6, %rd3, %rd5;
\tld.global.u32 %r2, [%rd6];
\tcvt.u64.u32 %rd8, %r2;
\tsetp.ne.s32 %p1, %r2, 0;
\tmov.u32 %r3, 0;
\tmov.u32 %r4, 0;
CODE
\tadd.s64 %rd7, %rd4, %rd5;
\tst.global.u32 [%rd7], %r3;
\tadd.s64 %rd11, %rd10, %rd5;
\tst.global.u32 [%rd11], %r4;
\tret;
}
""".replace("CODE", code)
    vals = ", ".join(str(v & M32) for v in ins)
    launch = launch or f"k<<<1, {n}>>>(unsigned in[{n}] = {{{vals}}}, unsigned out[{n}], unsigned out2[{n}])"
    return parse_kernel(text, "k.ptx", KernelArgs(launch=launch, **cond))


def outcomes(prog, engine: str = "z3") -> set[tuple]:
    """Every allowed final (out, out2), as tuples of unsigned values."""
    res = ptxmm.check(prog, engine=engine, flags=False)
    out = set()
    for o in res.outcomes:
        d = o.outcome.as_dict()
        n, n2 = (len([k for k in d if k.startswith(f"{b}[")]) for b in ("out", "out2"))
        out.add((tuple(d[f"out[{i}]"] & M32 for i in range(n)),
                 tuple(d[f"out2[{i}]"] & M32 for i in range(n2))))
    return out


def both(prog) -> set[tuple]:
    """The outcomes, the same on both engines."""
    z = outcomes(prog, "z3")
    assert outcomes(prog, "brute") == z
    return z


def one(prog) -> tuple[list[int], list[int]]:
    got = both(prog)
    assert len(got) == 1, got
    a, b = next(iter(got))
    return list(a), list(b)


# ----- the ISA's definitions, written out ---------------------------------------------------------


def shfl_ref(mode: str, lane: int, b: int, c: int) -> tuple[int, bool]:
    """PTX ISA, shfl.sync, its pseudocode: the source lane and p."""
    bval, cval, seg = b & 31, c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (cval & ~seg & 31)
    min_lane = lane & seg
    if mode == "up":
        j = lane - bval
        p = j >= max_lane
    elif mode == "down":
        j = lane + bval
        p = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        p = j <= max_lane
    else:
        j = min_lane | (bval & ~seg & 31)
        p = j <= max_lane
    return (j if p else lane), p


def s32(v: int) -> int:
    v &= M32
    return v - (1 << 32) if v >> 31 else v


# ----- shfl.sync ----------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(mode=st.sampled_from(["up", "down", "bfly", "idx"]), b=st.integers(0, 5),
       clamp=st.integers(0, 31), seg=st.sampled_from([0, 0x1c, 0x1e, 0x18]),
       ins=st.lists(st.integers(0, M32), min_size=4, max_size=4))
def test_shfl_gives_the_source_lane_value_and_p_as_the_isa_defines(mode, b, clamp, seg, ins):
    c = clamp | seg << 8
    refs = [shfl_ref(mode, lane, b, c) for lane in range(4)]
    assume(all(j < 4 for j, _ in refs))
    prog = kernel(f"\tshfl.sync.{mode}.b32 %r5|%p2, %r2, {b}, {c}, 15;\n\tmov.u32 %r3, %r5;\n"
                  "\tselp.u32 %r4, 1, 0, %p2;", 4, ins)
    out, out2 = one(prog)
    assert out == [ins[j] for j, _ in refs]
    assert out2 == [int(p) for _, p in refs]


def test_shfl_with_register_operands_and_nvcc_forms():
    """__shfl_down_sync(0xffffffff, v, 1, 2) as nvcc writes it: b and c in registers, c =
    ((32 - width) << 8) | 31 (segments of 2 lanes: the last lane of each keeps its own)."""
    code = ("\tmov.u32 %r6, 1;\n\tmov.u32 %r7, 7711;\n\tmov.u32 %r8, -1;\n"
            "\tshfl.sync.down.b32 %r3|%p2, %r2, %r6, %r7, %r8;")
    out, _ = one(kernel(code, 4, [10, 11, 12, 13], None))
    assert 7711 == (30 << 8) | 31
    assert out == [11, 11, 13, 13]


def test_shfl_from_a_lane_that_exited_is_unspecified():
    """Lane 1 exits before the shfl; lane 0 reads it: undefined — the solver may give any value,
    the brute-force engine refuses, a warning names the instruction."""
    code = "\t@%p3 bra $L_end;\n\tshfl.sync.idx.b32 %r3|%p2, %r2, 1, 31, 3;\n$L_end:"
    prog = kernel("\tsetp.eq.u32 %p3, %r1, 1;\n" + code, 2, [5, 7])
    res = ptxmm.check(prog, flags=False)
    assert any("undefined" in w.message for w in res.program.warnings)
    with pytest.raises(UnsupportedError, match="unspecified"):
        ptxmm.check(prog, engine="brute")
    vals = {o.outcome.as_dict().get("out[0]") for o in res.outcomes}
    assert vals != {7}  # not the value lane 1 would have sent: nothing is guessed


# ----- vote.sync ----------------------------------------------------------------------------------

VOTES = {"any": lambda ps: any(ps), "all": lambda ps: all(ps), "uni": lambda ps: len(set(ps)) == 1}


@pytest.mark.parametrize("mode", ["any", "all", "uni"])
@pytest.mark.parametrize("neg", [False, True])
@pytest.mark.parametrize("ins", [[0, 0, 0, 0], [1, 0, 3, 0], [4, 4, 4, 4], [0, 0, 0, 9]])
def test_vote_predicates(mode, neg, ins):
    src = "!%p1" if neg else "%p1"
    prog = kernel(f"\tvote.sync.{mode}.pred %p2, {src}, 15;\n\tselp.u32 %r3, 1, 0, %p2;", 4, ins)
    ps = [(v != 0) != neg for v in ins]
    out, _ = one(prog)
    assert out == [int(VOTES[mode](ps))] * 4


@pytest.mark.parametrize("ins", [[0, 0, 0, 0], [1, 0, 3, 0], [4, 4, 4, 4]])
def test_ballot_sets_the_bit_of_each_lane_whose_predicate_holds(ins):
    out, _ = one(kernel("\tvote.ballot.sync.b32 %r3, %p1, 15;", 4, ins))
    assert out == [sum(1 << k for k, v in enumerate(ins) if v)] * 4


def test_partial_masks_two_groups_of_lanes_vote_apart():
    """Lanes 0 and 2 vote with mask 0x5, lanes 1 and 3 with 0xa: two collectives that complete
    independently (ballot bits only of each group's lanes)."""
    code = ("\tand.b32 %r5, %r1, 1;\n\tsetp.eq.u32 %p3, %r5, 0;\n\tselp.u32 %r6, 5, 10, %p3;\n"
            "\tvote.sync.ballot.b32 %r3, %p1, %r6;")
    out, _ = one(kernel(code, 4, [1, 1, 0, 1]))
    assert out == [0b0001, 0b1010, 0b0001, 0b1010]


def test_a_lane_that_exits_is_not_waited_for_and_does_not_vote():
    """'all non-exited threads': lane 1 exits first; the others' __all_sync ignores its 0."""
    code = "\tsetp.eq.u32 %p3, %r1, 1;\n\t@%p3 bra $L_end;\n\tvote.sync.all.pred %p2, %p1, 15;\n" \
           "\tselp.u32 %r3, 1, 0, %p2;\n$L_end:"
    prog = kernel(code, 4, [5, 0, 5, 5])
    out, _ = one(prog)
    assert out == [1, 0, 1, 1]
    assert not ptxmm.check(prog, flags=False).findings  # no hang


# ----- match.sync, redux.sync -----------------------------------------------------------------------


@pytest.mark.parametrize("ins", [[3, 3, 3, 3], [1, 2, 1, 4], [7, 7, 0, 7]])
def test_match_any_and_all(ins):
    out, _ = one(kernel("\tmatch.any.sync.b32 %r3, %r2, 15;", 4, ins))
    assert out == [sum(1 << m for m in range(4) if ins[m] == ins[lane]) for lane in range(4)]
    out, out2 = one(kernel("\tmatch.sync.all.b32 %r3|%p2, %r2, 15;\n\tselp.u32 %r4, 1, 0, %p2;", 4, ins))
    same = len(set(ins)) == 1
    assert out == [15 if same else 0] * 4 and out2 == [int(same)] * 4


def test_match_b64_compares_64_bit_values():
    code = "\tshl.b64 %rd8, %rd8, 32;\n\tmatch.any.sync.b64 %r3, %rd8, 15;"
    out, _ = one(kernel(code, 4, [1, 1, 2, 1]))
    assert out == [0b1011, 0b1011, 0b0100, 0b1011]


REDUX = {"add.u32": lambda vs: sum(vs) & M32, "add.s32": lambda vs: sum(vs) & M32,
         "min.u32": min, "max.u32": max,
         "min.s32": lambda vs: min(map(s32, vs)) & M32, "max.s32": lambda vs: max(map(s32, vs)) & M32,
         "and.b32": lambda vs: vs[0] & vs[1] & vs[2] & vs[3],
         "or.b32": lambda vs: vs[0] | vs[1] | vs[2] | vs[3],
         "xor.b32": lambda vs: vs[0] ^ vs[1] ^ vs[2] ^ vs[3]}


@pytest.mark.parametrize("op", list(REDUX))
def test_redux(op):
    ins = [5, M32 - 2, 0x80000001, 12]  # -3 and INT_MIN+1 as .s32
    out, _ = one(kernel(f"\tredux.sync.{op} %r3, %r2, 15;", 4, ins))
    assert out == [REDUX[op](ins)] * 4


# ----- activemask, bar.warp.sync and memory ---------------------------------------------------------


def test_activemask_sets_the_own_bit_and_leaves_the_others_unspecified():
    """activemask's own bit is always set; the others are the scheduler's: unspecified (the
    solver chooses), with a warning saying why."""
    code = "\tactivemask.b32 %r4;\n\tmov.u32 %r5, %lanemask_eq;\n\tand.b32 %r3, %r4, %r5;"
    res = ptxmm.check(kernel(code, 2, [0, 0], forall="out[0] == 1 && out[1] == 2"), flags=False)
    assert res.holds is True
    assert any("scheduler" in w.message for w in res.program.warnings)
    for v in (1, 3):  # lane 1 active at that moment, or not
        res = ptxmm.check(kernel(code + "\n\tmov.u32 %r3, %r4;", 2, [0, 0], exists=f"out[0] == {v}"),
                          flags=False)
        assert res.holds is True
    res = ptxmm.check(kernel(code + "\n\tmov.u32 %r3, %r4;", 2, [0, 0], exists="out[0] == 2"),
                      flags=False)
    assert res.holds is False  # its own bit is never clear


def z3_outcomes(prog) -> set[tuple]:
    """Z3's outcomes; the brute-force engine refuses activemask (its choice is unspecified)."""
    with pytest.raises(UnsupportedError, match="unspecified"):
        ptxmm.check(prog, engine="brute", flags=False)
    return outcomes(prog)


def test_lanes_that_name_each_other_active_agree_on_the_set():
    """activemask in a small warp: each lane's set holds itself, and a lane it names reports the
    same set (they executed it convergently) — never lane 0 seeing {0, 1} while lane 1 sees {1}."""
    got = z3_outcomes(kernel("\tactivemask.b32 %r3;", 2, [0, 0]))
    assert got == {((1, 2), (0, 0)), ((3, 3), (0, 0))}
    three = {o[0] for o in z3_outcomes(kernel("\tactivemask.b32 %r3;", 3, [0, 0, 0]))}
    partitions = {(1, 2, 4), (3, 3, 4), (5, 2, 5), (1, 6, 6), (7, 7, 7)}
    assert three == partitions


def test_a_lane_that_does_not_execute_activemask_is_in_no_ones_set():
    """Lane 1 branches around activemask (in[1] == 0): lane 0 and 2 may name each other, never 1."""
    code = "\t@!%p1 bra $L_skip;\n\tactivemask.b32 %r3;\n$L_skip:"
    got = {o[0] for o in z3_outcomes(kernel(code, 3, [1, 0, 1]))}
    assert got == {(1, 0, 4), (5, 0, 5)}


# cooperative groups' coalesced_threads().shfl(v, 0) as nvcc compiles it: the active set as the
# membermask, the lowest lane of it as the source (brev + bfind.shiftamt), the rank by popc
COALESCED = """\t@!%p1 bra $L_skip;
\tactivemask.b32 %r5;
\tbrev.b32 %r6, %r5;
\tbfind.shiftamt.u32 %r7, %r6;
\tmov.u32 %r8, 31;
\tshfl.sync.idx.b32 %r3|%p2, %r2, %r7, %r8, %r5;
\tmov.u32 %r9, %lanemask_lt;
\tand.b32 %r10, %r9, %r5;
\tpopc.b32 %r4, %r10;
$L_skip:"""


def test_activemask_as_the_membermask_of_a_shuffle_broadcasts_the_groups_leader():
    """The coalesced group's shuffle from its rank 0: every active lane gets the value of the
    lowest lane of its set, and ranks 0, 1, ... within each set; the inactive lane keeps 0."""
    def holds(**cond) -> bool | None:
        return ptxmm.check(kernel(COALESCED, 3, [5, 0, 7], **cond), flags=False).holds

    # lanes 0 and 2 together ({0, 2}: leader 0, ranks 0 and 1), or each alone (its own value)
    assert holds(forall="out[0] == 5 && out2[0] == 0 && out[1] == 0 && out2[1] == 0 && "
                        "((out[2] == 5 && out2[2] == 1) || (out[2] == 7 && out2[2] == 0))") is True
    assert holds(exists="out[2] == 5 && out2[2] == 1") is True
    assert holds(exists="out[2] == 7 && out2[2] == 0") is True


def test_in_a_wider_warp_activemask_bits_stay_unspecified_and_are_no_membermask():
    """Past FORK_LANES lanes the other lanes' bits are free (no fork per set), and a shuffle
    whose membermask is that value is refused with its line."""
    from ptxmm.semantics.warp_collectives import FORK_LANES

    n = FORK_LANES + 1
    code = "\tactivemask.b32 %r4;\n\tmov.u32 %r5, %lanemask_eq;\n\tand.b32 %r3, %r4, %r5;"
    res = ptxmm.check(kernel(code, n, [0] * n, forall=" && ".join(f"out[{i}] == {1 << i}" for i in range(n))),
                      flags=False)
    assert res.holds is True
    with pytest.raises(UnsupportedError, match=r"`activemask\.b32 %r5` \(line \d+\) as the membermask of "
                       rf"`shfl\.sync\.idx\.b32 [^`]*` in a warp of {n} lanes") as e:
        ptxmm.check(kernel(COALESCED, n, [1] * n))
    # located at the shuffle, naming the activemask four lines above it (COALESCED)
    assert e.value.pos is not None and f"(line {e.value.pos.line - 4})" in e.value.message
    assert f"at most {FORK_LANES} lanes" in e.value.hint
    for lanes in (8, 32):  # a whole warp too: refused the same way, never a path per set of lanes
        with pytest.raises(UnsupportedError, match=f"in a warp of {lanes} lanes"):
            ptxmm.check(kernel(COALESCED, lanes, [1] * lanes))


def test_a_membermask_from_loaded_data_is_refused_with_its_line():
    """A membermask no lane can compute (loaded data, here in[t]) is no activemask: the general
    refusal, with the shuffle's line."""
    with pytest.raises(UnsupportedError, match="membermask that is no constant") as e:
        ptxmm.check(kernel("\tshfl.sync.idx.b32 %r3|%p2, %r2, 0, 31, %r2;", 2, [3, 3]))
    assert e.value.pos is not None and "activemask" not in e.value.message


MP = """\tsetp.eq.u32 %p3, %r1, 0;
\t@!%p3 bra $L_1;
\tmov.u32 %r7, 42;
\tst.global.u32 [%rd4+8], %r7;
$L_1:
SYNC
\t@%p3 bra $L_2;
\tld.global.u32 %r3, [%rd4+8];
$L_2:"""


@pytest.mark.parametrize("sync, ordered", [("bar.warp.sync 3;", True),
                                           ("shfl.sync.idx.b32 %r8|%p4, %r2, 0, 31, 3;", False),
                                           ("vote.sync.all.pred %p4, %p1, 3;", False)])
def test_only_bar_warp_sync_orders_memory(sync, ordered):
    """Lane 0 stores 42 to out[2], the lanes meet at a collective, lane 1 loads out[2] into
    out[1]. bar.warp.sync "guarantees memory ordering among threads participating in barrier"
    (PTX ISA, bar.warp.sync): lane 1 sees 42. The ISA states no ordering for shfl.sync or
    vote.sync: the load races with the store and may read 0."""
    prog = kernel(MP.replace("SYNC", "\t" + sync), 2, [1, 1],
                  "k<<<1, 2>>>(unsigned in[2] = {1, 1}, unsigned out[3], unsigned out2[2])")
    seen = {o[0][1] for o in both(prog)}
    assert seen == ({42} if ordered else {0, 42})
    races = [f for f in ptxmm.check(prog).findings if str(f.kind) == "race"]
    assert bool(races) is not ordered


# ----- waiting: hangs, deadlocks, undefined masks ------------------------------------------------------


def test_a_lane_of_the_mask_that_waits_elsewhere_is_a_hang():
    """Lane 0 at vote.sync with mask 0x3, lane 1 at bar.warp.sync 0x3: each waits for the other
    (different qualifiers do not meet). Liveness: a hang naming both; safety: no execution."""
    code = ("\tsetp.eq.u32 %p3, %r1, 0;\n\t@%p3 bra $L_a;\n\tbar.warp.sync 3;\n\tbra.uni $L_end;\n"
            "$L_a:\n\tvote.sync.any.pred %p2, %p1, 3;\n$L_end:")
    prog = kernel(code, 2, [1, 1])
    res = ptxmm.check(prog)
    hangs = [f for f in res.findings if str(f.kind) == "hang"]
    assert hangs and "vote.sync.any.pred" in hangs[0].detail and "bar.warp.sync" in hangs[0].detail
    assert not outcomes(prog) and not outcomes(prog, "brute")


def test_a_thread_outside_its_own_membermask_is_a_located_error():
    with pytest.raises(SemanticError, match="does not name it") as e:
        ptxmm.check(kernel("\tvote.sync.any.pred %p2, %p1, 2;", 2, [1, 1]))
    assert e.value.pos is not None and e.value.pos.line > 0


def test_a_membermask_from_loaded_data_is_not_supported():
    with pytest.raises(UnsupportedError, match="membermask"):
        ptxmm.check(kernel("\tor.b32 %r9, %r2, 3;\n\tvote.sync.any.pred %p2, %p1, %r9;", 2, [1, 1]))


# ----- decoding --------------------------------------------------------------------------------------

ACCEPTED = ["vote.sync.any.pred %p2, %p1, 15;", "vote.any.sync.pred %p2, %p1, 15;",
            "redux.sync.s32.min %r3, %r2, 15;", "redux.add.sync.s32 %r3, %r2, 15;",
            "match.sync.any.b32 %r3, %r2, 15;", "shfl.idx.sync.b32 %r3|%p2, %r2, 1, 31, 15;"]
REFUSED = ["shfl.sync.idx.u32 %r3, %r2, 1, 31, 15;", "redux.sync.and.u32 %r3, %r2, 15;",
           "redux.sync.min.b32 %r3, %r2, 15;", "match.any.sync.u32 %r3, %r2, 15;",
           "vote.sync.ballot.pred %p2, %p1, 15;", "shfl.sync.b32 %r3, %r2, 1, 31, 15;",
           "vote.any.pred %p2, %p1;"]


@pytest.mark.parametrize("text", ACCEPTED)
def test_qualifiers_in_any_order_as_ptxas_takes_them(text):
    assert outcomes(kernel("\t" + text, 4, [1, 2, 3, 4]))


@pytest.mark.parametrize("text", REFUSED)
def test_forms_ptxas_refuses_are_located_errors(text):
    with pytest.raises((ParseError, UnsupportedError)) as e:
        kernel("\t" + text, 4, [1, 2, 3, 4])
    assert e.value.pos is not None


@settings(max_examples=20, deadline=None)
@given(st.permutations(["sync", "any", "pred"]))
def test_every_qualifier_order_decodes_alike(order):
    ins = _warp("vote." + ".".join(order), [Reg("%p2"), Reg("%p1"), Imm(15)], None,
                dict(pos=None, text="t", guard=None))
    assert (ins.form, ins.mode, ins.type, ins.mask) == ("vote.any.pred", "any", "pred", Imm(15))


def test_litmus_tests_keep_refusing_warp_collectives():
    text = """.global .u32 x;
.thread P0
shfl.sync.idx.b32 %r1, %r2, 0, 31, 1;
"""
    with pytest.raises((UnsupportedError, ParseError)):
        ptxmm.parse(text, "t.ptx")


# ----- the two engines agree on random warp kernels ---------------------------------------------------

STEPS = ["\tvote.sync.ballot.b32 %r5, %p1, MASK;\n\tadd.u32 %r3, %r3, %r5;",
         "\tshfl.sync.bfly.b32 %r5|%p2, %r3, 1, CLAMP, MASK;\n\tadd.u32 %r3, %r3, %r5;",
         "\tshfl.sync.down.b32 %r5|%p2, %r2, 1, CLAMP, MASK;\n\txor.b32 %r3, %r3, %r5;",
         "\tshfl.sync.up.b32 %r5|%p2, %r3, 1, 0, MASK;\n\tselp.u32 %r5, %r5, 7, %p2;\n"
         "\tadd.u32 %r4, %r4, %r5;",
         "\tredux.sync.max.u32 %r5, %r3, MASK;\n\tadd.u32 %r4, %r4, %r5;",
         "\tmatch.any.sync.b32 %r5, %r3, MASK;\n\tor.b32 %r4, %r4, %r5;",
         "\tsetp.gt.u32 %p5, %r3, 2;\n\tvote.sync.any.pred %p6, %p5, MASK;\n\t@%p6 add.u32 %r4, %r4, 1;",
         "\tld.global.u32 %r9, [%rd4+4];\n\tvote.sync.all.pred %p6, %p1, MASK;\n"
         "\tselp.u32 %r5, %r9, 3, %p6;\n\tadd.u32 %r4, %r4, %r5;"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=3),
       n=st.integers(2, 3), ins=st.lists(st.integers(0, 3), min_size=3, max_size=3))
def test_z3_and_brute_agree_on_random_warp_kernels(steps, n, ins):
    """Chains of collectives whose inputs come from earlier ones (and one reading a racing
    buffer element), on warps of 2 or 3 lanes: both engines give the same outcomes."""
    code = "\n".join(STEPS[s].replace("MASK", str((1 << n) - 1)).replace("CLAMP", str(n - 1))
                     for s in steps)
    prog = kernel("\tmov.u32 %r3, %r2;\n" + code, n, ins[:n])
    assert both(prog)


def test_reference_implementation_covers_every_shfl_mode():
    """The reference above is the ISA's pseudocode: up never reads a lane above, down never one
    below, out-of-range lanes keep their own value."""
    for lane, b in itertools.product(range(32), range(32)):
        j, p = shfl_ref("up", lane, b, 0)
        assert j <= lane and (p or j == lane)
        j, p = shfl_ref("down", lane, b, 31)
        assert j >= lane and j <= 31


# ----- bar.red (__syncthreads_and / _or / _count) -----------------------------------------------------


@pytest.mark.parametrize("ins", [[1, 0, 4], [0, 0, 0], [2, 3, 4]])
@pytest.mark.parametrize("form, ref", [
    ("bar.red.and.pred %p2, 0, %p1;\n\tselp.u32 %r3, 1, 0, %p2;", lambda ps: int(all(ps))),
    ("barrier.cta.red.aligned.or.pred %p2, 0, %p1;\n\tselp.u32 %r3, 1, 0, %p2;", lambda ps: int(any(ps))),
    ("bar.red.pred.or %p2, 0, !%p1;\n\tselp.u32 %r3, 1, 0, %p2;", lambda ps: int(not all(ps))),
    ("bar.red.popc.u32 %r3, 0, %p1;", sum)])
def test_bar_red_reduces_the_predicate_of_every_thread_of_the_cta(form, ref, ins):
    out, _ = one(kernel("\t" + form, 3, ins))
    assert out == [ref([v != 0 for v in ins])] * 3


def test_bar_red_orders_memory_as_bar_sync():
    """PTX ISA, bar/barrier: barrier.red, like barrier.sync, makes the prior memory accesses of
    each thread performed relative to all threads participating in the barrier."""
    prog = kernel(MP.replace("SYNC", "\tbar.red.popc.u32 %r9, 0, %p1;"), 2, [1, 1],
                  "k<<<1, 2>>>(unsigned in[2] = {1, 1}, unsigned out[3], unsigned out2[2])")
    assert {o[0][1] for o in both(prog)} == {42}
    assert not [f for f in ptxmm.check(prog).findings if str(f.kind) == "race"]


def test_bar_red_waits_for_every_thread_of_the_cta():
    """Thread 1 goes to bar.sync 0 instead (not intermixable with bar.red): both wait forever."""
    code = ("\tsetp.eq.u32 %p3, %r1, 0;\n\t@%p3 bra $L_a;\n\tbar.sync 0;\n\tbra.uni $L_end;\n"
            "$L_a:\n\tbar.red.or.pred %p2, 0, %p1;\n$L_end:")
    res = ptxmm.check(kernel(code, 2, [1, 1]))
    assert [f for f in res.findings if str(f.kind) == "hang"]


@pytest.mark.parametrize("text, err", [("bar.red.popc.pred %p2, 0, %p1;", ParseError),
                                       ("bar.red.and.u32 %r3, 0, %p1;", ParseError),
                                       ("bar.red.popc.u32 %r3, 0, 64, %p1;", UnsupportedError)])
def test_bar_red_forms_refused(text, err):
    with pytest.raises(err) as e:
        kernel("\t" + text, 2, [1, 1])
    assert e.value.pos is not None


@pytest.mark.parametrize("text", ["shfl.sync.idx.b32 %rd3, %r2, 1, 31, 15;",
                                  "vote.sync.any.pred %r3, %p1, 15;",
                                  "match.any.sync.b64 %r3, %r2, 15;",
                                  "redux.sync.add.u32 %rd3, %r2, 15;",
                                  "bar.red.popc.u32 %r3, 0, %r2;"])
def test_registers_of_the_wrong_kind_are_errors_as_ptxas_says(text):
    """ptxas: "Arguments mismatch" for each of these (asked of ptxas -arch=sm_90)."""
    with pytest.raises(SemanticError) as e:
        ptxmm.check(kernel("\t" + text, 2, [1, 1]))
    assert e.value.pos is not None


# ----- liveness: the Z3 hang query equals the brute-force oracle ---------------------------------------

LIVENESS = {
    "deadlock": ("\tsetp.eq.u32 %p3, %r1, 0;\n\t@%p3 bra $L_a;\n\tbar.warp.sync 3;\n\tbra.uni $L_end;\n"
                 "$L_a:\n\tvote.sync.any.pred %p2, %p1, 3;\n$L_end:", {(0, 1)}),
    "exited lane": ("\tsetp.eq.u32 %p3, %r1, 1;\n\t@%p3 bra $L_end;\n\tvote.sync.all.pred %p2, %p1, 3;\n"
                    "$L_end:", set()),
    "partial masks": ("\tand.b32 %r5, %r1, 1;\n\tsetp.eq.u32 %p3, %r5, 0;\n\tselp.u32 %r6, 5, 10, %p3;\n"
                      "\tvote.sync.ballot.b32 %r3, %p1, %r6;\n\tbar.warp.sync %r6;", set()),
    "bar.red apart": ("\tsetp.eq.u32 %p3, %r1, 0;\n\t@%p3 bra $L_a;\n\tbar.sync 0;\n\tbra.uni $L_end;\n"
                      "$L_a:\n\tbar.red.or.pred %p2, 0, %p1;\n$L_end:", {(0, 1)}),
}


@pytest.mark.parametrize("name", list(LIVENESS))
def test_hangs_of_warp_collectives_on_both_liveness_engines(name):
    code, hung = LIVENESS[name]
    n = 4 if name == "partial masks" else 2
    prog = kernel(code, n, [1, 1, 0, 1][:n])
    z = {tuple(sorted(h.threads)) for h in find_hangs(prog, "ptx")}
    b = set(brute_hangs(prog, "ptx"))
    assert {t for h in z for t in h} == {t for h in b for t in h} == {t for h in hung for t in h}


# ----- elect.sync ------------------------------------------------------------------------------------

ONE_LEADER = " || ".join(
    "(" + " && ".join([f"out[{m}] == {lead}" for m in range(3)] + [f"out2[{m}] == {int(m == lead)}"
                                                                    for m in range(3)]) + ")"
    for lead in range(3))


def test_elect_elects_one_lane_all_lanes_agree_on():
    """d is the leader's lane id in every lane, p True in the leader alone; which lane is the
    execution's choice (the ISA: "deterministic", not which), so each one can be."""
    code = "\telect.sync %r3|%p2, 7;\n\tselp.u32 %r4, 1, 0, %p2;"
    assert ptxmm.check(kernel(code, 3, [0, 0, 0], forall=ONE_LEADER), flags=False).holds is True
    for lead in range(3):
        res = ptxmm.check(kernel(code, 3, [0, 0, 0], exists=f"out2[{lead}] == 1"), flags=False)
        assert res.holds is True
    with pytest.raises(UnsupportedError, match="unspecified"):
        ptxmm.check(kernel(code, 3, [0, 0, 0]), engine="brute")


def test_elect_is_deterministic_and_never_elects_an_exited_lane():
    """Two elections with one membermask elect the same lane; a lane that exited before is never
    elected (p is set in a lane that takes part)."""
    code = "\telect.sync %r3|%p2, 3;\n\telect.sync %r4|%p3, 3;"
    res = ptxmm.check(kernel(code, 2, [0, 0], forall="out[0] == out2[0] && out[1] == out2[1]"), flags=False)
    assert res.holds is True
    code = ("\tsetp.eq.u32 %p3, %r1, 0;\n\t@%p3 bra $L_end;\n\telect.sync _|%p2, 7;\n"
            "\tselp.u32 %r3, 1, 0, %p2;\n$L_end:")
    res = ptxmm.check(kernel(code, 3, [0, 0, 0], forall="out[0] == 0 && out[1] != out[2]"),
                      flags=False)
    assert res.holds is True


def test_a_lane_that_arrives_on_every_path_is_read_exactly_on_both_engines():
    """Lane 1 reaches the shfl after a branch on loaded data (two copies of the shfl, one per
    path): it takes part on every path, so lane 0 reads its value, defined — no unspecified value,
    and the brute-force engine agrees."""
    code = ("\tsetp.gt.u32 %p3, %r2, 5;\n\t@%p3 bra $L_a;\n\tadd.u32 %r2, %r2, 100;\n$L_a:\n"
            "\tshfl.sync.idx.b32 %r3|%p2, %r2, 1, 31, 3;")
    out, _ = one(kernel(code, 2, [1, 9]))
    assert out == [9, 9]
    out, _ = one(kernel(code, 2, [9, 2]))
    assert out == [102, 102]


def test_an_address_computed_from_a_shuffled_value_names_its_element():
    """i = shfl(in[t], 0) = in[0] = 1 in both lanes: both store t + 5 to out2[1], then each its
    9 to out2[t] (the kernel's epilogue): out2[0] is 9, out2[1] lane 1's 9 or lane 0's 5 (lane
    1's 6 comes before its own 9), never out2[2]; a race; both engines agree."""
    code = ("\tshfl.sync.idx.b32 %r5|%p2, %r2, 0, 31, 3;\n\tmul.wide.u32 %rd7, %r5, 4;\n"
            "\tadd.s64 %rd7, %rd10, %rd7;\n\tadd.u32 %r6, %r1, 5;\n\tst.global.u32 [%rd7], %r6;")
    prog = kernel(code + "\n\tmov.u32 %r4, 9;", 2, [1, 0],
                  "k<<<1, 2>>>(unsigned in[2] = {1, 0}, unsigned out[2], unsigned out2[4])")
    got = both(prog)
    assert {o[1] for o in got} == {(9, 5, 0, 0), (9, 9, 0, 0)}
    res = ptxmm.check(prog)
    assert [f for f in res.findings if str(f.kind) == "race"]
