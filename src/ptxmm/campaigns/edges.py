"""The edge vocabulary of ``ptxmm gen``: diy7's relaxations, spelled for PTX.

An edge links two memory events of a cycle. Communication edges join two threads (``Rfe`` W→R,
``Fre`` R→W, ``Coe`` W→W, all on one location); program-order edges stay in one thread:
``Pod``/``Pos`` + two directions (different / same location), ``Fence.K.S.dXY`` / ``.sXY`` (a
``fence.K.S`` between the two accesses; K in sc acq_rel acquire release, S in cta cluster gpu sys),
and the dependencies ``DpAddrdR`` ``DpAddrdW`` ``DpDatadW`` ``DpCtrldR`` ``DpCtrldW`` (``s`` for the
same location). Either end of an edge may be annotated, diy7-style, by two suffixes (source then
target): ``P`` (a weak access), ``R``/``A``/``L`` + scope letter (relaxed / acquire / release at
``c`` cta, ``cl`` cluster, ``g`` gpu, ``s`` sys): ``RfeLgAg`` is a release store read by an
acquire load, both at .gpu. A proxy annotation makes the access go through another name of the
location (weak, as PTX's proxy accesses are): ``Va`` a second virtual address (generic proxy),
``Tx`` the texture proxy (loads), ``Sf`` the surface proxy, ``Cn`` the constant proxy (loads).

Internal communication edges (``Rfi`` ``Fri`` ``Coi``; diy7's ``Wsi``/``Wse`` read as ``Coi``/``Coe``)
stay in a thread, as program order on one location that the cycle's values observe. ``Rmw`` (and
``Rmw.cas``, ``Rmw.add``; plain ``Rmw`` is ``atom.exch``) joins the read and the write of one
read-modify-write: its annotations are the read's (``R``/``A``) and the write's (``R``/``L``) at one
scope — ``RmwAgLg`` is ``atom.acq_rel.gpu``. ``Fence.proxy.K.sXY`` (K in alias texture surface
constant) puts a ``fence.proxy.K`` between the accesses."""

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
PROXIES = ("alias", "texture", "surface", "constant")  # besides the generic proxy
PROXY_LETTERS = {"alias": "Va", "texture": "Tx", "surface": "Sf", "constant": "Cn"}
LETTERS_PROXY = {v: k for k, v in PROXY_LETTERS.items()}
PROXY_SHORT = {"alias": "va", "texture": "tex", "surface": "sur", "constant": "const"}
RMW_OPS = ("exch", "cas", "add")
_COM = {"Rfe": ("rf", False), "Fre": ("fr", False), "Coe": ("co", False), "Wse": ("co", False),
        "Rfi": ("rf", True), "Fri": ("fr", True), "Coi": ("co", True), "Wsi": ("co", True)}

_ANN = r"P|Va|Tx|Sf|Cn|[RAL](?:cl|c|g|s)"
_EDGE = re.compile(
    r"(?P<base>Rf[ei]|Fr[ei]|Co[ei]|Ws[ei]|Rmw(?:\.(?P<rop>exch|cas|add))?"
    r"|Po(?P<ploc>[ds])(?P<pdirs>RR|RW|WR|WW)"
    r"|Fence\.(?:(?P<fk>sc|acq_rel|acquire|release)\.(?P<fs>cta|cluster|gpu|sys)"
    r"|(?P<fp>proxy)\.(?P<fpk>alias|texture|surface|constant))\.(?P<floc>[ds])"
    r"(?P<fdirs>RR|RW|WR|WW)"
    r"|Dp(?P<dk>Addr|Data|Ctrl)(?P<dloc>[ds])(?P<ddir>[RW]))"
    rf"(?:(?P<a1>{_ANN})(?P<a2>{_ANN}))?")


class EdgeError(PtxmmError):
    """An edge or cycle that ``ptxmm gen`` cannot read or build."""


@dataclass(frozen=True, order=True)
class Ann:
    """How an access is made: ``sem`` weak / relaxed / acquire / release, at ``scope`` (None: weak),
    through ``proxy`` (generic, or a proxy alias of the location: alias texture surface constant;
    those accesses are weak)."""
    sem: str
    scope: str | None = None
    proxy: str = "generic"

    def fits(self, d: str) -> bool:
        if self.proxy in ("texture", "constant") and d == "W":
            return False
        return not (self.sem == "acquire" and d == "W" or self.sem == "release" and d == "R")

    def letters(self) -> str:
        if self.proxy != "generic":
            return PROXY_LETTERS[self.proxy]
        return "P" if self.sem == "weak" else SEM_LETTER[self.sem] + SCOPE_LETTER[self.scope or "gpu"]

    def short(self) -> str:
        if self.proxy != "generic":
            return PROXY_SHORT[self.proxy]
        return SEM_SHORT[self.sem] + ("" if self.scope is None else "." + self.scope)

    @staticmethod
    def parse(s: str) -> Ann:
        if s in LETTERS_PROXY:
            return Ann("weak", None, LETTERS_PROXY[s])
        return Ann("weak") if s == "P" else Ann(LETTER_SEM[s[0]], LETTER_SCOPE[s[1:]])


DEFAULT_ANN = Ann("relaxed", "gpu")


@dataclass(frozen=True)
class Edge:
    kind: str  # rf fr co po fence dep rmw
    src: str  # direction of the source event: R or W
    dst: str
    same_loc: bool
    fence: tuple[str, str] | None = None  # (kind, scope), or ("proxy", proxy kind)
    dep: str | None = None  # addr data ctrl; for rmw: the operation (exch cas add)
    ann: tuple[Ann | None, Ann | None] = (None, None)
    internal: bool = False  # Rfi Fri Coi: a communication inside one thread

    @property
    def ext(self) -> bool:
        return self.kind in ("rf", "fr", "co") and not self.internal

    @property
    def base(self) -> str:
        """The edge's name without its annotations."""
        loc = "s" if self.same_loc else "d"
        if self.kind in ("rf", "fr", "co"):
            return self.kind.capitalize() + ("i" if self.internal else "e")
        if self.kind == "rmw":
            return "Rmw" if self.dep == "exch" else f"Rmw.{self.dep}"
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
        """The edge in a test name (diy7's thread descriptors): po, fence.sc.gpu, addr, rfi, …"""
        if self.kind == "fence":
            return f"fence.{self.fence[0]}.{self.fence[1]}"
        if self.kind == "dep":
            return self.dep
        if self.kind == "rmw":
            return "rmw" if self.dep == "exch" else f"rmw.{self.dep}"
        if self.internal:
            return self.kind + "i"
        return "pos" if self.kind == "po" and self.same_loc else "po"


def rmw_sem(r: Ann, w: Ann) -> str:
    """The semantics of the atom whose read is annotated ``r`` and write ``w``."""
    acq, rel = r.sem == "acquire", w.sem == "release"
    return "acq_rel" if acq and rel else "acquire" if acq else "release" if rel else "relaxed"


def rmw_ends_fit(r: Ann, w: Ann) -> str | None:
    """Why a read-modify-write cannot have these annotations on its read and its write, or None."""
    if r.proxy != "generic" or w.proxy != "generic" or r.sem == "weak" or w.sem == "weak":
        return "a read-modify-write is a generic strong access (atom): no P or proxy annotation"
    if r.scope != w.scope:
        return "the read and the write of a read-modify-write have one scope"
    return None


def _parse_base(m: re.Match, ann) -> Edge:
    base = m["base"]
    if base[:3] in _COM:
        kind, intl = _COM[base[:3]]
        src, dst = {"rf": "WR", "fr": "RW", "co": "WW"}[kind]
        return Edge(kind, src, dst, True, ann=ann, internal=intl)
    if base.startswith("Rmw"):
        return Edge("rmw", "R", "W", True, dep=m["rop"] or "exch", ann=ann)
    if m["pdirs"]:
        return Edge("po", m["pdirs"][0], m["pdirs"][1], m["ploc"] == "s", ann=ann)
    if m["fdirs"]:
        fence = ("proxy", m["fpk"]) if m["fp"] else (m["fk"], m["fs"])
        return Edge("fence", m["fdirs"][0], m["fdirs"][1], m["floc"] == "s", fence, ann=ann)
    if m["dk"] == "Data" and m["ddir"] == "R":
        raise EdgeError(f"{m[0]}: a data dependency ends at a store", None, "write DpDatadW")
    return Edge("dep", "R", m["ddir"], m["dloc"] == "s", dep=m["dk"].lower(), ann=ann)


def parse_edge(text: str) -> Edge:
    m = _EDGE.fullmatch(text)
    if m is None:
        raise EdgeError(f"unknown edge {text!r}", None,
                        "edges: Rfe Fre Coe Rfi Fri Coi Rmw PodXY PosXY Fence.K.S.dXY "
                        "Fence.proxy.K.sXY DpAddrdR DpAddrdW DpDatadW DpCtrldR DpCtrldW (X, Y in R W), "
                        "optionally annotated, e.g. RfeLgAg, PosWRPTx")
    ann = (None, None) if m["a1"] is None else (Ann.parse(m["a1"]), Ann.parse(m["a2"]))
    e = _parse_base(m, ann)
    for a, d in zip(e.ann, (e.src, e.dst)):
        if a is not None and not a.fits(d):
            what = a.proxy if a.proxy != "generic" else a.sem
            raise EdgeError(f"{text}: {what} does not apply to a {'load' if d == 'R' else 'store'}",
                            None, "acquire (A) annotates loads, release (L) stores; the texture "
                            "(Tx) and constant (Cn) proxies are read only")
    if e.kind == "rmw" and e.ann != (None, None):
        why = rmw_ends_fit(*(a or DEFAULT_ANN for a in e.ann))
        if why:
            raise EdgeError(f"{text}: {why}", None, "e.g. RmwAgLg: atom.acq_rel.gpu")
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
    if tok[:i].endswith(".proxy.") and tok[i + 1:i + 2] == ".":  # a proxy fence's kind
        alts = PROXIES
    elif tok[i - 1:i] == "." and tok[i + 1:i + 2] == ".":  # a scope
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
