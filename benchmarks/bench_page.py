"""What the playground does for each bundled example it offers, timed (issue 42: every example
answers within the server's 10 s default limit): the page's Check is ``/api/check`` (liveness on for
a liveness example or a file with an ``.expect-liveness`` line, as app.js decides; a kernel's check
asks liveness anyway, as ``check()`` does for kernels) followed by ``/api/graph`` (the DOT of the
condition's outcome, or of the first outcome when there is no condition). Each job runs in this
process through :func:`ptxmm.web.jobs.run` as a worker runs it, with a compile cache shared by the
jobs and warmed first (so a ``.cu`` costs no nvcc in the timed runs); the time limit given to the
jobs is ``--limit`` (default 60 s, so that what a job costs shows, not where the server would stop).

    python benchmarks/bench_page.py [--match TEXT]... [--exclude TEXT]... [--limit S] [--shard K/N]
                                    [--no-reuse]

The drawing runs in the process that ran the check, as the server's pool hands it to the worker
that checked the text (web/reuse.py: the check's program and result kept for it); ``--no-reuse``:
each job does its own work, as in a worker that did not run the check.

Prints per example: check and graph seconds (wall and CPU), the check's status and its verdict
(``holds``), and whether the drawing came back. A row over 6 s of CPU is marked ``SLOW``."""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from dataclasses import replace

from ptxmm.web import jobs
from ptxmm.web.examples import Library

_LIVE = re.compile(r"^\s*(\.expect-liveness|//\s*ptxmm:\s*expect-liveness)\b", re.M)


def _args(flag: str) -> list[str]:
    return [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == flag]


def _warm(job: jobs.Job) -> None:
    """nvcc's output of a ``.cu`` put in the shared cache (a check stopped at once would time
    the compile too): the compile as :func:`ptxmm.web.jobs._kernel` runs it."""
    import contextlib
    import os

    from ptxmm.kernel.nvcc import compile_cu
    from ptxmm.web import sandbox as nvcc_sandbox
    from ptxmm.web.compile_cache import CompileCache
    from ptxmm.web.kernel_source import sandbox

    with sandbox() as tmp, contextlib.ExitStack() as stack:
        old = os.environ.get("PTXMM_CACHE")
        os.environ["PTXMM_CACHE"] = str(tmp / "cache")
        stack.callback(jobs._restore, "PTXMM_CACHE", old)
        stack.enter_context(nvcc_sandbox.compiling(tmp, nvcc_sandbox.Limits(wall=120, cpu=120), job.file,
                                                   CompileCache(job.cache), job.source))
        (tmp / job.file).write_text(job.source)
        with contextlib.suppress(Exception):
            compile_cu(job.file)


def _timed(job: jobs.Job) -> tuple[float, float, jobs.Answer]:
    t0, c0 = time.perf_counter(), time.process_time()
    ans = jobs.run(job)
    return time.perf_counter() - t0, time.process_time() - c0, ans


def _outcome_text(o: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in o["values"].items())  # app.js outcomeText


def main() -> int:
    limit = float(_args("--limit")[0]) if "--limit" in sys.argv else 60.0
    jobs.REUSE = "--no-reuse" not in sys.argv
    lib = Library()
    rows = lib.listing()
    ex, inc = _args("--exclude"), _args("--match")
    rows = [r for r in rows if not any(x in r["path"] for x in ex)
            and (not inc or any(m in r["path"] for m in inc))]
    if "--shard" in sys.argv:
        k, n = map(int, _args("--shard")[0].split("/"))
        rows = rows[k::n]
    cache = tempfile.mkdtemp(prefix="bench-page-nvcc-")
    print(f"{len(rows)} examples; seconds per request in-process (limit {limit:g} s), warm compile cache")
    print(f"{'example':58s} {'check':>6s} {'cpu':>6s} {'graph':>6s} {'cpu':>6s} {'total':>6s}  status")
    for r in rows:
        path, source = r["path"], lib.source(r["path"]) or ""
        live = True if (_LIVE.search(source) or path.startswith("liveness/")) else None
        base = jobs.Job(kind="check", source=source, file=path.rsplit("/", 1)[-1], fmt=r["format"],
                        timeout=limit, text=True, liveness=live, cache=cache)
        if r["format"] == "cu":
            _warm(base)
        tc, cc, (st, body, _) = _timed(base)
        obj = json.loads(body) if st == 200 else {}
        word = obj.get("status", f"HTTP {st}") if st == 200 else f"HTTP {st}: " + body[:80].replace("\n", " ")
        if st == 200:
            word += f" holds={obj.get('holds')}" + (f" live={obj['liveness'].get('verdict')}"
                                                    if isinstance(obj.get("liveness"), dict) else "")
        outcome = None
        if st == 200 and not obj.get("condition") and obj.get("outcomes"):
            outcome = _outcome_text(obj["outcomes"][0])
        tg = cg = 0.0
        if st == 200 and (obj.get("condition") or outcome):
            g = replace(base, kind="graph", text=False, liveness=None, dot=True, outcome=outcome)
            tg, cg, (gs, gbody, _) = _timed(g)
            word += "; graph " + ("ok" if gs == 200 else f"HTTP {gs}")
        slow = "  SLOW" if cc + cg > 6.0 else ""
        print(f"{path:58s} {tc:6.2f} {cc:6.2f} {tg:6.2f} {cg:6.2f} {tc + tg:6.2f}  {word}{slow}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
