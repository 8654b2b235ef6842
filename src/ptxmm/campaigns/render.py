"""A generated test as ``.ptx`` or ``.litmus`` text (both read back by ptxmm's front ends), and its
canonical form up to symmetry (thread permutation, location renaming, CTA and cluster renumbering)."""

from __future__ import annotations

from dataclasses import replace
from itertools import permutations, product

from .cycle import LOC_NAMES, Access, Link, Litmus, Place, Thread
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


PROXY_SUFFIX = {"alias": "v", "texture": "t", "surface": "s", "constant": "c"}
_PTX_ALIAS = {"alias": ".global .u32 {a} aliases {x};", "texture": ".global .texref {a} aliases {x};",
              "surface": ".global .surfref {a} aliases {x};", "constant": ".const .u32 {a} aliases {x};"}
_LITMUS_PROXY = {"alias": "generic", "texture": "texture", "surface": "surface", "constant": "constant"}


def loc_name(a: Access) -> str:
    """The name the access goes through: its location, or that location's proxy alias (x_t …)."""
    x = LOC_NAMES[a.loc]
    return x if a.ann.proxy == "generic" else f"{x}_{PROXY_SUFFIX[a.ann.proxy]}"


def _aliases(test: Litmus) -> list[tuple[str, str, str]]:
    """(alias, location, proxy) of every proxy alias the test's accesses use, in a fixed order."""
    seen = {(a.loc, a.ann.proxy) for t in test.threads for a in t.accesses if a.ann.proxy != "generic"}
    return [(f"{LOC_NAMES[lc]}_{PROXY_SUFFIX[p]}", LOC_NAMES[lc], p) for lc, p in sorted(seen)]


def _ptx_access(a: Access, reg: str, addr: str, value: str) -> str:
    if a.ann.proxy == "texture":
        return f"tex.1d.v4.s32.s32 {{{reg}, _, _, _}}, [{addr[1:-1]}, {{0}}];"
    if a.ann.proxy == "surface":
        if a.dir == "R":
            return f"suld.b.1d.b32.trap {{{reg}}}, [{addr[1:-1]}, {{0}}];"
        return f"sust.b.1d.b32.trap [{addr[1:-1]}, {{0}}], {{{value}}};"
    if a.ann.proxy == "constant":
        return f"ld.const.u32 {reg}, {addr};"
    qual = "" if a.ann.sem == "weak" else f".{a.ann.sem}.{a.ann.scope}"
    if a.dir == "R":
        return f"ld{qual}.global.u32 {reg}, {addr};"
    return f"st{qual}.global.u32 {addr}, {value};"


def _ptx_rmw(r: Access, w: Access, reg: str, addr: str, op: str) -> str:
    from .edges import rmw_sem

    head = f"atom.{rmw_sem(r.ann, w.ann)}.{r.ann.scope}.global"
    if op == "cas":
        return f"{head}.cas.b32 {reg}, {addr}, {r.value}, {w.value};"
    if op == "add":
        return f"{head}.add.u32 {reg}, {addr}, {w.value - r.value};"
    return f"{head}.exch.b32 {reg}, {addr}, {w.value};"


def _ptx_dep(lk: Link, a: Access, last: str, tmp: int, lines: list[str]) -> tuple[str | None, str | None]:
    """The instructions of a dependency from register ``last`` to access ``a``; the address or
    value they replace (None: unchanged)."""
    if lk.dep == "addr":
        lines += [f"    xor.b64 %rd{tmp}, {last}, {last};",
                  f"    mov.u64 %ra{tmp}, {loc_name(a)};",
                  f"    add.u64 %ra{tmp}, %ra{tmp}, %rd{tmp};"]
        return f"[%ra{tmp}]", None
    if lk.dep == "data":
        lines += [f"    xor.b32 %rv{tmp}, {last}, {last};",
                  f"    add.u32 %rv{tmp}, %rv{tmp}, {a.value};"]
        return None, f"%rv{tmp}"
    lines += [f"    setp.eq.u32 %p{tmp}, {last}, {last};", f"    @%p{tmp} bra $L{tmp};", f"$L{tmp}:"]
    return None, None


def _ptx_thread(t: Thread, k: int) -> list[str]:
    head = f".thread T{k}" + ("" if t.place.cluster is None else f" .cluster {t.place.cluster}")
    lines = [head + f" .cta {t.place.cta} {{"]
    nread, last, tmp = 0, None, 0
    for i, a in enumerate(t.accesses):
        lk = t.links[i - 1] if i else None
        if lk is not None and lk.kind == "rmw":
            continue  # the write of the atom written with its read
        loc, value = f"[{loc_name(a)}]", str(a.value)
        if lk is not None and lk.kind == "fence":
            lines.append(f"    fence.{lk.fence[0]}.{lk.fence[1]};")
        elif lk is not None and lk.kind == "dep":
            new_loc, new_value = _ptx_dep(lk, a, last, tmp, lines)
            loc, value, tmp = new_loc or loc, new_value or value, tmp + 1
        reg = f"%r{nread}"
        if i < len(t.links) and t.links[i].kind == "rmw":
            lines.append("    " + _ptx_rmw(a, t.accesses[i + 1], reg, loc, t.links[i].dep))
        else:
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
    lines += [_PTX_ALIAS[p].format(a=al, x=x) for al, x, p in _aliases(test)]
    for k, t in enumerate(test.threads):
        lines += _ptx_thread(t, k)
    cond = " && ".join(f"{r} == {v}" for r, v in _conds(test, lambda k, n: f"T{k}:%r{n}"))
    lines.append(f"exists ({cond})")
    return "\n".join(lines) + "\n"


# ----- .litmus (Dat3M's PTX dialect) --------------------------------------------------------------


_LITMUS_LOAD = {"generic": "ld", "alias": "ld", "texture": "tld", "surface": "suld", "constant": "cold"}


def _litmus_access(a: Access, reg: str, loc: str, value: str) -> str:
    qual = ".weak" if a.ann.sem == "weak" else f".{a.ann.sem}.{a.ann.scope}"
    if a.dir == "R":
        return f"{_LITMUS_LOAD[a.ann.proxy]}{qual} {reg}, {loc}"
    return f"{'sust' if a.ann.proxy == 'surface' else 'st'}{qual} {loc}, {value}"


def _litmus_rmw(r: Access, w: Access, reg: str, loc: str, op: str) -> str:
    from .edges import rmw_sem

    head = f"atom.{rmw_sem(r.ann, w.ann)}.{r.ann.scope}"
    if op == "cas":
        return f"{head}.cas {reg}, {loc}, {r.value}, {w.value}"
    if op == "add":
        return f"{head}.add {reg}, {loc}, {w.value - r.value}"
    return f"{head}.exch {reg}, {loc}, {w.value}"


def _litmus_link(lk: Link, a: Access, k: int, last: str, tmp: int, cells: list[str]) -> str | None:
    """The cells of a fence or dependency before access ``a``; the value it replaces (or None)."""
    if lk.kind == "fence":
        if lk.fence[0] not in ("sc", "acq_rel", "proxy"):
            raise EdgeError(f"fence.{lk.fence[0]} has no .litmus spelling", None, "write .ptx")
        cells.append(f"fence.{lk.fence[0]}.{lk.fence[1]}")
    elif lk.kind == "dep":
        if lk.dep == "addr":
            raise EdgeError("an address dependency has no .litmus spelling", None, "write .ptx")
        if lk.dep == "data":
            cells += [f"xor r{tmp}, {last}, {last}", f"add r{tmp}, r{tmp}, {a.value}"]
            return f"r{tmp}"
        cells += [f"beq {last}, {last}, LC{k}{tmp}", f"LC{k}{tmp}:"]
    return None


def _litmus_cells(t: Thread, k: int) -> list[str]:
    if t.place.cluster is not None:
        raise EdgeError(f"{k}: .litmus has no cluster placement", None, "write .ptx (--format ptx)")
    cells: list[str] = []
    nread, last, tmp = 0, None, 10
    for i, a in enumerate(t.accesses):
        lk = t.links[i - 1] if i else None
        if lk is not None and lk.kind == "rmw":
            continue
        value = str(a.value)
        if lk is not None and lk.kind in ("fence", "dep"):
            value = _litmus_link(lk, a, k, last, tmp, cells) or value
            tmp += lk.kind == "dep"
        reg = f"r{nread}"
        if i < len(t.links) and t.links[i].kind == "rmw":
            cells.append(_litmus_rmw(a, t.accesses[i + 1], reg, loc_name(a), t.links[i].dep))
        else:
            cells.append(_litmus_access(a, reg, loc_name(a), value))
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
    lines += [f"{al} @ {_LITMUS_PROXY[p]} aliases {x};" for al, x, p in _aliases(test)]
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
        if any(lk.kind == "rmw" for lk in t.links) or any(a.ann.proxy != "generic" for a in t.accesses):
            raise EdgeError("LISA (--format herd) is written for plain accesses only", None,
                            "write .ptx or .litmus")
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
