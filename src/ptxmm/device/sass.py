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

from ..program import Atom, Branch, Load, Program, Red, Store

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
