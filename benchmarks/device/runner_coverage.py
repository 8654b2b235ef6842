"""How much of what the public CUDA runner saw on the H100 ptxmm's harness sees, per test and family.

    python benchmarks/device/runner_coverage.py allowed DIR --tests NAMES --out allowed.json
    python benchmarks/device/runner_coverage.py explore DIR --tests NAMES --allowed allowed.json \\
        --envs runner,barrier --seconds 0.5 --out explore.jsonl
    python benchmarks/device/runner_coverage.py run DIR --tests NAMES --allowed allowed.json \\
        --plan runner@0.5,barrier@0.5 --limit 5 --out run.jsonl
    python benchmarks/device/runner_coverage.py table RESULTS_CSV MANIFEST RUN.jsonl[,..] [--out MD]

DIR holds the tests written by ``runner_families.py gen``. ``allowed`` runs the model (CPU): every
allowed outcome, whether it satisfies the weak condition. ``explore`` runs every environment on
every test for a fixed time (condition count, rate, violations). ``run`` spends at most ``--limit``
seconds of replay per test, cycling through the plan's environments (``ENV@SECONDS``: preset and
knobs as ``runner:blocks=512/stripe=2``), and stops at the first replay chunk that shows the weak
outcome: the replay seconds until then are the test's time to first observation. Every outcome the
GPU shows is checked against the model (a violation is counted and listed). Output: one JSON line per
test, written as it finishes. ``table`` writes the per-family coverage of the runner's H100
observations (its results.csv): seen by ptxmm within 1 s and within 5 s of replay per test."""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import runner_families as rf  # noqa: E402

import ptxmm  # noqa: E402
from ptxmm.device.env import PRESETS, Env  # noqa: E402

CHUNK_S = 0.05  # replay seconds between two looks at the histogram


def parse_env(item: str) -> Env:
    """``preset:knob=v/knob=v`` -> Env."""
    name, _, knobs = item.partition(":")
    env = PRESETS[name]
    kw = {}
    for kv in knobs.split("/"):
        if kv:
            k, v = kv.split("=")
            kw[k] = type(getattr(env, k))(int(v))
    return replace(env, **kw)


def parse_plan(spec: str) -> list[tuple[str, Env, float]]:
    out = []
    for item in spec.split(","):
        env, _, secs = item.partition("@")
        out.append((env, parse_env(env), float(secs or 0.5)))
    return out


def auto_plan(spec: str) -> str:
    """``auto:EXPLORE.jsonl:K:SECONDS[:FIRST]``: the K environments of an explore file that showed the
    weak outcome in the most tests (ties: the higher summed rate), SECONDS each; FIRST (an env)
    leads the plan if given."""
    _, path, k, secs, *first = spec.split(":", 4)
    score: dict[str, list[float]] = {}
    for ln in Path(path).read_text().splitlines():
        r = json.loads(ln)
        s = score.setdefault(r["env"], [0, 0.0])
        s[0] += r["weak"] > 0
        s[1] += r["rate"]
    best = sorted(score, key=lambda e: (-score[e][0], -score[e][1]))[:int(k)]
    for e in best:
        print(f"auto plan: {e}: weak in {score[e][0]} tests, summed rate {score[e][1]:.3g}", flush=True)
    envs = ([first[0]] if first else []) + [e for e in best if not first or e != first[0]]
    return ",".join(f"{e}@{secs}" for e in envs)


def names_of(path: str) -> list[str]:
    return [n for n in Path(path).read_text().split() if n]


def model_of(prog) -> dict:
    from ptxmm.queries.checker import check

    res = check(prog, "ptx", unroll=2, observe="all", flags=False)
    return {"holds": res.holds, "allowed": [o.outcome.as_dict() for o in res.outcomes],
            "weak": [o.outcome.as_dict() for o in res.outcomes if o.satisfies]}


def cmd_allowed(a) -> None:
    out = {}
    for n in names_of(a.tests):
        out[n] = model_of(ptxmm.load(Path(a.dir) / f"{n}.ptx"))
    Path(a.out).write_text(json.dumps(out))
    print(f"{len(out)} tests, condition allowed in {sum(1 for v in out.values() if v['holds'])}")


class Test:
    """One test on the device: its layout (value codes from the model's outcomes), harnesses per
    environment, and the observed outcomes judged against the model."""

    def __init__(self, d: Path, name: str, model: dict):
        from ptxmm.device.layout import make_layout

        self.name = name
        self.prog = ptxmm.load(d / f"{name}.ptx")
        self.model = model
        self.lay = make_layout(self.prog, model["allowed"])
        self.allowed = {tuple(sorted(o.items())) for o in model["allowed"]}
        self.weak = {tuple(sorted(o.items())) for o in model["weak"]}
        self.violations: dict[tuple, int] = {}

    def source(self, env: Env) -> str:
        from ptxmm.device.codegen import fusable, generate

        fused = env.fused and fusable(self.lay)
        return generate(self.lay, fused=fused, generic=env.generic, tail_fence=env.tail_fence and fused)

    def judge(self, run) -> int:
        """Weak instances of a run; forbidden outcomes go to ``violations``."""
        weak = 0
        for ob in run.observed:
            key = tuple(sorted(dict(ob.outcome.values).items()))
            if key not in self.allowed:
                self.violations[key] = self.violations.get(key, 0) + ob.count
            elif key in self.weak:
                weak += ob.count
        return weak

    def violation_rows(self) -> list[dict]:
        return [{"values": dict(k), "count": c} for k, c in self.violations.items()]


def precompile(tests: list[Test], envs: list[Env], jobs: int) -> float:
    from ptxmm.device.build import compile_cubin

    t0 = time.perf_counter()
    srcs = {(t.source(e), e.rdc, e.ptxas) for t in tests for e in envs}
    with ThreadPoolExecutor(jobs) as ex:
        list(ex.map(lambda s: compile_cubin(s[0], rdc=s[1], ptxas=s[2]), srcs))
    return time.perf_counter() - t0


def _load(a) -> tuple[list[Test], dict]:
    allowed = json.loads(Path(a.allowed).read_text())
    d = Path(a.dir)
    tests = []
    for n in names_of(a.tests):
        m = allowed.get(n) or model_of(ptxmm.load(d / f"{n}.ptx"))
        tests.append(Test(d, n, m))
    return tests, allowed


def cmd_explore(a) -> None:
    from ptxmm.device.harness import Harness

    tests, _ = _load(a)
    envs = [(e, parse_env(e)) for e in a.envs.split(",")]
    print(f"compiled in {precompile(tests, [e for _, e in envs], a.jobs):.1f} s", flush=True)
    t_end = time.perf_counter() + a.deadline
    with open(a.out, "w") as f:
        for t in tests:
            for label, env in envs:
                if time.perf_counter() > t_end:
                    return
                h = Harness(t.prog, env, t.lay, seed=a.seed)
                r = h.run(a.seconds)
                w = t.judge(r)
                row = {"test": t.name, "env": label, "knobs": r.env.short(), "instances": r.instances,
                       "seconds": round(r.seconds, 3), "weak": w,
                       "rate": w / r.instances if r.instances else 0,
                       "checksum_ok": r.checksum_ok, "violations": t.violation_rows()}
                f.write(json.dumps(row) + "\n")
                f.flush()
                print(f"{t.name} {label}: weak {w} in {r.instances:.3g} ({r.env.short()})", flush=True)
                del h


def hunt_one(t: Test, plan: list[tuple[str, Env, float]], limit: float, seed: int) -> dict:
    """Cycle through the plan until the weak outcome shows or ``limit`` replay seconds are spent."""
    from ptxmm.device.harness import Harness

    used, first, first_env, first_knobs = 0.0, None, None, None
    per_env: dict[str, dict] = {}
    instances = 0
    checksum = True
    k = 0
    while used < limit - 1e-9 and first is None:
        label, env, share = plan[k % len(plan)]
        h = Harness(t.prog, env, t.lay, seed=seed + k)
        spent = 0.0
        acc = per_env.setdefault(label, {"knobs": h.base.short(), "instances": 0, "seconds": 0.0, "weak": 0})
        while spent < share - 1e-9 and used < limit - 1e-9:
            r = h.run(min(CHUNK_S, share - spent, limit - used))
            w = t.judge(r)
            spent += r.seconds
            used += r.seconds
            instances += r.instances
            checksum &= r.checksum_ok
            acc["instances"] += r.instances
            acc["seconds"] = round(acc["seconds"] + r.seconds, 3)
            acc["weak"] += w
            if w and first is None:  # the configuration that showed it (Env.random_config: the last drawn)
                first, first_env, first_knobs = used, label, r.configs[-1][0] if r.configs else None
                break
        del h
        k += 1
    return {"test": t.name, "holds": t.model["holds"], "first_s": None if first is None else round(first, 3),
            "first_env": first_env, "first_knobs": first_knobs, "replay_s": round(used, 3),
            "instances": instances,
            "checksum_ok": checksum, "envs": per_env, "violations": t.violation_rows()}


def cmd_run(a) -> None:
    tests, _ = _load(a)
    plan = parse_plan(auto_plan(a.plan) if a.plan.startswith("auto:") else a.plan)
    print(f"compiled in {precompile(tests, [e for _, e, _ in plan], a.jobs):.1f} s", flush=True)
    t_end = time.perf_counter() + a.deadline
    done = set(read_runs(a.out)) if a.append and Path(a.out).exists() else set()
    with open(a.out, "a" if a.append else "w") as f:
        for t in tests:
            if t.name in done:
                continue
            if time.perf_counter() > t_end:
                print("deadline: stopping", flush=True)
                break
            row = hunt_one(t, plan, a.limit, a.seed)
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{t.name}: first {row['first_s']} s ({row['first_env']}), {row['instances']:.3g} inst, "
                  f"violations {len(row['violations'])}", flush=True)


def _rows(path: str) -> list[dict]:
    """A run file's rows: JSON lines, or the committed JSON (its ``runs``)."""
    text = Path(path).read_text()
    if path.endswith(".json"):
        return json.loads(text)["runs"]
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


def read_runs(paths: str) -> dict[str, dict]:
    """Several run files: per test, the row that saw the weak outcome soonest (else the last)."""
    out: dict[str, dict] = {}
    for p in paths.split(","):
        for r in _rows(p):
            old = out.get(r["test"])
            sooner = r["first_s"] is not None and (old is None or old["first_s"] is None
                                                   or r["first_s"] < old["first_s"])
            if old is None or sooner:
                out[r["test"]] = r
    return out


def coverage_rows(runner: dict[str, dict[str, bool]], manifest: list[dict], runs: dict[str, dict],
                  gpu: str = "h100", key=lambda m: m["family"]) -> list[dict]:
    """Per group: tests the runner saw weak on ``gpu``, how many of them ptxmm ran, and how many it
    saw within 1 s / 5 s of replay per test; violations over every test ptxmm ran."""
    rows: dict[str, dict] = {}
    for m in manifest:
        g = key(m)
        r = rows.setdefault(g, {"group": g, "runner_seen": 0, "ran": 0, "within_1s": 0, "within_5s": 0,
                                "violations": 0, "missed": []})
        run = runs.get(m["name"])
        if run is not None:
            r["violations"] += len(run["violations"])
        if not runner.get(m["name"], {}).get(gpu):
            continue
        r["runner_seen"] += 1
        if run is None:
            continue
        r["ran"] += 1
        f = run["first_s"]
        r["within_1s"] += f is not None and f <= 1.0
        r["within_5s"] += f is not None and f <= 5.0
        if f is None or f > 5.0:
            r["missed"].append(m["name"])
    return list(rows.values())


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f} %" if b else "—"


def coverage_md(rows: list[dict], first: str = "family") -> str:
    lines = [f"| {first} | runner saw (H100) | ran | seen ≤ 1 s | share ≤ 1 s | seen ≤ 5 s | share ≤ 5 s | "
             "violations |", "|---|---|---|---|---|---|---|---|"]
    tot = {k: 0 for k in ("runner_seen", "ran", "within_1s", "within_5s", "violations")}
    for r in rows:
        for k in tot:
            tot[k] += r[k]
        lines.append(f"| {r['group']} | {r['runner_seen']} | {r['ran']} | {r['within_1s']} | "
                     f"{_pct(r['within_1s'], r['runner_seen'])} | {r['within_5s']} | "
                     f"{_pct(r['within_5s'], r['runner_seen'])} | {r['violations']} |")
    lines.append(f"| **all** | {tot['runner_seen']} | {tot['ran']} | {tot['within_1s']} | "
                 f"**{_pct(tot['within_1s'], tot['runner_seen'])}** | {tot['within_5s']} | "
                 f"**{_pct(tot['within_5s'], tot['runner_seen'])}** | {tot['violations']} |")
    return "\n".join(lines) + "\n"


def cmd_table(a) -> None:
    runner = rf.read_runner_results(Path(a.results))
    manifest = json.loads(Path(a.manifest).read_text())
    runs = read_runs(a.runs)
    text = coverage_md(coverage_rows(runner, manifest, runs))
    hard = coverage_rows(runner, manifest, runs, key=lambda m: "block-scope fences between device-scope "
                         "accesses, 2-4 CTAs" if rf.block_fences_between_device_accesses(m) else "the rest")
    text += "\n" + coverage_md(hard, "group")
    missed = [n for r in coverage_rows(runner, manifest, runs) for n in r["missed"]]
    text += "\nSeen by the runner, not by ptxmm within 5 s:\n\n" + "".join(f"- `{n}`\n" for n in missed)
    if a.out:
        Path(a.out).write_text(text)
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("allowed")
    p.add_argument("dir")
    p.add_argument("--tests", required=True)
    p.add_argument("--out", required=True)
    for name in ("explore", "run"):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("--tests", required=True)
        p.add_argument("--allowed", required=True)
        p.add_argument("--out", required=True)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--jobs", type=int, default=16)
        p.add_argument("--deadline", type=float, default=1e9, help="wall seconds, then stop")
        if name == "explore":
            p.add_argument("--envs", required=True)
            p.add_argument("--seconds", type=float, default=0.5)
        else:
            p.add_argument("--plan", required=True)
            p.add_argument("--limit", type=float, default=5.0)
            p.add_argument("--append", action="store_true")
    p = sub.add_parser("table")
    p.add_argument("results")
    p.add_argument("manifest")
    p.add_argument("runs")
    p.add_argument("--out", default=None)
    a = ap.parse_args()
    {"allowed": cmd_allowed, "explore": cmd_explore, "run": cmd_run, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    main()
