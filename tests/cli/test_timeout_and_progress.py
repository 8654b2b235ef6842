"""Issue 24, item 5: --timeout is honoured (within 10 %) with bounded output, and a long check
shows progress on a terminal and a final line when it stops.

The issue's input: 4 threads × (2 stores + 2 loads) on one location (a fence.sc after the first
store since the SAT enumeration, which lists it much faster). Before: `--timeout 5` took
12.8 s and printed 2.7 MB (with --json: 20.8 s, 142 MB) — the racing pairs of thousands of
outcomes were looked up after the deadline, and the brute-force engine's closures piled up for
the paused collector. The tests that measure wall time (a little slack for a loaded machine) are
under -m slow; the default run asserts what does not depend on the machine's speed."""

from __future__ import annotations

import io
import json
import time

import pytest
from click.testing import CliRunner

import ptxmm
from ptxmm.cli.main import _Ticker, main
from ptxmm.report.termtext import Writer
from ptxmm.report.text import SHOWN_ON_TIMEOUT, bounded, render


def four_threads() -> str:
    lines = [".global .u32 x = 0;"]
    for t in range(4):
        # fence.sc: the SAT enumeration declines it (engines/z3/satenum.py); without it, this input's
        # listing reaches its 20,000-outcome cap in about 3 s on a quiet machine, close to the limits here
        lines += [f".thread T{t} {{", f"    st.global.u32 [x], {2 * t + 1};", "    fence.sc.gpu;",
                  "    ld.global.u32 %r0, [x];", f"    st.global.u32 [x], {2 * t + 2};",
                  "    ld.global.u32 %r1, [x];", "}"]
    return "\n".join(lines + ["exists (T0:%r0 == 8)", ""])


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    f = tmp_path_factory.mktemp("t") / "four.ptx"
    f.write_text(four_threads())
    return f


def _within(t: float, timeout: float, slack: float = 0.2) -> bool:
    return t <= timeout * 1.1 + slack  # 10 %, and a little for a loaded machine


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_the_check_stops_at_the_deadline(big, engine):
    """brute: 3^28 coherence-order choices of eight writes were listed without looking at the
    clock, and a million self-referencing closures were left to the collector (+60 %)."""
    prog = ptxmm.load(big)
    t0 = time.perf_counter()
    res = ptxmm.check(prog, engine=engine, timeout=2.0)
    took = time.perf_counter() - t0
    assert res.status == "timeout" and res.holds is None
    assert _within(took, 2.0), took


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
def test_text_report_of_a_timeout_is_bounded_and_on_time(big):
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["check", "--timeout", "2", str(big)])
    took = time.perf_counter() - t0
    assert r.exit_code == 2
    # before: the racing pairs of every outcome found, looked up after the deadline (+100 %);
    # the slack is for a machine running the suite on every core (the report's 50 rows crawl)
    assert _within(took, 2.0, slack=1.0), took
    assert len(r.output) < 60_000, len(r.output)  # was 2.7 MB at --timeout 5
    assert "found before the timeout" in r.output and "left out" in r.output
    rows = [ln for ln in r.output.splitlines() if ln.strip()[:1].isdigit() and "data-race" in ln]
    assert len(rows) <= SHOWN_ON_TIMEOUT
    assert "Unknown  timed out after 2.0 s" in r.output


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
def test_json_of_a_timeout_is_bounded_and_on_time(big):
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["check", "--json", "--timeout", "2", str(big)])
    took = time.perf_counter() - t0
    assert r.exit_code == 2
    assert _within(took, 2.0, slack=1.0), took
    assert len(r.stdout) < 3_000_000, len(r.stdout)  # was 142 MB at --timeout 5
    d = json.loads(r.stdout)
    assert d["status"] == "timeout" and len(d["outcomes"]) <= SHOWN_ON_TIMEOUT
    assert d["n_outcomes"] == len(d["outcomes"]) + d["outcomes_left_out"]
    # the race query ran only if the enumeration finished: here it did not
    assert d["findings"] == [] and d["findings_status"] == "not checked"


def test_outcomes_shown_on_timeout_keep_the_satisfying_ones():
    prog = ptxmm.parse(four_threads().replace("T0:%r0 == 8", "T3:%r1 == 1"), "t.ptx")
    res = ptxmm.check(prog, timeout=1.5)
    assert res.status == "timeout"
    shown, left = bounded(res, cap=5)
    assert len(shown.outcomes) == min(5, len(res.outcomes))
    assert left == len(res.outcomes) - len(shown.outcomes)
    n_sat = sum(1 for o in res.outcomes if o.satisfies)
    assert sum(1 for o in shown.outcomes if o.satisfies) == min(5, n_sat)
    assert bounded(ptxmm.check(prog, max_outcomes=3), cap=1)[1] == 0  # only timeouts are cut


def test_race_queries_stop_at_the_deadline():
    """Races are queries of the check itself: past the deadline they stop and the result says the
    list may be incomplete (the verdict already decided is kept)."""
    from ptxmm.queries.checker import CheckOptions, run

    prog = ptxmm.load("examples/mp-relaxed-acquire.ptx")
    done = ptxmm.check(prog)
    assert done.findings_status == "ok" and done.findings
    import ptxmm.engines.z3 as z3e

    real = z3e.Z3Problem.raised

    def late(self, **kw):
        self.deadline = z3e.Deadline(at=0.0)  # the deadline passes once the verdict is known
        yield from real(self, **kw)

    z3e.Z3Problem.raised = late
    try:
        res = run(prog, "ptx", CheckOptions(engine="z3", timeout=60))
    finally:
        z3e.Z3Problem.raised = real
    assert res.holds is done.holds and res.status == "ok"
    assert res.findings == () and res.findings_status == "timeout"
    buf = io.StringIO()
    render(res, Writer(buf, colour=False))
    assert "races may be missing from this list" in buf.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_then_a_final_line():
    term = _Terminal()
    t = _Ticker("four.ptx", stream=term, delay=0.0)
    deadline = time.monotonic() + 5
    while t.live is None and time.monotonic() < deadline:
        time.sleep(0.01)
    t(1234)
    t.close("--timeout passed")
    out = term.getvalue()
    assert "four.ptx: 1,234 outcomes found" in out
    assert out.rstrip().endswith("four.ptx: 1,234 outcome(s) found in "
                                 f"{out.rstrip().rsplit(' in ', 1)[1]}")
    assert "stopped: --timeout passed" in out


def test_no_progress_off_a_terminal_or_under_a_second():
    quiet = io.StringIO()
    t = _Ticker("f", stream=quiet, delay=0.0)
    t(5)
    t.close("--timeout passed")
    assert quiet.getvalue() == ""
    term = _Terminal()
    t = _Ticker("f", stream=term, delay=1.0)
    t(5)
    t.close()  # done before the second passed: nothing shown, no final line
    assert term.getvalue() == ""


# ----- where the deadline did not reach -----------------------------------------------------------

def test_value_resolution_leaves_no_cycle_for_the_paused_collector():
    """A check runs with the cyclic collector paused; the brute-force engine resolved each
    candidate's values with a self-calling closure, a cycle per candidate (a second's collection
    at the end of a five-second check)."""
    import gc
    import itertools

    from ptxmm.semantics.builder import build
    from ptxmm.semantics.executions import read_values, rf_choices
    from ptxmm.semantics.vocab import candidates

    eg = build(ptxmm.load("examples/mp-relaxed-acquire.ptx"))
    rfs = [rf for *_, rf in itertools.islice(rf_choices(eg, candidates(eg)), 64) if rf]
    assert rfs
    gc.collect()
    gc.disable()
    try:
        for rf in rfs:
            list(read_values(eg, rf))
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
def test_coherence_orders_are_listed_with_the_clock_watched():
    """Six stores to one location and no load: the first candidate already lists the partial
    orders of six writes, 3^15 choices (half a minute), which did not look at the clock."""
    from ptxmm.cat.parser import load_model
    from ptxmm.engines import Deadline, TimedOut
    from ptxmm.engines.brute import BruteProblem
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.outcomes import observables
    from ptxmm.semantics.vocab import candidates

    text = ".global .u32 x = 0;\n" + "".join(
        f".thread T{t} {{ st.global.u32 [x], {2 * t + 1}; st.global.u32 [x], {2 * t + 2}; }}\n"
        for t in range(3)) + "exists (x == 1)\n"
    eg = build(ptxmm.parse(text, "t.ptx"))
    pb = BruteProblem(eg, load_model("ptx"), observables(eg), candidates(eg),
                      deadline=Deadline.after(0.3))
    t0 = time.perf_counter()
    with pytest.raises(TimedOut):
        for _ in pb.outcomes():
            pass
    assert time.perf_counter() - t0 < 1.0


def test_encoding_stops_between_phases_once_past_the_deadline(monkeypatch):
    """The Z3 encoding of a large program takes seconds; past the deadline it stops before
    interpreting the model (the first query was the only check before)."""
    import ptxmm.engines.z3.problem as z3e
    from ptxmm.cat.parser import load_model
    from ptxmm.engines import Deadline, TimedOut
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.outcomes import observables
    from ptxmm.semantics.vocab import candidates

    def interp_not_expected(*a, **kw):
        raise AssertionError("the model was interpreted past the deadline")

    monkeypatch.setattr(z3e, "interp", interp_not_expected)
    eg = build(ptxmm.parse(four_threads(), "t.ptx"))
    with pytest.raises(TimedOut):
        z3e.Z3Problem(eg, load_model("ptx"), observables(eg), candidates(eg),
                      deadline=Deadline(at=0.0))


@pytest.mark.slow  # needs more than SHOWN_ON_TIMEOUT outcomes found in 1.5 s: machine speed
def test_a_timed_out_report_lists_a_bounded_number_of_outcomes(big):
    res = ptxmm.check(ptxmm.load(big), timeout=1.5)
    assert res.status == "timeout" and len(res.outcomes) > SHOWN_ON_TIMEOUT
    buf = io.StringIO()
    render(res, Writer(buf, colour=False))
    assert f"{SHOWN_ON_TIMEOUT} listed, {len(res.outcomes) - SHOWN_ON_TIMEOUT} left out" in buf.getvalue()


# ----- the same without a clock: what a timeout gives, whatever the machine's speed --------------

@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_a_check_past_its_timeout_says_timeout(big, engine):
    res = ptxmm.check(ptxmm.load(big), engine=engine, timeout=0.5)
    assert res.status == "timeout" and res.holds is None


def test_text_and_json_of_a_timeout_are_bounded(big):
    r = CliRunner().invoke(main, ["check", "--timeout", "0.5", str(big)])
    assert r.exit_code == 2
    assert len(r.output) < 60_000, len(r.output)
    rows = [ln for ln in r.output.splitlines() if ln.strip()[:1].isdigit() and "data-race" in ln]
    assert len(rows) <= SHOWN_ON_TIMEOUT
    assert "Unknown  timed out after 0.5 s" in r.output
    r = CliRunner().invoke(main, ["check", "--json", "--timeout", "0.5", str(big)])
    assert r.exit_code == 2
    d = json.loads(r.stdout)
    assert d["status"] == "timeout" and len(d["outcomes"]) <= SHOWN_ON_TIMEOUT
    assert d["n_outcomes"] == len(d["outcomes"]) + d["outcomes_left_out"]
    assert d["findings"] == [] and d["findings_status"] == "not checked"
    buf = io.StringIO()
    res = ptxmm.check(ptxmm.load(big), timeout=0.5)
    render(res, Writer(buf, colour=False))
    left = len(res.outcomes) - SHOWN_ON_TIMEOUT
    assert (f"{SHOWN_ON_TIMEOUT} listed, {left} left out" in buf.getvalue()) == (left > 0)


def test_coherence_orders_stop_at_the_deadline():
    """Six stores to one location: the listing of 3^15 coherence orders looks at the clock (it
    raises TimedOut instead of finishing half a minute later)."""
    from ptxmm.cat.parser import load_model
    from ptxmm.engines import Deadline, TimedOut
    from ptxmm.engines.brute import BruteProblem
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.outcomes import observables
    from ptxmm.semantics.vocab import candidates

    text = ".global .u32 x = 0;\n" + "".join(
        f".thread T{t} {{ st.global.u32 [x], {2 * t + 1}; st.global.u32 [x], {2 * t + 2}; }}\n"
        for t in range(3)) + "exists (x == 1)\n"
    eg = build(ptxmm.parse(text, "t.ptx"))
    pb = BruteProblem(eg, load_model("ptx"), observables(eg), candidates(eg),
                      deadline=Deadline.after(0.3))
    with pytest.raises(TimedOut):
        for _ in pb.outcomes():
            pass
