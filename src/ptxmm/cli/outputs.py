"""The output options (``--json FILE``, ``graph -o FILE``, ``--jsonl FILE``...): each is checked
before any work starts, so that a run is never lost to a path that cannot be written at its end.
A folder, a missing parent folder or a place that cannot be written is a usage error naming the
option and the path (exit 2)."""

from __future__ import annotations

import os

import click


def unwritable(path: str) -> str | None:
    """Why ``path`` cannot be written as a file, or None when it can (nothing is created)."""
    p = os.path.abspath(path)
    parent = os.path.dirname(p)
    if os.path.isdir(p):
        return "is a folder"
    if not os.path.exists(parent):
        return f"its folder {parent} does not exist"
    if not os.path.isdir(parent):
        return f"{parent} is not a folder"
    if os.path.exists(p):
        return None if os.access(p, os.W_OK) else "cannot be written (permission denied)"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"its folder {parent} cannot be written to (permission denied)"
    return None


def output_file(option: str, path: str | None) -> None:
    """A usage error when the file option ``option`` names a ``path`` that cannot be written."""
    why = unwritable(path) if path else None
    if why:
        raise click.UsageError(f"{option} {path}: {why}; give a file path in a folder that exists")
