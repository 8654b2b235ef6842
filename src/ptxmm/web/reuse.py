"""What a worker process keeps of its last checks, so that the page's next requests about the
same text do not do the check's work again (issue 42: a kernel's drawing, asked right after its
check, re-read the PTX, rebuilt the event graph and asked the verdict again — its check's time
a second time; block-reduce-shfl.cu's check 6.6 s CPU, its drawing 5.7 s more).

An entry is the parsed program of a text (with nvcc's PTX of a ``.cu``, for locating errors) and
the result of the check that ran on it, under :func:`key` — everything that makes the program
and the check's event graph: the text, its format, the file name it is checked as, the launch,
the model and the unroll bound (not the engine, the observed values, liveness or the time limit:
they change neither the program nor the graph, and the verdict is the model's). A graph or
explain job of the same key takes the program from here (no nvcc, no parse) and hands the check
to the explanation (:func:`ptxmm.explanation.explain.explain`'s ``checked``: its graph is not
built again, nor a verdict it decided asked again; :func:`ptxmm.explanation.holding.
condition_drawing`: a forall that holds drawn from the check's first outcome), whose shortcuts
are guarded there (the same model, bound and program, a finished check); a drawing once made is
kept with them.

The pool hands a job to the worker that last ran its text (:mod:`ptxmm.web.pool`); a job that
lands elsewhere does the work itself, as before. A worker keeps :data:`KEEP` entries (a check's
result holds its event graph); a stopped worker takes them with it."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

KEEP = 2  # entries a worker keeps: the last texts it checked


def key(source: str, fmt: str | None, file: str, launch: str | None, model: str,
        model_text: str | None, unroll: int) -> str:
    """The key of a request's program and check (see the module's docstring)."""
    h = hashlib.sha256()
    for part in (source, fmt or "", file, launch if launch is not None else "\0", model,
                 model_text if model_text is not None else "\0", str(unroll)):
        b = part.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


@dataclass(frozen=True)
class Kept:
    prog: Any  # the Program
    ptx: str | None  # nvcc's PTX of a .cu (its errors located at the CUDA line: jobs.in_cuda_source)
    checked: Any  # the CheckResult of a check of prog
    # its drawings asked so far, by (outcome, finding, progress): the page asks one again as the
    # server's SVG where its own layout of the DOT leaves a label unclear (GraphData, immutable)
    drawings: dict = field(default_factory=dict)


class Recent:
    """The last :data:`KEEP` checked programs of this worker, by key, the newest last."""

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self.entries: OrderedDict[str, Kept] = OrderedDict()

    def get(self, k: str | None) -> Kept | None:
        if k is None or k not in self.entries:
            return None
        self.entries.move_to_end(k)
        return self.entries[k]

    def put(self, k: str | None, kept: Kept) -> None:
        if k is None:
            return
        self.entries[k] = kept
        self.entries.move_to_end(k)
        while len(self.entries) > self.keep:
            self.entries.popitem(last=False)


RECENT = Recent()  # this worker process's (each worker is a process of its own: pool.py)
