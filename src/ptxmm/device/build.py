"""Compiling generated CUDA: ``nvcc -cubin`` for sm_90 (the cubin that runs is the cubin the SASS
audit reads), cached by source hash. Needs nvcc on PATH; no GPU.

``rdc``: compiled as relocatable device code (``nvcc -cubin -rdc=true``, as the public CUDA runner
builds its kernels) and linked by ``nvlink`` into a loadable cubin. ptxas then compiles each
function without whole-program knowledge; on sm_90 it puts four never-executed ``@!PT LDS RZ, [RZ]``
before every ``MEMBAR.ALL.CTA`` of generic code, as in the runner's machine code."""

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
                  timeout: float | None = None, rdc: bool = False) -> Path:
    """Compile a translation unit to a cubin; returns its path (cached). ``timeout``: seconds nvcc
    may take (CompileTimeout after that); ``rdc``: relocatable device code, then nvlink."""
    if not nvcc_available():
        raise PtxmmError("nvcc is not on PATH", None, "install the CUDA toolkit (nvcc 12.0 or newer)")
    if rdc and shutil.which("nvlink") is None:
        raise PtxmmError("nvlink is not on PATH", None, "the CUDA toolkit's bin folder holds it, beside nvcc")
    h = hashlib.sha256((source + arch + " ".join(flags) + (" rdc" if rdc else "")).encode()).hexdigest()[:20]
    out = cache_dir() / f"{h}.cubin"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory() as td:
        cu = Path(td) / "litmus.cu"
        cu.write_text(source)
        tmp = Path(td) / "litmus.cubin"
        steps = [["nvcc", "-cubin", f"-arch={arch}", *flags, "-o", str(tmp), str(cu)]]
        if rdc:
            rel = Path(td) / "litmus.rel.cubin"
            steps = [["nvcc", "-cubin", "-rdc=true", f"-arch={arch}", *flags, "-o", str(rel), str(cu)],
                     ["nvlink", f"-arch={arch}", "-o", str(tmp), str(rel)]]
        for cmd in steps:
            _run(cmd, timeout)
        shutil.move(str(tmp), out)
    return out


def _run(cmd: list[str], timeout: float | None) -> None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CompileTimeout(f"{cmd[0]} took longer than {timeout:g} s", None,
                             "raise --compile-timeout, or simplify the test") from None
    if r.returncode != 0:
        raise PtxmmError(f"the generated CUDA did not compile ({cmd[0]}):\n" + r.stderr.strip()[:2000], None,
                         "this is a ptxmm bug: please report it with the test file")
