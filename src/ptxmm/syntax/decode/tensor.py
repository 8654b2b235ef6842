"""Decoders of the tensor-map instructions: ``cp.async.bulk.tensor`` (tile mode, 1d and 2d) and
``tensormap.replace`` of the global address (docs/hopper.md)."""

from __future__ import annotations

from ...errors import ParseError, UnsupportedError
from ...ir.program import (
    Imm,
    Instruction,
    Operand,
    Reg,
    TensorCopy,
    TensorMapReplace,
)
from .operands import SINK, operands
from .qualifiers import Quals
from .registry import register

_TENSOR_LOAD = ("cp.async.bulk.tensor.1d|.2d.shared::cluster|.shared::cta.global{.tile}"
                ".mbarrier::complete_tx::bytes{.multicast::cluster} [dst], [tmap, {c0{, c1}}], [mbar]"
                "{, ctaMask}")
_TENSOR_STORE = "cp.async.bulk.tensor.1d|.2d.global.shared::cta{.tile}.bulk_group [tmap, {c0{, c1}}], [src]"


def decode_cp_tensor(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.async.bulk.tensor`` in tile mode, 1d and 2d (PTX ISA, cp.async.bulk.tensor); the tensor
    map a litmus ``.tensormap`` location (docs/hopper.md)."""
    form = f"{_TENSOR_LOAD} | {_TENSOR_STORE}"
    dim = q.take_if({"1d", "2d"})
    if dim is None:
        if q.peek() in ("3d", "4d", "5d"):
            q.fail(f"cp.async.bulk.tensor.{q.peek()}", f"modelled: {form}", unsupported=True)
        q.fail(f"`{q.mnemonic}` needs the dimension .1d or .2d", f"expected form: {form}")
    dst = q.take_if({"shared::cluster", "shared::cta", "global"})
    src = q.take_if({"global", "shared::cta"})
    if (dst, src) not in (("shared::cluster", "global"), ("shared::cta", "global"),
                          ("global", "shared::cta")):
        q.fail(f"cp.async.bulk.tensor from {src or '?'} to {dst or '?'}", f"modelled: {form}",
               unsupported=True)
    if q.peek() in ("im2col", "tile::gather4", "tile::scatter4", "im2col::w", "im2col::w::128",
                    "im2col_no_offs"):
        q.fail(f"load mode .{q.peek()}", f"modelled: the tile mode; {form}", unsupported=True)
    q.take_if({"tile"})
    load = dst != "global"
    want = "mbarrier::complete_tx::bytes" if load else "bulk_group"
    if q.take_if({want}) is None:
        q.fail(f"`{q.mnemonic}` needs the completion mechanism .{want}", f"expected form: {form}")
    multi = dst == "shared::cluster" and q.take_if({"multicast::cluster"}) is not None
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.async.bulk.tensor", f"modelled: {form}", unsupported=True)
    kinds = ("mhmv" if multi else "mhm") if load else "hm"
    got = operands(ops, kinds, q, form)
    h = got[1] if load else got[0]
    n = int(dim[0])
    if len(h.coords) != n or not all(isinstance(x, (Reg, Imm)) and x != SINK for x in h.coords):
        raise ParseError(f"a .{dim} tensor copy takes {n} coordinate(s) (registers or integers), got "
                         f"{len(h.coords)}", q.pos, f"expected form: {form}")
    if multi and not isinstance(got[3], Imm):
        raise UnsupportedError("a ctaMask held in a register", q.pos,
                               "write the mask as a constant, e.g. 3 for CTA ranks 0 and 1")
    return TensorCopy(dims=n, smem=got[0] if load else got[1], tmap=h.addr, coords=tuple(h.coords),
                      load=load, mbar=got[2] if load else None, multicast=got[3] if multi else None,
                      dst_space="shared" if load else "global", **c)


def _tensormap(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``tensormap.replace.tile.global_address{.global}.b1024.b64 [tmap], new_val`` (PTX ISA,
    tensormap.replace; the other fields, the .shared::cta copy and tensormap.cp_fenceproxy are
    not modelled: a litmus tensor map fixes dims and box)."""
    form = "tensormap.replace.tile.global_address{.global}.b1024.b64 [tmap], new_val"
    if q.take_if({"replace"}) is None:
        q.fail(f"`{q.mnemonic}`", f"modelled: {form}", unsupported=True)
    if q.take_if({"tile"}) is None:
        q.fail(f"`{q.mnemonic}` needs the mode .tile", f"expected form: {form}")
    field_ = q.take_if({"global_address"})
    if field_ is None:
        q.fail(f"tensormap.replace of the field .{q.peek()}" if q.peek() else f"`{q.mnemonic}`",
               f"a litmus tensor map fixes its dims and box; modelled: {form}", unsupported=True)
    if q.peek() == "shared::cta":
        q.fail("tensormap.replace of a tensor map in shared memory", f"modelled: {form}",
               unsupported=True)
    q.take_if({"global"})
    if q.take_if({"b1024"}) is None or q.take_if({"b64"}) is None:
        q.fail(f"`{q.mnemonic}` ends in .b1024.b64 (the .global_address field is 64 bits)",
               f"expected form: {form}")
    q.done(form)
    a, v = operands(ops, "mv", q, form)
    return TensorMapReplace(addr=a, src=v, **c)


register(["tensormap"], _tensormap,
         {"replace", "tile", "global_address", "global", "shared::cta", "b1024", "b64", "b32", "rank",
          "box_dim", "global_dim", "global_stride", "element_stride", "elemtype", "interleave_layout",
          "swizzle_mode", "swizzle_atomicity", "fill_mode", "cp_fenceproxy"},
         repeated={"state space", "type"})
