"""Run many litmus tests and compare verdicts with expectations (``ptxmm test``).

Expectations come from each file's `.expect` line or from a CSV in the Dat3M format
(``path,ptx-v6.0,ptx-v7.5``; 1 = the condition holds as written, empty = not rated). Tests run in
parallel across cores; a test that cannot be parsed or is not supported is reported as an error."""

from __future__ import annotations

import csv
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from .._infra.records import record
from ..errors import ArgumentError, PtxmmError, SourcePos


@record(frozen=False)
class TestOutcome:
    path: str
    name: str
    expected: bool | None
    holds: bool | None
    n_outcomes: int
    time_s: float
    error: str | None = None
    unknown: str | None = None  # why the verdict is unknown: "timeout", "no-execution", "undecided"
    detail: str | None = None  # a kernel test: what was found against what its `expect` line lists
    judged: str = "condition"  # what the verdict is about: condition, liveness (no hang), kernel

    def words(self) -> tuple[str, str]:
        """The expected and the found verdict in words for the table of ``ptxmm test`` (never
        Python's None/True/False): the condition ``holds``/``fails``, liveness ``terminates``/
        ``hangs``, a kernel test ``its expect line``/``agrees``/``differs``; ``—`` where there is
        none (unrated, an error, no verdict)."""
        if self.judged == "kernel":
            return ("—" if self.expected is None else "its expect line",
                    "—" if self.holds is None else "agrees" if self.holds else "differs")
        yes, no = ("terminates", "hangs") if self.judged == "liveness" else ("holds", "fails")

        def say(v: bool | None) -> str:
            return "—" if v is None else yes if v else no
        return say(self.expected), say(self.holds)

    @property
    def status(self) -> str:
        if self.error is not None:
            return "unsupported" if "not supported yet" in self.error else "error"
        if self.unknown is not None:
            return self.unknown
        if self.expected is None:
            return "unrated"
        return "agree" if self.expected == self.holds else "DISAGREE"


def collect(paths: list[str]) -> list[Path]:
    """The tests under ``paths``: .ptx, .litmus and .cu files (of a kernel's .cu and its committed
    .ptx twin, the .cu where nvcc is installed, else the .ptx)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix in (".ptx", ".litmus", ".cu"))
            out += _one_of_twins(found)
        else:
            out.append(p)
    return out


def _one_of_twins(files: list[Path]) -> list[Path]:
    stems = {f.with_suffix("") for f in files if f.suffix == ".cu"}
    twins = stems & {f.with_suffix("") for f in files if f.suffix == ".ptx"}
    if not twins:
        return files
    from ..kernel.nvcc import find_nvcc

    drop = ".ptx" if find_nvcc() else ".cu"
    return [f for f in files if not (f.with_suffix("") in twins and f.suffix == drop)]


def read_expected(csv_path: str, column: str) -> dict[str, bool | None]:
    """Map a CSV path (e.g. ``PTX/Manual/MP.litmus``) to its expectation in ``column``: 1 (the
    condition holds), 0 (it does not) or empty (unrated). The header is the first line whose first
    field is ``path`` (``# path,ptx-v6.0,...`` or ``path,ptx``); other ``#`` lines are comments. A
    column the header does not name, another value, or a path named twice is an error naming the
    file, the line and the value: nothing is guessed."""
    header, rows = _csv_rows(csv_path)
    header = header or ["path", column]
    if column not in header[1:]:
        raise ArgumentError(f"--column {column}: {csv_path} has no such column", None,
                            f"its columns: {', '.join(header[1:]) or 'none'}; choose one with --column")
    idx = header.index(column)
    out: dict[str, bool | None] = {}
    first: dict[str, int] = {}
    for no, r in rows:
        key, v = r[0].strip(), r[idx].strip() if idx < len(r) else ""
        if v not in ("1", "0", ""):
            raise PtxmmError(f"{key}: expectation {v!r} in column {column} is not 1, 0 or empty",
                             SourcePos(csv_path, no, len(",".join(r[:idx])) + 2),
                             "1: the condition holds; 0: it does not; empty: not rated")
        if key in first:
            raise PtxmmError(f"{key} is named again (first on line {first[key]})",
                             SourcePos(csv_path, no, 1), "name each test once")
        first[key] = no
        out[key] = None if v == "" else v == "1"
    return out


def _csv_rows(csv_path: str) -> tuple[list[str] | None, list[tuple[int, list[str]]]]:
    """The header (None when the CSV has none) and the (line number, fields) of each row."""
    header = None
    rows = []
    for no, ln in enumerate(Path(csv_path).read_text(encoding="utf-8-sig").splitlines(), 1):
        if header is None and not rows and _header(ln)[:1] == ["path"]:
            header = _header(ln)
        elif ln.strip() and not ln.startswith("#"):
            rows.append((no, next(csv.reader([ln]))))
    return header, rows


def _header(line: str) -> list[str]:
    """`# path,ptx-v6.0,ptx-v7.5  (comment)` → ["path", "ptx-v6.0", "ptx-v7.5"]."""
    return [h.strip().split()[0] for h in line.lstrip("# ").split("(")[0].split(",") if h.strip()]


def _lookup(path: Path, expected: dict[str, bool | None]) -> tuple[bool, bool | None]:
    """The expectation of the CSV path ``path`` ends with (after a ``/``, or the whole path): the
    first such row of the CSV. The CSV's paths that can match are the path's own tails, looked up
    one by one (a CSV of 10^4 rows is not scanned for each of 10^4 tests)."""
    s = path.as_posix()
    parts = s.split("/")
    found = [t for t in ("/".join(parts[i:]) for i in range(len(parts))) if t in expected]
    if len(found) > 1:  # several rows name the file: the CSV's first
        first = next(k for k in expected if k in found)
        return True, expected[first]
    return (True, expected[found[0]]) if found else (False, None)


def _run_one(args) -> TestOutcome:
    path, model, unroll, exp_known, exp, timeout, *live = args
    from .. import load
    from ..queries.memo import MEMO

    t0 = time.perf_counter()
    try:
        prog = load(path)
        if prog.kernel is not None:
            return _run_kernel(prog, path, model, unroll, timeout, t0)
        if live and live[0] is not None:  # "no execution hangs" (ptxmm.queries.hangs) is the verdict
            from ..queries.hangs import verdict_why

            ok, why = verdict_why(prog, model, unroll, live[0], timeout)
            return TestOutcome(str(path), prog.name, exp if exp_known else prog.expect_liveness,
                               ok, 0, time.perf_counter() - t0,
                               unknown=why if why in (None, "timeout") else "undecided",
                               detail=None if why in (None, "timeout") else why, judged="liveness")
        res = MEMO.verdict(prog, model, unroll, timeout)  # a shape decided before: its verdict
    except (PtxmmError, RecursionError) as e:
        msg = str(e).splitlines()[0] if isinstance(e, PtxmmError) else \
            f"{path}: error: the program is nested too deeply for the checker"
        return TestOutcome(str(path), Path(path).stem, exp if exp_known else None, None, 0,
                           time.perf_counter() - t0, msg)
    expected = exp if exp_known else prog.expect
    return TestOutcome(str(path), prog.name, expected, res.holds, res.n_outcomes,
                       time.perf_counter() - t0,
                       unknown=res.status if res.status in ("timeout", "no-execution") else None)


def _run_kernel(prog, path, model: str, unroll: int, timeout, t0: float) -> TestOutcome:
    agrees, detail, unknown, res = kernel_verdict(prog, model, unroll, timeout)
    is_test = prog.kernel.expect is not None or prog.condition is not None
    return TestOutcome(str(path), prog.name, True if is_test else None, agrees, len(res.outcomes),
                       time.perf_counter() - t0, unknown=unknown, detail=detail, judged="kernel")


def kernel_verdict(prog, model: str = "ptx", unroll: int = 2, timeout=None, engine: str = "auto"):
    """The rule of a kernel test (a kernel file with an `expect` line or a condition): it agrees
    when the kinds of its findings equal the line's list and its condition holds. Returns
    (agrees: True/False, None when unknown or not a test; what was found against what was expected;
    why unknown: "timeout"/"no-execution" or None; the check's result)."""
    from .. import check

    info = prog.kernel
    res = check(prog, model, engine=engine, unroll=unroll, observe="condition",
                verdict_only=prog.condition is not None, timeout=timeout)
    unknown = res.status if res.status in ("timeout", "no-execution") else None
    if res.findings_status not in ("ok", "no flags in model") and unknown is None:
        unknown = "timeout"
    if res.liveness == "timeout" and unknown is None:  # the hang query did not answer: whether
        unknown = "timeout"                            # "hang" is among the kinds is not known
    kinds = tuple(sorted({str(f.kind) for f in res.findings}))
    if info.expect is None and prog.condition is None:
        return None, "found: " + (", ".join(kinds) or "ok"), unknown, res
    parts, ok = [], True
    if info.expect is not None:
        ok = kinds == info.expect
        parts.append(f"expect {', '.join(info.expect) or 'ok'}; found {', '.join(kinds) or 'ok'}")
    if prog.condition is not None:
        ok = ok and bool(res.holds)
        parts.append(f"condition {'holds' if res.holds else 'fails'}")
    if res.liveness in ("timeout", "undecided"):
        parts.append(f"liveness {res.liveness}")
    agrees = ok if (res.holds is not None or prog.condition is None) and unknown is None else None
    return agrees, "; ".join(parts), unknown, res


def run_tests(paths: list[str], model: str = "ptx", expected_csv: str | None = None,
              column: str | None = None, unroll: int = 2, jobs: int | None = None,
              progress=None, timeout: float | None = None,
              results: list[TestOutcome] | None = None, liveness: str | None = None) -> list[TestOutcome]:
    """Run every test of ``paths``; each result is appended to ``results`` (a caller's list keeps
    those finished when the run is interrupted) as it arrives, and ``results`` is in file order
    when this returns or is interrupted. ``liveness``: a progress model — judge "no execution
    hangs" under it instead of the condition (expected 1 = no hang, 0 = a hang exists, as Dat3M's
    liveness CSVs say; a file's ``.expect-liveness terminates|hangs``)."""
    files = collect(paths)
    expected: dict[str, bool | None] = {}
    if expected_csv:
        expected = read_expected(expected_csv, column or _default_column(expected_csv, model))
    work = []
    for f in files:
        known, v = _lookup(f, expected) if expected else (False, None)
        work.append((str(f), model, unroll, known, v, timeout, liveness))
    jobs = jobs or os.cpu_count() or 1
    results = [] if results is None else results
    if jobs == 1 or len(work) < 4:
        for w in work:
            results.append(_run_one(w))
            if progress:
                progress()
        return results
    start = len(results)
    order: list[int] = []
    try:
        for idx, outs in _in_workers(work, min(jobs, len(work))):
            for i, r in zip(idx, outs):
                order.append(i)
                results.append(r)
                if progress:
                    progress()
    finally:  # back in file order, also when interrupted (the tests that finished)
        results[start:] = [r for _, r in sorted(zip(order, results[start:]), key=lambda p: p[0])]
    return results


# A worker's task: the tests of one shape hint (:func:`shape_hint`), small groups bundled up to
# TASK_MIN tests; a group is split only past max(TASK_SPLIT, tests / (4 * jobs)) tests.
TASK_MIN, TASK_SPLIT = 8, 64


def shape_hint(path: str) -> str:
    """A guess at a test's shape from its file name, before it is read: diy7's and ``ptxmm gen``'s
    names join the relaxations by ``+`` (``MP+fence.sc.cta+addr``), and the part of each before its
    first ``.`` (the fence's or access's semantics and scope) is what a model that names none of
    those cannot tell apart (:mod:`ptxmm.queries.memo`). Only the speed depends on it: tests with
    one hint go to one worker, whose shape memo then answers the rest of them."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".ptx", ".litmus", ".cu"):
        name = name.removesuffix(suffix)
    return "+".join(part.split(".", 1)[0] for part in name.split("+"))


def tasks(paths: list[str], jobs: int, least: int = TASK_MIN) -> list[list[int]]:
    """The indices of ``paths`` in worker tasks (see TASK_MIN; ``least``: its value), the largest
    tasks first (the last tasks to start are small: the workers finish together)."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(paths):
        groups.setdefault(shape_hint(p), []).append(i)
    cap = max(TASK_SPLIT, -(-len(paths) // (4 * jobs)))
    out: list[list[int]] = []
    small: list[int] = []
    for g in groups.values():
        for k in range(0, len(g), cap):
            part = g[k:k + cap]
            if len(part) >= least:
                out.append(part)
                continue
            small += part
            if len(small) >= least:
                out.append(small)
                small = []
    if small:
        out.append(small)
    return sorted(out, key=len, reverse=True)


def _run_many(work: list) -> list[TestOutcome]:
    return [_run_one(w) for w in work]


def _preload(model: str) -> None:
    """What every test needs, loaded before the workers start: forked workers inherit it (the
    checker's modules, Z3's library, the model) instead of each loading it again."""
    from ..cat.parser import load_model
    from ..engines.z3 import problem  # noqa: F401
    from ..queries import memo  # noqa: F401
    from ..semantics.builder import load_families
    from ..syntax import check, decode  # noqa: F401

    load_families()
    try:
        load_model(model)
    except PtxmmError:  # each test reports it, as with one process
        pass


def _in_workers(work: list, jobs: int):
    """(indices, outcomes) of each task of ``work`` as it finishes, in ``jobs`` processes."""
    from concurrent.futures import FIRST_COMPLETED, wait

    _preload(work[0][1])
    ex = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint)
    try:
        pending = {ex.submit(_run_many, [work[i] for i in t]): t for t in tasks([w[0] for w in work], jobs)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                yield pending.pop(f), f.result()
    except BaseException:  # Ctrl-C: cancel what has not started, do not wait for the rest
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)  # every result is in: the workers exit now, not at interpreter exit


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the parent, which reports what finished."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _default_column(csv_path: str, model: str) -> str:
    header, _ = _csv_rows(csv_path)
    cols = (header or [])[1:]
    if model in cols:
        return model
    # the current model ("ptx") is compared with the newest rated version
    return cols[-1] if cols else model
