"""Checks on several threads at once (a Dask worker runs one task per core, each on a thread of its
own): every thread builds and solves in a Z3 context of its own (engines/z3/capi.thread_context,
the per-thread solver pool of problem.py), so concurrent checks give the serial answers."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import z3

import ptxmm

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "examples" / "classic").glob("*.ptx"))[:24] + [
    ROOT / "examples" / "mp-relaxed-acquire.ptx", ROOT / "examples" / "spinlock-cas.ptx"]


def _answer(path: Path) -> tuple:
    r = ptxmm.check(ptxmm.load(str(path)))
    return (r.holds, r.status, sorted(str(o.outcome) for o in r.outcomes),
            sorted((f.kind.value if hasattr(f.kind, "value") else str(f.kind), f.name) for f in r.findings))


def test_concurrent_checks_on_threads_equal_the_serial_answers():
    serial = {p: _answer(p) for p in FILES}
    work = [p for p in FILES for _ in range(4)]
    with ThreadPoolExecutor(max_workers=8) as ex:
        got = list(ex.map(_answer, work))
    for p, a in zip(work, got):
        assert a == serial[p], p.name


def test_each_thread_has_its_own_default_context():
    seen = []
    both = threading.Barrier(2)  # alive together: two threads, never one id reused

    def make():
        seen.append(z3.Bool("x").ctx)
        both.wait()

    threads = [threading.Thread(target=make) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    main = z3.Bool("x").ctx
    ctxs = seen
    assert len(ctxs) == 2 and ctxs[0] is not ctxs[1]
    assert all(c is not main for c in ctxs)
