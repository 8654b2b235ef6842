"""``ptxmm doctor``: what the device commands need on this machine, what is there and what is missing
(GPU, driver, CUDA, CuPy, nvcc, ptxas, cuobjdump). Works without a GPU: it then says what is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass


@dataclass
class Item:
    name: str
    found: str | None  # what is there (version), None when missing
    needed_by: str
    hint: str = ""


def _run(cmd: list[str]) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def _tool_version(tool: str) -> str | None:
    out = _run([tool, "--version"])
    if out is None:
        return None
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return f"{m.group(2)} ({shutil.which(tool)})" if m else f"found ({shutil.which(tool)})"


def _smi() -> tuple[str | None, str | None, str | None]:
    """(GPU names, driver version, the driver's CUDA version) from nvidia-smi."""
    q = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    head = _run(["nvidia-smi"]) or ""
    m = re.search(r"CUDA Version:\s*([\d.]+)", head)
    if not q:
        return None, None, m.group(1) if m else None
    rows = [r.split(", ") for r in q.strip().splitlines()]
    return "; ".join(r[0] for r in rows), rows[0][1] if rows[0][1:] else None, m.group(1) if m else None


def _cupy() -> tuple[str | None, str | None, str | None]:
    """(CuPy version and package, CUDA runtime version, why it cannot run kernels)."""
    try:
        import cupy
    except ImportError:
        return None, None, None
    from importlib import metadata

    pkgs = [d.metadata["Name"] for d in metadata.distributions()
            if (d.metadata["Name"] or "").lower().startswith("cupy")]
    ver = f"{cupy.__version__} ({', '.join(sorted(set(pkgs))) or 'cupy'})"
    try:
        rt = cupy.cuda.runtime.runtimeGetVersion()
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, no device, driver too old for this CuPy
        return ver, None, f"{type(e).__name__}: {e}"
    return ver, f"{rt // 1000}.{rt % 1000 // 10}", None if n else "no CUDA device"


def extra_for(cuda: str | None) -> str:
    """Which extra to install for a driver's CUDA version."""
    major = cuda.split(".")[0] if cuda else ""
    if not major.isdigit():
        return ("pip install 'ptxmm[device-cuda13]' for a CUDA 13 driver, 'ptxmm[device-cuda12]' for "
                "CUDA 12 (nvidia-smi shows the driver's CUDA version)")
    return f"pip install 'ptxmm[device-cuda{13 if int(major) >= 13 else 12}]'"


def diagnose() -> list[Item]:
    gpu, driver, cuda = _smi()
    cupy_ver, runtime, cupy_err = _cupy()
    inst = extra_for(cuda)
    items = [
        Item("GPU", gpu, "run, crossval, tune", "an NVIDIA GPU (the harness targets sm_90: H100/H200)"),
        Item("NVIDIA driver", driver, "run, crossval, tune", "install the NVIDIA driver"),
        Item("CUDA (driver)", cuda, "run, crossval, tune", "comes with the driver"),
        Item("CuPy", cupy_ver, "run, crossval, tune", inst),
        Item("CUDA runtime (CuPy)", runtime if cupy_ver and not cupy_err else None, "run, crossval, tune",
             (cupy_err + "; " if cupy_err else "") + f"a CuPy that matches the driver: {inst}"),
        Item("nvcc", _tool_version("nvcc"), "run, crossval, tune, audit",
             "install the CUDA toolkit (nvcc 12.0 or newer)"),
        Item("ptxas", _tool_version("ptxas"), "nvcc (compiles the PTX)", "part of the CUDA toolkit"),
        Item("cuobjdump", _tool_version("cuobjdump"), "audit", "part of the CUDA toolkit"),
    ]
    return items


def report(items: list[Item]) -> tuple[list[str], bool]:
    """Lines to print, and whether everything the device commands need is there."""
    lines = []
    for it in items:
        lines.append(f"{it.name:22s} {it.found or 'MISSING':40s} needed by {it.needed_by}")
    missing = [it for it in items if not it.found]
    if missing:
        lines.append("")
        lines.append("missing:")
        lines += [f"  {it.name}: {it.hint}" for it in missing]
    else:
        lines.append("\neverything the device commands need is here")
    return lines, not missing
