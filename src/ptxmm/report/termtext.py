"""Styled lines and plain tables for the check report, without rich.

``ptxmm check`` prints a few lines and one small table; importing rich for that costs more than
the whole check of a litmus test (~25 ms of a ~100 ms run). rich stays for what it does best —
progress bars and spinners on long work — and is imported only then. Colour follows the usual
conventions: only on a terminal, never with ``NO_COLOR``, always with ``FORCE_COLOR``."""

from __future__ import annotations

import os
import sys
from dataclasses import field
from typing import TextIO

from .._infra.records import record

_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}

Segment = str | tuple[str, str]  # plain text, or (text, style) with style like "bold green"


def wants_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return os.environ.get("TERM") != "dumb" and hasattr(stream, "isatty") and stream.isatty()


def styled(text: str, style: str, colour: bool) -> str:
    if not colour or not style or not text:
        return text
    codes = ";".join(_SGR[s] for s in style.split())
    return f"\x1b[{codes}m{text}\x1b[0m"


@record(frozen=False)
class Writer:
    """Writes lines of segments to a stream, styled when the stream is a colour terminal."""

    stream: TextIO = field(default_factory=lambda: sys.stdout)
    colour: bool | None = None

    def __post_init__(self) -> None:
        if self.colour is None:
            self.colour = wants_colour(self.stream)

    def line(self, *segments: Segment) -> None:
        parts = [s if isinstance(s, str) else styled(s[0], s[1], bool(self.colour)) for s in segments]
        self.stream.write("".join(parts) + "\n")

    def table(self, header: list[str], rows: list[list[Segment]], justify: str) -> None:
        """A borderless table: columns two spaces apart, ``justify`` one of l/r/c per column;
        the header is bold."""
        def text(s: Segment) -> str:
            return s if isinstance(s, str) else s[0]

        widths = [max([len(h)] + [len(text(r[i])) for r in rows]) for i, h in enumerate(header)]
        self.line(*_cells([(h, "bold") for h in header], widths, justify))
        for r in rows:
            self.line(*_cells(r, widths, justify))


def _cells(cells: list[Segment], widths: list[int], justify: str) -> list[Segment]:
    out: list[Segment] = []
    for i, (c, w, j) in enumerate(zip(cells, widths, justify)):
        t, style = (c, "") if isinstance(c, str) else c
        pad = w - len(t)
        left = pad if j == "r" else pad // 2 if j == "c" else 0
        last = i == len(cells) - 1
        right = 0 if last else pad - left
        out += [" " * left, (t, style), " " * right + ("" if last else "  ")]
    while out and not (out[-1] if isinstance(out[-1], str) else out[-1][0]).strip():
        out.pop()  # no trailing blanks (an empty last column)
    if out and isinstance(out[-1], str):
        out[-1] = out[-1].rstrip()
    return out
