"""``explain --fix`` on a kernel's findings (issue 42, item 5): the strengthenings that remove a
race, a failing assertion (an out-of-bounds access, a trap) or a hang, where the condition's own
search (:mod:`ptxmm.explanation.fix`) has none — the outcome already forbidden, or no fix within
its budget.

The finding aimed at is the kernel's first assertion failure (out-of-bounds access, trap), else
its first race, else its first hang: the observable bug first. A candidate removes it when a
check of the changed kernel asking only that finding's property (``properties=("sites",)``,
``("races",)``, or the hang search) no longer reports it: for a site finding, none at the same
PTX instructions; for a race, none between the same two instructions; for a hang, no hang at all.
That check is the re-check: a fix is reported only when the engine said so. Where no change
removes an assertion failure (a missing barrier, a load nvcc hoisted out of a loop: no
strengthening helps), the kernel's first race is aimed at in what is left of the budget.

A kernel's threads run the same code, so a change is the edit of one PTX instruction (one CUDA
line) in every thread that runs it (:func:`everywhere`): the changes of a solution are said at
one thread, and judged applied to all. An access written in an inline-``asm`` helper nvcc inlined
at several calls is one edit of the helper's ``asm`` line, so it is changed at every call
(:func:`_site`). The candidates are :func:`~.fix.single_changes` (semantics raised, scope widened
— up to ``.sys`` where the launch spans GPUs — fences inserted or made stronger, strong vector
accesses split around a flag element: vecsplit.py) and, for an out-of-bounds access, a bound
check before it (boundsguard.py; such a fix must also add no new finding of its property), one
per edit of the source; they are tried in this order (:func:`_combos`): bound checks, single
changes at the finding or a spin loop's read made an acquire (:func:`ranker`), store/load split
pairs at one flag element, changes at a synchronising instruction, pairs of the best ranked
(``PAIR_POOL``), other single changes near the findings, triples (``TRIPLE_POOL``), the rest;
once a fix is found only sets of its size are tried further. Where none is found, the report
names the finding's CUDA line and why no single edit was found (:func:`_advice`: what was tried,
and for a race left, the wait that is missing — named, never invented). That wait, where the
kernel fixes its phase parities, is built and checked as a fix itself (waitfix.py,
:func:`wait_judged`: the finding gone, no new race or hang, the condition's outcome forbidden);
where they cannot be derived or the check refutes it, it stays a named proposal that says why.
Bounded by a time budget and a number of checks; the report says when either was hit."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import replace

from ..cat.parser import Model
from ..ir.program import Atom, Branch, Fence, Label, Load, Program, Red
from ..kernel.cuda_edits import asm_site
from ..queries.checker import check
from ..semantics.result import Finding, FindingKind
from .advice import head
from .boundsguard import guard_changes
from .fix import MEMORY, Change, FixReport, Solution, apply, compatible, single_changes
from .vecsplit import groups

PAIR_POOL = 14  # the best ranked single changes whose pairs are tried
TRIPLE_POOL = 7  # ... and triples
MIN_CHECKS = 12  # checked whatever the budget (a large kernel's check takes seconds)
RACE_MIN_CHECKS = 6  # ... and of the race aimed at next (a pair of its two accesses made strong: 5th)
SITE_KINDS = (FindingKind.ASSERT_FAILS, FindingKind.OUT_OF_BOUNDS, FindingKind.TRAP)


def _line(ins) -> int | None:
    return ins.pos.line if ins is not None and ins.pos is not None else None


def _at(prog: Program, c: Change):
    """The instruction a change edits (a fence: the memory instruction it goes before)."""
    t = prog.threads[c.thread]
    if c.kind == "fence":
        return next((i for i in t.instrs[c.index:] if isinstance(i, MEMORY)), None)
    return t.instrs[c.index]


def _code(ins):
    """The source an instruction comes from: its CUDA line (nvcc's ``.loc``), else its PTX line."""
    src = getattr(ins.pos, "src", None) if ins is not None and ins.pos is not None else None
    return (src.file, src.line) if src is not None and src.line > 0 else _line(ins)


def everywhere(prog: Program, changes) -> tuple[Change, ...]:
    """The changes made as the edit of the source makes them: in every thread that runs the
    same code (a kernel's threads share it), and a semantics or scope change at every access of
    the same CUDA line with the same operation and qualifiers (nvcc may copy a line's access, e.g.
    a peeled loop iteration); a litmus test's changes as they are."""
    if prog.format != "kernel":
        return tuple(changes)
    out: list[Change] = []
    memo: dict = {}
    for c in changes:
        ins = _at(prog, c)
        for t in prog.threads:
            if c.kind == "fence":
                idx = [j - _before(prog.threads[c.thread], c.index) for j, i in enumerate(t.instrs)
                       if isinstance(i, MEMORY) and _line(i) == _line(ins)]
            elif c.kind == "pack":  # vecpack.py: already every access of its buffer, in every thread
                out.append(c)
                break
            elif c.kind == "split":  # the same vector access (its first element), or the same asm line
                idx = [j for j, _n in groups(t) if _site(prog, t.instrs[j], memo) == _site(prog, ins, memo)
                       and (t.instrs[j].sem, t.instrs[j].scope) == (ins.sem, ins.scope)]
            else:
                site = _site(prog, ins, memo)
                idx = [j for j, i in enumerate(t.instrs) if type(i) is type(ins)
                       and (i.sem, i.scope) == (ins.sem, ins.scope) and _site(prog, i, memo) == site]
            out += [replace(c, thread=t.index, index=j) for j in idx if j >= 0]
    return tuple(dict.fromkeys(out))


def _site(prog: Program, ins, memo: dict | None = None) -> tuple:
    """Where an access is edited: the ``asm`` line of the helper nvcc inlined (one edit changes it
    at every call), else its CUDA line (:func:`_code`). ``memo``: the asm lines found, by file and
    instruction head (a caller's own, to read each file once)."""
    if not _has_src(ins):
        return _code(ins)
    key = (ins.pos.src.file, head(ins))
    if memo is None or key not in memo:
        found = asm_site(prog, ins.pos, key[1])
        if memo is None:
            return ("asm", found[0], key[1]) if found is not None else _code(ins)
        memo[key] = found
    helper = memo[key]
    return ("asm", helper[0], key[1]) if helper is not None else _code(ins)


def _has_src(ins) -> bool:
    src = getattr(ins.pos, "src", None) if ins is not None and ins.pos is not None else None
    return src is not None and src.line > 0


def _before(t, index: int) -> int:
    """How many instructions lie between a fence's place and the memory instruction after it."""
    j = index
    while j < len(t.instrs) and not isinstance(t.instrs[j], MEMORY):
        j += 1
    return j - index


def applied(prog: Program, changes) -> Program:
    """The kernel with a solution's changes made in every thread (as the CUDA edit makes them); an
    inserted mbarrier wait (waitfix.py) as its plan makes it, in every thread of its code."""
    from .waitfix import wait_program

    out = apply(prog, everywhere(prog, [c for c in changes if c.kind != "wait"]))[0]
    for c in changes:
        if c.kind == "wait":
            out = wait_program(out, c)
    return out


# ----- the finding aimed at and whether it is gone --------------------------------------------------


def _key(f: Finding) -> tuple:
    return (str(f.kind), tuple(sorted(e.line or 0 for e in f.events)))  # a site's event: eid -1


def target(findings) -> Finding | None:
    """The finding a fix aims at: an assertion failure (out-of-bounds, trap) first, then a race,
    then a hang."""
    for kinds in (SITE_KINDS, (FindingKind.RACE,), (FindingKind.HANG,)):
        f = next((f for f in findings if f.kind in kinds), None)
        if f is not None:
            return f
    return None


def property_of(f: Finding) -> str:
    return "races" if f.kind == FindingKind.RACE else "liveness" if f.kind == FindingKind.HANG \
        else "sites"


def findings_of(prog: Program, model: Model, unroll: int, prop: str | None = None) -> tuple[Finding, ...]:
    """The findings of ``prop`` ("sites", "races", "liveness"); None: the first of these, in this
    order, that finds any (a kernel's races may cost a large check: not asked when a site
    finding is there to aim at)."""
    for p in (prop,) if prop else ("sites", "races", "liveness"):
        if p == "liveness":
            from ..queries.hangs import find_hangs

            found = tuple(h.finding for h in find_hangs(prog, model, unroll, every=False))
        else:
            found = tuple(check(prog, model, unroll=unroll, properties=(p,)).findings)
        if found or prop:
            return found
    return ()


def removes(prog2: Program, model: Model, unroll: int, f: Finding, before=None) -> bool:
    """Whether ``prog2`` no longer has the finding ``f`` (see the module docstring); with
    ``before`` (the findings of ``f``'s property as the kernel stands), and none but those."""
    found = findings_of(prog2, model, unroll, property_of(f))
    if f.kind == FindingKind.HANG:
        return not found
    keys = {_key(g) for g in found}
    return _key(f) not in keys and (before is None or keys <= {_key(g) for g in before})


# ----- the search -------------------------------------------------------------------------------------


def ranker(prog: Program, findings) -> Callable[[Change], int]:
    """A change's rank: 0 at an instruction of the first finding, or a spin loop's read made an
    acquire (:func:`spin_read`); 1 a synchronising instruction
    made stronger (an atomic, a strong access, a fence: where the order a fix adds comes from);
    2 at an instruction of another finding, or a fence inserted next to one of these; 3 the rest."""
    lines = [{e.line for e in f.events if e.line} for f in findings]
    first = lines[0] if lines else set()
    every = set().union(*lines) if lines else set()

    def sync(ins) -> bool:
        return isinstance(ins, (Atom, Red, Fence)) or getattr(ins, "sem", "weak") != "weak"

    def rank(c: Change) -> int:
        ins = _at(prog, c)
        line = _line(ins)
        if line in first and c.kind != "fence":
            return 0
        if c.kind == "sem" and c.sem == "acquire" and isinstance(ins, Load) and any(
                spin_read(prog.threads[x.thread], x.index) for x in everywhere(prog, (c,))):
            return 0  # a spin loop's flag read made an acquire: where a wait synchronises
        if c.kind != "fence" and sync(prog.threads[c.thread].instrs[c.index]):
            return 1
        near = c.kind != "fence" or line in every or sync(ins) or (
            c.index > 0 and sync(prog.threads[c.thread].instrs[c.index - 1]))
        return 2 if near and (line in every or c.kind == "fence") else 3
    return rank


def spin_read(t, index: int, reach: int = 8) -> bool:
    """Whether the load at ``index`` is a spin loop's read: a backward branch follows within
    ``reach`` instructions, taken on a predicate set from the loaded register (a wait on a flag)."""
    ins = t.instrs[index]
    if not isinstance(ins, Load):
        return False
    labels = {i.name: j for j, i in enumerate(t.instrs) if isinstance(i, Label)}
    tainted = {ins.dst}
    for j in range(index + 1, min(len(t.instrs), index + 1 + reach)):
        nxt = t.instrs[j]
        srcs = [getattr(nxt, a, None) for a in ("a", "b", "src")] + list(getattr(nxt, "srcs", ()))
        if any(x in tainted for x in srcs if x is not None) and getattr(nxt, "dst", None) is not None:
            tainted.add(nxt.dst)
        if isinstance(nxt, Branch) and nxt.guard is not None and nxt.guard[0] in tainted \
                and labels.get(nxt.target, j + 1) <= index:
            return True
    return False


def _distinct(prog: Program, singles: list[Change]) -> list[Change]:
    """One change per edit of the source (the first of each: see :func:`everywhere`)."""
    seen: dict[tuple, Change] = {}
    memo: dict = {}
    for c in singles:
        ins = _at(prog, c)
        if c.kind == "pack":
            seen.setdefault((c.kind, c.region), c)
            continue
        k = (c.kind, _line(ins), _before(prog.threads[c.thread], c.index)) if c.kind == "fence" else \
            (c.kind, _site(prog, ins, memo), type(ins).__name__, ins.sem, ins.scope)
        seen.setdefault(k + (c.sem, c.scope, c.element), c)
    return list(seen.values())


def _combos(singles: list[Change], rank) -> list[tuple[Change, ...]]:
    """The sets tried, in order: bound checks (an out-of-bounds finding's: boundsguard.py), single
    changes at the finding (rank 0), the pairs of vector
    splits (:func:`_split_pairs`), single changes at its synchronisation (rank 1), pairs of the
    best ranked, single changes of rank 2, triples, then the other single
    changes."""
    key = lambda cs: (sum(rank(c) for c in cs), sum(c.cost for c in cs))  # noqa: E731
    by = sorted(singles, key=lambda c: (rank(c), c.cost))
    near = [c for c in by if rank(c) <= 2]

    def sets(size: int, pool: int) -> list[tuple[Change, ...]]:
        group = [cs for cs in itertools.combinations(near[:pool], size) if len({c.site for c in cs}) == size]
        return sorted(group, key=key)
    ranked = lambda r: [(c,) for c in by if rank(c) == r and c.kind not in ("guard", "pack")]  # noqa: E731
    return [*((c,) for c in by if c.kind == "guard"), *((c,) for c in by if c.kind == "pack"), *ranked(0),
            *_split_pairs(singles), *ranked(1),
            *sets(2, PAIR_POOL), *ranked(2), *sets(3, TRIPLE_POOL),
            *((c,) for c in by if rank(c) > 2 and c.kind not in ("guard", "pack"))]


def _split_pairs(singles: list[Change]) -> list[tuple[Change, ...]]:
    """A vector store split with a vector load split at the same flag element (vecsplit.py): the
    two halves of one message-passing pattern, tried before other pairs."""
    splits = [c for c in singles if c.kind == "split"]
    return [(a, b) for a in splits if a.sem == "release" for b in splits
            if b.sem == "acquire" and b.element == a.element]


def search(prog: Program, model: Model, *, unroll: int = 2, budget_s: float | None = 9.0,
           bound: int = 400, findings=None) -> FixReport | None:
    """The fixes of the kernel's first finding (see the module docstring); where none is found
    for an assertion (out-of-bounds access, trap), those of its first race, in what is left of
    the budget. None when it has no finding. Solutions of the smallest size found, cheapest
    first; a solution's changes are said at one thread and judged made in every thread
    (:func:`applied`)."""
    t0 = time.perf_counter()
    findings = findings_of(prog, model, unroll) if findings is None else findings
    f = target(findings)
    if f is None:
        return None
    singles = _distinct(prog, single_changes(prog))
    if f.kind == FindingKind.OUT_OF_BOUNDS:  # a bound check first: no strengthening moves an index
        guards = [c for e in f.events if e.line for c in guard_changes(prog, e.line, Change)]
        singles = _distinct(prog, guards) + singles
    found, checked, hit, over = _search_one(prog, model, unroll, f, findings, singles, budget_s, bound,
                                            MIN_CHECKS)
    goal, aim, races = f"the finding {f}", f, ()
    if not found and f.kind != FindingKind.RACE and checked < bound:
        left = None if budget_s is None else max(3.0, budget_s - (time.perf_counter() - t0))
        races = findings_of(prog, model, unroll, "races")
        if races:
            found, n, hit, over = _search_one(prog, model, unroll, races[0], races, singles, left,
                                              bound - checked, RACE_MIN_CHECKS)
            if found:
                goal = f"the finding {races[0]} (no change tried removes the {f.kind} at line " \
                       f"{f.events[0].line if f.events else '?'}: {checked} checks)"
                aim = races[0]
            checked += n
    advice = None
    if not found:  # the wait the race lacks, derived and checked (waitfix.py), else named
        asked = races if f.kind != FindingKind.RACE else (f,)
        shown = asked or findings_of(prog, model, unroll, "races")  # (not asked: the bound spent on f)
        sol, why = _wait_fix(prog, model, unroll, f, findings,
                             next((r for r in shown if len(r.events) == 2), None))
        checked += why != "none"
        if sol is not None:
            found, goal, aim = [sol], f"the finding {f}", f
        else:  # the race said where a wait is named (else as the search left it)
            advice = _advice(f, shown if why != "none" else asked, singles,
                             lambda race: missing_wait(prog, race, unroll, why))
    found.sort(key=lambda s: (s.cost, s.text))
    return FixReport(tuple(found[:5]), len(singles), checked, bound, hit, 3, time.perf_counter() - t0,
                     budget_hit=over, engine_checks=checked, goal=goal, advice=advice, finding=aim)


def _search_one(prog: Program, model: Model, unroll: int, f: Finding, findings, singles, budget_s, bound,
                least: int):
    """The solutions removing ``f`` (the first size found), the candidates checked, whether the
    bound and the budget were hit (at least ``least`` checked whatever the budget)."""
    t0 = time.perf_counter()
    rank = ranker(prog, [f, *[g for g in findings if g is not f]])
    checked, found, size, seen = 0, [], 0, set()
    for cs in _combos(singles, rank):
        if (found and len(cs) != size) or frozenset(cs) in seen or not compatible(cs):
            continue
        seen.add(frozenset(cs))
        if checked >= bound:
            return found, checked, True, False
        if budget_s is not None and time.perf_counter() - t0 > budget_s and checked >= least:
            return found, checked, False, True
        checked += 1
        before = findings if any(c.kind == "guard" for c in cs) else None  # a new statement: no new finding
        if removes(applied(prog, cs), model, unroll, f, before):
            found.append(Solution(tuple(cs), sum(c.cost for c in cs)))
            size = len(cs)
    return found, checked, False, False


_CU_RE = re.compile(r"([\w.+-]+\.cu):(\d+)")


def _cuda_at(e) -> str:
    """An event's CUDA place (``k.cu:27``), else its PTX line."""
    m = _CU_RE.search(e.text or "")
    return f"{m.group(1)}:{m.group(2)}" if m else f"PTX line {e.line}"


def _advice(f: Finding, races, singles, wait_of=lambda race: None) -> str | None:
    """Where no edit tried removes the finding: the finding's CUDA line and why no single edit
    does (said, not checked: what the search tried is named, the missing edit is not invented;
    ``wait_of``: a race's missing mbarrier wait, :func:`missing_wait`)."""
    at = next((e.text for e in f.events if e.text), None)
    tried = {c.kind for c in singles}
    if f.kind == FindingKind.OUT_OF_BOUNDS and at and "guard" not in tried:
        where, _, code = at.partition(" ")  # "k.cu:27 out[t + 1] = v;"
        return (f"{where}: an out-of-bounds access is no ordering bug: keep the index in `{code}` within "
                "its buffer, or guard the access (no such edit is checked: its buffer is not known)")
    where = _cuda_at(f.events[0]) if f.events else "?"
    why = []
    if "guard" in tried:
        why.append("a bound check before the access was checked and leaves it")
    if "split" in tried:
        why.append("splitting the vector accesses around a flag element (PTX ISA 8.2.4) was checked and "
                   "leaves it")
    race = next((r for r in races if len(r.events) == 2), None)
    if race is not None:
        w = next((e for e in race.events if e.text.lstrip().startswith(("st", "atom", "red"))),
                 race.events[0])
        r = next(e for e in race.events if e is not w)
        wait = wait_of(race)
        why.append(f"its race is left: no change checked orders `{r.short()}` before `{w.short()}` — " + (
            wait or f"what is missing is a wait (a barrier, an mbarrier wait, a flag) that holds the access "
                    f"at {_cuda_at(w)} back until the other is done (no such edit is made here)"))
    elif not why:
        why.append("no strengthening, scope, fence, split or bound check tried removes it")
    return f"no single edit found for {where}: " + "; ".join(why)


def findings_fix(prog: Program, model: Model, findings, *, unroll: int = 2, budget_s: float | None = 9.0,
                 bound: int = 400) -> FixReport:
    """``explain --fix`` on a kernel without a condition (nothing to forbid but its findings): the
    fixes of its first finding (:func:`search`); where it has no finding, a report that says
    there is nothing to fix."""
    found = search(prog, model, unroll=unroll, budget_s=budget_s, bound=bound, findings=tuple(findings))
    if found is None:
        return FixReport((), 0, 0, bound, False, 3, 0.0, goal="a finding (the check finds none)",
                         advice="nothing to fix: no race, failing assertion, out-of-bounds access or hang")
    return found


def _wait_fix(prog: Program, model: Model, unroll: int, f: Finding, findings, race):
    """The missing mbarrier wait of ``race`` as a fix of ``f`` (waitfix.py): (the solution, None)
    when its parities are derived and the check says it removes ``f`` with no new race or hang;
    else (None, why): "none" where the program shows no missing wait, the reason no parity is
    derived, or what the check of the waits found."""
    from .waitfix import change_of, plan_of

    plan = None if race is None else plan_of(prog, race, unroll)
    if plan is None:
        return None, "none"
    if not plan.sites:
        return None, f"not checked: {plan.reason}"
    c = change_of(prog, plan)
    found = wait_judged(prog, model, unroll, c, f, findings)
    if found is not None:
        pars = ", ".join(str(s.parity) for s in plan.sites)
        return None, f"the derived waits (parities {pars}) were checked and are no fix: {found}"
    return Solution((c,), c.cost), None


def wait_judged(prog: Program, model: Model, unroll: int, c, f: Finding, findings) -> str | None:
    """Whether the waits of ``c`` (waitfix.WaitChange) fix ``f``: None when they do (the check of
    the changed kernel: ``f`` gone and no new finding of its property, no new race, no new hang,
    and the condition's outcome forbidden where the kernel has one: fixjudge's verdict query);
    else what the check found."""
    from ..queries.hangs import find_hangs
    from .fixjudge import Judge
    from .targets import target_of

    fixed = applied(prog, (c,))
    if not removes(fixed, model, unroll, f, findings):
        return f"the kernel with the waits still has {f.kind} (or a new one)"
    old = {_key(g) for g in findings_of(prog, model, unroll, "races")}
    if not {_key(g) for g in findings_of(fixed, model, unroll, "races")} <= old:
        return "the kernel with the waits has a new race"
    hangs = {_key(h.finding) for h in find_hangs(prog, model, unroll, every=False)}
    if not {_key(h.finding) for h in find_hangs(fixed, model, unroll, every=False)} <= hangs:
        return "the kernel with the waits can hang where it could not"
    if prog.condition is not None and not Judge(fixed, model, target_of(fixed, None), unroll).forbids():
        return "the kernel with the waits still allows its condition's outcome"
    return None


def missing_wait(prog: Program, race: Finding, unroll: int = 2, why: str | None = None) -> str | None:
    """The wait a race lacks, where the program shows it: after its read, the reading thread
    arrives on an mbarrier (the signal "done with it": PTX ISA, mbarrier.arrive has release
    semantics) that the writing thread never waits on before its write (waitfix.plan_of). Said as
    the edit at the writer's CUDA line — a wait on that mbarrier before it, for the phase that
    arrive completes — with ``why`` it is not proposed as a checked fix (:func:`_wait_fix`: no
    parity derived, or the check of the derived waits failed). None where the program shows no
    such arrive, or the writer does wait on it (another wait is missing)."""
    from .waitfix import plan_of

    plan = plan_of(prog, race, unroll)
    if plan is None:
        return None
    at_arrive, at_write = plan.arrive_at, plan.write_at
    wname = prog.threads[plan.writer].name
    rname = prog.threads[plan.reader].name
    why = why or ("not checked: " + plan.reason if plan.reason else "not checked here")
    return (f"the wait that is missing is one on the mbarrier {plan.mbar} that {rname} arrives on after "
            f"its read ({_file(at_arrive)}:{at_arrive[1]} `{at_arrive[2]}`) and {wname} never waits on: "
            f"insert, in {wname} before line {at_write[1]} `{at_write[2]}`, a wait on that mbarrier for the "
            f"phase that arrive completes (mbarrier.try_wait.parity; {why})")


def _file(at) -> str:
    return at[0].rsplit("/", 1)[-1]


__all__ = ["applied", "everywhere", "findings_fix", "findings_of", "missing_wait", "removes", "search",
           "target", "wait_judged"]
