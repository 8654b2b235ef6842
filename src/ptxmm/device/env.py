"""Test environments: the knobs of a parallel test environment (launch shape, slot stride, bounded
barrier, role rotation, memory stress) and the named presets ``--stress`` chooses from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from ..errors import PtxmmError

if TYPE_CHECKING:  # (annotations only: the CLI's start imports this module for its presets)
    import random


def pow2(n: int) -> int:
    """The smallest power of two >= n."""
    p = 1
    while p < n:
        p *= 2
    return p


@dataclass(frozen=True)
class Env:
    blocks: int = 512  # testing blocks (power of two)
    threads: int = 256  # threads per block (power of two, >= 32 x warps per CTA)
    stride: int = 4  # words between location slots (1: other instances' slots share the lines)
    barrier_pct: int = 100  # probability (%) of the bounded pre-test barrier per iteration
    rotate: bool = True  # rotate role order by warp
    stress_blocks: int = 0  # extra blocks hammering a scratch buffer
    stress_loops: int = 0
    stress_lines: int = 8
    stress_line_words: int = 64
    iters_per_graph: int = 20  # iterations captured in one CUDA graph
    reps: int = 1  # instances each thread plays back to back per role and launch (power of two)
    # straight-line roles: a thread issues all its roles back to back (no role waits for another's
    # loads) and stores the registers after the last one, as the public CUDA runner does
    fused: bool = False
    stripe: int = 0  # CTA groups of an instance this many blocks apart (0: a random distance)
    coalesce: bool = False  # lane l plays instance slot l (no lane permutation): a warp's accesses coalesce
    pre_stress: int = 0  # loops of st;ld on the stress lines by every testing thread before the barrier
    warp_gap: int = 32  # lanes between the roles of one CTA (32: a warp each; fewer: one warp shares them)
    thread_barrier: bool = False  # every thread arrives at the barrier and polls <= 1024 times
    # .global accesses by generic address (ld/st without a state space), as the runner's cuda::atomic
    # accesses compile: SASS LD/ST instead of LDG/STG (the same program: a global address is a generic one)
    generic: bool = False
    tail_fence: bool = False  # fused roles: fence.sc.sys after the last role, before the registers are stored
    rdc: bool = False  # compiled as relocatable device code and linked (nvcc -rdc=true, as the runner builds)
    ptxas: int = 0  # the CUDA release whose ptxas assembles the PTX (129 = 12.9; 0: nvcc's own), build.py
    # a fresh random launch configuration (draw_config: grid, block size, stride, barrier, stress,
    # lane gap) every RANDOM_CHUNK_S of replay, drawn from the run's seed, as the runner's tune.sh
    # draws one per configuration; the configurations are recorded in DeviceRun.configs
    random_config: bool = False

    def as_dict(self) -> dict:
        return asdict(self)

    def short(self) -> str:
        s = f"{self.blocks}x{self.threads} S={self.stride} bar={self.barrier_pct}%"
        s += "" if self.rotate else " norot"
        s += f" R={self.reps}" if self.reps > 1 else ""
        s += " fused" if self.fused else ""
        s += f" stripe={self.stripe}" if self.stripe else ""
        s += " coalesce" if self.coalesce else ""
        s += f" pre={self.pre_stress}" if self.pre_stress else ""
        s += f" gap={self.warp_gap}" if self.warp_gap != 32 else ""
        s += " tbar" if self.thread_barrier else ""
        s += " generic" if self.generic else ""
        s += " tailfence" if self.tail_fence else ""
        s += " rdc" if self.rdc else ""
        s += f" ptxas={self.ptxas}" if self.ptxas else ""
        s += " random" if self.random_config else ""
        if self.stress_blocks:
            s += f" stress={self.stress_blocks}b/{self.stress_loops}l/{self.stress_lines}L"
        return s


PRESETS: dict[str, Env] = {
    "none": Env(blocks=1024, stride=1, barrier_pct=0, reps=4),
    "barrier": Env(stride=1, reps=4),
    "tight": Env(blocks=256, stride=1, reps=4),
    "light": Env(stress_blocks=16, stress_loops=32),
    "heavy": Env(stress_blocks=128, stress_loops=256),
    "runner": Env(blocks=256, threads=128, stride=1, rotate=False, fused=True, stripe=1,
                  thread_barrier=True),
    "runner-sass": Env(blocks=256, threads=128, stride=1, rotate=False, fused=True, stripe=1,
                       thread_barrier=True, generic=True, tail_fence=True, rdc=True),
    "runner-cuda12": Env(blocks=256, threads=128, stride=1, rotate=False, fused=True, stripe=1,
                         thread_barrier=True, generic=True, tail_fence=True, rdc=True, ptxas=129),
    "runner-random": Env(blocks=256, threads=128, stride=1, rotate=False, fused=True, stripe=1,
                         thread_barrier=True, generic=True, tail_fence=True, rdc=True, ptxas=129,
                         random_config=True),
}
DEFAULT_PRESET = "barrier"

PRESET_WHAT = {
    "none": "no barrier, no stress: the most instances per second",
    "barrier": "every iteration starts with a bounded barrier over all testing blocks, so the roles "
               "of an instance start together (more weak outcomes per instance, fewer instances)",
    "tight": "barrier over 256 testing blocks (about two per SM of an H100): the blocks that play "
             "one instance's roles start closer together than under `barrier`, so roles in "
             "different CTAs race more often (SB relaxed on the H100: weak rate 1.7e-2 against "
             "6.2e-3), at fewer instances per second",
    "light": "barrier plus a few blocks hammering a scratch buffer (memory stress)",
    "heavy": "barrier plus many stress blocks: far fewer instances, shows some rare reorderings",
    "runner": "placed as the public CUDA runner (reeselevine/cuda-litmus) places its threads: every "
              "thread issues its roles back to back in program order with no wait between them "
              "(registers stored after the last role), an instance's CTAs in adjacent blocks, every "
              "thread arriving at the barrier; roles with loops or .shared locations run unfused",
    "runner-sass": "preset runner, compiled to the runner's machine code: global accesses by generic "
                   "address (SASS LD/ST as its cuda::atomic accesses, not LDG/STG), a fence.sc.sys "
                   "after the last role before the registers are stored, as its kernels end, and built "
                   "as relocatable device code (nvcc -rdc=true) as it builds them",
    "runner-cuda12": "preset runner-sass assembled by CUDA 12.9's ptxas (PTXMM_PTXAS_129), as the runner's "
                     "H100 results were: its MEMBAR.ALL.CTA (fence.*.cta) does not wait for earlier loads, "
                     "CUDA 13's does, so only this shows loads reordered across block-scope fences",
    "runner-random": "preset runner-cuda12 with the runner's random launch configurations: every "
                     "0.25 s of replay a fresh grid (4-1024 blocks), block size (32-256), stride (1-7), "
                     "barrier and stress probability and lane gap, drawn from the seed as the runner's "
                     "tune.sh draws one per configuration (rounded to ptxmm's powers of two)",
}


def describe(name: str) -> str:
    """One preset in words and numbers (help text, docs)."""
    return f"{name}: {PRESET_WHAT[name]} [{PRESETS[name].short()}]"


STRESS_HELP = ("environment preset. " + "; ".join(describe(n) for n in PRESETS) +
               ". 'tuned': the environment `ptxmm tune` found best for the test (else the default). "
               "Knobs: blocks x threads per block, S = words between location slots, bar = "
               "probability of the pre-test barrier, stress = blocks/loops/lines of memory stress")


def random_env(rng: random.Random) -> Env:
    """One random environment in the tuning ranges, kept co-resident."""
    stress = rng.random() < 0.5
    return Env(
        blocks=rng.choice([256, 512, 1024]),
        threads=rng.choice([128, 256]),
        stride=rng.choice([1, 2, 4, 8]),
        barrier_pct=rng.choice([0, 50, 100, 100]),
        rotate=rng.random() < 0.8,
        stress_blocks=rng.choice([16, 64, 128]) if stress else 0,
        stress_loops=rng.choice([16, 64, 256]) if stress else 0,
        stress_lines=rng.choice([1, 2, 8, 16]),
        stress_line_words=rng.choice([16, 64, 256]),
    )


RANDOM_CHUNK_S = 0.25  # replay seconds per random launch configuration (Env.random_config)


def _nearest_pow2(x: int, lo: int, hi: int) -> int:
    """The power of two nearest to x on a log scale, within [lo, hi]."""
    p = lo
    while p < hi and x >= p * 3 // 2:
        p *= 2
    return p


def draw_config(base: Env, rng: random.Random) -> Env:
    """One launch configuration as the public runner's ``tune.sh random_config 1024 256`` draws it,
    mapped onto ptxmm's knobs: testing blocks uniform in 4..1024 and block size uniform in 2..256,
    each rounded to the nearest power of two (block size at least 32: a warp); extra blocks beyond
    the testing ones (uniform up to 1024, at most 128 here so that a barrier's grid stays
    co-resident) run memory stress of 0..1024 loops with the runner's stress probability; stride
    1..7; barrier probability 0..100 %; pre-stress 0..128 loops with its probability; the lanes
    between one CTA's roles uniform in 1..32 (the runner permutes lanes by 419 instead). Everything
    the compiled code fixes (fused, generic, tail fence, rdc, ptxas, rotation, stripe) stays
    ``base``'s."""
    testing = rng.randint(4, 1024)
    extra = rng.randint(testing, 1024) - testing
    size = rng.randint(1, 256)
    stress_on = rng.randint(0, 100) > rng.randint(0, 99)  # memStressPct, then the per-iteration check
    pre_on = rng.randint(0, 100) > rng.randint(0, 99)
    stress_loops = rng.randint(0, 1024)
    stress_blocks = min(extra, 128) if stress_on and stress_loops else 0
    threads = _nearest_pow2(size + size % 2, 32, 256)
    blocks = max(_nearest_pow2(testing, 4, 1024), 256 // threads)  # the check kernel: 256 instances a block
    return replace(base, random_config=False, blocks=blocks, threads=threads,
                   stride=rng.randint(1, 7), barrier_pct=rng.randint(0, 100),
                   stress_blocks=stress_blocks, stress_loops=stress_loops if stress_blocks else 0,
                   stress_lines=rng.randint(1, 16), stress_line_words=rng.randint(2, 10) ** 2,
                   pre_stress=rng.randint(0, 128) if pre_on else 0, warp_gap=rng.randint(1, 32))


def fit(env: Env, warps_per_cta: int, cluster_size: int) -> Env:
    """Adjust an environment to a test: enough warps per block, a grid of whole clusters."""
    for what, v in (("blocks", env.blocks), ("threads", env.threads), ("reps", env.reps)):
        if v < 1 or v & (v - 1):
            raise PtxmmError(f"--{what} {v} is not a power of two", None,
                             "the instance permutations need powers of two, e.g. 256, 512, 1024")
    if not 1 <= env.warp_gap <= 32:
        raise PtxmmError(f"--warp-gap {env.warp_gap} is not in 1..32", None,
                         "32 puts the roles of one CTA in different warps, 1 in adjacent lanes")
    if env.threads < 32:
        raise PtxmmError("--threads must be at least 32 (one warp)", None, "use 128 or 256")
    threads = max(env.threads, 32 * pow2(warps_per_cta))
    blocks = max(env.blocks, cluster_size)
    stress = env.stress_blocks
    if stress % cluster_size:
        stress += cluster_size - stress % cluster_size
    if threads > 1024:
        raise PtxmmError(f"{warps_per_cta} threads in one CTA need more than 1024 threads per block",
                         None, "put at most 32 threads in one CTA")
    return replace(env, threads=threads, blocks=blocks, stress_blocks=stress)
