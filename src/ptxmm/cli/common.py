"""What the commands share: the error object of a file that could not be handled, a batch's end
and its Ctrl-C rows, and the exit on an error (docs/json-schema.md, "errors")."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..errors import PtxmmError

if TYPE_CHECKING:
    from rich.console import Console


def consoles() -> tuple[Console, Console]:
    """rich consoles for stdout and stderr (imported here: ``check`` does without rich)."""
    from rich.console import Console

    return Console(highlight=False), Console(stderr=True, highlight=False)


def _fail(e: PtxmmError) -> None:
    click.echo(str(e), err=True)
    sys.exit(2)


def interrupted(out: list, files, done: int, verb: str) -> int:
    """Ctrl-C in a batch over files: an error row for each file not done (it counts as one
    failure); the caller still prints what finished."""
    out += [error_json(f, "interrupted", f"not {verb}: interrupted by the user (Ctrl-C)")
            for f in files[done:]]
    click.echo(f"interrupted: {done} of {len(files)} file(s) {verb}", err=True)
    return 1


def finish_batch(out: list, failed: int, as_json: bool) -> None:
    """The end of a batch over files: its JSON (one object for one file) and the exit status
    (2 when some file failed)."""
    if as_json:
        import json

        click.echo(json.dumps(out if len(out) != 1 else out[0], indent=2))
    sys.exit(2 if failed else 0)


def error_json(file: str, kind: str, message: str, pos=None, hint: str | None = None) -> dict:
    """The JSON object of a file that could not be checked (docs/json-schema.md, "errors")."""
    return {"file": str(file), "error": {"kind": kind, "message": message,
                                         "position": str(pos) if pos else None, "hint": hint}}
