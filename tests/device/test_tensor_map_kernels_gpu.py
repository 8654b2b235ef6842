"""On a GPU (skipped without CuPy and a device, or without nvcc, saying so): a kernel with a
`const __grid_constant__ CUtensorMap` parameter cross-validated — each instance's map encoded by the
driver's cuTensorMapEncodeTiled for its own buffer and passed by value — and the encoder itself."""

from __future__ import annotations

import shutil

import pytest
from support import ROOT, gpu_test_marks

from ptxmm.device import kernel_cross as KC
from ptxmm.device.env import PRESETS
from ptxmm.errors import PtxmmError

pytestmark = [*gpu_test_marks(),
              pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: the .cu "
                                 "kernels are compiled for sm_90 (the committed PTX is sm_90a)")]

KDIR = ROOT / "examples" / "hopper" / "kernels"


@pytest.mark.parametrize("name", ["tma-tensor-load-2d", "tma-tensor-store"])
def test_the_tensor_copy_kernels_end_only_in_the_allowed_state(name):
    job = KC.plan_kernel_file(KDIR / f"{name}.cu", "ptx", 2)
    assert isinstance(job, KC.KernelJob), job
    assert job.kplan.maps
    kc = KC.run_kernel(job, PRESETS["barrier"], 0.3, None, 60.0)  # in a process of its own
    assert isinstance(kc, KC.KernelCross), kc
    assert kc.run.checksum_ok and kc.run.instances >= 2 * 1024
    assert not kc.violations and kc.assert_instances == 0 and kc.oob_instances == 0
    assert kc.allowed_seen == len(kc.plan.allowed) == 1


def test_the_driver_encodes_maps_and_refuses_what_the_launch_refuses():
    import cupy as cp

    from ptxmm.device.kernel_run import driver_encoder
    from ptxmm.device.tensor import MapArgs

    buf = cp.zeros(64, dtype=cp.int32)
    encode = driver_encoder()
    a = encode(MapArgs(buf.data.ptr, (8, 2), (32,), (4, 2), 3, (1, 1)))
    b = encode(MapArgs(buf.data.ptr + 128, (8, 2), (32,), (4, 2), 3, (1, 1)))
    assert len(a) == len(b) == 128 and a != b  # the global address is in the map
    with pytest.raises(PtxmmError, match="CUresult"):  # "globalStrides ... must be a multiple of 16"
        encode(MapArgs(buf.data.ptr, (6, 2), (24,), (4, 2), 3, (1, 1)))
