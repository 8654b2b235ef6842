"""Kernels in the playground: a ``.cu`` source is compiled by nvcc on the server, and nvcc's
preprocessor reads every file an ``#include`` names. What holds is the sandbox nvcc runs in
(:mod:`ptxmm.web.sandbox`: it sees the job's directory and the CUDA toolkit, no file of the
server); this text guard is a first, friendly refusal (a located :class:`RefusedError`, a 422)
before nvcc sees a source when any preprocessor line plainly could read a file or run something
(a text filter loses to the preprocessor: a splice inside ``__has_include`` passes it):

* ``#include`` only as a literal ``<header>`` of :data:`HEADERS` (never a quoted path, a macro,
  ``#include_next``, ``#import`` or ``#embed``);
* ``#pragma`` only ``unroll`` and ``once``; no ``#line`` nor GNU line markers (``# 12 "f"``);
* no ``_Pragma``, ``__has_include``, ``__has_embed``, nor the trigraphs ``??=`` and ``??/``; no
  token pasting (``##``) in a ``#define``, which could spell them.

The scan over-approximates (a text that only looks like a directive inside a comment or a string is
refused too): every place where a directive may begin — a logical line's start (backslash-newline
spliced, as GCC splices it, even with blanks before the newline) or the end of a ``/* */`` comment,
then blanks and whole comments — is checked, with ``#`` and its digraph ``%:`` alike.

PTX text names source files too (``.file N "path"``, nvcc's output and inline ``asm``), and the
kernel report reads the CUDA line of a finding from that file: :func:`check_ptx_files` refuses a
path other than a plain file name or a header of the CUDA installation. The checks run in a fresh,
empty working directory (:func:`sandbox`), where the request's own source is the only file."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import tempfile
from pathlib import Path

from ..errors import PtxmmError, SourcePos

HEADERS = frozenset({
    "cuda.h", "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h", "cuda_pipeline.h", "cuda_awbarrier.h",
    "mma.h", "cooperative_groups.h", "cub/cub.cuh",
    "cassert", "assert.h", "cstdio", "stdio.h", "cstdint", "stdint.h", "cstddef", "stddef.h",
    "climits", "limits.h", "cfloat", "float.h", "type_traits", "utility", "limits"})
# whole families of the toolkit's headers (libcu++, cooperative groups, CUB): ``<cuda/ptx>``,
# ``<cuda/std/atomic>``, ``<cooperative_groups/reduce.h>``, ``<cub/block/block_reduce.cuh>``; a
# name of plain components only (no ``..``, nothing hidden): nvcc finds it in the toolkit
FAMILIES = ("cuda/", "cub/", "cooperative_groups/")
_HEADER = re.compile(r"[A-Za-z0-9_][\w+-]*(?:\.[\w+-]+)*(?:/[A-Za-z0-9_][\w+-]*(?:\.[\w+-]+)*)*")
DIRECTIVES = frozenset({"define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef",
                        "else", "endif", "error", "warning", "include", "pragma"})
# pragmas that read no file: loop unrolling, include guards, nvcc's diagnostics
PRAGMAS = ("unroll", "nounroll", "once", "nv_diag_suppress", "nv_diag_default", "nv_diag_warning",
           "nv_diag_error", "nv_diag_once", "nv_diagnostic", "diag_suppress", "diag_default",
           "diag_warning")
_BANNED = (("_Pragma", "`_Pragma` is not accepted here"),
           ("__has_include", "`__has_include` reads the file system"),
           ("__has_embed", "`__has_embed` reads the file system"),
           ("??=", "trigraphs are not accepted here"), ("??/", "trigraphs are not accepted here"))
_SPLICE = re.compile(r"\\[ \t\f\v]*(?:\r\n|\r|\n)")
_NEWLINE = re.compile(r"\r\n|\r|\n")
# blanks as GCC's preprocessor skips them (a NUL is one; a byte-order mark may start the file)
_BLANK_OR_COMMENT = re.compile(r"(?:[ \t\f\v\x00\ufeff]+|/\*.*?\*/)*", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*")
_INCLUDE = re.compile(r"<([^<>\s]+)>(?:[ \t\f\v]+|/\*.*?\*/)*(?://.*)?$", re.S)
HINT = ("the playground compiles a kernel with nvcc and reads no file but the bundled examples; "
        "allowed: #include <" + ">, <".join(sorted(HEADERS)) + ">, <" + "...>, <".join(FAMILIES)
        + "...>, #pragma " + "/".join(PRAGMAS) + ", and #define/#if/#ifdef/#else/#endif/#error")


class RefusedError(PtxmmError):
    """A source the playground does not compile: it could read a file or run something."""

    kind = "refused"


def check_cu(text: str, file: str) -> None:
    """Refuse ``text`` (a .cu source) when a preprocessor line could read a file (see above)."""
    for word, why in _BANNED:
        i = text.find(word)
        if i >= 0:
            raise RefusedError(why, _pos(text, file, i), HINT)
    for start, line in _logical_lines(text):
        for at in _starts(line):
            m = _BLANK_OR_COMMENT.match(line, at)
            j = m.end()
            if line.startswith("#", j):
                _directive(text, file, start, line, j + 1)
            elif line.startswith("%:", j):
                _directive(text, file, start, line, j + 2)


def _logical_lines(text: str):
    """(offset in ``text`` of the line's start, the line with its splices removed)."""
    offset = 0
    for physical in _split_keep(text):
        yield offset, physical
        offset += len(physical)


def _split_keep(text: str) -> list[str]:
    """Logical lines: physical lines joined where a backslash (and blanks) ends one; each keeps
    its spliced text so that offsets count from the text (the splices become blanks)."""
    joined = _SPLICE.sub(lambda m: " " * len(m.group(0)), text)
    out, last = [], 0
    for m in _NEWLINE.finditer(joined):
        out.append(joined[last:m.end()])
        last = m.end()
    out.append(joined[last:])
    return out


def _starts(line: str) -> list[int]:
    """Where a directive may begin on ``line``: its start, and after each ``*/``."""
    return [0] + [m.end() for m in re.finditer(r"\*/", line)]


def _directive(text: str, file: str, start: int, line: str, j: int) -> None:
    j = _BLANK_OR_COMMENT.match(line, j).end()
    body = line[j:].rstrip("\r\n")
    if not body.strip() or body.lstrip().startswith("//"):
        return  # the null directive
    m = _NAME.match(line, j)
    pos = _pos(text, file, start + j)
    if m is None:
        raise RefusedError(f"the preprocessor line `#{body.strip()[:40]}` is not accepted here", pos, HINT)
    name = m.group(0)
    rest = line[_BLANK_OR_COMMENT.match(line, m.end()).end():].rstrip("\r\n")
    if name not in DIRECTIVES:
        raise RefusedError(f"`#{name}` is not accepted here", pos, HINT)
    if name == "include":
        inc = _INCLUDE.match(rest)
        if inc is None:
            raise RefusedError("`#include` takes a literal `<header>` here (no quoted path, no macro)",
                               pos, HINT)
        if not allowed_header(inc.group(1)):
            raise RefusedError(f"`#include <{inc.group(1)}>` is not a header the playground allows",
                               pos, HINT)
    elif name == "define" and ("##" in rest or "%:%:" in rest):
        raise RefusedError("token pasting (`##`) is not accepted here: it could spell `_Pragma` or "
                           "`__has_include`", pos, HINT)
    elif name == "pragma":
        w = _NAME.match(rest)
        if w is None or w.group(0) not in PRAGMAS:
            raise RefusedError(f"`#pragma {rest.strip()[:40]}` is not accepted here", pos, HINT)


def allowed_header(name: str) -> bool:
    """Whether ``#include <name>`` is allowed: a header of :data:`HEADERS`, or of a family of
    :data:`FAMILIES` spelt with plain path components."""
    return name in HEADERS or (name.startswith(FAMILIES) and _HEADER.fullmatch(name) is not None)


def _pos(text: str, file: str, i: int) -> SourcePos:
    before = text[:i]
    line = len(_NEWLINE.findall(before)) + 1
    col = i - max(before.rfind("\n"), before.rfind("\r")) if before else i + 1
    return SourcePos(file, line, col)


_FILE = re.compile(r'\.file\s+(\d+)\s+"([^"]*)"')


def check_ptx_files(ptx: str, file: str, roots: list[Path]) -> None:
    """Refuse PTX (nvcc's output of a request's .cu) whose ``.file`` names a path other than a plain
    file name (looked up in the job's empty directory) or a file under one of ``roots`` (the job's
    directory, the CUDA installation): inline ``asm`` may write any ``.file``. A path is resolved
    first (``os.path.realpath``: ``..`` and symbolic links), then checked, so nvcc's own
    ``<cuda>/bin/../targets/x86_64-linux/include/device_atomic_functions.hpp`` passes and
    ``<cuda>/../../etc/passwd`` does not."""
    resolved = [Path(os.path.realpath(r)) for r in roots]
    for m in _FILE.finditer(ptx):
        name = m.group(2)
        if _plain(name) or (os.path.isabs(name) and _inside(name, resolved)):
            continue
        raise RefusedError(f'`.file {m.group(1)} "{name[:60]}"` names a file the playground does not read',
                           _pos(ptx, file, m.start()),
                           "the kernel's own source and the CUDA headers are the only files named here")


def _inside(name: str, roots: list[Path]) -> bool:
    try:
        real = Path(os.path.realpath(name))
    except (OSError, ValueError):
        return False
    return any(real.is_relative_to(r) for r in roots)


def plain_ptx_files(ptx: str) -> str:
    """A PTX module from a request with each ``.file`` path cut to its plain file name (what a
    kernel report shows of it anyway): looked up in the job's empty directory, it reads nothing."""
    def cut(m: re.Match) -> str:
        name = m.group(2)
        if _plain(name):
            return m.group(0)
        base = re.split(r"[/\\]", name)[-1]
        return f'.file {m.group(1)} "{base if _plain(base) else "source"}"'

    return _FILE.sub(cut, ptx)


def _plain(name: str) -> bool:
    return "/" not in name and "\\" not in name and name not in ("", ".", "..")


@functools.cache
def cuda_include() -> Path | None:
    """The include directory of the CUDA installation the nvcc found belongs to (its ``TOP``, as
    ``nvcc --dryrun`` says: nvcc may be a wrapper script elsewhere), if any."""
    import subprocess

    from ..kernel.nvcc import find_nvcc

    nvcc = find_nvcc()
    if nvcc is None:
        return None
    try:
        out = subprocess.run([nvcc, "--dryrun", "-ptx", "-x", "cu", os.devnull, "-o", os.devnull],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"^#\$ TOP=(.+)$", out.stdout + out.stderr, re.M)
    return Path(m.group(1).strip()) / "include" if m else Path(nvcc).resolve().parent.parent / "include"


@contextlib.contextmanager
def sandbox():
    """Run in a fresh, empty working directory (removed afterwards): a relative name a kernel
    looks up (its ``.cu`` twin, a ``.file`` name) finds only what the job wrote there."""
    old = os.getcwd()
    with tempfile.TemporaryDirectory(prefix=f"ptxmm-web-{os.getpid()}-") as tmp:
        os.chdir(tmp)
        try:
            yield Path(tmp)
        finally:
            os.chdir(old)
