"""Decoders of ``cp``: the bulk copies ``cp.async.bulk`` (one word or a multiple of 16 bytes),
their commit/wait groups and ``cp.reduce.async.bulk``; ``cp.async.bulk.tensor`` and Ampere's
``cp.async`` are decoded by tensor.py and cp_async.py."""

from __future__ import annotations

from ...errors import ParseError, UnsupportedError
from ...ir.program import (
    BulkCopy,
    BulkGroup,
    Imm,
    Instruction,
    Operand,
)
from .cp_async import decode_cp_async
from .operands import group_count, operands
from .qualifiers import SPACES, Quals
from .registry import register
from .tensor import decode_cp_tensor


def _cp(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.reduce.async.bulk`` or the copies."""
    return _cp_reduce(q, ops, c) if q.peek() == "reduce" else _cp_copy(base, q, ops, c)


def _cp_copy(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.async.bulk`` (one word), ``cp.async.bulk.commit_group``, ``cp.async.bulk.wait_group``."""
    g2s = ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.multicast::cluster} "
           "[dst], [src], size, [mbar]{, ctaMask}")
    s2g = "cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size"
    form = f"{g2s} | {s2g} | cp.async.bulk.commit_group | cp.async.bulk.wait_group{{.read}} N"
    if q.take_if({"async"}) is None:
        q.fail(f"`{q.mnemonic}`", "of the copies, the one-word cp.async and cp.async.bulk forms "
               "are modelled: " + form, unsupported=True)
    if q.peek() != "bulk":
        return decode_cp_async(q, ops, c)
    q.take()
    if q.take_if({"tensor"}):
        return decode_cp_tensor(q, ops, c)
    if q.peek() == "prefetch":
        q.fail(f"cp.async.bulk.{q.peek()}", f"modelled: {form}", unsupported=True)
    if q.take_if({"commit_group"}):
        q.done(form)
        operands(ops, "", q, form)
        return BulkGroup(kind="commit", **c)
    if q.take_if({"wait_group"}):
        read = q.take_if({"read"}) is not None
        q.done(form)
        (n,) = operands(ops, "v", q, form)
        return BulkGroup(kind="wait", n=group_count(n, q, form), read=read, **c)
    dst = q.take_if({"shared::cluster", "shared::cta", "global"})
    src = q.take_if({"global", "shared::cta"})
    if (dst, src) not in (("shared::cluster", "global"), ("shared::cta", "global"),
                          ("global", "shared::cta")):
        q.fail(f"cp.async.bulk from {src or '?'} to {dst or '?'}", f"modelled: {form}",
               unsupported=True)
    want = "bulk_group" if dst == "global" else "mbarrier::complete_tx::bytes"
    if q.take_if({want}) is None:
        q.fail(f"`{q.mnemonic}` needs the completion mechanism .{want}", f"expected form: {form}")
    multi = dst == "shared::cluster" and q.take_if({"multicast::cluster"}) is not None
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.async.bulk", f"modelled: {form}", unsupported=True)
    kinds = "mmv" if dst == "global" else ("mmvmv" if multi else "mmvm")
    d, s_, n, *rest = operands(ops, kinds, q, form)
    _bulk_size(n, q, "copy")
    if multi and not isinstance(rest[1], Imm):
        raise UnsupportedError("a ctaMask held in a register", q.pos,
                               "write the mask as a constant, e.g. 3 for CTA ranks 0 and 1")
    return BulkCopy(dst=d, src=s_, size=n, mbar=rest[0] if rest else None,
                    dst_space=SPACES[dst], src_space=SPACES[src],
                    multicast=rest[1] if multi else None, **c)

def _bulk_size(n: Operand, q: Quals, what: str) -> None:
    """A bulk copy's size: a constant number of bytes, a multiple of 16 (PTX ISA, cp.async.bulk:
    "size ... must be a multiple of 16"), or 4, the litmus extension of a one-word copy; the copy
    moves size/4 consecutive 32-bit words."""
    if not isinstance(n, Imm):
        raise UnsupportedError(f"a bulk {what} whose size is held in a register", q.pos,
                               "write the number of bytes as a constant (4, or a multiple of 16)")
    if n.value != 4 and (n.value <= 0 or n.value % 16):
        raise ParseError(f"a bulk {what} of {n.value} bytes", q.pos,
                         "the size is a multiple of 16 (ptxas), or 4: the litmus one-word copy")

_REDUCE_TYPES = {"add": {"u32", "s32"}, "min": {"u32", "s32"}, "max": {"u32", "s32"},
                 "inc": {"u32"}, "dec": {"u32"}, "and": {"b32"}, "or": {"b32"}, "xor": {"b32"}}


def _cp_reduce(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type [dst], [src], 4`` (PTX ISA,
    cp.reduce.async.bulk; one 32-bit word, the types ptxas takes for each operation)."""
    form = ("cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type [dst], [src], 4  "
            "(.add|.min|.max .u32|.s32, .inc|.dec .u32, .and|.or|.xor .b32)")
    q.take()
    if q.take_if({"async"}) is None or q.take_if({"bulk"}) is None:
        q.fail(f"`{q.mnemonic}`", f"expected form: {form}")
    if q.peek() == "tensor":
        q.fail("cp.reduce.async.bulk.tensor", f"modelled: {form}", unsupported=True)
    dst, src = q.take_if({"global", "shared::cluster"}), q.take_if({"shared::cta"})
    if (dst, src) != ("global", "shared::cta"):
        q.fail(f"cp.reduce.async.bulk from {src or '?'} to {dst or '?'}", f"modelled: {form}",
               unsupported=True)
    if q.take_if({"bulk_group"}) is None:
        q.fail(f"`{q.mnemonic}` needs the completion mechanism .bulk_group", f"expected form: {form}")
    op = q.take_if(set(_REDUCE_TYPES))
    if op is None:
        q.fail("cp.reduce.async.bulk needs a reduction", f"expected form: {form}", typo=True)
    ty = q.take_if(_REDUCE_TYPES[op])
    if ty is None:
        q.fail(f"cp.reduce.async.bulk .{op} takes " + " ".join(f".{t}" for t in sorted(_REDUCE_TYPES[op]))
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.reduce.async.bulk", f"modelled: {form}", unsupported=True)
    d, s_, n = operands(ops, "mmv", q, form)
    _bulk_size(n, q, "reduction")
    return BulkCopy(dst=d, src=s_, size=n, dst_space="global", src_space="shared", op=op, type=ty,
                    **c)


_REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
register(["cp"], _cp,
         {"async", "bulk", "commit_group", "wait_group", "read", "shared::cluster", "shared::cta",
          "global", "bulk_group", "mbarrier::complete_tx::bytes", "tensor", "prefetch",
          "multicast::cluster", "ca", "cg", "wait_all", "mbarrier", "arrive", "noinc", "shared",
          "b64", "reduce", "u32", "s32", "b32", "1d", "2d", "3d", "4d", "5d", "tile", *_REDUCE_OPS},
         repeated={"state space"})
