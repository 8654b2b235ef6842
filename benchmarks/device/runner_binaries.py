"""The public CUDA runner's own binaries, built and run as its ``tune.sh`` does, side by side with ptxmm.

    python benchmarks/device/runner_binaries.py build SRC OUT --tests NAMES --mode cu13|p129 [--jobs 16]
    python benchmarks/device/runner_binaries.py run SRC OUT --tests NAMES --mode cu13|p129 --seconds 30 \\
        --out runs.jsonl [--seed 1]

SRC is a checkout of reeselevine/cuda-litmus (its ``runner.cu``, ``litmus.cuh``, ``functions.cu``,
``kernels/``, ``params/``): it is read where it lies and never copied into this repository.

``build`` compiles one binary per runner test name (``wrc_TB_1_02_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_
THREAD_1_FENCE`` -> ``nvcc -DTB_02_1 -DSCOPE_DEVICE -DFENCE_SCOPE_BLOCK -DTHREAD_1_FENCE -I.
-rdc=true ... runner.cu kernels/wrc.cu``; the runner's results name its ``TB_02_1`` ``TB_1_02``):

* ``cu13``: exactly ``tune.sh``'s command, ``-arch sm_80``: an H100 runs the embedded compute_80 PTX,
  compiled by the driver's JIT (CUDA 13 here);
* ``p129``: ``-gencode arch=compute_90,code=sm_90`` (no PTX in the binary), every step of ``nvcc
  -dryrun`` run as nvcc would, except that the PTX (its ``.version`` lowered to 8.8) is assembled
  by CUDA 12.9's ptxas (``PTXMM_PTXAS_129``), as the runner's H100 results were.

``run`` replays ``tune.sh``'s loop for one test: a fresh ``random_config 1024 256`` (1,000
iterations; 4-1024 testing blocks of 2-256 threads, shuffle, barrier, stress, stride 1-7 drawn
per configuration; the draws from ``random.Random(seed)``, each configuration recorded) until
``--seconds`` of the runner's own "Time taken" are spent; per configuration: weak, total, seconds.
One JSON line per test: the configurations, the cumulative seconds at the end of the first
configuration that showed the weak outcome (an upper bound on its time to first observation)."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

KERNEL_FILE = {"iriw": "iriw", "isa2": "isa2", "rwc": "rwc", "wrc": "wrc", "wwc": "wwc",
               "wrw_2w": "wrw+2w", "2_2w": "2+2w", "3_2w": "3.2w", "z6_3": "z6-3",
               "paper_example1": "paper-example1", "paper_example2": "paper-example2"}
# the parameter file each family's tuning file names (tuning-files/*.txt); the others: 2-loc.txt. A
# family run with too few locations writes past its buffer (its third location lands in the next one)
PARAMS = {"isa2": "3-loc.txt", "z6_3": "3-loc.txt", "3_2w": "3-loc.txt", "paper_example1": "4-loc.txt",
          "paper_example2": "4-loc.txt"}
_NAME = re.compile(r"^(?P<test>.+?)_TB_(?P<tb>[0-9_]+?)_(?P<scope>SCOPE_(?:DEVICE|BLOCK|SYSTEM))_"
                   r"(?:(?P<fscope>FENCE_SCOPE_(?:DEVICE|BLOCK|SYSTEM))|NO_FENCE)_(?P<variant>.+)$")


def defines(name: str) -> tuple[str, list[str]]:
    """(kernel file, -D macros) of a runner test name."""
    m = _NAME.match(name)
    if m is None or m["test"] not in KERNEL_FILE:
        raise ValueError(f"not a runner test name: {name}")
    tb = "02_1" if m["tb"] == "1_02" else m["tb"]  # results.csv's TB_1_02 is the kernels' TB_02_1
    macros = [f"TB_{tb}", m["scope"]] + ([m["fscope"]] if m["fscope"] else []) + [m["variant"]]
    return f"kernels/{KERNEL_FILE[m['test']]}.cu", macros


def params_file(name: str) -> str:
    return PARAMS.get(_NAME.match(name)["test"], "2-loc.txt")


def _sh(cmd: str, cwd: str, env: dict | None = None) -> None:
    r = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"{cmd[:200]}: {r.stderr[-2000:]}")


_KEEP_VARS = ("PATH", "CICC_PATH", "NVVMIR_LIBRARY_DIR", "LD_LIBRARY_PATH", "TOP")


def p129_script(dryrun: str, ptxas: str) -> str:
    """nvcc -dryrun's steps as a shell script, CUDA 12.9's ptxas assembling the PTX."""
    out = ["set -e"]
    for ln in dryrun.splitlines():
        if not ln.startswith("#$ "):
            continue
        step = ln[3:].strip()
        var = re.match(r"^(\w+)=(.*)$", step)
        if var:
            if var[1] in _KEEP_VARS:
                out.append(f"export {var[1]}={shlex.quote(var[2])}")
            continue
        if step.startswith("ptxas "):
            ptx = re.search(r'"([^"]+\.ptx)"', step)[1]
            out.append(f"sed -i 's/^\\.version [0-9.]*/.version 8.8/' {shlex.quote(ptx)}")
            step = shlex.quote(ptxas) + step[len("ptxas"):]
        elif step.startswith("rm "):  # temporaries a dry run names but a step may not have made
            step = "rm -f " + step[3:]
        out.append(step)
    return "\n".join(out) + "\n"


def build_one(src: str, out: Path, name: str, mode: str) -> float:
    t0 = time.perf_counter()
    kfile, macros = defines(name)
    target = (out / f"{name}-{mode}").resolve()
    d = " ".join(f"-D{m}" for m in macros)
    if mode == "cu13":
        _sh(f"nvcc {d} -I. -rdc=true -arch sm_80 runner.cu {kfile} -o {target}", src)
        return time.perf_counter() - t0
    ptxas = os.environ["PTXMM_PTXAS_129"]
    with tempfile.TemporaryDirectory() as td:
        env = dict(os.environ, TMPDIR=td)
        cmd = (f"nvcc {d} -I. -rdc=true -gencode arch=compute_90,code=sm_90 runner.cu {kfile} "
               f"-o {target} -dryrun")
        r = subprocess.run(cmd, shell=True, cwd=src, capture_output=True, text=True, env=env)
        script = Path(td) / "build.sh"
        script.write_text(p129_script(r.stderr + r.stdout, ptxas))
        _sh(f"bash {script}", src, env)
    return time.perf_counter() - t0


def cmd_build(a) -> None:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    names = Path(a.tests).read_text().split()
    with ThreadPoolExecutor(a.jobs) as ex:
        futs = {n: ex.submit(build_one, a.src, out, n, a.mode) for n in names}
    for n, f in futs.items():
        try:
            print(f"built {n}-{a.mode} in {f.result():.1f} s", flush=True)
        except Exception as e:  # report and go on: one failing build does not stop the others
            print(f"FAILED {n}-{a.mode}: {e}", flush=True)


def random_config(rng: random.Random, workgroup_limiter: int = 1024, size_limiter: int = 256) -> dict:
    """tune.sh's ``random_config`` (its ``random_between`` is inclusive at both ends)."""
    def between(lo: int, hi: int) -> int:
        return rng.randint(lo, hi)

    testing = between(4, workgroup_limiter)
    size = between(1, size_limiter)
    line = between(2, 10) ** 2
    lines = between(1, 16)
    return {"testIterations": 1000, "testingWorkgroups": testing,
            "maxWorkgroups": between(testing, workgroup_limiter),
            "workgroupSize": size + size % 2, "shufflePct": between(0, 100), "barrierPct": between(0, 100),
            "stressLineSize": line, "stressTargetLines": lines, "scratchMemorySize": 32 * line * lines,
            "memStride": between(1, 7), "memStressPct": between(0, 100),
            "memStressIterations": between(0, 1024), "memStressPattern": between(0, 3),
            "preStressPct": between(0, 100), "preStressIterations": between(0, 128),
            "preStressPattern": between(0, 3), "stressAssignmentStrategy": between(0, 1),
            "permuteThread": 419}


def _parse(text: str) -> tuple[float, int, int]:
    t = float(re.search(r"Time taken: ([0-9.e+-]+)", text)[1])
    total = int(re.search(r"Total behaviors: (\d+)", text)[1])
    weak = int(re.search(r"Number of weak behaviors: (\d+)", text)[1])
    return t, total, weak


def run_test(binary: Path, params: Path, seconds: float, rng: random.Random, td: Path) -> dict:
    configs, used, first = [], 0.0, None
    pfile = td / "params.txt"
    while used < seconds:
        cfg = random_config(rng)
        pfile.write_text("".join(f"{k}={v}\n" for k, v in cfg.items()))
        w0 = time.perf_counter()
        r = subprocess.run([str(binary), "-s", str(pfile), "-t", str(params)], capture_output=True,
                           text=True, timeout=300)
        wall = time.perf_counter() - w0
        try:
            t, total, weak = _parse(r.stdout)
        except TypeError:
            configs.append({"config": cfg, "error": (r.stdout + r.stderr)[-500:], "wall": round(wall, 3)})
            used += wall
            continue
        used += t
        if weak and first is None:
            first = used
        configs.append({"config": cfg, "seconds": round(t, 4), "wall": round(wall, 3), "total": total,
                        "weak": weak})
    weak = sum(c.get("weak", 0) for c in configs)
    total = sum(c.get("total", 0) for c in configs)
    return {"seconds": round(used, 3), "first_s": None if first is None else round(first, 3), "weak": weak,
            "total": total, "rate": weak / total if total else 0.0,
            "configs_weak": sum(1 for c in configs if c.get("weak")), "configs": configs}


def cmd_run(a) -> None:
    names = Path(a.tests).read_text().split()
    with open(a.out, "a") as f, tempfile.TemporaryDirectory() as td:
        for k, n in enumerate(names):
            binary = Path(a.dir) / f"{n}-{a.mode}"
            if not binary.exists():
                print(f"{n}-{a.mode}: no binary", flush=True)
                continue
            row = {"test": n, "mode": a.mode, "seed": a.seed + k}
            row.update(run_test(binary, Path(a.src) / "params" / params_file(n), a.seconds,
                                random.Random(a.seed + k), Path(td)))
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{n} {a.mode}: weak {row['weak']} / {row['total']:.3g} (rate {row['rate']:.2g}) in "
                  f"{row['seconds']} s, first by {row['first_s']} s, {row['configs_weak']}/"
                  f"{len(row['configs'])} configurations weak", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("build")
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("--tests", required=True)
    p.add_argument("--mode", choices=("cu13", "p129"), required=True)
    p.add_argument("--jobs", type=int, default=16)
    p = sub.add_parser("run")
    p.add_argument("src")
    p.add_argument("dir")
    p.add_argument("--tests", required=True)
    p.add_argument("--mode", choices=("cu13", "p129"), required=True)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    {"build": cmd_build, "run": cmd_run}[a.cmd](a)


if __name__ == "__main__":
    main()
