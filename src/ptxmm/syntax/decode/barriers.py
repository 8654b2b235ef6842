"""Decoders of the CTA barriers ``bar``/``barrier`` and of ``barrier.cluster``."""

from __future__ import annotations

from ...ir.program import (
    Barrier,
    ClusterBarrier,
    Imm,
    Instruction,
    Operand,
    Reg,
)
from .operands import operands
from .qualifiers import Quals
from .registry import register


def _bar(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = f"{base}{{.cta}}.sync a{{, b}} | {base}{{.cta}}.arrive a, b"
    if base == "barrier" and q.take_if({"cluster"}):
        return _cluster_bar(q, ops, c)
    if q.peek() in ("warp", "cluster"):
        q.fail(f"{base}.{q.peek()} barriers", "CTA barriers and barrier.cluster are supported",
               unsupported=True)
    q.take_if({"cta"})
    kind = q.take_if({"sync", "arrive", "red"})
    if kind is None:
        q.fail(f"{base} needs .sync or .arrive", f"expected form: {form}", typo=True)
    if kind == "red":
        q.fail("bar.red", "use bar.sync", unsupported=True)
    if base == "bar" and q.peek() == "aligned":  # ptxas: "Illegal modifier '.aligned' for ... 'bar'"
        q.fail(f"`{q.mnemonic}`: bar takes no .aligned", "bar.sync already is barrier.sync.aligned: "
               "drop .aligned, or write barrier.sync.aligned")
    q.take_if({"aligned"})
    q.done(form)
    if len(ops) > 2 and isinstance(ops[-1], (Imm, Reg)):
        ops = ops[:2]  # Dat3M spelling `bar.cta.sync id, count, nthreads`: count is ops[1]
    ident, *count = operands(ops, "vv" if kind == "arrive" else "vv?", q, form)
    return Barrier(kind=kind, ids=(ident,), count=count[0] if count else None, **c)


def _cluster_bar(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``barrier.cluster.arrive{.release|.relaxed}{.aligned}`` and ``barrier.cluster.wait
    {.acquire}{.aligned}`` (PTX ISA 8.0 semantics; default: release arrive, acquire wait)."""
    form = "barrier.cluster.arrive{.release|.relaxed}{.aligned} | barrier.cluster.wait{.acquire}{.aligned}"
    kind = q.take_if({"arrive", "wait"})
    if kind is None:
        q.fail("barrier.cluster needs .arrive or .wait", f"expected form: {form}")
    sem = q.take_if({"release", "relaxed"} if kind == "arrive" else {"acquire"})
    aligned = q.take_if({"aligned"}) is not None
    q.done(form)
    operands(ops, "", q, form)
    return ClusterBarrier(kind=kind, sem=sem or ("release" if kind == "arrive" else "acquire"),
                          aligned=aligned, **c)


register(["bar", "barrier"], _bar, {"cta", "sync", "arrive", "red", "aligned", "warp", "cluster",
                                    "wait", "release", "relaxed", "acquire"})
