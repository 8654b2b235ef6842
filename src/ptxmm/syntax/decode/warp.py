"""Decoders of the warp-level instructions: ``elect.sync``; the warp collectives of kernels
(:func:`decode_warp`)."""

from __future__ import annotations

from ...errors import ParseError, UnsupportedError
from ...ir.instructions import WarpOp
from ...ir.program import (
    Elect,
    Imm,
    Instruction,
    Reg,
)
from .operands import SINK, Vec, operands
from .qualifiers import Quals
from .registry import register


def _elect(base: str, q: Quals, ops: list, c: dict) -> Instruction:
    """``elect.sync _|p, membermask`` (PTX ISA, elect.sync): p is True in the one lane of the
    membermask the instruction elects.  The elected lane's id (``d``) is not modelled: a litmus
    thread has no lane id (write ``_``)."""
    form = "elect.sync _|p, membermask"
    if q.take_if({"sync"}) is None:
        q.fail("elect needs .sync", f"expected form: {form}")
    q.done(form)
    dp, mask = operands(ops, "Vv", q, form)
    if not dp.pair or len(dp.items) != 2 or not isinstance(dp.items[1], Reg):
        raise ParseError("the destination of elect.sync is d|p: a register or `_`, `|`, and a "
                         "predicate register", q.pos, f"expected form: {form}")
    if dp.items[0] != SINK:
        raise UnsupportedError("the elected lane's id (elect.sync's d)", q.pos,
                               "a litmus thread has no lane id: write `_|%p`")
    if not isinstance(mask, Imm):
        raise UnsupportedError("a membermask held in a register", q.pos, "write the mask as a constant")
    return Elect(dst=dp.items[1], mask=mask, **c)


register(["elect"], _elect, {"sync"})


# ----- the warp collectives of kernels (semantics/warp_collectives.py) -----------------------------
# ptxas takes their qualifiers in any order (`vote.any.sync.pred`, `redux.sync.s32.min`,
# `match.sync.any.b32` all assemble), so they are read as a set. Not registered with the litmus
# decoders: a litmus thread is one lane whose warp-mates are not in the test.

_WARP_FORMS = {
    "shfl": ("shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask",
             {"up", "down", "bfly", "idx"}, {"b32"}),
    "vote": ("vote.sync.{any,all,uni}.pred d, {!}a, membermask / vote.sync.ballot.b32 d, {!}a, "
             "membermask", {"any", "all", "uni", "ballot"}, {"pred", "b32"}),
    "match": ("match.any.sync.{b32,b64} d, a, membermask / match.all.sync.{b32,b64} d[|p], a, "
              "membermask", {"any", "all"}, {"b32", "b64"}),
    "redux": ("redux.sync.{add,min,max}.{u32,s32} d, a, membermask / redux.sync.{and,or,xor}.b32 "
              "d, a, membermask", {"add", "min", "max", "and", "or", "xor"}, {"u32", "s32", "b32"}),
    "activemask": ("activemask.b32 d", set(), {"b32"}),
    "bar": ("bar.warp.sync membermask", {"warp"}, set()),
    "elect": ("elect.sync d|p, membermask (d may be _)", set(), set()),
}
WARP_OPCODES = frozenset({"shfl", "vote", "match", "redux", "activemask"})


def _quals(base: str, q: Quals) -> tuple[str, str]:
    """The mode and type among ``q``'s qualifiers (any order), ``.sync`` required but for
    activemask; a missing or unknown one is a located ParseError."""
    form, modes, types = _WARP_FORMS[base]
    seen: dict[str, str] = {}
    while q.peek() is not None:
        pos = q.qpos()
        x = q.take()
        kind = "sync" if x == "sync" else "mode" if x in modes else "type" if x in types else None
        if kind is None or kind in seen:
            raise ParseError(f"unexpected qualifier .{x} in `{q.mnemonic}`", pos, f"expected form: {form}")
        seen[kind] = x
    if base not in ("activemask", "bar") and "sync" not in seen:
        raise UnsupportedError(f"`{q.mnemonic}` without .sync", q.pos,
                               "the non-.sync forms are not available from sm_70 on: write "
                               f"{form}")
    if base == "bar":
        if seen.get("sync") is None or seen.get("mode") != "warp":
            raise ParseError(f"`{q.mnemonic}`", q.pos, f"expected form: {form}")
        return "warp", ""
    if base == "elect":
        return "elect", "b32"
    if modes and "mode" not in seen:
        raise ParseError(f"`{q.mnemonic}` needs one of " + " ".join("." + m for m in sorted(modes)),
                         q.pos, f"expected form: {form}")
    if "type" not in seen:
        raise ParseError(f"`{q.mnemonic}` needs a type", q.pos, f"expected form: {form}")
    return seen.get("mode", ""), seen["type"]


_TYPES_OF = {("vote", "ballot"): {"b32"}, ("redux", "and"): {"b32"}, ("redux", "or"): {"b32"},
             ("redux", "xor"): {"b32"}}


def _dest(o, form: str, q: Quals, pred_ok: bool) -> tuple[Reg, Reg | None]:
    """``d`` or ``d|p`` (``p`` only where ``pred_ok``); ptxas refuses the sink ``_`` here."""
    if isinstance(o, Vec) and o.pair:
        d, p = o.items
        if not (isinstance(d, Reg) and isinstance(p, Reg)) or not pred_ok:
            raise ParseError(f"the destination of `{q.mnemonic}`", q.pos, f"expected form: {form}")
        return d, p
    if not isinstance(o, Reg):
        raise ParseError(f"the destination of `{q.mnemonic}` must be a register", q.pos,
                         f"expected form: {form}")
    return o, None


def decode_warp(base: str, q: Quals, ops: list, c: dict) -> Instruction:
    """A kernel's warp collective (PTX ISA, Parallel Synchronization and Communication
    Instructions): shfl.sync, vote.sync, match.sync, redux.sync, activemask, bar.warp.sync."""
    form = _WARP_FORMS[base][0]
    mode, ty = _quals(base, q)
    allowed = _TYPES_OF.get((base, mode))
    if base == "vote":
        allowed = {"b32"} if mode == "ballot" else {"pred"}
    if base == "redux" and mode in ("add", "min", "max"):
        allowed = {"u32", "s32"}
    if allowed is not None and ty not in allowed:
        raise ParseError(f"type .{ty} of `{q.mnemonic}`", q.pos, f"expected form: {form}")
    key = f"{base}.{mode}.{ty}"
    n = {"shfl": 5, "vote": 3, "match": 3, "redux": 3, "activemask": 1, "bar": 1, "elect": 2}[base]
    if len(ops) != n:
        raise ParseError(f"`{q.mnemonic}` takes {n} operand(s), got {len(ops)}", q.pos,
                         f"expected form: {form}")
    for o in ops:
        if not isinstance(o, (Reg, Imm, Vec)):
            raise ParseError(f"an operand of `{q.mnemonic}`", q.pos, f"expected form: {form}")
    if base == "bar":
        return WarpOp(form="bar.warp.sync", mode="warp", type="b32", mask=ops[0], **c)
    if base == "elect":
        if not (isinstance(ops[0], Vec) and ops[0].pair and isinstance(ops[0].items[1], Reg)):
            raise ParseError(f"the destination of `{q.mnemonic}` is d|p", q.pos, f"expected form: {form}")
        d = ops[0].items[0]
        return WarpOp(form="elect.sync", mode="elect", type="b32", dst=d if isinstance(d, Reg) else None,
                      pdst=ops[0].items[1], mask=ops[1], **c)
    if base == "activemask":
        d, _ = _dest(ops[0], form, q, False)
        return WarpOp(form=key, mode="active", type="b32", dst=d, **c)
    d, p = _dest(ops[0], form, q, base == "shfl" or (base == "match" and mode == "all"))
    a = ops[1]
    neg = False
    if base == "vote" and isinstance(a, Reg) and a.name.startswith("!"):
        a, neg = Reg(a.name[1:]), True
    if base == "shfl":
        return WarpOp(form=key, mode=mode, type=ty, dst=d, pdst=p, a=a, b=ops[2], c=ops[3],
                      mask=ops[4], **c)
    return WarpOp(form=key, mode=mode, type=ty, dst=d, pdst=p, a=a, mask=ops[2], neg=neg, **c)


_RED_FORM = "bar{.cta}.red.{and,or}.pred p, a, {!}c / bar{.cta}.red.popc.u32 d, a, {!}c"


def decode_bar_red(base: str, q: Quals, ops: list, c: dict) -> Instruction:
    """``bar.red`` / ``barrier{.cta}.red{.aligned}`` (PTX ISA, bar/barrier): a CTA barrier that
    also reduces the threads' predicate ``c`` (``__syncthreads_and/or/count``). Qualifiers in any
    order, as ptxas takes them. The thread-count operand is not modelled yet."""
    seen: dict[str, str] = {}
    kinds = {"red": "red", "cta": "cta", "aligned": "aligned", "and": "op", "or": "op", "popc": "op",
             "pred": "type", "u32": "type"}
    while q.peek() is not None:
        pos = q.qpos()
        x = q.take()
        kind = kinds.get(x)
        if kind is None or kind in seen:
            raise ParseError(f"unexpected qualifier .{x} in `{q.mnemonic}`", pos,
                             f"expected form: {_RED_FORM}")
        seen[kind] = x
    op, ty = seen.get("op"), seen.get("type")
    if op is None or ty != ("u32" if op == "popc" else "pred"):
        raise ParseError(f"`{q.mnemonic}`: .popc takes .u32, .and and .or take .pred", q.pos,
                         f"expected form: {_RED_FORM}")
    if len(ops) == 4:
        raise UnsupportedError(f"the thread count of `{q.mnemonic}`", q.pos,
                               "bar.red over all the threads of the CTA (__syncthreads_and/or/count) "
                               "is modelled")
    if len(ops) != 3 or not isinstance(ops[0], Reg) or not isinstance(ops[2], Reg):
        raise ParseError(f"the operands of `{q.mnemonic}`", q.pos, f"expected form: {_RED_FORM}")
    src, neg = ops[2], ops[2].name.startswith("!")
    if neg:
        src = Reg(src.name[1:])
    return WarpOp(form=f"bar.red.{op}.{ty}", mode=op, type=ty, dst=ops[0], a=src, b=ops[1], neg=neg, **c)
