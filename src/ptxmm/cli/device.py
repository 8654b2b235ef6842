"""The device commands (``run``, ``crossval``, ``tune``, ``codegen``, ``audit``, ``doctor``):
registered by :mod:`.main` when named or listed, so that ``ptxmm check`` does without the device
presets this module's options read."""

from __future__ import annotations

import sys

import click

from .. import load
from ..api_args import UNROLL_MAX
from ..cat.parser import load_model
from ..errors import PtxmmError
from .common import _fail, consoles
from .kernels import kernel_options
from .outputs import output_file


def _env(stress: str, blocks: int | None, threads: int | None, barrier: int | None, prog=None):
    from dataclasses import replace

    from ..device.env import DEFAULT_PRESET, PRESETS
    from ..device.tune import tuned_env

    env = (tuned_env(prog) if prog is not None and stress == "tuned" else None) or PRESETS[
        DEFAULT_PRESET if stress == "tuned" else stress]
    if blocks:
        env = replace(env, blocks=blocks)
    if threads:
        env = replace(env, threads=threads)
    if barrier is not None:
        env = replace(env, barrier_pct=barrier)
    return env


def _device_opts(f):
    from ..device.env import DEFAULT_PRESET, PRESETS, STRESS_HELP

    for opt in reversed([
        click.option("--stress", type=click.Choice(sorted(PRESETS) + ["tuned"]), default=DEFAULT_PRESET,
                     show_default=True, help=STRESS_HELP),
        click.option("--budget", type=float, default=1.0, show_default=True,
                     help="seconds of graph replay per test"),
        click.option("--iterations", type=int, default=None,
                     help="run this many iterations instead of a time budget"),
        click.option("--blocks", type=int, default=None, help="testing blocks (power of two)"),
        click.option("--threads", type=int, default=None, help="threads per block (power of two)"),
        click.option("--barrier", type=click.IntRange(0, 100), default=None,
                     help="pre-test barrier probability in %"),
        click.option("--seed", type=int, default=1, show_default=True),
        click.option("--timeout", type=float, default=60.0, show_default=True,
                     help="seconds a batch of launches may take before its test is reported as a "
                     "timeout (a hung kernel; the rest of the batch is then not run)"),
    ]):
        f = opt(f)
    return f


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--device", is_flag=True, required=True,
              help="run on the GPU (needs ptxmm[device-cuda13]; [device-cuda12] for CUDA 12: ptxmm doctor)")
@_device_opts
@click.option("--json", "as_json", is_flag=True, help="print the batch as JSON instead of tables")
def run(files, device, stress, budget, iterations, blocks, threads, barrier, seed, timeout, as_json) -> None:
    """Run FILES on the GPU and print each histogram of outcomes. Every file is reported; one
    that cannot run is a row with its reason (exit 2)."""
    from ..device.commands import execute, json_to_stdout, run_campaign
    from ..testing.runner import collect

    console, err = consoles()
    camp = run_campaign(lambda p: _env(stress, blocks, threads, barrier, p), budget, iterations, seed,
                        timeout, console if not as_json else err, as_json)
    code, batch = execute(camp, collect(list(files)), err if as_json else console, err,
                          json_to_stdout(as_json))
    _device_exit(code, batch.hung)


def _device_exit(code: int, hung: bool) -> None:
    """After a hung kernel the CUDA context never drains: leave without CuPy's cleanup."""
    if hung:
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--model", "-m", default="ptx", show_default=True)
@click.option("--unroll", type=click.IntRange(0, UNROLL_MAX), default=2, show_default=True)
@_device_opts
@click.option("--self-check/--no-self-check", default=True, show_default=True,
              help="first check that the harness exposes weak behaviour (SB relaxed) and that a "
                   "single-thread test shows no impossible value")
@click.option("--hunt", is_flag=True, help="for every test with allowed-but-unseen outcomes, hunt them "
              "on targeted environments (placement, strides, barrier probability, stress) and report "
              "each as found (environment, rate) or not found within N instances")
@click.option("--hunt-budget", type=float, default=10.0, show_default=True,
              help="seconds of replay per test for --hunt, split over its environments")
@click.option("--json", "json_out", default=None, help="write per-test results to this file")
@click.option("--jsonl", default=None, help="stream: inputs read lazily, one JSON line per test as it "
              "finishes (docs/campaigns.md)")
@click.option("--resume", is_flag=True, help="with --jsonl: skip the tests already in its file")
@click.option("--show-progress", is_flag=True, help="with --jsonl: show progress also off a terminal")
@click.option("--allow-undecided", is_flag=True, help="kernels: also run those whose liveness the "
              "model did not decide (one that spins on the GPU is a timeout row after --timeout)")
@click.option("--allow-hang", is_flag=True, help="kernels: also run those the model lets hang; the "
              "instances that end are judged (one that spins on the GPU is a timeout row after --timeout)")
@kernel_options
def crossval(files, model, unroll, stress, budget, iterations, blocks, threads, barrier, seed, timeout,
             self_check, hunt, hunt_budget, json_out, jsonl, resume, show_progress, allow_undecided,
             allow_hang, kernel) -> None:
    """Run FILES on the GPU; every observed outcome must be allowed by the model. Every file is
    planned first (parsed, checked, compiled); one that cannot run is a row with its reason. Exit
    1 on any violation, else 2 if some file could not run, else 0; the summary and --json are
    written also on Ctrl-C. FILES may be CUDA kernels (.cu, nvcc's .ptx), each launched as --launch
    or its `// ptxmm: launch` line says (docs/device/kernels.md)."""
    from ..device.commands import crossval_campaign, execute, json_to_file
    from ..device.kernel_cross import with_kernels
    from ..device.selfcheck import self_check as run_self_check
    from ..testing.runner import collect

    output_file("--json", json_out)
    console, err = consoles()
    try:
        load_model(model)
    except PtxmmError as e:
        _fail(e)
    env = _env(stress, blocks, threads, barrier)

    def env_for(prog):
        return _env(stress, blocks, threads, barrier, prog) if stress == "tuned" else env

    def pre() -> int:
        if not self_check:
            return 0
        ok, lines = run_self_check(env, model)
        for ln in lines:
            console.print(ln)
        return 0 if ok else 1

    camp = crossval_campaign(env_for, budget, iterations, seed, model, unroll, timeout, console,
                             hunt_budget=hunt_budget if hunt else None)
    # .cu / nvcc PTX files
    camp = with_kernels(camp, env_for, budget, iterations, timeout, console, kernel, allow_undecided,
                        allow_hang)
    if jsonl or resume:
        from .campaigns import stream_crossval

        return stream_crossval(camp, files, jsonl, resume, show_progress, json_out, pre, console, err)
    code, batch = execute(camp, collect(list(files)), console, err, json_to_file(json_out), pre=pre)
    _device_exit(code, batch.hung)


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--n", "n_random", type=int, default=12, show_default=True,
              help="random environments to try besides the presets")
@click.option("--budget", type=float, default=0.5, show_default=True, help="seconds per environment")
@click.option("--model", "-m", default="ptx", show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="seconds a batch of launches may take before its test is reported as a timeout")
@click.option("--json", "json_out", default=None, help="write per-test trials to this file")
def tune(files, n_random, budget, model, seed, timeout, json_out) -> None:
    """Search environments that make each of FILES show its condition most often per second; the
    best is remembered for `--stress tuned`. Every file is reported (exit 2 if one could not run)."""
    from ..device.commands import execute, json_to_file, tune_campaign
    from ..testing.runner import collect

    output_file("--json", json_out)
    console, err = consoles()
    try:
        load_model(model)
    except PtxmmError as e:
        _fail(e)
    camp = tune_campaign(n_random, budget, model, seed, timeout, console)
    code, batch = execute(camp, collect(list(files)), console, err, json_to_file(json_out))
    _device_exit(code, batch.hung)


@click.command()
@click.argument("file")
def codegen(file) -> None:
    """Print the CUDA C++ harness generated for FILE."""
    from ..device.codegen import generate
    from ..device.layout import make_layout

    try:
        click.echo(generate(make_layout(load(file))))
    except PtxmmError as e:
        _fail(e)


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--json", "json_out", default=None, help="write per-role results to this file")
def audit(files, json_out) -> None:
    """Compile FILES for sm_90 and check the SASS keeps every test instruction (needs nvcc and
    cuobjdump, no GPU). Exit 1 if an instruction was dropped or reordered, else 2 if some file
    could not be audited."""
    from ..device.commands import audit_campaign, execute, json_to_file
    from ..testing.runner import collect

    output_file("--json", json_out)
    console, err = consoles()
    code, _ = execute(audit_campaign(console), collect(list(files)), console, err, json_to_file(json_out))
    sys.exit(code)


@click.command()
def doctor() -> None:
    """Say what the device commands need here: GPU, driver, CUDA, CuPy, nvcc, ptxas, cuobjdump, and
    what is missing (exit 1 if something is). Runs without a GPU."""
    from ..device.doctor import diagnose, report

    lines, ok = report(diagnose())
    for ln in lines:
        click.echo(ln)
    sys.exit(0 if ok else 1)
