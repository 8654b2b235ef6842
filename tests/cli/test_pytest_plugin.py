"""Issue 30, item 4: the pytest plugin — .ptx/.litmus/.cu files with an expectation are test items
under a path named on the command line (or everywhere with --ptxmm); a failure prints ptxmm's
report; model, timeout and unroll are options (and ini keys); a project's own testpaths run is
unchanged. Each case runs pytest in a subprocess, as a user would, and reads its JUnit XML."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import ROOT

from ptxmm.kernel.nvcc import find_nvcc
from ptxmm.testing.pytest_plugin import expectations

KERNELS = ROOT / "tests" / "data" / "kernels"
NO_NVCC = ("import ptxmm.kernel.nvcc\n"
           "ptxmm.kernel.nvcc.find_nvcc = lambda: None  # as on a machine without CUDA\n")

MP = (ROOT / "examples" / "mp-relaxed-acquire.ptx").read_text()
RACE = """.global .u32 x = 0;
.thread T0 {
    st.global.u32 [x], 1;
}
.thread T1 {
    ld.global.u32 %r0, [x];
}
// ptxmm: expect race
"""
SB_LITMUS = """PTX SB
(* ptxmm: expect allowed *)
{
x=0; y=0;
P0:r0=0; P1:r1=0;
}
 P0@cta 0,gpu 0          | P1@cta 1,gpu 0          ;
 st.weak x, 1            | st.weak y, 1            ;
 ld.weak r0, y           | ld.weak r1, x           ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)
"""


def _four_threads() -> str:
    lines = [".global .u32 x = 0;"]
    for t in range(4):
        lines += [f".thread T{t} {{", f"    st.global.u32 [x], {2 * t + 1};", "    ld.global.u32 %r0, [x];",
                  f"    st.global.u32 [x], {2 * t + 2};", "    ld.global.u32 %r1, [x];", "}"]
    return "\n".join(lines + ["exists (T0:%r0 == 8)", ".expect allowed", ""])


def _pytest(cwd: Path, *args: str) -> tuple[dict[str, tuple[str, str]], str]:
    """Run pytest in ``cwd``: {test name: (outcome, message and text)} and the whole output."""
    xml = cwd / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
                           f"--junitxml={xml}", *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    results = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kind, text = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                kind, text = child.tag, (child.get("message") or "") + "\n" + (child.text or "")
        results[name] = (kind, text)
    xml.unlink()
    return results, out


def _project(tmp_path: Path) -> Path:
    """A project with its own testpaths (t/) holding a Python test and a ptxmm test."""
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["t"]\n')
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_py.py").write_text("def test_py():\n    assert True\n")
    (tmp_path / "t" / "mp.ptx").write_text(MP)
    return tmp_path


def test_expectations_are_read_from_lines_and_comments():
    assert expectations(MP) == ([], True)
    assert expectations(RACE) == (["race"], False)
    assert expectations(SB_LITMUS) == (["allowed"], False)
    assert expectations("// ptxmm: expect race, assert-fails\n")[0] == ["race", "assert-fails"]
    assert expectations("st.global.u32 [x], 1; // expect nothing\n") == ([], False)


def test_the_projects_own_testpaths_run_is_unchanged(tmp_path):
    proj = _project(tmp_path)
    got, _ = _pytest(proj)
    assert list(got) == ["t.test_py::test_py"]  # testpaths: the .ptx file is not collected
    got, _ = _pytest(proj, "t")  # a path named on the command line: collected
    mp = "t.mp.ptx::MP+relaxed+acquire"  # the item is named after the test
    assert sorted(got) == [mp, "t.test_py::test_py"] and got[mp][0] == "passed"
    got, _ = _pytest(proj, "-p", "no:ptxmm", "t")  # the plugin off: nothing of it
    assert list(got) == ["t.test_py::test_py"]


def test_items_pass_fail_and_skip_as_their_expectations_say(tmp_path):
    files = {
        "mp.ptx": MP,
        "wrong.ptx": MP.replace(".expect allowed", ".expect forbidden"),
        "race.ptx": RACE,
        "norace.ptx": RACE.replace("expect race", "expect ok"),
        "sb.litmus": SB_LITMUS,
        "broken.ptx": ".expect allowed\n.global .u32 x = 0;\n.thread T0 {\n    bogus;\n}\nexists (x == 1)\n",
        "k.cu": "// ptxmm: expect ok\n__global__ void k() {}\n",
        "noexpect.ptx": MP.replace(".expect allowed\n", ""),
    }
    d = tmp_path / "suite"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_text(text)
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "slow.ptx").write_text(_four_threads())
    # every outcome enumerated (the default asks the condition only): the report lists them; the
    # time limit is generous (the first item pays for ptxmm's lazy imports, seconds on a loaded
    # machine) and only the slow test runs under a short one
    got, out = _pytest(tmp_path, "suite", "--ptxmm-timeout", "30", "--ptxmm-observe", "all")
    slow, _ = _pytest(tmp_path, "slow", "--ptxmm-timeout", "0.5", "--ptxmm-observe", "all")
    got |= slow
    kinds = {k.split(".", 1)[1].rsplit("::", 1)[0]: v[0] for k, v in got.items()}
    assert kinds == {"mp.ptx": "passed", "wrong.ptx": "failure", "race.ptx": "passed",
                     "norace.ptx": "failure", "sb.litmus": "passed", "broken.ptx": "failure",
                     "k.cu": "failure" if find_nvcc() else "skipped",
                     "slow.ptx": "failure"}  # noexpect.ptx: not a test
    text = {k.split(".", 1)[1].rsplit("::", 1)[0]: v[1] for k, v in got.items()}
    # a failure prints ptxmm's report, as `ptxmm check` prints it
    assert "expected the condition to fail, it holds" in text["wrong.ptx"]
    assert "4 allowed outcome(s)" in text["wrong.ptx"] and "ALLOWED" in text["wrong.ptx"]
    assert "expected findings none, found race" in text["norace.ptx"]
    assert "data-race on x:" in text["norace.ptx"]
    assert "broken.ptx:4:" in text["broken.ptx"]
    assert "no verdict" in text["slow.ptx"] and "timeout" in text["slow.ptx"]
    assert ("has no launch" if find_nvcc() else "needs nvcc, which is not found") in text["k.cu"]
    assert "ptxmm check wrong.ptx --model ptx" in out


def _kernel_suite(d: Path) -> None:
    d.mkdir()
    for name in ("mp_relaxed", "exchange", "oob"):
        for suffix in (".cu", ".ptx"):
            (d / (name + suffix)).write_text((KERNELS / (name + suffix)).read_text())
    # a wrong expectation; a kernel .cu without a twin; a PTX module with its own lines
    (d / "wrong.cu").write_text((KERNELS / "mp_release.cu").read_text().replace("expect ok", "expect race"))
    (d / "lone.cu").write_text((KERNELS / "mp_release.cu").read_text())
    (d / "alone.ptx").write_text("// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1])\n"
                                 "// ptxmm: expect race\n" + (KERNELS / "mp_relaxed.ptx").read_text())


def test_kernels_are_tests_by_the_runners_rule(tmp_path):
    """.cu files and PTX modules with `// ptxmm: expect`: findings equal the list and the condition
    holds (`ptxmm test`'s rule); a .cu's .ptx twin is checked in its stead without nvcc."""
    _kernel_suite(tmp_path / "k")
    assert "expect ok" in (KERNELS / "mp_release.cu").read_text()
    runs = [("", {"mp_relaxed.cu", "exchange.cu", "oob.cu", "lone.cu"})] if find_nvcc() else []
    runs.append((NO_NVCC, {"mp_relaxed.cu", "exchange.cu", "oob.cu"}))  # lone.cu: skipped
    for conftest, passing in runs:
        (tmp_path / "k" / "conftest.py").write_text(conftest)
        got, _ = _pytest(tmp_path, "k")
        kinds = {k.split(".", 1)[1].rsplit("::", 1)[0]: v for k, v in got.items()}
        want = {n: "passed" for n in passing} | {"alone.ptx": "failure"}
        want["lone.cu"] = "passed" if conftest == "" else "skipped"
        want["wrong.cu"] = "failure" if conftest == "" else "skipped"
        assert {k: v[0] for k, v in kinds.items()} == want, kinds  # the .ptx twins are no items
        # a failure says what differs, then ptxmm's report with the CUDA lines
        assert "expect race; found assert-fails, race" in kinds["alone.ptx"][1]
        assert "mp_relaxed.cu:18" in kinds["alone.ptx"][1]
        if conftest == "":
            assert "expect race; found ok" in kinds["wrong.cu"][1]
        else:
            assert "lone.cu needs nvcc, which is not found, and has no .ptx twin" in kinds["lone.cu"][1]


def test_model_and_unroll_are_options_and_ini_keys(tmp_path):
    (tmp_path / "sb.litmus").write_text(SB_LITMUS)
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nptxmm_model = "sc"\n')
    got, _ = _pytest(tmp_path, "sb.litmus")  # the ini key: SB's weak outcome is forbidden under SC
    [(name, (kind, text))] = got.items()
    assert name.endswith("::SB[sc]") and kind == "failure" and "model sc" in text
    # no path named: --ptxmm collects wherever pytest looks; options win over ini keys
    got, _ = _pytest(tmp_path, "--ptxmm", "--ptxmm-model", "ptx", "--ptxmm-unroll", "0",
                     "--ptxmm-engine", "brute", "--ptxmm-observe", "condition")
    assert [(k.rsplit("::", 1)[1], v[0]) for k, v in got.items()] == [("SB", "passed")]


@pytest.mark.slow  # every bundled example (~40 s); the plugin's items, skips and failures: the tests above
def test_pytest_examples_runs_every_bundled_test_with_an_expectation_and_passes(tmp_path):
    xml = tmp_path / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junitxml={xml}", "--ignore=examples/kernels/real", "examples/"], cwd=ROOT,
                          capture_output=True,
                          text=True, timeout=600)
    got = {f"{c.get('classname')}::{c.get('name')}": "passed" if len(c) == 0 else c[0].tag
           for c in ET.parse(xml).getroot().iter("testcase")}
    real = ROOT / "examples" / "kernels" / "real"  # tests/kernel/test_real_corpus.py: some refused today
    with_expect = [p for p in (ROOT / "examples").rglob("*") if p.suffix in (".ptx", ".litmus", ".cu")
                   and p.parent != real and any(expectations(p.read_text()))]
    assert len(got) == len(with_expect) > 90
    # a kernel (.cu) without nvcc and without a .ptx twin is skipped; everything else passes
    assert set(got.values()) <= ({"passed"} if find_nvcc() else {"passed", "skipped"})
    assert "passed" in got.values() and proc.returncode == 0, proc.stdout[-3000:]


def test_an_expect_liveness_line_is_judged_by_the_liveness_verdict(tmp_path):
    """``.expect-liveness terminates|hangs`` is an expectation: the file is checked with liveness
    and fails when the verdict contradicts it, as ``ptxmm test --liveness`` says DISAGREE
    (red team F11); not decided (the time limit) fails as an unknown."""
    weak = (ROOT / "examples" / "liveness" / "spin-weak-flag.ptx").read_text()
    assert ".expect-liveness hangs" in weak
    d = tmp_path / "live"
    d.mkdir()
    (d / "hangs.ptx").write_text(weak)
    (d / "wrong.ptx").write_text(weak.replace(".expect-liveness hangs", ".expect-liveness terminates"))
    only = "\n".join(ln for ln in weak.splitlines() if not ln.startswith(".expect ")) + "\n"
    assert expectations(only) == ([], True)  # .expect-liveness alone is an expectation
    (d / "only.ptx").write_text(only.replace(".expect-liveness hangs", ".expect-liveness terminates"))
    got, _ = _pytest(tmp_path, "live")
    kinds = {k.split(".", 1)[1].rsplit("::", 1)[0]: v for k, v in got.items()}
    assert {k: v[0] for k, v in kinds.items()} == {"hangs.ptx": "passed", "wrong.ptx": "failure",
                                                   "only.ptx": "failure"}
    for f in ("wrong.ptx", "only.ptx"):
        assert "expected .expect-liveness terminates, an execution hangs (progress fair)" in kinds[f][1]
        assert "liveness: ✗ disagrees with .expect-liveness terminates" in kinds[f][1]
    got, _ = _pytest(tmp_path, "live/hangs.ptx", "--ptxmm-timeout", "0.000001")
    ((kind, text),) = got.values()
    assert kind == "failure" and "no verdict" in text


@pytest.mark.parametrize("how", ["-p", "conftest"])
def test_the_plugin_named_by_its_module_loads_once(tmp_path, how):
    """``-p ptxmm.testing.pytest_plugin`` (or a conftest's pytest_plugins) besides the pytest11
    entry point ``ptxmm``: one registration, not pytest's "already registered under a different
    name" (red team F22)."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "mp.ptx").write_text(MP)
    args = ["-p", "ptxmm.testing.pytest_plugin"] if how == "-p" else []
    if how == "conftest":
        (tmp_path / "conftest.py").write_text('pytest_plugins = ["ptxmm.testing.pytest_plugin"]\n')
    got, out = _pytest(tmp_path, *args, "t")
    assert got == {"t.mp.ptx::MP+relaxed+acquire": ("passed", "")}, out
    got, out = _pytest(tmp_path, "-p", "ptxmm", "t")  # the entry point's name
    assert got == {"t.mp.ptx::MP+relaxed+acquire": ("passed", "")}, out


def test_a_misspelt_model_is_one_usage_error_at_start_up(tmp_path):
    (tmp_path / "a.ptx").write_text(MP)
    (tmp_path / "b.litmus").write_text(SB_LITMUS)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "a.ptx", "b.litmus",
                           "--ptxmm-model", "ptxx"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out  # pytest's usage error: no item ran
    assert out.count("unknown model 'ptxx'") == 1 and "did you mean `ptx`?" in out
    assert "FAILED" not in out


def test_items_are_named_after_their_tests_and_a_failure_says_what_differs(tmp_path):
    (tmp_path / "wrong.ptx").write_text(MP.replace(".expect allowed", ".expect forbidden"))
    (tmp_path / "sb.litmus").write_text(SB_LITMUS)
    got, out = _pytest(tmp_path, "wrong.ptx", "sb.litmus")
    assert sorted(got) == ["sb.litmus::SB", "wrong.ptx::MP+relaxed+acquire"], out
    kind, text = got["wrong.ptx::MP+relaxed+acquire"]
    first = text.splitlines()[0]  # the JUnit failure's message
    assert kind == "failure" and "expected the condition to fail, it holds" in first
    # the condition alone is asked (as `ptxmm test` does), not every outcome
    assert "outcomes: not enumerated" in text
