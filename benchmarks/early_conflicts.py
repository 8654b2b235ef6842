"""The early race query of one kernel check (queries.races.EARLY): its CPU seconds, Z3 conflicts and
decisions, whether it answered within races.EARLY_CONFLICTS, and the whole check's CPU seconds.

    python benchmarks/early_conflicts.py grid-barrier 16 [--budget N|none] [--demand on|off]
    python benchmarks/early_conflicts.py histogram 128

The kernel and size are bench_kernels.SCALE's (its launch and condition)."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_kernels as b  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel", choices=sorted(b.SCALE))
    ap.add_argument("size")
    ap.add_argument("--budget", default=None, help="races.EARLY_CONFLICTS (a count, or none)")
    ap.add_argument("--demand", choices=("on", "off"), default=None, help="cat.interp.DEMAND_CLOSURES")
    a = ap.parse_args()
    import ptxmm.kernel.launch as launch_mod
    from ptxmm.cat import interp
    from ptxmm.cli.main import main as cli
    from ptxmm.queries import checker, races

    launch_mod.MAX_THREADS = 1 << 30
    if a.budget is not None:
        races.EARLY_CONFLICTS = None if a.budget == "none" else int(a.budget)
    if a.demand is not None:
        interp.DEMAND_CLOSURES = a.demand == "on"
    stem, _, make, _ = b.SCALE[a.kernel]
    launch, cond = make(eval(a.size))  # an int or a (grid, block) tuple
    real = checker._early

    def early(r, pb, enumerates):
        t = time.process_time()
        out = real(r, pb, enumerates)
        st = pb.s.statistics() if getattr(pb, "s", None) is not None else None

        def get(k: str):
            return st.get_key_value(k) if st is not None and k in st.keys() else None
        print(f"early query: {time.process_time() - t:.2f} s, {get('conflicts')} conflicts, "
              f"{get('decisions')} decisions, answered: {sorted(r.early)}", file=sys.stderr)
        return out

    checker._early = early
    sys.argv = ["ptxmm", "check", "--launch", launch, "--forall", cond, str(b.KDIR / f"{stem}.ptx")]
    t = time.process_time()
    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
        cli()
    print(f"{a.kernel} {a.size}: whole check {time.process_time() - t:.2f} CPU s (budget "
          f"{races.EARLY_CONFLICTS}, demand {interp.DEMAND_CLOSURES})", file=sys.stderr)


if __name__ == "__main__":
    main()
