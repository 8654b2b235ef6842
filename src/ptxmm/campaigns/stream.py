"""Campaign plumbing: inputs streamed (directories walked lazily, list files read line by line,
generated tests made as they are needed — never held whole), results written as JSON lines as they
finish, ``--resume`` (skip the tests already in the output), progress (done/total, rate, ETA)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import PtxmmError

SUFFIXES = (".ptx", ".litmus")


@dataclass(frozen=True)
class Item:
    """One test to run: a file (``path``) or a generated text (``text``, named ``key``)."""
    key: str
    path: str | None = None
    text: str | None = None
    size: int = 0
    family: str = ""


def _walk(d: Path) -> Iterator[Path]:
    """The test files under ``d``, in sorted order, one directory listing in memory at a time."""
    with os.scandir(d) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.is_dir():
            yield from _walk(Path(e.path))
        elif e.name.endswith(SUFFIXES):
            yield Path(e.path)


def _list_file(f: Path) -> Iterator[Path]:
    """A list file: one test path a line (relative to the list file's folder), # comments."""
    with f.open() as fh:
        for line in fh:
            s = line.strip()
            if s and not s.startswith("#"):
                p = Path(s)
                yield p if p.is_absolute() else f.parent / p


def iter_paths(paths: Iterable[str]) -> Iterator[Path]:
    """Test files of ``paths``: directories walked, ``.ptx``/``.litmus`` files as given, any other
    file read as a list of test paths."""
    for p in map(Path, paths):
        if p.is_dir():
            yield from _walk(p)
        elif p.suffix in SUFFIXES:
            yield p
        elif p.is_file():
            yield from _list_file(p)
        else:
            raise PtxmmError(f"{p}: no such file or directory", None,
                             "give test files, directories of them, or a list file")


def file_items(paths: Iterable[str]) -> Iterator[Item]:
    for p in iter_paths(paths):
        yield Item(str(p), path=str(p))


def gen_items(opts, fmt: str = "ptx") -> Iterator[Item]:
    from .gen import generate

    for g in generate(opts):
        yield Item("gen:" + g.name, text=g.text(fmt), size=g.size, family=g.family)


def count(items: Iterator) -> int:
    return sum(1 for _ in items)


# ----- JSON lines and --resume ---------------------------------------------------------------------


def done_keys(out: Path) -> set[str]:
    """The keys of the tests an earlier run wrote to ``out``. A last line cut short by an
    interrupt is dropped from the file (its test runs again)."""
    if not out.exists():
        return set()
    keys: set[str] = set()
    good = 0
    with out.open("rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                break
            try:
                keys.add(json.loads(line)["key"])
            except (ValueError, KeyError):
                break
            good += len(line)
    if good != out.stat().st_size:
        with out.open("r+b") as fh:
            fh.truncate(good)
    return keys


class JsonLines:
    """Rows appended one line each, flushed as they come (an interrupt loses no finished row)."""

    def __init__(self, out: Path | None, resume: bool):
        self.fh = None if out is None else out.open("a" if resume else "w")

    def write(self, row: dict) -> None:
        if self.fh is not None:
            self.fh.write(json.dumps(row, sort_keys=True) + "\n")
            self.fh.flush()

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


class Progress:
    """``done/total  rate/s  ETA`` on stderr, at most once a second, on a terminal (or ``force``)."""

    def __init__(self, total: int | None, stream=None, force: bool = False):
        self.total, self.done, self.base = total, 0, 0
        self.t0, self.last = time.perf_counter(), 0.0
        self.stream = stream or sys.stderr
        self.on = force or self.stream.isatty()

    def resume_from(self, done: int) -> None:
        """``done`` tests finished in an earlier run: counted as done, not in the rate."""
        self.done = self.base = done

    def text(self) -> str:
        el = max(time.perf_counter() - self.t0, 1e-9)
        rate = (self.done - self.base) / el
        tot = "?" if self.total is None else str(self.total)
        eta = ""
        if self.total is not None and rate > 0:
            eta = f"  ETA {max(self.total - self.done, 0) / rate:.0f} s"
        return f"{self.done}/{tot}  {rate:.1f} tests/s{eta}"

    def step(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if self.on and now - self.last >= 1.0:
            self.last = now
            self.stream.write("\r" + self.text() + " " * 4)
            self.stream.flush()

    def close(self) -> None:
        if self.on:
            self.stream.write("\r" + self.text() + "\n")
            self.stream.flush()
