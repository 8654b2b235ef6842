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
    n_sat = sum(1 for o in r.outcomes if o.satisfies)
    why = f"{n_sat} of {len(r.outcomes)} allowed outcomes satisfy the condition"
    if any(o.satisfies is None for o in r.outcomes):  # it names a value too free to list
        why = "decided by one solver query (the condition names a value the ISA leaves unspecified)"
    q = cond.quantifier
    if q == "exists":
        word = "ALLOWED" if r.holds else "FORBIDDEN"
    elif q == "~exists":
        word = "holds (never happens)" if r.holds else "fails (can happen)"
    else:
        word = "REQUIRED (always)" if r.holds else "not required"
    return [("Ok" if r.holds else "No", "bold green" if r.holds else "bold red"),
            (f"  {word}", "bold"), f" — {why}"]


def render(r: CheckResult, out: Writer) -> None:
    p = r.program
    out.line((p.name, "bold cyan"), (f"  ({p.file})", "dim"), f"  {p.description}" if p.description else "")
    out.line("model ", (r.model, "bold"), f"   engine {r.engine}   events {r.n_events}   "
             f"time {r.time_s * 1000:.1f} ms")
    if p.condition is not None:
        out.line(f"condition  {p.condition.quantifier} {p.condition.text.split(' ', 1)[-1]}"
                 if p.condition.text else "condition")
    _outcome_table(r, out)
    _findings(r, out)
    out.line(f"{len(r.outcomes)} allowed outcome(s)")
    out.line(*verdict_segments(r))
    _notes(r, out)


def _findings(r: CheckResult, out: Writer) -> None:
    """Each finding (a racing pair) with the outcome of its witness execution."""
    index = {o.outcome: i for i, o in enumerate(r.outcomes, 1)}
    for f in r.findings:
        i = index.get(f.outcome)
        where = f"e.g. outcome {i}" if i is not None else f"e.g. {f.outcome}"
        out.line((f"  {f}   ({where})", "yellow"))
    if r.findings_status == "timeout":
        out.line(("  the model's flags were not all decided before the time limit: races may be "
                  "missing from this list", "yellow"))


def _outcome_table(r: CheckResult, out: Writer) -> None:
    has_cond = r.program.condition is not None
    header = ["#", *r.observables] + (["cond"] if has_cond else []) + ["flags"]
    rows: list[list[Segment]] = []
    for i, o in enumerate(r.outcomes, 1):
        vals = o.outcome.as_dict()
        row: list[Segment] = [(str(i), "dim"), *(str(vals[k]) for k in r.observables)]
        if has_cond:
            row.append(("✓", "green") if o.satisfies else "?" if o.satisfies is None else "·")
        row.append((", ".join(o.flags), "yellow"))
        rows.append(row)
    out.table(header, rows, "r" * (1 + len(r.observables)) + ("c" if has_cond else "") + "l")


def _notes(r: CheckResult, out: Writer) -> None:
    if not r.outcomes and r.status == "ok":
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
