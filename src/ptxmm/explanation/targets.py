"""What ``explain`` and ``fix`` are asked about: a target outcome — the test's own condition (its
negation for ``forall``) or an outcome the user names (``"T1:%r0=1 T1:%r1=0"``)."""

from __future__ import annotations

import re
from dataclasses import replace

from .._infra.records import record
from ..errors import PtxmmError
from ..ir.program import And, Cmp, CondExpr, Condition, MemRef, Not, Program, RegRef, cond_refs, format_ref
from ..semantics.events import EventGraph
from ..semantics.outcomes import canonical, observables

_PAIR = re.compile(r"([^\s=,&()]+)\s*==?\s*(-?(?:0x[0-9a-fA-F]+|[0-9]+))")  # ASCII digits only


def parse_outcome(text: str) -> CondExpr:
    """``"T1:%r0=1 T1:%r1=0"`` (also ``==``, commas, ``&&``) → a conjunction of equalities."""
    found = _PAIR.findall(text)
    rest = _PAIR.sub("", text).replace("&&", "").replace(",", "").strip()
    if not found or rest:
        raise PtxmmError(f"cannot read outcome {text!r}", None,
                         'write it as "T1:%r0=1 T1:%r1=0" (register or location = value, in ASCII digits)')
    cmps = []
    for ref, val in found:
        r = RegRef(*ref.split(":", 1)) if ":" in ref else MemRef(ref)
        cmps.append(Cmp("==", r, int(val, 0)))
    return And(tuple(cmps)) if len(cmps) > 1 else cmps[0]


@record
class Target:
    expr: CondExpr
    text: str
    default: bool  # the test's own condition


def target_of(prog: Program, outcome: str | None) -> Target:
    if outcome is None:
        cond = prog.condition
        if cond is None:
            raise PtxmmError(f"{prog.name} has no condition", None,
                             'name the outcome: --outcome "T1:%r0=1 T1:%r1=0"')
        body = cond.text.split(" ", 1)[-1] if cond.text else "the condition"
        if cond.quantifier == "forall":
            return Target(Not(cond.expr), f"not {body}", True)
        return Target(cond.expr, body, True)
    return Target(parse_outcome(outcome), outcome, False)


def with_target(prog: Program, t: Target) -> Program:
    return replace(prog, condition=Condition("exists", t.expr, f"exists {t.text}"))


def validate(prog: Program, eg: EventGraph, t: Target) -> None:
    if t.default:
        return
    keys = {o.key for o in observables(eg, "all")}
    for r in cond_refs(t.expr):
        try:
            k = format_ref(canonical(prog, eg, r))
        except PtxmmError:
            k = None
        if k not in keys:
            raise PtxmmError(f"the outcome names {format_ref(r)}, which the test does not observe",
                             None, "observables: " + ", ".join(sorted(keys)))
    from ..syntax.check.names import cond_consts, constant_fits

    for r, value in cond_consts(t.expr):  # as a condition's constants: a value its name can hold
        constant_fits(prog, r, value, None, "the outcome")
