"""Generate docs/errors.md: every kind of error a user can meet, each with a real input and the
exact message the tool prints for it.

    python tools/errors_doc.py          # rewrite docs/errors.md
    python tools/errors_doc.py --check  # exit 1 when docs/errors.md is stale

Each case is (section, title, input, format, how): ``parse`` parses the input as ``t.ptx`` /
``t.litmus`` and shows the error (or the warnings); ``check`` also checks it (engine z3) and shows
the error or the result's status line; ``cli`` runs ``ptxmm ARGS`` in a scratch directory that
holds the input as ``t.ptx`` and shows what it prints on stderr and its exit status. File names
are relative, so the text is the same on every machine (tests/docs/test_errors_doc.py compares)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import ptxmm
from ptxmm.errors import PtxmmError

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "errors.md"

X = ".global .u32 x = 0;\n"
ONE = X + ".thread T0 {\n  %s\n}\nexists (x == 1)\n"
LIT = "PTX t\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n %s ;\nexists (x = 1)\n"
HUGE_THREADS = "".join(f".thread T{i} {{ st.global.u32 [x], 1; }}\n" for i in range(65))
SLOW = "".join(f".global .u32 x{t} = 0;\n" for t in range(8)) + "".join(
    f".thread T{t} {{ st.global.u32 [x{t}], 1; ld.global.u32 %r0, [x{(t + 1) % 8}]; }}\n"
    for t in range(8)) + "exists (T0:%r0 == 0)\n"


@dataclass
class Case:
    section: str
    title: str
    text: str
    fmt: str = "ptx"
    how: str = "parse"  # parse | check | cli
    args: tuple[str, ...] = ()
    kw: dict = field(default_factory=dict)
    note: str = ""


MODULE = ("// ptxmm: launch k<<<1, 1>>>(int out[1])\n.version 8.0\n.target sm_90\n.address_size 64\n"
          ".visible .entry k(.param .u64 k_param_0)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<4>;\n"
          "\tld.param.u64 \t%rd1, [k_param_0];\nBODY\n\tret;\n}\n")
TENSOR_1D = (".global .b32 a[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
             ".global .tensormap tm = tensormap(a, dims {8}, box {4});\n.shared .u32 s[4];\n"
             ".shared .b64 bar = mbarrier.init(1);\n.thread T0 .cta 0 {\n"
             "  mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 16;\n"
             "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], "
             "[tm, {1, 1}], [bar];\n}\n")

SYNTAX = "Syntax errors"
SEMANTIC = "Semantic errors"
UNSUPPORTED = "Not supported yet"
MODEL = "Model errors"
WARNING = "Warnings"
CLI = "Command line: files, timeouts, verdicts that are not given"

CASES = [
    # ----- syntax errors ---------------------------------------------------------------------------
    Case(SYNTAX, "Unexpected token (the grammar)", X + ".thread T0 {\n  st.global.u32 [x] 1;\n}\n"),
    Case(SYNTAX, "Unexpected end of file", X + ".thread T0 {\n  st.global.u32 [x], 1;\n"),
    Case(SYNTAX, "Unexpected character", X + ".thread T0 {\n  st.global.u32 [x], 1; ^\n}\n"),
    Case(SYNTAX, "Qualifier out of place", ONE % "ld.global.u32.cg %r0, [x];"),
    Case(SYNTAX, "Misspelt qualifier", ONE % "st.relase.gpu.global.u32 [x], 1;"),
    Case(SYNTAX, "Unknown or missing type", ONE % "ld.global.u33 %r0, [x];"),
    Case(SYNTAX, "Misspelt opcode (not PTX)", ONE % "lod.global.u32 %r0, [x];"),
    Case(SYNTAX, "A qualifier category given twice", ONE % "st.global.cg.wb.u32 [x], 1;"),
    Case(SYNTAX, "Wrong number of operands", ONE % "st.global.u32 [x], 1, 2;"),
    Case(SYNTAX, "Operand of the wrong kind", ONE % "st.global.u32 1, [x];"),
    Case(SYNTAX, "Dat3M mnemonic in a .ptx file", ONE % "cold %r0, [x];"),
    Case(SYNTAX, "Integer constant over 64 bits", ONE % "st.global.u32 [x], 18446744073709551616;"),
    Case(SYNTAX, "Litmus: instruction row not terminated",
         "PTX t\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1\nexists (x = 1)\n", "litmus"),
    Case(SYNTAX, "Litmus: missing header", "{ x = 0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\n",
         "litmus"),
    Case(SYNTAX, "Litmus: unknown qualifier", LIT % "st.relaxd.gpu x, 1", "litmus"),
    # ----- semantic errors -------------------------------------------------------------------------
    Case(SEMANTIC, "Register read before any write", ONE % "st.global.u32 [x], %r5;"),
    Case(SEMANTIC, "Predicate never set", ONE % "@%p0 st.global.u32 [x], 1;"),
    Case(SEMANTIC, "Register the condition names, never written",
         X + ".thread T0 { ld.global.u32 %r0, [x]; }\nexists (T0:%r1 == 0)\n"),
    Case(SEMANTIC, "Unknown location in the condition",
         X + ".thread T0 {\n  st.global.u32 [x], 1;\n}\nexists (y == 1)\n"),
    Case(SEMANTIC, "Unknown thread in the condition",
         X + ".thread T0 { ld.global.u32 %r0, [x]; }\nexists (T7:%r0 == 1)\n"),
    Case(SEMANTIC, "Unknown location in an instruction", ONE % "st.global.u32 [y], 1;"),
    Case(SEMANTIC, "Label defined twice",
         X + ".thread T0 { L: st.global.u32 [x], 1; bra L2; L: st.global.u32 [x], 2; L2: }\n"
         "exists (x == 1)\n"),
    Case(SEMANTIC, "Branch to an unknown label", ONE % "bra L9;"),
    Case(SEMANTIC, "Two .expect lines",
         ".expect allowed\n.expect forbidden\n" + X + ".thread T0 { st.global.u32 [x], 1; }\n"
         "exists (x == 1)\n"),
    Case(SEMANTIC, "Integer constant too large for its operand (ptxas would truncate it)",
         ONE % "st.global.u32 [x], 4294967297;"),
    Case(SEMANTIC, "A guard that is not a predicate",
         ONE % "ld.global.u32 %r0, [x];\n  @%r0 bra L;\nL:"),
    Case(SEMANTIC, "A register of the wrong type",
         ONE % ".reg .pred %p0 = 0;\n  add.u32 %r1, %p0, 1;"),
    Case(SEMANTIC, "An instruction type the opcode does not take", ONE % "and.u32 %r0, 1, 2;"),
    Case(SEMANTIC, "A state space other than the location's",
         ".shared .u32 y = 0;\n.thread T0 {\n  st.global.u32 [y], 1;\n}\n"),
    Case(SEMANTIC, "Initial value out of range (unsigned)",
         ".global .u32 x = 4294967296;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n"),
    Case(SEMANTIC, "Initial value out of range (negative in a .u32)",
         ".global .u32 x = -1;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n"),
    Case(SEMANTIC, "Condition constant out of range",
         X + ".thread T0 { st.global.u32 [x], 1; }\nexists (x == 4294967296)\n"),
    Case(SEMANTIC, "Location declared twice", X + X + ".thread T0 { st.global.u32 [x], 1; }\n"),
    Case(SEMANTIC, "Condition nested too deep",
         X + ".thread T0 { st.global.u32 [x], 1; }\nexists (" + "!" * 120 + "(x == 1))\n"),
    Case(SEMANTIC, "Condition nested in parentheses too deep",
         X + ".thread T0 { st.global.u32 [x], 1; }\nexists " + "(" * 120 + "x == 1" + ")" * 120
         + "\n"),
    Case(SEMANTIC, "Too many threads", X + HUGE_THREADS),
    Case(SEMANTIC, "A PTX module: a register of the wrong type (ptxas: \"Arguments mismatch\")",
         MODULE.replace("BODY", "\tmov.u64 \t%rd3, 4294967298;\n\tadd.s32 \t%rd3, %rd3, 4;"), how="cli",
         args=("check", "t.ptx")),
    Case(SEMANTIC, "A tensor copy of another rank than its tensor map", TENSOR_1D, how="check"),
    Case(SEMANTIC, "Litmus: register never written",
         "PTX t\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, r1 ;\nexists (x = 1)\n", "litmus"),
    Case(SEMANTIC, "Litmus: unknown location in the condition",
         "PTX t\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists (y = 1)\n", "litmus"),
    # ----- not supported yet -----------------------------------------------------------------------
    Case(UNSUPPORTED, "PTX instruction outside the model", ONE % "cvta.to.global.u64 %rd0, x;"),
    Case(UNSUPPORTED, "Qualifier outside the model", ONE % "mul.hi.u32 %r0, 1, 2;"),
    Case(UNSUPPORTED, "Address offset", ONE % "st.global.u32 [x+4], 1;"),
    Case(UNSUPPORTED, "Access wider than its location", ONE % "st.global.u64 [x], 1;"),
    Case(UNSUPPORTED, "Floating-point constant", ONE % "mov.b32 %r0, 0f3F800000;"),
    Case(UNSUPPORTED, "Barrier thread count read from memory",
         X + ".thread T0 {\n  ld.global.u32 %r0, [x];\n  bar.sync 0, %r0;\n}\n", how="check"),
    Case(UNSUPPORTED, "Litmus: offset into a location",
         "PTX t\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists (x[1] = 1)\n", "litmus"),
    # ----- model errors ----------------------------------------------------------------------------
    Case(MODEL, "Unknown model name", ONE % "st.global.u32 [x], 1;", how="cli",
         args=("check", "-m", "ptx-v9", "t.ptx")),
    Case(MODEL, "Missing .cat file", ONE % "st.global.u32 [x], 1;", how="cli",
         args=("check", "-m", "models/none.cat", "t.ptx")),
    Case(MODEL, "A library of definitions, not a model", ONE % "st.global.u32 [x], 1;", how="cli",
         args=("check", "-m", "ptx-common", "t.ptx")),
    # ----- warnings --------------------------------------------------------------------------------
    Case(WARNING, "Unreachable code",
         X + ".thread T0 { bra L; st.global.u32 [x], 2; L: st.global.u32 [x], 1; }\nexists (x == 1)\n"),
    Case(WARNING, "Condition register written on some paths only",
         X + ".thread T0 {\n  ld.global.u32 %r0, [x];\n  setp.eq.u32 %p0, %r0, 0;\n  @%p0 bra L;\n"
         "  mov.u32 %r1, 1;\nL:\n}\nexists (T0:%r1 == 1)\n"),
    # ----- command line ------------------------------------------------------------------------------
    Case(CLI, "Missing file", "", how="cli", args=("check", "nope.ptx")),
    Case(CLI, "A directory instead of a file", "", how="cli", args=("check", ".")),
    Case(CLI, "Timeout: the verdict is unknown", SLOW, how="check", kw={"timeout": 0.001},
         note="`ptxmm check --timeout 0.001 t.ptx`; exit status 2"),
    Case(CLI, "No execution finishes within --unroll",
         X + ".thread T0 { L: ld.global.u32 %r0, [x]; bra L; }\nexists (x == 0)\n", how="check",
         note="exit status 2"),
    # options that do not apply: refused, never silently ignored or overridden (cli/conflicts.py)
    Case(CLI, "An option that does not apply: --progress without --liveness",
         X + ".thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n", how="cli",
         args=("check", "--progress", "obe", "t.ptx")),
    Case(CLI, "An option that does not apply: --exists on a litmus test",
         X + ".thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n", how="cli",
         args=("check", "--exists", "x == 0", "t.ptx")),
    Case(CLI, "A progress model that names a level twice",
         X + ".thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n", how="cli",
         args=("check", "--liveness", "--progress", "gpu=obe,gpu=fair", "t.ptx")),
    Case(CLI, "An expectation comment that contradicts the .expect line",
         ".expect forbidden\n// ptxmm: expect allowed\n" + X
         + ".thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n", how="cli", args=("check", "t.ptx")),
]


def _parse(c: Case) -> str:
    try:
        p = ptxmm.parse(c.text, f"t.{c.fmt}", c.fmt)
    except PtxmmError as e:
        return f"{type(e).__name__}\n{e}"
    return "\n".join(str(w) for w in p.warnings) or "(parsed without a message)"


def _check(c: Case) -> str:
    try:
        p = ptxmm.parse(c.text, f"t.{c.fmt}", c.fmt)
        res = ptxmm.check(p, **c.kw)
    except PtxmmError as e:
        return f"{type(e).__name__}\n{e}"
    return f"status {res.status}\n{res.status_text}"


def _cli(c: Case) -> str:
    from click.testing import CliRunner

    from ptxmm.cli.main import main

    with tempfile.TemporaryDirectory() as d, _cwd(d):
        if c.text:
            Path("t.ptx").write_text(c.text)
        r = CliRunner().invoke(main, list(c.args))
    # the built-in models' files are where ptxmm is installed: not this machine's path
    from ptxmm._infra.resources import data_dir

    err = r.stderr.strip().replace(f"{data_dir('models').parent}/", "<ptxmm>/")
    return f"$ ptxmm {' '.join(c.args)}\n{err}\n(exit status {r.exit_code})"


@contextlib.contextmanager
def _cwd(d: str):
    old = os.getcwd()
    os.chdir(d)
    try:
        yield
    finally:
        os.chdir(old)


def produce(c: Case) -> str:
    return {"parse": _parse, "check": _check, "cli": _cli}[c.how](c)


HEAD = """# Error messages

Every mistake in a program is reported at its `file:line:col` with what is wrong and a hint; no
input makes the tool print a traceback (tests/syntax/test_fuzz_front_ends.py feeds it 10,000 generated
and mutated programs per front end). The classes, all subclasses of `ptxmm.PtxmmError` (`.pos`, `.message`,
`.hint`):

| class | printed as | meaning |
|---|---|---|
| `ParseError` | `syntax error` | the text is not a program: grammar, opcode, qualifier, operand |
| `SemanticError` | `error` | a well-formed program with a mistake: names, widths, ranges, limits |
| `UnsupportedError` | `not supported yet` | real PTX (or Dat3M) that the tool does not model |
| `ModelError` | `model error` | the `--model` is unknown, missing, or not a model |
| `Diagnostic` | `warning` | printed, never changes a verdict or an exit status |

`ptxmm check` and `ptxmm test` exit with status 2 when a file has an error (every other file is
still checked and reported; with `--json` the file is an object with an `"error"` member, see
docs/json-schema.md).

This file is generated by `python tools/errors_doc.py` from real runs of the tool;
tests/docs/test_errors_doc.py fails when it is stale.
"""


def render() -> str:
    out = [HEAD]
    section = None
    for c in CASES:
        if c.section != section:
            section = c.section
            out.append(f"\n## {section}\n")
        out.append(f"### {c.title}\n")
        if c.note:
            out.append(c.note + "\n")
        if c.text and c.how != "cli" or c.how == "cli" and c.text and c.args[-1] == "t.ptx":
            lang = "" if c.fmt == "litmus" else "ptx"
            shown = c.text if len(c.text) < 1200 else c.text[:400] + "...\n"
            out.append(f"`t.{c.fmt}`:\n\n```{lang}\n{shown.rstrip()}\n```\n")
        out.append(f"```text\n{produce(c).rstrip()}\n```\n")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not DOC.exists() or DOC.read_text() != text:
            print(f"{DOC.relative_to(ROOT)} is stale: run python tools/errors_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"wrote {DOC.relative_to(ROOT)} ({len(CASES)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
