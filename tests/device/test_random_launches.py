"""CPU tests of the runner's random launch configurations (env.draw_config, Env.random_config, preset
``runner-random``, Harness.run's per-chunk redraw with the device parts faked) and of the driver that
builds and runs the public runner's own binaries (benchmarks/device/runner_binaries.py)."""

from __future__ import annotations

import random
import sys
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

from ptxmm.device.codegen import generate
from ptxmm.device.env import PRESETS, RANDOM_CHUNK_S, Env, draw_config
from ptxmm.device.harness import Harness

sys.path.insert(0, str(ROOT / "benchmarks" / "device"))
import runner_binaries as rb  # noqa: E402

BASE = PRESETS["runner-random"]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_drawn_configurations_stay_in_the_runners_ranges(seed):
    e = draw_config(BASE, random.Random(seed))
    assert e.blocks in (4, 8, 16, 32, 64, 128, 256, 512, 1024)
    assert e.threads in (32, 64, 128, 256) and e.blocks * e.threads >= 256
    assert 1 <= e.stride <= 7 and 0 <= e.barrier_pct <= 100 and 1 <= e.warp_gap <= 32
    assert 0 <= e.stress_blocks <= 128 and 0 <= e.pre_stress <= 128 and 1 <= e.stress_lines <= 16
    assert (e.stress_blocks > 0) == (e.stress_loops > 0)
    # what the compiled code fixes stays the base's; a drawn configuration draws no further
    for k in ("fused", "generic", "tail_fence", "rdc", "ptxas", "rotate", "stripe", "thread_barrier", "reps"):
        assert getattr(e, k) == getattr(BASE, k)
    assert not e.random_config
    assert draw_config(BASE, random.Random(seed)) == e  # reproducible from the seed


def test_drawn_grids_follow_the_runners_uniform_draws():
    rng = random.Random(7)
    draws = [draw_config(BASE, rng) for _ in range(4000)]
    big = sum(e.blocks >= 512 for e in draws) / len(draws)
    # uniform 4..1024 rounded on a log scale: >= 384 (512 or 1024) is 62 % of the draws
    assert 0.58 < big < 0.66
    wide = sum(e.threads == 256 for e in draws) / len(draws)
    assert 0.21 < wide < 0.29  # uniform 2..256 rounded: >= 192 is 25 %
    assert 0.3 < sum(e.stress_blocks > 0 for e in draws) / len(draws) < 0.7
    assert len({(e.blocks, e.threads, e.stride, e.warp_gap) for e in draws}) > 1000


def test_runner_random_preset_compiles_the_code_of_runner_cuda12(tmp_path):
    assert BASE == replace(PRESETS["runner-cuda12"], random_config=True)
    assert BASE.short().endswith("ptxas=129 random") and not Env().random_config
    p = tmp_path / "mp.ptx"
    p.write_text(""".test MP
.global .u32 x = 0;
.global .u32 y = 0;
.thread T0 .cta 0 { st.relaxed.gpu.global.u32 [x], 1; fence.acq_rel.cta; st.relaxed.gpu.global.u32 [y], 1; }
.thread T1 .cta 1 { ld.relaxed.gpu.global.u32 %r0, [y]; fence.acq_rel.cta;
    ld.relaxed.gpu.global.u32 %r1, [x]; }
exists (T1:%r0 == 1 && T1:%r1 == 0)
""")
    import ptxmm
    from ptxmm.device.layout import make_layout

    lay = make_layout(ptxmm.load(p))
    a, b = PRESETS["runner-cuda12"], BASE
    assert generate(lay, a.fused, a.generic, a.tail_fence) == generate(lay, b.fused, b.generic, b.tail_fence)


class FakeHarness(Harness):
    """Harness.run's loop with the device parts replaced: each replay spends the seconds asked for
    and histograms one instance per ``key`` it was set up with."""

    def __init__(self, env: Env, seed: int):  # no GPU: only what run() reads
        self.base, self.seed, self._draws, self._cfg_s = env, seed, 0, 0.0
        self._rng = random.Random(seed) if env.random_config else None
        self.setups: list[Env] = []
        self._setup(draw_config(env, self._rng) if self._rng else env)

    def _setup(self, env):
        self.env = env
        self._cfg_s = 0.0
        self.setups.append(env)

    def _replay(self, budget_s, iterations):
        return {len(self.setups): 10}, 10, max(budget_s, 0.01)

    def _decode(self, hist, instances, dt, env):
        from ptxmm.device.harness import DeviceRun

        run = DeviceRun(None, None, env, instances, dt, [], 0)
        run.hist = hist
        return run


def test_random_config_draws_a_fresh_configuration_every_chunk_of_replay():
    h = FakeHarness(BASE, seed=3)
    r = h.run(1.0)
    assert len(h.setups) == round(1.0 / RANDOM_CHUNK_S)  # one configuration per chunk
    assert len({(e.blocks, e.threads, e.stride, e.warp_gap) for e in h.setups}) == len(h.setups)
    assert r.env == BASE and r.instances == 10 * len(h.setups)
    assert [c[0] for c in r.configs] == [e.short() for e in h.setups]  # recorded per run
    assert sum(r.hist.values()) == r.instances  # every chunk's histogram merged
    # short calls share a configuration until it has had its chunk; the seed reproduces the draws
    h2 = FakeHarness(BASE, seed=3)
    for _ in range(4):
        h2.run(0.05)
    assert len(h2.setups) == 1
    h2.run(0.9)
    assert h2.setups[:len(h.setups)] == h.setups


def test_without_random_config_one_configuration_serves_every_run():
    h = FakeHarness(PRESETS["runner-cuda12"], seed=3)
    r = h.run(1.0)
    assert len(h.setups) == 1 and r.env == PRESETS["runner-cuda12"] and len(r.configs) == 1


def test_runner_test_names_become_the_kernels_macros():
    assert rb.defines("wrc_TB_1_02_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_THREAD_1_FENCE") == (
        "kernels/wrc.cu", ["TB_02_1", "SCOPE_DEVICE", "FENCE_SCOPE_BLOCK", "THREAD_1_FENCE"])
    assert rb.defines("z6_3_TB_1_02_SCOPE_BLOCK_NO_FENCE_ACQ_REL") == (
        "kernels/z6-3.cu", ["TB_02_1", "SCOPE_BLOCK", "ACQ_REL"])
    assert rb.defines("wrw_2w_TB_0_1_2_SCOPE_DEVICE_NO_FENCE_RELAXED")[0] == "kernels/wrw+2w.cu"
    assert rb.defines("iriw_TB_03_12_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_THREAD_1_2_FENCE")[1][0] == "TB_03_12"
    # three locations where the runner's tuning files say so (isa2 with two wrote past its buffer)
    assert rb.params_file("isa2_TB_0_1_2_SCOPE_DEVICE_NO_FENCE_RELAXED") == "3-loc.txt"
    assert rb.params_file("z6_3_TB_0_1_2_SCOPE_DEVICE_NO_FENCE_RELAXED") == "3-loc.txt"
    assert rb.params_file("iriw_TB_0_1_2_3_SCOPE_DEVICE_NO_FENCE_RELAXED") == "2-loc.txt"


def test_the_12_9_build_runs_nvccs_steps_with_the_old_ptxas():
    dry = "\n".join([
        "#$ _NVVM_BRANCH_=nvvm", "#$ CICC_PATH=/cuda/nvvm/bin", '#$ LIBRARIES=  "-L/x"',
        '#$ "$CICC_PATH/cicc" --c++17 -arch compute_90 -o "/t/a.ptx"',
        '#$ ptxas -arch=sm_90 -m64 --compile-only  "/t/a.ptx"  -o "/t/a.cubin"',
        "#$ rm /t/a.fatbin", "not a step"])
    script = rb.p129_script(dry, "/opt/ptxas129")
    lines = script.splitlines()
    assert "export CICC_PATH=/cuda/nvvm/bin" in lines and not any("LIBRARIES" in ln for ln in lines)
    assert "sed -i 's/^\\.version [0-9.]*/.version 8.8/' /t/a.ptx" in lines
    assert '/opt/ptxas129 -arch=sm_90 -m64 --compile-only  "/t/a.ptx"  -o "/t/a.cubin"' in lines
    assert "rm -f /t/a.fatbin" in lines and "not a step" not in script
    assert lines.index("sed -i 's/^\\.version [0-9.]*/.version 8.8/' /t/a.ptx") < lines.index(
        '/opt/ptxas129 -arch=sm_90 -m64 --compile-only  "/t/a.ptx"  -o "/t/a.cubin"')


def test_random_configs_are_tune_sh_random_config():
    rng = random.Random(1)
    for _ in range(500):
        c = rb.random_config(rng)
        assert 4 <= c["testingWorkgroups"] <= c["maxWorkgroups"] <= 1024
        assert 2 <= c["workgroupSize"] <= 256 and c["workgroupSize"] % 2 == 0
        assert c["scratchMemorySize"] == 32 * c["stressLineSize"] * c["stressTargetLines"]
        assert 1 <= c["memStride"] <= 7 and c["permuteThread"] == 419 and c["testIterations"] == 1000
    out = "Time taken: 1.25 seconds\nWeak behavior rate: 8 per second\nTotal behaviors: 1000\n" \
          "Number of weak behaviors: 10\n"
    assert rb._parse(out) == (1.25, 1000, 10)
