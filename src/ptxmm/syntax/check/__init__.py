"""The semantic check pass, run by both front ends (``.ptx`` and ``.litmus``) between parsing and
event building. A typo must never change a verdict: every name resolves, every value fits its
type, every register is written before it is read, and what is wrong is reported at its own
file:line:col with a hint (a did-you-mean from the program's own names where one is close).

Errors (SemanticError unless noted):

- the program: at least one thread, at most :data:`MAX_THREADS` threads and
  :data:`MAX_INSTRS` instructions per thread; thread and location names unique; alias targets
  declared, no alias cycles;
- a thread: labels unique, branch targets are labels, location operands declared, no address
  offsets (UnsupportedError), each access as wide as the location it names (mixed-size accesses
  are outside the model), alias declarations as wide as their target;
- registers: a register read on some path before any write (PTX registers are undefined until
  written). A predicated write may not run, so it defines its register only when the same
  predicate, unchanged, guards writes of both polarities (``@%p mov %r, 1; @!%p mov %r, 2;``).
  Initial values: ``.reg .u32 %r1 = 5;`` in a ``.ptx`` thread, ``P0:r1 = 5;`` in a ``.litmus``
  init block;
- the condition: every location and thread it names exists, every register it names is written
  by its thread (or initialised), every constant fits the type it is compared with; nesting at
  most :data:`MAX_DEPTH` deep;
- literals: a location's or register's initial value fits its type (``.u32``: 0..0xFFFFFFFF,
  ``.s32``: -2^31..2^31-1, ``.b32`` either); an integer constant in an instruction is at most 64
  bits (ptxas's "Constant overflow"), and in a ``.ptx`` test it fits its operand's type read
  signed or unsigned (ptxas would truncate it without a word; see :func:`check_operands`);
- operands of a ``.ptx`` test, as ``ptxas -arch=sm_90`` checks them (:func:`check_operands`):
  the instruction types each opcode takes, register types (a ``.pred`` guard; sizes and kinds by
  the ISA's operand-type rules), addresses as values only in a 64-bit ``mov``, the state space of
  ``[x]`` the one x is declared in.

Warnings (``Program.warnings``, not fatal): code no path reaches (after an unconditional ``bra``
or ``ret`` with no label a branch targets), and a register the condition names that its thread
writes only on some paths (on the others the condition reads it as 0)."""


from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ...errors import Diagnostic, SemanticError, SourcePos
from ...ir.program import Program, Thread
from .common import (
    IMM_LIMIT,
    MAX_DEPTH,
    MAX_INSTRS,
    MAX_REG_RANGE,
    MAX_THREADS,
    Sources,
    check_depth,
    check_immediate,
    check_init_value,
    check_instr_count,
    check_thread_count,
    did_you_mean,
    line_of,
    type_range,
)
from .dataflow import SPECIAL_REGS, Flow
from .names import (
    check_condition_names,
    check_condition_registers,
    check_locations,
    check_threads,
    cond_consts,
)
from .operands import check_module_instruction, check_operands

__all__ = ["IMM_LIMIT", "MAX_DEPTH", "MAX_INSTRS", "MAX_REG_RANGE", "MAX_THREADS", "SPECIAL_REGS",
           "Sources", "check", "check_depth", "check_immediate", "check_init_value",
           "check_instr_count", "check_module_instruction", "check_operands", "check_thread_count",
           "cond_consts", "did_you_mean", "type_range"]


def check(p: Program, src: Sources | None = None,
          front_end: Callable[[Program], None] | None = None) -> Program:
    """Check ``p`` (raising the first error in source order) and return it with its warnings.
    ``front_end`` runs the front end's own checks once names resolve, before the register
    checks (so that its more specific messages win)."""
    src = src or Sources()
    if not p.threads:
        raise SemanticError("the test has no threads", SourcePos(p.file, 1, 1),
                            "add a `.thread T0 { ... }` block" if src.dialect == "ptx" else
                            "add a thread column: P0@cta 0,gpu 0 ;")
    check_thread_count(len(p.threads), p.threads[-1].pos)
    seen: dict[str, Thread] = {}
    for t in p.threads:
        if t.name in seen:
            raise SemanticError(f"thread {t.name} is defined twice", t.pos,
                                f"first defined at line {line_of(seen[t.name].pos)}; give each "
                                "thread its own name")
        seen[t.name] = t
        check_instr_count(len(t.instrs), t.name, t.pos)
    locs = check_locations(p)
    unsupported = check_threads(p, locs)
    if p.condition is not None:
        check_condition_names(p, locs, src)
    if front_end is not None:
        front_end(p)
    if unsupported is not None:
        raise unsupported
    warnings: list[Diagnostic] = []
    for t in p.threads:
        warnings += Flow(t, src).run()
    if p.condition is not None:
        warnings += check_condition_registers(p, src)
    return replace(p, warnings=tuple(p.warnings) + tuple(warnings))


