""".cu → PTX with nvcc (``nvcc -ptx -lineinfo -arch=sm_90 -O3`` by default), cached in
``~/.cache/ptxmm/nvcc`` (``$PTXMM_CACHE`` overrides the directory) under a key of the source
text, the flags and nvcc's version; a missing nvcc and a failed compile are located errors (the
latter with nvcc's own message).

The playground compiles a request's source through :func:`running_in` (its sandbox, with nvcc's
temporary files in the sandbox's directory); the command line runs nvcc as it is."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

from ..errors import PtxmmError, SourcePos

DEFAULT_FLAGS = "-lineinfo -arch=sm_90 -O3"
# how a compile runs nvcc (the command → the finished process) and where its temporary files go
Runner = Callable[[list[str]], subprocess.CompletedProcess]
_RUNNER: ContextVar[tuple[Runner, Path] | None] = ContextVar("ptxmm_nvcc_runner", default=None)


class CompileError(PtxmmError):
    kind = "nvcc error"


def find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for d in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if d and (Path(d) / "bin" / "nvcc").is_file():
            return str(Path(d) / "bin" / "nvcc")
    return None


@contextlib.contextmanager
def running_in(runner: Runner, tmp: Path):
    """Within: :func:`compile_cu` runs nvcc through ``runner`` (it may raise a
    :class:`CompileError` of its own), its output in a temporary directory under ``tmp``."""
    token = _RUNNER.set((runner, tmp))
    try:
        yield
    finally:
        _RUNNER.reset(token)


def cache_dir() -> Path:
    return Path(os.environ.get("PTXMM_CACHE") or Path.home() / ".cache" / "ptxmm") / "nvcc"


def _version(nvcc: str) -> str:
    """nvcc's version line, memoised by the binary's path and modification time (a cache hit
    then costs no process)."""
    st = os.stat(nvcc)
    memo = cache_dir() / f"version-{hashlib.sha256(f'{nvcc}:{st.st_mtime_ns}'.encode()).hexdigest()[:16]}"
    try:
        return memo.read_text()
    except OSError:
        pass
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    v = out.strip().splitlines()[-1] if out.strip() else "unknown"
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(v)
    except OSError:
        pass
    return v


def compile_cu(path: str | Path, flags: str | None = None) -> tuple[str, Path]:
    """The PTX of the .cu file at ``path`` and the cached file holding it."""
    path = Path(path)
    nvcc = find_nvcc()
    if nvcc is None:
        ptx = path.with_suffix(".ptx")
        hint = (f"install the CUDA toolkit (nvcc), or check the PTX committed beside it: ptxmm check {ptx}"
                if ptx.is_file() else "install the CUDA toolkit (nvcc) or put it on PATH")
        raise CompileError(f"{path} needs nvcc to compile, and nvcc is not found (PATH, $CUDA_HOME, "
                           "/usr/local/cuda)", SourcePos(str(path), 1, 1), hint)
    flags = DEFAULT_FLAGS if flags is None else flags
    try:
        argv = shlex.split(flags)
    except ValueError as e:
        raise CompileError(f"cannot read --nvcc-flags: {e}", None, None) from None
    text = path.read_bytes()
    key = hashlib.sha256(b"\0".join([text, flags.encode(), _version(nvcc).encode(),
                                     str(path.resolve()).encode()])).hexdigest()[:32]
    out = cache_dir() / f"{path.stem}-{key}.ptx"
    if out.is_file():
        return out.read_text(), out
    out.parent.mkdir(parents=True, exist_ok=True)
    box = _RUNNER.get()
    with tempfile.TemporaryDirectory(dir=box[1] if box else None) as tmp:
        dst = Path(tmp) / (path.stem + ".ptx")
        cmd = [nvcc, "-ptx", *argv, str(path), "-o", str(dst)]
        try:
            res = (box[0](cmd) if box else
                   subprocess.run(cmd, capture_output=True, text=True, timeout=300))
        except subprocess.TimeoutExpired:
            raise CompileError(f"nvcc took more than 300 s on {path}", SourcePos(str(path), 1, 1),
                               None) from None
        if res.returncode != 0:
            msg = (res.stderr or res.stdout).strip()
            raise CompileError(f"nvcc could not compile {path}:\n{msg}", _first_error(msg, path),
                               f"command: {' '.join(shlex.quote(c) for c in cmd)}")
        if not dst.is_file():  # flags such as --dryrun, -E: nvcc succeeds and writes nothing
            raise CompileError(f"nvcc produced no PTX for {path} (flags {flags!r})",
                               SourcePos(str(path), 1, 1),
                               "--nvcc-flags is added to `nvcc -ptx FILE -o OUT`: leave out flags that "
                               f"stop it writing OUT; command: {' '.join(shlex.quote(c) for c in cmd)}")
        ptx = dst.read_text()
    tmp_out = out.with_suffix(f".{os.getpid()}.tmp")
    tmp_out.write_text(ptx)
    os.replace(tmp_out, out)
    return ptx, out


def _first_error(msg: str, path: Path) -> SourcePos:
    """The position of nvcc's first ``file(line): error`` (else the file's start)."""
    import re

    m = re.search(r"^(.*?)\((\d+)\): error", msg, re.M)
    if m:
        return SourcePos(m.group(1), int(m.group(2)), 1)
    return SourcePos(str(path), 1, 1)


__all__ = ["CompileError", "DEFAULT_FLAGS", "cache_dir", "compile_cu", "find_nvcc", "running_in"]
