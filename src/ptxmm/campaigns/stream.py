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

from ..errors import ArgumentError, PtxmmError

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
# A --jsonl file begins with ptxmm's header line (HEADER: the command, its model(s), --unroll and the
# ptxmm version); every other line is one row (an object with a "key"), and every row carries the
# model. --resume appends only to a file whose header this run would write (so rows of two models
# never mix), keeps every row, and drops only a last line cut short by a kill; it never rewrites
# any other line (a comment someone added stays). A file that does not begin with the header is
# never written to: not resumed, not overwritten.

HEADER = "ptxmm-jsonl"


def header(command: str, **settings) -> dict:
    """The first line of a --jsonl file ``command`` writes under ``settings`` (model(s), unroll)."""
    from .. import __version__

    return {HEADER: 1, "command": command, **settings, "version": __version__}


def _json_line(line: bytes):
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _row(line: bytes) -> dict | None:
    """The row a line holds, or None (the header, a comment, a line of something else)."""
    r = _json_line(line)
    return r if isinstance(r, dict) and isinstance(r.get("key"), str) else None


def _refuse(out: Path, why: str, hint: str) -> ArgumentError:
    return ArgumentError(f"--jsonl {out}: {why}", None, hint)


def _unwritable(out: Path, e: OSError) -> ArgumentError:
    return _refuse(out, f"cannot be written ({e.strerror or e})",
                   "give a file path in a folder that exists")


def _check_header(out: Path, first: bytes, head: dict | None) -> None:
    h = _json_line(first)
    if not (isinstance(h, dict) and h.get(HEADER) == 1):
        raise _refuse(out, "not a file ptxmm --jsonl wrote (its first line is not ptxmm's header "
                      "line); it is left as it is", "give a new file, or the file an earlier run "
                      "of this command wrote (docs/campaigns.md, --resume)")
    if head is None:
        return
    differ = [k for k in head if k != "version" and h.get(k) != head[k]]
    if differ:
        was = ", ".join(f"{k} {h.get(k)!r}" for k in differ)
        now = ", ".join(f"{k} {head[k]!r}" for k in differ)
        raise _refuse(out, f"was begun with {was}; this run has {now}: its rows would mix with "
                      "the file's", "resume with the file's settings, or give a new --jsonl file")
    if h.get("version") != head.get("version"):
        sys.stderr.write(f"warning: --jsonl {out} was begun by ptxmm {h.get('version')}; this is "
                         f"{head.get('version')}\n")


def done_keys(out: Path, head: dict | None = None) -> set[str]:
    """The keys of the tests an earlier run wrote to ``out`` (--resume), after checking that the
    file begins with the header ``head`` (a file that does not is refused, untouched). Every row
    is kept; a last line cut short by an interrupt is dropped from the file (its test runs again);
    other lines that are not rows are left in place."""
    try:
        if not out.exists() or out.stat().st_size == 0:
            return set()
        keys: set[str] = set()
        with out.open("r+b") as fh:
            first = fh.readline()
            _check_header(out, first, head)
            if not first.endswith(b"\n"):
                fh.write(b"\n")
            pos = len(first)
            for line in fh:
                r = _row(line)
                if not line.endswith(b"\n"):  # the last line, cut short
                    if r is None:
                        fh.truncate(pos)
                        break
                    fh.write(b"\n")
                if r is not None:
                    keys.add(r["key"])
                pos += len(line)
        return keys
    except OSError as e:
        raise _unwritable(out, e) from None


def rows(out: Path) -> Iterator[dict]:
    """The rows of a --jsonl file (the header and lines that are not rows skipped)."""
    with out.open("rb") as fh:
        for line in fh:
            r = _row(line)
            if r is not None:
                yield r


class JsonLines:
    """Rows appended one line each, flushed as they come (an interrupt loses no finished row).
    A new file begins with ``head`` (the header line); ``stamp`` is added to every row (the
    model). An existing file that ptxmm did not write is never overwritten."""

    def __init__(self, out: Path | None, resume: bool, head: dict | None = None,
                 stamp: dict | None = None):
        self.stamp = stamp or {}
        self.fh = None
        if out is None:
            return
        try:
            fresh = not out.exists() or out.stat().st_size == 0
            if not resume and not fresh:
                with out.open("rb") as fh:
                    _check_header(out, fh.readline(), None)
            self.fh = out.open("a" if resume else "w")
        except OSError as e:
            raise _unwritable(out, e) from None
        if (fresh or not resume) and head is not None:
            self.fh.write(json.dumps(head, sort_keys=True) + "\n")
            self.fh.flush()

    def write(self, row: dict) -> None:
        if self.fh is not None:
            self.fh.write(json.dumps(self.stamp | row, sort_keys=True) + "\n")
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
