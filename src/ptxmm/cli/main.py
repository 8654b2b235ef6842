"""Command-line interface: a thin click shell over the Python API."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import api_args, load
from .. import check as api_check
from ..api_args import UNROLL_MAX
from ..cat.parser import builtin_models, load_model, require_axioms
from ..errors import PtxmmError
from ..report.termtext import Writer
from ..report.text import SHOWN_ON_TIMEOUT, render
from .common import _fail, consoles, error_json, interrupted
from .kernels import kernel_options
from .liveness import liveness_options, properties_option, with_properties
from .outputs import output_file

if TYPE_CHECKING:
    from rich.console import Console

ENGINES = click.Choice(api_args.ENGINES)


def entry() -> None:
    """The ``ptxmm`` program: ``main`` then a quick exit. Once a command is done and its output
    flushed, Python's own teardown (freeing every module and object one by one) would add ~15 ms
    to each run — a tenth of a litmus check — for memory the OS reclaims anyway. Exit handlers
    (atexit: logging, temporary files) still run. While other threads or worker processes are
    alive (a batch interrupted by Ctrl-C), the exit is Python's own: their shutdown belongs to its
    teardown, and skipping it could leave workers holding the output pipe open. Daemon threads
    (rich's display refresh, which rich stops without joining) do not count. ``main`` itself, as
    called from Python or by click's test runner, exits normally."""
    import atexit
    import os

    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    if _others_alive():
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`ptxmm ... | head`): nothing left to say
            code = code or 1
    os._exit(code)


def _others_alive() -> bool:
    """Whether a non-daemon thread besides this one, or a worker process, is still running."""
    import threading

    mp = sys.modules.get("multiprocessing")
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    return bool(others) or (mp is not None and bool(mp.active_children()))


class _Commands(click.Group):
    """The command group; the commands of another module are loaded when named or listed
    (``ptxmm check`` does without them)."""

    ELSEWHERE = {"explain": "explain", "graph": "explain",  # command → module (of ptxmm.cli) registering it
                 "gen": "campaigns", "diff": "campaigns",
                 "serve": "serve",  # serve: the web playground (needs the [web] extra)
                 "races": "any_launch",  # every launch size (ptxmm.queries.any_launch)
                 **dict.fromkeys(("run", "crossval", "tune", "codegen", "audit", "doctor"), "device")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.ELSEWHERE})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in self.ELSEWHERE:
            from importlib import import_module

            self.add_command(getattr(import_module(f"{__package__}.{self.ELSEWHERE[name]}"), name))
        return super().get_command(ctx, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ptxmm")
def main() -> None:
    """ptxmm — which outcomes does the PTX memory model allow, and why?"""


LINES_EVERY = 5.0  # seconds between progress lines off a terminal


class _Ticker:
    """Progress on a terminal for checks that run longer than a second (stderr): a spinner with
    the outcomes found and the time elapsed (encoding shows signs of life too), cleared when the
    check ends; then one final line — how many outcomes in how long, and why it stopped when it
    did not finish (timeout, --max-outcomes, Ctrl-C)."""

    def __init__(self, name: str, stream=None, delay: float = 1.0, lines_every: float = LINES_EVERY):
        import threading

        self.name = name
        self.stream = sys.stderr if stream is None else stream
        self.live = None  # (rich Progress, its task) while shown
        self.n = 0
        self.t0 = time.monotonic()  # rich's clock
        self.shown = False
        self.lock = threading.Lock()
        tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.timer = threading.Timer(delay, self._start) if tty else None
        if self.timer is not None:
            self.timer.daemon = True
            self.timer.start()
        # off a terminal: a plain line every so often, from the check's watchdog (engines/watch.py)
        self.every = None if tty else (lines_every, self._line)

    def _line(self, stop) -> None:
        """A progress line off a terminal: the phase, the outcomes found, the time."""
        self.shown = True
        self.stream.write(f"{self.name}: {stop.phase}, {stop.found:,} outcome(s) found, "
                          f"{time.monotonic() - self.t0:.0f} s\n")
        self.stream.flush()

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with self.lock:
            if self.live is None and self.timer is not None:
                prog = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                TimeElapsedColumn(), transient=True,
                                console=Console(file=self.stream, force_terminal=True))
                prog.start()
                task = prog.add_task(self._text())
                prog.tasks[-1].start_time = self.t0  # elapsed: since the check began
                # published whole, once ready: the checking thread may call in at any moment
                self.live = (prog, task)
                self.shown = True

    def _text(self) -> str:
        return f"{self.name}: {self.n:,} outcomes found" if self.n else f"{self.name}: checking"

    def __call__(self, n: int) -> None:
        self.n = n
        live = self.live
        if live is not None:
            live[0].update(live[1], description=self._text())

    def close(self, stopped: str | None = None) -> None:
        """Clear the progress; if it was shown, the final line (``stopped``: why the check
        ended early)."""
        with self.lock:
            timer, self.timer = self.timer, None
            if timer is not None:
                timer.cancel()
            if self.live is not None:
                self.live[0].stop()
                self.live = None
        if timer is not None:  # outside the lock (_start takes it): no thread outlives the check
            timer.join()
        if self.shown:
            self.shown = False
            self.stream.write(f"{self.name}: {self.n:,} outcome(s) found in "
                              f"{time.monotonic() - self.t0:.1f} s"
                              + (f"; stopped: {stopped}" if stopped else "") + "\n")
            self.stream.flush()


STOPPED = {"timeout": "--timeout passed", "stopped": "--max-outcomes reached",
           "interrupted": "interrupted (Ctrl-C)", "memory": "--max-memory reached",
           "capped": "too many outcomes to list"}


def _bytes(text: str | None) -> int | None:
    """--max-memory: a size in bytes, with a K, M or G suffix (powers of 1024); plain: MiB."""
    if text is None:
        return None
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], None)
    try:
        n = float(t[:-1] if scale else t) * (scale or 1 << 20)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 2G, 500M)") from None
    if n < 1 << 20:
        raise click.BadParameter(f"{text!r} is less than 1 MiB")
    from ..engines.watch import below_resident

    if why := below_resident(int(n)):
        raise click.BadParameter(f"{text!r}: {why}")
    return int(n)


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--model", "-m", default="ptx", show_default=True,
              help="model name (see `ptxmm models`) or path to a .cat file")
@click.option("--engine", type=ENGINES, default="auto", show_default=True,
              help="z3: one formula per program; brute: enumerate candidate executions (herd "
              "style); auto: brute when the candidate space is tiny, else z3")
@click.option("--unroll", type=click.IntRange(0, UNROLL_MAX), default=2, show_default=True,
              help="bound on backward-branch iterations")
@click.option("--observe", type=click.Choice(api_args.OBSERVE), default="all",
              show_default=True, help="enumerate every outcome (loaded registers and final memory), "
              "or only answer the condition: one query and its witness")
@click.option("--max-outcomes", type=click.IntRange(1), default=None,
              help="stop enumerating after this many outcomes")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="seconds per file (reading it included); past it the verdict is reported "
              f"unknown, never guessed, and at most {SHOWN_ON_TIMEOUT} of the outcomes found are "
              "listed")
@click.option("--allow-no-axioms", is_flag=True,
              help="accept a .cat file that states no axiom (it allows every execution)")
@click.option("--json", "as_json", is_flag=True, help="print JSON (schema: docs/json-schema.md)")
@liveness_options("also look for hangs: a thread stuck in a loop or blocked at a barrier forever")
@properties_option("the condition, races and sites; liveness too for a kernel or with --liveness")
@kernel_options
# -- limits (issue 38): a memory limit per check ------------------------------------------------
@click.option("--max-memory", "max_memory", default=None, metavar="SIZE",
              help="stop a check whose process passes SIZE of resident memory (e.g. 2G, 500M; a "
              "plain number: MiB): its verdict is unknown, the outcomes found so far are listed")
def check(files, model, engine, unroll, observe, max_outcomes, timeout, allow_no_axioms,
          as_json, liveness=False, progress_model="fair", kernel=None, max_memory=None,
          properties=None) -> None:
    """Enumerate every outcome FILES may have under the model and judge their conditions.

    Every file is reported: a file that cannot be checked is an error row (in the JSON, an object
    with an "error" member). Exit status: 0 when every file was checked and decided, 2 when some
    file had an error or an undecided check (--timeout passed, --max-outcomes reached, no
    execution within --unroll) or the batch was interrupted."""
    from . import conflicts

    conflicts.liveness(liveness or "liveness" in (properties or ()))
    live = with_properties(liveness, properties)
    out_w = Writer()
    max_memory = _bytes(max_memory)
    try:
        require_axioms_unless(model, allow_no_axioms)
    except PtxmmError as e:
        _fail(e)
    if as_json:  # each file's JSON is written once it is checked (report/jsonout.py)
        from ..report.jsonout import BatchWriter

        js = BatchWriter(sys.stdout, len(files))
    failed, i = 0, 0
    try:
        for i, f in enumerate(files):
            started = time.perf_counter()
            res = _check_one(f, started, model=model, engine=engine, unroll=unroll,
                             observe=observe, verdict_only=observe == "condition",
                             max_outcomes=max_outcomes, timeout=timeout,
                             allow_no_axioms=allow_no_axioms, liveness=live,
                             progress_model=progress_model, kernel=kernel, max_memory=max_memory,
                             properties=properties)
            failed += isinstance(res, dict) or res.status != "ok"  # stopped, timeout, no-execution
            if as_json:  # streamed; a timed-out check's outcomes capped, as in the text report
                js.add(res)
            elif not isinstance(res, dict):
                if i:
                    out_w.line()
                render(res, out_w)
            if not isinstance(res, dict) and res.status == "interrupted":  # its partial report, then
                i += 1  # the batch stops as Ctrl-C elsewhere stops it
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        rows: list = []
        failed += interrupted(rows, files, js.written if as_json else i, "checked")
        for row in rows if as_json else ():
            js.add(row)
    if as_json:
        js.close()
    sys.exit(2 if failed else 0)


def require_axioms_unless(model: str, allow: bool) -> None:
    from ..api_args import model_arg

    m = load_model(model_arg(model))  # a name the file system refuses is an error, not a traceback
    if not allow:
        require_axioms(m)


def _read(f: str, kernel, limit: float | None):
    """The file's Program, read under the watchdog when there is a time limit (reading is part of
    the check's time: a huge or pathological file cannot run past it); None when the limit
    passed while reading. Ctrl-C while reading is Ctrl-C."""
    if limit is None:
        return load(f, kernel=kernel)
    from ..engines.base import Deadline, Stop, TimedOut
    from ..engines.watch import Watch

    d = Deadline.after(limit, Stop())
    try:
        with Watch(d):
            prog = load(f, kernel=kernel)
    except (TimedOut, KeyboardInterrupt):  # the watchdog's poke, or Ctrl-C
        if d.stop.reason == "timeout":
            return None
        raise KeyboardInterrupt from None
    return None if d.stop.reason == "timeout" else prog


def _check_one(f: str, started: float, kernel=None, **kw):
    """A CheckResult, or the error object (printed to stderr) of a file that cannot be checked.
    --timeout counts from ``started``, the file's start: reading it is part of its time."""
    ticker = _Ticker(str(f))
    stopped = "interrupted (Ctrl-C)"
    try:
        prog = _read(f, kernel, kw["timeout"])
        if prog is None:
            click.echo(f"{f}: --timeout passed while reading the file", err=True)
            return error_json(f, "timeout", "--timeout passed while reading the file", None,
                              "raise --timeout, or check a smaller file")
        for w in prog.warnings:
            click.echo(str(w), err=True)
        limit = kw["timeout"]
        if limit is not None:
            kw["timeout"] = max(limit - (time.perf_counter() - started), 0.001)
        res = api_check(prog, progress=ticker, **kw)
        for w in res.program.warnings[len(prog.warnings):]:  # found while checking (unspecified values)
            click.echo(str(w), err=True)
        res.timeout = limit  # the file's limit, as the user gave it, in the report
        stopped = STOPPED.get(res.status)
        return res
    except PtxmmError as e:
        click.echo(str(e), err=True)
        return error_json(f, e.kind, e.message, e.pos, e.hint)
    except RecursionError:
        msg = "the program is nested too deeply for the checker"
        click.echo(f"{f}: error: {msg}", err=True)
        return error_json(f, "limit", msg, None, "simplify the program")
    finally:
        ticker.close(stopped)


@main.command("test")
@click.argument("paths", nargs=-1, required=True)
@click.option("--expected", "expected_csv", default=None,
              help="CSV of expectations (path,ptx-v6.0,ptx-v7.5; 1 = condition holds)")
@click.option("--column", default=None, help="CSV column (default: the model's, else the last)")
@click.option("--model", "-m", default="ptx", show_default=True)
@click.option("--unroll", type=click.IntRange(0, UNROLL_MAX), default=2, show_default=True)
@click.option("--jobs", "-j", type=click.IntRange(1), default=None,
              help="worker processes (default: cores; at most one per test)")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="seconds per test; past it the test's status is 'timeout'")
@click.option("--json", "json_out", default=None, help="write per-test results to this file")
@liveness_options("judge 'no execution hangs' instead of the condition (CSV: 1 = no hang, 0 = a hang; "
                  ".expect-liveness terminates|hangs)")
@click.option("--jsonl", default=None, help="stream: inputs read lazily, one JSON line per test as it "
              "finishes (docs/campaigns.md; with --resume, --dask ADDRESS, --show-progress)")
@click.option("--resume", is_flag=True, help="with --jsonl: skip the tests already in its file")
@click.option("--dask", default=None, metavar="ADDRESS", help="with --jsonl: run on a Dask cluster")
@click.option("--show-progress", "show_progress", is_flag=True,
              help="with --jsonl: show progress also off a terminal")
def test_cmd(paths, expected_csv, column, model, unroll, jobs, timeout, json_out, jsonl, resume, dask,
             show_progress, liveness=False, progress_model="fair") -> None:
    """Run many tests and compare verdicts with expectations (each file's .expect, or --expected).

    Every test is reported, also when some fail or the run is interrupted (Ctrl-C: the summary
    and --json cover the tests that finished). Exit status: 1 on any disagreement; else 2 when
    some test had an error, is not supported yet, timed out or has no execution within --unroll;
    0 when every test ran and agreed (or is unrated)."""
    from . import conflicts

    conflicts.liveness(liveness)
    conflicts.json_with_jsonl(jsonl, json_out)
    output_file("--json", json_out)
    if jsonl or resume or dask:
        if liveness:
            raise click.UsageError("--liveness is not streamed yet: run it without --jsonl/--resume/--dask")
        from .campaigns import stream_test

        return stream_test(paths, model, unroll, jobs, timeout, jsonl, resume, dask, show_progress,
                           expected_csv, column)
    from rich.progress import Progress

    from ..testing.runner import collect, run_tests

    console = consoles()[0]
    t0 = time.perf_counter()
    results: list = []
    stopped, n = False, 0
    try:
        require_axioms_unless(model, False)
        n = len(collect(list(paths)))
        with Progress(console=console, transient=True) as prog:
            task = prog.add_task("testing", total=n)
            run_tests(list(paths), model, expected_csv, column, unroll, jobs,
                      progress=lambda: prog.advance(task), timeout=timeout, results=results,
                      liveness=progress_model if liveness else None)
    except PtxmmError as e:
        _fail(e)
    except KeyboardInterrupt:
        stopped = True
        console.print(f"[yellow]interrupted: {len(results)} of {n} test(s) finished[/yellow]")
    _test_summary(console, results, f"{model}; liveness, progress {progress_model}" if liveness else model,
                  time.perf_counter() - t0, json_out)
    failed = any(r.status not in ("agree", "unrated", "DISAGREE") for r in results) or stopped
    sys.exit(1 if any(r.status == "DISAGREE" for r in results) else 2 if failed else 0)


def _test_summary(console: Console, results: list, model: str, wall: float, json_out) -> None:
    from rich.table import Table

    bad = [r for r in results if r.status not in ("agree", "unrated")]
    if bad:
        # words, not Python's None/True/False; the reason folded onto more lines, never cut
        table = Table("test", "status", "expected", "got", "detail", box=None)
        table.columns[0].overflow = table.columns[4].overflow = "fold"
        for r in bad:
            table.add_row(r.name, r.status, *r.words(), r.error or r.detail or r.path)
        console.print(table)
    rated = [r for r in results if r.status in ("agree", "DISAGREE")]
    agree = sum(r.status == "agree" for r in results)
    times = sorted(r.time_s for r in results if r.status != "unsupported") or [0.0]
    unknown = sum(r.status in ("timeout", "no-execution", "undecided") for r in results)
    console.print(f"{agree}/{len(rated)} agree   ({len(results)} tests, "
                  f"{sum(r.status == 'error' for r in results)} errors, "
                  f"{sum(r.status == 'unsupported' for r in results)} not supported yet, "
                  + (f"{unknown} unknown (timeout, no execution, liveness not decided), " if unknown else "")
                  + f"{sum(r.status == 'unrated' for r in results)} unrated; model {model})")
    console.print(f"wall {wall:.2f} s, median {times[len(times) // 2] * 1000:.1f} ms/test, "
                  f"max {times[-1] * 1000:.1f} ms/test (tests that ran)")
    if json_out:
        import json

        Path(json_out).write_text(json.dumps([r.__dict__ | {"status": r.status} for r in results],
                                             indent=2))


@main.command()
def models() -> None:
    """List the built-in models (not the libraries of definitions they include)."""
    for name, path in builtin_models().items():
        first = path.read_text().splitlines()[0] if path.stat().st_size else ""
        click.echo(f"{name:14s} {first}")
