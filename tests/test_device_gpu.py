"""On a GPU (skipped without CuPy and a device): the harness's self-checks and a crossval."""

from __future__ import annotations

import pytest
from conftest import ROOT

import ptxmm

cp = pytest.importorskip("cupy")
try:
    HAVE_GPU = cp.cuda.runtime.getDeviceCount() > 0
except Exception:
    HAVE_GPU = False
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")]

EX = ROOT / "examples"


def test_self_checks_pass():
    from ptxmm.device.env import PRESETS
    from ptxmm.device.selfcheck import self_check

    ok, lines = self_check(PRESETS["barrier"], budget_s=0.2)
    assert ok, lines


def test_mp_release_acquire_never_violates():
    from ptxmm.device.crossval import crossval
    from ptxmm.device.env import PRESETS

    cr = crossval(ptxmm.load(EX / "classic/MP-rel-acq.ptx"), PRESETS["barrier"], 0.2)
    assert not cr.violations and cr.run.checksum_ok and cr.run.instances > 10**7
