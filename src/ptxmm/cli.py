"""Command-line interface: a thin click shell over the Python API."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from rich.console import Console

from . import check as api_check
from . import load
from .cat.parser import builtin_models, load_model
from .errors import PtxmmError
from .report import render

ENGINES = click.Choice(["z3", "brute"])


def _fail(e: PtxmmError) -> None:
    click.echo(str(e), err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ptxmm")
def main() -> None:
    """ptxmm — which outcomes does the PTX memory model allow, and why?"""


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--model", "-m", default="ptx", show_default=True,
              help="model name (see `ptxmm models`) or path to a .cat file")
@click.option("--engine", type=ENGINES, default="z3", show_default=True)
@click.option("--unroll", type=click.IntRange(0, 64), default=2, show_default=True,
              help="bound on backward-branch iterations")
@click.option("--observe", type=click.Choice(["all", "condition"]), default="all",
              show_default=True, help="record loaded registers and final memory, or only what "
              "the condition names")
@click.option("--json", "as_json", is_flag=True, help="print JSON (schema: docs/json-schema.md)")
def check(files, model, engine, unroll, observe, as_json) -> None:
    """Enumerate every outcome FILES may have under the model and judge their conditions."""
    console = Console(highlight=False)
    out = []
    try:
        load_model(model)
        for i, f in enumerate(files):
            res = api_check(load(f), model, engine=engine, unroll=unroll, observe=observe)
            if as_json:
                out.append(res.to_json())
            else:
                if i:
                    console.print()
                render(res, console)
    except PtxmmError as e:
        _fail(e)
    if as_json:
        click.echo(json.dumps(out if len(out) != 1 else out[0], indent=2))


@main.command("test")
@click.argument("paths", nargs=-1, required=True)
@click.option("--expected", "expected_csv", default=None,
              help="CSV of expectations (path,ptx-v6.0,ptx-v7.5; 1 = condition holds)")
@click.option("--column", default=None, help="CSV column (default: the model's, else the last)")
@click.option("--model", "-m", default="ptx", show_default=True)
@click.option("--unroll", type=click.IntRange(0, 64), default=2, show_default=True)
@click.option("--jobs", "-j", type=int, default=None, help="worker processes (default: cores)")
@click.option("--json", "json_out", default=None, help="write per-test results to this file")
def test_cmd(paths, expected_csv, column, model, unroll, jobs, json_out) -> None:
    """Run many tests, compare verdicts with expectations; exit 1 on any disagreement."""
    from rich.progress import Progress
    from rich.table import Table

    from .runner import collect, run_tests

    console = Console(highlight=False)
    t0 = time.perf_counter()
    try:
        load_model(model)
        n = len(collect(list(paths)))
        with Progress(console=console, transient=True) as prog:
            task = prog.add_task("testing", total=n)
            results = run_tests(list(paths), model, expected_csv, column, unroll, jobs,
                                progress=lambda: prog.advance(task))
    except PtxmmError as e:
        _fail(e)
    wall = time.perf_counter() - t0
    bad = [r for r in results if r.status in ("DISAGREE", "error")]
    if bad:
        table = Table("test", "status", "expected", "got", "detail", box=None)
        for r in bad:
            table.add_row(r.name, r.status, str(r.expected), str(r.holds),
                          r.error or r.path)
        console.print(table)
    rated = [r for r in results if r.status in ("agree", "DISAGREE")]
    agree = sum(r.status == "agree" for r in results)
    times = sorted(r.time_s for r in results if r.status != "unsupported") or [0.0]
    console.print(f"{agree}/{len(rated)} agree   ({len(results)} tests, "
                  f"{sum(r.status == 'error' for r in results)} errors, "
                  f"{sum(r.status == 'unsupported' for r in results)} not supported yet, "
                  f"{sum(r.status == 'unrated' for r in results)} unrated; model {model})")
    console.print(f"wall {wall:.2f} s, median {times[len(times) // 2] * 1000:.1f} ms/test, "
                  f"max {times[-1] * 1000:.1f} ms/test (tests that ran)")
    if json_out:
        Path(json_out).write_text(json.dumps([r.__dict__ | {"status": r.status} for r in results],
                                             indent=2))
    sys.exit(1 if bad else 0)


@main.command()
def models() -> None:
    """List the built-in models."""
    for name, path in builtin_models().items():
        first = path.read_text().splitlines()[0] if path.stat().st_size else ""
        click.echo(f"{name:14s} {first}")


if __name__ == "__main__":
    main()
