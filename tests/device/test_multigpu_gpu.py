"""On two GPUs of one host (skipped, saying why, without CuPy, without a device, or with one GPU):
the five two-GPU all-reduce examples (examples/kernels/allreduce-*.cu) cross-validated through
peer pointers (device/kernel_ranks.py): no final state the model forbids; the correct kernels end
in their one allowed state; the broken twins' bug state reported as seen or not with its count."""

from __future__ import annotations

import pytest
from support import ROOT, gpu_test_marks

from ptxmm.device import kernel_cross as KC
from ptxmm.device.env import PRESETS


def _gpus() -> int:
    try:
        import cupy as cp

        return cp.cuda.runtime.getDeviceCount()
    except Exception:  # no CuPy, no driver: gpu_test_marks skips the module first
        return 0


pytestmark = [*gpu_test_marks(), pytest.mark.skipif(
    _gpus() < 2, reason=f"the multi-GPU examples need 2 GPUs with peer access; found {_gpus()}")]

K = ROOT / "examples" / "kernels"
CORRECT = ["allreduce-sys-flags.cu", "allreduce-volatile-fenced.cu"]
BROKEN = ["allreduce-volatile-no-fence.cu", "allreduce-membar-gl-acquire.cu", "allreduce-gpu-scope-flags.cu"]


def _cross(name: str, budget: float = 0.3):
    job = KC.plan_kernel_file(K / name, "ptx", 2, allow_hang=True)
    assert isinstance(job, KC.KernelJob), job
    kc = KC.run_kernel(job, PRESETS["barrier"], budget, None, 30.0)  # in a process of its own
    assert isinstance(kc, KC.KernelCross), kc
    return kc


@pytest.mark.parametrize("name", CORRECT)
def test_the_correct_all_reduces_end_in_their_one_state_on_two_gpus(name):
    kc = _cross(name)
    assert kc.run.checksum_ok and kc.run.instances >= 1024 and kc.run.device.startswith("2 x ")
    assert not kc.violations and kc.assert_instances == 0 and kc.oob_instances == 0
    assert kc.allowed_seen == len(kc.plan.allowed) == 1


@pytest.mark.parametrize("name", BROKEN)
def test_the_broken_twins_show_no_forbidden_state_and_count_their_bug(name):
    kc = _cross(name)
    assert kc.run.checksum_ok and not kc.violations and kc.oob_instances == 0
    bug = kc.bug()
    assert bug is not None and set(bug["instances"]) == {"assert-fails", "condition"}
    assert bug["observed"] == (bug["instances"]["condition"] > 0)
