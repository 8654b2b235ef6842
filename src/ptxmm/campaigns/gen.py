"""``ptxmm gen``: litmus tests from cycles of relaxations, as diy7 makes them, for PTX.

Every cycle of at most ``size`` edges drawn from the relaxations (``relax``) and the safe edges
(``safe``) that contains at least one relaxation, has at most ``nprocs`` threads and can be built
(:func:`cycle.check_shape`) becomes tests: one per choice of annotation for each access the edges
leave unannotated (``sems`` × ``scopes``) and per placement of the threads (``placement``). Tests come
smallest first, in a fixed order (the same options give the same tests, names and text), each once up
to symmetry (thread permutation, location renaming, CTA/cluster renumbering)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from .cycle import Litmus, Place, build, check_shape, rotate_to_thread_start, validate
from .edges import DEFAULT_RELAX, DEFAULT_SAFE, PROXIES, Ann, Edge, EdgeError, parse_edges, rmw_ends_fit
from .naming import family, family_key, name_of
from .render import canonical, renumber, to_herd, to_litmus, to_ptx

PLACEMENTS = ("cta", "same-cta", "all", "cluster")
SEMS = ("weak", "relaxed", "acquire", "release")


@dataclass(frozen=True)
class GenOptions:
    size: int = 4
    relax: str = DEFAULT_RELAX
    safe: str = DEFAULT_SAFE
    cycles: tuple[str, ...] = ()  # one test family per cycle (diyone7), instead of enumerating
    nprocs: int = 4
    sems: tuple[str, ...] = ("relaxed",)
    scopes: tuple[str, ...] = ("gpu",)
    placement: str = "cta"
    limit: int | None = None
    # besides: one unannotated access at a time made a weak access through each of these proxies
    proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        bad = [s for s in self.sems if s not in SEMS]
        if bad:
            raise EdgeError(f"unknown semantics {bad[0]!r}", None, "choose from " + " ".join(SEMS))
        from .edges import SCOPES

        bad = [c for c in self.scopes if c not in SCOPES]
        if bad:  # a scope no memory operation takes (warp): tests `check` would reject
            raise EdgeError(f"unknown scope {bad[0]!r}", None, "choose from " + " ".join(SCOPES))
        bad = [p for p in self.proxies if p not in PROXIES]
        if bad:
            raise EdgeError(f"unknown proxy {bad[0]!r}", None, "choose from " + " ".join(PROXIES))
        if self.placement not in PLACEMENTS:
            raise EdgeError(f"unknown placement {self.placement!r}", None,
                            "choose from " + " ".join(PLACEMENTS))
        if self.size < 2:
            raise EdgeError("--size must be at least 2", None, "a cycle has two edges or more")


@dataclass(frozen=True)
class Generated:
    test: Litmus
    family: str
    size: int  # accesses

    @property
    def name(self) -> str:
        return self.test.name

    def text(self, fmt: str = "ptx") -> str:
        """``ptx``, ``litmus`` (Dat3M's dialect) or ``herd`` (LISA, for herd7 -model sc.cat)."""
        return {"ptx": to_ptx, "litmus": to_litmus, "herd": to_herd}[fmt](self.test)


# ----- cycles -------------------------------------------------------------------------------------


def _alphabet(opts: GenOptions) -> tuple[list[Edge], set[str]]:
    relax = parse_edges(opts.relax)
    safe = parse_edges(opts.safe)
    seen: dict[str, Edge] = {}
    for e in relax + safe:
        seen.setdefault(str(e), e)
    return sorted(seen.values(), key=str), {str(e) for e in relax}


class _Cycles:
    """Every canonical cycle (the least rotation among those starting a thread) of exactly n edges."""

    def __init__(self, alphabet: list[Edge], relax: set[str], nprocs: int):
        self.alpha = alphabet
        self.idx = {str(e): i for i, e in enumerate(alphabet)}
        self.relax = relax
        self.nprocs = nprocs
        self.by_src = {d: [e for e in alphabet if e.src == d] for d in "RW"}

    def of_length(self, n: int) -> Iterator[list[Edge]]:
        for e in self.alpha:
            yield from self._grow([e], n, int(e.ext))

    def _grow(self, seq: list[Edge], n: int, n_ext: int) -> Iterator[list[Edge]]:
        if len(seq) == n:
            if seq[-1].ext and self._closes(seq, n_ext):
                yield list(seq)
            return
        last, first = seq[-1], self.idx[str(seq[0])]
        for e in self.by_src[last.dst]:
            if not (last.same_loc or e.same_loc) or n_ext + e.ext > self.nprocs:
                continue
            if last.ext and self.idx[str(e)] < first:
                continue  # a rotation starting at e comes first: that one is generated instead
            seq.append(e)
            yield from self._grow(seq, n, n_ext + e.ext)
            seq.pop()

    def _closes(self, seq: list[Edge], n_ext: int) -> bool:
        if seq[-1].dst != seq[0].src or n_ext < 2 or not any(str(e) in self.relax for e in seq):
            return False
        changes = sum(not e.same_loc for e in seq)
        if changes == 1 or changes == 0 and not any(e.kind in ("po", "fence", "dep") for e in seq):
            return False
        key = [self.idx[str(e)] for e in seq]
        if not all(key[i:] + key[:i] >= key for i in range(1, len(seq)) if seq[i - 1].ext):
            return False
        try:
            validate(seq)
        except EdgeError:
            return False  # its edges annotate one access two ways, or cannot be written
        return True


def cycles(opts: GenOptions) -> Iterator[list[Edge]]:
    """The cycles of ``opts``, shortest first, in a fixed order."""
    if opts.cycles:
        for text in opts.cycles:
            es = parse_edges(text)
            check_shape(es, opts.nprocs)
            validate(es)
            yield rotate_to_thread_start(es)
        return
    alpha, relax = _alphabet(opts)
    gen = _Cycles(alpha, relax, opts.nprocs)
    for n in range(2, opts.size + 1):
        yield from gen.of_length(n)


# ----- annotations and placements -----------------------------------------------------------------


def _choices(d: str, opts: GenOptions, atomic: bool = False) -> list[Ann]:
    """The annotations crossed on a free access of direction ``d``; ``atomic``: an end of a
    read-modify-write (strong and generic only)."""
    out = []
    for s in opts.sems:
        if s == "weak":
            out += [] if atomic else [Ann("weak")]
        else:
            out += [Ann(s, sc) for sc in opts.scopes if Ann(s, sc).fits(d)]
    return out or [Ann("relaxed", opts.scopes[0])]


def _picks(edges: list[Edge], free: list[int], atomic: set[int], opts: GenOptions) -> Iterator[tuple]:
    """The annotations of the free accesses: the --sems x --scopes cross; then, with --proxies,
    each of those with one free access (not an atom's) through each proxy that fits it."""
    choices = [_choices(edges[i].src, opts, i in atomic) for i in free]
    yield from product(*choices)
    for k, i in enumerate(free):
        if i in atomic:
            continue
        for p in opts.proxies:
            a = Ann("weak", None, p)
            if a.fits(edges[i].src):
                yield from product(*(choices[:k] + [[a]] + choices[k + 1:]))


def _writable(edges: list[Edge], anns: list[Ann]) -> bool:
    """Whether the annotations chosen fit: one scope per read-modify-write, no register address
    into a texture, surface or constant access."""
    n = len(edges)
    for i, e in enumerate(edges):
        if e.kind == "rmw" and rmw_ends_fit(anns[i], anns[(i + 1) % n]):
            return False
        if e.kind == "dep" and e.dep == "addr" and anns[(i + 1) % n].proxy in (
                "texture", "surface", "constant"):
            return False
    return True


def _partitions(n: int) -> Iterator[tuple[int, ...]]:
    """Set partitions of n items as restricted growth strings (0, 0, 1, …)."""
    def rec(prefix: list[int], m: int) -> Iterator[tuple[int, ...]]:
        if len(prefix) == n:
            yield tuple(prefix)
            return
        for b in range(m + 2):
            yield from rec(prefix + [b], max(m, b))
    yield from rec([0], 0) if n else iter([()])


def placements(n: int, how: str) -> Iterator[tuple[Place, ...]]:
    if how == "cta":
        yield tuple(Place(k) for k in range(n))
    elif how == "same-cta":
        yield tuple(Place(0) for _ in range(n))
    elif how == "all":
        for p in _partitions(n):
            yield tuple(Place(c) for c in p)
    else:  # every CTA partition, and every grouping of those CTAs into clusters
        for p in _partitions(n):
            k = max(p) + 1
            for q in _partitions(k):
                yield tuple(Place(c, q[c]) for c in p)


# ----- tests --------------------------------------------------------------------------------------


def _family_rotation(edges: list[Edge]) -> list[Edge]:
    """The cycle turned so that its first thread is the first of the family's normal rotation."""
    t = build(edges, [Ann("relaxed", "gpu")] * len(edges), tuple(Place(k) for k in range(len(edges))))
    _, r = family_key(t.threads)
    starts = [0] + [i + 1 for i, e in enumerate(edges[:-1]) if e.ext]
    return edges[starts[r]:] + edges[:starts[r]]


def tests_of_cycle(edges: list[Edge], opts: GenOptions) -> Iterator[Litmus]:
    edges = _family_rotation(edges)
    fixed = validate(edges)
    free = [i for i, a in enumerate(fixed) if a is None]
    n = len(edges)
    atomic = {i for i, e in enumerate(edges) if e.kind == "rmw"} | {
        (i + 1) % n for i, e in enumerate(edges) if e.kind == "rmw"}
    n_threads = sum(e.ext for e in edges)
    for pick in _picks(edges, free, atomic, opts):
        anns = list(fixed)
        for i, a in zip(free, pick):
            anns[i] = a
        if not _writable(edges, anns):
            continue
        for places in placements(n_threads, opts.placement):
            t = renumber(build(edges, anns, places), tuple(range(n_threads)))
            yield Litmus(name_of(t), t.cycle, t.threads, t.finals, t.n_locs)


def generate(opts: GenOptions) -> Iterator[Generated]:
    """The tests of ``opts``, each once up to symmetry, with unique names."""
    keys: set[bytes] = set()
    names: dict[str, int] = {}
    n = 0
    for edges in cycles(opts):
        for t in tests_of_cycle(edges, opts):
            k = hashlib.blake2b(repr(canonical(t)).encode(), digest_size=16).digest()
            if k in keys:
                continue
            keys.add(k)
            base = t.name
            names[base] = names.get(base, 0) + 1
            if names[base] > 1:
                t = Litmus(f"{base}-{names[base]}", t.cycle, t.threads, t.finals, t.n_locs)
            yield Generated(t, family(t), t.size)
            n += 1
            if opts.limit is not None and n >= opts.limit:
                return
