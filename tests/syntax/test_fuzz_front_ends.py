"""Fuzzing both front ends with the grammar-driven strategies of tests/support/grammar_gen.py (issue 10).

- valid programs parse, and the Z3 and brute-force engines agree on them (outcome set, verdict,
  status); a sample covers every instruction and declaration form of ``FORMS``;
- mutated programs never raise anything but a located PtxmmError (file, line ≥ 1, col ≥ 1, a
  message): no IndexError, RecursionError or lark exception leaks from ``parse`` or ``check``.

500 examples per property by default; ``pytest -m slow tests/syntax/test_fuzz_front_ends.py -s`` runs
10,000 and prints the counts (programs, errors by class). The tracebacks the fuzzing found are kept at the
end as regression tests with their exact input."""

from __future__ import annotations

import contextlib
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support.grammar_gen import FORMS, forms_of, mutated, valid_litmus, valid_ptx

import ptxmm
from ptxmm.errors import PtxmmError

FAST = int(os.environ.get("PTXMM_FUZZ_EXAMPLES", "500"))
SLOW = 10_000
SUFFIX = {"ptx": "t.ptx", "litmus": "t.litmus"}
GEN = {"ptx": valid_ptx, "litmus": valid_litmus}
# mutants checked after parsing stay small: a mutant repeated into thousands of instructions
# parses (that is fuzzed), but checking it is a solver benchmark, not a robustness test
CHECK_MAX_INSTRS = 40
COVER_MAX = 3000
# brute force is exponential in the events: the default run keeps one fewer than the slow one
FAST_EVENTS = 5


def _settings(n: int, **kw):
    return settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                    suppress_health_check=list(HealthCheck), **kw)


def outcome_view(res) -> tuple:
    return ({str(o.outcome) for o in res.outcomes}, res.holds, res.status)


# ----- properties ------------------------------------------------------------------------------------


def engines_agree(text: str, fmt: str, tally: Counter | None = None) -> None:
    p = ptxmm.parse(text, SUFFIX[fmt], fmt)
    z3 = ptxmm.check(p, engine="z3")
    brute = ptxmm.check(p, engine="brute")
    assert outcome_view(z3) == outcome_view(brute), text
    if tally is not None:
        tally["programs"] += 1
        tally[f"status {z3.status}"] += 1


def located_or_fine(text: str, fmt: str, tally: Counter | None = None) -> None:
    """Parse (and, when small, check) a mutant: success or a located PtxmmError, nothing else."""
    if tally is not None:
        tally["programs"] += 1
    try:
        p = ptxmm.parse(text, SUFFIX[fmt], fmt)
    except PtxmmError as e:
        assert_located(e, text, fmt)
        if tally is not None:
            tally[f"parse: {type(e).__name__}"] += 1
        return
    if sum(len(t.instrs) for t in p.threads) > CHECK_MAX_INSTRS or len(p.threads) > 4:
        if tally is not None:
            tally["parsed, too large to check"] += 1
        return
    try:
        res = ptxmm.check(p, engine="z3", timeout=10)
    except PtxmmError as e:
        assert e.message, repr(e)
        if tally is not None:
            tally[f"check: {type(e).__name__}"] += 1
        return
    if tally is not None:
        tally[f"parsed, check {res.status}"] += 1


def assert_located(e: PtxmmError, text: str, fmt: str) -> None:
    assert e.message and e.message.strip(), repr(e)
    assert e.pos is not None, str(e)
    assert e.pos.file == SUFFIX[fmt], str(e)
    assert 1 <= e.pos.line <= text.count("\n") + 2, str(e)
    assert e.pos.col >= 1, str(e)


# ----- the default run (500 examples each) -------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["ptx", "litmus"])
def test_valid_programs_parse_and_engines_agree(fmt):
    @_settings(FAST)
    @given(GEN[fmt](max_events=FAST_EVENTS))
    def run(text):
        engines_agree(text, fmt)

    run()


@pytest.mark.parametrize("fmt", ["ptx", "litmus"])
def test_mutated_programs_raise_only_located_errors(fmt):
    @_settings(FAST)
    @given(mutated(GEN[fmt]()))
    def run(text):
        located_or_fine(text, fmt)

    run()


class _Covered(Exception):
    pass


@pytest.mark.parametrize("fmt", ["ptx", "litmus"])
def test_sample_covers_every_form(fmt):
    """A fixed (derandomised) sample of valid programs uses every form the generator claims:
    programs are drawn until all are seen, at most COVER_MAX of them."""
    seen: set[str] = set()
    drawn = [0]

    @settings(max_examples=COVER_MAX, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(GEN[fmt]())
    def run(text):
        drawn[0] += 1
        seen.update(forms_of(text, fmt))
        if seen >= set(FORMS[fmt]):
            raise _Covered

    with contextlib.suppress(_Covered):
        run()
    assert not [f for f in FORMS[fmt] if f not in seen], f"{drawn[0]} programs drawn"


def test_forms_of_reads_what_it_claims():
    text = (".global .u32 x = 0;\n.thread T0 {\n    sured.b.add.1d.u32.clamp [sx, {0}], 1;\n}\n"
            "exists (x == 1)\n")
    got = forms_of(text, "ptx")
    assert {"sured.add", "coordinate {0}", "cmp =="} <= got
    assert "cmp =" not in got  # the declaration's `=` is no comparison


# ----- the slow run (10,000 examples each; -m slow -s prints the counts) ---------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["ptx", "litmus"])
def test_valid_programs_slow(fmt):
    tally: Counter = Counter()

    @_settings(SLOW)
    @given(GEN[fmt]())
    def run(text):
        engines_agree(text, fmt, tally)

    run()
    print(f"\nvalid {fmt}: {dict(sorted(tally.items()))}")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["ptx", "litmus"])
def test_mutated_programs_slow(fmt):
    tally: Counter = Counter()

    @_settings(SLOW)
    @given(mutated(GEN[fmt]()))
    def run(text):
        located_or_fine(text, fmt, tally)

    run()
    print(f"\nmutated {fmt}: {dict(sorted(tally.items()))}")


@pytest.mark.slow
def test_mutated_any_text_slow():
    """Not derived from a program at all: arbitrary text into both front ends."""
    @_settings(SLOW // 5)
    @given(st.text(max_size=200), st.sampled_from(["ptx", "litmus"]))
    def run(text, fmt):
        located_or_fine(text, fmt)

    run()


# ----- what the fuzzing found: each input exactly as found (or cut to its cause) ---------------------

DEEP_PARENS = ("PTX MP\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists "
               + "(" * 3000 + "x[0] = 1" + ")" * 3000 + "\n")
HUGE_REG_RANGE = (".test st+x=y \"\"\n.expect allowed\n.global .u32 y = +0;\n"
                  ".shared::cluster .u32 data = 0;\n.global .u32 x = +4294967295;\n.thread T0 {\n"
                  "    .reg .b32 %b<1>;\n    .reg .pred %p<1>;\n    .reg .s64 %sd<1>;\n"
                  "    .reg .u32 %r0, %r1;\n    .reg .u64 %rd<18446744073709551615>;\n"
                  "    ld.volatile.shared::cta.u32 %r1, [data];\n}\nexists (x == 0)\n")


@pytest.mark.parametrize("text,fmt,cls,message,line,col", [
    # RecursionError in litmus.py cond_expr: the nesting limit was checked for .ptx only
    (DEEP_PARENS, "litmus", ptxmm.SemanticError, "the condition nests operators more than 100 deep", 5, 3008),
    (DEEP_PARENS.replace("exists " + "(" * 3000, "exists (" + "~" * 3000).replace(")" * 3000, ")"),
     "litmus", ptxmm.SemanticError, "the condition nests operators more than 100 deep", 5, 105),
    (DEEP_PARENS.replace("exists ", "filter ") + "exists (x[0] = 1)\n", "litmus", ptxmm.SemanticError,
     "the condition nests operators more than 100 deep", 5, 3008),
    # MemoryError in ptx.py _reg_decl: %rd<2^64-1> was expanded into a list of registers
    (HUGE_REG_RANGE, "ptx", ptxmm.SemanticError,
     "%rd<18446744073709551615> declares 18446744073709551615 registers, more than the limit of 65536",
     11, 15),
])
def test_found_by_fuzzing(text, fmt, cls, message, line, col):
    with pytest.raises(PtxmmError) as e:
        ptxmm.parse(text, SUFFIX[fmt], fmt)
    assert type(e.value) is cls, str(e.value)
    assert e.value.message == message
    assert (e.value.pos.file, e.value.pos.line, e.value.pos.col) == (SUFFIX[fmt], line, col)
    assert e.value.hint


BARRIER_AFTER_BRANCH = (".global .u32 y = 0;\n.thread T0 .cta 0 {\n    ld.volatile.u32 %r0, [y];\n"
                        "    setp.eq.s32 %p0, %r0, -1;\n    @!%p0 bra $L0;\n    $L0:\n    bar.sync 0, 2;\n}\n"
                        ".thread T1 .cta 0 {\n    bar.sync 0, 2;\n}\n")


def test_barrier_after_branch_engines_agree():
    """Found by test_valid_programs_parse_and_engines_agree (cut to its cause): both threads pass
    the barrier, so T0:%r0=0 is an outcome; brute force finds it, Z3 none."""
    p = ptxmm.parse(BARRIER_AFTER_BRANCH, "t.ptx")
    assert outcome_view(ptxmm.check(p, engine="brute"))[0] == {"T0:%r0=0"}
    assert outcome_view(ptxmm.check(p, engine="z3")) == outcome_view(ptxmm.check(p, engine="brute"))


def test_many_loads_do_not_crash_the_z3_engine():
    """Found by the mutation fuzzing (a row repeated 2000 times, cut to 450): a check must end
    with a result or a PtxmmError."""
    text = ("PTX big\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n" + " ld.relaxed.gpu r0, x ;\n" * 450
            + "exists (0:r0 = 1)\n")
    res = ptxmm.check(ptxmm.parse(text, "t.litmus"), engine="z3")
    assert res.status == "ok"
