"""Grammar coverage of the Dat3M PTX ``.litmus`` front end: one small test per rule (or
alternative) of Dat3M's LitmusPTX.g4 / LitmusAssertions.g4, asserting the IR it produces; the
constraints Dat3M's visitor enforces, as located errors; the looser forms the ``.ptx`` front end
also accepts; and a fuzz test: a mutated valid test gives a ptxmm error, never another exception."""

from __future__ import annotations

import dataclasses
import glob

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.ir.program import (
    Addr,
    Alu,
    And,
    Atom,
    Barrier,
    Branch,
    Cmp,
    Fence,
    Imm,
    Label,
    Load,
    Location,
    MemRef,
    Mov,
    Not,
    Or,
    Placement,
    ProxyFence,
    Red,
    Reg,
    RegRef,
    Setp,
    Store,
    Sym,
    TrueC,
)

# ----- helpers ------------------------------------------------------------------------------------


def src(*rows: str, init: str = "x = 0; y = 0;", cond: str = "", threads: int = 2) -> str:
    """A test with ``threads`` threads (all in CTA 0 of GPU 0); ``rows`` are instruction rows
    without their ';' (line 4 is the first row)."""
    decl = " | ".join(f"P{i}@cta 0,gpu 0" for i in range(threads))
    body = "".join(f" {r} ;\n" for r in rows)
    return f"PTX t\n{{ {init} }}\n {decl} ;\n{body}{cond}\n"


def parse(*rows: str, **kw) -> ptxmm.Program:
    return ptxmm.parse(src(*rows, **kw), "t.litmus")


def bare(ins):
    """An instruction without its source position and text, for comparing IR."""
    return dataclasses.replace(ins, pos=None, text="")


def code(*rows: str, thread: int = 0, **kw) -> list:
    return [bare(i) for i in parse(*rows, **kw).threads[thread].instrs]


# registers are undefined until written: the one-instruction tests read these, initialised
REGS = "x = 0; y = 0; P0:r0 = 0; P0:r1 = 0; P0:r2 = 0;"


def one(cell: str, **kw):
    (ins,) = code(cell, **{"init": REGS, **kw})
    return ins


def cond(text: str, *rows: str, **kw):
    return parse(*(rows or ("st.weak x, 1 | ld.weak r0, x",)), cond=text, **kw).condition


def fails(exc: type, text: str, line: int, *rows: str, col: int | None = None, **kw) -> PtxmmError:
    """Parsing fails with ``exc`` whose message contains ``text``, at ``line`` (and ``col``)."""
    with pytest.raises(exc) as e:
        parse(*rows, **kw)
    err = e.value
    assert type(err) is exc
    assert text in err.message, err.message
    assert err.pos is not None and err.pos.file == "t.litmus" and err.pos.line == line, err.pos
    if col is not None:
        assert err.pos.col == col, err.pos
    assert err.hint or exc is SemanticError
    return err


X, Y = Addr(Sym("x")), Addr(Sym("y"))


# ----- main: header, comments, layout -------------------------------------------------------------


def test_header_name_and_doc_strings():
    p = ptxmm.parse('PTX MP+rel-acq\n"message passing"\n"second  line"\n{ x=0; }\n P0@cta 0,gpu 0 ;\n'
                    ' st.weak x, 1 ;\n', "mp.litmus")
    assert (p.name, p.description, p.format) == ("MP+rel-acq", "message passing second line", "litmus")


def test_header_lowercase_and_nameless():
    p = ptxmm.parse("ptx\n{ }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n", "dir/nameless.litmus")
    assert p.name == "nameless"


def test_comments_anywhere():
    p = ptxmm.parse("(* a comment *) PTX c\n{ x = 0; (* in init; with | and ; *) }\n"
                    " P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ; (* after threads *)\n"
                    " st.weak x, 1 (* a ; b | c *) | ld.weak r0, x ; // line comment ; |\n"
                    "(* before *) exists (* inside *) (P1:r0 = 1)\n", "c.litmus")
    assert [bare(i) for i in p.threads[0].instrs] == [Store(addr=X, src=Imm(1), type="s64")]
    assert [type(i) for i in p.threads[1].instrs] == [Load]
    assert p.condition.expr == Cmp("==", RegRef("P1", "r0"), 1)


def test_rows_cells_may_be_empty_missing_or_span_lines():
    p = parse(" | st.weak x, 1", "st.weak y, 1", "st.weak\n x,\n 2 |", "|", threads=2)
    t0, t1 = ([bare(i) for i in t.instrs] for t in p.threads)
    assert t0 == [Store(addr=Y, src=Imm(1), type="s64"), Store(addr=X, src=Imm(2), type="s64")]
    assert t1 == [Store(addr=X, src=Imm(1), type="s64")]
    assert p.threads[0].instrs[1].pos.line == 6  # the multi-line cell keeps its first line


def test_no_condition():
    assert parse("st.weak x, 1", threads=1).condition is None


# ----- variableDeclaratorList / variableDeclarator ------------------------------------------------


@pytest.mark.parametrize("init", ["", ";", "x = 1", "x = 1;", "x = 1; ;", "; x = 1; y = 2;;"])
def test_init_list_separators(init):
    p = parse("st.weak x, 1", init=init, threads=1)
    assert p.location("x").init == (1 if "x = 1" in init else 0)


def test_init_block_optional_semicolon_after_brace():
    p = ptxmm.parse("PTX t\n{ x = 3; };\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n", "t.litmus")
    assert p.location("x").init == 3


@pytest.mark.parametrize("text, value", [("7", 7), ("-1", -1), ("0x1F", 31), ("010", 10)])
def test_declarator_location_constant(text, value):
    p = parse("st.weak x, 1", init=f"x = {text};", threads=1)
    assert p.location("x") == Location("x", type="s64", init=value, pos=p.location("x").pos)
    assert p.location("x").pos.line == 2


@pytest.mark.parametrize("tid", ["P1", "1"])
def test_declarator_register_constant(tid):
    p = parse("| add r1, r0, 1", init=f"{tid}:r0 = 5; P0:r3 = -2;")
    assert p.threads[1].init_regs == (("r0", 5),)
    assert p.threads[0].init_regs == (("r3", -2),)


@pytest.mark.parametrize("amp", ["&", ""])
def test_declarator_register_location(amp):
    """``P0:r0 = &x`` and ``P0:r0 = x``: r0 holds the address of x (Dat3M's initRegEqLocPtr)."""
    p = parse("st.weak y, r0", init=f"P0:r0 = {amp}z; y = 0;", threads=1)
    assert p.threads[0].init_regs == (("r0", "z"),)
    assert p.location("z") is not None and p.location("z").alias_of is None


@pytest.mark.parametrize("amp", ["&", ""])
def test_declarator_location_location(amp):
    """``y = x`` / ``y = &x``: Dat3M's initVirLocEqLoc — y is a location of its own, initialised
    with x's initial value (not an alias, not x's address)."""
    p = parse("st.weak y, 1", init=f"x = 4; y = {amp}x;", threads=1)
    y = p.location("y")
    assert (y.init, y.alias_of, y.proxy) == (4, None, "generic")
    assert p.physical("y") == "y"


@pytest.mark.parametrize("proxy", ["generic", "texture", "surface", "constant"])
def test_declarator_proxy_alias(proxy):
    p = parse("st.weak x, 1", init=f"x = 2; a @ {proxy} aliases x;", threads=1)
    a = p.location("a")
    assert (a.name, a.alias_of, a.proxy, a.init, a.type) == ("a", "x", proxy, 2, "s64")
    assert a.pos.line == 2 and p.physical("a") == "x"


def test_declarator_alias_of_alias():
    p = parse("st.weak x, 1", init="x = 0; y @ generic aliases x; s1 @ surface aliases y; "
                                   "t @ texture aliases y; c @ constant aliases s1;", threads=1)
    assert [(loc.name, loc.alias_of, loc.proxy) for loc in p.locations] == [
        ("x", None, "generic"), ("y", "x", "generic"), ("s1", "y", "surface"),
        ("t", "y", "texture"), ("c", "s1", "constant")]
    assert {p.physical(n) for n in "x y s1 t c".split()} == {"x"}
    assert (p.virtual("s1"), p.virtual("y")) == ("y", "y")


# ----- threadDeclaratorList -----------------------------------------------------------------------


def test_thread_declarators():
    p = ptxmm.parse("PTX t\n{ }\n P0@cta 0,gpu 0 | P1@cta 1, gpu 0 | 2 @ cta 0 , gpu 1 ;\n"
                    " st.weak x, 1 | | ;\n", "t.litmus")
    assert [t.name for t in p.threads] == ["P0", "P1", "P2"]
    assert [t.placement for t in p.threads] == [Placement(0, None, 0), Placement(0, None, 1),
                                                Placement(1, None, 0)]


# ----- storeInstruction ---------------------------------------------------------------------------


@pytest.mark.parametrize("mn, proxy", [("st", "generic"), ("sust", "surface")])
@pytest.mark.parametrize("quals, sem, scope", [
    ("weak", "weak", None), ("relaxed.cta", "relaxed", "cta"), ("relaxed.gpu", "relaxed", "gpu"),
    ("release.sys", "release", "sys"), ("release.cta", "release", "cta")])
def test_store(mn, proxy, quals, sem, scope):
    assert one(f"{mn}.{quals} x, 3") == Store(addr=X, src=Imm(3), type="s64", sem=sem, scope=scope,
                                              proxy=proxy)


@pytest.mark.parametrize("value, operand", [("r1", Reg("r1")), ("-5", Imm(-5)), ("0x10", Imm(16))])
def test_store_values(value, operand):
    assert one(f"st.weak x, {value}").src == operand


# ----- loadInstruction: localValue, localAdd/Sub/Mul/Div, loadLocation ----------------------------


@pytest.mark.parametrize("mn", ["ld", "tld", "suld", "cold"])
@pytest.mark.parametrize("value, operand", [("1", Imm(1)), ("r1", Reg("r1")), ("-3", Imm(-3))])
def test_local_value(mn, value, operand):
    """``ld r0, v`` (no qualifier, any load mnemonic): a register move."""
    assert one(f"{mn} r0, {value}") == Mov(dst=Reg("r0"), src=operand, type="s64")


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_local_arithmetic(op):
    assert one(f"{op} r2, r0, 7") == Alu(op=op, dst=Reg("r2"), srcs=(Reg("r0"), Imm(7)), type="s64")
    assert one(f"{op} r2, 1, r1").srcs == (Imm(1), Reg("r1"))


def test_local_div_is_signed_and_truncates():
    """Dat3M's ``div`` is signed division (its makeDiv(a, b, signed=true)): -7 / 2 = -3."""
    text = ("PTX div\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n ld r1, -7 ;\n div r2, r1, 2 ;\n"
            " st.weak x, r2 ;\nexists (x == -3)\n")
    res = ptxmm.check(ptxmm.parse(text, "t.litmus"))
    assert res.holds and [str(o.outcome) for o in res.outcomes] == ["x=-3"]


@pytest.mark.parametrize("mn, proxy", [("ld", "generic"), ("tld", "texture"), ("suld", "surface"),
                                       ("cold", "constant")])
@pytest.mark.parametrize("quals, sem, scope", [
    ("weak", "weak", None), ("relaxed.gpu", "relaxed", "gpu"), ("relaxed.sys", "relaxed", "sys"),
    ("acquire.cta", "acquire", "cta"), ("acquire.sys", "acquire", "sys")])
def test_load_location(mn, proxy, quals, sem, scope):
    assert one(f"{mn}.{quals} r0, x") == Load(dst=Reg("r0"), addr=X, type="s64", sem=sem, scope=scope,
                                              proxy=proxy)


# ----- fenceInstruction: fencePhysic, fenceProxy, fenceAlias, barrier -----------------------------


@pytest.mark.parametrize("sem", ["sc", "acq_rel"])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_fence_physic(sem, scope):
    assert one(f"fence.{sem}.{scope}") == Fence(sem=sem, scope=scope)


@pytest.mark.parametrize("kind", ["texture", "surface", "constant"])
def test_fence_proxy(kind):
    assert one(f"fence.proxy.{kind}") == ProxyFence(kind=kind)


def test_fence_proxy_generic_is_not_supported():
    err = fails(UnsupportedError, "fence.proxy.generic", 5, "st.weak x, 1", "fence.proxy.generic")
    assert "delete it" in err.hint


def test_fence_alias():
    assert one("fence.proxy.alias") == ProxyFence(kind="alias")


@pytest.mark.parametrize("kind", ["sync", "arrive"])
@pytest.mark.parametrize("operands, ids, count", [
    ("0", (Imm(0),), None), ("1, 2", (Imm(1), Imm(2)), None), ("1, r2", (Imm(1), Reg("r2")), None),
    ("1, 1, 3", (Imm(1), Imm(1)), Imm(3)), ("1, r0, r1", (Imm(1), Reg("r0")), Reg("r1"))])
def test_barrier(kind, operands, ids, count):
    assert one(f"bar.cta.{kind} {operands}") == Barrier(kind=kind, ids=ids, count=count, instance=True)


# ----- atomInstruction: atomOp, atomCAS, atomExchange; redInstruction -----------------------------


RMW_SEMS = [("relaxed", "relaxed"), ("acquire", "acquire"), ("release", "release"),
            ("acq_rel", "acq_rel")]


@pytest.mark.parametrize("mn, proxy", [("atom", "generic"), ("suatom", "surface")])
@pytest.mark.parametrize("mo, sem", RMW_SEMS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "and", "or", "xor"])
def test_atom_op(mn, proxy, mo, sem, op):
    assert one(f"{mn}.{mo}.gpu.{op} r0, x, r1") == Atom(
        op=op, dst=Reg("r0"), addr=X, srcs=(Reg("r1"),), type="s64", sem=sem, scope="gpu", proxy=proxy)


@pytest.mark.parametrize("mn, proxy", [("atom", "generic"), ("suatom", "surface")])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_atom_cas(mn, proxy, scope):
    assert one(f"{mn}.relaxed.{scope}.cas r0, x, 0, r2") == Atom(
        op="cas", dst=Reg("r0"), addr=X, srcs=(Imm(0), Reg("r2")), type="s64", sem="relaxed",
        scope=scope, proxy=proxy)


@pytest.mark.parametrize("mn, proxy", [("atom", "generic"), ("suatom", "surface")])
def test_atom_exchange(mn, proxy):
    assert one(f"{mn}.acq_rel.sys.exch r3, y, 9") == Atom(
        op="exch", dst=Reg("r3"), addr=Y, srcs=(Imm(9),), type="s64", sem="acq_rel", scope="sys",
        proxy=proxy)


def test_atom_div_is_not_supported():
    fails(UnsupportedError, "division in a read-modify-write", 4, "atom.relaxed.gpu.div r0, x, 2")


@pytest.mark.parametrize("mn, proxy", [("red", "generic"), ("sured", "surface")])
@pytest.mark.parametrize("mo, sem", RMW_SEMS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "and", "or", "xor"])
def test_red(mn, proxy, mo, sem, op):
    assert one(f"{mn}.{mo}.cta.{op} x, -1") == Red(op=op, addr=X, src=Imm(-1), type="s64", sem=sem,
                                                   scope="cta", proxy=proxy)


def test_red_div_is_not_supported():
    fails(UnsupportedError, "division in a read-modify-write", 4, "red.relaxed.gpu.div x, 2")


# ----- branchCond, jump, label --------------------------------------------------------------------


@pytest.mark.parametrize("mn, cmp", [("beq", "eq"), ("bne", "ne"), ("bge", "ge"), ("ble", "le"),
                                     ("bgt", "gt"), ("blt", "lt")])
def test_branch_cond(mn, cmp):
    p = Reg("%branch")
    assert code("LC00:", f"{mn} r0, -1, LC00", init=REGS) == [
        Label(name="LC00"), Setp(cmp=cmp, dst=p, a=Reg("r0"), b=Imm(-1), type="s64"),
        Branch(target="LC00", guard=(p, False))]
    assert code("LC00:", f"{mn} 1, r2, LC00", init=REGS)[1].a == Imm(1)


def test_jump_and_label():
    assert code("goto LC01", "st.weak x, 1", "LC01:") == [
        Branch(target="LC01"), Store(addr=X, src=Imm(1), type="s64"), Label(name="LC01")]


def test_labels_are_per_thread():
    p = parse("LC00: | LC00:", "bne r0, 0, LC00 | goto LC00", init=REGS)
    assert all(t.instrs[0].name == "LC00" for t in p.threads)


# ----- variableList (locations [...]) -------------------------------------------------------------


def test_locations_list():
    p = parse("st.weak x, 1 | ld.weak r0, x", cond="locations [x; P1:r0; 1:r0;]\nexists (x = 1)")
    assert p.observed == (MemRef("x"), RegRef("P1", "r0"), RegRef("P1", "r0"))
    assert p.condition.expr == Cmp("==", MemRef("x"), 1)


# ----- assertionList: exists, ~exists, forall, final ... with -------------------------------------


@pytest.mark.parametrize("text, quant", [
    ("exists (x = 1)", "exists"), ("~exists (x = 1)", "~exists"), ("~ exists (x = 1)", "~exists"),
    ("not exists (x = 1)", "~exists"), ("forall (x = 1)", "forall"), ("exists x = 1;", "exists"),
    ("final (x = 1) with tso: exists; default: ~exists;", "exists")])
def test_assertion_list(text, quant):
    c = cond(text)
    assert (c.quantifier, c.expr) == (quant, Cmp("==", MemRef("x"), 1))
    assert c.text.startswith(quant) and "x = 1" in c.text


# ----- assertionFilter ----------------------------------------------------------------------------


def test_filter_folds_into_exists():
    c = cond("filter (P1:r0 = 1)\n~exists (x = 0)")
    f = Cmp("==", RegRef("P1", "r0"), 1)
    assert (c.quantifier, c.expr) == ("~exists", And((f, Cmp("==", MemRef("x"), 0))))
    assert c.text == "~exists (P1:r0 = 1) /\\ (x = 0)"


def test_filter_folds_into_forall():
    p = parse("st.weak x, 1 | ld.weak r0, x", cond="filter P1:r0 = 1;\nforall (x = 1)")
    f = Cmp("==", RegRef("P1", "r0"), 1)
    assert p.condition.expr == Or((Not(f), Cmp("==", MemRef("x"), 1)))
    assert p.filter == f


def test_filter_changes_the_verdict_as_in_dat3m():
    """Without the filter, r0 = 0 is a possible outcome; the filter keeps only r0 = 1."""
    rows = ("st.weak x, 1 | ld.weak r0, x",)
    assert ptxmm.check(parse(*rows, cond="forall (P1:r0 = 1)")).holds is False
    assert ptxmm.check(parse(*rows, cond="filter (P1:r0 = 1) forall (P1:r0 = 1)")).holds is True


# ----- assertion: parenthesis, not, and, or, basic ------------------------------------------------


def test_assertion_connectives_and_precedence():
    a, b, c = (Cmp("==", MemRef(n), 1) for n in ("x", "y", "x"))
    assert cond("exists (x = 1 \\/ y = 1 /\\ x = 1)", "st.weak x, 1 | st.weak y, 1").expr == Or(
        (a, And((b, c))))
    assert cond("exists ((x = 1 \\/ y = 1) /\\ x = 1)", "st.weak x, 1 | st.weak y, 1").expr == And(
        (Or((a, b)), c))
    assert cond("exists (~x = 1 /\\ not y = 1)", "st.weak x, 1 | st.weak y, 1").expr == And(
        (Not(a), Not(b)))
    assert cond("exists (true)").expr == TrueC()


@pytest.mark.parametrize("op, norm", [("=", "=="), ("==", "=="), ("!=", "!="), ("<", "<"),
                                      ("<=", "<="), (">", ">"), (">=", ">=")])
def test_assertion_compare(op, norm):
    assert cond(f"exists (P1:r0 {op} 1)").expr == Cmp(norm, RegRef("P1", "r0"), 1)


# ----- assertionValue -----------------------------------------------------------------------------


@pytest.mark.parametrize("lhs", ["x", "x[0]", "[x]"])
def test_assertion_value_location(lhs):
    assert cond(f"exists ({lhs} = 1)").expr == Cmp("==", MemRef("x"), 1)


@pytest.mark.parametrize("ref", ["P1:r0", "1:r0"])
def test_assertion_value_register(ref):
    assert cond(f"exists ({ref} = x[0])").expr == Cmp("==", RegRef("P1", "r0"), MemRef("x"))


@pytest.mark.parametrize("text, value", [("-1", -1), ("0x1f", 31), ("007", 7)])
def test_assertion_value_constant(text, value):
    assert cond(f"exists (x = {text})").expr == Cmp("==", MemRef("x"), value)


@pytest.mark.parametrize("op, flipped", [("=", "=="), ("<", ">"), ("<=", ">="), (">", "<"),
                                         (">=", "<="), ("!=", "!=")])
def test_assertion_constant_on_the_left(op, flipped):
    assert cond(f"exists (2 {op} P1:r0)").expr == Cmp(flipped, RegRef("P1", "r0"), 2)


def test_assertion_constants_only():
    assert cond("exists (1 = 1)").expr == TrueC()
    assert cond("exists (1 > 2)").expr == Not(TrueC())


def test_assertion_location_on_the_right_is_its_address():
    """Dat3M reads a bare location on the right of a comparison as its address."""
    for rhs in ("x", "[x]"):
        err = fails(UnsupportedError, "address of x", 6, "st.weak x, 1 | ld.weak r0, x",
                    cond=f"\nexists (P1:r0 = {rhs})")
        assert "x[0]" in err.hint


def test_assertion_offset_is_not_supported():
    fails(UnsupportedError, "offset", 5, "st.weak x, 1", cond="exists (x[1] = 1)")


# ----- forms the .ptx front end accepts (looser than Dat3M) ---------------------------------------


@pytest.mark.parametrize("cell, expected", [
    ("ld.volatile r0, x", Load(dst=Reg("r0"), addr=X, type="s64", sem="relaxed", scope="sys",
                               volatile=True)),
    ("st.volatile x, 1", Store(addr=X, src=Imm(1), type="s64", sem="relaxed", scope="sys",
                               volatile=True)),
    ("ld.mmio.relaxed.sys r0, x", Load(dst=Reg("r0"), addr=X, type="s64", sem="relaxed", scope="sys",
                                       volatile=True)),
    ("ld.acquire.cluster r0, x", Load(dst=Reg("r0"), addr=X, type="s64", sem="acquire",
                                      scope="cluster")),
    ("atom.add r0, x, 1", Atom(op="add", dst=Reg("r0"), addr=X, srcs=(Imm(1),), type="s64",
                               sem="relaxed", scope="gpu")),
    ("atom.sys.inc r0, x, 1", Atom(op="inc", dst=Reg("r0"), addr=X, srcs=(Imm(1),), type="s64",
                                   sem="relaxed", scope="sys")),
    ("red.release.max x, 1", Red(op="max", addr=X, src=Imm(1), type="s64", sem="release",
                                 scope="gpu")),
    ("fence.gpu", Fence(sem="acq_rel", scope="gpu")),
    ("xor r0, r1, 1", Alu(op="xor", dst=Reg("r0"), srcs=(Reg("r1"), Imm(1)), type="s64")),
])
def test_looser_forms(cell, expected):
    assert one(cell) == expected


def test_label_names_beyond_lcnn():
    assert code("loop:", "goto loop")[0] == Label(name="loop")


# ----- Dat3M's constraints and typos: located errors with a hint ----------------------------------


@pytest.mark.parametrize("cell, col", [("ld.weak.gpu r0, x", 10), ("st.weak.sys x, 1", 10),
                                       ("sust.weak.cta x, 1", 12), ("tld.weak.gpu r0, x", 11)])
def test_weak_takes_no_scope(cell, col):
    fails(ParseError, "a weak access takes no scope", 4, cell, col=col)


@pytest.mark.parametrize("cell", ["ld.acquire r0, x", "ld.relaxed r0, x", "st.release x, 1",
                                  "st.relaxed x, 1"])
def test_strong_access_needs_scope(cell):
    fails(ParseError, "needs a scope", 4, cell)


@pytest.mark.parametrize("cell, word", [
    ("st.acquire.gpu x, 1", "acquire"), ("st.acq_rel.gpu x, 1", "acq_rel"), ("st.sc.gpu x, 1", "sc"),
    ("ld.release.gpu r0, x", "release"), ("ld.sc.gpu r0, x", "sc"), ("cold.acq_rel.gpu r0, x", "acq_rel"),
    ("atom.weak.gpu.add r0, x, 1", "weak"), ("atom.sc.gpu.add r0, x, 1", "sc"),
    ("red.weak.gpu.add x, 1", "weak"), ("suatom.sc.gpu.exch r0, x, 1", "sc")])
def test_semantics_an_instruction_does_not_take(cell, word):
    fails(ParseError, f"does not take .{word}", 4, cell, col=len(cell.split(".")[0]) + 3)


@pytest.mark.parametrize("cell, word", [("fence.relaxed.gpu", "relaxed"), ("fence.acquire.gpu", "acquire"),
                                        ("fence.release.sys", "release"), ("fence.weak.cta", "weak")])
def test_fence_semantics(cell, word):
    fails(ParseError, f"a fence does not take .{word}", 4, cell, col=8)


def test_fence_needs_scope():
    fails(ParseError, "a fence needs a scope", 4, "fence.sc")


@pytest.mark.parametrize("cell, hint", [
    ("fence.proxy.textures", "did you mean `texture`?"), ("fence.proxy", "expected form"),
    ("fence.proxy.foo", "expected form")])
def test_fence_proxy_kind(cell, hint):
    assert hint in fails(ParseError, "`fence.proxy` needs a kind", 4, cell).hint


def test_misspelt_quantifier():
    with pytest.raises(ParseError) as e:
        parse("st.weak x, 1", cond="exist (x = 1)")
    assert "not terminated" in e.value.message and e.value.pos.line == 5
    assert "a condition starts with exists" in e.value.hint
    assert "`exists`" in fails(ParseError, "unknown instruction `exist`", 5, "st.weak x, 1",
                               "exist (x = 1)").hint


@pytest.mark.parametrize("cell, text", [
    ("lds.weak r0, x", "unknown instruction `lds`"), ("LD.weak r0, x", "unknown instruction `LD`"),
    ("mov r0, 1", "unknown instruction `mov`"), ("ld.acqure.gpu r0, x", "needs semantics"),
    ("ld.gpu.acquire r0, x", "needs semantics, got a scope"), ("ld r0, x", "register move"),
    ("ld.weak.foo r0, x", "unknown qualifier .foo"), ("fence.sc.gpu.sc", "out of place qualifier .sc"),
    ("atom.relaxed.gpu r0, x, 1", "needs an operation"), ("atom.relaxed.gpu.ad r0, x, 1", "needs an"),
    ("red.relaxed.gpu.cas x, 1", "needs an operation"), ("add.s32 r0, r1, 1", "qualifier .s32"),
    ("bar.sync 1", "expected `bar.cta.`"), ("bar.cta 1", "needs .sync or .arrive"),
    ("bar.cta.sync r0", "expected a constant"), ("ld..weak r0, x", "malformed instruction"),
    ("LC00: st.weak x, 1", "malformed instruction")])
def test_unknown_or_misplaced(cell, text):
    err = fails(ParseError, text, 4, cell)
    assert err.hint


def test_suggestions():
    assert "`ld`" in fails(ParseError, "unknown instruction", 4, "lds.weak r0, x").hint
    assert "`acquire`" in fails(ParseError, "needs semantics", 4, "ld.acqure.gpu r0, x").hint


@pytest.mark.parametrize("cell, text", [
    ("st.weak x, y", "expected a register (r0) or a constant"),
    ("ld.weak r0, r1", "expected a location name"), ("ld.weak x, x", "expected a register like r0"),
    ("st.weak x, 1, 2", "takes 2 operand(s), got 3"), ("st.weak x", "takes 2 operand(s), got 1"),
    ("st.weak x,, 1", "missing operand"), ("atom.relaxed.gpu.cas r0, x, 1", "takes 4 operand(s)"),
    ("beq r0, 1", "takes 3 operand(s)"), ("beq r0, x, LC00", "expected a register (r0) or a constant"),
    ("goto 5", "expected a label"), ("fence.sc.gpu r0", "takes 0 operand(s)"),
    ("bar.cta.sync 1, 2, 3, 4", "takes 1 to 3 operand(s)"), ("add r0, 1", "takes 3 operand(s)"),
    ("st.weak x, %r1", "expected a register")])
def test_operands(cell, text):
    fails(ParseError, text, 4, cell)


def test_operand_column():
    fails(ParseError, "`y` in `st.weak`", 4, "st.weak x, y", col=13)


def test_unknown_label():
    err = fails(SemanticError, "unknown label LC01", 5, "LC00:", "goto LC01")
    assert err.hint == "did you mean `LC00`? labels of thread P0: LC00"


def test_branch_to_other_threads_label():
    fails(SemanticError, "unknown label LC00", 5, "LC00: |", "| goto LC00")


def test_duplicate_label():
    err = fails(SemanticError, "label LC00 is defined twice", 6, "LC00:", "st.weak x, 1", "LC00:")
    assert "line 4" in err.hint


@pytest.mark.parametrize("decl, text", [("P1@cta 0,gpu 0 | P0@cta 0,gpu 0", "thread P1 out of order"),
                                        ("P0@cta 0,gpu 0 | P2@cta 0,gpu 0", "thread P2 out of order")])
def test_threads_out_of_order(decl, text):
    with pytest.raises(ParseError) as e:
        ptxmm.parse(f"PTX t\n{{ }}\n {decl} ;\n st.weak x, 1 ;\n", "t.litmus")
    assert text in e.value.message and e.value.pos.line == 3 and e.value.hint


def test_too_many_columns():
    fails(ParseError, "3 columns in a row of a test with 2 thread(s)", 4, "st.weak x, 1 | | st.weak x, 2")


def test_row_not_terminated():
    with pytest.raises(ParseError) as e:
        ptxmm.parse("PTX t\n{ }\n P0@cta 0,gpu 0 ;\n st.weak x, 1\nexists (x = 1)\n", "t.litmus")
    assert "not terminated" in e.value.message and e.value.pos.line == 4


def test_missing_header():
    with pytest.raises(ParseError) as e:
        ptxmm.parse("{ }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n", "t.litmus")
    assert "starts with `PTX" in e.value.message and e.value.pos.line == 1


@pytest.mark.parametrize("init, text", [
    ("P2:r0 = 1;", "unknown thread P2"), ("x = 1; x = 2;", "location x is declared twice"),
    ("P0:r0 = 1; 0:r0 = 2;", "register 0:r0 is initialised twice"),
    ("y @ surface aliases x; x = 0;", "the alias y names x, which is not declared before it"),
    ("y = x;", "the initialisation of y names x, which is not declared before it"),
    ("x = 0; x @ generic aliases x;", "location x is declared twice")])
def test_init_errors(init, text):
    fails(SemanticError, text, 2, "st.weak x, 1", init=init)


def test_init_register_must_be_a_register():
    fails(ParseError, "`q` is not a register", 2, "st.weak x, 1", init="P0:q = 1;")


@pytest.mark.parametrize("text, msg", [
    ("exists (P2:r0 = 1)", "unknown thread P2"), ("exists (P1:r5 = 1)", "thread P1 has no register r5"),
    ("exists (z = 1)", "the condition names unknown location z"),
    ("locations [z]\nexists (x = 1)", "the condition names unknown location z"),
    ("filter (P0:r9 = 1) exists (x = 1)", "thread P0 has no register r9")])
def test_condition_names(text, msg):
    fails(SemanticError, msg, 5, "st.weak x, 1 | ld.weak r0, x", cond=text)


def test_condition_syntax_error_is_located():
    with pytest.raises(ParseError) as e:
        parse("st.weak x, 1", cond="\n\nexists (x = = 1)")
    assert e.value.pos.line == 7 and e.value.pos.col == 13


# ----- the whole corpus, and proxies end to end ---------------------------------------------------


def test_every_dat3m_test_parses(dat3m):
    CORPUS = sorted(glob.glob(str(dat3m / "PTX" / "**" / "*.litmus"), recursive=True))
    progs = [ptxmm.load(f) for f in CORPUS]
    assert len(progs) == len(CORPUS) >= 180
    proxies = {i.proxy for p in progs for t in p.threads for i in t.instrs if hasattr(i, "proxy")}
    assert proxies == {"generic", "texture", "surface", "constant"}


PROXY_MP = """PTX Proxy-MP
{{ x = 0; flag = 0; s @ surface aliases x; }}
 P0@cta 0,gpu 0        | P1@cta 0,gpu 0            ;
 sust.weak s, 2        | ld.acquire.gpu r0, flag   ;
 {fence}               |                           ;
 st.release.gpu flag, 1 | ld.weak r1, x            ;
exists (P1:r0 == 1 /\\ P1:r1 != 2)
"""


def test_surface_message_passing_needs_the_proxy_fence():
    fenced = ptxmm.parse(PROXY_MP.format(fence="fence.proxy.surface"), "f.litmus")
    bare_ = ptxmm.parse(PROXY_MP.format(fence=""), "b.litmus")
    assert [bare(i) for i in fenced.threads[0].instrs][:2] == [
        Store(addr=Addr(Sym("s")), src=Imm(2), type="s64", proxy="surface"), ProxyFence(kind="surface")]
    assert ptxmm.check(fenced).holds is False
    assert ptxmm.check(bare_).holds is True


# ----- fuzz: mutations of valid tests give ptxmm errors, never another exception ------------------


SEEDS = [
    PROXY_MP.format(fence="fence.proxy.surface"),
    src("st.weak x, 1 | LC00:", "fence.sc.gpu | ld.acquire.gpu r0, y", "st.release.gpu y, 1 | "
        "bne r0, 1, LC00", "atom.acq_rel.sys.cas r1, x, 0, 2 | red.relaxed.gpu.add x, r0",
        "bar.cta.sync 1, r1, 2 | bar.cta.arrive 1", "tld.weak r2, t | add r3, r0, 0x10",
        init="x = 0; y = 0; t @ texture aliases x; c @ constant aliases t; z = &x; P1:r0 = &y;",
        cond="locations [x; P1:r0]\nfilter (P1:r0 = 1)\n~exists (P1:r0 == 1 /\\ ~(x = 2) \\/ y[0] > -1)"),
]
ALPHABET = list(";|,.:@&{}[]()~=<>-/\\*\"\n 0123456789xrPLC") + [
    "ld", "st", "weak", "gpu", "cta", "sys", "acquire", "release", "proxy", "alias", "aliases",
    "surface", "exists", "forall", "filter", "locations", "(*", "*)", "//", "r1", "LC00", "P1:"]


@st.composite
def mutants(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = min(len(text), i + draw(st.integers(0, 6)))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        piece = "".join(draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=3)))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + piece + text[i:]
        elif kind == "replace":
            text = text[:i] + piece + text[j:]
        else:
            text = text[:i] + text[i:j] * 2 + text[j:]
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutants())
def test_mutations_give_located_errors(text):
    try:
        ptxmm.parse(text, "m.litmus")
    except (ParseError, SemanticError, UnsupportedError) as e:
        assert e.pos is not None and e.pos.file == "m.litmus" and e.pos.line >= 1
        assert e.pos.line <= text.count("\n") + 1


@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_seeds_are_valid(seed):
    assert ptxmm.parse(seed, "s.litmus").threads
