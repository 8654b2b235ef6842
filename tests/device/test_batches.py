"""Device batches without a GPU: the planning step (every file a Job or a Skip with its reason), the
batch runner's survival (Ctrl-C, a hung kernel, device errors), exit codes and the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import ROOT

from ptxmm.cli.main import main
from ptxmm.device import batch as B
from ptxmm.device.build import nvcc_available
from ptxmm.device.codegen import generate
from ptxmm.errors import PtxmmError

EX = ROOT / "examples"
GOOD = sorted((EX / "classic").glob("*.ptx"))[:20]
PROXY = EX / "proxy/alias-mp-nofence.ptx"
BROKEN = "MP+does-not-compile"


def _bad_files(tmp_path: Path) -> tuple[Path, Path]:
    syntax = tmp_path / "syntax-error.ptx"
    syntax.write_text(".global .u32 x = 0;\n.thread T0 {\n    st.relaxed.gpu.global.u32 [x] 1;\n}\n")
    nocompile = tmp_path / "does-not-compile.ptx"
    nocompile.write_text((EX / "classic/MP-relaxed.ptx").read_text().replace(
        '.test MP+relaxed "message passing, relaxed flag"', f".test {BROKEN}"))
    return syntax, nocompile


def broken_generate(lay) -> str:
    """The generated CUDA, with a real compile error for the test named BROKEN."""
    src = generate(lay)
    return src + "\n#error deliberately broken\n" if lay.program.name == BROKEN else src


def fake_compile(source: str, timeout: float | None = None, **_) -> Path:
    if "#error" in source:
        raise PtxmmError("the generated CUDA did not compile:\nlitmus.cu: error: deliberately broken")
    return Path("/nonexistent.cubin")


@pytest.fixture
def batch_files(tmp_path):
    syntax, nocompile = _bad_files(tmp_path)
    return GOOD[:10] + [syntax, PROXY] + GOOD[10:] + [nocompile]


def _check_plan(items, files) -> None:
    assert [Path(i.file) for i in items] == [Path(f) for f in files]
    jobs = [i for i in items if isinstance(i, B.Job)]
    skips = {Path(s.file).name: s for s in items if isinstance(s, B.Skip)}
    assert len(jobs) == 20 and all(j.check is not None and j.cubin for j in jobs)
    assert set(skips) == {"syntax-error.ptx", PROXY.name, "does-not-compile.ptx"}
    assert skips["syntax-error.ptx"].reason == B.PARSE and skips["syntax-error.ptx"].position
    assert skips[PROXY.name].reason == B.DEVICE_UNSUPPORTED and "proxy" in skips[PROXY.name].message
    assert skips["does-not-compile.ptx"].reason == B.COMPILE


def test_plan_reports_each_file_that_cannot_run(batch_files, monkeypatch):
    monkeypatch.setattr(B, "compile_cubin", fake_compile)
    _check_plan(B.plan(batch_files, "ptx", gen=broken_generate), batch_files)


@pytest.mark.skipif(not nvcc_available(), reason="nvcc not on PATH")
def test_plan_with_nvcc(batch_files, tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    items = B.plan(batch_files, "ptx", gen=broken_generate, jobs=2)
    _check_plan(items, batch_files)
    assert "deliberately broken" in next(s for s in items if isinstance(s, B.Skip)
                                         and s.reason == B.COMPILE).message


def test_plan_without_a_model_and_a_compile_timeout(monkeypatch):
    def slow(source, timeout=None, **_):
        raise B.CompileTimeout(f"nvcc took longer than {timeout:g} s")

    monkeypatch.setattr(B, "compile_cubin", slow)
    items = B.plan([EX / "classic/SB-relaxed.ptx"], None, compile_timeout=0.5)
    assert items[0].reason == B.TIMEOUT and "0.5 s" in items[0].message


def _jobs(n: int) -> list:
    import ptxmm
    from ptxmm.device.layout import make_layout

    prog = ptxmm.load(EX / "classic/SB-relaxed.ptx")
    return [B.Job(Path(f"t{i}.ptx"), prog, make_layout(prog)) for i in range(n)]


def test_run_batch_survives_interrupts_hangs_and_device_errors():
    items = _jobs(5)
    calls = []

    def interrupt_at_3(job):
        calls.append(job.file)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return job.file

    b = B.run_batch(items, interrupt_at_3)
    assert b.interrupted and len(b.items) == 5 and len(b.results) == 2
    assert [s.reason for s in b.skipped] == [B.INTERRUPTED] * 3
    assert b.exit_code(0) == 2 and b.exit_code(1) == 1

    def errors(job):
        if job.file.name == "t1.ptx":
            raise PtxmmError("cluster launch failed")
        if job.file.name == "t3.ptx":
            raise B.DeviceTimeout("a graph replay did not finish in time")
        return job.file

    b = B.run_batch(items, errors)
    assert b.hung and not b.interrupted
    assert [getattr(i, "reason", "ran") for i in b.items] == ["ran", B.DEVICE, "ran", B.TIMEOUT, B.HUNG]
    data = b.to_json("run", 0, lambda r: {"file": str(r)})
    assert data["summary"]["not_run"] == 3 and data["summary"]["exit_code"] == 2
    assert data["tests"][0] == {"status": "ran", "file": "t0.ptx"}

    def bug(job):
        raise AssertionError("a ptxmm bug")

    b = B.run_batch(items[:2], bug)
    assert [s.reason for s in b.skipped] == [B.INTERNAL] * 2 and "AssertionError" in b.skipped[0].message

    b = B.run_batch(items, lambda j: j.file)
    assert b.exit_code(0) == 0 and "5 of 5 test(s) run, 0 not run" in b.summary_line("run", 0)


def test_crossval_without_a_gpu_still_writes_every_row(batch_files, tmp_path):
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy installed")
    except ImportError:
        pass
    out = tmp_path / "out.json"
    r = CliRunner().invoke(main, ["crossval", *map(str, batch_files), "--json", str(out)])
    assert r.exit_code == 2 and "CuPy is not installed" in r.output
    data = json.loads(out.read_text())
    assert data["summary"]["not_run"] == 23 and data["summary"]["error"] == "CuPy is not installed"
    assert {t["reason"] for t in data["tests"]} == {B.NO_DEVICE}


def test_audit_batch_reports_and_writes_json(batch_files, tmp_path, monkeypatch):
    from ptxmm.device import sass

    monkeypatch.setattr(B, "compile_cubin", fake_compile)
    monkeypatch.setattr(B, "generate", broken_generate)
    monkeypatch.setattr(sass, "available", lambda: True)
    monkeypatch.setattr(sass, "audit", lambda prog, lay, cubin: [
        sass.RoleAudit(k, t.name, sass.expected_ops(prog, k), sass.expected_ops(prog, k), True)
        for k, t in enumerate(prog.threads)])
    out = tmp_path / "audit.json"
    r = CliRunner().invoke(main, ["audit", *map(str, batch_files), "--json", str(out)])
    assert r.exit_code == 2, r.output
    assert "20 of 23 test(s) audited, 3 not run" in r.output
    data = json.loads(out.read_text())
    assert data["summary"]["reasons"] == {B.PARSE: 1, B.DEVICE_UNSUPPORTED: 1, B.COMPILE: 1}
    assert sum(t["status"] == "ran" for t in data["tests"]) == 20
