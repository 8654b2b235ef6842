"""A fix that splits a vector access around its flag element (issue 42, item 5: ``explain --fix``
on CUB's packed tile state and NCCL's LL line).

PTX ISA 8.2.4 (memory operations on vector data types): a vector access is "modelled as a set of
equivalent memory operations with a scalar data type, executed in an unspecified order on the
elements in the vector". A flag and its data published with one ``st.v2``/``st.v4`` and polled
with one ``ld.v2``/``ld.v4`` are therefore ordered by nothing, whatever the semantics: a release
(acquire) element orders the thread's *other* accesses before (after) it, not the elements of
its own instruction (kernel/module/lowering.py ``_vector``). No strengthening of the instruction
helps; what does is the message-passing pattern of 8.8 spelt out: the vector store split into
scalar stores, the data elements first and the flag element last as a release; the vector load
split into the flag element first as an acquire, then the data elements.

A candidate (:func:`split_changes`) is one of these splits of one strong vector access (weak
vectors, nvcc's merged plain stores, are no flags) with one element as the flag: kind
``"split"``, ``index`` the first element's instruction, ``element`` the flag's position, ``sem``
release (a store) or acquire (a load), ``scope`` the access's own (``.volatile``: ``.sys``, as
8.2.4 defines it for global memory). :func:`apply_split` makes it on the lowered elements: the
flag moved last (first), given the new semantics, the other elements kept as they are; an
acquire/release vector's :class:`~ptxmm.kernel.module.lowering.VectorOrder` (the execution's
choice of the element order) becomes a plain label, the order now fixed as the split code fixes
it. The edit in CUDA words is kernel/cuda_edits.py's :func:`~ptxmm.kernel.cuda_edits.split_edit`.

Two changes fix.py would otherwise propose are not made on a vector's elements: raising a relaxed
vector to acquire/release as a whole (its elements' order would then be the execution's choice,
which the lowered relaxed elements, kept in element order, no longer carry), and a fence between
two of its elements (no instruction can go inside one access: :func:`inside_vector`)."""

from __future__ import annotations

import re
from dataclasses import replace

from ..ir.program import Label, Load, Store, Thread
from ..kernel.module.lowering import VectorOrder

SPLIT_COST = 2  # two edits of one statement: more than a semantics change, less than a fence
_VEC_RE = re.compile(r"\.v(2|4)\b")


def is_vector(ins) -> bool:
    """An element of a lowered vector access (its text is the vector instruction's)."""
    return isinstance(ins, (Load, Store)) and _VEC_RE.search(ins.text.partition(" ")[0]) is not None


def inside_vector(t: Thread, i: int) -> bool:
    """Whether position ``i`` (before instruction ``i``) lies inside one vector access: between
    two of its elements, or between an acquire/release vector's order and its first element. No
    instruction (no fence) can go there."""
    if i <= 0 or i >= len(t.instrs):
        return False
    a, b = t.instrs[i - 1], t.instrs[i]
    return isinstance(a, VectorOrder) or (is_vector(a) and is_vector(b) and type(a) is type(b)
                                          and (a.text, a.pos) == (b.text, b.pos))


def groups(t: Thread) -> list[tuple[int, int]]:
    """The thread's strong vector accesses as (first element's index, number of elements): the
    lowered elements are consecutive loads or stores of one PTX line and text."""
    out, i, ins_ = [], 0, t.instrs
    while i < len(ins_):
        ins = ins_[i]
        m = _VEC_RE.search(ins.text.partition(" ")[0]) if is_vector(ins) else None
        if m is None:
            i += 1
            continue
        n = int(m.group(1))
        run = ins_[i:i + n]
        same = all(type(x) is type(ins) and (x.text, x.pos) == (ins.text, ins.pos) for x in run)
        if len(run) == n and same:
            if ins.sem != "weak" and not _self_address(run):
                out.append((i, n))
            i += n
        else:
            i += 1
    return out


def _self_address(run) -> bool:
    """A vector load into a register that addresses one of its elements: its order matters."""
    dst = {x.dst for x in run if isinstance(x, Load)}
    return any(x.addr.base in dst for x in run)


def split_changes(t: Thread, need: str, change) -> list:
    """Every split of every strong vector access of ``t``, one per choice of the flag element;
    ``change`` is fix.Change (passed in: this module is below fix.py)."""
    out = []
    for start, n in groups(t):
        ins = t.instrs[start]
        store = isinstance(ins, Store)
        sem = "release" if store else "acquire"
        scope = ins.scope or need
        op = "st" if store else "ld"
        where = f" (line {ins.pos.line})" if ins.pos is not None else ""
        for k in range(n):
            how = f"element {k} last, as `{op}.{sem}.{scope}`" if store else \
                f"element {k} first, as `{op}.{sem}.{scope}`"
            what = "stores" if store else "loads"
            out.append(change("split", t.index, start, sem, scope, SPLIT_COST,
                              f"split `{ins.text}`{where} into scalar {what}: {how}", element=k))
    return out


def apply_split(instrs: list, c) -> None:
    """Make the split ``c`` in a thread's instruction list (in place; the length is kept)."""
    start = c.index
    n = vector_size_of(instrs, start)
    elems = instrs[start:start + n]
    flag = elems[c.element]
    flag = replace(flag, sem=c.sem, scope=c.scope, volatile=False)
    rest = [e for j, e in enumerate(elems) if j != c.element]
    instrs[start:start + n] = [*rest, flag] if isinstance(flag, Store) else [flag, *rest]
    if start > 0 and isinstance(instrs[start - 1], VectorOrder):
        vo = instrs[start - 1]
        instrs[start - 1] = Label(name=vo.name, pos=vo.pos, text=vo.text)


def vector_size_of(instrs, start: int) -> int:
    """The number of elements of the vector access whose first element is at ``start``."""
    m = _VEC_RE.search(instrs[start].text.partition(" ")[0])
    return int(m.group(1)) if m else 1


__all__ = ["SPLIT_COST", "apply_split", "groups", "inside_vector", "is_vector", "split_changes",
           "vector_size_of"]
