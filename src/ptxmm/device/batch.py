"""Device batches that survive their worst file.

A batch is planned before anything runs: every file is parsed, checked against the model (when the
command needs the model's outcomes), laid out for the device and compiled, nvcc runs in parallel.
A file that fails any step becomes a :class:`Skip` row with its reason and stays in the batch; the
rest run one after the other. Ctrl-C, a hung kernel or a device error end the run early, but every
file still gets a row (``not run``), so the summary and the JSON are always complete.

Exit codes shared by ``crossval``, ``run``, ``tune`` and ``audit``: 1 when any violation was seen,
else 2 when some file could not run (or the batch was cut short), else 0."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import PtxmmError, UnsupportedError
from ..ir.program import Program
from ..semantics.result import CheckResult
from .build import CompileTimeout, compile_cubin
from .codegen import generate
from .harness import DeviceTimeout
from .layout import Layout, make_layout

# why a file did not run (the JSON's "reason"; the table's "not run" column)
PARSE = "parse error"
UNSUPPORTED = "not supported"  # by the front end or the model
DEVICE_UNSUPPORTED = "not supported on the device"
MODEL = "model error"
COMPILE = "compile error"
TIMEOUT = "timeout"
DEVICE = "device error"
INTERRUPTED = "interrupted"
HUNG = "not run: the device hung"
NO_DEVICE = "device or tools missing"
INTERNAL = "internal error"  # a ptxmm bug; please report it


@dataclass
class Skip:
    """A file of the batch that did not run, and why."""

    file: str
    reason: str
    message: str
    position: str | None = None
    hint: str | None = None

    @classmethod
    def of(cls, file: Path | str, reason: str, e: BaseException) -> Skip:
        if isinstance(e, PtxmmError):
            return cls(str(file), reason, e.message, str(e.pos) if e.pos else None, e.hint)
        return cls(str(file), reason, f"{type(e).__name__}: {e}")

    def to_json(self) -> dict:
        return {"file": self.file, "status": "not run", "reason": self.reason, "message": self.message,
                "position": self.position, "hint": self.hint}


@dataclass
class Job:
    """A file ready to run: parsed, laid out, compiled (and, for crossval/tune, its model outcomes)."""

    file: Path
    prog: Program
    layout: Layout
    cubin: Path | None = None
    check: CheckResult | None = None


def _prepare_one(path: Path, model: str | None, unroll: int) -> Job | Skip:
    """Parse, (model-check) and lay out one file, or say why not."""
    from .. import load
    from .crossval import prepare

    try:
        prog = load(path)
    except UnsupportedError as e:
        return Skip.of(path, UNSUPPORTED, e)
    except PtxmmError as e:
        return Skip.of(path, PARSE, e)
    except Exception as e:  # a ptxmm bug must not end the batch: the file is its own row
        return Skip.of(path, INTERNAL, e)
    try:
        if model is None:
            return Job(path, prog, make_layout(prog))
        res, lay = prepare(prog, model, unroll)
        return Job(path, prog, lay, check=res)
    except UnsupportedError as e:
        return Skip.of(path, DEVICE_UNSUPPORTED if "on the device" in e.message else UNSUPPORTED, e)
    except PtxmmError as e:
        return Skip.of(path, MODEL, e)
    except Exception as e:
        return Skip.of(path, INTERNAL, e)


def _compile_one(job: Job, timeout: float, gen: Callable[[Layout], str]) -> Job | Skip:
    try:
        job.cubin = compile_cubin(gen(job.layout), timeout=timeout)
        return job
    except CompileTimeout as e:
        return Skip.of(job.file, TIMEOUT, e)
    except PtxmmError as e:
        return Skip.of(job.file, COMPILE, e)
    except Exception as e:
        return Skip.of(job.file, INTERNAL, e)


def plan(files: Iterable[Path | str], model: str | None = None, unroll: int = 2, *,
         compile_timeout: float = 300.0, jobs: int | None = None,
         gen: Callable[[Layout], str] | None = None,
         progress: Callable[[str], None] | None = None) -> list[Job | Skip]:
    """Every file as a Job (ready to run) or a Skip (its reason), in the order given. ``model``:
    check each file against it first (crossval, tune); None for run and audit. ``gen``: the
    code generator (default :func:`generate`)."""
    gen = gen or generate
    items: list[Job | Skip] = []
    for f in files:
        if progress:
            progress(f"preparing {Path(f).name}")
        items.append(_prepare_one(Path(f), model, unroll))
    todo = [i for i, it in enumerate(items) if isinstance(it, Job)]
    if progress and todo:
        progress(f"compiling {len(todo)} test(s)")
    with ThreadPoolExecutor(jobs or min(16, os.cpu_count() or 1)) as ex:
        done = ex.map(lambda i: _compile_one(items[i], compile_timeout, gen), todo)  # type: ignore[arg-type]
        for i, it in zip(todo, done):
            items[i] = it
    return items


def _cuda_error_types() -> tuple[type[BaseException], ...]:
    try:
        import cupy
    except ImportError:
        return ()
    return (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError,
            cupy.cuda.memory.OutOfMemoryError)


@dataclass
class Batch:
    """Per file, in order: what the command's ``run_one`` returned, or a Skip."""

    items: list[Any] = field(default_factory=list)
    interrupted: bool = False
    hung: bool = False
    seconds: float = 0.0

    @property
    def skipped(self) -> list[Skip]:
        return [i for i in self.items if isinstance(i, Skip)]

    @property
    def results(self) -> list[Any]:
        return [i for i in self.items if not isinstance(i, Skip)]

    def exit_code(self, violations: int) -> int:
        if violations:
            return 1
        return 2 if self.skipped or self.interrupted or self.hung else 0

    def reasons(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.skipped:
            out[s.reason] = out.get(s.reason, 0) + 1
        return out

    def summary_line(self, what: str, violations: int) -> str:
        ran = len(self.results)
        line = f"{ran} of {len(self.items)} test(s) {what}, {len(self.skipped)} not run"
        reasons = self.reasons()
        if reasons:
            line += " (" + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) + ")"
        line += f", {violations} violation(s)"
        if self.interrupted:
            line += "; interrupted (Ctrl-C): partial results"
        if self.hung:
            line += "; a kernel hung: the rest was not run"
        return line

    def to_json(self, command: str, violations: int, to_json: Callable[[Any], dict],
                extra: dict | None = None) -> dict:
        tests = [i.to_json() if isinstance(i, Skip) else {"status": "ran"} | to_json(i) for i in self.items]
        return {"command": command, "summary": {
            "tests": len(self.items), "ran": len(self.results), "not_run": len(self.skipped),
            "reasons": self.reasons(), "violations": violations, "interrupted": self.interrupted,
            "hung": self.hung, "seconds": round(self.seconds, 3),
            "exit_code": self.exit_code(violations)} | (extra or {}), "tests": tests}


class Progress:
    """test i/N, instances/s and ETA on a terminal (stderr, transient); nothing elsewhere."""

    def __init__(self, console: Console, total: int, enabled: bool = True):
        self.console, self.total = console, total
        self.on = enabled and console.is_terminal and total > 0
        self.prog = self.task = None
        self.instances, self.seconds, self.i = 0, 0.0, 0

    def __enter__(self) -> Progress:
        if self.on:
            from rich.progress import BarColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            self.prog = RichProgress(TextColumn("test {task.completed}/{task.total}"), BarColumn(),
                                     TextColumn("{task.fields[rate]}"), TextColumn("ETA"),
                                     TimeRemainingColumn(), TextColumn("{task.description}"),
                                     console=self.console, transient=True)
            self.prog.start()
            self.task = self.prog.add_task("", total=self.total, rate="")
        return self

    def start(self, name: str) -> None:
        if self.prog is not None:
            self.prog.update(self.task, description=name)

    def done(self, instances: int = 0, seconds: float = 0.0) -> None:
        self.instances += instances
        self.seconds += seconds
        if self.prog is not None:
            rate = f"{self.instances / self.seconds / 1e9:.2f} G inst/s" if self.seconds else ""
            self.prog.update(self.task, advance=1, rate=rate)

    def __exit__(self, *exc) -> None:
        if self.prog is not None:
            self.prog.stop()


def run_batch(items: list[Job | Skip], run_one: Callable[[Job], Any], *,
              on_result: Callable[[Any], None] | None = None,
              progress: Progress | None = None,
              measure: Callable[[Any], tuple[int, float]] | None = None) -> Batch:
    """Run every Job with ``run_one``; keep Skips; survive Ctrl-C, hung kernels and device errors."""
    batch = Batch()
    t0 = time.perf_counter()
    cuda_errors = _cuda_error_types()
    try:
        for it in items:
            if isinstance(it, Skip):
                batch.items.append(it)
                continue
            if progress:
                progress.start(it.prog.name)
            try:
                r = run_one(it)
            except DeviceTimeout as e:
                batch.items.append(Skip.of(it.file, TIMEOUT, e))
                batch.hung = True
                break
            except PtxmmError as e:
                batch.items.append(Skip.of(it.file, DEVICE, e))
                continue
            except cuda_errors as e:  # a failed launch, too little memory, ...
                batch.items.append(Skip.of(it.file, DEVICE, e))
                continue
            except Exception as e:  # a ptxmm bug: reported as this file's row, the batch goes on
                batch.items.append(Skip.of(it.file, INTERNAL, e))
                continue
            batch.items.append(r)
            if on_result:
                on_result(r)
            if progress:
                progress.done(*(measure(r) if measure else (0, 0.0)))
    except KeyboardInterrupt:
        batch.interrupted = True
    for it in items[len(batch.items):]:
        why = HUNG if batch.hung else INTERRUPTED
        batch.items.append(Skip(str(it.file), why, "the batch ended before this test ran"))
    batch.seconds = time.perf_counter() - t0
    return batch


def write_json(path: str | None, data: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(data, indent=2))
