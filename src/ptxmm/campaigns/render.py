"""A generated test as ``.ptx`` or ``.litmus`` text (both read back by ptxmm's front ends), and its
canonical form up to symmetry (thread permutation, location renaming, CTA and cluster renumbering)."""

from __future__ import annotations

from dataclasses import replace
from itertools import permutations, product

from .cycle import LOC_NAMES, Access, Litmus, Place, Thread
from .edges import EdgeError

# ----- normal form ------------------------------------------------------------------------------


def renumber(test: Litmus, order: tuple[int, ...]) -> Litmus:
    """The test with its threads in ``order``, locations named in order of first use, CTAs and
    clusters numbered in order of first use."""
    ths = [test.threads[i] for i in order]
    locs: dict[int, int] = {}
    for t in ths:
        for a in t.accesses:
            locs.setdefault(a.loc, len(locs))
    clus: dict[int, int] = {}
    ctas: dict[tuple, int] = {}
    out = []
    for t in ths:
        p = t.place
        cl = None if p.cluster is None else clus.setdefault(p.cluster, len(clus))
        cta = ctas.setdefault((p.cluster, p.cta), len(ctas))
        acc = tuple(replace(a, loc=locs[a.loc]) for a in t.accesses)
        out.append(Thread(acc, t.links, Place(cta, cl)))
    finals = tuple(sorted((locs[lc], v) for lc, v in test.finals))
    return replace(test, threads=tuple(out), finals=finals)


def _shape(t: Thread) -> tuple:
    return (tuple((a.dir, a.value, a.ann) for a in t.accesses), t.links)


def _key(test: Litmus) -> tuple:
    return (tuple((t.accesses, t.links, t.place) for t in test.threads), test.finals)


def canonical(test: Litmus) -> tuple:
    """The same key for two tests exactly when one is the other with its threads permuted, its
    locations renamed and its CTAs/clusters renumbered."""
    idx = sorted(range(len(test.threads)), key=lambda i: _shape(test.threads[i]))
    groups: list[list[int]] = []
    for i in idx:
        if groups and _shape(test.threads[groups[-1][0]]) == _shape(test.threads[i]):
            groups[-1].append(i)
        else:
            groups.append([i])
    best = None
    for choice in product(*(permutations(g) for g in groups)):
        k = _key(renumber(test, tuple(i for g in choice for i in g)))
        if best is None or k < best:
            best = k
    return best


# ----- .ptx ---------------------------------------------------------------------------------------


def _ptx_access(a: Access, reg: str, addr: str, value: str) -> str:
    qual = "" if a.ann.sem == "weak" else f".{a.ann.sem}.{a.ann.scope}"
    if a.dir == "R":
        return f"ld{qual}.global.u32 {reg}, {addr};"
    return f"st{qual}.global.u32 {addr}, {value};"


def _ptx_thread(t: Thread, k: int) -> list[str]:
    head = f".thread T{k}" + ("" if t.place.cluster is None else f" .cluster {t.place.cluster}")
    lines = [head + f" .cta {t.place.cta} {{"]
    nread, last, tmp = 0, None, 0
    for i, a in enumerate(t.accesses):
        lk = t.links[i - 1] if i else None
        loc, value = f"[{LOC_NAMES[a.loc]}]", str(a.value)
        if lk is not None and lk.kind == "fence":
            lines.append(f"    fence.{lk.fence[0]}.{lk.fence[1]};")
        elif lk is not None and lk.kind == "dep":
            if lk.dep == "addr":
                lines += [f"    xor.b64 %rd{tmp}, {last}, {last};",
                          f"    mov.u64 %ra{tmp}, {LOC_NAMES[a.loc]};",
                          f"    add.u64 %ra{tmp}, %ra{tmp}, %rd{tmp};"]
                loc = f"[%ra{tmp}]"
            elif lk.dep == "data":
                lines += [f"    xor.b32 %rv{tmp}, {last}, {last};",
                          f"    add.u32 %rv{tmp}, %rv{tmp}, {a.value};"]
                value = f"%rv{tmp}"
            else:
                lines += [f"    setp.eq.u32 %p{tmp}, {last}, {last};", f"    @%p{tmp} bra $L{tmp};",
                          f"$L{tmp}:"]
            tmp += 1
        reg = f"%r{nread}"
        lines.append("    " + _ptx_access(a, reg, loc, value))
        if a.dir == "R":
            last, nread = reg, nread + 1
    return lines + ["}"]


def _conds(test: Litmus, reg) -> list[tuple[str, int]]:
    out = []
    for k, t in enumerate(test.threads):
        n = 0
        for a in t.accesses:
            if a.dir == "R":
                out.append((reg(k, n), a.value))
                n += 1
    return out + [(LOC_NAMES[lc], v) for lc, v in test.finals]


def to_ptx(test: Litmus) -> str:
    lines = [f"// ptxmm gen: {test.cycle}", f'.test {test.name} "{test.cycle}"']
    lines += [f".global .u32 {LOC_NAMES[i]} = 0;" for i in range(test.n_locs)]
    for k, t in enumerate(test.threads):
        lines += _ptx_thread(t, k)
    cond = " && ".join(f"{r} == {v}" for r, v in _conds(test, lambda k, n: f"T{k}:%r{n}"))
    lines.append(f"exists ({cond})")
    return "\n".join(lines) + "\n"


# ----- .litmus (Dat3M's PTX dialect) --------------------------------------------------------------


def _litmus_access(a: Access, reg: str, loc: str, value: str) -> str:
    qual = ".weak" if a.ann.sem == "weak" else f".{a.ann.sem}.{a.ann.scope}"
    return f"ld{qual} {reg}, {loc}" if a.dir == "R" else f"st{qual} {loc}, {value}"


def _litmus_cells(t: Thread, k: int) -> list[str]:
    if t.place.cluster is not None:
        raise EdgeError(f"{k}: .litmus has no cluster placement", None, "write .ptx (--format ptx)")
    cells, nread, last, tmp = [], 0, None, 10
    for i, a in enumerate(t.accesses):
        lk = t.links[i - 1] if i else None
        value = str(a.value)
        if lk is not None and lk.kind == "fence":
            if lk.fence[0] not in ("sc", "acq_rel"):
                raise EdgeError(f"fence.{lk.fence[0]} has no .litmus spelling", None, "write .ptx")
            cells.append(f"fence.{lk.fence[0]}.{lk.fence[1]}")
        elif lk is not None and lk.kind == "dep":
            if lk.dep == "addr":
                raise EdgeError("an address dependency has no .litmus spelling", None, "write .ptx")
            if lk.dep == "data":
                cells += [f"xor r{tmp}, {last}, {last}", f"add r{tmp}, r{tmp}, {a.value}"]
                value = f"r{tmp}"
            else:
                cells += [f"beq {last}, {last}, LC{k}{tmp}", f"LC{k}{tmp}:"]
            tmp += 1
        reg = f"r{nread}"
        cells.append(_litmus_access(a, reg, LOC_NAMES[a.loc], value))
        if a.dir == "R":
            last, nread = reg, nread + 1
    return cells


def to_litmus(test: Litmus) -> str:
    cols = [_litmus_cells(t, k) for k, t in enumerate(test.threads)]
    heads = [f"P{k}@cta {t.place.cta},gpu 0" for k, t in enumerate(test.threads)]
    rows = [heads] + [[c[i] if i < len(c) else "" for c in cols] for i in range(max(map(len, cols)))]
    w = [max(len(r[j]) for r in rows) for j in range(len(cols))]
    lines = [f"PTX {test.name}", f'"{test.cycle}"', "{"]
    lines += [f"{LOC_NAMES[i]}=0;" for i in range(test.n_locs)]
    lines.append("}")
    lines += [" " + " | ".join(c.ljust(w[j]) for j, c in enumerate(r)) + " ;" for r in rows]
    cond = " /\\ ".join(f"{r} == {v}" for r, v in _conds(test, lambda k, n: f"P{k}:r{n}"))
    lines += ["exists", f"({cond})"]
    return "\n".join(lines) + "\n"


# ----- herd7 (LISA, for herd7 -model sc.cat) ------------------------------------------------------


def to_herd(test: Litmus) -> str:
    """The test in herd7's LISA syntax, for comparing with ``herd7 -model sc.cat`` only: LISA
    accesses carry no PTX annotation, and fences and dependencies are written as program order
    (under SC, program order already orders every pair)."""
    cols = []
    for t in test.threads:
        cells, n = [], 0
        for a in t.accesses:
            if a.dir == "R":
                cells.append(f"r[] r{n} {LOC_NAMES[a.loc]}")
                n += 1
            else:
                cells.append(f"w[] {LOC_NAMES[a.loc]} {a.value}")
        cols.append(cells)
    rows = [[f"P{k}" for k in range(len(cols))]]
    rows += [[c[i] if i < len(c) else "" for c in cols] for i in range(max(map(len, cols)))]
    w = [max(len(r[j]) for r in rows) for j in range(len(cols))]
    lines = [f"LISA {test.name}", "{", " ".join(f"{LOC_NAMES[i]}=0;" for i in range(test.n_locs)), "}"]
    lines += [" " + " | ".join(c.ljust(w[j]) for j, c in enumerate(r)) + " ;" for r in rows]
    cond = " /\\ ".join(f"{r}={v}" for r, v in _conds(test, lambda k, n: f"{k}:r{n}"))
    lines.append(f"exists ({cond})")
    return "\n".join(lines) + "\n"
