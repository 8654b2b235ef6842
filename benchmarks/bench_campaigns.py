"""Campaign throughput: tests per second per core for ``ptxmm test`` on generated tests (one process,
in-process, as a worker runs them), beside herd7 on the same tests under SC in one process.

    python benchmarks/bench_campaigns.py [--size 4] [--repeat 3] [--no-herd]

The tests are ``ptxmm gen --size N`` (the PTX relaxation set). herd7 reads them in LISA
(``gen --format herd``: accesses only — fences and dependencies are program order, which SC
already keeps) and runs ``herd7 -model sc.cat`` on all of them in one process; ptxmm's SC verdicts
must equal herd7's (checked, row by row). The herd7 row is skipped, visibly, when herd7 is absent
(PATH, else ~/.local/herd7/bin/herd7). Timings are medians of ``--repeat`` runs; on a loaded
machine compare rows of one run only."""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ptxmm.campaigns.gen import GenOptions, generate
from ptxmm.campaigns.stream import Item
from ptxmm.campaigns.work import test_rows


def find_herd() -> str | None:
    h = shutil.which("herd7")
    p = Path.home() / ".local" / "herd7" / "bin" / "herd7"
    return h or (str(p) if p.exists() else None)


def ptxmm_rate(items: list[Item], model: str, repeat: int) -> tuple[float, dict[str, bool]]:
    test_rows(items[:2], model)  # imports, the model parsed once: a worker's steady state
    times, verdicts = [], {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = test_rows(items, model)
        times.append(time.perf_counter() - t0)
        verdicts = {r["name"]: r["holds"] for r in rows}
    return len(items) / statistics.median(times), verdicts


def herd_rate(herd: str, files: list[Path], repeat: int) -> tuple[float, dict[str, bool]]:
    times, out = [], ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = subprocess.run([herd, "-model", "sc.cat", *map(str, files)], capture_output=True,
                             text=True, check=True).stdout
        times.append(time.perf_counter() - t0)
    seen = {m.group(1): m.group(2) != "Never" for m in re.finditer(r"^Observation (\S+) (\w+)", out, re.M)}
    return len(files) / statistics.median(times), seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-herd", action="store_true")
    a = ap.parse_args()
    gens = list(generate(GenOptions(size=a.size)))
    items = [Item("gen:" + g.name, text=g.text()) for g in gens]
    rows = []
    for model in ("sc", "ptx"):
        rate, v = ptxmm_rate(items, model, a.repeat)
        rows.append((f"ptxmm test --model {model} (in-process, z3/brute as `auto` picks)", rate))
        if model == "sc":
            sc = v
    herd = None if a.no_herd else find_herd()
    if herd:
        with tempfile.TemporaryDirectory() as d:
            files = []
            for g in gens:
                f = Path(d) / f"{g.name}.litmus"
                f.write_text(g.text("herd"))
                files.append(f)
            rate, hv = herd_rate(herd, files, a.repeat)
        bad = [n for n in sc if hv.get(n) != sc[n]]
        rows.append((f"herd7 -model sc.cat (one process; {len(bad)} verdicts differ from ptxmm's)", rate))
    else:
        rows.append(("herd7 -model sc.cat: skipped (herd7 not found" +
                     (", --no-herd" if a.no_herd else "") + ")", None))
    print(f"{len(items)} tests of ptxmm gen --size {a.size}, median of {a.repeat} runs, one core\n")
    print("| runner | tests/s/core |\n|---|---|")
    for name, rate in rows:
        print(f"| {name} | {'—' if rate is None else f'{rate:.0f}'} |")


if __name__ == "__main__":
    main()
