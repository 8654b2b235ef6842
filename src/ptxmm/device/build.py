"""Compiling generated CUDA: ``nvcc -cubin`` for sm_90 (the cubin that runs is the cubin the SASS
audit reads), cached by source hash. Needs nvcc on PATH; no GPU."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import PtxmmError

ARCH = "sm_90"
NVCC_FLAGS = ("-O3", "-diag-suppress", "550,177")


def cache_dir() -> Path:
    base = os.environ.get("PTXMM_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "ptxmm")
    p = Path(base) / "cubin"
    p.mkdir(parents=True, exist_ok=True)
    return p


def nvcc_available() -> bool:
    return shutil.which("nvcc") is not None


class CompileTimeout(PtxmmError):
    kind = "timeout"


def compile_cubin(source: str, arch: str = ARCH, flags: tuple[str, ...] = NVCC_FLAGS,
                  timeout: float | None = None) -> Path:
    """Compile a translation unit to a cubin; returns its path (cached). ``timeout``: seconds nvcc
    may take (CompileTimeout after that)."""
    if not nvcc_available():
        raise PtxmmError("nvcc is not on PATH", None, "install the CUDA toolkit (nvcc 12.0 or newer)")
    h = hashlib.sha256((source + arch + " ".join(flags)).encode()).hexdigest()[:20]
    out = cache_dir() / f"{h}.cubin"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory() as td:
        cu = Path(td) / "litmus.cu"
        cu.write_text(source)
        tmp = Path(td) / "litmus.cubin"
        try:
            r = subprocess.run(["nvcc", "-cubin", f"-arch={arch}", *flags, "-o", str(tmp), str(cu)],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CompileTimeout(f"nvcc took longer than {timeout:g} s", None,
                                 "raise --compile-timeout, or simplify the test") from None
        if r.returncode != 0:
            raise PtxmmError("the generated CUDA did not compile:\n" + r.stderr.strip()[:2000], None,
                             "this is a ptxmm bug: please report it with the test file")
        shutil.move(str(tmp), out)
    return out
