"""A cycle of edges becomes a litmus test whose condition observes the cycle (diy7's construction).

The cycle is cut into threads after each communication edge; locations change on every
different-location edge (``Pod``, ``Fence.…d``, ``Dp…d``) and each run of same-location edges gets
a fresh location; on each location the writes take the values 1, 2, … in cycle order (so coherence
follows the cycle), each read is expected to see the last write before it on that location (0, the
initial value, if none), and a location written twice or more is observed finally (its last
value). A cycle on one location only is cut at a same-location program-order edge (``Pos``): that
is the edge the test's outcome contradicts (CoRR, CoWW, …)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .edges import DEFAULT_ANN, Ann, Edge, EdgeError, rmw_ends_fit

LOC_NAMES = ("x", "y", "z", "a", "b", "c", "d", "e", "f", "g", "h", "i")


@dataclass(frozen=True, order=True)
class Access:
    dir: str  # R or W
    loc: int
    value: int  # W: the value written; R: the value the condition expects
    ann: Ann


@dataclass(frozen=True, order=True)
class Link:
    """What stands between two consecutive accesses of a thread (an internal edge)."""
    kind: str  # po fence dep rmw (the two accesses are one atom)
    fence: tuple[str, str] | None = None
    dep: str | None = None  # addr data ctrl; rmw: exch cas add
    # the edge's name in a test name where it is not the kind's (rfi fri coi: program order on one
    # location, as the test is written; not part of the test's identity)
    tag: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True, order=True)
class Place:
    cta: int
    cluster: int | None = None  # None: the CTA's implicit cluster


@dataclass(frozen=True)
class Thread:
    accesses: tuple[Access, ...]
    links: tuple[Link, ...]
    place: Place


@dataclass(frozen=True)
class Litmus:
    name: str
    cycle: str  # the edges, as text
    threads: tuple[Thread, ...]
    finals: tuple[tuple[int, int], ...]  # (location, value) observed at the end
    n_locs: int

    @property
    def size(self) -> int:
        return sum(len(t.accesses) for t in self.threads)


def link_of(e: Edge) -> Link:
    if e.kind in ("rf", "fr", "co"):  # internal: program order, observed by the values
        return Link("po", tag=e.tag())
    return Link(e.kind, e.fence, e.dep)


def check_shape(edges: list[Edge], nprocs: int | None = None) -> None:
    """Raise EdgeError unless the cycle can be a test: directions chain, at least two
    communication edges, every access on a location some neighbouring edge shares."""
    n = len(edges)
    if n < 2:
        raise EdgeError("a cycle needs at least two edges", None, "e.g. Rfe PodRR Fre PodWW")
    for i, e in enumerate(edges):
        nxt = edges[(i + 1) % n]
        if e.dst != nxt.src:
            raise EdgeError(f"{e} ends at a {e.dst} but {nxt} starts at a {nxt.src}", None,
                            "consecutive edges must meet at one access")
        if not (e.same_loc or nxt.same_loc):
            raise EdgeError(f"the access between {e} and {nxt} shares its location with neither "
                            "neighbour", None, "it cannot take part in the cycle")
    n_ext = sum(e.ext for e in edges)
    if n_ext < 2:
        raise EdgeError("a cycle needs at least two communication edges (Rfe Fre Coe)", None,
                        "each thread is entered by one")
    if nprocs is not None and n_ext > nprocs:
        raise EdgeError(f"{n_ext} threads, more than {nprocs}", None, "raise --nprocs")
    if sum(not e.same_loc for e in edges) == 1:
        raise EdgeError("exactly one edge changes location: the cycle cannot close", None,
                        "use none or at least two")


def annotations(edges: list[Edge]) -> list[Ann | None]:
    """Per access (the access after edge i is i+1, access 0 after the last edge): its annotation as
    the edges fix it, None where neither says; EdgeError where the two disagree."""
    n = len(edges)
    out: list[Ann | None] = []
    for i in range(n):
        a, b = edges[i - 1].ann[1], edges[i].ann[0]
        if a is not None and b is not None and a != b:
            raise EdgeError(f"{edges[i - 1]} and {edges[i]} annotate their access differently", None,
                            "the target annotation of an edge is the source one of the next")
        out.append(a or b)
    for i, e in enumerate(edges):
        if e.kind == "rmw" and out[i] is not None and out[(i + 1) % n] is not None:
            why = rmw_ends_fit(out[i], out[(i + 1) % n])
            if why:
                raise EdgeError(f"{edges[i - 1]} {e} {edges[(i + 1) % n]}: {why}", None,
                                "annotate the read R or A, the write R or L, at one scope")
    return out


def validate(edges: list[Edge]) -> list[Ann | None]:
    """The accesses' annotations (:func:`annotations`), or EdgeError where the edges cannot be
    written: an address dependency into a texture, surface or constant access (PTX names those
    through their reference or bank, never a register)."""
    anns = annotations(edges)
    for i, e in enumerate(edges):
        a = anns[(i + 1) % len(edges)]
        if e.kind == "dep" and e.dep == "addr" and a is not None and a.proxy in (
                "texture", "surface", "constant"):
            raise EdgeError(f"{e}: a {a.proxy} access has no register address", None,
                            "use DpCtrl or DpData, or a generic access")
    return anns


def _start(edges: list[Edge]) -> int:
    """Index of the access the values start from: after a location change, or for a one-location
    cycle after a Pos edge (the contradicted program order)."""
    n = len(edges)
    for i in range(n):
        if not edges[i - 1].same_loc:
            return i
    for i in range(n):
        if edges[i - 1].kind in ("po", "fence", "dep"):
            return i
    raise EdgeError("a cycle on one location needs a program-order edge (PosXY)", None,
                    "coherence is contradicted along it")


def build(edges: list[Edge], anns: list[Ann], places: tuple[Place, ...], name: str = "") -> Litmus:
    """The test of a cycle whose first edge starts a thread (the last edge is a communication)."""
    n = len(edges)
    s = _start(edges)
    locs = [0] * n
    values = [0] * n
    loc, last_w, written = -1, {}, {}
    for k in range(n):
        i = (s + k) % n
        if k == 0 or not edges[i - 1].same_loc:
            loc += 1
        locs[i] = loc
        if edges[i].src == "W":
            written[loc] = written.get(loc, 0) + 1
            values[i] = last_w[loc] = written[loc]
        else:
            values[i] = last_w.get(loc, 0)
    n_locs = max(loc + 1, 1)
    threads, cur, links = [], [], []
    for i, e in enumerate(edges):
        cur.append(Access(e.src, locs[i], values[i], anns[i]))
        if e.ext:
            threads.append((tuple(cur), tuple(links)))
            cur, links = [], []
        else:
            links.append(link_of(e))
    finals = tuple(sorted((lc, w) for lc, w in written.items() if w >= 2))
    ths = tuple(Thread(a, lk, places[t]) for t, (a, lk) in enumerate(threads))
    return Litmus(name, " ".join(map(str, edges)), ths, finals, n_locs)


def rotate_to_thread_start(edges: list[Edge]) -> list[Edge]:
    """The cycle turned so that its last edge is a communication (its first access starts a thread)."""
    n = len(edges)
    for r in range(n):
        if edges[r - 1].ext:
            return edges[r:] + edges[:r]
    return edges


def default_anns(anns: list[Ann | None]) -> list[Ann]:
    return [a or DEFAULT_ANN for a in anns]
