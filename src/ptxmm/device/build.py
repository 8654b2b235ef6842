"""Compiling generated CUDA: ``nvcc -cubin`` for sm_90 (the cubin that runs is the cubin the SASS
audit reads), cached by source hash. Needs nvcc on PATH; no GPU.

``rdc``: compiled as relocatable device code (``nvcc -cubin -rdc=true``, as the public CUDA runner
builds its kernels) and linked by ``nvlink`` into a loadable cubin. ptxas then compiles each
function without whole-program knowledge; on sm_90 it puts four never-executed ``@!PT LDS RZ, [RZ]``
before every ``MEMBAR.ALL.CTA`` of generic code, as in the runner's machine code.

``ptxas=N`` (N = a CUDA release as major*10+minor, e.g. 129 for 12.9; 0: nvcc's own): nvcc writes
the PTX and the ptxas of release N (the executable named by the environment variable
``PTXMM_PTXAS_<N>``, e.g. from the ``nvidia-cuda-nvcc-cu12`` wheel) assembles it, its ``.version``
lowered to that release's PTX ISA. What it changes (docs/device/coverage.md): CUDA 13's ptxas puts a
``NOP`` that waits for every outstanding load after each ``MEMBAR.ALL.CTA`` (``fence.*.cta``), so a
load after a block-scope fence never issues before an earlier load's value is back; the ptxas of
CUDA 11.8-12.9 does not, and the hardware then reorders the two loads. Only a cache miss needs that
ptxas: a cache filled elsewhere (PTXMM_CACHE) serves a machine without it."""

from __future__ import annotations

import hashlib
import os
import re
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
                  timeout: float | None = None, rdc: bool = False, ptxas: int = 0) -> Path:
    """Compile a translation unit to a cubin; returns its path (cached). ``timeout``: seconds nvcc
    may take (CompileTimeout after that); ``rdc``: relocatable device code, then nvlink;
    ``ptxas``: the CUDA release whose ptxas assembles the PTX (0: nvcc's own)."""
    key = source + arch + " ".join(flags) + (" rdc" if rdc else "") + (f" ptxas{ptxas}" if ptxas else "")
    out = cache_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:20]}.cubin"
    if out.exists():
        return out
    if not nvcc_available():
        raise PtxmmError("nvcc is not on PATH", None, "install the CUDA toolkit (nvcc 12.0 or newer)")
    if rdc and shutil.which("nvlink") is None:
        raise PtxmmError("nvlink is not on PATH", None, "the CUDA toolkit's bin folder holds it, beside nvcc")
    with tempfile.TemporaryDirectory() as td:
        cu = Path(td) / "litmus.cu"
        cu.write_text(source)
        tmp = Path(td) / "litmus.cubin"
        rel = Path(td) / "litmus.rel.cubin"
        obj = rel if rdc else tmp
        if ptxas:
            ptx = Path(td) / "litmus.ptx"
            _run(["nvcc", "-ptx", f"-arch={arch}", *flags, "-o", str(ptx), str(cu)], timeout)
            ptx.write_text(_PTX_VERSION.sub(f".version {ptx_isa(ptxas)}", ptx.read_text(), count=1))
            _run([ptxas_path(ptxas), f"-arch={arch}", "-O3", *(["-c"] if rdc else []), "-o", str(obj),
                  str(ptx)], timeout)
        else:
            _run(["nvcc", "-cubin", *(["-rdc=true"] if rdc else []), f"-arch={arch}", *flags, "-o", str(obj),
                  str(cu)], timeout)
        if rdc:
            _run(["nvlink", f"-arch={arch}", "-o", str(tmp), str(rel)], timeout)
        shutil.move(str(tmp), out)
    return out


_PTX_VERSION = re.compile(r"^\.version \d+\.\d+", re.M)
# the PTX ISA each CUDA release's ptxas reads (release as major*10+minor)
_PTX_ISA = {118: "7.8", 120: "8.0", 121: "8.1", 122: "8.2", 123: "8.3", 124: "8.4", 125: "8.5",
            126: "8.5", 128: "8.7", 129: "8.8"}


def ptx_isa(release: int) -> str:
    """The PTX ISA version the ptxas of CUDA ``release`` (e.g. 129) reads."""
    if release not in _PTX_ISA:
        raise PtxmmError(f"ptxas={release} is not a CUDA release ptxmm knows", None,
                         "use one of " + ", ".join(str(r) for r in _PTX_ISA) + " (129 = CUDA 12.9)")
    return _PTX_ISA[release]


def ptxas_path(release: int) -> str:
    """The ptxas of CUDA ``release``: the executable named by PTXMM_PTXAS_<release>."""
    ptx_isa(release)
    var = f"PTXMM_PTXAS_{release}"
    path = os.environ.get(var, "")
    if not path or not os.access(path, os.X_OK):
        raise PtxmmError(f"ptxas={release} needs the ptxas of CUDA {release // 10}.{release % 10}: "
                         f"{var} is {'not set' if not path else 'not an executable: ' + path}", None,
                         f"pip install nvidia-cuda-nvcc-cu{release // 10}=={release // 10}.{release % 10}.* "
                         f"and set {var} to its nvidia/cuda_nvcc/bin/ptxas")
    return path


def _run(cmd: list[str], timeout: float | None) -> None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CompileTimeout(f"{cmd[0]} took longer than {timeout:g} s", None,
                             "raise --compile-timeout, or simplify the test") from None
    if r.returncode != 0:
        raise PtxmmError(f"the generated CUDA did not compile ({cmd[0]}):\n" + r.stderr.strip()[:2000], None,
                         "this is a ptxmm bug: please report it with the test file")
