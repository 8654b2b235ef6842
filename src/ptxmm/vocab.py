"""The base vocabulary every model gets (names follow the Dat3M PTX cat files where they exist).

Sets: ``_`` (all events) R W M F B IW RMW RedR, semantics WEAK RLX ACQ REL ACQ_REL SC, volatile
VOL, scopes CTA CLUSTER GPU SYS, proxies GEN (memory operations, memory fences, barriers) and
PROXY/ALIAS (proxy fences).
Relations: po rmw addr data ctrl, loc (same physical location) vloc (same virtual address), int ext,
sr (strong pair whose scopes include each other's thread), scta scluster sgpu (same CTA/cluster/GPU),
rf co fr (existential; co is a strict partial order per location, initial write first),
scorder (existential strict total order on fence.sc events), sync_fence (= scorder between SC
fences in the same thread or mutually in scope), sync_barrier (barrier arrive → same-instance wait).

Every element is guarded by the execution of its events, so a model never sees an event that did
not run. A :class:`Choice` supplies the existential parts: Z3 variables for the SMT engine, fixed
booleans for a concrete candidate execution."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .cat.relalg import ESet, Guard, Rel, g_and, g_not
from .events import Event, EventGraph
from .program import SCOPES
from .values import Expr, mk

SEM_TAG = {"weak": "WEAK", "relaxed": "RLX", "acquire": "ACQ", "release": "REL",
           "acq_rel": "ACQ_REL", "sc": "SC"}
SCOPE_TAG = {"cta": "CTA", "cluster": "CLUSTER", "gpu": "GPU", "sys": "SYS"}
_LEVEL = {"thread": -1, **{s: i for i, s in enumerate(SCOPES)}}


class Choice(Protocol):
    def exec(self, e: int) -> Guard: ...
    def rf(self, w: int, r: int) -> Guard: ...
    def co(self, a: int, b: int) -> Guard: ...
    def sc(self, f: int, g: int) -> Guard: ...
    def cond(self, e: Expr) -> Guard: ...
    def phase(self, arrive: int): ...


@dataclass
class Candidates:
    """Which existential pairs can be non-false at all (computed once per event graph)."""

    rf: list[tuple[int, int]] = field(default_factory=list)
    co: list[tuple[int, int]] = field(default_factory=list)
    scf: list[int] = field(default_factory=list)
    writes_at: dict[str, list[int]] = field(default_factory=dict)


def exclusive(a: Event, b: Event) -> bool:
    """Two events of one thread on disjoint sets of paths never run together."""
    return a.thread == b.thread and a.thread >= 0 and not (a.paths & b.paths)


def candidates(eg: EventGraph) -> Candidates:
    c = Candidates()
    ev = eg.events
    for e in ev:
        if e.kind == "W":
            c.writes_at.setdefault(e.ploc, []).append(e.eid)
    for r in ev:
        if r.kind == "R":
            for w in c.writes_at.get(r.ploc, []):
                if not exclusive(r, ev[w]):
                    c.rf.append((w, r.eid))
    for ws in c.writes_at.values():
        for a in ws:
            for b in ws:
                if a != b and "IW" not in ev[b].tags and not exclusive(ev[a], ev[b]):
                    c.co.append((a, b))
    c.scf = [e.eid for e in ev if e.kind == "F" and e.sem == "sc"]
    return c


def level(eg: EventGraph, a: Event, b: Event) -> str:
    if a.thread == b.thread:
        return "thread"
    pa = eg.program.threads[a.thread].placement
    pb = eg.program.threads[b.thread].placement
    return pa.level_with(pb)


def in_scope(eg: EventGraph, a: Event, b: Event) -> bool:
    """Both events strong and each one's scope includes the other's thread."""
    if a.thread < 0 or b.thread < 0 or a.scope is None or b.scope is None:
        return False
    lv = _LEVEL[level(eg, a, b)]
    return lv <= _LEVEL[a.scope] and lv <= _LEVEL[b.scope]


class LazyEnv(dict):
    """The base environment: an entry is computed on first use (a model names only some)."""

    def __init__(self) -> None:
        super().__init__()
        self.later: dict = {}

    def __missing__(self, k):
        f = self.later.pop(k, None)
        if f is None:
            raise KeyError(k)
        v = self[k] = f()
        return v

    def __contains__(self, k) -> bool:
        return dict.__contains__(self, k) or k in self.later

    def names(self) -> list[str]:
        return list(self.keys()) + list(self.later)


def base_env(eg: EventGraph, ch: Choice, cand: Candidates) -> dict:
    ev = eg.events
    n = len(ev)
    ex = [ch.exec(i) for i in range(n)]

    def eset(pred) -> ESet:
        return ESet({e.eid: ex[e.eid] for e in ev if pred(e)})

    both: dict[tuple[int, int], Guard] = {}  # "both executed", shared by every static relation

    def pairs(pred, among=None) -> Rel:
        among = among if among is not None else ev
        out = {}
        for a in among:
            for b in among:
                if pred(a, b):
                    k = (a.eid, b.eid)
                    g = both.get(k)
                    if g is None:
                        g = both[k] = False if exclusive(a, b) else g_and(ex[a.eid], ex[b.eid])
                    if g is not False:
                        out[k] = g
        return Rel(out)

    def edges(label: str) -> Rel:
        return Rel({(a, b): g_and(ex[a], ex[b]) for a, b in eg.edges(label)})

    mem = [e for e in ev if e.kind in "RW"]
    threaded = [e for e in ev if e.thread >= 0]
    place = [t.placement for t in eg.program.threads]
    env = LazyEnv()
    lazy = env.later
    lazy.update({
        "_": lambda: eset(lambda e: True),
        "R": lambda: eset(lambda e: e.kind == "R"),
        "W": lambda: eset(lambda e: e.kind == "W"),
        "M": lambda: eset(lambda e: e.kind in "RW"),
        "F": lambda: eset(lambda e: e.kind == "F"),
        "B": lambda: eset(lambda e: e.kind == "B"),
        "IW": lambda: eset(lambda e: "IW" in e.tags),
        "RMW": lambda: eset(lambda e: bool({"RMW_R", "RMW_W"} & e.tags)),
        "RedR": lambda: eset(lambda e: "RedR" in e.tags),
        "VOL": lambda: eset(lambda e: "VOL" in e.tags),
        "GEN": lambda: eset(lambda e: e.kind in "RWB" or (e.kind == "F" and "PROXY" not in e.tags)),
        "PROXY": lambda: eset(lambda e: "PROXY" in e.tags),
        "ALIAS": lambda: eset(lambda e: "ALIAS" in e.tags),
    })
    for sem, tag in SEM_TAG.items():
        lazy[tag] = lambda s=sem: eset(lambda e: e.sem == s and e.thread >= 0)
    for sc, tag in SCOPE_TAG.items():
        lazy[tag] = lambda s=sc: eset(lambda e: e.scope == s)
    for label in ("po", "rmw", "addr", "data", "ctrl"):
        lazy[label] = lambda lb=label: edges(lb)
    lazy["loc"] = lambda: pairs(lambda a, b: a.ploc == b.ploc, mem)
    lazy["vloc"] = lambda: pairs(lambda a, b: a.loc == b.loc, mem)
    lazy["int"] = lambda: pairs(lambda a, b: a.thread == b.thread, threaded)
    lazy["ext"] = lambda: pairs(lambda a, b: a.thread != b.thread or a.thread < 0 and a.eid != b.eid)
    lazy["sr"] = lambda: pairs(lambda a, b: in_scope(eg, a, b), threaded)
    lazy["scta"] = lambda: pairs(lambda a, b: place[a.thread].cta_key == place[b.thread].cta_key,
                                 threaded)
    lazy["scluster"] = lambda: pairs(
        lambda a, b: place[a.thread].cluster_key == place[b.thread].cluster_key, threaded)
    lazy["sgpu"] = lambda: pairs(lambda a, b: place[a.thread].gpu == place[b.thread].gpu, threaded)
    rf = Rel({(w, r): ch.rf(w, r) for w, r in cand.rf})
    co = Rel({(a, b): ch.co(a, b) for a, b in cand.co})
    for w in eg.init.values():  # the initial write is co-before every write of its location
        for b in cand.writes_at.get(ev[w].ploc, []):
            if b != w:
                co.m[(w, b)] = ex[b]
    env["rf"] = rf
    env["co"] = co
    lazy["fr"] = lambda: _fr(rf, co)
    sc = Rel({(f, g): ch.sc(f, g) for f in cand.scf for g in cand.scf if f != g})
    env["scorder"] = sc
    lazy["sync_fence"] = lambda: sc & (env["sr"] | env["int"])
    lazy["sync_barrier"] = lambda: _sync_barrier(eg, ex, ch)
    lazy["QUORUM_UNMET"] = lambda: _quorum_unmet(eg, ex, ch)
    return env


def _fr(rf: Rel, co: Rel) -> Rel:
    fr = rf.inverse().seq(co)
    return Rel({k: g for k, g in fr.m.items() if k[0] != k[1]})


def _same_barrier(eg: EventGraph, a: Event, w: Event, ex: list[Guard], ch: Choice) -> Guard:
    """a and w belong to barriers of one CTA with equal operands (compared by value)."""
    place = [t.placement for t in eg.program.threads]
    if place[a.thread].cta_key != place[w.thread].cta_key or len(a.barrier[0]) != len(w.barrier[0]):
        return False
    g = g_and(ex[a.eid], ex[w.eid])
    for x, y in zip(a.barrier[0], w.barrier[0]):
        g = g_and(g, ch.cond(mk("eq", x, y)))
    return g


def _same_phase(a: Event, b: Event, ch: Choice) -> Guard:
    """Same barrier phase: the k-th arrival of each thread, or — for barriers with a thread
    count, when the engine chooses phases (Z3) — the same chosen phase."""
    pa, pb = ch.phase(a.eid), ch.phase(b.eid)
    if pa is None or pb is None:
        return a.barrier[2] == b.barrier[2]
    return pa == pb


def _arrive_of(eg: EventGraph, w: Event) -> Event:
    return eg.events[w.eid - 1]  # a wait is created right after its own arrive


def _complete(eg: EventGraph, w: Event, ex: list[Guard], ch: Choice) -> Guard:
    """Whether the phase of wait w (thread count q) gets its q arrivals."""
    q = w.barrier[1]
    if q is None:
        return True
    arr = []
    for a in eg.events:
        if a.kind == "B" and "ARRIVE" in a.tags:
            g = g_and(_same_barrier(eg, a, w, ex, ch), _same_phase(a, _arrive_of(eg, w), ch))
            if g is not False:
                arr.append(g)
    if all(g is True for g in arr):
        return len(arr) >= q if ch.phase(w.eid - 1) is None else len(arr) == q
    import z3

    total = z3.Sum([z3.If(g, 1, 0) if g is not True else z3.IntVal(1) for g in arr])
    return (total >= q) if ch.phase(w.eid - 1) is None else (total == q)


def _quorum_unmet(eg: EventGraph, ex: list[Guard], ch: Choice) -> ESet:
    """Waits whose phase never gets its thread count, with something after them in their thread:
    that thread hangs there (a thread blocked at its very last instruction has finished its
    work, and such executions count, as in Dat3M)."""
    out: dict[int, Guard] = {}
    po_src = {a for a, _ in eg.edges("po")}
    for w in eg.events:
        if w.kind != "B" or "WAIT" not in w.tags or w.barrier[1] is None:
            continue
        later = [b for a, b in eg.edges("po") if a == w.eid] if w.eid in po_src else []
        if not later:
            continue
        after = ESet({b: ex[b] for b in later})
        g = g_and(ex[w.eid], g_not(_complete(eg, w, ex, ch)))
        from .cat.relalg import g_any

        g = g_and(g, g_any(after.m.values()))
        if g is not False:
            out[w.eid] = g
    # chosen phases must fill in arrival order: at most q arrivals in a phase, and a phase
    # p > 0 only once phase p-1 has its q arrivals
    import z3

    for a in eg.events:
        pa = ch.phase(a.eid) if a.kind == "B" and "ARRIVE" in a.tags else None
        if pa is None:
            continue
        q = a.barrier[1]
        same, prev = [], []
        for b in eg.events:
            pb = ch.phase(b.eid) if b.kind == "B" and "ARRIVE" in b.tags else None
            if pb is None:
                continue
            g = _same_barrier(eg, b, a, ex, ch)
            if g is False:
                continue
            gb = g if g is not True else z3.BoolVal(True)
            same.append(z3.If(z3.And(gb, pb == pa), 1, 0))
            prev.append(z3.If(z3.And(gb, pb == pa - 1), 1, 0))
        bad = z3.Or(z3.Sum(same) > q, z3.And(pa > 0, z3.Sum(prev) != q))
        out[a.eid] = g_and(ex[a.eid], bad)
    return ESet(out)


def _sync_barrier(eg: EventGraph, ex: list[Guard], ch: Choice) -> Rel:
    """Barrier synchronisation (§5.1): the arrive event of a barrier synchronizes with the wait
    event of every other thread of the same CTA at the same barrier phase, when that phase
    completes."""
    bars = [e for e in eg.events if e.kind == "B"]
    out = {}
    for a in bars:
        if "ARRIVE" not in a.tags:
            continue
        for b in bars:
            if "WAIT" not in b.tags or a.thread == b.thread:
                continue
            g = _same_barrier(eg, a, b, ex, ch)
            g = g_and(g, _same_phase(a, _arrive_of(eg, b), ch))
            g = g_and(g, _complete(eg, b, ex, ch)) if g is not False else False
            if g is not False:
                out[(a.eid, b.eid)] = g
    return Rel(out)
