"""`ptxmm doctor` without a GPU: it says what is there and what is missing, and which extra fits."""

from __future__ import annotations

from click.testing import CliRunner

from ptxmm.cli.main import main
from ptxmm.device import doctor


def test_extra_follows_the_drivers_cuda():
    assert "device-cuda13" in doctor.extra_for("13.0") and "cuda12" not in doctor.extra_for("13.0")
    assert "device-cuda12" in doctor.extra_for("12.4")
    assert "device-cuda13" in doctor.extra_for(None) and "device-cuda12" in doctor.extra_for(None)


def test_doctor_lists_every_tool_and_what_is_missing(monkeypatch):
    outs = {
        "nvidia-smi": "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |",
        "nvcc": "Cuda compilation tools, release 13.0, V13.0.88",
        "ptxas": "Cuda compilation tools, release 13.0, V13.0.88",
    }

    def fake_run(cmd):
        if cmd[0] == "nvidia-smi" and len(cmd) > 1:
            return "NVIDIA H100 80GB HBM3, 580.159.04\n"
        return outs.get(cmd[0])

    monkeypatch.setattr(doctor, "_run", fake_run)
    monkeypatch.setattr(doctor, "_cupy", lambda: (None, None, None))
    lines, ok = doctor.report(doctor.diagnose())
    text = "\n".join(lines)
    assert not ok and "NVIDIA H100 80GB HBM3" in text and "580.159.04" in text and "13.0.88" in text
    assert "CuPy: pip install 'ptxmm[device-cuda13]'" in text and "cuobjdump: part of the CUDA" in text


def test_doctor_command_runs_without_a_gpu():
    r = CliRunner().invoke(main, ["doctor"])
    assert r.exit_code in (0, 1) and "cuobjdump" in r.output and "Traceback" not in r.output
