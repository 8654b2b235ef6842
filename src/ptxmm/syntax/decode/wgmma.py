"""The decoder of ``wgmma``: fence, commit/wait groups and the integer ``mma_async``."""

from __future__ import annotations

import re

from ...errors import ParseError
from ...ir.program import (
    Imm,
    Instruction,
    Operand,
    Reg,
    Wgmma,
)
from .operands import group_count, operands
from .qualifiers import Quals
from .registry import register

_WGMMA_FORM = ("wgmma.fence.sync.aligned | wgmma.commit_group.sync.aligned | "
               "wgmma.wait_group.sync.aligned N | wgmma.mma_async.sync.aligned.m64nNk32.s32"
               ".s8|.u8.s8|.u8{.satfinite} {d0, ..., d(N/2-1)}, a-desc, b-desc, scale-d")


def _wgmma(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``wgmma.fence`` / ``commit_group`` / ``wait_group`` and the integer ``wgmma.mma_async``
    with both matrices in shared memory (PTX ISA, wgmma; docs/hopper.md), in ptxas's operand
    rules: ``.sync.aligned`` required, 64-bit descriptor registers, scale-d 0, 1 or a predicate,
    N/2 accumulator registers for shape m64nNk32."""
    form = _WGMMA_FORM
    kind = q.take_if({"fence", "commit_group", "wait_group", "mma_async"})
    if kind is None:
        q.fail(f"`{q.mnemonic}`" + (" (wgmma.mma_async.sp is not modelled)" if q.peek() == "mma_async"
                                    else ""), f"modelled: {form}", unsupported=q.peek() is not None)
    if q.take_if({"sync"}) is None or q.take_if({"aligned"}) is None:
        q.fail(f"`{q.mnemonic}` needs .sync.aligned", f"expected form: {form}")
    if kind != "mma_async":
        q.done(form)
        if kind == "wait_group":
            (n,) = operands(ops, "v", q, form)
            return Wgmma(kind="wait", n=group_count(n, q, form), **c)
        operands(ops, "", q, form)
        return Wgmma(kind={"commit_group": "commit"}.get(kind, kind), **c)
    shape = q.take() if q.peek() is not None else None
    m = re.fullmatch(r"m64n(\d+)k(\d+)", shape or "")
    if m is None or int(m.group(1)) % 8 or not 8 <= int(m.group(1)) <= 256:
        q.fail(f"wgmma shape .{shape}", f"expected form: {form}")
    dtype = q.take_if({"s32", "f32", "f16"})
    if dtype != "s32" or m.group(2) != "32":
        q.fail(f"the floating-point wgmma form .{shape}.{dtype}", "ptxmm models integer values: "
               f"write the integer form {form}", unsupported=True)
    if q.take_if({"s8", "u8"}) is None or q.take_if({"s8", "u8"}) is None:
        q.fail("wgmma.mma_async.s32 needs .s8|.u8 for A and B", f"expected form: {form}")
    q.take_if({"satfinite"})
    q.done(form)
    d, a, b, scale = operands(ops, "Vvvv", q, form)
    want = int(m.group(1)) // 2
    if len(d.items) != want or not all(isinstance(x, Reg) for x in d.items):
        raise ParseError(f"`{q.mnemonic}` takes {want} accumulator registers, got {len(d.items)}",
                         q.pos, f"shape m64n{m.group(1)}k32: N/2 .s32 registers per thread")
    if not all(isinstance(x, Reg) for x in (a, b)):
        raise ParseError("wgmma matrix descriptors are 64-bit registers", q.pos,
                         "hold the address of a .shared word in one: mov.u64 %rd0, x;")
    if isinstance(scale, Imm) and scale.value not in (0, 1):
        raise ParseError("scale-d is 0, 1 or a predicate", q.pos, "0: D = A*B; 1: D = A*B + D")
    return Wgmma(kind="mma", dst=d.items[0], accs=d.items, a=a, b=b, scale_d=scale, shape=shape, **c)


register(["wgmma"], _wgmma, {"fence", "commit_group", "wait_group", "mma_async", "sync", "aligned",
                             "s32", "s8", "u8", "f32", "f16", "satfinite", "sp"}, repeated={"type"})
