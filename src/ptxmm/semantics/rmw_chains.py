"""RMW chains: locations written only by morally strong read-modify-writes (a counter bumped by
``atomicAdd``, a bin of a histogram, a grid barrier's arrival count with its ``atomicExch`` reset —
the Z3 engine takes chains with writes that may not execute, like that reset, only with its
counting lemmas, engines/z3/chains.COUNTING),
whose candidate executions a model with PTX's coherence and atomicity axioms orders as one chain.

On such a location every two writes are morally strong, so Coherence-ms (PTX ISA 8.10.1, "morally
strong overlapping writes are always co-related") makes ``co`` a total order of its executed writes
after the initial write; and each RMW's read is morally strong with every write, so Atomicity (8.10.3,
``rmw & ((fr & ms) ; (co & ms))`` empty) makes it read the write immediately co-before its own
write (the initial write when its write is co-first). An execution is then fixed on the location by
the order of its RMWs: an encoding may give each write a position (a permutation of the executed
ones), derive ``co`` as "earlier position" and each RMW read's ``rf`` as "the write one position
earlier", and drop the generic rf/co choices, their well-formedness and co's transitivity — the
candidates it leaves out are exactly those the two axioms reject.

Two things are checked here, engine-blind:

* :func:`orders_chains`: the model states those axioms over the ``ms`` and ``fr`` of
  ``models/ptx-common.cat`` (compared as syntax: each name bound once, to the same expression, and
  the base names not rebound), so a user's model that weakens either keeps the generic encoding;
* :func:`chains`: the locations whose events qualify — every write other than the initial one is
  the write of an RMW whose read is on the same location, executes exactly when its read does (no
  ``atom.cas``: its write is conditional), and every two of those reads and writes are morally
  strong as ``ms`` defines it (strong, of one proxy, one virtual location, each one's scope
  including the other's thread). Plain reads of the location are allowed: their rf stays generic.

``queries.checker.RMW_CHAINS = False`` switches the reduction off in the check's problem,
``queries.hangs.CHAINS = False`` in the liveness problem (the property tests compare each with the
plain encoding)."""

from __future__ import annotations

from functools import cache

from .._infra.records import record
from ..cat import ast
from .events import EventGraph, Kind
from .vocab import _LEVEL, _level

# the definitions the two axioms are stated over (models/ptx-common.cat) and the axioms
# (models/ptx.cat, ptx-v7.5.cat, ptx-v6.0.cat)
_REFERENCE = r"""
let fr = (rf^-1 ; co) \ id
let Fm = F \ PROXY
let Strong = Fm | (M & (RLX | ACQ | REL | ACQ_REL))
let same-proxy = (GEN * GEN) | (TEX * TEX) | (SUR * SUR) | (CON * CON) | (ASYNC * ASYNC)
let ms-scope = int | ([Strong] ; sr ; [Strong])
let ms = (ms-scope & same-proxy & (vloc | ((_ * _) \ (M * M)))) \ id
empty ((([W] ; ms ; [W]) & loc) \ (co | co^-1)) as Coherence-ms
empty (rmw & ((fr & ms) ; (co & ms))) as Atomicity
"""
# base names the reference reads: a model that rebinds one means something else by it
_BASE = ("rf", "co", "id", "F", "PROXY", "M", "RLX", "ACQ", "REL", "ACQ_REL", "GEN", "TEX", "SUR", "CON",
         "ASYNC", "int", "sr", "vloc", "_", "W", "loc", "rmw")
_STRONG = frozenset({"relaxed", "acquire", "release", "acq_rel"})
_PROXIES = ("GEN", "TEX", "SUR", "CON", "ASYNC")


@record
class Chain:
    """One location's RMWs: ``pairs`` (read, write) event ids, ``init`` its initial write."""

    loc: str
    init: int
    pairs: tuple[tuple[int, int], ...]

    @property
    def writes(self) -> tuple[int, ...]:
        return tuple(w for _, w in self.pairs)


@cache
def _reference() -> tuple[dict[str, ast.Expr], tuple[tuple[str, ast.Expr], ...]]:
    from ..cat.parser import parse_stmts

    lets: dict[str, ast.Expr] = {}
    axioms = []
    for st in parse_stmts(_REFERENCE, "<rmw-chains>"):
        if isinstance(st, ast.Let):
            lets.update(zip(st.names, st.exprs))
        else:
            axioms.append((st.check, st.expr))
    return lets, tuple(axioms)


def orders_chains(model) -> bool:
    """Whether ``model`` (a :class:`~ptxmm.cat.parser.Model`) states Coherence-ms and Atomicity over
    ptx-common.cat's ``ms`` and ``fr``, with none of the names they read bound otherwise."""
    lets, axioms = _reference()
    bound: dict[str, list[ast.Expr]] = {}
    stated = set()
    for st in model.stmts:
        if isinstance(st, (ast.Let, ast.LetRec)):
            for name, expr in zip(st.names, st.exprs):
                bound.setdefault(name, []).append(expr if isinstance(st, ast.Let) else None)
        elif isinstance(st, ast.Axiom):
            stated.add((st.check, st.expr))
    if any(name in bound for name in _BASE):
        return False
    if any(bound.get(name) != [expr] for name, expr in lets.items()):
        return False
    return all(a in stated for a in axioms)


def chains(eg: EventGraph) -> dict[str, Chain]:
    """The locations of ``eg`` whose every write but the initial one is a morally strong RMW's,
    each with its RMWs (at least two: one RMW has no order to choose)."""
    ev = eg.events
    rmw_of = {w: r for r, w in eg.edges.get("rmw", ())}
    by_loc: dict[str, list[int]] = {}
    for e in ev:
        if e.thread >= 0 and e.kind in (Kind.R, Kind.W) and e.loc is not None:
            by_loc.setdefault(e.loc, []).append(e.eid)
    out = {}
    for loc, ids in by_loc.items():
        init = eg.init.get(loc)
        if init is None:
            continue
        pairs = []
        for w in ids:
            if ev[w].kind != Kind.W:
                continue
            r = rmw_of.get(w)
            if r is None or "RMW_W" not in ev[w].tags or ev[r].loc != loc \
                    or not _same_execution(ev[r], ev[w]):
                break
            pairs.append((r, w))
        else:
            members = [x for p in pairs for x in p]
            if len(pairs) >= 2 and _pairwise_ms(eg, members):
                out[loc] = Chain(loc, init, tuple(pairs))
    return out


def _same_execution(r, w) -> bool:
    """The RMW's write executes exactly when its read does (not a CAS, whose write is conditional)."""
    return r.cond == w.cond and r.paths == w.paths and r.thread == w.thread


def _pairwise_ms(eg: EventGraph, members: list[int]) -> bool:
    """Every two of ``members`` morally strong as ptx-common.cat's ``ms`` defines it: strong
    (``int`` not relied on), of one proxy, one virtual location, and (``sr``) each one's scope
    including the other's site."""
    ev = [eg.events[i] for i in members]
    proxies = {next((p for p in _PROXIES if p in e.tags), None) for e in ev}
    if len(proxies) != 1 or None in proxies or len({e.vloc for e in ev}) != 1:
        return False
    if any(e.sem not in _STRONG or e.scope not in _LEVEL for e in ev):
        return False
    narrowest: dict[tuple, int] = {}  # site → the narrowest scope level of its events
    for e in ev:
        site = (e.thread, e.at)
        narrowest[site] = min(narrowest.get(site, 99), _LEVEL[e.scope])
    sites = list(narrowest)
    for i, sa in enumerate(sites):
        for sb in sites[i + 1:]:
            if _level(eg, sa, sb) > min(narrowest[sa], narrowest[sb]):
                return False
    return True


__all__ = ["Chain", "chains", "orders_chains"]
