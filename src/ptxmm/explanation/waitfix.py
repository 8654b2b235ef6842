"""The missing mbarrier wait as a checked fix (issue 42, item 5): where a kernel's race is a
slot refilled before its reader is done with it, and the reader says "done" by arriving on an
mbarrier the writer never waits on (:func:`ptxmm.explanation.fixfind.missing_wait` names it), the
wait is built from the kernel itself and model-checked like every other fix.

The parity each inserted wait names is derived, never guessed (PTX ISA 9.7.13.15, mbarrier:
``mbarrier.init`` sets the expected arrival count of every phase; a phase completes when that
many arrivals have been made; ``test_wait``/``try_wait`` ``.parity`` names the current phase or
the immediately preceding one by its parity, even phases 0 and odd 1):

* the writer's line is edited at each PTX copy nvcc made of it (a loop nvcc unrolled), in program
  order; copy ``k`` writes slot location ``L`` (one location, one run: a loop nvcc kept runs one
  instruction with several parities, which no single inserted instruction can name — not
  derivable);
* its ``j``-th write of ``L`` must wait for the reader's ``j-1``-th read of ``L`` (program order of
  the reader's reads at the race's read line), which the reader follows by an arrive on the
  mbarrier ``M``; counting the arrivals on ``M`` (all of them the reader's, each of count 1, each on
  every path that reaches the next: else the phase is not fixed by the program) and dividing by
  the init count gives the phase that arrival completes; its parity is the one waited for;
* the first write of a slot (``j = 0``) has no read to wait for: the parity of the phase before
  the barrier's first (1), which a fresh barrier (phase 0) counts as complete — ThunderKittens'
  "finished phase bits start as 1s".

The wait is inserted as the kernel's own waits are written (a ``try_wait.parity`` loop:
``L: mbarrier.try_wait.parity.shared::cta.b64 p, [M], parity; @!p bra L;``) before the first PTX
instruction of each copy of the writer's CUDA line, in every thread that runs the code
(:func:`wait_program`); the address is the mbarrier's symbol plus offset, traced from the
reader's own arrive. A candidate is a fix only when the check says so (fixfind.wait_judged): the
finding aimed at is gone (and no new one of its property), no new race, no new hang, and, where
the kernel has a condition, its outcome forbidden (fixjudge). The CUDA line the user inserts
(:func:`wait_edit`) is the kernel's own wait call (the reader's, on another mbarrier) on the
mbarrier the reader arrives on, its parity read from the phase bit the writer flips at the line
before its write, as the reader's wait reads the bit it flips after it; without such a flip the
parities are said in words."""

from __future__ import annotations

import re
from dataclasses import replace

from .._infra.records import record
from ..ir.instructions import Addr, Alu, Branch, Imm, Label, MBarrier, Mov, Reg, Store, Sym
from ..ir.program import Program
from ..kernel.cuda_edits import CudaEdit, cuda_line
from ..semantics.builder import build
from ..semantics.result import Finding
from .fix import Change


@record
class WaitSite:
    """One inserted wait: before instruction ``index`` of the writer's thread, on the mbarrier
    location ``mbar`` (``sym`` + ``offset`` in the PTX), for ``parity``; ``use``: which write of
    its slot it guards (0: the first)."""

    index: int
    mbar: str
    sym: str
    offset: int
    parity: int
    use: int


@record
class WaitPlan:
    """The wait a race lacks: ``sites`` (empty, with ``reason``, where no parity can be derived),
    the writer's thread, the mbarrier the reader arrives on, and the CUDA places involved."""

    writer: int
    reader: int
    mbar: str
    sites: tuple[WaitSite, ...]
    reason: str | None
    write_at: tuple[str, int, str]
    arrive_at: tuple[str, int, str]
    wait_at: tuple[str, int, str] | None  # the reader's own wait before its read (its style)


@record
class WaitChange(Change):
    """A fix's change that inserts the waits of a plan (kind ``wait``)."""

    plan: WaitPlan | None = None

    def to_json(self) -> dict:
        sites = () if self.plan is None else self.plan.sites
        return super().to_json() | {"waits": [{"index": s.index, "mbarrier": s.mbar, "parity": s.parity}
                                              for s in sites]}


def _mbar(e, ops) -> bool:
    return isinstance(e.instr, MBarrier) and e.instr.op in ops


def _code(ins) -> tuple | None:
    src = getattr(ins.pos, "src", None) if ins is not None and ins.pos is not None else None
    return (src.file, src.line) if src is not None and src.line > 0 else None


def plan_of(prog: Program, race: Finding, unroll: int = 2) -> WaitPlan | None:
    """The wait ``race`` lacks, with the parity of each copy derived (see the module docstring;
    ``reason`` says why where it cannot be); None where the program shows no missing wait (no
    arrive after the read, or the writer already waits on that mbarrier)."""
    if len(race.events) != 2 or prog.format != "kernel":
        return None
    eg = build(prog, unroll=unroll)  # the check's own graph: its event ids are the finding's
    ev = {e.eid: e for e in eg.events}
    a, b = (ev.get(x.eid) for x in race.events)
    if a is None or b is None:
        return None
    r, w = (a, b) if str(a.kind) == "R" else (b, a)
    if str(w.kind) != "W" or r.thread == w.thread:
        return None
    mine = sorted((e for e in eg.events if e.thread == r.thread), key=lambda e: e.index)
    arrive = next((e for e in mine if e.index > r.index and _mbar(e, ("arrive", "arrive_drop"))
                   and str(e.kind) == "W"), None)
    if arrive is None or any(e.thread == w.thread and e.index < w.index and e.loc == arrive.loc
                             and _mbar(e, ("try_wait", "test_wait")) for e in eg.events):
        return None
    places = [cuda_line(prog, x.instr.pos) for x in (w, arrive)]
    if places[0] is None or places[1] is None:
        return None
    waits = [e for e in mine if e.index < r.index and _mbar(e, ("try_wait", "test_wait"))]
    wait_at = cuda_line(prog, waits[-1].instr.pos) if waits else None
    plan = WaitPlan(w.thread, r.thread, arrive.loc, (), None, places[0], places[1], wait_at)
    sites, reason = _sites(prog, eg, r, w)
    return replace(plan, sites=sites, reason=reason)


def _sites(prog: Program, eg, r, w) -> tuple[tuple[WaitSite, ...], str | None]:
    """Each copy of the writer's line: where its wait goes and its parity (module docstring)."""
    wt = prog.threads[w.thread]
    line = _code(w.instr)
    per_instr: dict[int, list] = {}  # the writer's own events of each instruction
    for e in eg.events:
        if e.thread == w.thread and e.instr is not None:
            per_instr.setdefault(id(e.instr), []).append(e)
    copies = [j for j, i in enumerate(wt.instrs) if isinstance(i, Store) and _code(i) == line]
    sites: list[WaitSite] = []
    uses: dict[str, int] = {}
    for j in copies:
        evs = [e for e in per_instr.get(id(wt.instrs[j]), ()) if str(e.kind) == "W"]
        if not evs:
            continue  # a copy on no path of the writer
        twice = any(e.paths & f.paths for e in evs for f in evs if e is not f)  # on one path: a loop
        if twice or len({e.loc for e in evs}) != 1:
            return (), (f"the write at line {line[1]} runs more than once in one execution (a loop nvcc "
                        "kept) or at a computed slot: each run needs its own phase parity, which no one "
                        "inserted instruction names; the kernel's own phase bookkeeping is needed")
        loc = evs[0].loc
        use = uses.get(loc, 0)
        uses[loc] = use + 1
        found = _parity(prog, eg, r, loc, use)
        if isinstance(found, str):
            return (), found
        mbar, sym, off, parity = found
        sites.append(WaitSite(_start(wt, j, line), mbar, sym, off, parity, use))
    if not sites:
        return (), f"no write of line {line[1]} was found in {wt.name}'s code"
    return tuple(sites), None


def _start(t, j: int, line) -> int:
    """The first instruction of the run of the CUDA line ``line`` that ends at ``j``."""
    while j > 0 and _code(t.instrs[j - 1]) == line and not isinstance(t.instrs[j - 1], (Label, Branch)):
        j -= 1
    return j


def _parity(prog: Program, eg, r, loc: str, use: int):
    """(mbarrier, symbol, offset, parity) of the wait before the ``use``-th write of ``loc``; a
    reason (str) where the program does not fix it."""
    reader = sorted((e for e in eg.events if e.thread == r.thread), key=lambda e: e.index)
    reads = [e for e in reader if str(e.kind) == "R" and e.loc == loc and _code(e.instr) == _code(r.instr)]
    arrives = [next((x for x in reader if x.index > e.index and _mbar(x, ("arrive", "arrive_drop"))
                     and str(x.kind) == "W"), None) for e in reads]
    if not reads or any(x is None for x in arrives) or len({x.loc for x in arrives}) != 1:
        return f"the reads of {loc} are not each followed by an arrive on one mbarrier"
    mbar = arrives[0].loc
    addr = _address(prog.threads[r.thread], arrives[0].instr)
    if addr is None or _named(prog, *addr) != mbar.split("@")[0]:
        return f"the address of the mbarrier {mbar} is computed at run time (no symbol and offset)"
    if use == 0:
        return (mbar, *addr, 1)  # the phase before the first: complete on a fresh barrier
    if use - 1 >= len(reads):
        return f"the reader reads {loc} {len(reads)} time(s), fewer than the writer refills it"
    count = _init_count(prog, eg, mbar)
    on_m = [e for e in eg.events
            if _mbar(e, ("arrive", "arrive_drop")) and str(e.kind) == "W" and e.loc == mbar]
    if count is None or any(e.thread != r.thread or e.instr.count is not None for e in on_m):
        return (f"the arrivals on {mbar} are not one thread's, each of count 1, with a constant init count: "
                "which phase an arrival completes is not fixed by the program")
    mine = sorted((e for e in on_m), key=lambda e: e.index)
    target = arrives[use - 1]
    before = [e for e in mine if e.index <= target.index]
    if any(not target.paths <= e.paths for e in before):
        return (f"an arrival on {mbar} before line {_code(target.instr)[1]} is conditional: its phase is "
                "not fixed")
    return (mbar, *addr, ((len(before) - 1) // count) % 2)


def _address(t, ins) -> tuple[str, int] | None:
    """An mbarrier instruction's address as (symbol, offset), traced through the ``mov``/``add``
    of its thread that compute it; None where it is not a symbol plus a constant."""
    base, off = ins.addr.base, ins.addr.offset
    at = next((i for i, x in enumerate(t.instrs) if x is ins), None)
    while isinstance(base, Reg) and at is not None:
        d = next((i for i in range(at - 1, -1, -1) if getattr(t.instrs[i], "dst", None) == base), None)
        if d is None:
            return None
        x, at = t.instrs[d], d
        if isinstance(x, Mov) and isinstance(x.src, (Sym, Reg)) and x.text.startswith("mov"):
            base = x.src
        elif isinstance(x, Alu) and x.op == "add" and len(x.srcs) == 2 and isinstance(x.srcs[1], Imm):
            base, off = x.srcs[0], off + x.srcs[1].value
        else:
            return None
    return (base.name, off) if isinstance(base, Sym) else None


def _named(prog: Program, sym: str, off: int) -> str | None:
    """The location a symbol plus offset names in the launch's layout (the trace's cross-check)."""
    regions = prog.layout.regions if prog.layout is not None else ()
    r = next((r for r in regions if r.ptx == sym), None)
    if r is None or off % r.size or not 0 <= off // r.size < r.n:
        return None
    return r.element_name(off // r.size)


def _init_count(prog: Program, eg, mbar: str) -> int | None:
    """The expected arrival count ``mbarrier.init`` gives ``mbar``: one init, a constant count."""
    inits = {id(e.instr): e for e in eg.events if _mbar(e, ("init",)) and e.loc == mbar}
    if len(inits) != 1:
        return None
    e = next(iter(inits.values()))
    c = e.instr.count
    if isinstance(c, Reg):
        t = prog.threads[e.thread]
        at = next((i for i, x in enumerate(t.instrs) if x is e.instr), 0)
        d = next((i for i in range(at - 1, -1, -1) if getattr(t.instrs[i], "dst", None) == c), None)
        c = t.instrs[d].src if d is not None and isinstance(t.instrs[d], Mov) else None
    return c.value if isinstance(c, Imm) and c.value > 0 else None


# ----- the candidate -----------------------------------------------------------------------------


def change_of(prog: Program, plan: WaitPlan) -> WaitChange:
    """The fix's change: the waits of ``plan`` (said at the writer's thread)."""
    t = prog.threads[plan.writer]
    pars = ", ".join(str(s.parity) for s in plan.sites)
    first = t.instrs[plan.sites[0].index]
    where = f" (line {first.pos.line})" if first.pos is not None else ""
    n = len(plan.sites)
    text = (f"insert a `mbarrier.try_wait.parity.shared::cta.b64` loop in {t.name} before each of the {n} "
            f"copies of CUDA line {plan.write_at[1]} (the first: `{first.text}`{where}): on "
            f"{', '.join(s.mbar for s in plan.sites)}, parities {pars}")
    return WaitChange("wait", plan.writer, plan.sites[0].index, "acquire", "cta", 3, text, plan=plan)


def _wait_code(s: WaitSite, k: int, pos) -> tuple:
    p = Reg(f"%ptxmm_wait{k}")
    label = f"$ptxmm_wait{k}"
    at = f"{s.sym}+{s.offset}" if s.offset else s.sym
    return (Label(pos=pos, text=f"{label}:", name=label),
            MBarrier(pos=pos, text=f"mbarrier.try_wait.parity.shared::cta.b64 {p.name}, [{at}], {s.parity}",
                     op="try_wait", addr=Addr(Sym(s.sym), s.offset), dst=p, state=Imm(s.parity), parity=True,
                     sem="acquire", scope="cta"),
            Branch(pos=pos, text=f"@!{p.name} bra {label}", guard=(p, True), target=label))


def wait_program(prog: Program, c: WaitChange) -> Program:
    """The kernel with the waits inserted, in every thread whose code is the writer's (a kernel's
    threads share it; a thread that never runs the writer's branch never reaches them)."""
    plan = c.plan
    w = prog.threads[plan.writer]
    threads = []
    for t in prog.threads:
        same = len(t.instrs) == len(w.instrs) and all(t.instrs[s.index].text == w.instrs[s.index].text
                                                       for s in plan.sites)
        if not same:
            threads.append(t)
            continue
        instrs = list(t.instrs)
        for k, s in sorted(enumerate(plan.sites), key=lambda ks: -ks[1].index):
            instrs[s.index:s.index] = _wait_code(s, k, t.instrs[s.index].pos)
        regs = t.reg_types + tuple((f"%ptxmm_wait{k}", "pred") for k in range(len(plan.sites)))
        threads.append(replace(t, instrs=tuple(instrs), reg_types=regs))
    return replace(prog, threads=tuple(threads))


# ----- in CUDA ------------------------------------------------------------------------------------

_CALL = re.compile(r"^\s*(?P<fn>[\w:]+(?:<[^<>()]*>)?)\s*\((?P<args>.*)\)\s*(?P<end>;?)\s*(?://.*)?$")


def _call(text: str, statement: bool = True) -> tuple[str, list[str]] | None:
    """A line that is one call statement (``statement=False``: a call expression): its function
    (with template arguments) and arguments."""
    m = _CALL.match(text or "")
    if m is None or bool(m.group("end")) != statement:
        return None
    args, depth, cur = [], 0, ""
    for ch in m.group("args"):
        depth += ch in "([<" and 1 or (-1 if ch in ")]>" else 0)
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return m.group("fn"), [*args, cur.strip()] if cur.strip() else args


def _split_fn(fn: str) -> tuple[str, str]:
    name, _, tmpl = fn.partition("<")
    return name, ("<" + tmpl) if tmpl else ""


def wait_edit(prog: Program, c: WaitChange) -> CudaEdit | None:
    """The CUDA line the user inserts (module docstring): the reader's wait call on the mbarrier the
    reader arrives on; its parity read from the phase bit the writer flips just before its write
    (inserted before that flip), as the reader's wait reads the bit it flips just after it."""
    plan = c.plan
    if plan is None or not plan.sites:
        return None
    file, line, text = plan.write_at
    lines = _source(prog, plan)
    name = prog.threads[plan.writer].name
    arrive, wait = _call(plan.arrive_at[2]), _call(plan.wait_at[2]) if plan.wait_at else None
    pars = ", ".join(str(s.parity) for s in plan.sites)
    said = f"(parities {pars} at the {len(plan.sites)} copies of line {line}, checked in PTX)"
    if arrive is None or wait is None or len(arrive[1]) != 1 or len(wait[1]) != 2:
        return CudaEdit(file, line, f"insert, in {name} before line {line} `{text}`, a wait on the mbarrier "
                                    f"that line {plan.arrive_at[1]} `{plan.arrive_at[2]}` arrives on {said}")
    bar, wl, al = arrive[1][0], plan.wait_at[1], plan.arrive_at[1]
    flip = _flip(lines, plan, wait)
    what = f"the wait of line {wl} on the mbarrier line {al} arrives on"
    if flip is None:  # no phase bit of the writer's to read it from: the parities said in words
        return CudaEdit(file, line, f"insert `{wait[0]}({bar}, parity);` in {name} before line {line} "
                        f"`{text}`: "
                        f"{what}, parity 1 at a slot's first use (the phase before a fresh barrier's first "
                        f"counts as complete), then the parity of the phase the arrive after its previous "
                        f"read completes {said}")
    at, parity, flip_text = flip
    return CudaEdit(file, at, f"insert `{wait[0]}({bar}, {parity});` in {name} before line {at} "
                    f"`{flip_text}`: "
                    f"{what}, its parity the phase bit line {at} flips, read before the flip as line {wl} "
                    f"reads the bit line {wl + 1} flips {said}")


def _source(prog: Program, plan: WaitPlan) -> list[str]:
    from ..kernel.info import source_lines

    src = prog.threads[plan.writer].instrs[plan.sites[0].index].pos.src
    return source_lines(prog, src) or []


def _flip(lines: list[str], plan: WaitPlan, wait) -> tuple[int, str, str] | None:
    """(line, parity expression, line text) where the writer flips a phase bit just before its
    write as the reader flips the bit its wait reads just after it: ``get<T>(b, i)`` read and
    ``update<T>(b, i)`` flipped by the reader ⇒ the writer's ``update<T'>(b, i')`` gives
    ``get<T'>(b, i')``."""
    wl = plan.wait_at[1]
    after = _call(lines[wl]) if wl < len(lines) else None  # the line after the reader's wait
    read = _call(wait[1][1], statement=False)
    if after is None or read is None:
        return None
    if (after[1], _split_fn(after[0])[1]) != (read[1], _split_fn(read[0])[1]):  # not the bit it reads
        return None
    ln = plan.write_at[1] - 1  # the line before the writer's write
    mine = _call(lines[ln - 1]) if 0 < ln <= len(lines) else None
    if mine is None or _split_fn(mine[0])[0] != _split_fn(after[0])[0]:
        return None
    parity = f"{_split_fn(read[0])[0]}{_split_fn(mine[0])[1]}({', '.join(mine[1])})"
    return ln, parity, lines[ln - 1].strip()


__all__ = ["WaitChange", "WaitPlan", "WaitSite", "change_of", "plan_of", "wait_edit", "wait_program"]
