"""CPU tests of the public CUDA runner's families (benchmarks/device/runner_families.py), the coverage
driver's planning and table (runner_coverage.py), and the harness knobs that reproduce the runner's
placement (env.py, codegen.py: fused roles, stripe, coalesce, warp gap, per-thread barrier)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import replace

import pytest
from support import ROOT

import ptxmm
from ptxmm.device.codegen import fusable, generate
from ptxmm.device.env import PRESETS, Env, fit
from ptxmm.device.harness import fit_fused
from ptxmm.device.layout import make_layout
from ptxmm.errors import PtxmmError

sys.path.insert(0, str(ROOT / "benchmarks" / "device"))
import runner_coverage as rc  # noqa: E402
import runner_families as rf  # noqa: E402

TESTS = rf.tests()
BY_NAME = {t.name: t for t in TESTS}


def test_the_runner_set_has_1306_tests_with_its_names():
    """As many tests per family as the runner's tuning files make (placements x scopes x variants)."""
    assert len(TESTS) == 1306 and len(BY_NAME) == 1306
    per = Counter(t.family.shape for t in TESTS)
    assert per == {"IRIW": 240, "ISA2": 230, "3.2W": 160, "Z6.3": 160, "WWC": 150, "RWC": 110,
                   "WRC": 110, "WRW+2W": 110, "2+2W": 32, "paper example 1": 2, "paper example 2": 2}
    assert "isa2_TB_1_02_SCOPE_BLOCK_FENCE_SCOPE_BLOCK_ALL_FENCE" in BY_NAME  # the runner's spelling
    assert "iriw_TB_0123_SCOPE_DEVICE_NO_FENCE_ACQUIRE" in BY_NAME


def _body(t: rf.RunnerTest) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    cur = None
    for ln in rf.render(t).splitlines():
        m = re.match(r"\.thread T(\d) \.cta (\d)", ln)
        if m:
            cur = int(m.group(1))
            out[cur] = [f"cta {m.group(2)}"]
        elif cur is not None and ln.startswith("    "):
            out[cur].append(ln.strip())
    return out


def test_iriw_thread_1_fence_renders_as_the_kernel_says():
    t = BY_NAME["iriw_TB_01_23_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_THREAD_1_FENCE"]
    b = _body(t)
    assert b[0] == ["cta 0", "st.relaxed.gpu.global.u32 [x], 1;"]
    assert b[1] == ["cta 0", "ld.relaxed.gpu.global.u32 %r0, [x];", "fence.acq_rel.cta;",
                    "ld.relaxed.gpu.global.u32 %r1, [y];"]
    assert b[3] == ["cta 1", "ld.acquire.gpu.global.u32 %r2, [y];", "ld.relaxed.gpu.global.u32 %r3, [x];"]
    assert b[2][0] == "cta 1"


def test_seq_cst_accesses_are_a_fence_sc_then_the_access():
    b = _body(BY_NAME["rwc_TB_0_1_2_SCOPE_BLOCK_FENCE_SCOPE_DEVICE_BOTH_FENCE"])
    assert b[2][1:] == ["st.relaxed.cta.global.u32 [y], 1;", "fence.sc.gpu;",
                        "ld.relaxed.cta.global.u32 %r2, [x];"]
    b = _body(BY_NAME["rwc_TB_0_1_2_SCOPE_DEVICE_NO_FENCE_LOAD_SC"])
    assert b[1][1] == "ld.acquire.gpu.global.u32 %r0, [x];"
    assert b[2][1:] == ["st.relaxed.gpu.global.u32 [y], 1;", "fence.sc.gpu;",
                        "ld.acquire.gpu.global.u32 %r2, [x];"]
    b = _body(BY_NAME["paper_example1_TB_0_1_2_3_SCOPE_DEVICE_NO_FENCE_DISALLOWED"])
    assert b[0][1] == "fence.sc.sys;"  # no FENCE_SCOPE: the runner's litmus.cuh defaults to system


def test_no_fence_variants_have_no_fence_and_fence_variants_one_scope():
    for t in TESTS:
        text = rf.render(t)
        fences = re.findall(r"fence\.(acq_rel|sc)\.(\w+);", text)
        acq_rel = [s for k, s in fences if k == "acq_rel"]
        if t.fence_scope is None:
            assert not acq_rel, t.name
        else:
            assert acq_rel or any(k == "sc" for k, _ in fences), t.name
            assert set(acq_rel) <= {rf.SCOPES[t.fence_scope]}, t.name


@pytest.mark.parametrize("name", ["wwc_TB_01_2_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_BOTH_FENCE",
                                  "three_2w_TB_012_SCOPE_BLOCK_NO_FENCE_RELEASE",
                                  "z6_3_TB_1_02_SCOPE_DEVICE_FENCE_SCOPE_DEVICE_FENCE_02",
                                  "paper_example2_TB_0_1_2_3_SCOPE_DEVICE_NO_FENCE_RELAXED"])
def test_generated_tests_parse_with_their_placement(tmp_path, name):
    rows = rf.generate(tmp_path, {name})
    assert [r["name"] for r in rows] == [name]
    prog = ptxmm.load(tmp_path / f"{name}.ptx")
    t = BY_NAME[name]
    assert prog.name == name and len(prog.threads) == len(t.family.threads)
    ctas = [th.placement.cta_key for th in prog.threads]
    assert len(set(ctas)) == rows[0]["ctas"] == len(t.placement.split("_"))
    assert json.loads((tmp_path / "manifest.json").read_text()) == rows


def test_the_hard_group_is_device_accesses_with_block_fences_across_ctas():
    rows = [rf.manifest_row(t) for t in TESTS]
    hard = [r for r in rows if rf.block_fences_between_device_accesses(r)]
    assert hard and all(r["scope"] == "DEVICE" and r["fence_scope"] == "BLOCK" and r["ctas"] > 1
                        for r in hard)
    assert not any(r["placement"] in ("012", "0123", "01") for r in hard)


def test_runner_results_and_coverage_table(tmp_path):
    csv = tmp_path / "results.csv"
    a, b, c = (t.name for t in TESTS[:3])
    csv.write_text(f"test,base,strengthened,a100,h100,gh200\n{a},INSTANCE,INSTANCE,seen,seen,not seen\n"
                   f"{b},INSTANCE,INSTANCE,not seen,seen,seen\n{c},UNSAT,UNSAT,not seen,not seen,not seen\n")
    runner = rf.read_runner_results(csv)
    assert runner[a] == {"a100": True, "h100": True, "gh200": False} and not runner[c]["h100"]
    manifest = [rf.manifest_row(t) for t in TESTS[:3]]
    run1 = tmp_path / "r1.jsonl"
    bad = [{"values": {}, "count": 1}]
    run1.write_text(json.dumps({"test": a, "first_s": 0.05, "violations": []}) + "\n"
                    + json.dumps({"test": b, "first_s": None, "violations": bad}) + "\n")
    run2 = tmp_path / "r2.json"  # a later run that saw b after 3 s
    run2.write_text(json.dumps({"runs": [{"test": b, "first_s": 3.0, "violations": []}]}))
    runs = rc.read_runs(f"{run1},{run2}")
    assert runs[b]["first_s"] == 3.0
    rows = rc.coverage_rows(runner, manifest, runs)
    assert len(rows) == 1
    r = rows[0]
    assert (r["runner_seen"], r["ran"], r["within_1s"], r["within_5s"], r["missed"]) == (2, 2, 1, 2, [])
    md = rc.coverage_md(rows)
    assert "| IRIW | 2 | 2 | 1 | 50.0 % | 2 | 100.0 % | 0 |" in md
    only1 = rc.coverage_rows(runner, manifest, rc.read_runs(str(run1)))[0]
    assert only1["missed"] == [b] and only1["violations"] == 1


def test_plans_parse_and_auto_plans_rank_by_tests_seen(tmp_path):
    plan = rc.parse_plan("runner@0.25,barrier:reps=1/stripe=2@0.5")
    assert [(n, s) for n, _, s in plan] == [("runner", 0.25), ("barrier:reps=1/stripe=2", 0.5)]
    assert plan[1][1] == replace(PRESETS["barrier"], reps=1, stripe=2)
    ex = tmp_path / "explore.jsonl"
    rows = [("t1", "a", 0, 0.0), ("t2", "a", 5, 1e-3), ("t1", "b", 1, 1e-6), ("t2", "b", 1, 1e-6),
            ("t1", "c", 1, 1e-2), ("t2", "c", 0, 0.0)]
    ex.write_text("".join(json.dumps({"test": t, "env": e, "weak": w, "rate": r}) + "\n"
                          for t, e, w, r in rows))
    assert rc.auto_plan(f"auto:{ex}:2:0.3") == "b@0.3,c@0.3"  # b: 2 tests; c beats a on rate
    assert rc.auto_plan(f"auto:{ex}:2:0.3:runner") == "runner@0.3,b@0.3,c@0.3"


# -- the harness knobs ------------------------------------------------------------------------------

def _lay(tmp_path, name="iriw_TB_01_23_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_THREAD_1_FENCE"):
    rf.generate(tmp_path, {name})
    return make_layout(ptxmm.load(tmp_path / f"{name}.ptx"))


def test_fused_roles_issue_back_to_back_and_store_registers_last(tmp_path):
    lay = _lay(tmp_path)
    src = generate(lay, fused=True)
    body = src[src.index("ptxmm_litmus("):src.index("ptxmm_check(")]
    assert "switch (k)" not in body and "switch (rot)" in body
    case0 = re.search(r"case 0: (.*?) break;", body).group(1)
    assert [int(k) for k in re.findall(r"ptxmm_role_(\d)\(", case0)] == [0, 1, 2, 3]
    case1 = re.search(r"case 1: (.*?) break;", body).group(1)
    assert [int(k) for k in re.findall(r"ptxmm_role_(\d)\(", case1)] == [1, 2, 3, 0]
    # the registers reach memory after the switch, never inside a role
    after = body[body.index("switch (rot)"):]
    stores = re.findall(r"res\[\(u64\)I\[(\d)\] \* NRES \+ (\d)\] = o\1\[\2\];", after)
    assert sorted(stores) == [("1", "0"), ("1", "1"), ("3", "2"), ("3", "3")]
    assert generate(lay) != src and "switch (k)" in generate(lay)


def test_only_straight_line_tests_fuse(tmp_path):
    assert fusable(_lay(tmp_path))
    spin = make_layout(ptxmm.load(ROOT / "examples" / "spinlock-cas.ptx"))
    shared = make_layout(ptxmm.load(ROOT / "examples" / "device" / "MP-shared-rel-acq.ptx"))
    assert not fusable(spin) and not fusable(shared)
    with pytest.raises(ValueError):
        generate(spin, fused=True)
    env = PRESETS["runner"]
    assert fit_fused(env, spin) == replace(env, fused=False)
    assert fit_fused(env, _lay(tmp_path)) == env


def test_placement_knobs_reach_the_kernels(tmp_path):
    src = generate(_lay(tmp_path), fused=True)
    assert "if (stripe) p->d = stripe < span ? stripe : span;" in src
    assert "if (coalesce) { p->pl = 1U; p->ol = 0U; }" in src
    assert "u32 pre_loops, u32 wgap, u32 tbar" in src and "for (u32 k = 0; k < pre_loops; k++)" in src
    assert "(lane + bsz - 1U * wgap)" in src  # the second role of a CTA, wgap lanes on
    assert "atomicAdd(bar, 1U);\n        for (u32 k = 0; k < 1024U && v < nb * bsz; k++)" in src


def test_env_knobs_print_and_validate():
    e = replace(Env(), fused=True, stripe=1, coalesce=True, pre_stress=16, warp_gap=1, thread_barrier=True)
    assert e.short().endswith("fused stripe=1 coalesce pre=16 gap=1 tbar")
    assert "fused" not in Env().short() and "gap" not in Env().short()
    with pytest.raises(PtxmmError, match="warp-gap"):
        fit(replace(Env(), warp_gap=0), 1, 1)
    assert PRESETS["runner"].fused and PRESETS["runner"].stripe == 1 and not PRESETS["runner"].rotate


# -- the runner's machine code (preset runner-sass: generic addresses, tail fence, -rdc) ----------------

def _litmus_body(src: str) -> str:
    return src[src.index("ptxmm_litmus("):src.index("ptxmm_check(")]


def test_generic_accesses_drop_only_the_global_space(tmp_path):
    lay = _lay(tmp_path)
    plain, gen = generate(lay, fused=True), generate(lay, fused=True, generic=True)
    assert 'asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"' in plain
    assert "ld.relaxed.gpu.u32 %0, [%1];" in gen and ".gpu.global." not in gen
    assert 'asm volatile("st.relaxed.gpu.u32 [%0], %1;"' in gen and "fence.acq_rel.cta;" in gen
    # the same accesses in the same order, only the state space differs
    assert gen == plain.replace(".gpu.global.", ".gpu.")
    shared = make_layout(ptxmm.load(ROOT / "examples" / "device" / "MP-shared-rel-acq.ptx"))
    sh = generate(shared, generic=True)
    assert ".shared.u32" in sh and ".global." not in sh.split("ptxmm_bump")[1]


def test_tail_fence_sits_after_the_last_role_before_the_registers(tmp_path):
    lay = _lay(tmp_path)
    body = _litmus_body(generate(lay, fused=True, tail_fence=True))
    after = body[body.index("switch (rot)"):]
    fence = after.index('asm volatile("fence.sc.sys;" ::: "memory");')
    assert after.rindex("ptxmm_role_") < fence < after.index("res[(u64)I[")
    assert "fence.sc.sys" not in _litmus_body(generate(lay, fused=True))
    assert "fence.sc.sys" not in _litmus_body(generate(lay, tail_fence=True))  # unfused: no tail


def test_runner_sass_preset_is_runner_compiled_like_the_runner():
    r, s = PRESETS["runner"], PRESETS["runner-sass"]
    assert s == replace(r, generic=True, tail_fence=True, rdc=True)
    assert s.short().endswith("tbar generic tailfence rdc") and "generic" not in r.short()
    assert rc.parse_env("runner:generic=1/rdc=1") == replace(r, generic=True, rdc=True)


# the order of memory accesses and ordering instructions in the runner's IRIW test body
# (iriw TB_0_1_2_3 SCOPE_DEVICE FENCE_SCOPE_BLOCK THREAD_1_FENCE, built as its tune.sh builds it:
# nvcc -rdc=true; cuobjdump -sass, sm_90): T0 st x; T1 ld x, fence.acq_rel.cta, ld y; T2 st y;
# T3 ld.acquire y, ld x; then fence.sc.sys
RUNNER_IRIW = ["ST.E.STRONG.GPU", "LD.E.STRONG.GPU", "pad4", "MEMBAR.ALL.CTA", "LD.E.STRONG.GPU",
               "ST.E.STRONG.GPU", "LD.E.STRONG.GPU", "CCTL.IVALL", "LD.E.STRONG.GPU"]


def _sub(seq: list[str], sub: list[str]) -> bool:
    return any(seq[i:i + len(sub)] == sub for i in range(len(seq) - len(sub) + 1))


@pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("nvlink") and shutil.which("cuobjdump")),
                    reason="needs nvcc, nvlink and cuobjdump")
def test_runner_sass_preset_compiles_to_the_runners_machine_code(tmp_path, monkeypatch):
    from ptxmm.device import sass
    from ptxmm.device.build import compile_cubin

    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    lay = _lay(tmp_path, "iriw_TB_0_1_2_3_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_THREAD_1_FENCE")

    def shape(env):
        src = generate(lay, fused=env.fused, generic=env.generic, tail_fence=env.tail_fence)
        out = subprocess.run(["cuobjdump", "-sass", str(compile_cubin(src, rdc=env.rdc))],
                             capture_output=True, text=True, check=True).stdout
        return sass.shape(sass.parse_sass_full(out)["ptxmm_litmus"])

    got = shape(PRESETS["runner-sass"])
    assert _sub(got, RUNNER_IRIW)  # rotation 0: roles 0..3 in one straight line, as the runner
    last = max(i for i, op in enumerate(got) if op.startswith("LD.E.STRONG"))
    assert "MEMBAR.SC.SYS" in got[last:]  # the tail fence after the last test access
    assert "LDG.E.STRONG.GPU" not in got and "STG.E.STRONG.GPU" not in got  # (volatile stress: .SYS)
    old = shape(PRESETS["runner"])  # global addresses, whole-program: LDG/STG, no padding
    assert not _sub(old, RUNNER_IRIW) and "pad4" not in old
    assert _sub(old, [op.replace("LD.", "LDG.").replace("ST.", "STG.") for op in RUNNER_IRIW if op != "pad4"])


# -- the ptxas of CUDA 12 (preset runner-cuda12) --------------------------------------------------------

def test_ptxas_releases_map_to_ptx_isa_and_need_their_executable(monkeypatch):
    from ptxmm.device.build import ptx_isa, ptxas_path

    assert ptx_isa(129) == "8.8" and ptx_isa(124) == "8.4" and ptx_isa(118) == "7.8"
    with pytest.raises(PtxmmError, match="not a CUDA release"):
        ptx_isa(130)
    monkeypatch.delenv("PTXMM_PTXAS_129", raising=False)
    with pytest.raises(PtxmmError, match="PTXMM_PTXAS_129 is not set") as e:
        ptxas_path(129)
    assert "nvidia-cuda-nvcc-cu12==12.9" in e.value.hint
    monkeypatch.setenv("PTXMM_PTXAS_129", "/nonexistent/ptxas")
    with pytest.raises(PtxmmError, match="not an executable"):
        ptxas_path(129)


def test_runner_cuda12_preset_is_runner_sass_with_the_ptxas_of_12_9():
    s = PRESETS["runner-cuda12"]
    assert s == replace(PRESETS["runner-sass"], ptxas=129) and s.short().endswith("rdc ptxas=129")
    assert rc.parse_env("runner:ptxas=124").ptxas == 124 and Env().ptxas == 0


@pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("cuobjdump")
                         and os.access(os.environ.get("PTXMM_PTXAS_129", ""), os.X_OK)),
                    reason="needs nvcc, cuobjdump and PTXMM_PTXAS_129 (the ptxas of CUDA 12.9)")
def test_cuda12_ptxas_leaves_loads_unordered_across_a_block_fence(tmp_path, monkeypatch):
    """IRIW's readers ld; fence.acq_rel.cta; ld: CUDA 13's machine code waits for the first load before
    the second issues, CUDA 12.9's has the MEMBAR.ALL.CTA alone (sass.gaps reads the scoreboards)."""
    from ptxmm.device import sass
    from ptxmm.device.build import compile_cubin

    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    lay = _lay(tmp_path, "iriw_TB_0_1_2_3_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_BOTH_FENCE")
    src = generate(lay, fused=True, generic=True)
    kinds = {}
    for rel in (0, 129):
        cub = compile_cubin(src, ptxas=rel)
        kinds[rel] = [[g.kind for g in r] for r in sass.role_gaps(cub, 4)]
    assert kinds[0] == [[], ["load-wait"], [], ["load-wait"]]
    assert kinds[129] == [[], ["membar.cta"], [], ["membar.cta"]]
    # a filled cache serves a machine without that ptxas (the device machine)
    monkeypatch.delenv("PTXMM_PTXAS_129")
    assert compile_cubin(src, ptxas=129) == compile_cubin(src, ptxas=129)
