"""``ptxmm races --up-to '<<<G, B>>>' FILE...``: race freedom of a barrier-synchronized kernel for
every launch up to ``<<<G, B>>>`` (:func:`ptxmm.queries.any_launch.any_launch_races`), or a race
with its witness launch, confirmed by the concrete check; a kernel outside the encoding falls back
to the concrete check of its own launch. Exit status: 0 race-free (or outside, and the concrete
check found no race), 1 races, barrier divergence or undecided, 2 an error."""

from __future__ import annotations

import sys

import click

from ..errors import PtxmmError
from .common import error_json
from .kernels import kernel_options


@click.command("races")
@click.argument("files", nargs=-1, required=True)
@click.option("--up-to", "up_to", required=True, metavar="'<<<G, B>>>'",
              help="the largest launch: every one-dimensional launch <<<g, b>>> with g <= G, b <= B")
@click.option("--no-confirm", is_flag=True,
              help="do not run the concrete check at a race's witness launch")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="seconds per solver query (and per concrete check)")
@click.option("--json", "as_json", is_flag=True, help="print JSON (schema: docs/json-schema.md)")
@kernel_options
def races(files, up_to, no_confirm, timeout, as_json, kernel):
    """Race freedom for every launch up to <<<G, B>>> (two arbitrary threads, symbolic ids)."""
    from ..queries.any_launch import any_launch_races, parse_up_to

    try:
        parse_up_to(up_to)
    except PtxmmError as e:
        raise click.BadParameter(e.message) from None
    out, worst = [], 0
    for f in files:
        try:
            r = any_launch_races(f, up_to, kernel=kernel, confirm=not no_confirm, timeout=timeout)
        except PtxmmError as e:
            worst = 2
            if as_json:
                out.append(error_json(f, e.kind, e.message, e.pos, e.hint))
            else:
                click.echo(str(e), err=True)
            continue
        # race-free, or outside with a concrete check that found no race: 0
        clean = r.verdict == "race-free" or (r.verdict == "outside" and not r.fallback)
        worst = max(worst, 0 if clean else 1)
        if as_json:
            out.append(r.to_json())
        else:
            _show(r)
    if as_json:
        import json

        click.echo(json.dumps(out if len(out) != 1 else out[0], indent=2))
    sys.exit(worst)


def _show(r) -> None:
    click.echo(f"{r.file}: {r.kernel}")
    if r.verdict == "race-free":
        click.echo(f"  no data race for any launch up to <<<{r.grid_max}, {r.block_max}>>>, assuming")
        for a in r.assumptions:
            click.echo(f"    - {a}")
    else:
        click.echo(f"  {r.summary()}")
    for f in r.findings:
        click.echo(f"  {f}")
    if r.verdict != "outside":
        click.echo(f"  ({r.queries} solver queries, {r.time_s:.2f} s)")


__all__ = ["races"]
