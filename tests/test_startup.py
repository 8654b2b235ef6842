"""What keeps `ptxmm check` quick to start: the auto engine, the report without rich, the quick
exit of the ptxmm program, and nothing heavy imported on the check path."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import ptxmm
from ptxmm.engines import AUTO_BRUTE_MAX, candidate_space, pick
from ptxmm.events import build
from ptxmm.termtext import Writer, wants_colour
from ptxmm.vocab import candidates

ROOT = Path(__file__).resolve().parents[1]
MP = ROOT / "examples" / "mp-relaxed-acquire.ptx"
SPIN = ROOT / "examples" / "spinlock-cas.ptx"


def _space(path: Path, limit: int = 10**9) -> int | None:
    eg = build(ptxmm.load(str(path)))
    return candidate_space(eg, candidates(eg), limit)


def test_auto_engine_enumerates_tiny_spaces_and_solves_the_rest():
    mp, spin = ptxmm.load(str(MP)), ptxmm.load(str(SPIN))
    assert _space(MP) == 9  # two reads, each from the initial write, the store, or not at all
    assert ptxmm.check(mp).engine == "brute"
    assert _space(SPIN, AUTO_BRUTE_MAX) is None
    assert ptxmm.check(spin).engine == "z3"
    eg = build(mp)
    assert pick("auto", eg, candidates(eg), verdict_only=True) == "z3"  # one query, no enumeration
    assert pick("brute", eg, candidates(eg), verdict_only=False) == "brute"


def test_auto_engine_gives_the_solver_outcomes():
    for f in (MP, ROOT / "examples" / "classic" / "SB-fence-sc.ptx", SPIN):
        prog = ptxmm.load(str(f))
        auto, z3 = ptxmm.check(prog), ptxmm.check(prog, engine="z3")
        assert auto.outcome_set == z3.outcome_set and auto.holds == z3.holds


def test_candidate_space_counts_rf_choices_coherence_orders_and_paths():
    """MP: two reads with three rf choices each (the initial write, the store, or none: not run);
    2+2W: two writes per location, three coherence choices each; a limit cuts the count short."""
    assert _space(MP) == 3 * 3
    assert _space(ROOT / "examples" / "classic" / "2+2W-relaxed.ptx") == 3 * 3
    assert _space(ROOT / "examples" / "classic" / "2+2W-fence-sc.ptx") == 3 * 3 * 2  # 2 sc orders
    assert _space(MP, limit=8) is None


def test_report_is_plain_off_a_terminal_and_coloured_on_request(monkeypatch):
    buf = io.StringIO()
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert not wants_colour(buf)
    w = Writer(buf)
    w.line("a ", ("b", "bold green"))
    w.table(["#", "x", "flags"], [["1", "42", ("", "yellow")], ["2", "7", ("race", "yellow")]], "rrl")
    assert buf.getvalue().splitlines() == ["a b", "#   x  flags", "1  42", "2   7  race"]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[1;32mb\x1b[0m" in _line(("b", "bold green"))
    monkeypatch.setenv("NO_COLOR", "1")
    assert _line(("b", "bold green")) == "b\n"


def _line(*segs) -> str:
    buf = io.StringIO()
    Writer(buf).line(*segs)
    return buf.getvalue()


def test_check_path_imports_neither_rich_nor_the_solver_for_a_tiny_test():
    code = ("import sys; from ptxmm.cli import main\n"
            "try:\n    main(['check', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('rich', 'z3', 'networkx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(MP)], capture_output=True, text=True,
                         cwd=ROOT).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_ptxmm_program_exits_quickly_with_every_line_and_the_right_code(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "ptxmm", *a], capture_output=True,  # noqa: E731
                                    text=True, cwd=ROOT)
    ok = run("check", str(MP))
    assert ok.returncode == 0 and ok.stdout.rstrip().endswith("✓ agrees")
    bad = tmp_path / "bad.ptx"
    bad.write_text(MP.read_text().replace("st.relaxed.gpu", "st.relase.gpu"))
    res = run("check", str(MP), str(bad), "--json")
    assert res.returncode == 2 and '"error"' in res.stdout and "relase" in res.stderr
    assert run("nosuchcommand").returncode == 2


def test_a_parallel_batch_exits_and_closes_its_output():
    """`ptxmm test -j 2` shuts its worker pool down before the quick exit: with the pool left to
    interpreter teardown, os._exit could leave workers holding the output pipe (a reader such as
    `| tail` then waited forever) or hang in multiprocessing's exit handler."""
    for _ in range(3):
        r = subprocess.run([sys.executable, "-m", "ptxmm", "test", str(ROOT / "examples" / "classic"),
                            "-j", "2"], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "agree" in r.stdout and "Exception" not in r.stderr
