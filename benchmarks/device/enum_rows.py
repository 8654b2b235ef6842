"""Issue 41's enumeration rows as whole `ptxmm check` processes: x1l3 under ptx (46,875 outcomes)
and x1l4 under sc (41,040), each one line of wall and CPU seconds and the cost per outcome. The
device timing scripts (run_s18_timing.sh, run_s20_timing.sh) run it; the ptxmm it times is the one
the environment's PYTHONPATH gives.

    python benchmarks/device/enum_rows.py LABEL"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import shapes  # noqa: E402

ROWS = (("x1l3", shapes.one_location(3), "ptx", 46875), ("x1l4", shapes.one_location(4), "sc", 41040))


def main(label: str) -> None:
    d = tempfile.mkdtemp()
    for name, sh, model, n in ROWS:
        f = os.path.join(d, name + ".ptx")
        Path(f).write_text(sh.ptx())
        c0, t = resource.getrusage(resource.RUSAGE_CHILDREN), perf_counter()
        r = subprocess.run([sys.executable, "-m", "ptxmm", "check", f, "--model", model, "--max-outcomes",
                            "1000000", "--json"], capture_output=True, text=True, timeout=200)
        w, c1 = perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
        j = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
        got = j.get("n_outcomes")
        print(f"{label} {name} {model}: {w:.2f} s wall, {cpu:.2f} s cpu, n_outcomes {got} (expected {n}), "
              f"{1000 * w / max(1, got or 1):.3f} ms/outcome, status {j.get('status')}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "this")
