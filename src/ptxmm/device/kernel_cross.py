"""``ptxmm crossval KERNEL.cu|.ptx``: a kernel's final states on the GPU against the model's.

A batch may mix litmus tests and kernels: :func:`plan_files` plans litmus files as the litmus
crossval does (:func:`.batch.plan`) and kernel files with :mod:`.kernel_plan` (each a
:class:`KernelJob`, or a Skip row with its reason: a compile error, a kernel the model lets hang,
...), in the order given; :func:`with_kernels` makes the crossval campaign run and report both.

Verdicts per observed final state (values of every buffer element, an out-of-bounds write, failed
assertions): ``ok`` (the model allows it); ``VIOLATION`` (the model forbids the state, or the
assertion failure, or the out-of-bounds write); ``beyond-bound`` (a state the model's set lacks,
but the check cut loops at ``--unroll``, so the set may be incomplete); ``undefined`` (the model
lets the kernel access out of bounds, after which its behaviour is undefined); allowed states never
seen are ``unseen``. Assertion failures are judged as a whole: the model allows one or not (which
states an assertion failure may end in is not asked)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..errors import PtxmmError, UnsupportedError
from ..semantics.result import Outcome
from .batch import COMPILE, DEVICE_UNSUPPORTED, INTERNAL, MODEL, PARSE, TIMEOUT, UNSUPPORTED, Job, Skip
from .build import CompileTimeout
from .env import Env
from .kernel_plan import FREE, ON_DEVICE, KernelPlan, assemble, is_kernel_file, kernel_ptx, plan_kernel
from .kernel_run import KernelEnv, KernelRun


@dataclass
class KernelJob(Job):
    """A kernel ready to run: planned, its PTX assembled (``cubin``)."""

    kplan: KernelPlan | None = None


@dataclass
class KRow:
    values: tuple[int, ...]
    oob: bool
    asserts: bool  # some thread of the instance failed an assertion
    allowed: bool  # the model allows this state with these assertion failures and writes
    count: int
    satisfies: bool | None
    verdict: str  # ok | unseen | VIOLATION | beyond-bound | undefined


@dataclass
class KernelCross:
    plan: KernelPlan
    run: KernelRun
    rows: list[KRow] = field(default_factory=list)

    @property
    def violations(self) -> list[KRow]:
        return [r for r in self.rows if r.verdict == "VIOLATION"]

    @property
    def assert_instances(self) -> int:
        return sum(r.count for r in self.rows if r.asserts)

    @property
    def oob_instances(self) -> int:
        return sum(r.count for r in self.rows if r.oob)

    @property
    def condition_instances(self) -> int:
        return sum(r.count for r in self.rows if r.satisfies)

    @property
    def allowed_seen(self) -> int:
        """Allowed states (values) seen at least once."""
        p = self.plan
        return len({p.masked(r.values) for r in self.rows if r.count and p.masked(r.values) in p.allowed})

    @property
    def unseen(self) -> list[KRow]:
        return [r for r in self.rows if r.verdict == "unseen"]

    def bug(self) -> dict | None:
        """A broken kernel (its `expect` line names a finding): is its bug seen on the device?"""
        info = self.plan.prog.kernel
        if not info.expect:
            return None
        seen = {"assert-fails": self.assert_instances, "out-of-bounds": self.oob_instances}
        counts = {k: seen[k] for k in info.expect if k in seen}
        cond = self.plan.prog.condition
        if cond is not None and cond.quantifier == "exists":
            counts["condition"] = self.condition_instances
        return {"expect": list(info.expect), "observed": any(counts.values()), "instances": counts}

    def to_json(self) -> dict:
        p, run = self.plan, self.run
        cond = p.prog.condition
        return {
            "name": p.prog.name, "file": p.prog.file, "kind": "kernel", "launch": p.launch,
            "model": p.check.model, "device": run.device, "env": run.env.as_dict(),
            "instances": run.instances, "seconds": round(run.seconds, 4), "instances_per_s": round(run.per_s),
            "checksum_ok": run.checksum_ok, "gpus": p.gpus, "elements": list(p.elements),
            "not_compared": [e for k, e in enumerate(p.elements) if k in p.free],
            "allowed_states": len(p.allowed),
            "observed_states": len({r.values for r in self.rows if r.count}),
            "allowed_states_seen": self.allowed_seen,
            "unseen_states": len(self.unseen), "cut_paths": p.check.cut_paths,
            "assert_failures": {"allowed": p.assert_allowed, "instances": self.assert_instances},
            "out_of_bounds_writes": {"allowed": p.oob_allowed, "instances": self.oob_instances},
            "condition": None if cond is None else {"quantifier": cond.quantifier,
                                                    "holds_in_model": p.check.holds,
                                                    "instances": self.condition_instances},
            "bug": self.bug(), "violations": len(self.violations),
            "states": [{"values": {e: None if v == FREE else v
                                   for e, v in zip(p.elements, p.typed(r.values))},
                        "assert_failed": r.asserts,
                        "oob_write": r.oob, "allowed": r.allowed, "count": r.count, "satisfies": r.satisfies,
                        "verdict": r.verdict} for r in self.rows],
        } | ({"rank_args": [list(p.describe(g)) for g in range(p.gpus)]} if p.gpus > 1 else {})


# ----- judging ----------------------------------------------------------------------------------------

def judge(plan: KernelPlan, run: KernelRun) -> KernelCross:
    """Every observed state with its verdict, then the allowed states never seen."""
    sat = _satisfies(plan)
    merged: dict[tuple, int] = {}
    for st, c in run.states.items():
        k = (st.values, st.oob, st.asserts > 0)
        merged[k] = merged.get(k, 0) + c
    rows = []
    for (v, oob, a), c in sorted(merged.items(), key=lambda x: -x[1]):
        verdict = _verdict(plan, v, oob, a)
        rows.append(KRow(v, oob, a, verdict == "ok", c, sat(v), verdict))
    seen = {plan.masked(r.values) for r in rows}
    rows += [KRow(v, False, False, True, 0, sat(v), "unseen") for v in sorted(plan.allowed - seen)]
    return KernelCross(plan, run, rows)


def _verdict(plan: KernelPlan, values: tuple[int, ...], oob: bool, asserts: bool) -> str:
    values_ok = plan.masked(values) in plan.allowed
    flags_ok = (not asserts or plan.assert_allowed) and (not oob or plan.oob_allowed)
    if values_ok and flags_ok:
        return "ok"
    if plan.oob_allowed:  # what follows an access out of bounds is undefined (reads are not seen)
        return "undefined"
    if flags_ok and plan.check.cut_paths:
        return "beyond-bound"
    return "VIOLATION"


def _satisfies(plan: KernelPlan) -> Callable[[tuple[int, ...]], bool | None]:
    prog = plan.prog
    if prog.condition is None:
        return lambda v: None
    from ..semantics.builder import build
    from ..semantics.outcomes import satisfies

    eg = build(prog, unroll=0)

    def sat(values: tuple[int, ...]) -> bool | None:
        try:
            return satisfies(prog, eg, Outcome(tuple(zip(plan.elements, plan.typed(values)))))
        except KeyError:
            return None

    return sat


# ----- planning a batch ---------------------------------------------------------------------------

def plan_kernel_file(path: Path, model: str, unroll: int, kernel=None,
                     compile_timeout: float = 300.0, allow_undecided: bool = False,
                     allow_hang: bool = False) -> KernelJob | Skip:
    """Load, model-check, plan and assemble one kernel file, or say why not (a row)."""
    from .. import load
    from ..kernel.nvcc import CompileError

    try:
        prog = load(path, kernel=kernel)
        ptx = kernel_ptx(path, kernel.nvcc_flags if kernel is not None else None)
    except CompileError as e:
        return Skip.of(path, COMPILE, e)
    except UnsupportedError as e:
        return Skip.of(path, UNSUPPORTED, e)
    except PtxmmError as e:
        return Skip.of(path, PARSE, e)
    except Exception as e:  # a ptxmm bug must not end the batch
        return Skip.of(path, INTERNAL, e)
    try:
        kp = plan_kernel(prog, ptx, model, unroll, allow_undecided, allow_hang)
    except UnsupportedError as e:
        return Skip.of(path, DEVICE_UNSUPPORTED if ON_DEVICE in e.message else UNSUPPORTED, e)
    except PtxmmError as e:
        return Skip.of(path, MODEL, e)
    except Exception as e:
        return Skip.of(path, INTERNAL, e)
    try:
        cubin = assemble(kp.ptx, compile_timeout)
    except CompileTimeout as e:
        return Skip.of(path, TIMEOUT, e)
    except PtxmmError as e:
        return Skip.of(path, COMPILE, e)
    return KernelJob(path, prog, None, cubin, kp.check, kplan=kp)  # type: ignore[arg-type]


def plan_files(paths: list[Path], model: str | None, unroll: int = 2, *, kernel=None,
               progress: Callable[[str], None] | None = None, allow_undecided: bool = False,
               allow_hang: bool = False) -> list:
    """Every file as a Job, a KernelJob or a Skip, in the order given."""
    from .batch import plan

    kinds = [is_kernel_file(Path(p)) for p in paths]
    litmus = iter(plan([p for p, k in zip(paths, kinds) if not k], model, unroll, progress=progress))
    out = []
    for p, k in zip(paths, kinds):
        if not k:
            out.append(next(litmus))
            continue
        if progress:
            progress(f"planning kernel {Path(p).name}")
        out.append(plan_kernel_file(Path(p), model or "ptx", unroll, kernel,
                                    allow_undecided=allow_undecided, allow_hang=allow_hang))
    return out


# ----- the campaign ---------------------------------------------------------------------------------

def run_kernel(job: KernelJob, env: Env, budget: float, iterations: int | None, timeout: float,
               instances: int = 1024, lanes: int = 32) -> KernelCross | Skip:
    """Run one planned kernel in a process of its own (:func:`.kernel_run.run_isolated`) and judge
    it; a kernel that hangs on the device is a ``timeout`` row (a Skip) and the batch goes on. A
    launch on N GPUs (:mod:`.kernel_ranks`) needs N GPUs with peer access between every pair,
    else it is a row saying what was found; it runs ``MULTI_LANES`` instances at once."""
    from .batch import NO_DEVICE
    from .kernel_ranks import MULTI_LANES, peer_error, rank_child
    from .kernel_run import KernelHung, run_isolated

    more = {}
    if job.kplan.ranks:  # a launch `on N gpus`
        more["target"] = rank_child
        why = peer_error(job.kplan.gpus, job.prog.kernel.launch.gpus_pos)
        if why is not None:
            return Skip.of(job.file, NO_DEVICE, why)
        lanes = min(lanes, MULTI_LANES)
    kenv = KernelEnv.of(env, instances, lanes)
    rounds = None if iterations is None else max(1, -(-iterations // kenv.instances))
    try:
        run = run_isolated(job.kplan, kenv, budget, rounds, timeout, job.cubin, **more)
    except KernelHung as e:
        liveness = job.kplan.check.liveness
        why = (f"{e.message}, though the model says every execution ends ({liveness}, progress "
               f"{job.kplan.check.progress_model}): a liveness disagreement" if liveness == "terminates"
               else e.message)
        if job.kplan.check.liveness == "hangs":
            why += " (the model lets it hang: --allow-hang)"
        return Skip(str(job.file), TIMEOUT, why, None, e.hint)
    return judge(job.kplan, run)


def with_kernels(c, env_for: Callable, budget: float, iterations: int | None, timeout: float,
                 console: Console, kernel=None, allow_undecided: bool = False, allow_hang: bool = False):
    """The crossval campaign ``c`` (commands.Campaign) also planning, running and reporting kernels."""

    def run_one(job):
        if isinstance(job, KernelJob):
            return run_kernel(job, env_for(job.prog), budget, iterations, timeout)
        return c.run_one(job)

    def render(r) -> None:
        if isinstance(r, Skip):  # a kernel that hung: its row is in the "not run" table
            return
        if isinstance(r, KernelCross):
            render_kernel(r, console)
            console.print()
        else:
            c.render(r)

    def pick(kernel_f: Callable, other: Callable | None, skip=None) -> Callable:
        def f(r):
            if isinstance(r, Skip):
                return skip
            return kernel_f(r) if isinstance(r, KernelCross) else other(r)

        return f

    def planner(paths, model, unroll, progress=None):
        return plan_files(paths, model, unroll, kernel=kernel, progress=progress,
                          allow_undecided=allow_undecided, allow_hang=allow_hang)

    measure = pick(lambda r: (r.run.instances, r.run.seconds), c.measure or (lambda r: (0, 0.0)), (0, 0.0))
    return replace(c, run_one=run_one, render=render, to_json=pick(KernelCross.to_json, c.to_json),
                   violations=pick(lambda r: len(r.violations), c.violations, 0), measure=measure,
                   planner=planner)


# ----- the report -------------------------------------------------------------------------------------

def _state(plan: KernelPlan, values: tuple[int, ...]) -> str:
    return " ".join(f"{n}={'?' if v == FREE else v}" for n, v in zip(plan.elements, plan.typed(values)))


def render_kernel(kc: KernelCross, console: Console) -> None:
    p, run = kc.plan, kc.run
    n = run.instances
    console.print(f"[bold]{p.prog.name}[/bold]  ({p.prog.file})  {p.launch}  model {p.check.model}, "
                  f"{run.device}")
    console.print(f"  {run.env.short()};  {n:,} instances in {run.seconds:.2f} s = {run.per_s:,.0f}/s")
    for g in range(p.gpus if p.gpus > 1 else 0):
        console.print(f"  rank {g} on GPU {g}: ({', '.join(p.describe(g))})", markup=False, highlight=False)
    t = Table("final state", "assert", "oob", "model", "observed", "rate", "cond", "verdict", box=None)
    for r in kc.rows:
        style = {"VIOLATION": "bold red", "unseen": "dim", "beyond-bound": "yellow",
                 "undefined": "yellow"}.get(r.verdict, "")
        t.add_row(_state(p, r.values), "failed" if r.asserts else "", "write" if r.oob else "",
                  "allowed" if r.allowed else "forbidden", f"{r.count:,}",
                  f"{r.count / n:.2e}" if r.count and n else "0",
                  "" if r.satisfies is None else ("✓" if r.satisfies else ""),
                  f"[{style}]{r.verdict}[/{style}]" if style else r.verdict)
    console.print(t)
    console.print(f"  {kc.allowed_seen} of {len(p.allowed)} allowed state(s) seen; assertion failures: "
                  f"{kc.assert_instances:,} instance(s) (model: "
                  f"{'allowed' if p.assert_allowed else 'forbidden'}); "
                  f"out-of-bounds writes: {kc.oob_instances:,} (model: "
                  f"{'allowed' if p.oob_allowed else 'forbidden'})")
    if p.free:
        console.print(f"  not compared: {', '.join(e for k, e in enumerate(p.elements) if k in p.free)} "
                      "(the model says it may hold a value the PTX ISA leaves unspecified: ? above)")
    if kc.unseen and n:
        console.print(f"  {len(kc.unseen)} allowed state(s) unseen: rate < {3 / n:.1e} (95 % bound); "
                      "allowed-but-unseen is not a failure")
    bug = kc.bug()
    if bug is not None:
        what = ", ".join(f"{k} {v:,}" for k, v in bug["instances"].items()) or "nothing observable"
        seen = "observed" if bug["observed"] else "not observed"
        console.print(f"  bug ({', '.join(bug['expect'])}): {seen}"
                      f" ({what} in {n:,} instances; reproducibility "
                      f"{1 - math.exp(-max(bug['instances'].values(), default=0)):.3f})")
    for r in kc.violations:
        console.print(f"[bold red]VIOLATION[/bold red] {p.prog.name}: observed {_state(p, r.values)}"
                      f"{' with an assertion failure' if r.asserts else ''}"
                      f"{' with an out-of-bounds write' if r.oob else ''} {r.count:,} times; "
                      "the model forbids it")
    if not run.checksum_ok:
        console.print("[bold red]histogram total differs from the instance count[/bold red]")
