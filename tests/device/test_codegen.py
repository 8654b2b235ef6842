"""Device harness without a GPU: layout, generated CUDA, histogram decoding, crossval verdicts, and
(when nvcc is on PATH) a compile check of the generated code for sm_90."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT
from test_hopper_sync_codegen import DEVICE_REFUSED

import ptxmm
from ptxmm.device.build import compile_cubin, nvcc_available
from ptxmm.device.codegen import generate
from ptxmm.device.crossval import judge
from ptxmm.device.env import PRESETS, fit
from ptxmm.device.harness import decode
from ptxmm.device.layout import make_layout
from ptxmm.errors import UnsupportedError

EX = ROOT / "examples"


def lay_of(path, **kw):
    return make_layout(ptxmm.load(path), **kw)


def test_placement_groups():
    mp = lay_of(EX / "classic/MP-relaxed.ptx")
    assert [(r.cg, r.rank, r.warp) for r in mp.roles] == [(0, 0, 0), (1, 0, 0)]
    assert mp.cluster_size == 1 and mp.n_groups == 2
    same = lay_of(EX / "device/MP-shared-rel-acq.ptx")
    assert [(r.cg, r.rank, r.warp) for r in same.roles] == [(0, 0, 0), (0, 0, 1)]
    assert same.shared == ("x", "y")
    clu = lay_of(EX / "device/MP-fence-sc-cta-cluster.ptx")
    assert clu.cluster_size == 2 and [(r.cg, r.rank) for r in clu.roles] == [(0, 0), (0, 1)]
    assert fit(PRESETS["barrier"], same.warps_per_cta, clu.cluster_size).threads >= 64


def test_every_instruction_is_one_asm_with_its_qualifiers():
    src = generate(lay_of(EX / "classic/MP-rel-acq.ptx"))
    assert src.count('asm volatile("st.release.gpu.global.u32') == 1
    assert src.count('asm volatile("ld.acquire.gpu.global.u32') == 1
    assert '"memory"' in src
    src = generate(lay_of(EX / "device/MP-fence-sc-cta-cluster.ptx"))
    assert src.count('asm volatile("fence.sc.cta;" ::: "memory");') == 2
    assert "__cluster_dims__(2, 1, 1)" in src
    src = generate(lay_of(EX / "device/MP-shared-rel-acq.ptx"))
    assert "st.release.cta.shared.u32" in src and "__cvta_generic_to_shared" in src
    src = generate(lay_of(EX / "spinlock-cas.ptx"))
    assert "atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;" in src
    assert "goto DNF" in src  # the CAS loop is bounded


def test_signedness_comes_from_the_type():
    """min/max and setp keep PTX's names in the IR; the emitted PTX takes signedness from the type."""
    prog = ptxmm.parse(""".global .u32 x = 0;
.thread T0 { ld.global.u32 %r0, [x]; min.u32 %r1, %r0, 5; max.s32 %r2, %r0, 5; max.u32 %r3, %r0, 5;
  setp.lo.u32 %p0, %r0, 3; setp.lt.u32 %p1, %r0, 3; setp.lt.s32 %p2, %r0, 3; setp.hs.u32 %p3, %r0, 3;
  setp.eq.b32 %p4, %r0, 3; }
exists (T0:%r1 == 0)""", "s.ptx")
    src = generate(make_layout(prog))
    for ptx in ("min.u32 %0", "max.s32 %0", "max.u32 %0"):
        assert src.count(ptx) == 1, ptx
    setps = [ln.split("setp.")[1].split(" ")[0] for ln in src.splitlines() if "setp." in ln
             and "selp.u32" in ln]
    assert setps == ["lt.u32", "lt.u32", "lt.s32", "ge.u32", "eq.u32"]
    lit = ptxmm.parse("PTX b\n{ x=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n ld.relaxed.gpu r0, x ;\n"
                      " blt r0, 1, LC00 ;\nexists (P0:r0 == 1)\n", "b.litmus")
    src = generate(make_layout(lit))  # herd's registers are signed words
    assert "ld.relaxed.gpu.s32" in src and "setp.lt.s32" in src


def test_each_access_gets_its_own_zero_offset():
    src = generate(lay_of(EX / "classic/CoRR-weak.ptx"))
    role1 = src[src.index("void ptxmm_role_1"):src.index("ptxmm_litmus(")]
    assert "z[0]" in role1 and "z[1]" in role1


def test_unsupported_on_device():
    with pytest.raises(UnsupportedError, match="proxy"):
        lay_of(ROOT / "tests/litmus/isa/S7-cowr-alias.ptx")
    prog = ptxmm.parse(""".global .u32 x = 0;
.thread T0 .cta 0 { setp.eq.u32 %p0, 1, 1; @%p0 bar.sync 0; st.global.u32 [x], 1; }
.thread T1 .cta 0 { bar.sync 0; }
exists (x == 1)""", "b.ptx")
    with pytest.raises(UnsupportedError, match="predicated barrier") as e:  # bar.sync runs (issue 13)
        make_layout(prog)
    assert e.value.pos.line == 2


@pytest.mark.parametrize("cell, what", [
    ("tld.weak r0, x", "proxy: texture access"),
    ("suld.weak r0, x", "proxy: surface access"),
    ("cold.weak r0, x", "proxy: constant access"),
    ("sust.weak x, 1", "proxy: surface access"),
    ("fence.proxy.surface", "proxy: proxy fence"),
    ("atom.relaxed.gpu.mul r0, x, 3", "atomic .mul"),
])
def test_dat3m_forms_the_device_cannot_run(cell, what):
    """Dat3M's dialect has forms no PTX instruction runs as written on a plain location (a texture
    load of a generic location, atom.mul): the harness says so, at the instruction."""
    prog = ptxmm.parse(f"PTX t\n{{ x = 0; }}\n P0@cta 0,gpu 0 ;\n {cell} ;\nexists (x == 0)\n",
                       "t.litmus")
    with pytest.raises(UnsupportedError, match=what) as e:
        make_layout(prog)
    assert "on the device" in str(e.value) and e.value.pos.line == 4


def test_value_codes_cover_allowed_values_and_other():
    res = ptxmm.check(ptxmm.load(EX / "mp-relaxed-acquire.ptx"))
    lay = make_layout(res.program, [o.outcome.as_dict() for o in res.outcomes])
    r1 = next(s for s in lay.slots if s.obs.key == "T1:%r1")
    assert 0 in r1.values and 42 in r1.values
    assert (1 << r1.bits) > len(r1.values)  # room for the "other" code


def _hist_for(lay, outcomes: dict[tuple, int], dnf: int = 0):
    h: dict[int, int] = {}
    for vals, c in outcomes.items():
        key = 0
        for s, v in zip(lay.slots, vals):
            key |= (s.values.index(v) if v is not None else len(s.values)) << s.shift
        h[key] = h.get(key, 0) + c
    if dnf:
        h[1 << lay.dnf_bit] = dnf
    return h


def test_decode_and_judge():
    prog = ptxmm.load(EX / "classic/MP-rel-acq.ptx")
    res = ptxmm.check(prog)
    lay = make_layout(prog, [o.outcome.as_dict() for o in res.outcomes])
    keys = [s.obs.key for s in lay.slots]
    assert keys == [o for o in res.observables]
    forbidden = {"T1:%r0": 1, "T1:%r1": 0, "x": 1, "y": 1}
    allowed = {"T1:%r0": 1, "T1:%r1": 1, "x": 1, "y": 1}
    hist = _hist_for(lay, {tuple(allowed[k] for k in keys): 90,
                           tuple(forbidden[k] for k in keys): 3,
                           tuple(None if k == "T1:%r1" else allowed[k] for k in keys): 1}, dnf=6)
    run = decode(prog, lay, hist, PRESETS["barrier"], 100, 1.0)
    assert run.checksum_ok and run.dnf == 6
    assert sum(o.count for o in run.observed) == 94
    cr = judge(prog, res, run)
    verdicts = {str(r.outcome): r.verdict for r in cr.rows}
    assert verdicts["T1:%r0=1 T1:%r1=0 x=1 y=1"] == "VIOLATION"
    assert verdicts["T1:%r0=0 T1:%r1=0 x=1 y=1"] == "unseen"
    assert verdicts["T1:%r0=1 T1:%r1=1 x=1 y=1"] == "ok"
    assert len(cr.violations) == 2  # the forbidden outcome and the impossible value
    assert cr.weak == 3


def test_checksum_detects_lost_instances():
    prog = ptxmm.load(EX / "classic/SB-relaxed.ptx")
    lay = make_layout(prog)
    hist = _hist_for(lay, {tuple(0 if s.obs.thread >= 0 else 1 for s in lay.slots): 10})
    assert not decode(prog, lay, hist, PRESETS["none"], 11, 1.0).checksum_ok


COMPILE = [EX / "classic/MP-relaxed.ptx", EX / "classic/IRIW-fence-sc.ptx", EX / "spinlock-cas.ptx",
           EX / "device/MP-shared-rel-acq.ptx", EX / "device/MP-fence-sc-cta-cluster.ptx",
           EX / "device/MP-spin.ptx", EX / "device/sanity-single-thread.ptx",
           ROOT / "tests/litmus/isa/S3-lb-data.ptx"]
DAT3M = ["Red-minus-location_.litmus", "SL-cas-plus.litmus"]  # of the corpus's PTX/Manual


@pytest.mark.skipif(not nvcc_available(), reason="nvcc not on PATH")
@pytest.mark.parametrize("path", COMPILE + DAT3M, ids=lambda p: Path(p).name)
def test_generated_code_compiles_for_sm90(path, tmp_path, monkeypatch, request):
    if isinstance(path, str):  # the Dat3M corpus beside the repository: skips without it
        path = request.getfixturevalue("dat3m") / "PTX" / "Manual" / path
    if not path.exists():
        pytest.skip("../shared/conformance not present")
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    cubin = compile_cubin(generate(lay_of(path)))
    assert cubin.stat().st_size > 1000


@pytest.mark.skipif(not nvcc_available(), reason="nvcc not on PATH")
def test_cli_codegen_output_compiles(tmp_path):
    cu = tmp_path / "k.cu"
    r = subprocess.run([sys.executable, "-m", "ptxmm.cli", "codegen", str(EX / "classic/LB-relaxed.ptx")],
                       capture_output=True, text=True)
    assert r.returncode == 0
    cu.write_text(r.stdout)
    r = subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-o", str(tmp_path / "k.ptx"), str(cu)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["ptxas", "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.ptx")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_run_without_cupy_is_a_clear_error():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy installed")
    except ImportError:
        pass
    cmd = [sys.executable, "-m", "ptxmm.cli", "run", "--device", str(EX / "classic/SB-relaxed.ptx")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2 and "CuPy is not installed" in r.stderr and "Traceback" not in r.stderr


SASS = """
        code for sm_90
                Function : ptxmm_audit_1
        .headerflags    @"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDG.E.STRONG.GPU R2, desc[UR4][R2.64] ;
        /*0020*/              @!P0 LDG.E R4, desc[UR4][R4.64] ;
        /*0030*/                   NANOSLEEP 0x0 ;
        /*0040*/                   STG.E.64 desc[UR4][R6.64], R2 ;
        /*0050*/                   EXIT ;
"""


def test_sass_audit_reads_test_ops_before_the_marker(monkeypatch):
    from ptxmm.device import sass

    funcs = sass.parse_sass(SASS)
    assert funcs["ptxmm_audit_1"][:3] == ["LDC", "LDG", "LDG"]
    prog = ptxmm.load(EX / "classic/MP-relaxed.ptx")
    monkeypatch.setattr(sass, "sass_by_function", lambda _: funcs)
    rows = sass.audit(prog, make_layout(prog), None)
    assert rows[1].ok and rows[1].found == ["ld", "ld"]
    assert not rows[0].ok  # no audit kernel for role 0 in this text
    funcs["ptxmm_audit_1"].remove("LDG")  # a merged load must be caught
    assert not sass.audit(prog, make_layout(prog), None)[1].ok


def test_crossval_report_renders_without_a_gpu():
    from rich.console import Console

    from ptxmm.device.report import render_cross, render_run

    prog = ptxmm.load(EX / "classic/SB-relaxed.ptx")
    res = ptxmm.check(prog)
    lay = make_layout(prog, [o.outcome.as_dict() for o in res.outcomes])
    keys = [s.obs.key for s in lay.slots]
    weak = {"T0:%r0": 0, "T1:%r1": 0, "x": 1, "y": 1}
    run = decode(prog, lay, _hist_for(lay, {tuple(weak[k] for k in keys): 5}), PRESETS["none"], 5, 0.5)
    con = Console(record=True, width=140)
    render_cross(judge(prog, res, run), con)
    render_run(run, con)
    text = con.export_text()
    assert "same SM" in text and "3 allowed outcome(s) unseen" in text and "VIOLATION" not in text


def test_environment_shapes_are_checked():
    from dataclasses import replace

    from ptxmm.errors import PtxmmError

    with pytest.raises(PtxmmError, match="power of two"):
        fit(replace(PRESETS["barrier"], blocks=100), 1, 1)
    assert fit(replace(PRESETS["barrier"], stress_blocks=3), 1, 2).stress_blocks == 4


def test_reps_knob():
    """Env.reps: each thread plays reps instance planes back to back; a power of two; shown as R=k."""
    from dataclasses import replace

    assert PRESETS["none"].reps == 4 and "R=4" in PRESETS["none"].short()
    assert "R=" not in replace(PRESETS["none"], reps=1).short()
    with pytest.raises(ptxmm.PtxmmError):
        fit(replace(PRESETS["none"], reps=3), 1, 1)
    src = generate(make_layout(ptxmm.load(ROOT / "examples" / "classic" / "SB-relaxed.ptx")))
    assert "for (rep = 0; rep < reps; rep++)" in src and "+ rep * np;" in src
    assert "il = i & (np - 1U)" in src  # the check finds the blocks of plane-local instance il


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples" / "hopper").glob("*.ptx")
                                         if p.name not in DEVICE_REFUSED))
def test_hopper_examples_lay_out_on_the_device(name):
    """mbarrier / barrier.cluster / mapa / cp.async.bulk run on the device since issue 13
    (tests/device/test_hopper_sync_codegen.py checks their code, and that the examples it lists in
    DEVICE_REFUSED are refused with a reason); every other example gets a synchronization plan."""
    lay = make_layout(ptxmm.load(ROOT / "examples" / "hopper" / name))
    assert lay.sync is not None


def test_docs_list_every_preset_with_its_knobs():
    """docs/device.md's preset table names every preset of env.py with the knobs it has."""
    from conftest import ROOT

    text = (ROOT / "docs" / "device.md").read_text()
    for name, env in PRESETS.items():
        assert f"| `{name}` | " in text and f" | {env.short()} |" in text, name
