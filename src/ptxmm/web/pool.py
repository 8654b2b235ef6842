"""Worker processes for the playground: each job runs in a process of its own, and a job still
running at the time limit is ended with its process (a new one takes its place), so no request
holds a worker past the limit and a runaway check cannot take the server down with it.

The checker's own ``timeout`` (a little shorter) answers most long checks first (verdict unknown,
outcomes found so far); the process is ended only when the checker does not stop in time (a front end or an
explanation that does not watch the clock). A worker may also get a cap on its memory.

A worker leads a process group of its own: ending it ends what it started too, and the kernel
jobs' directories it leaves (``ptxmm-web-PID-*``) are removed — with the process group of an nvcc
still compiling in one (its sandbox runs it in a session of its own, named in the directory's
``.pgid``: :mod:`ptxmm.web.sandbox`).

A job names the text it is about (:func:`ptxmm.web.jobs.reuse_key`): the pool hands it, when idle,
the worker that last ran a job of that text, whose memory may hold that job's program and check
(:mod:`ptxmm.web.reuse`: the page's drawing and explanation after its check run no check again);
any idle worker otherwise — a preference, never a wait."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .jobs import Answer, Job
from .sandbox import kill_group

log = logging.getLogger("ptxmm.web")


def _serve(conn, memory_mb: int | None) -> None:
    """A worker's life: jobs in, answers out, until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    os.setpgrp()  # its children (nvcc) end with it: see _Worker.end
    if memory_mb:
        import resource

        cap = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from ..explanation import explain  # noqa: F401  loaded once, before the first job
    from ..queries import checker  # noqa: F401
    from . import jobs

    conn.send("ready")  # a job's time is its own, not the start-up's
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = jobs.run(job)
        except MemoryError:
            answer = _failed(job, "the check needed more memory than a worker may use "
                             f"({memory_mb} MiB)", "limit")
        except Exception as e:  # a bug in ptxmm: said, never a dead worker
            answer = _failed(job, f"internal error: {type(e).__name__}: {e}", "internal error")
        conn.send(answer)


def _failed(job: Job, message: str, kind: str) -> Answer:
    import json

    from .jobs import JSON, error_object

    return (422 if kind == "limit" else 500), json.dumps(error_object(job.file, kind, message)), JSON


class WorkerDied(Exception):
    pass


class Cancelled(Exception):
    """The job was cancelled by its client (:meth:`Pool.cancel`): its worker was ended."""


def _expected(call: asyncio.Future) -> None:
    """The end of a call whose worker was ended (the time limit, a client gone): its WorkerDied
    is what ending the worker means; retrieved here, it is not logged as "never retrieved"."""
    if not call.cancelled():
        call.exception()


class _Worker:
    def __init__(self, ctx, memory_mb: int | None):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, memory_mb), daemon=True)
        self.proc.start()
        child.close()
        self.cancelled = False
        try:
            ready = self.conn.recv()  # in a thread of the pool: the server goes on meanwhile
        except (EOFError, OSError):
            ready = None
        if ready != "ready":
            self.end()
            raise WorkerDied(f"a worker process did not start (exit code {self.proc.exitcode})")

    def call(self, job: Job) -> Answer:
        """Run ``job`` (blocking: called in a thread)."""
        try:
            self.conn.send(job)
            return self.conn.recv()
        except (EOFError, OSError, BrokenPipeError) as e:
            raise WorkerDied(str(e)) from None

    def kill(self) -> None:
        """End the process and what it started now (its pending call then fails: WorkerDied);
        :meth:`end` cleans up after."""
        self.cancelled = True
        pid = self.proc.pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def end(self) -> None:
        pid = self.proc.pid
        if self.proc.is_alive():
            self.proc.kill()
        if pid is not None:  # the group it leads: what it started and left running
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        self.proc.join(5)
        self.conn.close()
        if pid is not None:
            for d in Path(tempfile.gettempdir()).glob(f"ptxmm-web-{pid}-*"):
                with contextlib.suppress(OSError, ValueError):
                    kill_group(int((d / ".pgid").read_text()))
                shutil.rmtree(d, ignore_errors=True)


@dataclass
class Stats:
    served: int = 0
    stopped: int = 0  # jobs ended at the time limit
    died: int = 0  # workers lost otherwise (a crash)
    cancelled: int = 0  # jobs their clients cancelled


class Idle:
    """The idle workers: :meth:`get` waits for one (first come, first served), taking ``prefer``
    when it is among them."""

    def __init__(self):
        self.free: list[_Worker] = []
        self.waiters: deque[asyncio.Future] = deque()

    def put_nowait(self, w: _Worker) -> None:
        while self.waiters:
            f = self.waiters.popleft()
            if not f.done():
                f.set_result(w)
                return
        self.free.append(w)

    def qsize(self) -> int:
        return len(self.free)

    async def get(self, prefer: _Worker | None = None) -> _Worker:
        if self.free:
            i = next((i for i, w in enumerate(self.free) if w is prefer), 0)
            return self.free.pop(i)
        f = asyncio.get_running_loop().create_future()
        self.waiters.append(f)
        try:
            return await f
        except asyncio.CancelledError:
            if f.done() and not f.cancelled():  # handed a worker as it was cancelled: pass it on
                self.put_nowait(f.result())
            raise


LAST_KEYS = 256  # texts whose last worker the pool remembers


class Pool:
    """``size`` worker processes behind an asyncio front: :meth:`run` waits for a free worker,
    runs the job there, and ends the worker at ``limit`` seconds (the checker's own timeout,
    :func:`ptxmm.web.jobs.budget`, is shorter: a check stops and answers first)."""

    def __init__(self, size: int, memory_mb: int | None = None):
        self.size, self.memory_mb = size, memory_mb
        self.ctx = multiprocessing.get_context("spawn")  # the server's threads stay its own
        self.threads = ThreadPoolExecutor(2 * size + 2, thread_name_prefix="ptxmm-pool")
        self.idle: Idle | None = None
        self.last: OrderedDict[str, _Worker] = OrderedDict()  # a text's key -> the worker that last ran it
        self.all: set[_Worker] = set()
        self.lock = threading.Lock()
        self.stats = Stats()
        self.waiting = 0  # requests waiting for a free worker
        self.closed = False
        self.tasks: set[asyncio.Future] = set()  # workers' replacements under way
        self.running: dict[str, _Worker] = {}  # the jobs a client named (``token``), by name

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.idle = Idle()
        started = await asyncio.gather(*(loop.run_in_executor(self.threads, self._new)
                                         for _ in range(self.size)))
        for w in started:
            self.idle.put_nowait(w)

    def _new(self) -> _Worker:
        w = _Worker(self.ctx, self.memory_mb)
        with self.lock:
            self.all.add(w)
        return w

    def _drop(self, w: _Worker) -> None:
        with self.lock:
            self.all.discard(w)
        w.end()

    async def _replace(self, w: _Worker) -> None:
        if self.closed:
            return self._drop(w)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.threads, self._drop, w)
        for attempt in range(3):
            if self.closed:
                return
            try:
                new = await loop.run_in_executor(self.threads, self._new)
            except WorkerDied:  # e.g. out of memory for a moment: try again shortly
                await asyncio.sleep(1 + attempt)
                continue
            assert self.idle is not None
            self.idle.put_nowait(new)
            return

    async def run(self, job: Job, limit: float, token: str | None = None,
                  key: str | None = None) -> Answer | None:
        """The job's answer; None when it was stopped at the limit. Raises :class:`WorkerDied` when
        its worker crashed, :class:`Cancelled` when :meth:`cancel` ended it (a new one takes its
        place). ``token``: the client's name for the job, for :meth:`cancel`; ``key``: the text
        it is about: the worker that last ran a job of that text is taken when idle."""
        assert self.idle is not None, "start() the pool first"
        loop = asyncio.get_running_loop()
        self.waiting += 1
        try:
            w = await self.idle.get(self.last.get(key) if key is not None else None)
        finally:
            self.waiting -= 1
        if key is not None:
            self.last[key] = w
            self.last.move_to_end(key)
            while len(self.last) > LAST_KEYS:
                self.last.popitem(last=False)
        if token is not None and token in self.running:  # a name in use: no job of another's
            self.idle.put_nowait(w)
            raise Cancelled(f"a job named {token!r} is already running")
        if token is not None:
            self.running[token] = w
        call = loop.run_in_executor(self.threads, w.call, job)
        try:
            answer = await asyncio.wait_for(asyncio.shield(call), limit)
        except TimeoutError:
            self.stats.stopped += 1
            call.add_done_callback(_expected)  # its pending call ends with the process: WorkerDied
            self._later(self._replace(w))
            return None
        except WorkerDied:
            self._later(self._replace(w))
            if w.cancelled:
                self.stats.cancelled += 1
                raise Cancelled("cancelled by its client: the worker was stopped") from None
            self.stats.died += 1
            raise
        except asyncio.CancelledError:  # the client went away: the worker may still be busy
            call.add_done_callback(_expected)
            self._later(self._replace(w))
            raise
        finally:
            if token is not None and self.running.get(token) is w:
                del self.running[token]
        self.stats.served += 1
        if w.cancelled:  # cancelled as its answer came: ended all the same, never handed on
            self._later(self._replace(w))
        else:
            self.idle.put_nowait(w)
        return answer

    def cancel(self, token: str) -> bool:
        """End the job the client named ``token`` (its worker, and an nvcc it runs); False when
        no such job is running (done already, or never started)."""
        w = self.running.get(token)
        if w is None:
            return False
        w.kill()
        return True

    def _later(self, coro) -> None:
        """Run ``coro`` (a worker's replacement) on its own; kept until done (a task nobody holds
        may be collected), its failure retrieved and logged, never "Task exception was never
        retrieved"."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("replacing a worker failed: %r", task.exception())

    def close(self) -> None:
        self.closed = True
        with self.lock:
            workers = list(self.all)
            self.all.clear()
        for w in workers:
            w.end()
        self.threads.shutdown(wait=False, cancel_futures=True)


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))
