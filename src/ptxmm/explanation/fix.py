"""``--fix``: the smallest strengthenings of a program that make an outcome forbidden.

Single changes: raise an access's semantics (ld: weak → relaxed → acquire; st: weak → relaxed →
release; atom: relaxed → acquire | release → acq_rel; red: relaxed → release), widen a strong
access's or a fence's scope (up to the scope that holds every thread), or insert a fence
(fence.release before a write, fence.acquire after a read, fence.acq_rel, fence.sc) between two
memory instructions, or split a strong vector access around a flag element (vecsplit.py). Sets
of changes are tried by size, one engine check each; the first size
with solutions is the answer (fewest changes), ordered by cost — a semantics or scope change
before a new fence, a narrower fence before fence.sc — and a solution is dropped when another of
the same size makes a weaker change at each of its sites. Bounded by a number of checks; the
report says when the bound was hit."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import replace

from .._infra.records import record
from ..cat.parser import Model
from ..ir.program import SCOPES, Atom, Fence, Label, Load, Program, Red, Store, Thread
from ..queries.checker import check
from .boundsguard import guard_code
from .fixjudge import Judge
from .targets import with_target
from .vecpack import apply_pack, pack_changes, packed_program
from .vecsplit import apply_split, inside_vector, is_vector, split_changes

SEM_LADDER = {
    Load: {"weak": ("relaxed", "acquire"), "relaxed": ("acquire",)},
    Store: {"weak": ("relaxed", "release"), "relaxed": ("release",)},
    Atom: {"relaxed": ("acquire", "release", "acq_rel"), "acquire": ("acq_rel",),
           "release": ("acq_rel",)},
    Red: {"relaxed": ("release",)},
}
SEM_RANK = {"weak": 0, "relaxed": 1, "acquire": 2, "release": 2, "acq_rel": 3, "sc": 4}
FENCE_COST = {"release": 3, "acquire": 3, "acq_rel": 4, "sc": 5}
_SEMS = {"weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile"}
MEMORY = (Load, Store, Atom, Red)
CACHE_OPS = frozenset({"ca", "cg", "cs", "lu", "cv", "wb", "wt"})  # weak ld/st only (ptxas: no .acquire.cg)


@record
class Change:
    kind: str  # sem scope fence split (vecsplit.py) pack (vecpack.py) guard (boundsguard.py)
    thread: int
    index: int  # the instruction (sem, scope), or the one the fence goes before
    sem: str | None
    scope: str | None
    cost: int
    text: str
    element: int = -1  # a split: the flag element; a pack: the elements of each access
    region: str = ""  # a pack: the buffer whose every vector access becomes one scalar access
    sites: tuple[tuple[int, int], ...] = ()  # ... those accesses: (thread, first element's index)

    @property
    def site(self) -> tuple[str, int, int]:
        return ("point" if self.kind == "fence" else "instr", self.thread, self.index)

    def to_json(self) -> dict:
        return {"kind": self.kind, "thread": self.thread, "index": self.index, "sem": self.sem,
                "scope": self.scope, "cost": self.cost, "text": self.text} | (
                    {"element": self.element} if self.kind == "split" else {}) | (
                    {"region": self.region} if self.kind == "pack" else {})


@record
class Solution:
    changes: tuple[Change, ...]
    cost: int

    @property
    def text(self) -> str:
        return " + ".join(c.text for c in self.changes)

    def to_json(self) -> dict:
        return {"changes": [c.to_json() for c in self.changes], "cost": self.cost, "text": self.text}


@record
class FixReport:
    solutions: tuple[Solution, ...]
    singles: int  # single changes considered
    checked: int  # engine checks run
    bound: int
    bound_hit: bool
    max_size: int
    time_s: float
    already: bool = False  # the outcome is forbidden as the program stands
    budget_hit: bool = False  # stopped at the time budget
    engine_checks: int | None = None  # of the candidates checked, those the engine was asked about
    goal: str | None = None  # what the fixes remove, when not the outcome (a kernel's finding: fixfind.py)
    advice: str | None = None  # said when no fix is found: what a strengthening cannot do
    finding: object = None  # the finding the fixes remove (semantics.result.Finding; fixfind.py)

    def to_json(self) -> dict:
        return {"solutions": [s.to_json() for s in self.solutions], "singles": self.singles,
                "checked": self.checked, "bound": self.bound, "bound_hit": self.bound_hit,
                "max_size": self.max_size, "already_forbidden": self.already,
                "budget_hit": self.budget_hit, "engine_checks": self.engine_checks,
                "time_s": round(self.time_s, 4)} | (
                    {} if self.goal is None else {"goal": self.goal, "advice": self.advice})

    def lines(self) -> list[str]:
        if self.already:
            return ["fix: nothing to fix, the outcome is already forbidden"]
        if not self.solutions and self.goal is not None:
            out = [f"fix: no change of up to {self.max_size} found that removes {self.goal} "
                   f"({self.checked} checks)"] + ([f"  {self.advice}"] if self.advice else [])
        elif not self.solutions and (self.bound_hit or self.budget_hit):
            out = [f"fix: none found within the bound ({self.checked} checks)"]
        elif not self.solutions:
            out = ["fix: no set of up to "
                   f"{self.max_size} change(s) forbids the outcome ({self.checked} checks)"]
        elif self.goal is not None:
            n = len(self.solutions[0].changes)
            out = [f"fix: {len(self.solutions)} fix(es) of {n} change(s) that remove {self.goal}, each "
                   f"re-checked gone ({self.checked} engine checks):"]
        else:
            n = len(self.solutions[0].changes)
            out = [f"fix: {len(self.solutions)} minimal fix(es) of {n} change(s), each re-checked "
                   f"forbidden ({self.checked} engine checks):"]
            out += [f"  {i}. {s.text}   (cost {s.cost})" for i, s in enumerate(self.solutions, 1)]
        if self.bound_hit:
            out.append(f"  [bound hit: stopped after {self.bound} checks; larger or other fixes "
                       "were not tried]")
        if self.budget_hit:
            out.append(f"  [time budget hit after {self.checked} checks; larger or other fixes "
                       "were not tried]")
        return out


# ----- single changes ----------------------------------------------------------------------------


def _needed_scope(prog: Program, t: Thread) -> str:
    """The narrowest scope holding thread t and every other thread."""
    lv = 0
    for o in prog.threads:
        if o.index != t.index:
            lv = max(lv, SCOPES.index(t.placement.level_with(o.placement)))
    return SCOPES[lv]


def _retext(text: str, sem: str, scope: str | None) -> str:
    """An instruction's text with new semantics (and scope) qualifiers."""
    head, _, rest = text.partition(" ")
    parts = head.split(".")
    keep = [p for p in parts[1:] if p not in _SEMS and p not in SCOPES
            and (sem == "weak" or p not in CACHE_OPS)]
    quals = ([] if sem == "weak" else [sem]) + ([scope] if scope and sem != "weak" else [])
    return ".".join([parts[0], *quals, *keep]) + (" " + rest if rest else "")


def _where(ins) -> str:
    return f" (line {ins.pos.line})" if ins.pos is not None else ""


def single_changes(prog: Program) -> list[Change]:
    out: list[Change] = []
    for t in prog.threads:
        need = _needed_scope(prog, t)
        mem = [i for i, ins in enumerate(t.instrs) if isinstance(ins, MEMORY)]
        for i, ins in enumerate(t.instrs):
            if isinstance(ins, MEMORY):
                out += _access_changes(t, i, ins, need)
            elif isinstance(ins, Fence):
                out += _existing_fence_changes(t, i, ins, need)
        if mem:
            out += _fence_changes(t, mem, need)
        out += split_changes(t, need, Change)
    return out + pack_changes(prog, Change)


# a fence made stronger: release/acquire → acq_rel → sc (fence.acq_rel orders no store before a
# later load of another location; only fence.sc does: store buffering)
FENCE_LADDER = {"release": ("acq_rel", "sc"), "acquire": ("acq_rel", "sc"), "acq_rel": ("sc",)}


def _existing_fence_changes(t: Thread, i: int, ins: Fence, need: str) -> list[Change]:
    """A fence already in the program: a wider scope, or stronger semantics (at least its own
    scope)."""
    out = []
    if SCOPES.index(ins.scope) < SCOPES.index(need):
        for s in SCOPES[SCOPES.index(ins.scope) + 1:SCOPES.index(need) + 1]:
            out.append(Change("scope", t.index, i, ins.sem, s, SCOPES.index(s) - SCOPES.index(
                ins.scope), f"`{ins.text}` → `{_retext(ins.text, ins.sem, s)}`{_where(ins)}"))
    scope = ins.scope if SCOPES.index(ins.scope) >= SCOPES.index(need) else need
    for sem in FENCE_LADDER.get(ins.sem, ()):
        cost = max(1, FENCE_COST[sem] - FENCE_COST[ins.sem])
        out.append(Change("sem", t.index, i, sem, scope, cost,
                          f"`{ins.text}` → `{_retext(ins.text, sem, scope)}`{_where(ins)}"))
    return out


def _access_changes(t: Thread, i: int, ins, need: str) -> list[Change]:
    out = []
    scope = ins.scope or need
    for sem in SEM_LADDER[type(ins)].get(ins.sem, ()):
        if sem in ("acquire", "release") and is_vector(ins):
            continue  # its elements' order would become the execution's choice: vecsplit.py
        cost = max(1, SEM_RANK[sem] - SEM_RANK[ins.sem])
        new = _retext(ins.text, sem, scope)
        out.append(Change("sem", t.index, i, sem, scope, cost, f"`{ins.text}` → `{new}`{_where(ins)}"))
    if ins.sem != "weak" and ins.scope is not None and SCOPES.index(ins.scope) < SCOPES.index(need):
        for s in SCOPES[SCOPES.index(ins.scope) + 1:SCOPES.index(need) + 1]:
            cost = SCOPES.index(s) - SCOPES.index(ins.scope)
            new = _retext(ins.text, ins.sem, s)
            out.append(Change("scope", t.index, i, ins.sem, s, cost, f"`{ins.text}` → `{new}`{_where(ins)}"))
    return out


def _fence_changes(t: Thread, mem: list[int], need: str) -> list[Change]:
    out = []
    for i in range(mem[0] + 1, mem[-1] + 1):
        before = [t.instrs[j] for j in mem if j < i]
        after = [t.instrs[j] for j in mem if j >= i]
        if not before or not after or isinstance(t.instrs[i], Label) and i == mem[0]:
            continue
        if isinstance(t.instrs[i - 1], Fence) or isinstance(t.instrs[i], Fence) or inside_vector(t, i):
            continue
        nxt = next(ins for ins in t.instrs[i:] if isinstance(ins, MEMORY))
        for sem in ("release", "acquire", "acq_rel", "sc"):
            if sem == "release" and not any(isinstance(x, (Store, Atom, Red)) for x in after):
                continue
            if sem == "acquire" and not any(isinstance(x, (Load, Atom)) for x in before):
                continue
            out.append(Change("fence", t.index, i, sem, need, FENCE_COST[sem],
                              f"insert `fence.{sem}.{need}` in {t.name} before `{nxt.text}`{_where(nxt)}"))
    return out


# ----- applying changes --------------------------------------------------------------------------


def apply(prog: Program, changes: tuple[Change, ...]) -> tuple[Program, frozenset[int]]:
    """The program with the changes made; and the ids of the fence instructions inserted."""
    threads = list(prog.threads)
    inserted: set[int] = set()
    by_thread: dict[int, list[Change]] = {}
    packs_of = [c for c in changes if c.kind == "pack"]  # vecpack.py: every site, in every thread
    for c in changes:
        if c.kind != "pack":
            by_thread.setdefault(c.thread, []).append(c)
    for ti in sorted({t for p in packs_of for t, _i in p.sites}):
        by_thread.setdefault(ti, [])
    for ti, cs in by_thread.items():
        t = threads[ti]
        instrs = list(t.instrs)
        for c in cs:
            if c.kind in ("sem", "scope"):
                ins = instrs[c.index]
                instrs[c.index] = replace(ins, sem=c.sem, scope=c.scope,
                                          text=_retext(ins.text, c.sem, c.scope))
            elif c.kind == "split":
                apply_split(instrs, c)
        packs = [replace(p, index=i) for p in packs_of for ti2, i in p.sites if ti2 == ti]
        # from the last position back: a pack or an insertion shifts only what follows it (a pack
        # before a fence at the same place: the fence goes before the packed access)
        for c in sorted((c for c in [*cs, *packs] if c.kind in ("fence", "guard", "pack")),
                        key=lambda c: (-c.index, c.kind != "pack")):
            if c.kind == "guard":  # boundsguard.py: made on the original thread (index unshifted)
                instrs[c.index:c.index] = guard_code(prog, t, c.index, c.index)
                continue
            if c.kind == "pack":
                apply_pack(instrs, c.index, f"{ti}.{c.index}")
                continue
            f = Fence(sem=c.sem, scope=c.scope, text=f"fence.{c.sem}.{c.scope}")
            inserted.add(id(f))
            instrs.insert(c.index, f)
        threads[ti] = replace(t, instrs=tuple(instrs))
    out = replace(prog, threads=tuple(threads))
    if packs_of:
        out = packed_program(out, {(p.region, p.element) for p in packs_of})
    return out, frozenset(inserted)


def compatible(changes) -> bool:
    """Whether a set of changes can be made together: a pack (vecpack.py) rewrites each vector
    access of its buffer whole, so no other change may edit one of their elements."""
    packed = {(t, i + k) for c in changes if c.kind == "pack" for t, i in c.sites for k in range(c.element)}
    return not packed or not any(c.kind in ("sem", "scope", "split") and (c.thread, c.index) in packed
                                 for c in changes)


# ----- search --------------------------------------------------------------------------------------


def forbids(prog: Program, model: Model, target, unroll: int = 2) -> bool:
    """Whether the engine finds the target outcome forbidden (one verdict query)."""
    res = check(with_target(prog, target), model, unroll=unroll, verdict_only=True, flags=False,
                properties=("condition",))  # the condition only: a fix is about the outcome
    return res.holds is False


# explain's missing ordering asks the fix search for its cheapest solution alone (search(...,
# cheapest=True)); False: the full search, as --fix runs it (the tests compare the two)
CHEAPEST_STOP = True


def _past_cheapest(found: list[Solution], cs: tuple[Change, ...], rank) -> bool:
    """Whether the candidate ``cs`` can no longer be the search's first solution: one was found
    and ``cs`` costs more. Without ``rank`` the candidates of a size come cheapest first (a stable
    sort by cost) and the search stops after the first size with a solution, so every later
    candidate costs at least as much as ``cs``; the answer's first solution is the least by (cost,
    text) of those found (sorted so), never dominated (only a cheaper one dominates): one of the
    cheapest found, all of which are found before the first dearer candidate."""
    return CHEAPEST_STOP and rank is None and bool(found) and \
        sum(c.cost for c in cs) > min(s.cost for s in found)


def _dominated(s: Solution, others: list[Solution]) -> bool:
    """Another solution of the same size, cheaper, with a weaker change at each of its sites."""
    return any(o is not s and o.cost < s.cost and
               all(any(oc.site == sc.site and _weaker(oc, sc) for sc in s.changes) for oc in o.changes)
               for o in others)


_FENCE_LE = {("release", "acq_rel"), ("acquire", "acq_rel"), ("release", "sc"), ("acquire", "sc"),
             ("acq_rel", "sc")}


def _weaker(a: Change, b: Change) -> bool:
    """a is the same change as b or a weaker one at the same site."""
    if a.kind != b.kind:
        return False
    if a.kind == "fence":
        return a.sem == b.sem or (a.sem, b.sem) in _FENCE_LE
    if a.kind == "split":
        return a.element == b.element
    if a.kind == "pack":
        return a.region == b.region
    if a.kind == "scope":
        return SCOPES.index(a.scope or "cta") <= SCOPES.index(b.scope or "cta")
    return a.sem == b.sem or (SEM_RANK[a.sem or "weak"] < SEM_RANK[b.sem or "weak"]
                              and {a.sem, b.sem} != {"acquire", "release"})


def search(prog: Program, model: Model, target, *, unroll: int = 2, bound: int = 400,
           max_size: int | None = None, budget_s: float | None = 9.0, witnesses: bool = True,
           judge: Judge | None = None, rank: Callable[[Change], int] | None = None,
           cheapest: bool = False) -> FixReport:
    """The minimal sets of changes that forbid ``target`` (see the module docstring); at most
    ``bound`` candidates checked and about ``budget_s`` seconds (None: the bound alone, so that
    the answer does not depend on the machine's speed). Each candidate is judged by
    :class:`~.fixjudge.Judge`: an execution already found that shows the outcome still allowed,
    else one engine query (``witnesses=False``: the engine for every candidate; the same fixes).
    ``judge``: one of an earlier search of the same program and target (its witnesses and
    verdicts are reused; a candidate judged before counts as checked again). ``rank``: the
    sets of a size are tried by the sum of their changes' ranks before their cost (a kernel's
    findings first: fixfind.ranker). ``cheapest``: only ``solutions[0]`` is wanted (explain's
    missing ordering): the search stops at the first candidate dearer than a solution found
    (:func:`_past_cheapest`); that first solution is the full search's, the others may be missing."""
    t0 = time.perf_counter()
    singles = single_changes(prog)
    judge = judge or Judge(prog, model, target, unroll, witnesses=witnesses)
    if judge.forbids():
        return FixReport((), len(singles), 1, bound, False, max_size or 3, time.perf_counter() - t0,
                         already=True, engine_checks=1)
    max_size = max_size or 3
    checked = 0
    found: list[Solution] = []
    hit = over = False
    for size in range(1, max_size + 1):
        combos = sorted(itertools.combinations(singles, size),
                        key=lambda cs: (sum(map(rank, cs)) if rank else 0, sum(c.cost for c in cs)))
        for cs in combos:
            if len({c.site for c in cs}) < size or not compatible(cs):
                continue
            if cheapest and _past_cheapest(found, cs, rank):
                break
            if checked >= bound:
                hit = True
                break
            if budget_s is not None and time.perf_counter() - t0 > budget_s:
                over = True
                break
            checked += 1
            if judge.forbids_changes(cs, lambda cs=cs: apply(prog, cs)):
                found.append(Solution(tuple(cs), sum(c.cost for c in cs)))
        if found or hit or over:
            break
    found.sort(key=lambda s: (s.cost, s.text))
    kept = [s for s in found if not _dominated(s, found)]
    return FixReport(tuple(kept), len(singles), checked, bound, hit, max_size, time.perf_counter() - t0,
                     budget_hit=over, engine_checks=judge.stats.engine_checks)
