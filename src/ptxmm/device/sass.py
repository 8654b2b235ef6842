"""SASS audit: does the machine code still hold every test instruction, in order?

ptxas optimises PTX under the PTX memory model and may merge or drop ``.weak`` accesses even inside
``asm volatile``. Each ``ptxmm_audit_<k>`` kernel holds role k alone;
the memory instructions before its ``NANOSLEEP`` marker are the test's own. The audit compares them
by class with program order (straight-line roles) or counts them (roles with branches, which ptxas
may lay out or unroll differently)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..ir.program import Atom, Branch, Load, Program, Red, Store

_CLASS = {"LDG": "ld", "LDS": "ld", "LD": "ld", "STG": "st", "STS": "st", "ST": "st",
          "ATOMG": "atom", "ATOMS": "atom", "ATOM": "atom", "RED": "atom", "REDG": "atom",
          "ATOMS.CAS": "atom", "MEMBAR": "fence"}
_LINE = re.compile(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
_FUNC = re.compile(r"Function\s*:\s*(\S+)")


@dataclass
class RoleAudit:
    role: int
    thread: str
    expected: list[str]  # memory-operation classes in program order
    found: list[str]  # classes found in SASS before the audit marker
    ok: bool
    note: str = ""


def available() -> bool:
    return shutil.which("cuobjdump") is not None


def sass_by_function(cubin: Path) -> dict[str, list[str]]:
    return parse_sass(subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True,
                                     text=True, check=True).stdout)


def parse_sass(out: str) -> dict[str, list[str]]:
    """cuobjdump -sass text → opcodes (without modifiers) per function."""
    funcs: dict[str, list[str]] = {}
    cur = None
    for line in out.splitlines():
        m = _FUNC.search(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = _LINE.search(line)
        if m and cur is not None:
            cur.append(m.group(1))
    return funcs


def expected_ops(prog: Program, k: int) -> list[str]:
    ops = []
    for ins in prog.threads[k].instrs:
        if isinstance(ins, Load):
            ops.append("ld")
        elif isinstance(ins, Store):
            ops.append("st")
        elif isinstance(ins, (Atom, Red)):
            ops.append("atom")
    return ops


def audit(prog: Program, lay, cubin: Path) -> list[RoleAudit]:
    funcs = sass_by_function(cubin)
    out = []
    for k, t in enumerate(prog.threads):
        exp = expected_ops(prog, k)
        ops = funcs.get(f"ptxmm_audit_{k}", [])
        marks = [i for i, o in enumerate(ops) if o == "NANOSLEEP"]
        if not marks:
            out.append(RoleAudit(k, t.name, exp, [], False, "audit marker not found"))
            continue
        body = [_CLASS[o] for o in ops[:marks[-1]] if _CLASS.get(o, "fence") != "fence"]
        if any(isinstance(i, Branch) for i in t.instrs):
            ok = all(body.count(c) >= exp.count(c) for c in set(exp))
            note = "branches: counts compared"
        else:
            ok = body == exp
            note = "" if ok else "order or count differs"
        out.append(RoleAudit(k, t.name, exp, body, ok, note))
    return out


# -- what orders a role's memory accesses in the machine code -----------------------------------
# Each SASS instruction is 128 bits; cuobjdump prints the low and the high 64-bit word as two
# comments. The high word carries the scheduling controls (Volta and later, Hopper included):
# bits 46-48 the scoreboard a variable-latency instruction (a load) sets when its data returns,
# bits 52-57 the scoreboards an instruction waits for before it issues. Instructions issue in
# order, so a memory access B issues after load A's value came back exactly when an instruction
# between them (B included) waits on A's scoreboard; a MEMBAR between them waits for every earlier
# access to be performed at its scope. Stores set no completion scoreboard: only a MEMBAR orders
# a store before a later access.
_HEX = re.compile(r"/\*\s*(0x[0-9a-f]{16})\s*\*/")
_INS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


@dataclass
class SassIns:
    text: str  # e.g. "LDG.E.STRONG.GPU R4, desc[UR4][R4.64]"
    hi: int = 0  # the high 64-bit word (scheduling controls)

    @property
    def op(self) -> str:
        words = self.text.split()
        if words and words[0].startswith("@"):  # a predicate guard
            words = words[1:]
        return words[0] if words else ""

    @property
    def sets(self) -> int | None:
        """The scoreboard this instruction sets when its result returns (None: none)."""
        b = self.hi >> 46 & 7
        return None if b == 7 else b

    @property
    def waits(self) -> int:
        return self.hi >> 52 & 0x3F

    @property
    def never(self) -> bool:
        """Guarded by ``@!PT`` (never true): never executed. ptxas pads ``MEMBAR.ALL.CTA`` in
        relocatable generic code with four ``@!PT LDS RZ, [RZ]``."""
        return self.text.startswith("@!PT ")

    @property
    def mem(self) -> str | None:
        c = _CLASS.get(self.op.split(".")[0])
        return None if c in (None, "fence") or self.never else c


def parse_sass_full(out: str) -> dict[str, list[SassIns]]:
    """cuobjdump -sass text → instructions with their control words, per function."""
    funcs: dict[str, list[SassIns]] = {}
    cur: list[SassIns] | None = None
    for line in out.splitlines():
        m = _FUNC.search(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = _INS.search(line)
        if m:
            cur.append(SassIns(m.group(2)))
            continue
        h = _HEX.findall(line)
        if h and cur and not _INS.search(line):
            cur[-1].hi = int(h[-1], 16)
    return funcs


@dataclass
class Gap:
    """What the machine code puts between two consecutive memory accesses of a role."""

    first: str  # the two accesses, e.g. "STG.E.STRONG.SM"
    second: str
    between: list[str]  # ordering instructions between them (MEMBAR..., CCTL..., ERRBAR)
    load_wait: bool  # the first is a load and the second issues only after its value returned

    @property
    def kind(self) -> str:
        """'membar.gpu' | 'membar.cta' | 'load-wait' | 'none' — the strongest ordering found."""
        bars = [b for b in self.between if b.startswith("MEMBAR")]
        if any(not b.endswith(".CTA") for b in bars):
            return "membar.gpu"
        if self.load_wait:
            return "load-wait"
        return "membar.cta" if bars else "none"


def gaps(ins: list[SassIns]) -> list[Gap]:
    """The gaps between consecutive memory accesses before the audit marker."""
    marks = [i for i, x in enumerate(ins) if x.op == "NANOSLEEP"]
    body = ins[:marks[-1]] if marks else ins
    mem = [i for i, x in enumerate(body) if x.mem]
    out = []
    for a, b in zip(mem, mem[1:]):
        sb = body[a].sets if body[a].mem == "ld" else None
        wait = sb is not None and any(body[j].waits >> sb & 1 for j in range(a + 1, b + 1))
        between = [body[j].op for j in range(a + 1, b)
                   if body[j].op.split(".")[0] in ("MEMBAR", "CCTL", "ERRBAR", "CGAERRBAR", "FENCE")]
        out.append(Gap(body[a].op, body[b].op, between, wait))
    return out


def role_gaps(cubin: Path, n_roles: int) -> list[list[Gap]]:
    """Per role of a compiled test (its audit kernel), the gaps between its memory accesses."""
    out = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True,
                         check=True).stdout
    funcs = parse_sass_full(out)
    return [gaps(funcs.get(f"ptxmm_audit_{k}", [])) for k in range(n_roles)]


_ORDERING = ("MEMBAR", "CCTL", "ERRBAR", "CGAERRBAR", "FENCE")


def shape(ins: list[SassIns]) -> list[str]:
    """A function's memory accesses and ordering instructions in order, for comparing machine code
    (the public runner's kernel against the harness's): each access as its opcode with modifiers
    (``LD.E.STRONG.GPU``), each ordering instruction by its opcode, a never-executed run of ``@!PT``
    instructions as ``pad<n>``; the scheduling controls are left out (``gaps`` reads them)."""
    out: list[str] = []
    for x in ins:
        if x.never:
            if out and out[-1].startswith("pad"):
                out[-1] = f"pad{int(out[-1][3:]) + 1}"
            else:
                out.append("pad1")
        elif x.mem or x.op.split(".")[0] in _ORDERING:
            out.append(x.op)
    return out
