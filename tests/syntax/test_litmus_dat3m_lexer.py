"""Dat3M's PTX dialect as Dat3M's own lexer reads it (BaseLexer.g4, LitmusAssertions.g4,
LitmusPTX.g4; issue 24, item 4): tokens are the longest match, ties going to the rule listed
first; whitespace, newlines, ``(* *)`` comments and the ``<< >>`` ExecConfig are skipped between
any two tokens; thread identifiers are ``P`` and a number (``P00`` is thread 0). And Dat3M's values
are 64-bit (its litmus front end types every register, location and constant with its 64-bit arch
type): the verdicts below differ between 32 and 64 bits."""

from __future__ import annotations

import dataclasses
import glob

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.errors import ParseError
from ptxmm.ir.program import Cmp, Imm, Load, MemRef, Reg, RegRef, Store
from ptxmm.syntax.litmus import dat3m_tokens


def parse(text: str) -> ptxmm.Program:
    return ptxmm.parse(text, "t.litmus")


def verdict(text: str) -> bool | None:
    return ptxmm.check(parse(text)).holds


MP2 = "PTX t\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | ld.weak r0, x ;\n"


# ----- the issue's inputs, each with Dat3M's meaning ------------------------------------------


@pytest.mark.parametrize("cond", ["P1: r0 == 1", "P1 :r0 == 1", "P1(* c *):r0 == 1",
                                  "P1 : r0 == 1", "1 : r0 == 1", "P01:r0 == 1"])
def test_thread_register_reference_takes_spaces_and_comments(cond):
    p = parse(MP2 + f"exists ({cond})")
    assert p.condition.expr == Cmp("==", RegRef("P1", "r0"), 1)
    assert p.condition.text in ("exists (P1:r0 == 1)", "exists (1:r0 == 1)", "exists (P01:r0 == 1)")
    assert ptxmm.check(p).holds is True


def test_issue_register_reference_p1_space_colon_r1():
    """The issue's `P1 :r1`: the register reference form with a space before the colon."""
    p = parse(MP2.replace("r0", "r1") + "exists (P1 :r1 == 0)")
    assert p.condition.expr == Cmp("==", RegRef("P1", "r1"), 0)
    assert ptxmm.check(p).holds is True


def test_locations_list_with_spaces():
    p = parse(MP2 + "locations [ P1 : r0 ; x ; ]\nexists (P1:r0 == 1)")
    assert p.observed == (RegRef("P1", "r0"), MemRef("x"))


def test_store_with_spaces_around_dots_and_commas():
    p = parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st . weak x , 1 ;\nexists (x == 1)")
    (ins,) = p.threads[0].instrs
    assert (type(ins), ins.sem, ins.addr.base.name, ins.src, ins.text) == (
        Store, "weak", "x", Imm(1), "st.weak x, 1")
    assert ptxmm.check(p).holds is True


def test_load_with_space_before_scope():
    p = parse("PTX t\n{ y=0; }\n P0@cta 0,gpu 0 ;\n ld.acquire .gpu r0, y ;\nexists (P0:r0 == 0)")
    (ins,) = p.threads[0].instrs
    assert (type(ins), ins.sem, ins.scope, ins.dst) == (Load, "acquire", "gpu", Reg("r0"))
    assert ptxmm.check(p).holds is True


def test_barrier_with_spaces_around_dots():
    text = ("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | ;\n"
            " bar . cta . sync 0 | bar.cta.sync 0 ;\n | ld.weak r0, x ;\nexists (P1:r0 == 0)")
    p = parse(text)
    assert p.threads[0].instrs[1].text == "bar.cta.sync 0"
    assert ptxmm.check(p).holds is False  # the barrier orders the store before the load


def test_negative_constant_with_a_space():
    p = parse("PTX t\n{ x=- 1; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (P0:r0 == - 1)")
    assert p.location("x").init == -1
    assert ptxmm.check(p).holds is True


def test_thread_identifier_with_leading_zeros():
    """ThreadIdentifier is 'P' DigitSequence and Dat3M reads its number: P00 is thread 0."""
    p = parse("PTX t\n{ P00:r1 = 2; }\n P00@cta 0,gpu 0 | P01@cta 0,gpu 0 ;\n"
              " st.weak x, r1 | ld.weak r0, x ;\nexists (P01:r0 == 2)")
    assert [t.name for t in p.threads] == ["P0", "P1"]
    assert p.threads[0].init_regs == (("r1", 2),)
    assert ptxmm.check(p).holds is True


IRRWIW = """PTX IRRWIW-shaped
{ x=0; y=0; P3:r2=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 1,gpu 0 | P3@cta 1,gpu 0 ;
 st.weak x, 2   | ld.weak r0, x  | st.weak x, 1   | ld.weak r0, x  ;
                | fence.sc.cta   |                | fence.sc.gpu   ;
                | ld.weak r2, y  |                | st.weak y, 1   ;
exists
(x == 2 /\\ P1:r0 == 2 /\\ P1:r2 == 0 /\\ P3: r0 == 1)
"""


def test_condition_written_like_dat3m_memalloy_tests():
    """Dat3M's rated Memalloy/IRRWIW1-4 (allowed under both of its PTX models) end with
    `P3: r0 == 1`; this test has their shape."""
    p = parse(IRRWIW)
    assert p.condition.expr.args[-1] == Cmp("==", RegRef("P3", "r0"), 1)
    assert ptxmm.check(p).holds is True


# ----- the rest of Dat3M's lexer --------------------------------------------------------------


def test_exec_config_is_skipped_anywhere():
    """ExecConfig: '<<' .*? '>>' -> skip (LitmusAssertions.g4), wherever it stands."""
    text = ("<<grid 2,1,1 block 4,1,1>> PTX t\n<<grid 1>>\n{ x=0; <<a>> }\n"
            " P0@cta 0,gpu 0 <<b\n>> | P1@cta 0,gpu 0 ;\n st.weak x, <<c>> 1 | ld.weak r0, x ;\n"
            "<<d>> exists (P1:r0 <<e>> == 1)")
    assert parse(text).condition.expr == Cmp("==", RegRef("P1", "r0"), 1)


def test_comments_are_skipped_between_any_two_tokens():
    text = ("PTX(*a*)t\n{(*b*)x(*c*)=(*d*)-(*e*)1(*f*);}(*g*)\n P0(*h*)@(*i*)cta(*j*)0(*k*),"
            "(*l*)gpu 0 ;\n ld(*m*).(*n*)weak(*o*)r0(*p*),(*q*)x(*r*);\n"
            "exists(*s*)((*t*)P0(*u*):(*v*)r0(*w*)==(*x*)-(*y*)1(*z*))")
    p = parse(text)
    assert p.location("x").init == -1
    assert p.threads[0].instrs[0].text == "ld.weak r0, x"
    assert p.condition.text == "exists (P0:r0 == -1)"


def test_header_tokens_up_to_the_brace():
    """main: LitmusLanguage ~(LBrace)* ...: a comment in the header may hold a brace, and a
    `//` there is two slashes (a URL in a doc string stays whole)."""
    p = parse('PTX MP (* { *)\n"see https://example.com/x"\n{ x=0; }\n P0@cta 0,gpu 0 ;\n'
              " st.weak x, 1 ;\n")
    assert (p.name, p.description) == ("MP", "see https://example.com/x")


@pytest.mark.parametrize("text, types", [
    ("ld ldx r0 r0x LC00 LC0x P1 P1x _x _1 x_1", ["KEYWORD", "IDENT", "REGISTER", "IDENT", "LABEL",
                                                  "IDENT", "THREADID", "IDENT", "IDENT", "PUNCT",
                                                  "DIGITS", "IDENT"]),
    ("0x1F 0x 007 -3", ["HEX", "DIGITS", "IDENT", "DIGITS", "MINUS", "DIGITS"]),
    ("== = != ! <= < >= > /\\ \\/ ~ not", ["CMPOP", "EQUALS", "CMPOP", "EXCL", "CMPOP", "CMPOP",
                                          "CMPOP", "CMPOP", "ANDOP", "OROP", "TILDE", "NOT"]),
    ("(*) x *) ( * x (*", ["LPAR", "PUNCT", "IDENT", "LPAR", "PUNCT"]),
    ("< <x> <<x>> y", ["CMPOP", "CMPOP", "IDENT", "CMPOP", "IDENT"]),
])
def test_tokens_follow_antlr_longest_match_then_rule_order(text, types):
    toks = dat3m_tokens(text)
    assert [t.type for t in toks] == types


@pytest.mark.parametrize("bad", ["`", "\u00e9", "\f"])
def test_characters_outside_the_lexer_are_located_errors(bad):
    with pytest.raises(ParseError) as e:
        parse(f"PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 {bad};\n")
    assert e.value.pos.line == 4 and e.value.pos.col == 15 and "Dat3M" in e.value.hint


def test_keywords_cannot_name_locations():
    """location: Identifier, and every keyword is its own token (ld, add, sync, cta, ...)."""
    with pytest.raises(ParseError) as e:
        parse("PTX t\n{ sync = 0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n")
    assert e.value.pos.line == 2 and "keyword" in e.value.hint
    with pytest.raises(ParseError) as e:
        parse("PTX t\n{ }\n P0@cta 0,gpu 0 ;\n st.weak add, 1 ;\n")
    assert "keyword" in e.value.hint


# ----- 64-bit values ----------------------------------------------------------------------------


def test_a_location_holds_64_bits():
    text = ("PTX t\n{ x=4294967296; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n"
            "exists (P0:r0 == 4294967296)")
    r = ptxmm.check(parse(text))
    assert r.holds is True and [str(o.outcome) for o in r.outcomes] == ["P0:r0=4294967296"]


def test_addition_does_not_wrap_at_32_bits():
    text = "PTX t\n{{ }}\n P0@cta 0,gpu 0 ;\n add r0, 2147483647, 1 ;\nexists (P0:r0 {})"
    assert verdict(text.format("== 2147483648")) is True
    assert verdict(text.format("< 0")) is False  # 32-bit words would wrap to -2147483648


def test_store_and_compare_above_32_bits():
    text = ("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.relaxed.gpu x, 8589934593 |"
            " ld.relaxed.gpu r0, x ;\n | beq r0, 1, LC00 ;\n | st.weak y, 7 ;\n | LC00: ;\n"
            "exists (y == 0)")
    assert verdict(text) is False  # in 32 bits x could read 1 and the branch skip the store


def test_wraps_at_64_bits_and_compares_signed():
    text = "PTX t\n{{ }}\n P0@cta 0,gpu 0 ;\n add r0, 9223372036854775807, 1 ;\nexists (P0:r0 {})"
    assert verdict(text.format("== -9223372036854775808")) is True
    assert verdict(text.format("< 0")) is True


def test_constants_up_to_2_to_the_64_as_dat3m_reads_them():
    """IntegerType(64).canContain: -2^63 <= v < 2^64; 2^64 - 1 is the all-ones word, -1."""
    text = "PTX t\n{{ x={}; }}\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (P0:r0 == -1)"
    assert verdict(text.format("18446744073709551615")) is True
    for bad in ("18446744073709551616", "-9223372036854775809"):
        with pytest.raises(ParseError) as e:
            parse(text.format(bad))
        assert "64 bits" in e.value.message and e.value.pos.line == 2


# ----- property: whitespace and comments between any two tokens change nothing -------------------


SEEDS = [MP2 + "locations [x; P1:r0]\nfilter (P1:r0 = 1)\n~exists (P1:r0 == 1 /\\ ~(x = 2) \\/ x > -1)",
         "PTX s\n{ x=0; y @ surface aliases x; P1:r2 = &x; }\n P0@cta 0,gpu 1 | P1@cta 1,gpu 0 ;\n"
         " sust.weak y, 2 | LC00: ;\n fence.proxy.surface | ld.acquire.gpu r0, x ;\n"
         " atom.acq_rel.sys.cas r1, x, 0, 0x10 | bne r0, 2, LC00 ;\n bar.cta.sync 1, r1, 2 |"
         " red.relaxed.gpu.add x, -1 ;\nfinal (P1:r0 = 2 /\\ x[0] = 1) with tso: exists; cc: ~exists;"]
GAPS = [" ", "\t", "\n", "\r\n", "(* c *)", "(*\n*)", " <<grid 1,1,1 block 2,1,1>> ", "  \n\t(**)"]


def _bare(p: ptxmm.Program) -> ptxmm.Program:
    """The program without source positions (which the inserted text moves)."""
    threads = tuple(dataclasses.replace(t, pos=None, instrs=tuple(
        dataclasses.replace(i, pos=None) for i in t.instrs)) for t in p.threads)
    locs = tuple(dataclasses.replace(loc, pos=None) for loc in p.locations)
    return dataclasses.replace(p, threads=threads, locations=locs)


@st.composite
def spaced(draw, CORPUS=()):
    text = draw(st.sampled_from(SEEDS + CORPUS[::3] if CORPUS else SEEDS))
    if not text.startswith("PTX"):
        text = open(text).read()
    toks = dat3m_tokens(text)
    # the header is free text to Dat3M (ptxmm reads its name and doc strings from it): insert
    # after `PTX` and between the tokens from the init block's `{` on
    cuts = [toks[0].start_pos + 3] + [t.end_pos for t in toks]
    chosen = draw(st.lists(st.sampled_from(cuts), min_size=1, max_size=12, unique=True))
    out, last = [], 0
    for k in sorted(chosen):
        gap = draw(st.sampled_from(GAPS[:1] + GAPS[4:5] if k == cuts[0] else GAPS))
        out += [text[last:k], gap]
        last = k
    return text, "".join(out) + text[last:]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spaced())
def test_whitespace_and_comments_between_tokens_change_nothing(pair):
    text, spaced_text = pair
    assert _bare(ptxmm.parse(spaced_text, "t.litmus")) == _bare(ptxmm.parse(text, "t.litmus"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_whitespace_and_comments_between_tokens_change_nothing_in_the_dat3m_corpus(dat3m, data):
    """The same on the Dat3M corpus beside the repository (a third of its tests as seeds)."""
    corpus = sorted(glob.glob(str(dat3m / "PTX" / "**" / "*.litmus"), recursive=True))
    test_whitespace_and_comments_between_tokens_change_nothing.hypothesis.inner_test(
        data.draw(spaced(corpus)))


def test_device_runs_litmus_values_as_32_bit_words():
    """The device harness's locations are 32-bit: a .litmus test runs there narrowed, and one
    whose constants need more than 32 bits is refused rather than truncated."""
    from ptxmm.errors import UnsupportedError
    from ptxmm.syntax.litmus import narrowed_to_32_bits

    small = narrowed_to_32_bits(parse(MP2))
    assert {loc.type for loc in small.locations} == {"s32"}
    assert {i.type for t in small.threads for i in t.instrs} == {"s32"}
    big = "PTX t\n{{ x={}; }}\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n st.weak x, {} ;\n"
    for init, value in (("4294967296", "1"), ("0", "-2147483649")):
        with pytest.raises(UnsupportedError) as e:
            narrowed_to_32_bits(parse(big.format(init, value)))
        assert "beyond 32 bits" in e.value.message and e.value.pos is not None
