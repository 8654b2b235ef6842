"""The decoder of Ampere's ``cp.async`` (one 4-byte copy), its groups and its mbarrier arrive."""

from __future__ import annotations

from ...errors import UnsupportedError
from ...ir.program import (
    CpAsync,
    CpAsyncGroup,
    Imm,
    Instruction,
    Operand,
)
from .operands import group_count, operands
from .qualifiers import Quals


def decode_cp_async(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """Ampere ``cp.async.ca.shared{::cta}.global [d], [s], 4``, ``cp.async.commit_group``,
    ``cp.async.wait_group N``, ``cp.async.wait_all``, ``cp.async.mbarrier.arrive{.noinc}
    {.shared{::cta}}.b64 [mbar]`` (PTX ISA, cp.async; docs/hopper.md)."""
    form = ("cp.async.ca.shared{::cta}.global [dst], [src], 4 | cp.async.commit_group | "
            "cp.async.wait_group N | cp.async.wait_all | cp.async.mbarrier.arrive{.noinc}"
            "{.shared{::cta}}.b64 [mbar]")
    kind = q.take_if({"commit_group", "wait_group", "wait_all", "mbarrier", "ca", "cg"})
    if kind is None:
        q.fail(f"`{q.mnemonic}`", f"modelled: {form}", unsupported=True)
    if kind == "mbarrier":
        if q.take_if({"arrive"}) is None:
            q.fail(f"`{q.mnemonic}`", f"expected form: {form}")
        noinc = q.take_if({"noinc"}) is not None
        q.take_if({"shared", "shared::cta"})
        if q.take_if({"b64"}) is None:
            q.fail("cp.async.mbarrier.arrive ends in .b64", f"expected form: {form}")
        q.done(form)
        (a,) = operands(ops, "m", q, form)
        return CpAsyncGroup(kind="arrive", mbar=a, noinc=noinc, **c)
    if kind in ("commit_group", "wait_all"):
        q.done(form)
        operands(ops, "", q, form)
        return CpAsyncGroup(kind={"commit_group": "commit"}.get(kind, kind), **c)
    if kind == "wait_group":
        q.done(form)
        (n,) = operands(ops, "v", q, form)
        return CpAsyncGroup(kind="wait", n=group_count(n, q, form), **c)
    if kind == "cg":
        q.fail("cp.async.cg (16-byte copies)", "a litmus location is one word: cp.async.ca of 4 "
               "bytes", unsupported=True)
    if q.take_if({"shared", "shared::cta"}) is None or q.take_if({"global"}) is None:
        q.fail(f"`{q.mnemonic}` copies global to shared", f"expected form: {form}")
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.async", f"modelled: {form}", unsupported=True)
    d, s_, n = operands(ops, "mmv", q, form)
    if not isinstance(n, Imm) or n.value != 4:
        raise UnsupportedError("a cp.async of other than 4 bytes", q.pos,
                               "a litmus location is one 32-bit word: copy 4 bytes")
    return CpAsync(dst=d, src=s_, size=n, **c)
