"""Litmus names as diy7 gives them: the family of the cycle (``MP``, ``SB``, ``IRIW``, …, from the
directions of each thread's first and last access, the rotation diy7's normaliser picks), then one
descriptor per thread with program-order edges (``po``, ``fence.sc.gpu``, ``addr``…; ``MP+po+addr``;
when every descriptor is the same, one plural: ``SB+fence.sc.gpus``). PTX annotations that are not
the default (relaxed .gpu) join the descriptor of their thread, and a placement other than one CTA
per thread ends the name (``+cta0.0.1``: the CTA of each thread; ``+cl0.0.1``: its cluster)."""

from __future__ import annotations

from .cycle import Litmus, Thread
from .edges import DEFAULT_ANN

# diy7's order of thread shapes (normaliser.ml): a lone write first, a lone read last
_ORDER = ("W", "WW", "RR", "RW", "WR", "R")

# diy7's family names, keyed by the normalised thread shapes
FAMILIES = {
    "WW": "CoWW", "RW": "CoRW1", "W+RW": "CoRW2", "W+WR": "CoWR", "W+RR": "CoRR", "WR": "CoWR0",
    "WW+RR": "MP", "WR+WR": "SB", "WR+WR+WR": "3.SB", "WR+WR+WR+WR": "4.SB", "W+RW+RR": "WRC",
    "W+RR+WR": "RWC", "RW+RW": "LB", "RW+RW+RW": "3.LB", "RW+RW+RW+RW": "4.LB", "WW+WR": "R",
    "W+RW+WR": "WRW+WR", "W+RR+WW": "WRR+2W", "WW+RW": "S", "W+RW+RW": "WWC", "WW+WW": "2+2W",
    "WW+WW+WW": "3.2W", "WW+WW+WW+WW": "4.2W", "W+RW+WW": "WRW+2W", "WW+RR+WR": "W+RWC",
    "WW+RW+RR": "ISA2", "W+RR+W+RR": "IRIW", "W+RR+W+RW": "IRRWIW", "W+RW+W+RR": "IRRWIW",
    "W+RW+W+RW": "IRWIW", "WW+RW+WR": "Z6.0", "WW+WW+RW": "Z6.1", "WW+RW+RW": "Z6.2",
    "WW+WW+RR": "Z6.3", "WW+WR+WR": "Z6.4", "WW+WW+WR": "Z6.5",
}


def _points(t: Thread) -> str:
    a = t.accesses
    return a[0].dir if len(a) == 1 else a[0].dir + a[-1].dir


def family_key(threads: tuple[Thread, ...], same_loc_only: bool = False) -> tuple[str, int]:
    """The shapes joined by ``+`` in their normal rotation, and the first thread of that rotation."""
    pts = [_points(t) for t in threads]
    n = len(pts)
    best = min(range(n), key=lambda r: [_ORDER.index(p) for p in pts[r:] + pts[:r]])
    return "+".join(pts[best:] + pts[:best]), best


def family(test: Litmus) -> str:
    key, _ = family_key(test.threads)
    name = FAMILIES.get(key, key)
    if name.startswith("Co") and test.n_locs > 1:
        return key
    return name


def _descriptor(t: Thread) -> str:
    parts = []
    for k, a in enumerate(t.accesses):
        if a.ann != DEFAULT_ANN:
            parts.append(a.ann.short())
        if k < len(t.links):
            lk = t.links[k]
            parts.append(lk.tag or ("po" if lk.kind == "po" else f"fence.{lk.fence[0]}.{lk.fence[1]}"
                                    if lk.kind == "fence" else lk.dep))
    return "-".join(parts)


def name_of(test: Litmus) -> str:
    key, r = family_key(test.threads)
    ths = test.threads[r:] + test.threads[:r]
    descs = [_descriptor(t) for t in ths]
    shown = [d for t, d in zip(ths, descs) if len(t.accesses) > 1 or d]
    if len(shown) > 1 and len(set(shown)) == 1:
        shown = [shown[0] + "s"]
    name = "+".join([family(test), *shown])
    places = [t.place for t in ths]
    if any(p.cluster is not None for p in places):
        name += "+cl" + ".".join(str(p.cluster) for p in places)
    if [p.cta for p in places] != list(range(len(places))) or any(p.cluster is not None
                                                                    for p in places):
        name += "+cta" + ".".join(str(p.cta) for p in places)
    return name
