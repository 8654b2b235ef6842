"""nvcc's output shared by the playground's workers: a request's ``.cu`` compiled once is not
compiled again for the next request of the same kernel (the command line has its own cache,
:func:`ptxmm.kernel.nvcc.compile_cu`, but a playground job compiles in a fresh directory of its
own, whose path is in the key of that cache and in nvcc's ``.file`` lines).

An entry's key is the SHA-256 of the source's bytes, the file name it is compiled as, nvcc's
flags and nvcc itself (its path, size and modification time); its value is nvcc's PTX with the
job's directory in ``.file`` lines replaced by a marker, put back as the next job's directory on
a hit. Only a successful compile is kept. Entries are written whole (a temporary file renamed)
so that workers share the directory without a lock; past :data:`MAX_ENTRIES` the oldest go.

A hit runs no nvcc at all: what the source may name was refused or sandboxed when it was first
compiled, and the PTX is checked again (:func:`ptxmm.web.kernel_source.check_ptx_files`) as any."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

MARK = "\x00PTXMM-JOB\x00"
MAX_ENTRIES = 2000
Runner = Callable[[list[str]], subprocess.CompletedProcess]
_FILE_LINE = re.compile(r'^(\s*\.file\s+\d+\s+")([^"\n]*)(")', re.M)


def key(cmd: list[str], source: bytes, file: str) -> str:
    """The entry of nvcc's command line ``[nvcc, -ptx, FLAGS..., SOURCE, -o, OUT]`` compiling
    ``source`` as ``file``."""
    nvcc = cmd[0]
    try:
        st = os.stat(nvcc)
        who = f"{nvcc}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        who = nvcc
    flags = "\0".join(cmd[1:-3])
    h = hashlib.sha256()
    for part in (who.encode(), flags.encode(), file.encode(), source):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _swap(ptx: str, old: tuple[str, ...], new: str) -> str:
    """``ptx`` with each of ``old`` (directories) at the start of a ``.file`` path made ``new``."""
    def one(m: re.Match) -> str:
        path = m.group(2)
        for o in old:
            if path.startswith(o):
                path = new + path[len(o):]
                break
        return m.group(1) + path + m.group(3)

    return _FILE_LINE.sub(one, ptx)


class CompileCache:
    """The shared directory ``root`` of nvcc's outputs."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def runner(self, inner: Runner, job: Path, source: str, file: str) -> Runner:
        """``inner`` (nvcc in the sandbox of ``job``) behind the cache: a hit writes the PTX where
        nvcc would have (``-o``) and runs nothing; a miss runs ``inner`` and keeps its PTX."""
        dirs = tuple(dict.fromkeys((str(job) + "/", str(job.resolve()) + "/")))

        def run(cmd: list[str]) -> subprocess.CompletedProcess:
            if len(cmd) < 4 or cmd[-2] != "-o":
                return inner(cmd)
            entry = self.root / (key(cmd, source.encode(), file) + ".ptx")
            out = Path(cmd[-1])
            with contextlib.suppress(OSError):
                out.write_text(_swap(entry.read_text(), (MARK,), dirs[-1]))
                os.utime(entry)  # recently used: kept longest
                return subprocess.CompletedProcess(cmd, 0, "", "")
            res = inner(cmd)
            if res.returncode == 0 and out.is_file():
                self._keep(entry, _swap(out.read_text(), dirs, MARK))
            return res

        return run

    def _keep(self, entry: Path, ptx: str) -> None:
        with contextlib.suppress(OSError):
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = entry.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(ptx)
            os.replace(tmp, entry)
            self._prune()

    def _prune(self) -> None:
        entries = list(self.root.glob("*.ptx"))
        if len(entries) <= MAX_ENTRIES:
            return
        def age(p: Path) -> float:
            try:
                return p.stat().st_mtime
            except OSError:
                return 0.0
        for p in sorted(entries, key=age)[: len(entries) - MAX_ENTRIES]:
            p.unlink(missing_ok=True)
