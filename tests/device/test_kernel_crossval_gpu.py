"""On a GPU (skipped without CuPy and a device): kernel crossval of corpus kernels, the guards that
catch out-of-bounds writes and the harness's assertion counter."""

from __future__ import annotations

import shutil

import pytest
from support import ROOT, gpu_test_marks

from ptxmm.device import batch as B
from ptxmm.device import kernel_cross as KC
from ptxmm.device.env import PRESETS

pytestmark = gpu_test_marks()

K = ROOT / "examples" / "kernels"


def _cross(path, budget=0.3, env=PRESETS["barrier"]):
    job = KC.plan_kernel_file(path, "ptx", 2)
    assert isinstance(job, KC.KernelJob), job
    kc = KC.run_kernel(job, env, budget, None, 60.0)  # in a process of its own
    assert isinstance(kc, KC.KernelCross), kc
    return kc


@pytest.mark.parametrize("name", ["mp-release-flag.ptx", "spinlock-cas.ptx"])
def test_correct_corpus_kernels_end_only_in_allowed_states(name):
    kc = _cross(K / name)
    assert kc.run.checksum_ok and kc.run.instances >= 2 * 1024
    assert not kc.violations and kc.assert_instances == 0 and kc.oob_instances == 0
    assert kc.allowed_seen == len(kc.plan.allowed) == 1


def test_the_off_by_one_write_lands_in_a_guard_every_time():
    kc = _cross(K / "exchange-off-by-one.ptx", 0.2)
    assert kc.oob_instances == kc.run.instances > 0 and not kc.violations


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_assertion_failures_are_counted_per_instance_and_end_the_thread(tmp_path, monkeypatch):
    """Thread 1 of every instance fails its assert and must stop there (as in the model): out[1]
    stays 0, and every instance counts one failure; the CUDA context survives (a second run)."""
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    cu = tmp_path / "fails.cu"
    cu.write_text("// ptxmm: launch k<<<1, 2>>>(int out[2])\n#include <cassert>\n"
                  "__global__ void k(int *out) {\n  assert(threadIdx.x != 1);\n  out[threadIdx.x] = 5;\n}\n")
    for _ in range(2):
        kc = _cross(cu, 0.1)
        assert kc.plan.assert_allowed and kc.plan.allowed == {(5, 0)}
        assert kc.assert_instances == kc.run.instances > 0 and not kc.violations
        assert {r.values for r in kc.rows if r.count} == {(5, 0)}
    assert not isinstance(KC.plan_kernel_file(K / "mp-relaxed-flag.ptx", "ptx", 2), B.Skip)
