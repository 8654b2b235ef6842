"""Where a campaign's work runs: this process (``jobs=1``), local worker processes (the default), or
a Dask distributed cluster (``dask_address``; needs the ``[dask]`` extra). Every executor takes the
items as a stream, keeps a bounded number of batches in flight and yields each batch's rows as it
finishes, so 10^5 tests are never held whole; the rows do not depend on the executor."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from ..errors import PtxmmError


def batches(items: Iterable, size: int) -> Iterator[list]:
    it = iter(items)
    while True:
        b = list(islice(it, size))
        if not b:
            return
        yield b


def by_shape(items: Iterable, batch: int, jobs: int) -> Iterator[list]:
    """The items in batches for ``jobs`` workers, a window of WINDOW_BATCHES * jobs batches at a
    time (never the whole stream): items of one shape hint (ptxmm.testing.runner.shape_hint of
    the item's key) in one batch where the window allows (the worker's shape memo then answers
    the rest of the shape), small hints bundled to ``batch`` items, the largest batches first."""
    from ..testing.runner import tasks

    window = WINDOW_BATCHES * jobs * batch
    for w in batches(items, window):
        for t in tasks([getattr(it, "key", "") for it in w], jobs, batch):
            yield [w[i] for i in t]


WINDOW_BATCHES = 32


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_local(fn: Callable[[list], list], items: Iterable, jobs: int | None = None,
              batch: int = 8) -> Iterator[list]:
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        for b in batches(items, batch):
            yield fn(b)
        return
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    ex = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint)
    try:
        pending: set = set()
        feed = by_shape(items, batch, jobs)
        for b in islice(feed, 2 * jobs):
            pending.add(ex.submit(fn, b))
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                yield f.result()
                nxt = next(feed, None)
                if nxt is not None:
                    pending.add(ex.submit(fn, nxt))
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


def run_dask(fn: Callable[[list], list], items: Iterable, address: str, batch: int = 8,
             inflight: int | None = None) -> Iterator[list]:
    try:
        from distributed import Client, as_completed
    except ImportError as e:
        raise PtxmmError("--dask needs dask.distributed", None,
                         "pip install 'ptxmm[dask]'") from e
    client = connect(Client, address)
    try:
        n = inflight or 4 * max(sum(client.nthreads().values()), 1)
        feed = batches(items, batch)
        first = [client.submit(fn, b, pure=False) for b in islice(feed, n)]
        ac = as_completed(first, loop=client.loop)
        for f in ac:
            yield f.result()
            f.release()
            nxt = next(feed, None)
            if nxt is not None:
                ac.add(client.submit(fn, nxt, pure=False))
    finally:
        client.close()


# Seconds to wait for a scheduler to answer (Dask's own default is 30 s, then a raw OSError).
CONNECT_TIMEOUT = float(os.environ.get("PTXMM_DASK_CONNECT_TIMEOUT", "5"))


def connect(client_cls, address: str):
    """A Dask client of the scheduler at ``address``; one that does not answer within
    CONNECT_TIMEOUT seconds is a usage error naming the address (never a traceback)."""
    from ..errors import ArgumentError

    try:
        return client_cls(address, set_as_default=False, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ArgumentError(f"--dask {address}: no Dask scheduler answers there within "
                            f"{CONNECT_TIMEOUT:g} s ({why[:200]})", None,
                            "start one (`dask scheduler`, docs/campaigns.md) and give its address, "
                            "e.g. tcp://host:8786; PTXMM_DASK_CONNECT_TIMEOUT sets the wait") from None


def run(fn: Callable[[list], list], items: Iterable, jobs: int | None = None,
        dask_address: str | None = None, batch: int = 8) -> Iterator[list]:
    if dask_address:
        return run_dask(fn, items, dask_address, batch)
    return run_local(fn, items, jobs, batch)
