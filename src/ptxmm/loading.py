"""Programs from text or files: the front end chosen from the file's suffix, else from its text
(a herd/Dat3M test starts with ``PTX <name>``); every file the system cannot read is a located
error."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ArgumentError, PtxmmError, SourcePos
from .ir.program import Program


def parse(text: str, file: str = "<string>", fmt: str | None = None, kernel=None) -> Program:
    """Parse program text. ``fmt`` is "ptx" or "litmus"; by default it is chosen from the file
    extension, then from the content (a herd/Dat3M test starts with ``PTX <name>``). A ``.cu``
    file or a PTX module (nvcc's output) is a kernel, launched as its ``// ptxmm: launch`` line or
    ``kernel`` (:class:`ptxmm.kernel.kernels.KernelArgs`) says."""
    _text_arg(text, file, fmt)
    kernel = _kernel_arg(kernel)
    if fmt == "kernel" or (fmt is None and _is_kernel(text, file)):
        return parse_kernel(text, file, kernel)
    if fmt is None:
        suffix = Path(file).suffix
        if suffix == ".litmus" or (suffix != ".ptx" and text.lstrip().startswith("PTX")):
            fmt = "litmus"
        else:
            fmt = "ptx"
    if kernel is not None and any(getattr(kernel, k, None) is not None for k in _KERNEL_OPTIONS):
        _kernel_options_refused(kernel, file)
    from .syntax.expect import with_comment_expectation

    if fmt == "litmus":
        from .syntax import litmus

        return with_comment_expectation(litmus.parse(text, file), text, file)
    from .syntax import ptx

    return with_comment_expectation(ptx.parse(text, file), text, file)


def _text_arg(text, file, fmt) -> None:
    """``parse``'s arguments: text and a file name as str, fmt one of the formats."""
    from .errors import ArgumentError, ArgumentTypeError

    for name, v in (("text", text), ("file", file)):
        if not isinstance(v, str):
            raise ArgumentTypeError(f"invalid value for {name}: {v!r:.60} ({type(v).__name__}) is "
                                    "not text", None, "ptxmm.parse(text) takes program text; "
                                    "ptxmm.load(path) reads a file")
    if fmt not in (None, "ptx", "litmus", "kernel"):
        raise ArgumentError(f"invalid value for fmt: {fmt!r:.60} is not one of 'ptx', 'litmus', "
                            "'kernel'", None, "None: chosen from the file name and the text")


def _kernel_arg(kernel):
    """``kernel``: None, a :class:`~ptxmm.kernel.kernels.KernelArgs`, or a launch as text
    (``"k<<<1, 2>>>(int out[2])"``, as --launch takes)."""
    if kernel is None:
        return None
    from .errors import ArgumentTypeError
    from .kernel.kernels import KernelArgs

    if isinstance(kernel, KernelArgs):
        return kernel
    if isinstance(kernel, str):
        return KernelArgs(launch=kernel)
    raise ArgumentTypeError(f"invalid value for kernel: {kernel!r:.60} ({type(kernel).__name__}) is "
                            "not a launch or KernelArgs", None,
                            'a launch as --launch takes ("k<<<1, 2>>>(int out[2])") or '
                            "ptxmm.kernel.kernels.KernelArgs(launch=..., nvcc_flags=...)")


_KERNEL_OPTIONS = {"launch": "--launch", "nvcc_flags": "--nvcc-flags", "exists": "--exists",
                   "forall": "--forall"}


def _kernel_options_refused(kernel, file: str) -> None:
    """The kernel options (--launch, --nvcc-flags, --exists, --forall) given for a litmus test:
    a usage error naming them, never silently ignored (the test's own condition would be judged)."""
    from .errors import ArgumentError

    given = [o for k, o in _KERNEL_OPTIONS.items() if getattr(kernel, k, None) is not None]
    verb = "applies" if len(given) == 1 else "apply"
    raise ArgumentError(f"{', '.join(given)} {verb} only to kernel files (.cu, a PTX module); {file} is a "
                        "litmus test", None, "a litmus test states its own condition (exists/forall "
                        "line) and threads: leave the kernel options out")


def parse_kernel(text: str, file: str = "<string>", args=None) -> Program:
    """A kernel file's Program (:func:`ptxmm.kernel.kernels.read_kernel`, ``args`` its
    :class:`~ptxmm.kernel.kernels.KernelArgs`) whose layout asks the Z3 engine about addresses
    computed from loaded data (:class:`ptxmm.engines.addresses.Z3Addresses`)."""
    from .engines.addresses import Z3Addresses
    from .kernel.kernels import read_kernel

    return read_kernel(text, file, args, oracle=Z3Addresses)


def _path_arg(path) -> Path:
    """``load``'s path: a str or an os.PathLike naming a file as text (the CLI's FILE)."""
    from .errors import ArgumentTypeError

    if isinstance(path, str):
        return Path(path)
    try:
        fs = os.fspath(path)
    except TypeError:
        fs = None
    if isinstance(fs, str):
        return Path(fs)
    raise ArgumentTypeError(f"invalid value for path: {path!r:.60} ({type(path).__name__}) is not a "
                            "file path", None, 'a path as text or a pathlib.Path: ptxmm.load("file.ptx"); '
                            "ptxmm.parse(text) takes program text")


def _is_kernel(text: str, file: str) -> bool:
    if Path(file).suffix == ".cu":
        return True
    if Path(file).suffix == ".litmus" or ".entry" not in text:
        return False
    from .kernel.module import is_module

    return is_module(text)


def load(path: str | Path, fmt: str | None = None, kernel=None) -> Program:
    """Read and parse a litmus file (or a kernel: :func:`parse`). A leading UTF-8 byte order mark
    is skipped (positions count from the character after it, as editors show them)."""
    p = _path_arg(path)
    try:
        text = p.read_text().removeprefix("\ufeff")
    except FileNotFoundError:
        raise PtxmmError(f"no such file: {p}", SourcePos(str(p), 1, 1),
                         "check the path") from None
    except IsADirectoryError:
        raise PtxmmError(f"{p} is a directory", SourcePos(str(p), 1, 1),
                         "name a .ptx or .litmus file") from None
    except UnicodeDecodeError:
        raise PtxmmError(f"{p} is not a text file", SourcePos(str(p), 1, 1),
                         "name a .ptx or .litmus file") from None
    except OSError as e:
        raise PtxmmError(f"cannot read {p}: {e.strerror}", SourcePos(str(p), 1, 1)) from None
    except ValueError:  # a NUL in the name
        shown = repr(str(p))
        raise ArgumentError(f"{shown if len(shown) <= 60 else shown[:57] + '...'} is not a valid path",
                            None, "name a .ptx or .litmus file") from None
    return parse(text, str(p), fmt, kernel)
