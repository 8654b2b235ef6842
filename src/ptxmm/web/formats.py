"""Source text → Program for the playground: the front end named by a format ("ptx", "litmus",
"cu"). :data:`FORMATS` is the one place that says which formats exist. A ``.cu`` source and a PTX
module (nvcc's output: ``.entry`` functions) are kernels (:mod:`ptxmm.kernel`, through
:func:`ptxmm.loading.parse`); a kernel from a request goes through :mod:`.kernel_source` first.

No web framework is imported here (the examples' listing and the jobs use it in a worker)."""

from __future__ import annotations

from pathlib import PurePath

from ..ir.program import Program

FORMATS = ("ptx", "litmus", "cu")
SUFFIX = {"ptx": ".ptx", "litmus": ".litmus", "cu": ".cu"}


def format_of(file: str, text: str) -> str:
    """The format a file is in: its suffix, else its text (a Dat3M test starts with ``PTX``)."""
    suffix = PurePath(file).suffix
    for fmt, s in SUFFIX.items():
        if suffix == s:
            return fmt
    return "litmus" if text.lstrip().startswith("PTX") else "ptx"


def is_kernel(text: str, fmt: str) -> bool:
    """Whether a source of ``fmt`` is a kernel: every ``.cu``, and a PTX module."""
    if fmt == "cu":
        return True
    if fmt != "ptx" or ".entry" not in text:
        return False
    from ..kernel.module import is_module

    return is_module(text)


def parse_source(text: str, file: str, fmt: str | None = None, kernel=None) -> Program:
    """The Program of ``text`` in ``fmt`` (None: from ``file``'s suffix, then the text); a kernel
    (a ``.cu`` file, which nvcc reads from ``file``, or a PTX module) is launched as ``kernel``
    (:class:`ptxmm.kernel.kernels.KernelArgs`) or its ``// ptxmm: launch`` line says."""
    from ..loading import parse

    fmt = fmt or format_of(file, text)
    if is_kernel(text, fmt):
        return parse(text, file, "kernel", kernel)
    return parse(text, file, fmt, kernel)  # kernel options on a litmus test: refused there
