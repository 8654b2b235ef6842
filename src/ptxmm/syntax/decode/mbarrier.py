"""Decoders of the ``mbarrier`` operations (docs/hopper.md): init, inval, arrive, arrive_drop,
expect_tx, complete_tx, test_wait and try_wait."""

from __future__ import annotations

from ...errors import ParseError, UnsupportedError
from ...ir.program import (
    Instruction,
    MBarrier,
    Operand,
    Reg,
)
from .operands import SINK, operands
from .qualifiers import SPACES, Quals
from .registry import register

MBAR_OPS = {"init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait",
            "try_wait"}
_MBAR_FORMS = {
    "init": "mbarrier.init{.shared{::cta}}.b64 [a], count",
    "inval": "mbarrier.inval{.shared{::cta}}.b64 [a]",
    "arrive": "mbarrier.arrive{.expect_tx}{.release|.relaxed}{.cta|.cluster}{.shared{::cta}|"
              ".shared::cluster}.b64 state, [a]{, count}  (.expect_tx: state, [a], txCount)",
    "expect_tx": "mbarrier.expect_tx{.relaxed}{.cta|.cluster}{.shared{::cta}|.shared::cluster}.b64 "
                 "[a], txCount",
    "test_wait": "mbarrier.test_wait{.parity}{.acquire|.relaxed}{.cta|.cluster}{.shared{::cta}}.b64 "
                 "p, [a], state  (.parity: p, [a], phaseParity)",
}
_MBAR_FORMS["arrive_drop"] = _MBAR_FORMS["arrive"].replace("arrive", "arrive_drop", 1)
_MBAR_FORMS["complete_tx"] = _MBAR_FORMS["expect_tx"].replace("expect_tx", "complete_tx", 1)
_MBAR_FORMS["try_wait"] = _MBAR_FORMS["test_wait"].replace("test_wait", "try_wait", 1)


def _mbar_tail(q: Quals, form: str, sems: set[str], default: str, cluster_space: bool) -> dict:
    """``{.sem.scope}{.space}.b64`` of an mbarrier instruction: the semantics and the scope are
    written together or not at all (ptxas: "Modifier '.release' requires scope", "Modifier
    '.cluster' requires order"); without them, ``default`` at .cta."""
    sem = q.take_if(sems)
    if sem is not None and q.peek() not in ("cta", "cluster"):
        q.fail(f"`.{sem}` of `{q.mnemonic}` without a scope: the semantics and the scope go together",
               f"write .{sem}.cta or .{sem}.cluster (or neither: {default} at .cta)")
    if sem is None and q.peek() in ("cta", "cluster"):
        q.fail(f"the scope `.{q.peek()}` of `{q.mnemonic}` without semantics: the semantics and the "
               "scope go together", f"write .{default}.{q.peek()} (or neither: {default} at .cta)")
    sem = sem or default
    scope = q.take_if({"cta", "cluster"}) or "cta"
    space = q.take_if({"shared", "shared::cta"} | ({"shared::cluster"} if cluster_space else set()))
    if q.peek() in ("global", "local"):
        q.fail(f"an mbarrier object lives in shared memory, not .{q.peek()}", f"expected form: {form}")
    if q.take_if({"b64"}) is None:
        q.fail("mbarrier operations end in .b64" + (f" (got .{q.peek()})" if q.peek() else ""),
               f"expected form: {form}")
    q.done(form)
    return dict(sem=sem, scope=scope, space="shared" if space is None else SPACES[space])


def _mbarrier(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    op = q.take_if(MBAR_OPS)
    if op is None:
        if q.peek() in ("pending_count", "arrive.noComplete"):
            q.fail(f"mbarrier.{q.peek()}", "not modelled yet (docs/hopper.md)", unsupported=True)
        q.fail("unknown mbarrier operation" + (f" .{q.peek()}" if q.peek() else ""),
               "operations: " + ", ".join(sorted(MBAR_OPS)), typo=True)
    form = _MBAR_FORMS[op]
    if op in ("init", "inval"):
        q.take_if({"shared", "shared::cta"})
        if q.take_if({"b64"}) is None:
            q.fail(f"mbarrier.{op} ends in .b64", f"expected form: {form}")
        q.done(form)
        a, *n = operands(ops, "mv" if op == "init" else "m", q, form)
        return MBarrier(op=op, addr=a, count=n[0] if n else None, sem="weak", scope="cta", **c)
    if op in ("arrive", "arrive_drop"):
        return _mbar_arrive(op, q, ops, c, form)
    if op in ("expect_tx", "complete_tx"):
        f = _mbar_tail(q, form, {"relaxed"}, "relaxed", True)
        a, n = operands(ops, "mv", q, form)
        return MBarrier(op=op, addr=a, tx=n, **f, **c)
    parity = q.take_if({"parity"}) is not None
    f = _mbar_tail(q, form, {"acquire", "relaxed"}, "acquire", False)
    if len(ops) == 4:
        raise UnsupportedError(f"the suspend-time hint of `{q.mnemonic}`", q.pos,
                               "drop it: the model does not time waits")
    p, a, st = operands(ops, "rmv", q, form)
    return MBarrier(op=op, addr=a, dst=p, state=st, parity=parity, **f, **c)


def _mbar_arrive(op: str, q: Quals, ops: list[Operand], c: dict, form: str) -> Instruction:
    if q.peek() == "noComplete":
        q.fail("mbarrier.arrive.noComplete", "not modelled yet (docs/hopper.md)", unsupported=True)
    tx = q.take_if({"expect_tx"}) is not None
    f = _mbar_tail(q, form, {"release", "relaxed"}, "release", True)
    st, a, *rest = operands(ops, "vmv?", q, form)
    if not (isinstance(st, Reg) or st == SINK):
        raise ParseError(f"the state operand of `{q.mnemonic}` is a register or `_`", q.pos,
                         f"expected form: {form}")
    if tx and not rest:
        raise ParseError(f"`{q.mnemonic}` needs the transaction count", q.pos, f"expected form: {form}")
    if f["space"] == "shared" and "shared::cluster" in q.mnemonic and st != SINK:
        raise ParseError("an arrive on a .shared::cluster mbarrier returns no state", q.pos,
                         "write `_` for the state")
    return MBarrier(op=op, addr=a, dst=st if isinstance(st, Reg) else None,
                    count=None if tx or not rest else rest[0], tx=rest[0] if tx else None, **f, **c)


register(["mbarrier"], _mbarrier,
         MBAR_OPS | {"parity", "expect_tx", "noComplete", "inval", "pending_count", "release",
                     "relaxed", "acquire", "cta", "cluster", "shared", "shared::cta",
                     "shared::cluster", "b64", "global", "local"})
