"""Every exit status `ptxmm check`, `ptxmm test` and `ptxmm explain` document (README, --help):
0 decided, 1 a disagreement (test), 2 an error, a usage error or an undecided check."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support import ROOT

from ptxmm.cli.main import main

MP = str(ROOT / "examples" / "mp-relaxed-acquire.ptx")  # 4 allowed outcomes, ALLOWED
NO_EXIT = ".global .u32 x = 0;\n.thread T0 { L: ld.global.u32 %r0, [x]; bra L; }\nexists (x == 0)\n"
TYPO = ".global .u32 x = 0;\n.thread T0 { st.glbal.u32 [x], 1; }\nexists (x == 1)\n"
NO_COND = ".global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\n"
GOOD = ".expect allowed\n.global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n"
# four threads of two stores and two loads each, all on one location: tens of thousands of outcomes,
# far more than 0.05 s to enumerate (an eight-thread store-load ring, used before, takes 0.05 s now)
RING = (".global .u32 x = 0;\n" + "".join(
    f".thread T{t} {{ st.global.u32 [x], {2 * t + 1}; ld.global.u32 %r0, [x]; "
    f"st.global.u32 [x], {2 * t + 2}; ld.global.u32 %r1, [x]; }}\n" for t in range(4))
    + "exists (T0:%r0 == 0)\n")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in {"loop": NO_EXIT, "typo": TYPO, "nocond": NO_COND, "ring": RING,
                       "good": GOOD}.items():
        (tmp_path / f"{name}.ptx").write_text(text)
        out[name] = tmp_path / f"{name}.ptx"
    out["missing"] = tmp_path / "missing.ptx"
    return out


CHECK = [
    # (arguments, with {name} for a fixture file, exit status, a fragment of the output)
    (["{mp}"], 0, "ALLOWED"),
    (["{nocond}"], 0, "no condition"),
    (["--observe", "condition", "{mp}"], 0, "reachable"),
    (["--max-outcomes", "10", "{mp}"], 0, "4 allowed outcome(s)"),
    # the input: an Unknown verdict after --max-outcomes exited 0, the help says 2
    (["--max-outcomes", "1", "{mp}"], 2, "stopped at 1 outcomes"),
    (["--max-outcomes", "1", "--json", "{mp}"], 2, '"status": "stopped"'),
    (["--timeout", "0.05", "{ring}"], 2, "timed out after 0.05 s"),
    (["{loop}"], 2, "no execution finishes"),
    (["{typo}"], 2, "syntax error"),
    (["{missing}"], 2, "no such file"),
    (["{mp}", "{typo}"], 2, "ALLOWED"),  # a batch: the error row does not hide the good file
    (["--model", "nomodel", "{mp}"], 2, "nomodel"),
    (["--unroll", "-1", "{mp}"], 2, "Invalid value for '--unroll'"),
    (["--observe", "everything", "{mp}"], 2, "Invalid value for '--observe'"),
    (["--max-outcomes", "0", "{mp}"], 2, "Invalid value for '--max-outcomes'"),
    (["--timeout", "0", "{mp}"], 2, "Invalid value for '--timeout'"),
    (["--no-such-option", "{mp}"], 2, "No such option"),
]


def _args(args, files):
    return [a.format(mp=MP, **files) for a in args]


@pytest.mark.parametrize("args,code,fragment", CHECK, ids=[" ".join(c[0]) for c in CHECK])
def test_check_exit_status(files, args, code, fragment):
    r = run("check", *_args(args, files))
    assert r.exit_code == code, r.output
    assert fragment in r.output
    assert "Traceback" not in r.output


EXPLAIN = [
    (["{mp}"], 0, "ALLOWED"),
    (["{loop}"], 2, "UNKNOWN"),
    (["{typo}"], 2, "syntax error"),
    (["{mp}", "{missing}"], 2, "no such file"),
    (["--unroll", "-1", "{mp}"], 2, "Invalid value for '--unroll'"),
]


@pytest.mark.parametrize("args,code,fragment", EXPLAIN, ids=[" ".join(c[0]) for c in EXPLAIN])
def test_explain_exit_status(files, args, code, fragment):
    r = run("explain", *_args(args, files))
    assert r.exit_code == code, r.output
    assert fragment in r.output and "Traceback" not in r.output


def _suite(tmp_path, **texts):
    d = tmp_path / "suite"
    d.mkdir()
    for name, text in texts.items():
        (d / f"{name}.ptx").write_text(text)
    return d


@pytest.mark.parametrize("texts,extra,code", [
    ({"good": GOOD}, [], 0),
    ({"good": GOOD, "unrated": NO_COND}, [], 0),
    ({"good": GOOD, "wrong": GOOD.replace("allowed", "forbidden")}, [], 1),
    # a disagreement outranks an error
    ({"wrong": GOOD.replace("allowed", "forbidden"), "typo": TYPO}, [], 1),
    ({"good": GOOD, "typo": TYPO}, [], 2),
    ({"good": GOOD, "loop": NO_EXIT}, [], 2),
    ({"good": GOOD, "ring": ".expect allowed\n" + RING}, ["--timeout", "0.001"], 2),
], ids=["agree", "unrated", "disagree", "disagree+error", "error", "no-execution", "timeout"])
def test_test_exit_status(tmp_path, texts, extra, code):
    r = run("test", "-j", "1", *extra, _suite(tmp_path, **texts))
    assert r.exit_code == code, r.output
