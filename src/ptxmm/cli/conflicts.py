"""Options that do not apply together: every option either applies to the input or is refused
with a usage error naming the conflict (exit 2, never silently ignored or overridden). The
commands call these after click has read their options."""

from __future__ import annotations

import click


def given(*names: str) -> list[str]:
    """Of the current command's parameters ``names``, those the command line set (not defaults),
    spelled as options (``--size``)."""
    ctx = click.get_current_context()
    out = []
    for n in names:
        src = ctx.get_parameter_source(n)
        if src is not None and src != click.core.ParameterSource.DEFAULT:
            p = next((p for p in ctx.command.params if p.name == n), None)
            out.append(max(p.opts, key=len) if p is not None and p.opts else n)
    return out


def refuse(names: list[str], why: str) -> None:
    """A usage error when any of ``names`` (options the user gave) was given: ``why`` says what
    they conflict with."""
    if names:
        raise click.UsageError(f"{', '.join(names)} {'does' if len(names) == 1 else 'do'} not "
                               f"apply {why}")


GEN_PARAMS = ("size", "relax", "safe", "cycles", "nprocs", "sems", "scopes", "proxies", "placement",
              "limit")


def liveness(liveness_on: bool) -> None:
    """--progress is a progress model for --liveness: without it, nothing would use it."""
    refuse([] if liveness_on else given("progress_model"), "without --liveness (the progress "
           "model is the one liveness assumes)")


def fix(fix_on: bool) -> None:
    """``explain --fix-bound`` bounds the search of --fix: without it, nothing would use it."""
    refuse([] if fix_on else given("fix_bound"), "without --fix (it bounds --fix's search)")


def gen_cycles(cycles) -> None:
    """``--cycle`` names the cycles: the options that shape the enumeration of cycles would be
    ignored."""
    if cycles:
        refuse(given("size", "relax", "safe"), "with --cycle (--cycle names the cycles: none "
               "are enumerated)")


def gen_families(per_family) -> None:
    if per_family is not None:
        refuse(given(*GEN_PARAMS, "fmt"), "with --families (it writes the device-coverage "
               "families, not cycles: its options are --families N, --seed and -o)")
    else:
        refuse(given("seed"), "without --families (it seeds the families' sample)")


def diff_inputs(paths, use_gen: bool) -> None:
    if use_gen and paths:
        raise click.UsageError(f"give PATHS or --gen, not both (PATHS: {' '.join(paths[:3])}"
                               f"{' ...' if len(paths) > 3 else ''})")
    if not use_gen:
        refuse(given(*GEN_PARAMS), "without --gen (they shape generated tests)")


def json_with_jsonl(jsonl, as_json) -> None:
    """``ptxmm test``: --jsonl streams, and --json would not be written."""
    if jsonl and as_json:
        raise click.UsageError("--json and --jsonl exclude each other: --jsonl streams a line per "
                               "test, --json writes one document at the end; give one")
