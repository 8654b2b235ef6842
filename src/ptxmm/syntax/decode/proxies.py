"""Decoders of the texture and surface instructions ``tex``, ``tld4``, ``suld``, ``sust`` and
``sured``, in their litmus-sized forms (one element per location; docs/ptx-proxies.md)."""

from __future__ import annotations

from ...errors import ParseError, UnsupportedError
from ...ir.program import (
    Addr,
    Imm,
    Instruction,
    Load,
    Operand,
    Red,
    Reg,
    Store,
    Sym,
)
from .operands import SINK, Handle, operands
from .qualifiers import Quals
from .registry import register

# These accepted forms were assembled by ``ptxas -arch=sm_90`` (CUDA 13.0, ``.version 8.0``; 64-bit
# ``sured.b.min/max`` need ``.version 8.1``) in a kernel declaring
# ``.global .texref t; .global .surfref s; .const .u32 c;`` (tests/syntax/test_proxy_syntax.py repeats
# the check where ptxas is installed)::
#
#     ld.const.u32 %r0, [c];                  ld.weak.const.ca.u32 %r0, [c];
#     tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, {%c0}];
#     tex.base.1d.v4.u32.s32 {%r0, _, _, _}, [t, {0}];
#     tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, %c0];
#     suld.b.1d.b32.trap {%r0}, [s, {%c0}];   suld.b.1d.cg.b64.zero %rd0, [s, %c0];
#     sust.b.1d.b32.clamp [s, {0}], {%r0};    sust.b.1d.wt.b32.trap [s, {0}], 5;
#     sured.b.add.1d.u32.trap [s, {0}], %r0;  sured.b.and.1d.b32.zero [s, {0}], 1;
#     fence.proxy.alias;                      membar.proxy.alias;
#
# ptxas rejects, and so do we: ``ld.relaxed``/``ld.acquire``/``ld.volatile`` on ``.const``,
# ``st.const``, ``tex.1d.s32.s32`` (needs .v4), ``tex.1d.v4.s32.u32`` (integer coordinates are
# .s32), ``suld``/``sust``/``sured`` without a clamp mode, ``suld.p``, ``sust.b.1d.u32``, ``sust``
# with ``.ca``, ``suld`` with ``.wb``, ``sured.b.xor``/``.inc`` (ptxas crashes), ``sured.b.and.u32``,
# ``sured.b.add.s64``, a bare immediate coordinate ``[s, 0]``, ``suatom`` (no such instruction).

GEOMS = {"1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms"}
CLAMP = {"trap", "clamp", "zero"}
SULD_COPS = {"ca", "cg", "cs", "cv"}
SUST_COPS = {"wb", "cg", "cs", "wt"}
SURED_TYPES = {"add": {"u32", "u64", "s32"}, "min": {"u32", "s32", "u64", "s64"},
               "max": {"u32", "s32", "u64", "s64"}, "and": {"b32"}, "or": {"b32"}}

# ----- texture and surface instructions (litmus-sized: one element per location) -------------------


def _geom(q: Quals, form: str) -> None:
    g = q.take_if({"1d"})
    if g is None and q.peek() in GEOMS:
        q.fail(f"{q.peek()} geometry in `{q.mnemonic}`",
               "a litmus location is one word: use the .1d form at coordinate 0", unsupported=True)
    if g is None:
        q.fail(f"`{q.mnemonic.split('.')[0]}` needs a geometry", f"expected form: {form}")


def _clamp(q: Quals, form: str) -> None:
    if q.take_if(CLAMP) is None:
        q.fail(f"`{q.mnemonic.split('.')[0]}` needs a clamp mode .trap, .clamp or .zero"
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")


def _handle(h: Handle, q: Quals, form: str) -> Addr:
    """The reference operand of tex/suld/sust/sured: a name and one coordinate, which must be 0
    (an immediate here; ptx.py checks that a register coordinate always holds 0)."""
    if not isinstance(h.addr.base, Sym):
        raise UnsupportedError(f"`{q.mnemonic}` through a register handle", q.pos,
                               "name the texture/surface reference declared with `aliases`")
    if len(h.coords) != 1:
        raise ParseError(f"a .1d access takes one coordinate, got {len(h.coords)}", q.pos,
                         f"expected form: {form}")
    (x,) = h.coords
    if not isinstance(x, (Reg, Imm)) or x == SINK:
        raise ParseError("the coordinate must be a register or an integer", q.pos,
                         f"expected form: {form}")
    if isinstance(x, Imm) and x.value != 0:
        raise UnsupportedError(f"coordinate {x.value} in `{q.mnemonic}`", q.pos,
                               "a litmus location is one element: access coordinate 0, and "
                               "declare a separate location for each word")
    return h.addr


def _tex(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``tex{.base}.1d.v4.{s32,u32}.s32 {d0, d1, d2, d3}, [t, {x}]``: one weak read through the
    texture proxy into d0; d1..d3 (``_`` or registers) get values the test may not read."""
    form = "tex{.base}.1d.v4.dtype.s32 {d, _, _, _}, [t, {x}]   (.dtype = .s32 | .u32)"
    if q.peek() in ("level", "grad"):
        q.fail(f"mipmap tex.{q.peek()}", f"expected form: {form}", unsupported=True)
    q.take_if({"base"})
    _geom(q, form)
    if q.take_if({"v4"}) is None:
        q.fail(f"`{base}` returns a .v4 vector" + (f" (got .{q.peek()})" if q.peek() else ""),
               f"expected form: {form}")
    ty = q.take_if({"s32", "u32"})
    if ty is None and q.peek() in ("f32", "f16", "f16x2"):
        q.fail(f"texture data type .{q.peek()}", "read integer words: .s32 or .u32",
               unsupported=True)
    if ty is None:
        q.fail(f"missing or unknown texture data type in `{q.mnemonic}`", f"expected form: {form}")
    if q.take_if({"s32"}) is None:
        if q.peek() == "f32":
            q.fail("floating-point texture coordinates (.f32)",
                   "use integer coordinates: .s32", unsupported=True)
        q.fail("tex coordinates are .s32" + (f" (got .{q.peek()})" if q.peek() else ""),
               f"expected form: {form}")
    q.done(form)
    v, h = operands(ops, "Vh", q, form)
    if len(v.items) != 4 or not all(isinstance(r, Reg) or r == SINK for r in v.items):
        raise ParseError("tex writes a vector of four registers (`_` for unused ones)", q.pos,
                         f"expected form: {form}")
    d, *rest = v.items
    if d == SINK:
        raise ParseError("the first destination of tex receives the value: name a register",
                         q.pos, f"expected form: {form}")
    if d in rest:
        raise UnsupportedError(f"{d.name} is both the first and another destination of tex",
                               q.pos, "write `_` for the channels you do not read")
    return Load(sem="weak", scope=None, space=None, proxy="texture", type=ty, dst=d,
                addr=_handle(h, q, form), **c)


def _tld4(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    raise UnsupportedError(
        "tld4 (texture gather)", q.pos,
        "tld4 reads a 2x2 footprint at .f32 coordinates, whose texels beyond the one a litmus "
        "location has depend on the addressing mode; read one texel with "
        "tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}];")


def _su_b(q: Quals, form: str) -> None:
    """The ``.b`` (unformatted, byte-addressed) qualifier of suld/sust/sured."""
    if q.peek() == "p":
        q.fail(f"formatted surface access `{q.mnemonic}`", f"use the .b form: {form}",
               unsupported=True)
    if q.take_if({"b"}) is None:
        q.fail(f"`{q.mnemonic.split('.')[0]}` needs .b", f"expected form: {form}")


def _su_type(q: Quals, form: str) -> str:
    """.b32/.b64 (optionally after a .v2/.v4 the litmus form rejects)."""
    if q.peek() in ("v2", "v4"):
        q.fail(f"vector surface access .{q.peek()}", "write one .b32/.b64 access per word",
               unsupported=True)
    ty = q.take_if({"b32", "b64"})
    if ty is None and q.peek() in ("b8", "b16"):
        q.fail(f"sub-word surface access .{q.peek()}", "access whole words: .b32 or .b64",
               unsupported=True)
    if ty is None:
        q.fail(f"missing or unknown data type in `{q.mnemonic}`"
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")
    return ty


def _su_access(q: Quals, form: str, cops: set[str]) -> str:
    """The qualifiers of suld/sust — ``.b.1d{.cop}.{b32,b64}.clamp`` — and the data type."""
    _su_b(q, form)
    _geom(q, form)
    q.take_if(cops)
    ty = _su_type(q, form)
    _clamp(q, form)
    q.done(form)
    return ty


def _suld(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``suld.b.1d{.cop}.{b32,b64}.clamp {d}, [s, {x}]``: a weak read through the surface proxy."""
    form = "suld.b.1d{.ca|.cg|.cs|.cv}.b32|.b64.trap|.clamp|.zero {d}, [s, {x}]"
    ty = _su_access(q, form, SULD_COPS)
    d, h = operands(ops, "dh", q, form)
    return Load(sem="weak", scope=None, space=None, proxy="surface", type=ty, dst=d,
                addr=_handle(h, q, form), **c)


def _sust(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``sust.b.1d{.cop}.{b32,b64}.clamp [s, {x}], {v}``: a weak write through the surface proxy."""
    form = "sust.b.1d{.wb|.cg|.cs|.wt}.b32|.b64.trap|.clamp|.zero [s, {x}], {v}"
    ty = _su_access(q, form, SUST_COPS)
    h, v = operands(ops, "hs", q, form)
    return Store(sem="weak", scope=None, space=None, proxy="surface", type=ty, src=v,
                 addr=_handle(h, q, form), **c)


def _sured(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``sured.b.op.1d.ctype.clamp [s, {x}], v``: a reduction through the surface proxy. The ISA
    gives sured no semantics or scope; it is modelled as red's default, relaxed at .gpu."""
    form = "sured.b.op.1d.ctype.trap|.clamp|.zero [s, {x}], v"
    _su_b(q, form)
    op = q.take_if(SURED_TYPES)
    if op is None:
        q.fail("missing or unknown sured operation" + (f" .{q.peek()}" if q.peek() else ""),
               f"operations: {', '.join(SURED_TYPES)}")
    _geom(q, form)
    ty = q.take_if(SURED_TYPES[op])
    if ty is None:
        q.fail(f"sured.{op} takes " + ", ".join("." + t for t in sorted(SURED_TYPES[op]))
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")
    _clamp(q, form)
    q.done(form)
    h, v = operands(ops, "hv", q, form)  # ptxas: no vector operand in sured
    return Red(op=op, sem="relaxed", scope="gpu", space=None, proxy="surface", type=ty, src=v,
               addr=_handle(h, q, form), **c)


_SU_QUALS = ({"b", "p", "v2", "v4", "b8", "b16", "b32", "b64"} | GEOMS | SULD_COPS | SUST_COPS
             | CLAMP | set(SURED_TYPES) | set().union(*SURED_TYPES.values()))
_TEX_QUALS = {"base", "level", "grad", "v4", "s32", "u32", "f32", "f16", "f16x2"} | GEOMS
register(["tex"], _tex, _TEX_QUALS, repeated={"type"})
register(["tld4"], _tld4, _TEX_QUALS, repeated={"type"})
register(["suld"], _suld, _SU_QUALS)
register(["sust"], _sust, _SU_QUALS)
register(["sured"], _sured, _SU_QUALS)
