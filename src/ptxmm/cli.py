"""Command-line interface: a thin click shell over the Python API."""

from __future__ import annotations

import json
import sys

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


@main.command()
def models() -> None:
    """List the built-in models."""
    for name, path in builtin_models().items():
        first = path.read_text().splitlines()[0] if path.stat().st_size else ""
        click.echo(f"{name:14s} {first}")


if __name__ == "__main__":
    main()
