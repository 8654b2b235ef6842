"""Decoders of ``fence`` and ``membar``: the scoped fences, ``fence.mbarrier_init`` and the proxy
fences (alias, async, the uni-directional async and tensormap fences, and Dat3M's
texture/surface/constant spellings)."""

from __future__ import annotations

from ...errors import ParseError
from ...ir.program import (
    Fence,
    Imm,
    Instruction,
    Operand,
    ProxyFence,
)
from .operands import operands
from .qualifiers import (
    SCOPES,
    SPACES,
    Quals,
    fence_scope,
    fence_sem,
)
from .registry import register

# ``fence.proxy.async{.global,.shared::cta,.shared::cluster}`` is modelled (docs/hopper.md);
# ``fence.proxy.tensormap::*`` and the uni-directional ``fence.proxy.async::generic.*`` assemble.
# ptxas rejects, and so do we, ``membar.proxy.async`` and ``fence.proxy.texture|surface|constant|
# generic`` (``Unknown modifier``). We accept ``fence.proxy.texture|surface|constant`` all the same:
# they are Dat3M's spelling of the texture/surface/constant proxy fences, for which the PTX ISA has
# none.

# proxy fences: the ISA's fence.proxy.alias and fence.proxy.async, and Dat3M's
# texture/surface/constant proxy fences
PROXY_FENCE_KINDS = ("alias", "texture", "surface", "constant", "async")

def _proxy_fence(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``fence.proxy.alias`` / ``membar.proxy.alias``, ``fence.proxy.async{.global|.shared::cta|
    .shared::cluster}`` (PTX ISA) and ``fence.proxy.texture|surface|constant`` (Dat3M's spelling;
    the ISA has none). The tensormap proxy and the uni-directional async fences are not modelled."""
    form = ("fence.proxy.alias | membar.proxy.alias | fence.proxy.async{.global|.shared::cta|"
            ".shared::cluster} | fence.proxy.texture | fence.proxy.surface | fence.proxy.constant")
    kind = q.peek()
    if kind is None:
        q.fail(f"{base}.proxy needs a proxy kind", f"expected form: {form}")
    root = kind.split("::")[0]
    if base == "membar" and kind != "alias" and (
            kind in PROXY_FENCE_KINDS or root in ("async", "tensormap")):
        q.fail(f"membar.proxy.{kind} is not PTX", f"write fence.proxy.{kind}")
    if kind == "async::generic":
        return _uni_async_fence(q, ops, c)
    if kind == "tensormap::generic":
        return _tensormap_fence(q, ops, c)
    if root in ("async", "tensormap") and kind != "async":
        q.fail(f"async-proxy fence `{q.mnemonic}`",
               "this proxy fence is not modelled yet; modelled: " + form
               + " | " + _UNI_FORMS + " | " + _TM_FENCES, unsupported=True)
    if kind == "async":
        q.take()
        space = q.take_if({"global", "shared::cta", "shared::cluster"})
        q.done(form)
        operands(ops, "", q, form)
        return ProxyFence(kind=kind, space=SPACES[space] if space else None, **c)
    if kind not in PROXY_FENCE_KINDS:
        import difflib  # (here: only an error needs it)

        close = difflib.get_close_matches(kind, PROXY_FENCE_KINDS, n=1)
        q.fail(f"unknown proxy kind .{kind} in `{q.mnemonic}`",
               (f"did you mean .{close[0]}? " if close else "") + f"expected form: {form}")
    q.take()
    q.done(form)
    operands(ops, "", q, form)
    return ProxyFence(kind=kind, **c)


_UNI_FORMS = ("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster | "
              "fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster")


def _uni_async_fence(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """The uni-directional generic→async proxy fences with their release/acquire half (PTX ISA,
    membar/fence; ptxas accepts exactly these two forms: .release with
    .sync_restrict::shared::cta, .acquire with .sync_restrict::shared::cluster, scope .cluster)."""
    q.take()
    sem = q.take_if({"release", "acquire"})
    want = {"release": "shared::cta", "acquire": "shared::cluster"}
    if sem is None:
        q.fail(f"`{q.mnemonic}` needs .release or .acquire", f"the forms: {_UNI_FORMS}")
    if q.take_if({f"sync_restrict::{want[sem]}"}) is None:  # located at what stands there
        q.fail(f"`{q.mnemonic}` needs .sync_restrict::{want[sem]}", f"the forms: {_UNI_FORMS}")
    if q.take_if({"cluster"}) is None:
        q.fail(f"`{q.mnemonic}` needs the scope .cluster", f"the forms: {_UNI_FORMS}")
    q.done(_UNI_FORMS)
    operands(ops, "", q, _UNI_FORMS)
    return ProxyFence(kind="async", space="shared", sem=sem, restrict=want[sem], **c)


_TM_FENCES = ("fence.proxy.tensormap::generic.release.scope | "
              "fence.proxy.tensormap::generic.acquire.scope [addr], 128")


def _tensormap_fence(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``fence.proxy.tensormap::generic.release.scope`` and ``.acquire.scope [addr], 128`` (PTX
    ISA, membar/fence): uni-directional generic → tensormap proxy fences; "The only supported
    value for the size operand is 128, which must be a constant integer literal"."""
    q.take()
    sem = q.take_if({"release", "acquire"})
    if sem is None:
        q.fail(f"`{q.mnemonic}` needs .release or .acquire", f"the forms: {_TM_FENCES}")
    scope = q.take_if(SCOPES)
    if scope is None:
        q.fail(f"`{q.mnemonic}` needs a scope (.cta .cluster .gpu .sys)", f"the forms: {_TM_FENCES}")
    q.done(_TM_FENCES)
    if sem == "release":
        operands(ops, "", q, _TM_FENCES)
        return ProxyFence(kind="tensormap", sem=sem, scope=scope, **c)
    a, n = operands(ops, "mv", q, _TM_FENCES)
    if not isinstance(n, Imm) or n.value != 128:
        raise ParseError("the size of fence.proxy.tensormap::generic.acquire is the constant 128",
                         q.pos, "PTX ISA: \"The only supported value for the size operand is 128\"")
    return ProxyFence(kind="tensormap", sem=sem, scope=scope, addr=a, **c)


def _fence(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "fence{.sc|.acq_rel|.acquire|.release}.scope  or  fence.proxy.kind"
    if q.take_if({"proxy"}):
        return _proxy_fence(base, q, ops, c)
    if q.take_if({"mbarrier_init"}):
        return _mbarrier_init_fence(q, ops, c)
    sem = fence_sem(q)
    if (q.peek() or "").split("::")[0] in ("op_restrict", "mbarrier_init", "sync_restrict"):
        q.fail(f"restricted fence .{q.peek()}", "only unrestricted fences are modelled",
               unsupported=True)
    scope = fence_scope(q, sem)
    q.done(form)
    operands(ops, "", q, form)
    return Fence(sem=sem, scope=scope, **c)


def _mbarrier_init_fence(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``fence.mbarrier_init.release.cluster`` (the only form the ISA has)."""
    form = "fence.mbarrier_init.release.cluster"
    if q.take_if({"release"}) is None or q.take_if({"cluster"}) is None:
        q.fail(f"`{q.mnemonic}`", f"the one form is {form}")
    q.done(form)
    operands(ops, "", q, form)
    return Fence(sem="release", scope="cluster", restrict="mbarrier_init", **c)


def _membar(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "membar.cta | membar.gl | membar.sys | membar.proxy.alias"
    if q.take_if({"proxy"}):
        return _proxy_fence(base, q, ops, c)
    lvl = q.take_if({"cta", "gl", "sys"})
    if lvl is None:
        q.fail("membar needs a level", f"expected form: {form}", typo=True)
    q.done(form)
    operands(ops, "", q, form)
    return Fence(sem="sc", scope={"cta": "cta", "gl": "gpu", "sys": "sys"}[lvl], **c)


register(["fence"], _fence,
         {"sc", "acq_rel", "acquire", "release", "proxy", "op_restrict", "mbarrier_init",
          "sync_restrict", "tensormap", "shared::cta", "shared::cluster", "global",
          "async::generic", "tensormap::generic", "sync_restrict::shared::cta",
          "sync_restrict::shared::cluster"} | SCOPES | set(PROXY_FENCE_KINDS))
register(["membar"], _membar, {"cta", "gl", "sys", "proxy", "alias"})
