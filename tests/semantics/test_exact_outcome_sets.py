"""Small programs with exact expected outcome sets, each pinning down one piece of the PTX model or
of the engine that the rest of the suite did not constrain (found by tools/mutants.py: every
test here kills at least one mutant that survived the other tests; the mutant is named in the
docstring). Each verdict is argued from the PTX memory model (ISA 9.x "Memory Consistency Model",
section numbers as in models/ptx.cat) or from PTX instruction semantics.

Only the public API is used: ptxmm.parse / ptxmm.check and, on results, holds, outcome_set,
outcomes[i].outcome and outcomes[i].flags."""

from __future__ import annotations

import pytest

import ptxmm

PTX_MODELS = ["ptx", "ptx-v7.5", "ptx-v6.0"]


def outcomes(src: str, model: str = "ptx", *keys: str, engine: str = "z3", unroll: int = 2):
    """The set of outcomes, each projected on ``keys`` (a tuple of values in that order)."""
    res = ptxmm.check(ptxmm.parse(src), model, engine=engine, unroll=unroll, flags=False)
    return {tuple(o.as_dict()[k] for k in keys) for o in res.outcome_set}


def both(src: str, model: str = "ptx", *keys: str, unroll: int = 2):
    """Like outcomes(), after checking that the Z3 and the brute-force engines agree."""
    z = outcomes(src, model, *keys, engine="z3", unroll=unroll)
    b = outcomes(src, model, *keys, engine="brute", unroll=unroll)
    assert z == b
    return z


def holds(src: str, model: str = "ptx") -> bool:
    return ptxmm.check(ptxmm.parse(src), model, flags=False).holds


# ============================================================================== model: patterns

# fence.sc as a release and an acquire fence (mutants fence-sc-no-release, fence-sc-no-acquire,
# v75-fence-sc-release): tests/models/test_departures.py::test_fence_sc_is_a_release_and_an_acquire_fence


def test_acquire_pattern_with_po_loc():
    """Mutant acqpat-no-po-loc.

    8.8 acquire pattern "a strong read followed in program order by an acquire operation on the
    same location": T1's relaxed read of y sees T0's release (1); its later ld.acquire of y reads T2's
    relaxed store (2), which does not synchronize by itself. The pattern starting at the relaxed
    read still synchronizes T0 → T1, so T1 must see x = 1: (1, 2, 0) is forbidden. Without the
    pattern it would be allowed; (1, 2, 1) stays allowed either way."""
    src = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; st.release.gpu.global.u32 [y], 1; }
.thread T1 .cta 1 {
    ld.relaxed.gpu.global.u32 %r0, [y];
    ld.acquire.gpu.global.u32 %r1, [y];
    ld.global.u32 %r2, [x];
}
.thread T2 .cta 2 { st.relaxed.gpu.global.u32 [y], 2; }
"""
    got = outcomes(src, "ptx", "T1:%r0", "T1:%r1", "T1:%r2")
    assert (1, 2, 1) in got
    assert (1, 2, 0) not in got


# ============================================================================= model: causality

CORW_WEAK = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.relaxed.gpu.global.u32 [x], 1; }
.thread T1 .cta 1 { ld.relaxed.gpu.global.u32 %r0, [x]; st.global.u32 [x], 2; }
"""


@pytest.mark.parametrize("model", PTX_MODELS)
def test_corw_through_observation(model):
    """Mutants v60-cause-without-obs (and any cause without its observation part).

    T1 observes T0's store morally strongly (relaxed.gpu pair, 8.9.2) and then writes x weakly.
    Causality order is observation followed by base causality (8.9.5; 6.0: obs ; po-loc), so T0's
    write is causality-before T1's and Coherence (8.10.1) puts it first in co: after reading 1 the
    final value is 2. SC-per-Location does not help (the weak write is not morally strong with
    T0's), so only causality forbids (r0 = 1, x = 1)."""
    assert outcomes(CORW_WEAK, model, "T1:%r0", "x") == {(0, 1), (0, 2), (1, 2)}


def test_barrier_cycle_deadlocks():
    """Mutant ptx-drop-Barrier-progress.

    Both threads of one CTA reach barriers 0 and 1 in opposite orders: each waits at its first
    barrier for an arrival the other thread only makes after passing its own first barrier. No
    execution completes (the model's Barrier-progress axiom, acyclic(po | sync_barrier)), so the
    model allows no outcome at all."""
    src = """
.global .u32 x = 0;
.thread T0 .cta 0 { bar.sync 0; bar.sync 1; st.global.u32 [x], 1; }
.thread T1 .cta 0 { bar.sync 1; bar.sync 0; ld.global.u32 %r0, [x]; }
exists (T1:%r0 == 0)
"""
    res = ptxmm.check(ptxmm.parse(src), "ptx", flags=False)
    assert res.outcome_set == set() and res.holds is False
    # the same threads meeting in the same order complete: the load then sees 0 or 1
    ok = src.replace("bar.sync 1; bar.sync 0;", "bar.sync 0; bar.sync 1;")
    assert outcomes(ok, "ptx", "T1:%r0") == {(0,), (1,)}


# ================================================================================= model: misc


def test_sc_model_atomicity_and_total_coherence():
    """Mutants sc-drop-Atomicity, sc-drop-co-total (directly, not only through random programs).

    Under sequential consistency two atomic increments of x never both read 0 (x ends at 2), and
    a thread that reads x == 1 and then x == 2 saw the store of 1 overwritten by the store of 2:
    the final value is 2."""
    inc = """
.global .u32 x = 0;
.thread T0 .cta 0 { atom.relaxed.gpu.global.add.u32 %r0, [x], 1; }
.thread T1 .cta 1 { atom.relaxed.gpu.global.add.u32 %r1, [x], 1; }
"""
    assert both(inc, "sc", "T0:%r0", "T1:%r1", "x") == {(0, 1, 2), (1, 0, 2)}
    corr = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; }
.thread T1 .cta 1 { st.global.u32 [x], 2; }
.thread T2 .cta 2 { ld.global.u32 %r0, [x]; ld.global.u32 %r1, [x]; }
"""
    got = both(corr, "sc", "T2:%r0", "T2:%r1", "x")
    assert (1, 2, 2) in got and (1, 2, 1) not in got and (2, 1, 1) in got and (2, 1, 2) not in got


def test_no_thin_air_through_control_dependencies():
    """Mutants no-thin-air-without-ctrl, ctrl-dep-dropped.

    Load buffering where each store is control dependent on the other thread's load (a forward
    branch skips it unless the load returned 1). No-Thin-Air (8.10.4: acyclic(rf | dep), dep
    including ctrl) forbids the cycle, so neither load can return 1; the plain-LB variant without
    the branches allows (1, 1) (LB is not forbidden by PTX), so the branch is what matters."""
    src = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 {
    ld.global.u32 %r0, [x];
    setp.ne.u32 %p0, %r0, 1;
    @%p0 bra END;
    st.global.u32 [y], 1;
END:
}
.thread T1 .cta 1 {
    ld.global.u32 %r1, [y];
    setp.ne.u32 %p1, %r1, 1;
    @%p1 bra END;
    st.global.u32 [x], 1;
END:
}
"""
    assert both(src, "ptx", "T0:%r0", "T1:%r1") == {(0, 0)}
    plain = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { ld.global.u32 %r0, [x]; st.global.u32 [y], 1; }
.thread T1 .cta 1 { ld.global.u32 %r1, [y]; st.global.u32 [x], 1; }
"""
    assert (1, 1) in outcomes(plain, "ptx", "T0:%r0", "T1:%r1")


def test_no_thin_air_through_address_dependencies():
    """Mutant addr-dep-dropped.

    Load buffering where each store's address depends (through a zero computed from the loaded
    value, `xor r, r0, r0`) on the thread's load. Syntactic address dependencies count in
    No-Thin-Air (8.10.4), so (1, 1) is forbidden."""
    src = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 {
    ld.global.u32 %r0, [x];
    xor.b64 %rd0, %r0, %r0;
    mov.u64 %rd1, y;
    add.u64 %rd1, %rd1, %rd0;
    st.global.u32 [%rd1], 1;
}
.thread T1 .cta 1 {
    ld.global.u32 %r1, [y];
    xor.b64 %rd2, %r1, %r1;
    mov.u64 %rd3, x;
    add.u64 %rd3, %rd3, %rd2;
    st.global.u32 [%rd3], 1;
}
"""
    assert both(src, "ptx", "T0:%r0", "T1:%r1") == {(0, 0), (0, 1), (1, 0)}


def test_no_data_race_between_morally_strong_accesses():
    """Mutant race-flag-ignores-ms.

    8.7.1: a data race needs two conflicting accesses that are not morally strong and not ordered
    by causality. MP with relaxed.gpu accesses only: every conflicting pair is morally strong, so
    no outcome is flagged; the weak version of the same shape is flagged."""
    strong = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.relaxed.gpu.global.u32 [x], 1; st.relaxed.gpu.global.u32 [y], 1; }
.thread T1 .cta 1 { ld.relaxed.gpu.global.u32 %r0, [y]; ld.relaxed.gpu.global.u32 %r1, [x]; }
"""
    res = ptxmm.check(ptxmm.parse(strong), "ptx")
    assert len(res.outcomes) == 4 and all(o.flags == [] for o in res.outcomes)
    weak = strong.replace(".relaxed.gpu", "")
    res = ptxmm.check(ptxmm.parse(weak), "ptx")
    assert len(res.outcomes) == 4 and all("data-race" in o.flags for o in res.outcomes)


def test_coherence_through_aliases_uses_the_physical_location():
    """Mutant coherence-vloc.

    a2 is a second virtual address of a1's physical location. With fence.proxy.alias between the
    two stores, the first is causality-before the second (8.9.5, third clause of proxy-preserved
    base causality) and Coherence (8.10.1, over overlapping = same physical location) orders them:
    the final value is 2. Without the fence the stores are not ordered and either can be last."""
    src = """
.global .u32 a1 = 0;
.global .u32 a2 aliases a1;
.thread T0 .cta 0 { st.global.u32 [a1], 1; fence.proxy.alias; st.global.u32 [a2], 2; }
"""
    assert both(src, "ptx", "a1") == {(2,)}
    assert both(src.replace("fence.proxy.alias; ", ""), "ptx", "a1") == {(1,), (2,)}


def test_atomicity_needs_the_same_virtual_address():
    """Mutant ms-ignores-location.

    Morally strong requires complete overlap of the same virtual address for memory operations
    (8.7; ms & vloc, [CHOICE §2.2]). An atom on x and a relaxed store through an alias a of x are
    therefore not morally strong: Coherence-ms does not order them and RMW atomicity (8.10.3) does
    not apply, so the atom may read 0 and still end with x == 1 (the store unordered with the
    atom's write). On the same virtual address the pair is morally strong and (0, 1) is forbidden:
    the store would have to come co-between the atom's read and write."""
    src = """
.global .u32 x = 0;
.global .u32 a aliases x;
.thread T0 .cta 0 { atom.relaxed.gpu.global.add.u32 %r0, [x], 1; }
.thread T1 .cta 1 { st.relaxed.gpu.global.u32 [a], 5; }
"""
    assert (0, 1) in outcomes(src, "ptx", "T0:%r0", "x")
    same = src.replace("[a], 5", "[x], 5")
    assert outcomes(same, "ptx", "T0:%r0", "x") == {(0, 5), (5, 6)}


# ============================================================================ engine: control


LOOP = """
.global .u32 x = 0;
.global .u32 f = 0;
.thread T0 .cta 0 {
    mov.u32 %r1, 0;
L:
    add.u32 %r1, %r1, 1;
    st.relaxed.gpu.global.u32 [x], %r1;
    ld.relaxed.gpu.global.u32 %r0, [f];
    setp.eq.u32 %p0, %r0, 0;
    @%p0 bra L;
}
.thread T1 .cta 1 { st.relaxed.gpu.global.u32 [f], 1; }
exists (T0:%r1 == 1)
"""


@pytest.mark.parametrize("unroll", [0, 1, 2])
def test_unroll_bound_takes_a_backward_branch_at_most_k_times(unroll):
    """Mutants unroll-off-by-one, unroll-plus-one.

    The loop stores (a side effect, so it is unrolled, not reduced to an await) and leaves when
    it reads f == 1. With --unroll K the backward branch is taken at most K times: the body runs
    1..K+1 times and r1 (the iteration count, also the last value stored to x) takes exactly the
    values 1..K+1; every path that stays in the loop longer is cut."""
    got = outcomes(LOOP, "ptx", "T0:%r1", "x", "T0:%r0", unroll=unroll)
    assert got == {(k, k, 1) for k in range(1, unroll + 2)}


PRED = """
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; }
.thread T1 .cta 1 {
    ld.global.u32 %r0, [x];
    setp.eq.u32 %p0, %r0, 1;
    @%p0 st.global.u32 [y], 1;
    @!%p0 st.global.u32 [y], 2;
    mov.u32 %r2, 7;
    @%p0 mov.u32 %r2, 8;
}
exists (T1:%r2 == 8)
"""


def test_predicated_instructions():
    """Mutants predicate-guard-ignored, predicate-negation-ignored.

    `@p` executes an instruction only when p is true, `@!p` only when it is false (PTX ISA,
    predicated execution): exactly one of the two stores to y runs, chosen by the loaded value,
    and the predicated mov overrides r2 only when x was read as 1."""
    assert both(PRED, "ptx", "T1:%r0", "y", "T1:%r2") == {(0, 2, 7), (1, 1, 8)}


def test_failed_cas_does_not_write():
    """Mutant failed-cas-writes.

    atom.cas writes only when the value it reads equals the compare operand (PTX ISA atom.cas).
    T1's cas(x: 1 → 2) races with T0's two weak stores (1 then 3, ordered by po). Reading 0 or 3
    it fails and writes nothing: x ends at 3. Reading 1 it writes 2, which may be co-before or
    co-after the store of 3 (weak stores are not morally strong with the atom, so neither
    Coherence-ms nor atomicity orders them). A failed cas that wrote back the 0 it read could end
    last and leave x == 0."""
    src = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; st.global.u32 [x], 3; }
.thread T1 .cta 1 { atom.relaxed.gpu.global.cas.b32 %r0, [x], 1, 2; }
"""
    got = both(src, "ptx", "T1:%r0", "x")
    assert got == {(0, 3), (3, 3), (1, 2), (1, 3)}


# ============================================================================== engine: values


def test_signed_and_unsigned_compares():
    """Mutants signed-compare-as-unsigned, setp-type-ignored.

    setp.{lt,gt}.s32 compare as signed integers, setp.lt.u32 / setp.lo.u32 as unsigned (PTX ISA
    setp). r0 = 0 - 1 is -1 as a signed value and the largest value as an unsigned one, at any
    width: -1 < 0 and not -1 > 5 signed; not r0 < 5 unsigned."""
    src = """
.global .u32 x = 0;
.thread T0 .cta 0 {
    ld.global.u32 %r9, [x];
    sub.s32 %r0, %r9, 1;
    setp.lt.s32 %p0, %r0, 0;
    selp.u32 %r1, 1, 0, %p0;
    setp.gt.s32 %p1, %r0, 5;
    selp.u32 %r2, 1, 0, %p1;
    setp.lt.u32 %p2, %r0, 5;
    selp.u32 %r3, 1, 0, %p2;
    setp.lo.u32 %p3, %r0, 5;
    selp.u32 %r4, 1, 0, %p3;
    @%p0 st.global.u32 [x], 1;
}
exists (T0:%r1 == 1 && T0:%r2 == 0 && T0:%r3 == 0 && T0:%r4 == 0)
"""
    got = both(src, "ptx", "T0:%r1", "T0:%r2", "T0:%r3", "T0:%r4", "x")
    assert got == {(1, 0, 0, 0, 1)}


def test_atom_min_on_unsigned_type():
    """Mutant atom-min-unsigned-as-signed.

    atom.min.u32 compares as unsigned (PTX ISA atom): min(5, 0 - 1) is 5 (0 - 1 is the largest
    unsigned value), so x stays 5 and the atom returns 5."""
    src = """
.global .u32 x = 5;
.thread T0 .cta 0 {
    mov.u32 %r1, 0;
    sub.u32 %r1, %r1, 1;
    atom.relaxed.gpu.global.min.u32 %r0, [x], %r1;
}
"""
    assert both(src, "ptx", "T0:%r0", "x") == {(5, 5)}


# ======================================================================== engine: orders, barriers


def test_coherence_order_is_transitive():
    """Mutant co-not-transitive.

    co is a strict partial order per location (8.9.6), hence transitive. T0's weak store of 1 is
    co-before its relaxed store of 2 (Coherence over po); T1 reads 2 and then stores 3, so 2 is
    co-before 3 (observation then po); therefore 1 is co-before 3. T2 observes 3 and then reads x
    weakly: reading 1 would read a write co-before one that is causality-before the read
    (Causality, 8.10.6), so (2, 3, 1) is forbidden; with co(1, 3) missing nothing else forbids it
    (the weak accesses keep SC-per-Location out of it)."""
    src = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; st.relaxed.gpu.global.u32 [x], 2; }
.thread T1 .cta 1 { ld.relaxed.gpu.global.u32 %r0, [x]; st.relaxed.gpu.global.u32 [x], 3; }
.thread T2 .cta 2 { ld.relaxed.gpu.global.u32 %r1, [x]; ld.global.u32 %r2, [x]; }
"""
    got = both(src, "ptx", "T1:%r0", "T2:%r1", "T2:%r2")
    assert (2, 3, 3) in got and (2, 3, 2) not in got
    assert (2, 3, 1) not in got


def test_barrier_phases_pair_up_in_order():
    """Mutant barrier-phase-ignored.

    The k-th bar.sync 0 of each thread meets the k-th of the other (barrier phases, §5.1). A store
    between the two barriers of T0 and a load between the two barriers of T1 are unordered (0 or
    1); a load after the second barrier must see a store made before the first."""
    mid = """
.global .u32 x = 0;
.thread T0 .cta 0 { bar.sync 0; st.global.u32 [x], 1; bar.sync 0; }
.thread T1 .cta 0 { bar.sync 0; ld.global.u32 %r0, [x]; bar.sync 0; }
"""
    assert both(mid, "ptx", "T1:%r0") == {(0,), (1,)}
    after = """
.global .u32 x = 0;
.thread T0 .cta 0 { st.global.u32 [x], 1; bar.sync 0; bar.sync 0; }
.thread T1 .cta 0 { bar.sync 0; bar.sync 0; ld.global.u32 %r0, [x]; }
"""
    assert both(after, "ptx", "T1:%r0") == {(1,)}
