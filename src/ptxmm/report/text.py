"""Human-readable reports of check results (plain text, styled on a colour terminal)."""

from __future__ import annotations

from dataclasses import replace

from ..semantics.result import GRID_ENDING, CheckResult
from .termtext import Segment, Writer


def verdict_segments(r: CheckResult) -> list[Segment]:
    cond = r.program.condition
    if cond is None:
        return [("no condition", "dim")]
    if "condition" in r.not_asked:
        return [("condition: not asked (--properties)", "dim")]
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
    if r.enumerated and any(o.satisfies is None for o in r.outcomes):  # a value too free to list
        return "decided by one solver query (the condition names a value the ISA leaves unspecified)"
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
    """The report of one check. A timed-out check lists at most ``SHOWN_ON_TIMEOUT`` of the
    outcomes it found (and says how many it leaves out); the findings (racing pairs) follow the
    table, each with its witness's outcome."""
    p = r.program
    out.line((p.name, "bold cyan"), (f"  ({p.file})", "dim"), f"  {p.description}" if p.description else "")
    out.line("model ", (r.model, "bold"), f"   engine {r.engine}   events {r.n_events}   "
             f"time {r.time_s * 1000:.1f} ms")
    if p.condition is not None:
        out.line(f"condition  {p.condition.quantifier} {p.condition.text.split(' ', 1)[-1]}"
                 if p.condition.text else "condition")
    shown, left_out = bounded(r)
    if shown.outcomes or shown.enumerated:
        _outcome_table(shown, out)
    _findings(shown, out)
    if shown.enumerated:
        out.line(_count_line(r, left_out))
    elif "condition" not in r.not_asked:
        out.line(("outcomes: not enumerated (--observe condition asks one query; --observe all "
                  "lists every allowed outcome)", "dim"))
    out.line(*verdict_segments(r))
    _notes(r, out)


# a timed-out check's report lists at most this many of the outcomes found (the rest are counted)
SHOWN_ON_TIMEOUT = 50
# the statuses of a check that ended before its enumeration did: bounded lists, partial counts
PARTIAL = {"timeout": "before the timeout", "interrupted": "before Ctrl-C",
           "memory": "before the memory limit", "capped": "before the listing stopped"}


def bounded(r: CheckResult, cap: int = SHOWN_ON_TIMEOUT) -> tuple[CheckResult, int]:
    """``r`` itself, or for a timed-out check with more than ``cap`` outcomes a copy holding
    ``cap`` of them (those satisfying the condition first, then the first others, in their
    order), and how many were left out."""
    if r.status not in PARTIAL or len(r.outcomes) <= cap:
        return r, 0
    sat = [i for i, o in enumerate(r.outcomes) if o.satisfies][:cap]
    rest = [i for i, o in enumerate(r.outcomes) if not o.satisfies][:cap - len(sat)]
    keep = sorted(sat + rest)
    return replace(r, outcomes=[r.outcomes[i] for i in keep]), len(r.outcomes) - cap


def _count_line(r: CheckResult, left_out: int) -> str:
    n = len(r.outcomes)
    if r.status not in PARTIAL:
        return f"{n} allowed outcome(s)"
    text = f"{n} allowed outcome(s) found {PARTIAL[r.status]}"
    if r.program.condition is not None:
        text += f" ({sum(1 for o in r.outcomes if o.satisfies)} satisfy the condition)"
    if left_out:
        text += f"; {n - left_out} listed, {left_out} left out"
    return text


def _findings(r: CheckResult, out: Writer) -> None:
    """Each finding (a racing pair) with the outcome of its witness execution, and what became of
    the question when it was not answered whole."""
    index = {o.outcome: i for i, o in enumerate(r.outcomes, 1)}
    for f in r.findings:
        if f.kind == "hang":  # a witness of its own, in words (ptxmm.queries.hangs)
            out.line((f"  {f}", "red"))
            continue
        i = index.get(f.outcome)
        where = ("in an execution that ends there: the other threads stop where they are, mid-loop or "
                 "at a barrier" if f.outcome is None and f.kind in GRID_ENDING else
                 f"e.g. {f.outcome}" if i is None else
                 f"e.g. outcome {i}" if r.enumerated else "e.g. in an execution with the witness's values")
        out.line((f"  {f}   ({where})", "yellow"))
    if r.findings_status in ("timeout", "memory", "interrupted"):
        why = {"timeout": "before the time limit", "memory": "before the memory limit",
               "interrupted": "before Ctrl-C"}[r.findings_status]
        out.line((f"  the model's flags were not all decided {why}: races may be "
                  "missing from this list", "yellow"))
    elif r.findings_status == "stopped":
        out.line(("  the model's flags were looked for only in the executions behind the outcomes "
                  "found (--max-outcomes): races may be missing from this list", "yellow"))
    elif r.findings_status == "ok" and not r.findings and not r.enumerated:
        out.line(("data races: none (the race query found no allowed execution with one)", "dim"))


LIVENESS_TEXT = {
    "terminates": lambda m: (("liveness: ", "bold"), (f"no execution hangs (progress {m})", "green")),
    "hangs": lambda m: (("liveness: ", "bold"), (f"an execution hangs (progress {m}): see the hang "
                                                 "finding above", "red")),
    "timeout": lambda m: (("liveness: ", "bold"), (f"unknown (progress {m}): the time limit passed",
                                                   "yellow")),
    "undecided": lambda m: (("liveness: ", "bold"), (f"not decided (progress {m}): no hang found, but "
                                                     "that does not show every execution ends", "yellow")),
}


def _liveness(r: CheckResult, out: Writer) -> None:
    """The liveness verdict, and how it compares with the test's ``.expect-liveness`` line."""
    head, (text, colour) = LIVENESS_TEXT[r.liveness](r.progress_model)
    out.line(head, (text + (f": {r.liveness_why}" if r.liveness_why else ""), colour))
    if r.expected_liveness is not None:
        ok = r.liveness_agrees
        mark = (("? not decided", "yellow") if ok is None else ("✓ agrees", "green") if ok else
                ("✗ disagrees", "red"))
        out.line(head, mark, f" with .expect-liveness {r.expected_liveness}")


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
            row.append(("✓", "green") if o.satisfies else "?" if o.satisfies is None else "·")
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
    if r.reductions:  # each changes no answer (issue 40): said, as the JSON's bound.reductions
        out.line((f"reductions: {'; '.join(r.reductions)}", "dim"))
    if r.liveness is not None:
        _liveness(r, out)
    if r.not_asked:  # never "no race" or a verdict for a question the check did not ask
        out.line((f"not asked (--properties): {', '.join(r.not_asked)}", "yellow"))
    if r.program.kernel is not None:  # the bounds a kernel check ran under
        info = r.program.kernel
        out.line((f"bounds: {len(r.program.threads)} thread(s) ({info.launch.grid} x {info.launch.block}"
                  f"{f' on {info.launch.gpus} GPUs' if info.launch.gpus > 1 else ''}), "
                  f"{len(r.program.locations)} buffer element(s), loops unrolled to --unroll {r.unroll}; "
                  "finding lines are CUDA file:line [in brackets] and PTX (line N)", "dim"))
    if r.expected_findings is not None:
        ok = r.findings_agree
        mark = (("? not decided", "yellow") if ok is None else
                ("✓ agrees", "green") if ok else ("✗ DISAGREES", "red"))
        out.line(f"expected: {', '.join(r.expected_findings) or 'ok'}; found "
                 f"{', '.join(r.found_kinds) or 'ok'}   ", mark)
    if r.expected is not None:
        ok = r.agrees
        mark = (("? not decided", "yellow") if ok is None else
                ("✓ agrees", "green") if ok else ("✗ DISAGREES", "red"))
        out.line(f"expected: condition {'holds' if r.expected else 'fails'}   ", mark)
