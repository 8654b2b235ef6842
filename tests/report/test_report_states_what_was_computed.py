"""Issue 24, item 5: a report states only what was computed. With ``--observe condition`` the
condition is one solver query: the report says whether it is reachable, with the witness, and
nothing about outcome counts it did not compute (data races are queries of their own)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support import ROOT

import ptxmm
from ptxmm.cli.main import main

MP = str(ROOT / "examples" / "mp-relaxed-acquire.ptx")

# the "test whose condition is impossible": no execution reads a value nobody writes
IMPOSSIBLE = (".global .u32 x = 0;\n"
              ".thread T0 {\n    st.relaxed.gpu.global.u32 [x], 1;\n}\n"
              ".thread T1 {\n    ld.relaxed.gpu.global.u32 %r0, [x];\n}\n"
              "exists (T1:%r0 == 5)\n")


def run(*args):
    return CliRunner().invoke(main, list(args))


def _file(tmp_path, text: str, name: str = "t.ptx") -> str:
    f = tmp_path / name
    f.write_text(text)
    return str(f)


def test_impossible_condition_claims_no_count_and_no_deadlock(tmp_path):
    f = _file(tmp_path, IMPOSSIBLE)
    r = run("check", "--observe", "condition", f)
    assert r.exit_code == 0, r.output
    assert "FORBIDDEN" in r.output and "the condition is unreachable" in r.output
    # what the old report claimed, false here: full enumeration lists two outcomes
    assert "allowed outcome(s)" not in r.output and "0 of 0" not in r.output
    assert "allows no execution" not in r.output and "deadlock" not in r.output
    full = run("check", f)
    assert "2 allowed outcome(s)" in full.output and "0 of 2 allowed outcomes" in full.output


def test_observe_condition_on_mp_relaxed_acquire():
    r = run("check", "--observe", "condition", MP)
    assert r.exit_code == 0, r.output
    assert "ALLOWED" in r.output and "the condition is reachable" in r.output
    assert "1 of 1" not in r.output and "allowed outcome(s)" not in r.output
    # the race query does not depend on enumerating: the pair is found with its witness
    assert "data-race on data: T0 st.global.u32 [data], 42" in r.output
    assert "outcomes: not enumerated" in r.output
    full = run("check", MP)  # what the query mode does not claim, enumeration shows
    assert "1 of 4 allowed outcomes" in full.output and "data-race" in full.output
    assert "not checked" not in full.output and "not enumerated" not in full.output


def test_observe_condition_json_leaves_uncomputed_fields_null():
    d = json.loads(run("check", "--json", "--observe", "condition", MP).stdout)
    assert d["enumerated"] is False and d["n_outcomes"] is None and d["holds"] is True
    assert [o["flags"] for o in d["outcomes"]] == [None]
    assert [f["name"] for f in d["findings"]] == ["data-race"] and d["findings_status"] == "ok"
    full = json.loads(run("check", "--json", MP).stdout)
    assert full["enumerated"] is True and full["n_outcomes"] == 4
    assert all(o["flags"] == ["data-race"] for o in full["outcomes"])


def test_forall_query_words(tmp_path):
    """forall asks for a violating execution: the report names that, not a count."""
    holds = _file(tmp_path, IMPOSSIBLE.replace("exists (T1:%r0 == 5)", "forall (T1:%r0 != 5)"), "a.ptx")
    fails = _file(tmp_path, IMPOSSIBLE.replace("exists (T1:%r0 == 5)", "forall (T1:%r0 == 1)"), "b.ptx")
    r = run("check", "--observe", "condition", holds)
    assert "REQUIRED" in r.output and "no allowed execution violates the condition" in r.output
    r = run("check", "--observe", "condition", fails)
    assert "not required" in r.output and "an allowed execution violates the condition" in r.output
    assert "witness" in r.output.splitlines()[3]  # the table's one row is the query's witness


def test_enumerated_flag_follows_what_ran():
    p = ptxmm.load(MP)
    assert ptxmm.check(p, verdict_only=True).enumerated is False
    # both engines answer a one-query verdict with its first witness (Engine protocol: find)
    b = ptxmm.check(p, verdict_only=True, engine="brute")
    assert b.enumerated is False and len(b.outcomes) == 1 and b.holds is True
    assert ptxmm.check(p).enumerated is True


def test_deadlock_note_stays_for_an_enumeration():
    text = (".global .u32 x = 0;\n.thread T0 .cta 0 { bar.sync 0; bar.sync 1; }\n"
            ".thread T1 .cta 0 { bar.sync 1; bar.sync 0; }\n~exists (x == 1)\n")
    import io

    from ptxmm.report.termtext import Writer
    from ptxmm.report.text import render

    buf = io.StringIO()
    render(ptxmm.check(ptxmm.parse(text, "t.ptx")), Writer(buf, colour=False))
    assert "the model allows no execution" in buf.getvalue()
    buf = io.StringIO()
    render(ptxmm.check(ptxmm.parse(text, "t.ptx"), verdict_only=True), Writer(buf, colour=False))
    assert "allows no execution" not in buf.getvalue()


# ----- explain and check agree on programs with no finished execution -----------------------------

NO_EXIT = ".global .u32 x = 0;\n.thread T0 { L: ld.global.u32 %r0, [x]; bra L; }\nexists (x == 0)\n"


def test_explain_of_a_loop_that_never_exits_is_unknown_as_check_says():
    p = ptxmm.parse(NO_EXIT, "t.ptx")
    res = ptxmm.check(p)
    x = ptxmm.explain(p)
    assert res.holds is None and x.unknown == res.status_text
    assert "no execution finishes within --unroll 2" in x.unknown
    assert not x.groups and x.witness is None and x.fixes is None
    text = str(x)
    assert "UNKNOWN" in text and "FORBIDDEN" not in text and "fails an axiom" not in text
    assert x.to_json()["verdict"] == "unknown"
    # a bound that lets the loop... still never exit: the same answer at any unroll
    assert ptxmm.explain(p, unroll=4).unknown is not None


def test_explain_cli_unknown_exits_2_and_fix_claims_nothing(tmp_path):
    f = _file(tmp_path, NO_EXIT)
    r = run("explain", "--fix", f)
    assert r.exit_code == 2, r.output
    assert "UNKNOWN" in r.output and "FORBIDDEN" not in r.output
    assert "no set of up to" not in r.output  # --fix did not search a program without a verdict
    check = run("check", f)
    assert check.exit_code == 2 and "Unknown" in check.output
    r = run("explain", "--json", f)
    assert r.exit_code == 2 and json.loads(r.stdout)["verdict"] == "unknown"
    r = run("graph", "--ascii", f)
    assert r.exit_code == 2 and "no execution finishes" in r.output and "Traceback" not in r.output


def test_explain_still_explains_a_loop_that_exits():
    """The same loop with an exit: explain gives a verdict, as check does."""
    text = (".global .u32 x = 0;\n.thread T0 { L: ld.global.u32 %r0, [x]; setp.eq.u32 %p0, %r0, 1;\n"
            "@%p0 bra L; }\nexists (T0:%r0 == 0)\n")
    p = ptxmm.parse(text, "t.ptx")
    x = ptxmm.explain(p)
    assert x.unknown is None and x.allowed is bool(ptxmm.check(p).holds) is True


def test_check_liveness_judges_the_expect_liveness_line(tmp_path):
    """``check --liveness`` says whether the verdict is the ``.expect-liveness`` line's, in text
    and JSON (red team F12); the exit status is a condition disagreement's (0: check reports)."""
    weak = (ROOT / "examples" / "liveness" / "spin-weak-flag.ptx").read_text()
    wrong = tmp_path / "wrong.ptx"
    wrong.write_text(weak.replace(".expect-liveness hangs", ".expect-liveness terminates"))
    right = ROOT / "examples" / "liveness" / "spin-weak-flag.ptx"
    r = CliRunner().invoke(main, ["check", "--liveness", str(wrong)])
    assert r.exit_code == 0 and "liveness: ✗ disagrees with .expect-liveness terminates" in r.output
    r = CliRunner().invoke(main, ["check", "--liveness", str(right)])
    assert r.exit_code == 0 and "liveness: ✓ agrees with .expect-liveness hangs" in r.output
    r = CliRunner().invoke(main, ["check", str(right)])  # liveness not checked: no word on it
    assert "liveness:" not in r.output and ".expect-liveness" not in r.output
    r = CliRunner().invoke(main, ["check", "--liveness", "--json", str(wrong)])
    assert json.loads(r.output)["liveness"] == {"verdict": "hangs", "progress": "fair",
                                                "expected": "terminates", "agrees": False}
    res = ptxmm.check(ptxmm.load(right), liveness=True, timeout=0.000001)
    assert res.expected_liveness == "hangs" and res.liveness_agrees is None  # not decided
