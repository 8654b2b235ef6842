from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def benchmark_module(name: str):
    """A script of benchmarks/ imported as a module (the doc generators the staleness tests run)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def gpu_test_marks() -> list:
    """pytestmark for a module of GPU tests: skipped (visibly) without CuPy or without a device."""
    cp = pytest.importorskip("cupy")
    try:
        have = cp.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, no device: CuPy raises its own runtime errors
        have = False
    return [pytest.mark.gpu, pytest.mark.skipif(not have, reason="no CUDA device")]


def ptx_files() -> list[Path]:
    kernels = ROOT / "examples" / "kernels"  # nvcc's PTX modules: kernels, tested by test_kernel_corpus
    modules = (kernels, ROOT / "examples" / "hopper" / "kernels")  # and by test_hopper_kernels
    return sorted([*(ROOT / "tests" / "litmus").rglob("*.ptx"),
                   *(p for p in (ROOT / "examples").rglob("*.ptx") if p.parent not in modules)])


@pytest.fixture
def root() -> Path:
    return ROOT
