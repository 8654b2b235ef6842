"""`ptxmm gen`, `ptxmm diff`, and the streaming `ptxmm test --jsonl` (cli.py adds them when named)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from ..api_args import UNROLL_MAX
from ..errors import PtxmmError
from .common import _fail
from .outputs import gen_may_write, output_file


def _gen_options(f):
    opts = [
        click.option("--size", type=click.IntRange(2, 12), default=4, show_default=True,
                     help="longest cycle, in edges (diy7's -size)"),
        click.option("--relax", default=None, help="relaxations: every cycle has one (default: the "
                     "PTX set, docs/campaigns.md)"),
        click.option("--safe", default=None, help="safe edges (default: Rfe Fre Coe)"),
        click.option("--cycle", "cycles", multiple=True,
                     help='one cycle, e.g. "Rfe PodRR Fre PodWW" (diyone7); repeatable'),
        click.option("--nprocs", type=click.IntRange(2, 8), default=4, show_default=True,
                     help="at most this many threads"),
        click.option("--sems", default="relaxed", show_default=True,
                     help="semantics crossed on unannotated accesses: weak,relaxed,acquire,release"),
        click.option("--scopes", default="gpu", show_default=True,
                     help="scopes crossed on unannotated accesses: cta,cluster,gpu,sys"),
        click.option("--proxies", default="", show_default=True,
                     help="also crossed on unannotated accesses, as weak accesses through a proxy "
                     "alias: alias,texture,surface,constant (texture and constant: loads only)"),
        click.option("--placement", type=click.Choice(["cta", "same-cta", "all", "cluster"]),
                     default="cta", show_default=True,
                     help="cta: one CTA per thread; same-cta; all: every grouping into CTAs; "
                     "cluster: and every grouping of those CTAs into clusters"),
        click.option("--limit", type=click.IntRange(1), default=None, help="stop after N tests"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def gen_options(size, relax, safe, cycles, nprocs, sems, scopes, proxies, placement, limit):
    from ..campaigns.edges import DEFAULT_RELAX, DEFAULT_SAFE
    from ..campaigns.gen import GenOptions

    return GenOptions(size=size, relax=relax if relax is not None else DEFAULT_RELAX,
                      safe=safe if safe is not None else DEFAULT_SAFE, cycles=tuple(cycles),
                      nprocs=nprocs, sems=tuple(s for s in sems.split(",") if s),
                      scopes=tuple(s for s in scopes.split(",") if s), placement=placement,
                      limit=limit, proxies=tuple(p for p in proxies.split(",") if p))


@click.command()
@_gen_options
@click.option("--format", "fmt", type=click.Choice(["ptx", "litmus", "herd"]), default="ptx",
              show_default=True, help="herd: LISA for herd7 -model sc.cat (SC comparisons only)")
@click.option("-o", "--out", default=None, help="write one file per test into this folder "
              "(default: list the names and cycles)")
@click.option("--families", "per_family", type=click.IntRange(1), default=None,
              help="instead: the device-coverage families, N variants each (shape x scope x fence "
              "x placement)")
@click.option("--seed", type=int, default=14, show_default=True, help="--families' sample")
@click.option("--force", is_flag=True, help="with -o: overwrite files there that ptxmm gen did not "
              "write (by default they are refused: docs/campaigns.md)")
def gen(size, relax, safe, cycles, nprocs, sems, scopes, proxies, placement, limit, fmt, out, per_family,
        seed, force) -> None:
    """Litmus tests from cycles of relaxations (diy7 for PTX): every cycle of at most --size edges
    with a relaxation, as a test whose condition observes the cycle; each once up to symmetry."""
    from . import conflicts

    conflicts.gen_families(per_family)
    conflicts.gen_cycles(cycles)
    conflicts.refuse([] if out else conflicts.given("force"), "without -o (it overwrites files there)")
    t0 = time.perf_counter()
    try:
        if per_family is not None:
            _families(out, per_family, seed, force)
            return
        from ..campaigns.edges import EdgeError
        from ..campaigns.gen import generate

        opts = gen_options(size, relax, safe, cycles, nprocs, sems, scopes, proxies, placement, limit)
        n, skipped = 0, 0
        if out:
            _out_folder(out)
        for g in generate(opts):
            try:
                text = g.text(fmt)
            except EdgeError as e:
                skipped += 1
                if skipped == 1:
                    click.echo(f"{g.name}: {str(e).splitlines()[0]} (skipped)", err=True)
                continue
            n += 1
            if out:
                path = Path(out) / f"{g.name}.{'ptx' if fmt == 'ptx' else 'litmus'}"
                gen_may_write(out, path, text, force)
                path.write_text(text)
            else:
                click.echo(f"{g.name}: {g.test.cycle}")
    except PtxmmError as e:
        _fail(e)
    skip = f", {skipped} skipped (no {fmt} spelling)" if skipped else ""
    click.echo(f"{n} tests{skip} in {time.perf_counter() - t0:.2f} s" + (f" → {out}" if out else ""),
               err=True)


def _out_folder(out: str) -> None:
    """``gen -o``'s folder, made where missing; a path that cannot be one is a usage error."""
    from ..errors import ArgumentError

    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        probe = Path(out) / ".ptxmm-gen-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ArgumentError(f"-o {out}: not a folder tests can be written to "
                            f"({e.strerror or e})", None,
                            "give a folder (made if missing), or leave -o out to list the tests") from None


def _families(out: str | None, per_family: int, seed: int, force: bool) -> None:
    from ..campaigns.families import generate, sample

    if out is None:
        for v in sample(per_family, seed):
            click.echo(f"{v.shape.name}: {v.tag()}")
        return
    _out_folder(out)
    man = generate(Path(out), per_family, seed, lambda p, text: gen_may_write(out, p, text, force))
    click.echo(f"{len(man)} variants written to {out} (manifest.json)", err=True)


# ----- inputs shared by diff and the streaming test ------------------------------------------------


def _items(paths, gen_opts, fmt: str = "ptx"):
    """A maker of fresh streams of the work items (paths or generated tests)."""
    from ..campaigns.stream import file_items, gen_items

    if gen_opts is not None:
        return lambda: gen_items(gen_opts, fmt)
    return lambda: file_items(paths)


def _stream(make, fn, out: Path | None, resume: bool, jobs, dask, progress: bool, on_row,
            head: dict, stamp: dict, batch: int = 8) -> tuple[int, bool]:
    """Run ``fn`` over the items ``make()`` streams, skipping those ``out`` has (--resume; its
    header must be ``head``); each row, with ``stamp`` (the model), goes to ``out`` and
    ``on_row``. Returns (rows written, interrupted)."""
    from ..campaigns.executors import run
    from ..campaigns.stream import JsonLines, Progress, done_keys

    done = done_keys(out, head) if (resume and out is not None) else set()
    total = already = 0
    for it in make():  # a first pass counts (nothing is kept)
        total += 1
        already += it.key in done
    if jobs:  # never more workers than tests to run
        jobs = max(1, min(jobs, total - already))
    prog = Progress(total, force=progress)
    prog.resume_from(already)
    items = (it for it in make() if it.key not in done)
    writer = JsonLines(out, resume, head, stamp)
    n, stopped = 0, False
    try:
        for rows in run(fn, items, jobs, dask, batch):
            for r in rows:
                r = stamp | r
                writer.write(r)
                on_row(r)
                n += 1
            prog.step(len(rows))
    except KeyboardInterrupt:
        stopped = True
    finally:
        writer.close()
        prog.close()
    return n, stopped


def _stream_options(f):
    opts = [
        click.option("--jobs", "-j", type=click.IntRange(1), default=None,
                     help="worker processes (default: cores; at most one per test)"),
        click.option("--dask", "dask", default=None, metavar="ADDRESS",
                     help="run on this Dask scheduler (tcp://host:8786; needs ptxmm[dask])"),
        click.option("--resume", is_flag=True, help="skip the tests already in --jsonl's file"),
        click.option("--show-progress", "progress", is_flag=True,
                     help="show progress also when not on a terminal"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@click.command()
@click.argument("m1")
@click.argument("m2")
@click.argument("paths", nargs=-1)
@click.option("--gen", "use_gen", is_flag=True, help="diff over generated tests (the gen options)")
@_gen_options
@click.option("--unroll", type=click.IntRange(0, UNROLL_MAX), default=2, show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="seconds per check; past it the verdict is unknown")
@click.option("--jsonl", "jsonl", default=None, help="write one JSON line per test as it finishes")
@_stream_options
@click.option("--explain/--no-explain", default=True, show_default=True,
              help="explain each listed test in both models")
@click.option("--json", "as_json", default=None, help="write the summary and listed tests as JSON")
def diff(m1, m2, paths, use_gen, size, relax, safe, cycles, nprocs, sems, scopes, proxies, placement, limit,
         unroll, timeout, jsonl, jobs, dask, resume, progress, explain, as_json) -> None:
    """The tests whose condition verdict differs between models M1 and M2 (names from
    `ptxmm models`, or .cat paths), over PATHS (test files, folders, list files) or --gen: in each
    direction, smallest first, one per shape, each explained in both models."""
    from functools import partial

    from ..campaigns.diff import DiffSummary, explain_both, smallest_per_shape
    from ..campaigns.work import verdicts
    from . import conflicts

    if not paths and not use_gen:
        raise click.UsageError("give PATHS or --gen")
    conflicts.diff_inputs(paths, use_gen)
    conflicts.gen_cycles(cycles)
    output_file("--json", as_json)
    if resume and not jsonl:
        raise click.UsageError("--resume needs --jsonl FILE (the tests already done are read there)")
    t0 = time.perf_counter()
    summary = DiffSummary(m1, m2)
    try:
        from ..cat.parser import load_model

        load_model(m1), load_model(m2)  # a wrong name fails here, once
        opts = gen_options(size, relax, safe, cycles, nprocs, sems, scopes, proxies, placement, limit) \
            if use_gen else None
        make = _items(paths, opts)
        kept: dict[str, object] = {}

        def on_row(r):
            summary.add(r, None)
            if "error" not in r and r[m1] is not None and r[m2] is not None and r[m1] != r[m2]:
                kept[r["key"]] = r

        fn = partial(verdicts, models=(m1, m2), unroll=unroll, timeout=timeout)
        from ..campaigns.stream import header

        models = {"models": [m1, m2]}
        _, stopped = _stream(make, fn, Path(jsonl) if jsonl else None, resume, jobs, dask,
                             progress, on_row, header("diff", **models, unroll=unroll), models)
        if resume and jsonl:  # the rows of the earlier run count too
            summary = _summary_from(Path(jsonl), m1, m2, kept)
        items = {it.key: it for it in make() if it.key in kept}
        for k, r in kept.items():
            (summary.only1 if r[m1] else summary.only2).append((r, items[k]))
        sel1, sel2 = smallest_per_shape(summary.only1), smallest_per_shape(summary.only2)
        if explain:
            sel1, sel2 = explain_both(sel1, m1, m2, unroll), explain_both(sel2, m1, m2, unroll)
        else:
            sel1, sel2 = [r for r, _ in sel1], [r for r, _ in sel2]
    except PtxmmError as e:
        _fail(e)
    _diff_report(summary, sel1, sel2, time.perf_counter() - t0, explain)
    if as_json:
        Path(as_json).write_text(json.dumps({"summary": summary.to_json(), "holds_only_in_m1": sel1,
                                             "holds_only_in_m2": sel2}, indent=1))
    sys.exit(2 if stopped or summary.errors else 1 if (sel1 or sel2) else 0)


def _summary_from(out: Path, m1: str, m2: str, kept: dict):
    from ..campaigns.diff import DiffSummary
    from ..campaigns.stream import rows

    s = DiffSummary(m1, m2)
    for r in rows(out):
        s.add(r, None)
        if "error" not in r and r.get(m1) is not None and r.get(m2) is not None and r[m1] != r[m2]:
            kept[r["key"]] = r
    return s


def _diff_report(s, sel1, sel2, wall: float, explained: bool) -> None:
    click.echo(f"{s.total} tests: {s.same} same verdict, {len(s.only1)} hold only under {s.m1}, "
               f"{len(s.only2)} only under {s.m2}, {s.unknown} unknown, {s.errors} errors "
               f"({wall:.1f} s)")
    for title, sel in ((f"condition holds under {s.m1}, not under {s.m2}", sel1),
                       (f"condition holds under {s.m2}, not under {s.m1}", sel2)):
        click.echo(f"\n== {title}: {len(sel)} shape(s), smallest first")
        for r in sel:
            click.echo(f"  {r['name']}  ({r['family']}, size {r['size']})  {r.get('file') or ''}")
            for x in r.get("explain", []):
                ax = ", ".join(x.get("axioms", [])) or "—"
                click.echo(f"    {x['model']}: {x['verdict']}" +
                           (f" — violates {ax}" if x["verdict"] == "forbidden" else ""))


# ----- ptxmm test --jsonl ----------------------------------------------------------------------------


def stream_test(paths, model: str, unroll: int, jobs, timeout, jsonl: str | None, resume: bool,
                dask: str | None, progress: bool = False, expected_csv: str | None = None,
                column: str | None = None) -> None:
    """``ptxmm test`` streaming its inputs: one JSON line per test as it finishes (--jsonl),
    --resume, progress, local processes or --dask. Exit status as ``ptxmm test``'s."""
    from functools import partial

    from ..campaigns.work import test_rows

    counts: dict[str, int] = {}

    def on_row(r):
        counts[r["status"]] = counts.get(r["status"], 0) + 1

    if resume and not jsonl:
        raise click.UsageError("--resume needs --jsonl FILE (the tests already done are read there)")
    t0 = time.perf_counter()
    try:
        from ..testing.runner import _default_column, read_expected

        expected = read_expected(expected_csv, column or _default_column(expected_csv, model)) \
            if expected_csv else None
        make = _items(paths, None)
        fn = partial(test_rows, model=model, unroll=unroll, timeout=timeout, expected=expected)
        from ..campaigns.stream import header

        n, stopped = _stream(make, fn, Path(jsonl) if jsonl else None, resume, jobs, dask,
                             progress, on_row, header("test", model=model, unroll=unroll),
                             {"model": model})
    except PtxmmError as e:
        _fail(e)
    wall = time.perf_counter() - t0
    parts = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    click.echo(f"{n} tests run ({parts or 'none'}; model {model}) in {wall:.1f} s, "
               f"{n / wall if wall else 0:.1f} tests/s" + (" — interrupted" if stopped else ""))
    failed = any(k not in ("agree", "unrated", "DISAGREE") for k in counts) or stopped
    sys.exit(1 if counts.get("DISAGREE") else 2 if failed else 0)


# ----- ptxmm crossval --jsonl ------------------------------------------------------------------------


def stream_crossval(camp, files, jsonl: str | None, resume: bool, progress: bool, json_out: str | None,
                    pre, console, err) -> None:
    """``ptxmm crossval`` streaming its inputs (campaigns/devstream.py): one JSON line per test as it
    finishes, --resume, progress. Exit status as ``crossval``'s: 1 on a violation, else 2 if a test
    could not run or the run was cut short, else 0."""
    from ..campaigns.devstream import stream_campaign

    if not jsonl:
        raise click.UsageError("--resume needs --jsonl FILE (the tests already done are read there)")
    if json_out:
        raise click.UsageError("--json writes one document at the end: with --jsonl, leave it out")
    dev = camp.ready() if camp.ready else None
    if dev is not None:
        err.print(str(dev), markup=False, highlight=False)
        sys.exit(2)
    try:
        self_violations = pre() if pre else 0
        res = stream_campaign(camp, files, Path(jsonl), resume, progress, plan_fn=camp.planner)
    except PtxmmError as e:
        _fail(e)
    res.violations += self_violations
    console.print(res.summary_line("cross-validated"))
    if res.hung:  # after a hung kernel the CUDA context never drains: leave without CuPy's cleanup
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(res.exit_code())
    sys.exit(res.exit_code())
