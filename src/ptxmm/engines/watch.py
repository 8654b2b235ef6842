"""The watchdog of one check: limits that hold whatever the check is doing.

A check's phases look at their :class:`~.base.Deadline` (between encoding phases, before every
solver call, in every enumeration loop); the watchdog, a thread of its own, makes that hold where
the main thread cannot look: it sets the check's :class:`~.base.Stop` when the wall-clock limit
passes, when the process's resident memory passes ``max_memory`` bytes, or when Ctrl-C (SIGINT)
arrives, and the stop's hooks interrupt a solver call under way (Z3 answers "unknown" within
milliseconds). Python code that does not look at the deadline (a long phase without a check) is
poked: a check still running ``GRACE`` seconds after its stop gets the stop's exception raised in
its main thread, as Ctrl-C raises KeyboardInterrupt. Ctrl-C itself is seen even while the main
thread waits in the solver's C code: Python's signal wake-up file descriptor tells the watchdog.
Signals are only touched when the check runs in the main thread (the CLI); elsewhere (a web
request, a Dask task) the clock and the memory limit still hold."""

from __future__ import annotations

import _thread
import os
import signal
import threading
import time
from types import TracebackType

from .base import STOPPED_BY, Deadline

POLL = 0.05  # seconds between the watchdog's looks
GRACE = 0.3  # seconds a stopped check may take to stop by itself before it is poked
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int | None:
    """This process's resident memory (Linux /proc), or None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def below_resident(max_memory: int) -> str | None:
    """Why a memory limit of ``max_memory`` bytes cannot be met (the process is that large
    already: the check would stop before it starts), or None. The CLI refuses it as a usage error,
    ``check()`` as an ArgumentError."""
    rss = rss_bytes()
    if rss is None or max_memory > rss:
        return None
    return (f"{_mib(max_memory)} is below this process's own resident memory now ({_mib(rss)}): "
            "a check could not start under it")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def _in_finalizer(frame) -> bool:
    """Whether ``frame`` runs where a raised exception would do harm instead of stopping the check:
    inside a finalizer (``__del__``, a ``weakref.finalize`` callback: Python swallows it) or inside
    an import (the module would stay half-initialised in ``sys.modules`` for the next check)."""
    while frame is not None:
        code = frame.f_code
        finalize = code.co_name == "__call__" and code.co_filename.endswith("weakref.py")
        if code.co_name == "__del__" or finalize or code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


class Watch:
    """``with Watch(deadline, max_memory):`` — the watchdog of one check (see the module)."""

    def __init__(self, deadline: Deadline, max_memory: int | None = None, every=None):
        assert deadline.stop is not None
        self.deadline, self.stop = deadline, deadline.stop
        self.max_memory = max_memory
        self.every = every  # (seconds, callback(stop)): called every so often (progress lines)
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.armed = False
        self.poked = False
        self.sigints = 0
        self.stopped_at: float | None = None
        self.main = threading.current_thread() is threading.main_thread()
        self._old_handler = None
        self._old_fd = -1
        self._pipe: tuple[int, int] | None = None
        self.thread = threading.Thread(target=self._run, name="ptxmm-watch", daemon=True)

    def __enter__(self) -> Watch:
        if self.main:
            self._install()
        self.armed = True
        self.thread.start()
        return self

    def __exit__(self, et: type | None, e: BaseException | None, tb: TracebackType | None) -> None:
        with self.lock:
            self.armed = False
        self.done.set()
        self.thread.join()
        if self.main:
            self._uninstall()

    # -- signals (main thread only) ---------------------------------------------------------------
    def _install(self) -> None:
        try:
            r, w = os.pipe()
            os.set_blocking(w, False)
            os.set_blocking(r, False)
            self._old_fd = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
            self._pipe = (r, w)
            self._old_handler = signal.signal(signal.SIGINT, self._on_sigint)
        except (ValueError, OSError):  # not the main thread of the main interpreter after all
            self.main = False

    def _uninstall(self) -> None:
        signal.signal(signal.SIGINT, self._old_handler)
        signal.set_wakeup_fd(self._old_fd)
        if self._pipe is not None:
            for fd in self._pipe:
                os.close(fd)
            self._pipe = None

    def _on_sigint(self, sig, frame) -> None:
        """Ctrl-C: the check stops (its phases raise :class:`~.base.Interrupted` at their next
        look); a second Ctrl-C, or the watchdog's poke, raises the stop's exception here."""
        self.sigints += 1
        poked, self.poked = self.poked, False
        if self.stop.reason is None:
            self.stop.set("interrupted")
        if (poked or self.sigints > 1) and self.armed:
            if _in_finalizer(frame):
                # in a finalizer (a Z3 object's __del__) or an import: leave it for the next
                # poke, GRACE seconds later.
                self.poked = False
                return
            raise STOPPED_BY[self.stop.reason or "interrupted"]

    def _signalled(self) -> bool:
        if self._pipe is None:
            return False
        try:
            data = os.read(self._pipe[0], 512)
        except (BlockingIOError, OSError):
            return False
        return signal.SIGINT in data

    # -- the watchdog thread ----------------------------------------------------------------------
    def _run(self) -> None:
        last = time.perf_counter()
        while not self.done.wait(POLL):
            now = time.perf_counter()
            if self._signalled():
                self.stop.set("interrupted")
            if self.deadline.at is not None and now > self.deadline.at:
                self.stop.set("timeout")
            if self.max_memory is not None:
                rss = rss_bytes()
                if rss is not None and rss > self.max_memory:
                    self.stop.set("memory")
            if self.stop.reason is not None:
                self._poke(now)
            if self.every is not None and now - last >= self.every[0]:
                last = now
                self.every[1](self.stop)

    def _poke(self, now: float) -> None:
        """A check still running GRACE seconds after its stop: raise in its main thread."""
        if self.stopped_at is None:
            self.stopped_at = now
            return
        if now - self.stopped_at < GRACE or not self.main or self.stop.settled:
            return
        with self.lock:
            if self.armed and not self.poked:
                self.poked = True
                self.stopped_at = now  # poked again after another GRACE if still running
                _thread.interrupt_main()
