"""Limits that hold (issue 38): every bundled example (examples/**/*.ptx) and the worst shapes
found, each checked by a child `ptxmm check --timeout 5`: it must end within 6 s (the limit plus
one second; the interpreter's start-up counts) under a stated memory cap (peak RSS of the child,
from os.wait4's resource usage); and for the shapes that run long (and every example still running
at SIGINT_AT seconds), Ctrl-C (SIGINT) must be answered within 1 s with the partial report
("found before Ctrl-C").

    PYTHONPATH=src python benchmarks/limits_bench.py [--timeout 5] [--cap-mib 1024] [--only SUBSTR]

Prints one row per input and a summary; exit status 1 when any row fails."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIGINT_AT = 2.0  # seconds after the start a long check gets SIGINT


def stores_and_loads(stores: int = 3, loads: int = 10) -> str:
    lines = [".global .u32 x = 0;", ".thread T0 {"]
    lines += [f"    st.global.u32 [x], {i + 1};" for i in range(stores)] + ["}", ".thread T1 {"]
    lines += [f"    ld.global.u32 %r{i}, [x];" for i in range(loads)] + ["}", "exists (T1:%r0 == 1)", ""]
    return "\n".join(lines)


def four_threads() -> str:
    """One location, 4 threads x (2 stores + 2 loads): about 23 million allowed outcomes."""
    lines = [".global .u32 x = 0;"]
    for t in range(4):
        lines += [f".thread T{t} {{", f"    st.global.u32 [x], {2 * t + 1};", "    ld.global.u32 %r0, [x];",
                  f"    st.global.u32 [x], {2 * t + 2};", "    ld.global.u32 %r1, [x];", "}"]
    return "\n".join(lines + ["exists (T0:%r0 == 8)", ""])


def relaxed_four() -> str:
    """The issue's 'small 4-thread relaxed program': two locations, relaxed accesses."""
    lines = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    for t in range(4):
        a, b = ("x", "y") if t % 2 == 0 else ("y", "x")
        lines += [f".thread T{t} {{", f"    st.relaxed.gpu.global.u32 [{a}], {t + 1};",
                  f"    ld.relaxed.gpu.global.u32 %r0, [{b}];",
                  f"    st.relaxed.gpu.global.u32 [{b}], {t + 5};",
                  f"    ld.relaxed.gpu.global.u32 %r1, [{a}];", "}"]
    return "\n".join(lines + ["exists (T0:%r0 == 0)", ""])


def nested_loops() -> str:
    """Nested data-dependent loops (red team F8): at --unroll 64 the event-graph build never ends;
    it must look at the limit itself (it allocates fast)."""
    return "\n".join([".global .u32 x = 0;", ".thread T0 {", "  .reg .u32 %i = 0;", "  .reg .u32 %j = 0;",
                      "A: mov.u32 %j, 0;", "B: ld.global.u32 %r0, [x];", "   add.u32 %j, %j, 1;",
                      "   setp.lt.u32 %p1, %j, %r0;", "   @%p1 bra B;", "   add.u32 %i, %i, 1;",
                      "   setp.lt.u32 %p0, %i, 100;", "   @%p0 bra A;", "}", ".thread T1 {",
                      "  st.global.u32 [x], 5;", "  st.global.u32 [x], 3;", "  st.global.u32 [x], 9;", "}",
                      "exists (T0:%r0 == 9)", ""])


# name → (the program, the check's extra options)
WORST = {"w3r10 (3 stores, 10 loads)": (stores_and_loads, []),
         "4x(2st+2ld) one location": (four_threads, []),
         "4 threads relaxed, 2 locations": (relaxed_four, []),
         "u01_nested (nested data-dependent loops, --unroll 64)": (nested_loops, ["--unroll", "64"])}


def run_child(args: list[str], sigint_at: float | None, limit: float) -> dict:
    """One child `ptxmm check ARGS`: wall time, peak RSS (MiB), exit status, its output; with
    ``sigint_at``, SIGINT then, and how long it took to answer."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([sys.executable, "-m", "ptxmm", "check", *args], stdout=out, stderr=err,
                             env=env, cwd=ROOT)
        sent = None
        hard = t0 + limit + 30
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            now = time.perf_counter()
            if sigint_at is not None and sent is None and now - t0 >= sigint_at:
                p.send_signal(signal.SIGINT)
                sent = now
            if now > hard:
                p.kill()
            time.sleep(0.01)
        end = time.perf_counter()
        out.seek(0)
        err.seek(0)
        text, etext = out.read(), err.read()
    return {"wall": end - t0, "rss": ru.ru_maxrss / 1024, "rc": os.waitstatus_to_exitcode(status),
            "answer": None if sent is None else end - sent, "out": text, "err": etext}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--cap-mib", type=float, default=1024.0,
                    help="the memory cap every child must stay under")
    ap.add_argument("--only", default=None, help="only inputs whose name contains this")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="limits-bench-"))
    inputs: list[tuple[str, Path, bool, list[str]]] = []
    for name, (make, extra) in WORST.items():
        f = tmp / (name.split()[0].replace("(", "") + ".ptx")
        f.write_text(make())
        inputs.append((name, f, True, extra))
    inputs += [(str(f.relative_to(ROOT)), f, False, []) for f in sorted((ROOT / "examples").glob("**/*.ptx"))]
    if a.only:
        inputs = [x for x in inputs if a.only in x[0]]
    rows, failed = [], 0
    print(f"limits bench: --timeout {a.timeout}, must end within {a.timeout + 1:.0f} s under "
          f"{a.cap_mib:.0f} MiB; SIGINT at {SIGINT_AT} s answered within 1 s")
    print(f"{'input':58s} {'wall s':>7s} {'MiB':>6s} {'rc':>3s} {'status':12s} {'SIGINT s':>8s}  ok")
    for name, f, worst, extra in inputs:
        r = run_child([*extra, "--timeout", str(a.timeout), str(f)], None, a.timeout)
        status = _status(r["out"])
        ok = r["wall"] <= a.timeout + 1 and r["rss"] <= a.cap_mib and "Traceback" not in r["err"]
        ok = ok and not (status == "timeout" and "Ok  " in r["out"])
        answer = ""
        if worst or r["wall"] > SIGINT_AT + 0.5:  # long enough to be interrupted
            s = run_child([*extra, str(f)], SIGINT_AT, 60)
            if s["answer"] is not None:
                answer = f"{s['answer']:.2f}"
                ok = ok and s["answer"] <= 1.0 and "before Ctrl-C" in s["out"] and "Traceback" not in s["err"]
            else:
                answer = "done"  # finished before SIGINT_AT
        failed += not ok
        rows.append((name, r, status, answer, ok))
        print(f"{name[:58]:58s} {r['wall']:7.2f} {r['rss']:6.0f} {r['rc']:3d} {status:12s} {answer:>8s}  "
              f"{'yes' if ok else 'NO'}", flush=True)
    walls = [r["wall"] for _, r, *_ in rows]
    rss = [r["rss"] for _, r, *_ in rows]
    print(f"\n{len(rows)} inputs, {len(rows) - failed} within the limits, {failed} not; "
          f"max wall {max(walls):.2f} s, max peak RSS {max(rss):.0f} MiB")
    return 1 if failed else 0


def _status(out: str) -> str:
    for key in ("timed out", "interrupted", "memory limit", "not enumerated", "stopped at",
                "no execution finishes"):
        if key in out:
            return {"timed out": "timeout", "not enumerated": "capped", "memory limit": "memory",
                    "stopped at": "stopped", "no execution finishes": "no-execution"}.get(key, key)
    return "ok"


if __name__ == "__main__":
    sys.exit(main())
