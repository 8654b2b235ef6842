"""`ptxmm explain` and `ptxmm graph` (cli.py adds them to the command group when they are named)."""

from __future__ import annotations

import sys

import click

from .. import load
from ..api_args import UNROLL_MAX
from ..errors import PtxmmError
from . import conflicts
from .common import _fail, error_json, finish_batch, interrupted
from .liveness import liveness_options, properties_option, with_properties
from .outputs import output_file

FINDING_KINDS = ["race", "assert-fails", "out-of-bounds", "hang", "trap"]  # explanation/findings.py KINDS
# the property (--properties) that asks each kind of finding
KIND_PROPERTY = {"race": "races", "assert-fails": "sites", "out-of-bounds": "sites", "trap": "sites",
                 "hang": "liveness"}


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--outcome", default=None,
              help='the outcome to explain, e.g. "T1:%r0=1 T1:%r1=0" (default: the condition\'s)')
@click.option("--model", "-m", default="ptx", show_default=True,
              help="model name (see `ptxmm models`) or path to a .cat file")
@click.option("--unroll", type=click.IntRange(0, UNROLL_MAX), default=2, show_default=True)
@click.option("--fix", is_flag=True, help="search the smallest strengthenings that forbid the outcome")
@click.option("--fix-bound", type=click.IntRange(1), default=400, show_default=True,
              help="at most this many engine checks for --fix")
@click.option("--json", "as_json", is_flag=True, help="print the explanation as JSON")
@liveness_options("also explain each hang: where a thread waits forever, why, and the execution up to it")
@click.option("--finding", default=None, type=click.Choice(FINDING_KINDS),
              help="explain the check's findings of this kind, each with its witness execution (a kernel "
                   "without --outcome: every finding, after its condition's explanation if it has one)")
@properties_option("the condition; a kernel's races and sites too, and hangs with --liveness")
def explain(files, outcome, model, unroll, fix, fix_bound, as_json, liveness=False,
            progress_model="fair", finding=None, properties=None) -> None:
    """Why each of FILES' outcome is forbidden (violated axioms, shortest cycles) or allowed (a
    witness, the missing ordering); with --fix, the smallest changes that forbid it.

    Every file is reported: one that cannot be explained is an error (on stderr, and an object
    with an "error" member in the JSON); the exit status is then 2, as it is when a verdict is
    unknown (no execution finishes within --unroll)."""
    from ..explanation.holding import explained, unlisted_text

    conflicts.liveness(liveness or "liveness" in (properties or ()))
    conflicts.fix(fix)
    _asked(properties, finding, outcome, fix)
    with_properties(liveness, properties)
    out, failed, i = [], 0, 0
    try:
        for i, f in enumerate(files):
            try:
                prog = load(f)
                fx, checked = _findings(prog, outcome, model, unroll, progress_model, finding, liveness,
                                        properties)
                # past a value explain cannot enumerate (%globaltimer), the solver's verdict: ``why``
                x, why = (None, None) if (fx is not None and (finding or prog.condition is None)) or not \
                    _asks_condition(properties) else \
                    explained(prog, model, outcome=outcome, unroll=unroll, fix=fix, fix_bound=fix_bound,
                              checked=checked)
                fx = () if x is None and fx is None else fx
            except PtxmmError as e:
                failed += 1
                click.echo(str(e), err=True)
                out.append(error_json(f, e.kind, e.message, e.pos, e.hint))
                continue
            if x is None:
                _echo_findings(out, fx, i, as_json, prog, _findings_fixes(prog, model, unroll, fx, fix_bound)
                               if fix and prog.format == "kernel" else None)
                continue
            failed += x.unknown is not None  # no verdict: exit 2, as check does
            hangs = _hangs(f, model, unroll, progress_model) if liveness else None
            if as_json:
                live = {} if hangs is None else {"hangs": [h.to_json() for h in hangs],
                                                 "progress": progress_model}
                found = {} if fx is None else {"findings": [y.to_json() for y in fx]}
                out.append(x.to_json() | ({"unlisted": why} if why else {}) | live | found)
            else:
                click.echo(("\n" if i else "") + (unlisted_text(x, why) if why else str(x)))
                for y in fx or ():
                    click.echo("\n" + str(y))
                if hangs is not None:
                    click.echo("\n".join(h.explained() for h in hangs) if hangs else
                               f"liveness: no execution hangs (progress {progress_model})")
    except KeyboardInterrupt:
        failed += interrupted(out, files, i, "explained")
    finish_batch(out, failed, as_json)


def _asks_condition(properties) -> bool:
    return properties is None or "condition" in properties


def _asked(properties, finding, outcome, fix) -> None:
    """--properties and the options that ask something it leaves out: a usage error."""
    if properties is None:
        return
    if finding is not None and KIND_PROPERTY[finding] not in properties:
        raise click.UsageError(f"--finding {finding} asks {KIND_PROPERTY[finding]}, which --properties "
                               "leaves out")
    if "condition" not in properties:
        conflicts.refuse(conflicts.given("outcome", "fix", "fix_bound"),
                         "when --properties leaves the condition out")


def _findings(prog, outcome, model, unroll, progress_model, finding, liveness, properties=None):
    """The findings to explain (explain_findings): those of kind ``finding``, or every finding
    of a kernel explained without --outcome, or those --properties asks (races, sites,
    liveness); None: none asked for. With them, the check that found them (None: none ran), whose
    verdict explain may reuse."""
    from ..explanation.findings import findings_checked

    if properties is not None:
        if not properties & {"races", "sites", "liveness"} or (finding is None and outcome is not None):
            return None, None
        return findings_checked(prog, model, kind=finding, unroll=unroll, progress=progress_model,
                                properties=properties)
    if finding is None and (outcome is not None or prog.format != "kernel"):
        return None, None
    return findings_checked(prog, model, kind=finding, unroll=unroll, progress=progress_model,
                            hangs=not liveness)


def _findings_fixes(prog, model, unroll, fx, fix_bound):
    """--fix on a kernel explained by its findings (no condition, no --outcome): their fixes."""
    from ..cat.parser import load_model
    from ..explanation.explain import FIX_BUDGET_S
    from ..explanation.fixfind import findings_fix

    m = load_model(model) if isinstance(model, str) else model
    return findings_fix(prog, m, [y.finding for y in fx], unroll=unroll, budget_s=FIX_BUDGET_S,
                        bound=fix_bound)


def _echo_findings(out: list, fx, i: int, as_json: bool, prog, fixes=None) -> None:
    from ..explanation.advice import fix_lines, fixes_json

    if as_json:
        out.append({"name": prog.name, "file": prog.file, "findings": [y.to_json() for y in fx]}
                   | ({} if fixes is None else {"fixes": fixes_json(prog, fixes)}))
        return
    text = "\n\n".join(str(y) for y in fx) or f"{prog.name}  ({prog.file})\nno findings"
    if fixes is not None:
        text += "\n\n" + "\n".join(fix_lines(prog, fixes))
    click.echo(("\n" if i else "") + text)


def _hangs(f, model, unroll, progress_model) -> list:
    from ..queries.hangs import find_hangs

    return find_hangs(load(f), model, unroll, progress_model)


@click.command()
@click.argument("file")
@click.option("--outcome", default=None, help="the outcome whose execution to draw")
@click.option("--model", "-m", default="ptx", show_default=True)
@click.option("--unroll", type=click.IntRange(0, UNROLL_MAX), default=2, show_default=True)
@click.option("-o", "--output", default=None,
              help="out.svg (laid out by Graphviz's dot; without it by ptxmm's grid), out.dot (the DOT "
                   "source), out.png or any other format of dot (needs dot)")
@click.option("--ascii", "as_ascii", is_flag=True, help="draw in the terminal")
@click.option("--finding", default=None, type=click.Choice(FINDING_KINDS),
              help="draw the witness of the check's first finding of this kind (a kernel without a "
                   "condition or --outcome: its first finding)")
@properties_option("the condition; a kernel without one: its first finding")
def graph(file, outcome, model, unroll, output, as_ascii, finding=None, properties=None) -> None:
    """Draw the execution that explains FILE's outcome: threads as columns, rf/co/fr and the
    derived relations of the explanation, the violating cycle highlighted."""
    from ..explanation.graph import GRID_NOTE, ascii_art, render_file, svg, uses_grid

    output_file("-o", output)
    _asked(properties, finding, outcome, False)
    try:
        prog = load(file)
        if finding is not None or not _asks_condition(properties) or \
                (outcome is None and prog.format == "kernel" and prog.condition is None):
            from ..explanation.findings import finding_graph

            drawn = finding_graph(prog, model, kind=finding, unroll=unroll, properties=properties)
            if drawn is None:
                raise PtxmmError("no candidate execution produces this outcome", None,
                                 "the explanation lists why; nothing to draw")
        else:  # the explanation's execution; where the condition holds so, one allowed execution
            from ..explanation.holding import condition_drawing

            drawn, note = condition_drawing(prog, model, outcome=outcome, unroll=unroll)
            if note:
                click.echo(f"note: {note}", err=True)
        if as_ascii:
            click.echo(ascii_art(drawn))
        if uses_grid() and (output is None and not as_ascii or (output or "").lower().endswith(".svg")):
            click.echo(GRID_NOTE, err=True)
        if output:
            click.echo(f"wrote {render_file(drawn, output)}", err=True)
        elif not as_ascii:
            sys.stdout.write(svg(drawn) + "\n")
    except PtxmmError as e:
        _fail(e)

