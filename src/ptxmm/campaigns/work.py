"""The work of one batch of tests, run in a worker (a local process or a Dask worker): plain
functions of plain data, so that any executor can ship them."""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import PtxmmError
from .stream import Item


def load_item(it: Item):
    from .. import load, parse

    if it.text is not None:
        fmt = "litmus" if it.text.startswith("PTX ") else "ptx"
        return parse(it.text, file=it.key, fmt=fmt)
    return load(it.path)


def _error(e: BaseException, it: Item) -> str:
    if isinstance(e, PtxmmError):
        return str(e).splitlines()[0]
    return f"{it.key}: error: the program is nested too deeply for the checker"


def shape_of(prog) -> tuple[int, str]:
    """A test's size (its instructions) and shape (diy7's family: the name up to its first ``+``,
    where the name is one ``ptxmm gen`` or diy7 gives)."""
    size = sum(len(t.instrs) for t in prog.threads)
    return size, prog.name.split("+")[0] if "+" in prog.name else prog.name


def verdicts(items: list[Item], models: tuple[str, ...], unroll: int = 2,
             timeout: float | None = None) -> list[dict]:
    """Per item, whether its condition holds under each model (None: unknown), or its error."""
    from ..queries.memo import MEMO

    rows = []
    for it in items:
        t0 = time.perf_counter()
        row: dict = {"key": it.key, "file": it.path}
        try:
            prog = load_item(it)
            size, fam = shape_of(prog)
            row.update(name=prog.name, size=it.size or size, family=it.family or fam)
            for m in models:
                row[m] = MEMO.verdict(prog, m, unroll, timeout).holds
        except (PtxmmError, RecursionError) as e:
            row["error"] = _error(e, it)
        row["time_s"] = round(time.perf_counter() - t0, 4)
        rows.append(row)
    return rows


def test_rows(items: list[Item], model: str, unroll: int = 2, timeout: float | None = None,
              expected: dict[str, bool | None] | None = None) -> list[dict]:
    """``ptxmm test``'s per-test result (runner.TestOutcome) of each item, as a JSON row; the
    expectation from ``expected`` (runner.read_expected's map) where it names the file, else the
    test's own ``.expect``."""
    from ..testing.runner import TestOutcome, _lookup

    rows = []
    for it in items:
        t0 = time.perf_counter()
        name = Path(it.key).stem
        try:
            prog = load_item(it)
            from ..queries.memo import MEMO

            res = MEMO.verdict(prog, model, unroll, timeout)  # a shape decided before: its verdict
            unknown = res.status if res.status in ("timeout", "no-execution") else None
            known, exp = _lookup(Path(it.path), expected) if expected and it.path else (False, None)
            r = TestOutcome(it.key, prog.name, exp if known else prog.expect, res.holds, res.n_outcomes,
                            time.perf_counter() - t0, unknown=unknown)
        except (PtxmmError, RecursionError) as e:
            r = TestOutcome(it.key, name, None, None, 0, time.perf_counter() - t0, _error(e, it))
        rows.append(r.__dict__ | {"status": r.status, "key": it.key})
    return rows
