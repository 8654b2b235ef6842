"""``ptxmm crossval --jsonl``: a device campaign streamed as ``ptxmm test --jsonl`` is.

The inputs (directories, list files, test files) are read lazily by :mod:`.stream`; they are planned
(parsed, checked, compiled: :func:`ptxmm.device.batch.plan`) and run (:func:`run_batch`) a chunk at a
time, so 10^5 tests are never held whole. Each test's row is one JSON line (``key``: the file as
given, then the batch JSON's per-test object), written and flushed as the test finishes. ``--resume``
skips the keys the file already has. A test that did not run because the batch was cut short (Ctrl-C,
a hung kernel) gets no line, so a resumed run runs it: no test is lost or done twice. A test the
device could not run for a reason of its own (parse, compile, device error, its own timeout) is a
line like any other: it was done."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .executors import batches
from .stream import JsonLines, Progress, done_keys, file_items, header

# why a test got no line: it never ran (the batch was cut short before it)
NOT_RUN = ("interrupted", "not run: the device hung")


@dataclass
class StreamResult:
    written: int = 0  # lines written by this run
    ran: int = 0
    violations: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # not run: reason -> count
    interrupted: bool = False
    hung: bool = False

    def exit_code(self) -> int:
        if self.violations:
            return 1
        return 2 if self.reasons or self.interrupted or self.hung else 0

    def summary_line(self, what: str) -> str:
        line = f"{self.written} test(s) written, {self.ran} {what}"
        if self.reasons:
            line += ", not run: " + ", ".join(f"{n} {r}" for r, n in sorted(self.reasons.items()))
        line += f", {self.violations} violation(s)"
        if self.interrupted:
            line += "; interrupted: --resume runs the rest"
        if self.hung:
            line += "; a kernel hung: --resume runs the rest"
        return line


def _row(key: str, item: Any, camp) -> dict:
    from ..device.batch import Skip

    if isinstance(item, Skip):
        return {"key": key} | item.to_json()
    return {"key": key, "status": "ran", "violations": camp.violations(item)} | camp.to_json(item)


def stream_campaign(camp, paths: Iterable[str], out: Path | None, resume: bool = False,
                    progress: bool = False, chunk: int = 8,
                    plan_fn: Callable[..., list] | None = None,
                    on_row: Callable[[dict], None] | None = None, stream=None) -> StreamResult:
    """Run the device campaign ``camp`` (device.commands.Campaign) over ``paths``, streamed: one
    JSON line per test to ``out`` as it finishes; ``resume``: skip the tests ``out`` has.
    ``plan_fn``: device.batch.plan (tests give a fake one)."""
    from ..device.batch import plan, run_batch

    plan_fn = plan_fn or plan
    paths = list(paths)
    head = header(camp.command, model=camp.model, unroll=camp.unroll)
    done = done_keys(out, head) if (resume and out is not None) else set()
    total = already = 0
    for it in file_items(paths):  # a first pass counts (nothing is kept)
        total += 1
        already += it.key in done
    prog = Progress(total, stream=stream, force=progress)
    prog.resume_from(already)
    todo = (it for it in file_items(paths) if it.key not in done)
    res = StreamResult()
    writer = JsonLines(out, resume, head, {"model": camp.model})
    try:
        for part in batches(todo, chunk):
            if not _run_chunk(camp, part, plan_fn, run_batch, writer, res, on_row, prog):
                break
    except KeyboardInterrupt:  # while planning: the chunk's tests have no line
        res.interrupted = True
    finally:
        writer.close()
        prog.close()
    return res


def _run_chunk(camp, part, plan_fn, run_batch, writer, res: StreamResult, on_row, prog) -> bool:
    """Plan and run one chunk, a line per test that ran or could not — a test's line written as
    soon as it finished (those of files that could not be planned just before the next test runs,
    in order; a test the device failed on when the chunk ends). False: stop (cut short)."""
    from ..device.batch import Skip

    planned = plan_fn([it.path for it in part], camp.model, camp.unroll)
    index = {id(x): i for i, x in enumerate(planned)}
    written: set[int] = set()

    def emit(i: int, x) -> None:
        written.add(i)
        row = _row(part[i].key, x, camp)
        writer.write(row)
        res.written += 1
        if isinstance(x, Skip):
            res.reasons[x.reason] = res.reasons.get(x.reason, 0) + 1
        else:
            res.ran += 1
            res.violations += row["violations"]
        if on_row:
            on_row(row)
        prog.step()

    def run_and_write(job):
        i = index[id(job)]
        for k in range(i):  # the files before it that could not be planned
            if k not in written and isinstance(planned[k], Skip):
                emit(k, planned[k])
        r = camp.run_one(job)
        emit(i, r)
        return r

    batch = run_batch(planned, run_and_write, on_result=camp.render, measure=camp.measure)
    for i, x in enumerate(batch.items):
        if i not in written and getattr(x, "reason", None) not in NOT_RUN:
            emit(i, x)
    res.interrupted |= batch.interrupted
    res.hung |= batch.hung
    return not (batch.interrupted or batch.hung)
