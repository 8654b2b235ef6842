"""``ptxmm check --json``, written as it is produced (docs/json-schema.md).

A result's JSON is the object ``CheckResult.to_json()`` returns, but it is never built whole: the
fields around ``outcomes`` come from ``to_json()`` of the result without its outcomes, and the
outcomes are written one at a time, each by the C encoder on one line. Memory stays that of one
outcome (IRIW with 6 readers: 4,096 outcomes, 11 MB of JSON; building the whole object and
encoding it with indentation, in pure Python, took 0.9 s and 200 MB more). The layout: the fields
indented as ``json.dumps(indent=2)`` would, each outcome on a line of its own::

    {
      "name": "MP",
      ...
      "outcomes": [
        {"values": {"T1:%r0": 0}, "satisfies": false, "flags": [], "witness": {...}},
        ...
      ],
      "n_outcomes": 4,
      ...
    }

A batch (several files) is a list of such objects, each written once its file is done."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, TextIO

from ..semantics.result import outcome_json
from .text import PARTIAL, bounded

if TYPE_CHECKING:
    from ..semantics.result import CheckResult, OutcomeInfo


def _indented(value, pad: str) -> str:
    """``json.dumps(value, indent=2)`` for a value that starts on a line indented by ``pad``."""
    return json.dumps(value, indent=2).replace("\n", "\n" + pad)


def write_result(res: CheckResult, out: TextIO, pad: str = "") -> None:
    """Write ``res.to_json()`` to ``out``, its outcomes one at a time; ``pad``: the indentation of
    the line the object starts on (inside a batch's list). A timed-out check's outcomes are capped
    as in the text report (``outcomes_left_out`` counts the rest, ``n_outcomes`` all found)."""
    full = res
    res, left_out = bounded(full)
    # every field but the outcomes, in to_json's order, from the result without outcomes
    fields = replace(res, outcomes=[]).to_json()
    if full.enumerated:
        fields["n_outcomes"] = len(full.outcomes)
    if full.status in PARTIAL:
        fields["outcomes_left_out"] = left_out
    inner = pad + "  "
    out.write("{")
    for i, (key, value) in enumerate(fields.items()):
        out.write(("\n" if i == 0 else ",\n") + inner + json.dumps(key) + ": ")
        if key == "outcomes":
            _write_outcomes(res, out, inner)
        else:
            out.write(_indented(value, inner))
    out.write("\n" + pad + "}")


def _write_outcomes(res: CheckResult, out: TextIO, pad: str) -> None:
    if not res.outcomes:
        out.write("[]")
        return
    out.write("[")
    names: dict = {}
    for i, o in enumerate(res.outcomes):
        out.write(("\n" if i == 0 else ",\n") + pad + "  " + _row(o, res.enumerated, names))
    out.write("\n" + pad + "]")


_LIT = {True: "true", False: "false", None: "null"}


def _row(o: OutcomeInfo, enumerated: bool, names: dict) -> str:
    """``json.dumps(outcome_json(o, enumerated))``, the same text, written directly where the
    values are plain ints and rf and co pairs (33 us a row against the encoder's 50 with the dict
    it needs, for an enumeration's tens of thousands of rows); ``names``: the observables' names as
    JSON strings, kept from row to row. Anything else goes through json.dumps."""
    vals = o.outcome.values
    if not all([type(v) is int for _, v in vals]):  # noqa: E721 (bool is not a value here)
        return json.dumps(outcome_json(o, enumerated))
    try:
        values = [f"{names[k]}: {v}" for k, v in vals]
    except KeyError:  # a name not yet seen: every name of the row kept, then written
        names.update((k, json.dumps(k)) for k, _ in vals if k not in names)
        values = [f"{names[k]}: {v}" for k, v in vals]
    flags = o.flags if enumerated else None
    w = o.witness
    text = getattr(type(w), "witness_json", None)  # a packed witness's text, read without decoding
    text = text(w) if text is not None else None
    if text is None:
        paths, rf, co = w.paths, w.rf, w.co  # (a packed witness is decoded once for the three)
        try:
            rf_s = ", ".join([f"[{a}, {b}]" for a, b in rf])
            co_s = ", ".join([f"[{a}, {b}]" for a, b in co])
        except ValueError:  # not pairs
            return json.dumps(outcome_json(o, enumerated))
        text = f'{{"paths": {list(paths)}, "rf": [{rf_s}], "co": [{co_s}]}}'
    if flags is None:
        fl = "null"
    else:
        key = tuple(flags)
        fl = names.get(key)  # (the flags' text, kept from row to row as the names are)
        if fl is None:
            fl = names[key] = json.dumps(list(flags))
    return (f'{{"values": {{{", ".join(values)}}}, "satisfies": {_LIT[o.satisfies]}, '
            f'"flags": {fl}, "witness": {text}}}')


class BatchWriter:
    """The JSON of a batch of files, written as each file is done: one file's object alone, or a
    list of them (``n``, the number of files, decides which, as it did when the batch was printed
    at its end). An item is a CheckResult or the error object of a file that was not checked."""

    def __init__(self, out: TextIO, n: int):
        self.out, self.n, self.written = out, n, 0

    def add(self, item: CheckResult | dict) -> None:
        """Write one item whole (Ctrl-C waits until it is written)."""
        single = self.n == 1
        pad = "" if single else "  "
        with _sigint_deferred():
            if not single:
                self.out.write("[\n  " if self.written == 0 else ",\n  ")
            if isinstance(item, dict):
                self.out.write(_indented(item, pad))
            else:
                write_result(item, self.out, pad)
            self.written += 1

    def close(self) -> None:
        """End the JSON (call it once every file has its item)."""
        if self.n != 1:
            self.out.write("\n]\n" if self.written else "[]\n")
        elif self.written:
            self.out.write("\n")
        self.out.flush()


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Ctrl-C (SIGINT) during the block takes effect at its end, by the handler it found."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = signal.signal(signal.SIGINT, lambda sig, frame: got.append(sig))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if got and callable(old):
        old(signal.SIGINT, None)  # Python's default handler raises KeyboardInterrupt
