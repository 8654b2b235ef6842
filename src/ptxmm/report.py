"""Human-readable reports of check results (plain text, styled on a colour terminal)."""

from __future__ import annotations

from .result import CheckResult
from .termtext import Segment, Writer


def verdict_segments(r: CheckResult) -> list[Segment]:
    cond = r.program.condition
    if cond is None:
        return [("no condition", "dim")]
    if r.holds is None:
        return [(f"Unknown  {r.status_text or 'not decided'}", "bold yellow")]
    q = cond.quantifier
    if q == "exists":
        word = "ALLOWED" if r.holds else "FORBIDDEN"
    elif q == "~exists":
        word = "holds (never happens)" if r.holds else "fails (can happen)"
    else:
        word = "REQUIRED (always)" if r.holds else "not required"
    return [("Ok" if r.holds else "No", "bold green" if r.holds else "bold red"),
            (f"  {word}", "bold"), f" — {_why(r, q)}"]


def _why(r: CheckResult, q: str) -> str:
    """What the verdict rests on, in the terms of what was computed: the count of satisfying
    outcomes after an enumeration; after one query (--observe condition), only whether an
    execution satisfying (forall: violating) the condition exists."""
    if r.enumerated:
        n_sat = sum(1 for o in r.outcomes if o.satisfies)
        return f"{n_sat} of {len(r.outcomes)} allowed outcomes satisfy the condition"
    found = bool(r.outcomes)
    if q == "forall":
        what = ("an allowed execution violates the condition (witness above)" if found else
                "no allowed execution violates the condition")
    else:
        what = ("the condition is reachable: an allowed execution satisfies it (witness above)"
                if found else "the condition is unreachable: no allowed execution satisfies it")
    return what + "; one solver query, outcomes not enumerated"


def render(r: CheckResult, out: Writer) -> None:
    p = r.program
    out.line((p.name, "bold cyan"), (f"  ({p.file})", "dim"), f"  {p.description}" if p.description else "")
    out.line("model ", (r.model, "bold"), f"   engine {r.engine}   events {r.n_events}   "
             f"time {r.time_s * 1000:.1f} ms")
    if p.condition is not None:
        out.line(f"condition  {p.condition.quantifier} {p.condition.text.split(' ', 1)[-1]}"
                 if p.condition.text else "condition")
    if r.outcomes or r.enumerated:
        _outcome_table(r, out)
    if r.enumerated:
        _race_lines(r, out)
        out.line(f"{len(r.outcomes)} allowed outcome(s)")
    else:
        out.line(("outcomes: not enumerated (--observe condition asks one query; --observe all "
                  "lists every allowed outcome)", "dim"))
        out.line(("data races: not checked with --observe condition", "dim"))
    out.line(*verdict_segments(r))
    _notes(r, out)


def _race_lines(r: CheckResult, out: Writer) -> None:
    pairs: dict[str, list[str]] = {}
    for i, races in enumerate(r.races(), 1):
        for x in races:
            pairs.setdefault(f"{x.flag}: {x.a}  ~  {x.b}", []).append(str(i))
    for text, nums in pairs.items():
        out.line((f"  {text}   (outcome {', '.join(nums)})", "yellow"))


def _outcome_table(r: CheckResult, out: Writer) -> None:
    """One row per outcome; after a single query (not enumerated) the one row is its witness,
    without a flags column (flags are not looked for then)."""
    has_cond = r.program.condition is not None
    header = ["#" if r.enumerated else "witness", *r.observables] + (["cond"] if has_cond else [])
    header += ["flags"] if r.enumerated else []
    rows: list[list[Segment]] = []
    for i, o in enumerate(r.outcomes, 1):
        vals = o.outcome.as_dict()
        row: list[Segment] = [(str(i), "dim"), *(str(vals[k]) for k in r.observables)]
        if has_cond:
            row.append(("✓", "green") if o.satisfies else "·")
        if r.enumerated:
            row.append((", ".join(o.flags), "yellow"))
        rows.append(row)
    out.table(header, rows, "r" * (1 + len(r.observables)) + ("c" if has_cond else "") + "l")


def _notes(r: CheckResult, out: Writer) -> None:
    if not r.outcomes and r.status == "ok" and r.enumerated:
        out.line(("the model allows no execution (for instance, every one deadlocks at a "
                  "barrier); the condition is judged over none, as herd7 and Dat3M do", "yellow"))
    if r.status_text and r.program.condition is None:
        out.line((r.status_text, "yellow"))
    if r.cut_paths:
        out.line((f"bound: --unroll {r.unroll} cut {r.cut_paths} execution path(s); "
                  "outcomes of longer executions are not shown", "yellow"))
    if r.awaits:
        out.line((f"{r.awaits} side-effect-free spin loop(s) reduced to await reads", "dim"))
    if r.expected is not None:
        ok = r.agrees
        mark = (("? not decided", "yellow") if ok is None else
                ("✓ agrees", "green") if ok else ("✗ DISAGREES", "red"))
        out.line(f"expected: condition {'holds' if r.expected else 'fails'}   ", mark)
