"""Issue 10, the .ptx front end's last "nothing silently wrong" items: a misspelt opcode is a syntax
error with a did-you-mean (only real PTX is "not supported yet"), a misspelt qualifier is named as
such with a did-you-mean, a qualifier category given twice is an error, and a condition nested in
parentheses only is located at the first parenthesis beyond the limit."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.syntax.decode import DECODERS as _HANDLERS
from ptxmm.syntax.decode import KNOWN, QUALIFIERS
from ptxmm.syntax.ptx_isa import PTX_OPCODES

X = ".global .u32 x = 0;\n"


def _one(ins: str) -> str:
    return X + ".thread T0 { " + ins + "; }\nexists (x == 1)\n"


COL = len(".thread T0 { ") + 1  # column of the instruction on line 2

CASES = [
    # (input instruction, class, message fragment, hint fragment, column offset in the instruction)
    # 1. unknown opcodes: not PTX → syntax error with a did-you-mean from what ptxmm models
    ("lod.global.u32 %r0, [x]", ParseError, "unknown instruction `lod`", "did you mean `ld`?", 0),
    ("foo.u32 %r0, 1", ParseError, "unknown instruction `foo`", "not a PTX instruction", 0),
    ("sotre.global.u32 [x], 1", ParseError, "unknown instruction `sotre`", "did you mean `st`?", 0),
    ("store.global.u32 [x], 1", ParseError, "unknown instruction `store`", "did you mean `st`?", 0),
    ("fense.sc.gpu", ParseError, "unknown instruction `fense`", "did you mean `fence`?", 0),
    ("LD.global.u32 %r0, [x]", ParseError, "unknown instruction `LD`", "did you mean `ld`?", 0),
    # ... real PTX that ptxmm does not model → not supported yet
    ("cvta.to.global.u64 %rd0, x", UnsupportedError, "PTX instruction `cvta`", "ptxmm models ld st", 0),
    ("mad.lo.s32 %r0, 1, 2, 3", UnsupportedError, "PTX instruction `mad`", "ptxmm models", 0),
    ("setmaxnreg.inc.sync.aligned.u32 240", UnsupportedError, "PTX instruction `setmaxnreg`",
     "ptxmm models", 0),
    # ... other tools' spellings keep their own hint
    ("cold %r0, [x]", ParseError, "`cold` is not a PTX instruction", "ld.const.u32", 0),
    ("tld %r0, [x]", ParseError, "`tld` is not a PTX instruction", "tex.1d.v4.s32.s32", 0),
    # 2. misspelt qualifiers: did-you-mean from the qualifiers the instruction takes
    ("st.relase.gpu.global.u32 [x], 1", ParseError, "unknown qualifier `.relase` in "
     "`st.relase.gpu.global.u32`", "did you mean `.release`?", 3),
    ("ld.acquire.gpuu.global.u32 %r0, [x]", ParseError, "unknown qualifier `.gpuu`",
     "did you mean `.gpu`?", 11),
    ("ld.global.u33 %r0, [x]", ParseError, "unknown qualifier `.u33`", "did you mean `.u32`?", 10),
    ("ld.globl.u32 %r0, [x]", ParseError, "unknown qualifier `.globl`", "did you mean `.global`?", 3),
    ("atom.global.ad.u32 %r0, [x], 1", ParseError, "unknown qualifier `.ad`", "did you mean `.add`?",
     12),
    ("fence.acq_rl.gpu", ParseError, "unknown qualifier `.acq_rl`", "did you mean `.acq_rel`?", 6),
    ("setp.eqq.u32 %p0, 1, 2", ParseError, "unknown qualifier `.eqq`", "did you mean `.eq`?", 5),
    ("bar.snyc 0", ParseError, "unknown qualifier `.snyc`", "did you mean `.sync`?", 4),
    ("st.global.wbb.u32 [x], 1", ParseError, "unknown qualifier `.wbb`", "did you mean `.wb`?", 10),
    # ... a qualifier with no close match keeps the instruction's own message
    ("atom.relaxed.gpu.global.sub.u32 %r0, [x], 1", ParseError, "unknown atom operation .sub",
     "operations: add", 24),
    # 3. a qualifier category given twice
    ("st.global.cg.wb.u32 [x], 1", ParseError, "a second cache operator `.wb` in "
     "`st.global.cg.wb.u32` (after `.cg`)", "at most one cache operator", 13),
    ("ld.global.ca.cg.u32 %r0, [x]", ParseError, "a second cache operator `.cg`", "drop one", 13),
    ("st.relaxed.gpu.sys.global.u32 [x], 1", ParseError, "a second scope `.sys`", "one scope", 15),
    ("ld.relaxed.gpu.weak.u32 %r0, [x]", ParseError, "a second semantics `.weak`", "one semantics",
     15),
    ("st.release.relaxed.gpu.global.u32 [x], 1", ParseError, "a second semantics `.relaxed`",
     "drop one", 11),
    ("st.global.u32.u32 [x], 1", ParseError, "a second type `.u32`", "one type", 14),
    ("st.global.shared.u32 [x], 1", ParseError, "a second state space `.shared`",
     "one state space", 10),
    ("fence.sc.acq_rel.gpu", ParseError, "a second semantics `.acq_rel`", "drop one", 9),
    ("ld.global.L1::evict_first.L1::evict_last.u32 %r0, [x]", ParseError,
     "a second L1 eviction priority `.L1::evict_last`", "drop one", 26),
]


@pytest.mark.parametrize("ins,cls,message,hint,off", CASES, ids=[c[0] for c in CASES])
def test_front_end_typo(ins, cls, message, hint, off):
    with pytest.raises(PtxmmError) as e:
        ptxmm.parse(_one(ins), "t.ptx")
    err = e.value
    assert type(err) is cls, f"{type(err).__name__}: {err}"
    assert message in err.message, str(err)
    assert hint in (err.hint or ""), str(err)
    assert (err.pos.file, err.pos.line, err.pos.col) == ("t.ptx", 2, COL + off), str(err)


@pytest.mark.parametrize("ins", [
    "ld.global.cg.L2::256B.u32 %r0, [x]",  # a cache operator and a prefetch size
    "ld.global.L1::evict_last.L2::256B.u32 %r0, [x]",  # an L1 eviction priority and a prefetch size
    "st.global.L1::no_allocate.u32 [x], 1",
    "ld.mmio.relaxed.sys.global.u32 %r0, [x]",  # .mmio is not a second semantics
])
def test_one_qualifier_per_category_is_accepted(ins):
    ptxmm.parse(_one(ins), "t.ptx")


def test_forms_that_name_a_category_twice_are_accepted():
    """tex names two types (data and coordinates), cp.async.bulk two state spaces."""
    ptxmm.parse(".global .u32 x = 0;\n.global .texref t aliases x;\n"
                ".thread T0 { tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}]; }\nexists (T0:%r0 == 0)\n")
    ptxmm.parse(".global .u32 x = 0;\n.shared .u32 y = 0;\n"
                ".thread T0 { cp.async.bulk.global.shared::cta.bulk_group [x], [y], 4;"
                " cp.async.bulk.commit_group; }\nexists (x == 0)\n")


def test_opcode_tables():
    assert set(KNOWN) == set(_HANDLERS) == set(QUALIFIERS)
    assert set(KNOWN) <= PTX_OPCODES
    assert {"cvta", "wgmma", "tcgen05", "istypep", "elect", "setmaxnreg", "vadd4"} <= PTX_OPCODES
    assert not {"lod", "foo", "store", "vavrg", "istypeof"} & PTX_OPCODES


# 4. a condition nested in parentheses only
PARENS = X + ".thread T0 { st.global.u32 [x], 1; }\nexists " + "(" * 3000 + "x == 1" + ")" * 3000 + "\n"


def test_parentheses_nested_too_deep_point_at_the_first_beyond_the_limit():
    with pytest.raises(SemanticError) as e:
        ptxmm.parse(PARENS, "t.ptx")
    err = e.value
    assert "the condition nests parentheses more than 100 deep" in err.message
    assert "parentheses" in err.hint
    # `exists ` is 7 columns: the first `(` is column 8, the 101st column 108
    assert (err.pos.line, err.pos.col) == (3, 108)


def test_hundred_parentheses_are_fine():
    text = X + ".thread T0 { st.global.u32 [x], 1; }\nexists " + "(" * 100 + "x == 1" + ")" * 100
    assert ptxmm.check(ptxmm.parse(text + "\n", "t.ptx")).holds


def test_operators_beyond_the_limit_still_say_operators():
    """`!(` fifty times is 100 levels; fifty-one: the 101st level is the 51st `!` (column 108)."""
    head = X + ".thread T0 { st.global.u32 [x], 1; }\nexists "
    ptxmm.parse(head + "!(" * 50 + "x == 2" + ")" * 50 + "\n", "t.ptx")
    with pytest.raises(SemanticError) as e:
        ptxmm.parse(head + "!(" * 51 + "x == 2" + ")" * 51 + "\n", "t.ptx")
    assert "nests operators more than 100 deep" in e.value.message
    assert (e.value.pos.line, e.value.pos.col) == (3, 108)
