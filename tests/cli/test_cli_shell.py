"""The CLI is a thin shell: exit codes, JSON schema, errors without tracebacks."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support import ROOT

from ptxmm.cli.main import main

EX = str(ROOT / "examples" / "mp-relaxed-acquire.ptx")


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_check_text_report():
    r = run("check", EX)
    assert r.exit_code == 0, r.output
    assert "MP+relaxed+acquire" in r.output and "ALLOWED" in r.output and "agrees" in r.output


def test_check_json_schema():
    r = run("check", "--json", EX)
    assert r.exit_code == 0
    d = json.loads(r.output)
    for k in ("name", "model", "condition", "holds", "outcomes", "time_s", "expected", "agrees"):
        assert k in d
    assert d["model"] == "ptx" and d["holds"] is True
    assert d["condition"]["quantifier"] == "exists"
    sat = [o for o in d["outcomes"] if o["satisfies"]]
    assert sat == [o for o in d["outcomes"] if o["values"] == {"T1:%r0": 1, "T1:%r1": 0,
                                                              "data": 42, "flag": 1}]
    assert all({"rf", "co", "paths"} <= set(o["witness"]) for o in d["outcomes"])


def test_check_several_files_json_list():
    r = run("check", "--json", "--model", "sc", EX, str(ROOT / "examples" / "mp-spin.ptx"))
    d = json.loads(r.output)
    assert [x["holds"] for x in d] == [False, False] and d[0]["model"] == "sc"


def test_input_errors_exit_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".global .u32 x = 0;\n.thread T0 {\n  st.acquire.gpu.u32 [x], 1;\n}\n")
    for args in (["check", str(bad)], ["check", str(tmp_path / "nope.ptx")],
                 ["check", str(tmp_path)], ["check", "--model", "nomodel", EX]):
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        assert "Traceback" not in r.output
    r = run("check", str(bad))
    assert f"{bad}:3:6: syntax error" in r.output and "hint:" in r.output


def test_binary_file(tmp_path):
    f = tmp_path / "x.ptx"
    f.write_bytes(b"\x89PNG\x00\xff\xfe")
    r = run("check", str(f))
    assert r.exit_code == 2 and "not a text file" in r.output


def test_bad_model_file(tmp_path):
    m = tmp_path / "m.cat"
    m.write_text("let a = po ;; rf\n")
    r = run("check", "--model", str(m), EX)
    assert r.exit_code == 2 and f"{m}:1:" in r.output
    m.write_text("acyclic po | nosuch as X\n")
    r = run("check", "--model", str(m), EX)
    assert r.exit_code == 2 and "unknown name 'nosuch'" in r.output


def test_models_listed():
    r = run("models")
    assert "ptx " in r.output and "sc " in r.output


def test_ctrl_c_in_a_batch_keeps_what_finished(monkeypatch):
    """Ctrl-C during the second of three files: the first file's result, an 'interrupted' row
    for each file not done, exit 2 — for check and explain alike."""
    import importlib

    import ptxmm.cli.main

    explain_module = importlib.import_module("ptxmm.explanation.explain")  # the attribute is the function

    def second_call_interrupts(real):
        calls = []

        def f(*a, **kw):
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt
            return real(*a, **kw)
        return f

    monkeypatch.setattr(ptxmm.cli.main, "api_check", second_call_interrupts(ptxmm.cli.main.api_check))
    monkeypatch.setattr(explain_module, "explain", second_call_interrupts(explain_module.explain))
    for cmd in ("check", "explain"):
        r = run(cmd, EX, EX, EX, "--json")
        assert r.exit_code == 2, r.output
        out = json.loads(r.stdout)
        assert "error" not in out[0]
        assert [o["error"]["kind"] for o in out[1:]] == ["interrupted", "interrupted"]
        assert "interrupted: 1 of 3 file(s)" in r.stderr
