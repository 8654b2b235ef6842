"""A fix that makes a packed vector access ONE scalar access (issue 42, item 5: ``explain --fix``
on CUB's packed tile state, ``ScanTileState<T, true>``).

PTX ISA 8.2.4 (memory operations on vector data types): a vector access is "modelled as a set of
equivalent memory operations with a scalar data type, executed in an unspecified order on the
elements in the vector". A status word and its value published with one ``st.relaxed.gpu.v2.u32``
and polled with one ``ld.relaxed.gpu.v2.u32`` are two locations to the model: a reader may see the
new status beside the old value (a torn read). What CUB relies on — one 8-byte word read and
written whole — is what the ISA gives a *scalar* access: a ``.b64`` load or store is one memory
operation — one event of the model, reading or writing all its bytes at once (8.2.4 splits only
vector accesses into elements). So the fix is the packed word accessed as one ``b64`` scalar
(``ld.relaxed.gpu.b64 w, [a]; mov.b64 {lo, hi}, w`` and ``mov.b64 w, {lo, hi}; st.relaxed.gpu.b64
[a], w``), at the same semantics and scope (vecsplit.py's split, the other fix of such a pair,
needs acquire/release instead).

The model has no mixed-size accesses (ir/layout.py): a buffer is accessed at one width. So the
change is made on a whole buffer, and only where every access of the buffer is a strong vector
access of one shape — ``n`` elements of ``w >= 16`` bits (what ``mov.b32/.b64 {a, b, ...}`` packs),
``n * w <= 64``, element ``k`` at an element index ``k`` modulo ``n`` — and the condition names
none of its elements: every such access becomes one ``b{n*w}`` access and the buffer's elements
are retyped to ``n * w`` bits (``n`` old elements, the first the least significant, as
``mov.b64 d, {a, b}`` packs them: PTX ISA, mov).
Which buffer an access names is read off the event graph of the program (its elements' locations).

A candidate (:func:`pack_changes`) is kind ``"pack"``: one per buffer, ``sites`` every vector
access of the buffer (thread, index of its first element, in any thread), ``region`` the buffer.
:func:`apply_pack` makes it in a thread's instruction list (the length changes: fix.apply makes
packs and inserted fences from the last position back); :func:`packed_program` retypes the buffer.
The edit in CUDA words is kernel/cuda_edits.py's :func:`~ptxmm.kernel.cuda_edits.pack_edit`."""

from __future__ import annotations

import re
from dataclasses import replace

from ..errors import UnsupportedError
from ..ir.instructions import Alu, Imm, Mov, Reg, type_width
from ..ir.program import Label, Program, Store
from ..kernel.module.lowering import VectorOrder
from ..semantics.builder import build
from .vecsplit import groups

PACK_COST = 2  # two asm lines (the store's and the load's) edited, as a split's
MAX_BITS = 64  # the widest scalar access a packed word becomes here (.b64)
_ELEM_RE = re.compile(r"^(?P<name>.+)\[(?P<i>\d+)\]$")


def _shape(ins) -> tuple[int, int]:
    """(elements, bits of each) of the vector access an element of which is ``ins``."""
    m = re.search(r"\.v(2|4)\b", ins.text.partition(" ")[0])
    return (int(m.group(1)) if m else 1), type_width(ins.type)


def _accesses(prog: Program):
    """Per buffer (region name): the (thread, first element index) of every strong vector group
    whose elements name it, and whether every event on its elements comes from such a group at
    the right element (see the module docstring). None: the program has no layout or no group."""
    vec = {(t.index, s): n for t in prog.threads for s, n in groups(t)}
    if prog.layout is None or not vec:
        return None
    eg = build(prog, unroll=1)
    # (thread, id(element instruction)) → (group, k): a kernel's threads share instruction objects
    elem_of: dict[tuple[int, int], tuple[tuple[int, int], int]] = {}
    for (ti, s), n in vec.items():
        for k in range(n):
            elem_of[(ti, id(prog.threads[ti].instrs[s + k]))] = ((ti, s), k)
    names = {r.name for r in prog.layout.regions}
    sites: dict[str, set] = {}
    bad: set[str] = set()
    for e in eg.events:
        m = _ELEM_RE.match(e.loc or "")
        region = m.group("name") if m else e.loc
        if e.thread < 0 or region not in names:
            continue
        g = elem_of.get((e.thread, id(e.instr)))
        if g is None:
            bad.add(region)
            continue
        (ti, s), k = g
        n = vec[(ti, s)]
        if m is None or int(m.group("i")) % n != k:
            bad.add(region)
        sites.setdefault(region, set()).add((ti, s))
    return {r: tuple(sorted(v)) for r, v in sites.items() if r not in bad}


def pack_changes(prog: Program, change) -> list:
    """One "pack" change per buffer whose every access is a strong vector access of one shape
    that fits in one scalar (``change`` is fix.Change, passed in: this module is below fix.py)."""
    found = _accesses(prog)
    if not found:
        return []
    out = []
    cond = repr(prog.condition) + repr(prog.observed) + repr(prog.filter)
    for region, sites in found.items():
        r = next(x for x in prog.layout.regions if x.name == region)
        shapes = {_shape(prog.threads[t].instrs[s]) for t, s in sites}
        if len(shapes) != 1 or f"'{region}[" in cond or r.mixed or not r.located:
            continue
        (n, w), = shapes
        if n * w > MAX_BITS or w < 16 or w != type_width(r.type) or r.n % n:
            continue
        if not _builds(prog, region, n, sites):
            continue
        t0, s0 = sites[0]
        ins = prog.threads[t0].instrs[s0]
        heads = sorted({prog.threads[t].instrs[s].text.partition(" ")[0] for t, s in sites})
        text = (f"make every access of {region} ({', '.join(f'`{h}`' for h in heads)}) one {n * w}-bit "
                f"scalar access (`.b{n * w}`): one memory operation, not {n} (PTX ISA 8.2.4)")
        out.append(change("pack", t0, s0, ins.sem, ins.scope, PACK_COST, text, element=n, region=region,
                          sites=sites))
    return out


def _builds(prog: Program, region: str, n: int, sites) -> bool:
    """Whether the builder accepts ``prog`` with the pack of ``region`` made (as fix.apply makes
    it): every access of the buffer it steps must be a packed one, and an access the original's
    graph does not show is not (a spin loop's read of a buffer no thread writes: the read-only
    fold leaves its path hanging, semantics/builder.py) — a mixed-size access, refused (ir/
    layout.py). A candidate whose program cannot be built is no fix: not proposed."""
    threads = list(prog.threads)
    for ti in sorted({t for t, _s in sites}):
        instrs = list(threads[ti].instrs)
        for s in sorted((s for t, s in sites if t == ti), reverse=True):
            apply_pack(instrs, s, f"{ti}.{s}")
        threads[ti] = replace(threads[ti], instrs=tuple(instrs))
    try:
        build(packed_program(replace(prog, threads=tuple(threads)), {(region, n)}), unroll=1)
    except UnsupportedError:
        return False
    return True


def apply_pack(instrs: list, start: int, tag: str) -> None:
    """Make the vector access whose first element is at ``start`` one scalar access (in place):
    a store packs its elements (the first the least significant) into one register and stores it;
    a load loads one register and unpacks it into the elements' registers. ``tag`` names the
    scratch registers (unique per site)."""
    first = instrs[start]
    n, w = _shape(first)
    elems = instrs[start:start + n]
    big = f"b{n * w}"
    word = Reg(f"%ptxmm.pack{tag}")
    keep = {"pos": first.pos, "guard": first.guard}
    text = re.sub(r"\.v[24]\.[busf]\d+", f".{big}", first.text, count=1)
    out: list = []
    if isinstance(first, Store):
        for k, e in enumerate(elems):
            part = Reg(f"%ptxmm.pack{tag}.{k}")
            out += [Mov(dst=part, src=e.src, type=f"b{w}", text=e.text, **keep),
                    Mov(dst=part, src=part, type=big, text=e.text, **keep),
                    Alu(op="and", dst=part, srcs=(part, Imm((1 << w) - 1)), type=big, text=e.text, **keep)]
            if k:
                out += [Alu(op="shl", dst=part, srcs=(part, Imm(k * w)), type=big, text=e.text, **keep),
                        Alu(op="or", dst=word, srcs=(word, part), type=big, text=e.text, **keep)]
            else:
                out.append(Mov(dst=word, src=part, type=big, text=e.text, **keep))
        out.append(replace(first, src=word, type=big, text=text))
    else:
        out.append(replace(first, dst=word, type=big, text=text))
        for k, e in enumerate(elems):
            part = Reg(f"%ptxmm.pack{tag}.{k}")
            out += [Alu(op="shr", dst=part, srcs=(word, Imm(k * w)), type=big, text=e.text, **keep),
                    Mov(dst=e.dst, src=part, type=f"b{w}", text=e.text, **keep)]
    instrs[start:start + n] = out
    if start > 0 and isinstance(instrs[start - 1], VectorOrder):
        vo = instrs[start - 1]
        instrs[start - 1] = Label(name=vo.name, pos=vo.pos, text=vo.text)


def _join(parts, w: int) -> int:
    """Words of ``w`` bits joined into one, the first the least significant (``mov.b64 d, {a, b}``)."""
    return sum((v & ((1 << w) - 1)) << (k * w) for k, v in enumerate(parts))


def packed_program(prog: Program, regions) -> Program:
    """``prog`` with each of ``regions`` (name, n) merged ``n`` elements at a time into one element
    of ``n * w`` bits (:func:`_join`), in the layout and the locations."""
    layout, locs = prog.layout, list(prog.locations)
    for name, n in regions:
        r = next(x for x in layout.regions if x.name == name)
        w = type_width(r.type)
        init = tuple(_join([r.init[j] if j < len(r.init) else 0 for j in range(i * n, i * n + n)], w)
                     for i in range(r.n // n)) if r.init else ()
        big = replace(r, type=f"b{n * w}", count=r.n // n, init=init)
        layout = replace(layout, regions=tuple(big if x is r else x for x in layout.regions))
        names = {r.element_name(i) for i in range(r.n)}
        old = {x.name: x for x in locs if x.name in names}
        new = []
        for i in range(big.n):
            parts = [old.get(r.element_name(i * n + k)) for k in range(n)]
            base = next((p for p in parts if p is not None), None)
            if base is not None:
                value = _join([p.init if p is not None else 0 for p in parts], w)
                new.append(replace(base, name=big.element_name(i), type=big.type, init=value))
        at = next((j for j, x in enumerate(locs) if x.name in old), len(locs))
        locs = [x for x in locs if x.name not in old]
        locs[at:at] = new
    return replace(prog, layout=layout, locations=tuple(locs))


__all__ = ["PACK_COST", "apply_pack", "pack_changes", "packed_program"]
