"""Source text → Program for the playground and the pytest plugin: the front end named by a format
("ptx", "litmus", "cu"), and the one place where the kernel front end (``.cu``) plugs in.

No web framework is imported here: the pytest plugin uses this module without the ``[web]`` extra."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath

from ..errors import SourcePos, UnsupportedError
from ..program import Program

FORMATS = ("ptx", "litmus", "cu")
SUFFIX = {"ptx": ".ptx", "litmus": ".litmus", "cu": ".cu"}

# The kernel front end (issue 25) registers its parser here: ``register("cu", parse)`` with
# ``parse(text, file) -> Program``. Until then a .cu source is a located "not supported yet".
_EXTRA: dict[str, Callable[[str, str], Program]] = {}


def register(fmt: str, parse: Callable[[str, str], Program]) -> None:
    """Plug a front end in for ``fmt`` (today only "cu" is open to it)."""
    if fmt != "cu":
        raise ValueError(f"{fmt!r}: the ptx and litmus front ends are built in")
    _EXTRA[fmt] = parse


def supported(fmt: str) -> bool:
    """Whether sources of ``fmt`` can be read here now."""
    return fmt in ("ptx", "litmus") or fmt in _EXTRA


def format_of(file: str, text: str) -> str:
    """The format a file is in: its suffix, else its text (a Dat3M test starts with ``PTX``)."""
    suffix = PurePath(file).suffix
    for fmt, s in SUFFIX.items():
        if suffix == s:
            return fmt
    return "litmus" if text.lstrip().startswith("PTX") else "ptx"


def parse_source(text: str, file: str, fmt: str | None = None) -> Program:
    """The Program of ``text`` in ``fmt`` (None: from ``file``'s suffix, then the text); a format no
    front end reads yet is an :class:`UnsupportedError` located at the file's start."""
    fmt = fmt or format_of(file, text)
    if fmt == "cu":
        parse = _EXTRA.get("cu")
        if parse is None:
            raise UnsupportedError("CUDA sources (.cu) need the kernel front end, which this ptxmm "
                                   "does not have yet", SourcePos(file, 1, 1),
                                   "compile the kernel's litmus-sized core to PTX and write it as a "
                                   ".ptx test, or use the ptx or litmus format")
        return parse(text, file)
    from ..loading import parse

    return parse(text, file, fmt)
