"""SASS audit: does the machine code still hold every test instruction, in order?

ptxas optimises PTX under the PTX memory model and may merge or drop ``.weak`` accesses even inside
``asm volatile`` (spec/device-testing.md §5). Each ``ptxmm_audit_<k>`` kernel holds role k alone;
its memory instructions are the test's own followed by the stores of the recorded registers (and of
the did-not-finish flag when the role loops). The audit counts them by class and, for straight-line
roles, compares their order with program order."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..program import Program

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
    found: list[str]  # classes found in SASS (harness stores stripped)
    harness_stores: int
    ok: bool
    note: str = ""


def available() -> bool:
    return shutil.which("cuobjdump") is not None


def sass_by_function(cubin: Path) -> dict[str, list[str]]:
    out = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True,
                         check=True).stdout
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
        if ins.op == "ld":
            ops.append("ld")
        elif ins.op == "st":
            ops.append("st")
        elif ins.op in ("atom", "red"):
            ops.append("atom")
    return ops


def audit(prog: Program, lay, cubin: Path) -> list[RoleAudit]:
    funcs = sass_by_function(cubin)
    out = []
    for k, t in enumerate(prog.threads):
        exp = expected_ops(prog, k)
        ops = [_CLASS[o] for o in funcs.get(f"ptxmm_audit_{k}", []) if o in _CLASS and _CLASS[o] != "fence"]
        loops = any(i.op == "bra" for i in t.instrs)
        n_out = sum(1 for s in lay.slots if s.role == k) + (1 if loops else 0)
        # the recorded-register stores come last; strip them from the end
        found = list(ops)
        stripped = 0
        while stripped < n_out and found and found[-1] == "st":
            found.pop()
            stripped += 1
        if loops:
            ok = sorted(found) == sorted(exp) or all(found.count(c) >= exp.count(c) for c in set(exp))
            note = "loop: counts compared"
        else:
            ok = found == exp
            note = "" if ok else "order or count differs"
        if stripped != n_out:
            ok, note = False, f"expected {n_out} result stores, found {stripped}"
        out.append(RoleAudit(k, t.name, exp, found, stripped, ok, note))
    return out
