"""The .ptx front end's proxy syntax (docs/ptx-proxies.md): texture/surface/constant alias
declarations, tex/suld/sust/sured/ld.const, and the proxy fences. These test the parser's output
(the IR), not verdicts.

Every instruction form in ``PTXAS_FORMS`` was assembled by ``ptxas -arch=sm_90`` (CUDA 13.0)
inside a kernel declaring ``.global .texref t; .global .surfref s; .const .u32 c;``;
``test_forms_assemble_with_ptxas`` repeats that check where ptxas is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxmm
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.ir.program import Addr, Imm, Load, Location, ProxyFence, Red, Reg, Store, Sym

DECLS = """.global .u32 x = 0;
.global .texref t aliases x;
.global .surfref s aliases x;
.const .u32 c aliases x;
"""
DECLS64 = DECLS.replace(".u32", ".u64")  # for the 64-bit forms: an access is as wide as its location
LINE = DECLS.count("\n") + 1  # the line of the thread in `_one`
# registers are undefined until written: the forms below read these, so they start at 0
REGS = (".reg .u32 %r0 = 0, %r1 = 0; .reg .s32 %c0 = 0; .reg .b64 %rd0 = 0, %rd1 = 0; "
        ".reg .pred %p0 = 0;")


def _one(text: str, extra: str = "", cond: str = ""):
    """Parse ``text`` as the only instruction(s) of thread T0; return its instructions."""
    decls = DECLS64 if re.search(r"[bsu]64\b", text) else DECLS
    p = ptxmm.parse(f"{decls}{extra}.thread T0 {{ {text};\n{REGS} }}\n{cond}", "p.ptx")
    return p.threads[0].instrs


def _err(text: str, extra: str = "", cond: str = "") -> PtxmmError:
    with pytest.raises(PtxmmError) as e:
        _one(text, extra, cond)
    return e.value


# ----- declarations ------------------------------------------------------------------------------


def test_proxy_alias_declarations():
    p = ptxmm.parse(DECLS + ".global .u32 y aliases x;\n.global .surfref s2 aliases y;\n"
                    ".thread T0 { ld.global.u32 %r0, [x]; }\n", "d.ptx")
    loc = {loc.name: loc for loc in p.locations}
    assert loc["t"] == Location("t", "global", "u32", 0, alias_of="x", proxy="texture",
                                pos=loc["t"].pos)
    assert loc["s"] == Location("s", "global", "u32", 0, alias_of="x", proxy="surface",
                                pos=loc["s"].pos)
    assert loc["c"] == Location("c", "global", "u32", 0, alias_of="x", proxy="constant",
                                pos=loc["c"].pos)
    assert (loc["t"].pos.line, loc["t"].pos.col) == (2, 17)
    assert (loc["y"].alias_of, loc["y"].proxy) == ("x", "generic")  # the existing generic alias
    assert (loc["s2"].alias_of, loc["s2"].proxy) == ("y", "surface")  # through a generic alias
    assert p.physical("s2") == "x" and p.virtual("s2") == "y" and p.virtual("t") == "x"


def test_reference_takes_its_targets_type():
    p = ptxmm.parse(".global .u64 w = 0;\n.global .texref t aliases w;\n"
                    ".const .u64 c aliases w;\n.thread T0 { ld.global.u64 %rd0, [w]; }\n")
    assert [(loc.name, loc.type) for loc in p.locations] == [("w", "u64"), ("t", "u64"),
                                                            ("c", "u64")]


@pytest.mark.parametrize("decl,cls,line,col,words", [
    (".global .texref t2;", UnsupportedError, 5, 17, ".texref t2 must alias a data location"),
    (".global .surfref s2 = 1;", UnsupportedError, 5, 18, ".surfref s2 must alias"),
    (".const .u32 c2 = 3;", UnsupportedError, 5, 13, ".const location c2 must alias"),
    (".shared .texref t2 aliases x;", ParseError, 5, 1, "declared in the .global state space"),
    (".const .surfref s2 aliases x;", ParseError, 5, 1, "declared in the .global state space"),
    (".const .pred c2 aliases x;", ParseError, 5, 8, "holds data, not a predicate"),
    (".global .u32 y aliases t;", SemanticError, 5, 14, "itself a texture alias"),
    (".const .u32 c2 aliases c;", SemanticError, 5, 13, "itself a constant alias"),
    (".shared .u32 sh = 0;\n.global .surfref s2 aliases sh;", SemanticError, 6, 18,
     "names .shared location sh"),
    (".global .texref t2 aliases nowhere;", SemanticError, 5, 17, "unknown location nowhere"),
])
def test_declaration_errors(decl, cls, line, col, words):
    e = _err("ld.global.u32 %r0, [x]", extra=decl + "\n")
    assert type(e) is cls, str(e)
    assert (e.pos.file, e.pos.line, e.pos.col) == ("p.ptx", line, col), str(e)
    assert words in e.message
    if cls is not SemanticError or "unknown" not in words:
        assert e.hint


def test_reference_registers_are_rejected():
    e = _err(".reg .texref %t")
    assert isinstance(e, UnsupportedError) and ".texref registers" in e.message
    assert (e.pos.line, e.pos.col) == (LINE, 19)


# ----- instructions ------------------------------------------------------------------------------


@pytest.mark.parametrize("text,cls,fields", [
    ("ld.const.u32 %r0, [c]", Load, {
        "dst": Reg("%r0"), "addr": Addr(Sym("c")), "type": "u32", "sem": "weak", "scope": None,
        "space": None, "proxy": "constant", "volatile": False}),
    ("ld.weak.const.ca.u64 %rd0, [c]", Load, {"type": "u64", "sem": "weak", "proxy": "constant"}),
    ("tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, {%c0}]", Load, {
        "dst": Reg("%r0"), "addr": Addr(Sym("t")), "type": "s32", "sem": "weak", "scope": None,
        "space": None, "proxy": "texture"}),
    ("tex.base.1d.v4.u32.s32 {%r5, _, _, _}, [t, {0}]", Load, {
        "dst": Reg("%r5"), "type": "u32", "proxy": "texture"}),
    ("tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, %c0]", Load, {"dst": Reg("%r0"), "proxy": "texture"}),
    ("suld.b.1d.b32.trap {%r0}, [s, {%c0}]", Load, {
        "dst": Reg("%r0"), "addr": Addr(Sym("s")), "type": "b32", "sem": "weak", "scope": None,
        "space": None, "proxy": "surface"}),
    ("suld.b.1d.cg.b64.zero %rd0, [s, %c0]", Load, {"dst": Reg("%rd0"), "type": "b64",
                                                   "proxy": "surface"}),
    ("suld.b.1d.b32.clamp {%r0}, [s, {0}]", Load, {"proxy": "surface"}),
    ("sust.b.1d.b32.trap [s, {%c0}], {%r1}", Store, {
        "addr": Addr(Sym("s")), "src": Reg("%r1"), "type": "b32", "sem": "weak", "scope": None,
        "space": None, "proxy": "surface"}),
    ("sust.b.1d.wt.b64.clamp [s, {0}], 5", Store, {"src": Imm(5), "type": "b64",
                                                   "proxy": "surface"}),
    ("sust.b.1d.b32.zero [s, {0}], {7}", Store, {"src": Imm(7), "proxy": "surface"}),
    ("sured.b.add.1d.u32.trap [s, {0}], %r1", Red, {
        "op": "add", "addr": Addr(Sym("s")), "src": Reg("%r1"), "type": "u32", "sem": "relaxed",
        "scope": "gpu", "space": None, "proxy": "surface"}),
    ("sured.b.min.1d.s32.clamp [s, {%c0}], -1", Red, {"op": "min", "src": Imm(-1), "type": "s32"}),
    ("sured.b.max.1d.u64.zero [s, {0}], %rd1", Red, {"op": "max", "type": "u64"}),
    ("sured.b.or.1d.b32.trap [s, {0}], 1", Red, {"op": "or", "type": "b32", "proxy": "surface"}),
    ("fence.proxy.alias", ProxyFence, {"kind": "alias"}),
    ("membar.proxy.alias", ProxyFence, {"kind": "alias"}),
    ("fence.proxy.texture", ProxyFence, {"kind": "texture"}),
    ("fence.proxy.surface", ProxyFence, {"kind": "surface"}),
    ("fence.proxy.constant", ProxyFence, {"kind": "constant"}),
    ("@!%p0 tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}]", Load, {"guard": (Reg("%p0"), True)}),
])
def test_proxy_instructions(text, cls, fields):
    (ins,) = _one(text)
    assert type(ins) is cls
    for k, v in fields.items():
        assert getattr(ins, k) == v, k
    assert ins.text == text
    assert (ins.pos.line, ins.pos.col) == (LINE, 14 + (len(text.split()[0]) + 1 if ins.guard else 0))


def test_instruction_text_is_its_own_on_a_shared_line():
    a, b = _one("fence.proxy.texture; fence.proxy.surface")
    assert (a.text, b.text) == ("fence.proxy.texture", "fence.proxy.surface")
    assert (a.pos.col, b.pos.col) == (14, 35)


def test_register_coordinate_set_to_zero():
    mov, ld = _one("mov.u32 %c, 0; suld.b.1d.b32.trap {%r0}, [s, {%c}]")
    assert ld.proxy == "surface" and ld.addr == Addr(Sym("s"))


def test_tex_value_goes_to_the_first_destination_only():
    tex, st = _one("tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, {0}]; st.global.u32 [x], %r0",
                   cond="exists (T0:%r0 == 1)")
    assert tex.dst == Reg("%r0") and st.src == Reg("%r0")


# ----- rejections: message, kind, line and column -------------------------------------------------

COL = 14  # the column of the instruction in `_one`


@pytest.mark.parametrize("text,cls,at,words", [
    # geometries, vectors and formats beyond the litmus form
    ("tex.2d.v4.s32.s32 {%r0, _, _, _}, [t, {0, 0}]", UnsupportedError, "2d", "2d geometry"),
    ("suld.b.a1d.b32.trap {%r0}, [s, {0, 0}]", UnsupportedError, "a1d", "a1d geometry"),
    ("sust.b.3d.b32.trap [s, {0, 0, 0, 0}], {%r0}", UnsupportedError, "3d", "3d geometry"),
    ("sured.b.add.2d.u32.trap [s, {0, 0}], 1", UnsupportedError, "2d", "2d geometry"),
    ("suld.b.b32.trap {%r0}, [s, {0}]", ParseError, "b32", "needs a geometry"),
    ("suld.b.1d.v2.b32.trap {%r0, %r1}, [s, {0}]", UnsupportedError, "v2", "vector surface"),
    ("suld.b.1d.b8.trap {%r0}, [s, {0}]", UnsupportedError, "b8", "sub-word"),
    ("suld.p.1d.b32.trap {%r0}, [s, {0}]", UnsupportedError, "p", "formatted surface"),
    ("sust.p.1d.b32.trap [s, {0}], {%r0}", UnsupportedError, "p", "formatted surface"),
    ("tex.1d.v4.f32.s32 {%r0, _, _, _}, [t, {0}]", UnsupportedError, "f32", "data type .f32"),
    ("tex.1d.v4.s32.f32 {%r0, _, _, _}, [t, {%f0}]", UnsupportedError, "f32", "coordinates (.f32)"),
    ("tex.level.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}]", UnsupportedError, "level", "mipmap"),
    ("tld4.r.2d.v4.s32.f32 {%r0, %r1, %r2, %r3}, [t, {%f0, %f1}]", UnsupportedError, None,
     "tld4"),
    # what ptxas rejects
    ("tex.1d.s32.s32 %r0, [t, {0}]", ParseError, "s32.s32", "returns a .v4 vector"),
    ("tex.1d.v4.s32.u32 {%r0, _, _, _}, [t, {0}]", ParseError, "u32", "coordinates are .s32"),
    ("suld.b.1d.b32 {%r0}, [s, {0}]", ParseError, None, "needs a clamp mode"),
    ("suld.b.1d.b32.wrap {%r0}, [s, {0}]", ParseError, "wrap", "needs a clamp mode"),
    ("suld.b.1d.u32.trap {%r0}, [s, {0}]", ParseError, "u32", "unknown data type"),
    ("suld.b.1d.wb.b32.trap {%r0}, [s, {0}]", ParseError, "wb", "unknown data type"),
    ("sust.b.1d.ca.b32.trap [s, {0}], {%r0}", ParseError, "ca", "unknown data type"),
    ("sured.b.xor.1d.b32.trap [s, {0}], %r0", ParseError, "xor", "unknown sured operation"),
    ("sured.b.and.1d.u32.trap [s, {0}], %r0", ParseError, "u32", "sured.and takes .b32"),
    ("sured.b.add.1d.u32.trap [s, {0}], {%r0}", ParseError, None, "must be a register or imm"),
    ("ld.relaxed.gpu.const.u32 %r0, [c]", ParseError, "relaxed", "cannot be applied to the .const"),
    ("ld.acquire.gpu.const.u32 %r0, [c]", ParseError, "acquire", "cannot be applied to the .const"),
    ("ld.volatile.const.u32 %r0, [c]", ParseError, "volatile", "cannot be applied to the .const"),
    ("st.const.u32 [c], 1", ParseError, "const", "cannot write the constant state space"),
    ("suatom.add.u32 %r0, [s], 1", ParseError, None, "`suatom` is not a PTX instruction"),
    ("tld.weak %r0, [t]", ParseError, None, "`tld` is not a PTX instruction"),
    ("membar.proxy.texture", ParseError, "texture", "membar.proxy.texture is not PTX"),
    # operand shapes
    ("tex.1d.v4.s32.s32 {%r0, _, _}, [t, {0}]", ParseError, None, "vector of four registers"),
    ("tex.1d.v4.s32.s32 {_, %r0, _, _}, [t, {0}]", ParseError, None, "first destination"),
    ("tex.1d.v4.s32.s32 {%r0, %r0, _, _}, [t, {0}]", UnsupportedError, None, "both the first"),
    ("tex.1d.v4.s32.s32 {%r0, _, _, _}, [t]", ParseError, None, "texture/surface operand"),
    ("suld.b.1d.b32.trap {%r0}, [s, {0, 0}]", ParseError, None, "takes one coordinate, got 2"),
    ("suld.b.1d.b32.trap {%r0}, [s, {x}]", ParseError, None, "coordinate must be a register"),
    ("suld.b.1d.b32.trap {%r0}, [%rd0, {0}]", UnsupportedError, None, "register handle"),
    ("ld.const.u32 %r0, [%rd0]", UnsupportedError, None, "ld.const through a register"),
    ("ld.global.u32 %r0, [x, {0}]", ParseError, None, "must be a memory operand"),
    # coordinates other than 0
    ("tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {1}]", UnsupportedError, None, "coordinate 1"),
    ("sust.b.1d.b32.trap [s, {-4}], {%r0}", UnsupportedError, None, "coordinate -4"),
    # proxy fences
    ("fence.proxy.async::generic.release.sync_restrict::shared::cluster.cluster", ParseError,
     "sync_restrict::shared::cluster", "needs .sync_restrict::shared::cta"),
    ("fence.proxy.tensormap::async.release.gpu", UnsupportedError, "tensormap::async", "async-proxy"),
    ("fence.proxy.textur", ParseError, "textur", "unknown proxy kind .textur"),
    ("fence.proxy.generic", ParseError, "generic", "unknown proxy kind .generic"),
    ("membar.proxy.alais", ParseError, "alais", "unknown proxy kind .alais"),
    ("fence.proxy", ParseError, None, "needs a proxy kind"),
    ("fence.proxy.texture.gpu", ParseError, "gpu", "unexpected qualifier .gpu"),
])
def test_rejections(text, cls, at, words):
    e = _err(text)
    assert type(e) is cls, str(e)
    assert (e.pos.file, e.pos.line) == ("p.ptx", LINE), str(e)
    mnemonic = text.split()[0]
    if at is None:  # on the mnemonic (operand errors), or its end (a missing qualifier)
        assert e.pos.col in (COL, COL + len(mnemonic)), str(e)
    else:
        assert e.pos.col == COL + mnemonic.rindex("." + at) + 1, str(e)
    assert words in e.message, str(e)
    assert e.hint


def test_typo_in_proxy_kind_suggests():
    assert "did you mean .texture?" in _err("fence.proxy.textur").hint
    assert "did you mean .alias?" in _err("membar.proxy.alais").hint


def test_async_fence_hint_names_what_is_modelled():
    e = _err("fence.proxy.tensormap::async.release.gpu")
    assert "fence.proxy.alias" in e.hint and "fence.proxy.async{.global" in e.hint
    assert "fence.proxy.tensormap::generic.acquire.scope [addr], 128" in e.hint
    assert "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster" in e.hint
    assert "not modelled yet" in e.hint  # fence.proxy.async itself is: tests/hopper/test_examples.py


@pytest.mark.parametrize("text,words,hint", [
    ("tex.1d.v4.s32.s32 {%r0, _, _, _}, [x, {0}]", "x is not a texture alias",
     "`.global .texref x_tex aliases x;`"),
    ("suld.b.1d.b32.trap {%r0}, [x, {0}]", "x is not a surface alias",
     "`.global .surfref x_sur aliases x;`"),
    ("ld.const.u32 %r0, [x]", "x is not a constant alias", "`.const .u32 x_con aliases x;`"),
    ("suld.b.1d.b32.trap {%r0}, [t, {0}]", "t is a texture alias", "tex.1d.v4.s32.s32"),
    ("tex.1d.v4.s32.s32 {%r0, _, _, _}, [s, {0}]", "s is a surface alias", "suld.b.1d.b32"),
    ("ld.global.u32 %r0, [c]", "c is a constant alias", "ld.const.u32 %r0, [c]"),
    ("ld.u32 %r0, [t]", "t is a texture alias", "tex.1d"),
    ("st.global.u32 [s], 1", "s is a surface alias", "sust.b.1d"),
    ("atom.add.u32 %r0, [s], 1", "s is a surface alias", "suld"),
    ("red.add.u32 [c], 1", "c is a constant alias", "ld.const"),
])
def test_access_through_the_wrong_proxy(text, words, hint):
    """ptxas takes a .texref only in tex, a .surfref only in suld/sust/sured, a .const name only
    in ld.const; a typo'd name never silently changes the proxy."""
    e = _err(text)
    assert isinstance(e, SemanticError) and words in e.message and hint in e.hint, str(e)
    assert (e.pos.line, e.pos.col) == (LINE, COL)


def test_address_of_a_proxy_alias_is_not_a_value():
    e = _err("mov.u64 %rd0, t")
    assert isinstance(e, UnsupportedError) and "address of texture alias t" in e.message
    assert (e.pos.line, e.pos.col) == (LINE, COL)


def test_register_coordinate_must_stay_zero():
    e = _err("mov.u32 %c, 1; suld.b.1d.b32.trap {%r0}, [s, {%c}]")
    assert isinstance(e, UnsupportedError) and "coordinate %c" in e.message
    assert (e.pos.line, e.pos.col) == (LINE, 29) and "mov.u32 %c, 1" in e.hint
    e = _err("ld.global.u32 %c, [x]; tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, %c]")
    assert isinstance(e, UnsupportedError) and "may be non-zero" in e.message


@pytest.mark.parametrize("text,cond,reader", [
    ("add.u32 %r9, %r1, 1", "", "`add.u32 %r9, %r1, 1`"),
    ("@%r1 bra L; L: ret", "", "`@%r1 bra L`"),
    ("st.global.u32 [x], %r1", "", "`st.global.u32 [x], %r1`"),
    ("suld.b.1d.b32.trap {%r5}, [s, {%r1}]", "", "`suld.b.1d.b32.trap {%r5}, [s, {%r1}]`"),
    ("ret", "exists (T0:%r1 == 0)", "the condition"),
    ("ret", "exists (0:%r1 == 0)", "the condition"),
])
def test_other_tex_channels_are_never_read(text, cond, reader):
    """d1..d3 of tex depend on the texture's format, which a litmus test does not declare."""
    e = _err(f"tex.1d.v4.s32.s32 {{%r0, %r1, _, _}}, [t, {{0}}]; {text}", cond=cond)
    assert isinstance(e, UnsupportedError), str(e)
    assert e.message.startswith(f"{reader} reads %r1, a channel of `tex.1d.v4.s32.s32")
    assert e.pos.line == LINE and "`_`" in e.hint


# ----- the accepted forms are real PTX ------------------------------------------------------------

PTXAS_FORMS = [
    "ld.const.u32 %r0, [c];",
    "ld.weak.const.ca.u32 %r0, [c];",
    "ld.const.u64 %rd0, [c];",
    "tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, {%c0}];",
    "tex.1d.v4.u32.s32 {%r0, _, _, _}, [t, {0}];",
    "tex.base.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, {0}];",
    "tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, %c0];",
    "suld.b.1d.b32.trap {%r0}, [s, {%c0}];",
    "suld.b.1d.b32.clamp %r0, [s, %c0];",
    "suld.b.1d.cv.b32.zero {%r0}, [s, {0}];",
    "suld.b.1d.cg.b64.trap {%rd0}, [s, {0}];",
    "sust.b.1d.b32.trap [s, {%c0}], {%r0};",
    "sust.b.1d.wt.b32.zero [s, {0}], %r0;",
    "sust.b.1d.cg.b64.clamp [s, {0}], {%rd0};",
    "sust.b.1d.b32.trap [s, {0}], {5};",
    "sured.b.add.1d.u32.trap [s, {0}], %r0;",
    "sured.b.add.1d.s32.clamp [s, {0}], 1;",
    "sured.b.add.1d.u64.zero [s, {0}], %rd0;",
    "sured.b.min.1d.u32.trap [s, {0}], %r0;",
    "sured.b.max.1d.s32.trap [s, {0}], %r0;",
    "sured.b.and.1d.b32.trap [s, {0}], %r0;",
    "sured.b.or.1d.b32.trap [s, {0}], %r0;",
    "fence.proxy.alias;",
    "membar.proxy.alias;",
    "@%p0 tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}];",
]


@pytest.mark.parametrize("form", PTXAS_FORMS)
def test_forms_parse(form):
    (ins,) = _one(form.rstrip(";"))
    assert ins.text == form.rstrip(";")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_forms_assemble_with_ptxas(tmp_path):
    body = "\n  ".join(PTXAS_FORMS)
    src = f""".version 8.0
.target sm_90
.address_size 64
.global .texref t;
.global .surfref s;
.const .u32 c;
.visible .entry k()
{{
  .reg .u32 %r<4>;
  .reg .s32 %c<1>;
  .reg .b64 %rd<1>;
  .reg .pred %p<1>;
  {body}
  ret;
}}
"""
    (tmp_path / "k.ptx").write_text(src)
    r = subprocess.run(["ptxas", "-arch=sm_90", str(tmp_path / "k.ptx"), "-o",
                        str(tmp_path / "k.cubin")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


# ----- robustness --------------------------------------------------------------------------------

PROXY_PROGRAM = DECLS + """.thread T0 {
  .reg .s32 %c0 = 0;
  sust.b.1d.b32.trap [s, {%c0}], {1};
  fence.proxy.surface;
  tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}];
  ld.const.u32 %r1, [c];
  sured.b.add.1d.u32.trap [s, %c0], %r1;
}
exists (T0:%r0 == 0)
"""
_TOKENS = ["{", "}", "[", "]", ",", ";", "_", "%r0", "%c0", "0", "1", "t", "s", "c", "x",
           "aliases", ".global", ".const", ".texref", ".surfref", ".u32", "tex.1d.v4.s32.s32",
           "suld.b.1d.b32.trap", "sust.b.1d.b32.trap", "sured.b.add.1d.u32.trap", "ld.const.u32",
           "fence.proxy.texture", "fence.proxy.async", "tld4", ".thread", "T0"]


def test_proxy_program_parses():
    p = ptxmm.parse(PROXY_PROGRAM, "proxy.ptx")
    assert [(type(i).__name__, getattr(i, "proxy", None) or getattr(i, "kind", None))
            for i in p.threads[0].instrs] == [("Store", "surface"), ("ProxyFence", "surface"),
                                              ("Load", "texture"), ("Load", "constant"),
                                              ("Red", "surface")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_proxy_near_misses_never_traceback(data):
    """Delete, duplicate or replace one piece of a valid proxy program: a typed error or a
    program, never a traceback."""
    src = PROXY_PROGRAM
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
        ptxmm.parse(src, "m.ptx")
    except PtxmmError as e:
        assert e.pos is None or e.pos.file == "m.ptx"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_TOKENS), max_size=40))
def test_proxy_token_soup_never_tracebacks(tokens):
    try:
        ptxmm.parse(DECLS + ".thread T0 { " + " ".join(tokens))
    except PtxmmError:
        pass
