"""The .ptx front end: what parses, what is rejected, and that bad input never gives a traceback."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT
from support.grammar_gen import valid_ptx

import ptxmm
from ptxmm.errors import ParseError, PtxmmError
from ptxmm.ir.program import (
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Cmp,
    Fence,
    Imm,
    Label,
    Load,
    MemRef,
    Mov,
    ProxyFence,
    Red,
    Reg,
    RegRef,
    Ret,
    Selp,
    Setp,
    Store,
    Sym,
)
from ptxmm.syntax.decode import DECODERS as _HANDLERS
from ptxmm.syntax.decode import KNOWN

MP = (ROOT / "examples" / "mp-release-acquire.ptx").read_text()


def test_parses_mp():
    p = ptxmm.parse(MP, "mp.ptx")
    assert p.name == "MP+release+acquire" and p.expect is False
    assert [t.name for t in p.threads] == ["T0", "T1"]
    st_rel = p.threads[0].instrs[1]
    assert (st_rel.opcode, st_rel.sem, st_rel.scope, st_rel.space, st_rel.type) == (
        "store", "release", "gpu", "global", "u32")
    ld = p.threads[1].instrs[1]
    assert (ld.opcode, ld.sem, ld.scope) == ("load", "weak", None)
    assert p.threads[1].placement.cta == 1


@pytest.mark.parametrize("text,expect", [
    ("ld.u32 %r0, [x]", (Load, "weak", None, False)),
    ("ld.weak.global.u32 %r0, [x]", (Load, "weak", None, False)),
    ("ld.relaxed.cluster.shared::cta.u32 %r0, [s]", (Load, "relaxed", "cluster", False)),
    ("ld.volatile.global.u32 %r0, [x]", (Load, "relaxed", "sys", True)),
    ("ld.mmio.relaxed.sys.global.u32 %r0, [x]", (Load, "relaxed", "sys", True)),
    ("ld.global.ca.u32 %r0, [x]", (Load, "weak", None, False)),
    ("atom.add.u32 %r0, [x], 1", (Atom, "relaxed", "gpu", False)),
    ("atom.acq_rel.sys.global.cas.b32 %r0, [x], 0, 1", (Atom, "acq_rel", "sys", False)),
    ("red.release.gpu.global.add.u32 [x], 1", (Red, "release", "gpu", False)),
    ("fence.sc.cta", (Fence, "sc", "cta", False)),
    ("fence.gpu", (Fence, "acq_rel", "gpu", False)),
    ("membar.gl", (Fence, "sc", "gpu", False)),
    ("fence.acquire.cluster", (Fence, "acquire", "cluster", False)),
])
def test_qualifiers(text, expect):
    p = ptxmm.parse(f".global .u32 x = 0;\n.shared .u32 s = 0;\n.thread T0 {{ {text}; }}\n")
    i = p.threads[0].instrs[0]
    assert (type(i), i.sem, i.scope, getattr(i, "volatile", False)) == expect


@pytest.mark.parametrize("text,cls,fields", [
    ("ld.relaxed.gpu.shared.u64 %rd0, [%rd1]", Load, {
        "dst": Reg("%rd0"), "addr": Addr(Reg("%rd1")), "type": "u64", "sem": "relaxed", "scope": "gpu",
        "space": "shared", "volatile": False}),
    ("ld.global.u32 %r0, [x]", Load, {"addr": Addr(Sym("x")), "sem": "weak", "scope": None}),
    ("st.relaxed.gpu.global.u32 [x], %r1", Store, {"src": Reg("%r1"), "sem": "relaxed"}),
    ("st.volatile.u32 [x], 2", Store, {"src": Imm(2), "sem": "relaxed", "scope": "sys", "volatile": True,
                                       "space": None}),
    ("atom.exch.b32 %r0, [x], 3", Atom, {"op": "exch", "srcs": (Imm(3),), "sem": "relaxed", "scope": "gpu"}),
    ("atom.acquire.cta.global.cas.b32 %r0, [x], 0, %r1", Atom, {
        "op": "cas", "dst": Reg("%r0"), "addr": Addr(Sym("x")), "srcs": (Imm(0), Reg("%r1")),
        "type": "b32", "sem": "acquire", "scope": "cta", "space": "global"}),
    ("atom.gpu.max.s32 %r0, [x], -1", Atom, {"op": "max", "type": "s32", "sem": "relaxed", "scope": "gpu"}),
    ("red.relaxed.sys.global.min.s32 [x], -2", Red, {
        "op": "min", "addr": Addr(Sym("x")), "src": Imm(-2), "type": "s32", "sem": "relaxed",
        "scope": "sys", "space": "global"}),
    ("red.add.u32 [x], 1", Red, {"op": "add", "sem": "relaxed", "scope": "gpu"}),
    ("fence.release.cluster", Fence, {"sem": "release", "scope": "cluster"}),
    ("membar.sys", Fence, {"sem": "sc", "scope": "sys"}),
    ("fence.proxy.alias", ProxyFence, {"kind": "alias"}),
    ("membar.proxy.alias", ProxyFence, {"kind": "alias"}),
    ("bar.sync 1, 64", Barrier, {"kind": "sync", "ids": (Imm(1),), "count": Imm(64)}),
    ("barrier.cta.sync.aligned 0", Barrier, {"kind": "sync", "ids": (Imm(0),), "count": None}),
    ("bar.arrive 2, %r1", Barrier, {"kind": "arrive", "ids": (Imm(2),), "count": Reg("%r1")}),
    ("mov.u32 %r0, 7", Mov, {"dst": Reg("%r0"), "src": Imm(7), "type": "u32"}),
    ("mov.u64 %rd0, x", Mov, {"src": Sym("x"), "type": "u64"}),
    ("add.s32 %r0, %r1, -1", Alu, {"op": "add", "srcs": (Reg("%r1"), Imm(-1)), "type": "s32"}),
    ("mul.lo.u32 %r0, %r1, 3", Alu, {"op": "mul", "type": "u32"}),
    ("neg.s32 %r0, %r1", Alu, {"op": "neg", "dst": Reg("%r0"), "srcs": (Reg("%r1"),)}),
    ("max.u32 %r0, %r1, 2", Alu, {"op": "max", "type": "u32"}),  # signedness is in the type
    ("min.s32 %r0, %r1, 2", Alu, {"op": "min", "type": "s32"}),
    ("setp.lt.s32 %p0, %r1, 0", Setp, {"cmp": "lt", "dst": Reg("%p0"), "a": Reg("%r1"), "b": Imm(0),
                                      "type": "s32"}),
    ("setp.lt.u32 %p0, %r1, 0", Setp, {"cmp": "lt", "type": "u32"}),
    ("setp.hs.u32 %p0, %r1, 0", Setp, {"cmp": "hs", "type": "u32"}),
    ("selp.b32 %r0, 1, 2, %p0", Selp, {"dst": Reg("%r0"), "a": Imm(1), "b": Imm(2), "p": Reg("%p0"),
                                       "type": "b32"}),
    ("bra.uni L", Branch, {"target": "L", "guard": None}),
    ("@!%p0 bra L", Branch, {"target": "L", "guard": (Reg("%p0"), True)}),
    ("@%p1 st.global.u32 [x], 1", Store, {"guard": (Reg("%p1"), False)}),
    ("ret", Ret, {}),
    ("exit", Ret, {}),
])
def test_typed_instructions(text, cls, fields):
    # registers are undefined until written: the forms read these, so they start at 0
    regs = ".reg .u32 %r1 = 0; .reg .b64 %rd1 = 0; .reg .pred %p0 = 0, %p1 = 0;"
    p = ptxmm.parse(f".global .u32 x = 0;\n.thread T0 {{ {text}; L:\n{regs} }}\n")
    i = p.threads[0].instrs[0]
    assert type(i) is cls
    for k, v in fields.items():
        assert getattr(i, k) == v, k
    assert p.threads[0].instrs[1] == Label(name="L", pos=p.threads[0].instrs[1].pos, text="L:")


def test_every_known_instruction_has_a_handler():
    assert set(KNOWN) == set(_HANDLERS)


def test_reg_declarations():
    p = ptxmm.parse(".global .u32 x = 0;\n.thread T0 { .reg .s32 %r<3>; .reg .pred %p, %q<2>;\n"
                    "  .reg .b64 %rd<1>; L: bra L; }\n.thread T1 { ret; }\n")
    t = p.threads[0]
    assert t.reg_types == (("%r0", "s32"), ("%r1", "s32"), ("%r2", "s32"), ("%p", "pred"),
                           ("%q0", "pred"), ("%q1", "pred"), ("%rd0", "b64"))
    assert isinstance(t.instrs[0], Label) and t.instrs[0].name == "L"
    assert isinstance(t.instrs[1], Branch) and t.instrs[1].target == "L"
    assert p.threads[1].reg_types == ()


@pytest.mark.parametrize("text,at,words", [
    ("ld.acquire.u32 %r0, [x]", "u32", "needs a scope"),
    ("ld.relaxed.gpu.weak.u32 %r0, [x]", "weak", "a second semantics"),
    ("ld.global.relaxed.gpu.u32 %r0, [x]", "relaxed", "out of place"),
    ("st.acquire.gpu.u32 [x], 1", "acquire", "not a valid semantics"),
    ("ld.weak.gpu.u32 %r0, [x]", "gpu", "weak access takes no scope"),
    ("ld.volatile.gpu.u32 %r0, [x]", "gpu", "takes no scope"),
    ("ld.global.v2.u32 %r0, [x]", "v2", "vector"),
    ("ld.global.nc.u32 %r0, [x]", "nc", "outside the memory model"),
    ("atom.relaxed.gpu.global.sub.u32 %r0, [x], 1", "sub", "unknown atom operation"),
    ("fence.sc", None, "needs a scope"),
    ("lds.u32 %r0, [x]", "lds", "unknown instruction"),
])
def test_rejections_name_the_column(text, at, words):
    src = f".global .u32 x = 0;\n.thread T0 {{ {text}; }}\n"
    with pytest.raises(PtxmmError) as e:
        ptxmm.parse(src, "t.ptx")
    assert e.value.pos.file == "t.ptx" and e.value.pos.line == 2
    first = len(".thread T0 { ") + 1
    want = first + (text.index(at) if at else len(text.split()[0]))
    assert e.value.pos.col == want, str(e.value)
    assert words in e.value.message
    assert e.value.hint


def test_unknown_instruction_suggests():
    with pytest.raises(ParseError) as e:  # not PTX: a syntax error, not "not supported yet"
        ptxmm.parse(".global .u32 x = 0;\n.thread T0 { lds.u32 %r0, [x]; }\n")
    assert "ld" in e.value.hint


def test_syntax_error_position():
    with pytest.raises(ParseError) as e:
        ptxmm.parse(".global .u32 x = 0;\n.thread T0 {\n  ld.global.u32 %r0 [x];\n}\n", "f.ptx")
    assert str(e.value).startswith("f.ptx:3:21: syntax error")


def test_condition_forms():
    p = ptxmm.parse(".global .u32 x = 0;\n.thread T0 { ld.global.u32 %r0, [x]; }\n"
                    "exists (T0:%r0 = 1 /\\ ~(x == 2) \\/ 0:%r0 != 0)")
    assert p.condition.quantifier == "exists"
    e = p.condition.expr
    assert isinstance(e.args[0].args[0], Cmp) and e.args[0].args[0].lhs == RegRef("T0", "%r0")
    assert e.args[0].args[1].arg.lhs == MemRef("x")


@pytest.mark.parametrize("src,words", [
    (".thread T0 { ld.global.u32 %r0, [z]; }", "unknown location z"),
    (".global .u32 x = 0;\n.thread T0 { bra L; }", "unknown label L"),
    (".global .u32 x = 0;", "no threads"),
    (".global .u32 x = 0;\n.global .u32 x = 1;\n.thread T0 { }", "declared twice"),
    (".global .u32 x = 0;\n.thread T0 { }\nexists (T9:%r0 == 1)", "unknown thread T9"),
    (".global .u32 x = 0;\n.thread T0 { }\nexists (z == 1)", "unknown location z"),
    (".global .u32 x = 0;\n.expect maybe\n.thread T0 { }\nexists (x == 0)", "unknown expectation"),
])
def test_semantic_errors(src, words):
    with pytest.raises(PtxmmError) as e:
        ptxmm.parse(src + "\n")
    assert words in str(e.value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_garbage_never_tracebacks(text):
    try:
        ptxmm.parse(text, "g.ptx")
    except PtxmmError as e:
        assert e.pos is None or e.pos.file == "g.ptx"


_TOKENS = ["ld", "st", ".global", ".u32", "%r0", "[x]", ",", ";", "{", "}", ".thread", "T0",
           "exists", "(", ")", "==", "1", "fence.sc.gpu", "@%p0", "bra", "L:", ".relaxed", ".gpu",
           "atom.add.u32", "x", "&&", "aliases", ".cta", "0", "-", "~exists", ".expect", "allowed"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_TOKENS), max_size=40))
def test_token_soup_never_tracebacks(tokens):
    try:
        ptxmm.parse(" ".join(tokens))
    except PtxmmError:
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_near_misses_never_traceback(data):
    """Delete, duplicate or replace one piece of a valid program: typed error or a program."""
    src = MP
    i = data.draw(st.integers(0, len(src) - 1))
    j = data.draw(st.integers(i, min(len(src), i + 12)))
    how = data.draw(st.sampled_from(["delete", "dup", "replace"]))
    if how == "delete":
        src = src[:i] + src[j:]
    elif how == "dup":
        src = src[:j] + src[i:j] + src[j:]
    else:
        src = src[:i] + data.draw(st.sampled_from(_TOKENS)) + src[j:]
    try:
        p = ptxmm.parse(src, "m.ptx")
    except PtxmmError:
        return
    ptxmm.check(p, flags=False)  # whatever parses can be checked


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_ptx())
def test_generated_programs_parse(src):
    p = ptxmm.parse(src, "t.ptx")
    assert 1 <= len(p.threads) <= 3


def test_integer_constants_follow_ptx():
    src = """.global .u32 x = 010;
.thread T0 .cta 0 { ld.global.u32 %r1, [x]; st.global.u32 [x], 0x1f; }
exists (T0:%r1 == 8 && x == 037)"""
    res = ptxmm.check(ptxmm.parse(src, "c.ptx"))
    assert res.holds
    with pytest.raises(ParseError, match="malformed integer constant `09`") as e:
        ptxmm.parse(src.replace("0x1f", "09"), "c.ptx")
    assert (e.value.pos.line, e.value.pos.col) == (2, 64)
