"""The edge vocabulary of ``ptxmm gen``: diy7's relaxations, spelled for PTX.

An edge links two memory events of a cycle. Communication edges join two threads (``Rfe`` W→R,
``Fre`` R→W, ``Coe`` W→W, all on one location); program-order edges stay in one thread:
``Pod``/``Pos`` + two directions (different / same location), ``Fence.K.S.dXY`` / ``.sXY`` (a
``fence.K.S`` between the two accesses; K in sc acq_rel acquire release, S in cta cluster gpu sys),
and the dependencies ``DpAddrdR`` ``DpAddrdW`` ``DpDatadW`` ``DpCtrldR`` ``DpCtrldW`` (``s`` for the
same location). Either end of an edge may be annotated, diy7-style, by two suffixes (source then
target): ``P`` (a weak access), ``R``/``A``/``L`` + scope letter (relaxed / acquire / release at
``c`` cta, ``cl`` cluster, ``g`` gpu, ``s`` sys): ``RfeLgAg`` is a release store read by an
acquire load, both at .gpu."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import PtxmmError

DIRS = ("RR", "RW", "WR", "WW")
FENCE_KINDS = ("sc", "acq_rel", "acquire", "release")
SCOPES = ("cta", "cluster", "gpu", "sys")
SCOPE_LETTER = {"cta": "c", "cluster": "cl", "gpu": "g", "sys": "s"}
LETTER_SCOPE = {v: k for k, v in SCOPE_LETTER.items()}
SEM_LETTER = {"relaxed": "R", "acquire": "A", "release": "L"}
LETTER_SEM = {v: k for k, v in SEM_LETTER.items()}
SEM_SHORT = {"weak": "wk", "relaxed": "rlx", "acquire": "acq", "release": "rel"}

_ANN = r"P|[RAL](?:cl|c|g|s)"
_EDGE = re.compile(
    r"(?P<base>Rfe|Fre|Coe|Po(?P<ploc>[ds])(?P<pdirs>RR|RW|WR|WW)"
    r"|Fence\.(?P<fk>sc|acq_rel|acquire|release)\.(?P<fs>cta|cluster|gpu|sys)\.(?P<floc>[ds])"
    r"(?P<fdirs>RR|RW|WR|WW)"
    r"|Dp(?P<dk>Addr|Data|Ctrl)(?P<dloc>[ds])(?P<ddir>[RW]))"
    rf"(?:(?P<a1>{_ANN})(?P<a2>{_ANN}))?")


class EdgeError(PtxmmError):
    """An edge or cycle that ``ptxmm gen`` cannot read or build."""


@dataclass(frozen=True, order=True)
class Ann:
    """How an access is made: ``sem`` weak / relaxed / acquire / release, at ``scope`` (None: weak)."""
    sem: str
    scope: str | None = None

    def fits(self, d: str) -> bool:
        return not (self.sem == "acquire" and d == "W" or self.sem == "release" and d == "R")

    def letters(self) -> str:
        return "P" if self.sem == "weak" else SEM_LETTER[self.sem] + SCOPE_LETTER[self.scope or "gpu"]

    def short(self) -> str:
        return SEM_SHORT[self.sem] + ("" if self.scope is None else "." + self.scope)

    @staticmethod
    def parse(s: str) -> Ann:
        return Ann("weak") if s == "P" else Ann(LETTER_SEM[s[0]], LETTER_SCOPE[s[1:]])


DEFAULT_ANN = Ann("relaxed", "gpu")


@dataclass(frozen=True)
class Edge:
    kind: str  # rf fr co po fence dep
    src: str  # direction of the source event: R or W
    dst: str
    same_loc: bool
    fence: tuple[str, str] | None = None  # (kind, scope)
    dep: str | None = None  # addr data ctrl
    ann: tuple[Ann | None, Ann | None] = (None, None)

    @property
    def ext(self) -> bool:
        return self.kind in ("rf", "fr", "co")

    @property
    def base(self) -> str:
        """The edge's name without its annotations."""
        loc = "s" if self.same_loc else "d"
        if self.kind == "rf":
            return "Rfe"
        if self.kind == "fr":
            return "Fre"
        if self.kind == "co":
            return "Coe"
        if self.kind == "po":
            return f"Po{loc}{self.src}{self.dst}"
        if self.kind == "fence":
            return f"Fence.{self.fence[0]}.{self.fence[1]}.{loc}{self.src}{self.dst}"
        return f"Dp{self.dep.capitalize()}{loc}{self.dst}"

    def __str__(self) -> str:
        a, b = self.ann
        if a is None and b is None:
            return self.base
        return self.base + (a or DEFAULT_ANN).letters() + (b or DEFAULT_ANN).letters()

    def tag(self) -> str:
        """The edge in a test name (diy7's thread descriptors): po, fence.sc.gpu, addr, …"""
        if self.kind == "fence":
            return f"fence.{self.fence[0]}.{self.fence[1]}"
        if self.kind == "dep":
            return self.dep
        return "pos" if self.kind == "po" and self.same_loc else "po"


def parse_edge(text: str) -> Edge:
    m = _EDGE.fullmatch(text)
    if m is None:
        raise EdgeError(f"unknown edge {text!r}", None,
                        "edges: Rfe Fre Coe PodXY PosXY Fence.K.S.dXY DpAddrdR DpAddrdW DpDatadW "
                        "DpCtrldR DpCtrldW (X, Y in R W), optionally annotated, e.g. RfeLgAg")
    ann = (None, None) if m["a1"] is None else (Ann.parse(m["a1"]), Ann.parse(m["a2"]))
    base = m["base"]
    if base in ("Rfe", "Fre", "Coe"):
        src, dst = {"Rfe": "WR", "Fre": "RW", "Coe": "WW"}[base]
        e = Edge(base[:2].lower(), src, dst, True, ann=ann)
    elif m["pdirs"]:
        e = Edge("po", m["pdirs"][0], m["pdirs"][1], m["ploc"] == "s", ann=ann)
    elif m["fdirs"]:
        e = Edge("fence", m["fdirs"][0], m["fdirs"][1], m["floc"] == "s", (m["fk"], m["fs"]), ann=ann)
    else:
        if m["dk"] == "Data" and m["ddir"] == "R":
            raise EdgeError(f"{text}: a data dependency ends at a store", None, "write DpDatadW")
        e = Edge("dep", "R", m["ddir"], m["dloc"] == "s", dep=m["dk"].lower(), ann=ann)
    for a, d in zip(e.ann, (e.src, e.dst)):
        if a is not None and not a.fits(d):
            raise EdgeError(f"{text}: {a.sem} does not apply to a {'load' if d == 'R' else 'store'}",
                            None, "acquire (A) annotates loads, release (L) stores")
    return e


def parse_edges(text: str) -> list[Edge]:
    """Edges separated by spaces or commas; ``PodR*`` style stars expand (``Pod**`` is all four)."""
    out: list[Edge] = []
    for tok in text.replace(",", " ").split():
        out += [parse_edge(t) for t in expand(tok)]
    return out


def expand(tok: str) -> list[str]:
    """``Pod**`` → PodRR PodRW PodWR PodWW; ``Fence.sc.*.d**`` → every scope and direction."""
    if "*" not in tok:
        return [tok]
    i = tok.index("*")
    if tok[i - 1:i] == "." and tok[i + 1:i + 2] == ".":  # a scope
        alts = SCOPES
    else:
        alts = ("R", "W")
    return [x for a in alts for x in expand(tok[:i] + a + tok[i + 1:])]


# The PTX relaxation set (``ptxmm gen`` without --relax): program order between different
# locations, fence.sc / fence.acq_rel at .cta and .gpu, and the dependencies; communication
# edges are the safe set. Events are relaxed at .gpu unless --sems / --scopes cross them.
DEFAULT_SAFE = "Rfe Fre Coe"
DEFAULT_RELAX = ("Pod** Fence.sc.cta.d** Fence.sc.gpu.d** Fence.acq_rel.cta.d** Fence.acq_rel.gpu.d** "
                 "DpAddrdR DpAddrdW DpDatadW DpCtrldW")
