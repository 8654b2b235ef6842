"""Race freedom for every launch up to ``<<<G, B>>>`` (issue 40, item 4): GPUVerify's two-thread
reduction under the PTX memory model, for barrier-synchronized kernels.

Two arbitrary distinct threads of an arbitrary one-dimensional launch ``<<<g, b>>>`` (g ≤ G,
b ≤ B) run the kernel symbolically (:mod:`.launch_paths`: ``%tid``/``%ctaid``/``%ntid``/
``%nctaid`` unknowns, every loaded value an unknown). Under the PTX memory model (PTX ISA 8.7.1,
Data races; 8.8.2, Morally strong operations; 8.9.2, Causality order; ``bar``, "the barrier
synchronizes" — 9.7.13.1: a ``bar.sync`` arrival of a CTA's thread synchronizes with every
participant's wait on the same barrier instance, so everything before a thread's barrier
precedes in causality order everything after it in every other thread of the CTA):

- two accesses *conflict* when their byte ranges overlap and one writes;
- they are not a race when both are morally strong (strong, each in the other's scope, the same
  size at the same address);
- in one CTA, a conflicting pair races iff both lie in the same *barrier interval* (the same
  number of ``bar.sync`` passed before them);
- ``bar.sync`` is ``barrier.sync.aligned`` (9.7.13.1): "all threads in CTA will execute the same
  barrier instruction. In conditionally executed code, an aligned barrier instruction should only
  be used if it is known that all threads in CTA evaluate the condition identically, otherwise
  behavior is undefined" — two threads of one CTA whose paths (ending at ``ret``: a failing
  ``assert()`` ends the grid) pass different sequences of barrier instructions are its own
  finding, *barrier divergence*, as in GPUVerify (a thread returning before a barrier the others
  reach included);
- across CTAs, nothing in this encoding orders two accesses (the kernels it covers have no grid
  barrier, flag or fence): a conflicting pair of two CTAs races (``.shared`` memory is the CTA's
  own: never shared between two CTAs).

Each candidate pair is one Z3 query (:mod:`ptxmm.engines.z3.any_launch`); a satisfiable one gives
the smallest witness launch and the two threads, and the ordinary concrete check run at that
launch (when it fits its thread limit) confirms the race. A kernel outside what the encoding
covers (a loop, atomics or fences used for synchronization, mbarriers, warp collectives, ...) is
reported with the form that put it outside, and the concrete check of the file's own launch is
the answer (:attr:`AnyLaunchResult.fallback`)."""

from __future__ import annotations

import re
import time
from pathlib import Path as FilePath

from .._infra.records import record
from ..errors import ArgumentError
from ..ir.values import Expr, mk
from .launch_paths import Access, Outside, ThreadPaths, thread_paths

ASSUMPTIONS = (
    "one-dimensional grids and blocks (%tid.y/z and %ctaid.y/z are 0)",
    "scalar arguments as in the launch line; every buffer its own memory (two buffers never alias), "
    "each access inside the buffer its address is computed from (out-of-bounds accesses are the "
    "concrete check's finding)",
    "a loaded value is any value (what other threads write is not tracked)",
    "two CTAs are ordered by nothing (no grid barrier, flag or fence: such kernels fall back)",
    "a failing assert() ends the grid (its path is not compared for barrier divergence)",
)
_LAUNCH = re.compile(r"^\s*(?:[A-Za-z_]\w*(?:::\w+)*)?\s*<<<\s*(\d+)\s*,\s*(\d+)\s*>>>\s*(?:\(.*\))?\s*$")
MAX_LAUNCH = 2 ** 31 - 1


@record
class AnyLaunchFinding:
    """A race (or barrier divergence) with its witness: the launch ``<<<grid, block>>>``, the two
    threads ``(ctaid, tid)``, the two accesses (instruction, PTX line, CUDA line) and the buffer;
    ``confirmed``: whether the concrete check at the witness launch reports a race between the same
    two instructions (None: not run — the launch exceeds its thread limit, or no concrete check
    applies), ``note``: what the confirmation found."""

    kind: str  # "race" | "barrier-divergence"
    grid: int
    block: int
    threads: tuple[tuple[int, int], tuple[int, int]]
    accesses: tuple[str, ...]
    buffer: str = ""
    confirmed: bool | None = None
    note: str = ""

    def __str__(self) -> str:
        (c1, t1), (c2, t2) = self.threads
        head = f"{self.kind}"
        if self.buffer:
            head += f" on {self.buffer}"
        at = f"at <<<{self.grid}, {self.block}>>>: block {c1} thread {t1} ~ block {c2} thread {t2}"
        what = "  ~  ".join(self.accesses)
        conf = {True: "confirmed by the concrete check", False: "NOT confirmed by the concrete check",
                None: "not confirmed (the concrete check was not run)"}[self.confirmed]
        note = f"; {self.note}" if self.note else ""
        return f"{head} {at}: {what}  ({conf}{note})"

    def to_json(self) -> dict:
        return {"kind": self.kind, "launch": {"grid": self.grid, "block": self.block},
                "threads": [{"ctaid": c, "tid": t} for c, t in self.threads],
                "accesses": list(self.accesses), "buffer": self.buffer, "confirmed": self.confirmed,
                "note": self.note}


@record
class AnyLaunchResult:
    """The answer for every launch up to ``<<<grid_max, block_max>>>``. ``verdict``: "race-free"
    (proved), "races" (findings), "unknown" (the solver gave up on a query), "outside" (the
    kernel is outside the encoding: ``outside`` says why, ``fallback`` holds the concrete check's
    findings at the file's own launch)."""

    file: str
    kernel: str
    grid_max: int
    block_max: int
    verdict: str
    findings: tuple[AnyLaunchFinding, ...] = ()
    assumptions: tuple[str, ...] = ASSUMPTIONS
    outside: str = ""
    fallback: tuple[str, ...] | None = None
    fallback_launch: str = ""
    queries: int = 0
    time_s: float = 0.0

    def summary(self) -> str:
        up_to = f"<<<{self.grid_max}, {self.block_max}>>>"
        if self.verdict == "race-free":
            return f"no data race for any launch up to {up_to} (assumptions: {'; '.join(self.assumptions)})"
        if self.verdict == "races":
            return f"{len(self.findings)} finding(s) for launches up to {up_to}"
        if self.verdict == "unknown":
            return f"not decided for launches up to {up_to}: the solver gave no answer in time"
        shown = "; ".join(self.fallback or ()) or "no race"
        return (f"outside what the every-launch encoding covers: {self.outside}; the concrete check "
                f"at {self.fallback_launch}: {shown}")

    def to_json(self) -> dict:
        return {"file": self.file, "kernel": self.kernel,
                "up_to": {"grid": self.grid_max, "block": self.block_max}, "verdict": self.verdict,
                "summary": self.summary(), "findings": [f.to_json() for f in self.findings],
                "assumptions": list(self.assumptions), "outside": self.outside or None,
                "fallback": None if self.fallback is None else list(self.fallback),
                "fallback_launch": self.fallback_launch or None, "queries": self.queries,
                "time_s": round(self.time_s, 3)}


def parse_up_to(text: str) -> tuple[int, int]:
    """``'<<<G, B>>>'`` (or ``'K<<<G, B>>>'``, arguments ignored) → (G, B)."""
    m = _LAUNCH.match(text)
    if m is None:
        raise ArgumentError(f"--up-to {text!r}: write the largest launch as '<<<G, B>>>' (integers)")
    g, b = int(m.group(1)), int(m.group(2))
    if not (1 <= g <= MAX_LAUNCH and 1 <= b <= 1024):
        raise ArgumentError(f"--up-to {text!r}: G must be 1..{MAX_LAUNCH} and B 1..1024 (CUDA's "
                            "limit of threads per block)")
    return g, b


def any_launch_races(path: str | FilePath, up_to: str | tuple[int, int], kernel=None,
                     confirm: bool = True, timeout: float = 60.0) -> AnyLaunchResult:
    """Whether any launch of the kernel of ``path`` (a .cu or its PTX, with its ``// ptxmm:
    launch`` line or ``kernel``'s, :class:`ptxmm.kernel.kernels.KernelArgs`) up to ``up_to``
    (``'<<<G, B>>>'`` or (G, B)) has a data race; ``confirm``: run the concrete check at each
    witness launch; ``timeout``: seconds per solver query."""
    from ..loading import load

    started = time.perf_counter()
    if not isinstance(up_to, str):
        g, b = up_to
        up_to = f"<<<{g}, {b}>>>"
    g_max, b_max = parse_up_to(up_to)
    prog = load(path, kernel=kernel)
    info = prog.kernel
    if info is None:
        raise ArgumentError(f"{path} is not a kernel file (a .cu or an nvcc PTX module with a launch)")
    base = dict(file=str(path), kernel=info.source, grid_max=g_max, block_max=b_max)
    try:
        why = _launch_outside(info.launch)
        if why:
            raise Outside(why)
        tp = thread_paths(prog.threads[0].instrs, prog.layout)
    except Outside as e:
        fb = _concrete(str(path), kernel, None, timeout)
        return AnyLaunchResult(**base, verdict="outside", outside=e.reason, fallback=fb[0],
                               fallback_launch=str(info.launch), time_s=time.perf_counter() - started)
    from ..engines.z3.any_launch import find_all

    queries, labels = _queries(tp)
    answers = find_all(tp.widths, g_max, b_max, queries, int(timeout * 1000))
    findings, unknown = [], False
    for (kind, a1, a2), ans in zip(labels, answers):
        if ans == "unknown":
            unknown = True
        elif ans is not None:
            findings.append(_finding(kind, a1, a2, ans))
    findings = _dedupe(findings)
    if confirm:
        findings = [_confirmed(f, str(path), kernel, info.launch, timeout) for f in findings]
    verdict = "races" if findings else "unknown" if unknown else "race-free"
    return AnyLaunchResult(**base, verdict=verdict, findings=tuple(findings), queries=len(queries),
                           time_s=time.perf_counter() - started)


def _launch_outside(launch) -> str:
    if launch.gpus > 1:
        return "a launch on several GPUs"
    if launch.cluster is not None:
        return "a launch with thread-block clusters (distributed shared memory)"
    if launch.cooperative:
        return "a cooperative launch (grid-wide synchronization)"
    return ""


# ----- the candidate pairs ------------------------------------------------------------------------

@record
class _Site:
    """Accesses of one instruction at one offset and interval, over every path that makes it."""

    access: Access
    cond: Expr


def _sites(tp: ThreadPaths) -> list[_Site]:
    """The accesses of every path, one per instruction, offset and interval: an access happens when
    the path's condition *at it* holds (what the path decides later does not undo it), so the
    same access on two paths that split after it is one site."""
    merged: dict[tuple, _Site] = {}
    for p in tp.paths:
        for a in p.accesses:
            key = (a.text, a.line, a.interval, a.region, a.offset, a.size, a.write)
            old = merged.get(key)
            if old is None:
                merged[key] = _Site(a, a.cond)
            elif old.cond != a.cond:
                merged[key] = _Site(a, mk("lor", old.cond, a.cond))
    return list(merged.values())


def _scope_of(a: Access, b: Access) -> str | None:
    """Where two strong accesses are morally strong: "all" (each in the other's scope wherever
    they are), "cta" (only within one CTA), None (never: one is weak)."""
    if not (a.strong and b.strong):
        return None
    narrow = {"cta", "cluster"}  # a launch without clusters: a CTA is its own cluster
    return "cta" if a.scope in narrow or b.scope in narrow else "all"


def _pair(s1: _Site, s2: _Site):
    from ..engines.z3.any_launch import PairQuery

    a1, a2 = s1.access, s2.access
    if a1.region != a2.region or not (a1.write or a2.write):
        return None
    shared = a1.space == "shared"
    if a1.interval != a2.interval:
        if shared:
            return None  # one CTA, a barrier between: ordered
        same_cta = False  # two CTAs: the barrier orders nothing
    else:
        same_cta = True if shared else None
    ms = _scope_of(a1, a2)
    differ = ms if ms is not None and a1.size == a2.size else None
    return PairQuery((s1.cond,), (s2.cond,), same_cta, (a1.offset, a1.size, a2.offset, a2.size), differ)


def _divergence(tp: ThreadPaths):
    from ..engines.z3.any_launch import PairQuery

    ends = [p for p in tp.paths if p.end == "ret"]
    for i, p1 in enumerate(ends):
        for p2 in ends[i:]:
            if p1.barriers != p2.barriers:
                yield PairQuery((p1.cond,), (p2.cond,), True), p1, p2


def _queries(tp: ThreadPaths):
    sites = _sites(tp)
    queries, labels = [], []
    for i, s1 in enumerate(sites):
        for s2 in sites[i:]:  # the two threads are arbitrary: one order of a pair is enough
            q = _pair(s1, s2)
            if q is not None:
                queries.append(q)
                labels.append(("race", s1.access, s2.access))
    for q, p1, p2 in _divergence(tp):
        queries.append(q)
        labels.append(("barrier-divergence", p1, p2))
    return queries, labels


def _describe(a: Access) -> str:
    cuda = f", {a.cuda}" if a.cuda else ""
    return f"{a.text} (line {a.line}{cuda})"


def _finding(kind: str, a1, a2, w) -> AnyLaunchFinding:
    if kind == "race":
        return AnyLaunchFinding(kind, w.grid, w.block, w.threads, (_describe(a1), _describe(a2)),
                                a1.region)
    bars = tuple("bar.sync at PTX lines " + (", ".join(str(ln) for _, ln in p.barriers) or "none")
                 for p in (a1, a2))
    return AnyLaunchFinding(kind, w.grid, w.block, w.threads, bars, "",
                            note="two threads of one CTA execute different bar.sync instructions "
                            "(undefined: PTX ISA 9.7.13.1, .aligned barriers in conditional code)")


def _dedupe(fs: list[AnyLaunchFinding]) -> list[AnyLaunchFinding]:
    seen, out = set(), []
    for f in fs:
        key = (f.kind, frozenset(f.accesses), f.buffer)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# ----- the concrete check: witnesses and the fallback ---------------------------------------------

def _at(launch, grid: int, block: int) -> str:
    return re.sub(r"<<<[^>]*>>>", f"<<<{grid}, {block}>>>", str(launch), count=1)


def _concrete(path: str, kernel, launch_text: str | None, timeout: float):
    """The concrete check's race findings (text, (line, line) pairs) at ``launch_text`` (None: the
    file's own launch)."""
    from dataclasses import replace

    from ..kernel.kernels import KernelArgs
    from ..loading import load
    from ..semantics.result import FindingKind
    from .checker import check

    args = kernel
    if launch_text is not None:
        args = replace(kernel, launch=launch_text) if kernel is not None else KernelArgs(launch_text)
    res = check(load(path, kernel=args), timeout=timeout)
    races = [f for f in res.findings if f.kind == FindingKind.RACE]
    return tuple(str(f) for f in races), [frozenset(e.line for e in f.events) for f in races], res


def _confirmed(f: AnyLaunchFinding, path: str, kernel, launch, timeout: float) -> AnyLaunchFinding:
    from ..kernel.launch import MAX_THREADS

    if f.kind != "race":
        return f
    if f.grid * f.block > MAX_THREADS:
        return AnyLaunchFinding(**{**_fields(f), "note": f"the witness launch has more than "
                                   f"{MAX_THREADS} threads, the concrete check's limit"})
    launch_text = _at(launch, f.grid, f.block)
    _texts, lines, res = _concrete(path, kernel, launch_text, timeout)
    want = frozenset(int(a.rsplit("(line ", 1)[1].split(")")[0].split(",")[0]) for a in f.accesses)
    ok = want in lines
    note = "" if ok else (f"the concrete check at {launch_text} reports "
                          f"{', '.join(sorted({str(x.kind) for x in res.findings})) or 'nothing'}")
    return AnyLaunchFinding(**{**_fields(f), "confirmed": ok, "note": note})


def _fields(f: AnyLaunchFinding) -> dict:
    return {k: getattr(f, k) for k in ("kind", "grid", "block", "threads", "accesses", "buffer",
                                       "confirmed", "note")}


__all__ = ["ASSUMPTIONS", "AnyLaunchFinding", "AnyLaunchResult", "any_launch_races", "parse_up_to"]
