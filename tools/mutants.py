"""Mutation testing of the test suite: does pytest catch a wrong model or a wrong engine?

    python tools/mutants.py [--repo PATH] [--only NAME...] [--jobs N]
                                 [--list] [--apply-only] [--equivalent] [--no-baseline]

For each mutant below, a scratch copy of the repository (``COPY``: the sources, models,
examples, tests, and the docs and generators the doc-staleness tests read) is made next to it
(/work/.mutant-<name>-*, removed afterwards; so the tests' ``ROOT.parent / "shared"`` still finds
../shared), the mutant's text patches are applied, the copy
must still import and check a two-event program under every model (else: error, not a kill),
and the fast suite runs in the copy:

    python -m pytest -x -q -p no:cacheprovider -m "not slow and not gpu" -n 0 tests/

with ``PYTHONPATH=<copy>/src``. A mutant is *killed* when pytest fails, *SURVIVED* when it passes,
and *error* when a patch does not apply (the text to replace is not found exactly once): that is
reported loudly and never counted as killed. The unmutated copy runs first as a baseline (it must
pass, or every "kill" would be meaningless). Exit status 1 when any mutant survived or did not
apply.

Mutants are data, in tools/mutant_list.py: ``Mutant(name, kind, description, patches=[(relative
path, old, new), ...])``.
Model mutants edit models/*.cat text; engine mutants edit Python source in src/ptxmm. The engine
patches first targeted the old engine (commit 4a4a59e, where every one was killed) and were
retargeted to Engine 2 with the same meanings; each description states the mutant's *meaning*
(what wrong behaviour it introduces), which is what a later rewrite must re-express. A patch whose
file no longer holds its text is looked for in every module of its tree and applied where the text
occurs exactly once (a restructuring moves code, not meanings); --apply-only checks that every
patch still applies without running pytest.
EQUIVALENT lists mutants that were considered and argued to change no outcome (not run, not
counted). The killers of mutants that survived the older tests are in
tests/semantics/test_exact_outcome_sets.py.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

COPY = ["src", "grammar", "models", "examples", "tests", "docs", "benchmarks", "tools", "README.md",
        "pyproject.toml"]
PYTEST = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow and not gpu",
          "-n", "0", "tests/"]  # one process: --jobs runs mutants side by side
TIMEOUT_S = 900  # per pytest run; the fast suite takes ~2 min unmutated (a full run ~35 min, --jobs 2)
SANITY_TIMEOUT_S = 120
# Before pytest, the mutated copy must still import and check a tiny program under every model
# (public API only): a mutant that merely breaks the build is reported as an error, not a kill.
MODELS = ["ptx", "ptx-v7.5", "ptx-v6.0", "sc"]
SANITY = f"""
import ptxmm
p = ptxmm.parse('''.global .u32 x = 0;
.thread T0 .cta 0 {{ st.relaxed.gpu.global.u32 [x], 1; }}
.thread T1 .cta 1 {{ ld.relaxed.gpu.global.u32 %r0, [x]; }}
exists (T1:%r0 == 1)''')
for m in {MODELS!r}:
    for engine in ("z3", "brute"):
        ptxmm.check(p, m, engine=engine, flags=False)
"""


# the mutants (data) live beside this script
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutant_list import EQUIVALENT, MUTANTS, Mutant  # noqa: E402

# ====================================================================================== runner


@dataclass
class Result:
    mutant: Mutant
    status: str  # killed (a timeout counts, with its detail) | SURVIVED | error
    seconds: float
    detail: str = ""


def default_repo() -> Path:
    return Path(__file__).resolve().parents[1]


def scratch_copy(repo: Path, tag: str) -> Path:
    # a sibling of the repository (/work/.mutant-… for /work/main), so the tests' ROOT.parent /
    # "shared" is the repository's own ../shared
    dest = Path(tempfile.mkdtemp(prefix=f".mutant-{tag}-", dir=repo.parent))
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis", "*.pyc")
    for name in COPY:
        src = repo / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, dest / name)
    return dest


def apply(copy: Path, m: Mutant) -> str | None:
    """Apply the patches; an error message when one does not apply exactly once.

    A patch names the file it was written against; when that file is gone or no longer holds the
    text (code moved to another module by a restructuring), the text is looked for in every module
    of the same tree (src/ptxmm or models/) and applied where it occurs exactly once in all of
    them together — so a move never makes a mutant vanish, and an ambiguous text is an error."""
    for rel, old, new in m.patches:
        f = copy / rel
        if not (f.is_file() and f.read_text().count(old) == 1):
            found = relocate(copy, rel, old)
            if isinstance(found, str):
                return found
            f = found
        text = f.read_text()
        f.write_text(text.replace(old, new))
    return None


def relocate(copy: Path, rel: str, old: str) -> Path | str:
    """The one file of ``rel``'s tree that holds ``old`` exactly once (and no other file holds it)."""
    tree = copy / ("models" if rel.startswith("models/") else "src/ptxmm")
    hits = [(f, f.read_text().count(old)) for f in sorted(tree.rglob("*.cat" if tree.name == "models"
                                                                      else "*.py"))]
    hits = [(f, n) for f, n in hits if n]
    if len(hits) == 1 and hits[0][1] == 1:
        return hits[0][0]
    where = ", ".join(f"{f.relative_to(copy)} ×{n}" for f, n in hits) or "nowhere"
    return f"{rel}: text to replace found {where}: {old[:60]!r}"


def killer(output: str) -> str:
    m = re.search(r"^(FAILED|ERROR) (\S+)", output, re.M)
    if m:
        return m.group(2).split("[")[0] + ("[" + m.group(2).split("[", 1)[1] if "[" in m.group(2) else "")
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1][:100] if lines else "(no output)"


def child_env(copy: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy / "src")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PTXMM_MUTANTS", None)
    return env


def sanity(copy: Path) -> str | None:
    """None when the mutated copy imports and checks a tiny program under every model."""
    try:
        r = subprocess.run([sys.executable, "-c", SANITY], cwd=copy, env=child_env(copy),
                           capture_output=True, text=True, timeout=SANITY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"mutated copy hangs on a 2-event program (> {SANITY_TIMEOUT_S} s)"
    if r.returncode == 0:
        return None
    lines = [ln for ln in (r.stdout + r.stderr).strip().splitlines() if ln.strip()]
    return "mutated copy does not run: " + (lines[-1] if lines else f"exit {r.returncode}")


def run_pytest(copy: Path) -> tuple[int | None, str]:
    env = child_env(copy)
    try:
        r = subprocess.run([sys.executable, *PYTEST], cwd=copy, env=env, capture_output=True,
                           text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out
    return r.returncode, r.stdout + r.stderr


def run_one(repo: Path, m: Mutant | None) -> Result:
    try:
        return _run_one(repo, m)
    except Exception as e:  # a crash of the runner itself is an error, never a kill
        mut = m or Mutant("baseline", "-", "unmutated copy (must pass)")
        return Result(mut, "error", 0.0, f"runner crashed: {e!r}")


def _run_one(repo: Path, m: Mutant | None) -> Result:
    t0 = time.perf_counter()
    tag = m.name if m else "baseline"
    copy = scratch_copy(repo, tag)
    try:
        mut = m or Mutant("baseline", "-", "unmutated copy (must pass)")
        err = apply(copy, mut)
        err = err or sanity(copy)
        if err:
            return Result(mut, "error", time.perf_counter() - t0, err)
        rc, out = run_pytest(copy)
        dt = time.perf_counter() - t0
        if rc is None:
            return Result(mut, "killed", dt, f"timeout after {TIMEOUT_S} s")
        if rc == 0:
            return Result(mut, "SURVIVED", dt, out.strip().splitlines()[-1] if out.strip() else "")
        if rc in (1,):
            return Result(mut, "killed", dt, killer(out))
        # 2 = interrupted (collection error), 3 = internal error, 4 = usage, 5 = no tests
        return Result(mut, "killed" if rc == 2 else "error", dt, f"pytest exit {rc}: {killer(out)}")
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def table(results: list[Result]) -> str:
    rows = [("mutant", "kind", "what it changes", "result", "s", "killed by / detail")]
    for r in results:
        rows.append((r.mutant.name, r.mutant.kind, r.mutant.description, r.status,
                     f"{r.seconds:.0f}", r.detail))
    w = [min(max(len(row[i]) for row in rows), cap) for i, cap in enumerate((30, 6, 70, 8, 4, 90))]
    out = []
    for k, row in enumerate(rows):
        cells = [c if len(c) <= w[i] else c[: w[i] - 1] + "…" for i, c in enumerate(row)]
        out.append("  ".join(c.ljust(w[i]) for i, c in enumerate(cells)).rstrip())
        if k == 0:
            out.append("  ".join("-" * x for x in w))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=default_repo(),
                    help="repository to mutate (default: the one containing this script)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run in parallel (default 1)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated baseline run")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--equivalent", action="store_true",
                    help="run the equivalent mutants instead (expected to survive; for review)")
    ap.add_argument("--apply-only", action="store_true",
                    help="only check that every patch applies (no pytest runs)")
    args = ap.parse_args(argv)

    pool = EQUIVALENT if args.equivalent else MUTANTS
    names = [m.name for m in MUTANTS + EQUIVALENT]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        print(f"duplicate mutant names: {sorted(dup)}", file=sys.stderr)
        return 2
    todo = pool
    if args.only:
        unknown = set(args.only) - {m.name for m in pool}
        if unknown:
            print(f"unknown mutant(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        todo = [m for m in pool if m.name in args.only]
    if args.list:
        for m in todo:
            print(f"{m.name:32} {m.kind:7} {m.description}")
        return 0
    repo = args.repo.resolve()
    if args.apply_only:
        bad = 0
        for m in todo:
            copy = scratch_copy(repo, m.name)
            try:
                err = apply(copy, m)
            finally:
                shutil.rmtree(copy, ignore_errors=True)
            print(f"{m.name:32} {'ok' if err is None else 'ERROR ' + err}")
            bad += err is not None
        print(f"{len(todo) - bad}/{len(todo)} mutants apply")
        return 1 if bad else 0
    t0 = time.perf_counter()
    if not args.no_baseline:
        base = run_one(repo, None)
        print(f"baseline (unmutated): {'passes' if base.status == 'SURVIVED' else 'FAILS'} "
              f"in {base.seconds:.0f} s", flush=True)
        if base.status != "SURVIVED":
            print(f"!! the unmutated suite does not pass: {base.detail}", file=sys.stderr)
            return 1
    results: list[Result] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for r in ex.map(lambda m: run_one(repo, m), todo):
            print(f"  {r.mutant.name}: {r.status} ({r.seconds:.0f} s) {r.detail}", flush=True)
            results.append(r)
    print()
    print(table(results))
    errors = [r for r in results if r.status == "error"]
    survived = [r for r in results if r.status == "SURVIVED"]
    killed = [r for r in results if r.status == "killed"]
    kinds = {k: sum(r.mutant.kind == k for r in results) for k in ("model", "engine")}
    print()
    print(f"{len(killed)}/{len(results)} killed ({kinds['model']} model, {kinds['engine']} engine "
          f"mutants) in {time.perf_counter() - t0:.0f} s")
    for r in errors:
        print(f"!! PATCH DID NOT APPLY: {r.mutant.name}: {r.detail}", file=sys.stderr)
    for r in survived:
        print(f"!! SURVIVED: {r.mutant.name}: {r.mutant.description}", file=sys.stderr)
    return 1 if errors or survived else 0


if __name__ == "__main__":
    sys.exit(main())
