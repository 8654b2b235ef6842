"""The litmus families of the public CUDA runner (reeselevine/cuda-litmus, PLDI'26 set) as ptxmm tests.

    python benchmarks/device/runner_families.py gen OUT_DIR [--only NAMES_FILE]

writes one ``.ptx`` per runner test (1,306: IRIW, ISA2, RWC, WRC, WWC, WRW+2W, 2+2W, 3.2W, Z6.3 and
the paper's two examples) and ``manifest.json``. A runner test is named
``{family}_TB_{placement}_SCOPE_{BLOCK|DEVICE}_{FENCE_SCOPE_{BLOCK|DEVICE}|NO_FENCE}_{VARIANT}``:

* placement: thread numbers grouped by CTA (``TB_01_2``: threads 0 and 1 in one CTA, thread 2 in
  another) -> ``.thread Tk .cta c``;
* SCOPE: the scope of every access (``cuda::atomic<uint, thread_scope_block|device>``) -> ``.cta`` /
  ``.gpu``;
* FENCE_SCOPE: the scope of the variant's fences (``cuda::atomic_thread_fence(order, scope)``);
* VARIANT: which accesses are acquire / release / seq_cst and which threads have a fence.

The runner's kernels are C++ (``cuda::atomic``); what nvcc 13 makes of them in PTX, and so what
the tests here say: a relaxed / acquire / release access is ``ld.relaxed`` / ``ld.acquire`` /
``st.relaxed`` / ``st.release`` at the access scope; a seq_cst store is ``fence.sc.S;
st.relaxed.S``, a seq_cst load ``fence.sc.S; ld.acquire.S``; a fence is ``fence.acq_rel`` (or
``fence.sc`` where the kernel asks for seq_cst) at the fence scope. The families below are written
from the kernels' test bodies (thread numbering and values as there); the weak outcome is each
kernel's ``weak`` bucket, as the ``exists`` condition.

The table of the runner's observations (which tests it saw weak on an H100) is its
``pldi26-output/results.csv``; ``coverage`` compares it with ptxmm's runs
(benchmarks/device/runner_coverage.py)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

# A thread is a tuple of ops: "W loc value [slot]", "R loc reg [slot]", "F slot".
# An access slot takes the variant's order for it (relaxed when the variant does not name it);
# a fence slot is present only when the variant names it ("f1" = fence.acq_rel, "f1=sc" = fence.sc).


@dataclass(frozen=True)
class Family:
    name: str  # the runner's prefix in test names
    shape: str  # herd's name
    threads: tuple[tuple[str, ...], ...]
    weak: str  # the exists condition (ptxmm syntax)
    placements: tuple[str, ...]
    variants: dict[str, str]  # no-fence variants: name -> slot assignments
    fenced: dict[str, str]  # fence variants (each at both fence scopes)
    scopes: tuple[str, ...] = ("DEVICE", "BLOCK")  # access scopes the runner ran


P3 = ("0_1_2", "01_2", "0_12", "1_02", "012")  # the runner's TB_02_1 is named TB_1_02 in its results
P4 = ("0_1_2_3", "01_2_3", "01_23", "0_1_23", "02_1_3", "02_13", "0_2_13", "03_1_2", "03_12",
      "0_12_3", "0_123", "012_3", "023_1", "013_2", "0123")

FAMILIES = (
    Family("iriw", "IRIW",
           (("W x 1",), ("R x r0 a1", "F f1", "R y r1"), ("W y 1",), ("R y r2 a3", "F f3", "R x r3")),
           "T1:%r0 == 1 && T1:%r1 == 0 && T3:%r2 == 1 && T3:%r3 == 0", P4,
           {"RELAXED": "", "ACQUIRE": "a1=acq a3=acq"},
           {"THREAD_1_FENCE": "a3=acq f1", "THREAD_3_FENCE": "a1=acq f3", "BOTH_FENCE": "f1 f3"}),
    Family("isa2", "ISA2",
           (("W x 1", "F f0", "W y 1 s0"), ("R y r0 l1", "F f1", "W z 1 s1"),
            ("R z r1 l2", "F f2", "R x r2")),
           "T1:%r0 == 1 && T2:%r1 == 1 && T2:%r2 == 0", P3,
           {"RELAXED": "", "ACQUIRE": "s0=rel l1=acq l2=acq", "RELEASE": "s0=rel s1=rel l2=acq"},
           {"ALL_FENCE": "f0 f1 f2", "THREAD_0_FENCE_ACQ": "l1=acq l2=acq f0",
            "THREAD_0_FENCE_REL": "s1=rel l2=acq f0", "THREAD_1_FENCE": "s0=rel l2=acq f1",
            "THREAD_2_FENCE_ACQ": "s0=rel l1=acq f2", "THREAD_2_FENCE_REL": "s0=rel s1=rel f2",
            "THREAD_0_1_FENCE": "l2=acq f0 f1", "THREAD_0_2_FENCE_ACQ": "l1=acq f0 f2",
            "THREAD_0_2_FENCE_REL": "s1=rel f0 f2", "THREAD_1_2_FENCE": "s0=rel f1 f2"}),
    Family("rwc", "RWC",
           (("W x 1",), ("R x r0 l1", "F f1", "R y r1"), ("W y 1 s2", "F f2", "R x r2 l2")),
           "T1:%r0 == 1 && T1:%r1 == 0 && T2:%r2 == 0", P3,
           {"RELAXED": "", "STORE_SC": "l1=acq s2=sc", "LOAD_SC": "l1=acq l2=sc"},
           {"BOTH_FENCE": "f1 f2=sc", "THREAD_1_FENCE_STORE_SC": "s2=sc f1",
            "THREAD_1_FENCE_LOAD_SC": "l2=sc f1", "THREAD_2_FENCE": "l1=acq f2=sc"}),
    Family("wrc", "WRC",
           (("W x 1",), ("R x r0 l1", "F f1", "W y 1 s1"), ("R y r1 l2", "F f2", "R x r2")),
           "T1:%r0 == 1 && T2:%r1 == 1 && T2:%r2 == 0", P3,
           {"RELAXED": "", "ACQUIRE": "l1=acq l2=acq", "RELEASE": "s1=rel l2=acq"},
           {"BOTH_FENCE": "f1 f2", "THREAD_1_FENCE": "l2=acq f1", "THREAD_2_FENCE_ACQ": "l1=acq f2",
            "THREAD_2_FENCE_REL": "s1=rel f2"}),
    Family("wwc", "WWC",
           (("W x 2",), ("R x r0 l1", "F f1", "W y 1 s1"), ("R y r1 l2", "F f2", "W x 1 s2")),
           "T1:%r0 == 2 && T2:%r1 == 1 && x == 2", P3,
           {"RELAXED": "", "ACQ_REL": "l1=acq s2=rel", "ACQ_ACQ": "l1=acq l2=acq",
            "REL_ACQ": "s1=rel l2=acq", "REL_REL": "s1=rel s2=rel"},
           {"BOTH_FENCE": "f1 f2", "THREAD_1_FENCE_ACQ": "l2=acq f1", "THREAD_1_FENCE_REL": "s2=rel f1",
            "THREAD_2_FENCE_ACQ": "l1=acq f2", "THREAD_2_FENCE_REL": "s1=rel f2"}),
    Family("wrw_2w", "WRW+2W",
           (("W x 2",), ("R x r0 l1", "F f1", "W y 1 s1"), ("W y 2", "F f2", "W x 1 s2")),
           "T1:%r0 == 2 && x == 2 && y == 2", P3,
           {"RELAXED": "", "ACQUIRE": "l1=acq s2=rel", "RELEASE": "s1=rel s2=rel"},
           {"BOTH_FENCE": "f1 f2", "THREAD_1_FENCE": "s2=rel f1", "THREAD_2_FENCE_ACQ": "l1=acq f2",
            "THREAD_2_FENCE_REL": "s1=rel f2"}),
    Family("two_2w", "2+2W",
           (("W x 1", "F f0", "W y 2 s0"), ("W y 1", "F f1", "W x 2 s1")),
           "x == 1 && y == 1", ("0_1", "01"),
           {"RELAXED": "", "RELEASE": "s0=rel s1=rel"},
           {"BOTH_FENCE": "f0 f1", "FENCE_0": "s1=rel f0", "FENCE_1": "s0=rel f1"}),
    Family("three_2w", "3.2W",
           (("W x 2", "F f0", "W y 1 s0"), ("W y 2", "F f1", "W z 1 s1"), ("W z 2", "F f2", "W x 1 s2")),
           "x == 2 && y == 2 && z == 2", P3,
           {"RELAXED": "", "RELEASE": "s0=rel s1=rel s2=rel"},
           {"ALL_FENCE": "f0 f1 f2", "FENCE_0": "s1=rel s2=rel f0", "FENCE_1": "s0=rel s2=rel f1",
            "FENCE_2": "s0=rel s1=rel f2", "FENCE_01": "s2=rel f0 f1", "FENCE_02": "s1=rel f0 f2",
            "FENCE_12": "s0=rel f1 f2"}),
    Family("z6_3", "Z6.3",
           (("W x 1", "F f0", "W y 1 s0"), ("W y 2", "F f1", "W z 1 s1"), ("R z r0 l2", "F f2", "R x r1")),
           "y == 2 && T2:%r0 == 1 && T2:%r1 == 0", P3,
           {"RELAXED": "", "ACQ_REL": "s0=rel s1=rel l2=acq"},
           {"ALL_FENCE": "f0 f1 f2", "FENCE_0": "s1=rel l2=acq f0", "FENCE_1": "s0=rel l2=acq f1",
            "FENCE_2": "s0=rel s1=rel f2", "FENCE_01": "l2=acq f0 f1", "FENCE_02": "s1=rel f0 f2",
            "FENCE_12": "s0=rel f1 f2"}),
    # the paper's examples: every load the slot "l", every store "s"; the fences as the kernels
    # place them (thread 0's before its first store, thread 2's before its first store)
    Family("paper_example1", "paper example 1",
           (("F f0", "W x 1 s", "W y 1 s"), ("R y r0 l", "F f1", "W z 1 s"), ("F f2", "W z 2 s", "W a 1 s"),
            ("R a r1 l", "R x r2 l")),
           "T1:%r0 == 1 && z == 2 && T3:%r1 == 1 && T3:%r2 == 0", ("0_1_2_3",),
           {"RELAXED": "", "DISALLOWED": "l=acq s=rel f0=sc f1=sc f2=sc"}, {}, ("DEVICE",)),
    Family("paper_example2", "paper example 2",
           (("F f0", "W x 1 s", "W y 1 s"), ("R y r0 l", "F f1", "R z r1 l"), ("F f2", "W z 1 s", "W a 1 s"),
            ("R a r2 l", "R x r3 l")),
           "T1:%r0 == 1 && T1:%r1 == 0 && T3:%r2 == 1 && T3:%r3 == 0", ("0_1_2_3",),
           {"RELAXED": "", "DISALLOWED": "l=acq s=rel f0=sc f1=sc f2=sc"}, {}, ("DEVICE",)),
)
SCOPES = {"BLOCK": "cta", "DEVICE": "gpu"}
# the paper examples' DISALLOWED variant names its fences without a FENCE_SCOPE: litmus.cuh then
# uses system scope
NO_FENCE_SCOPE = "sys"


@dataclass(frozen=True)
class RunnerTest:
    family: Family
    placement: str  # "01_2"
    scope: str  # BLOCK | DEVICE
    fence_scope: str | None  # BLOCK | DEVICE, None for NO_FENCE
    variant: str

    @property
    def name(self) -> str:
        fs = f"FENCE_SCOPE_{self.fence_scope}" if self.fence_scope else "NO_FENCE"
        return f"{self.family.name}_TB_{self.placement}_SCOPE_{self.scope}_{fs}_{self.variant}"

    @property
    def ctas(self) -> dict[int, int]:
        """Thread number -> CTA."""
        return {int(t): c for c, group in enumerate(self.placement.split("_")) for t in group}

    @property
    def assignments(self) -> dict[str, str]:
        spec = (self.family.fenced if self.fence_scope else self.family.variants)[self.variant]
        out = {}
        for item in spec.split():
            slot, _, val = item.partition("=")
            out[slot] = val or "acq_rel"
        return out


def tests(families: tuple[Family, ...] = FAMILIES) -> list[RunnerTest]:
    """Every runner test, in the runner's order: family, placement, scope, no-fence variants, then
    fence scope x fence variants."""
    out = []
    for f in families:
        for tb in f.placements:
            for scope in f.scopes:
                out += [RunnerTest(f, tb, scope, None, v) for v in f.variants]
                for fs in ("BLOCK", "DEVICE"):
                    out += [RunnerTest(f, tb, scope, fs, v) for v in f.fenced]
    return out


_LOAD = {"": "relaxed", "acq": "acquire", "sc": "acquire"}
_STORE = {"": "relaxed", "rel": "release", "sc": "relaxed"}


def _op(op: str, t: RunnerTest) -> list[str]:
    a = t.assignments
    sc = SCOPES[t.scope]
    parts = op.split()
    if parts[0] == "F":
        if parts[1] not in a:
            return []
        fscope = SCOPES[t.fence_scope] if t.fence_scope else NO_FENCE_SCOPE
        return [f"fence.{a[parts[1]]}.{fscope};"]
    kind, loc, x = parts[:3]
    order = a.get(parts[3], "") if len(parts) > 3 else ""
    pre = [f"fence.sc.{sc};"] if order == "sc" else []
    if kind == "W":
        return pre + [f"st.{_STORE[order]}.{sc}.global.u32 [{loc}], {x};"]
    return pre + [f"ld.{_LOAD[order]}.{sc}.global.u32 %{x}, [{loc}];"]


def render(t: RunnerTest) -> str:
    f = t.family
    locs = sorted({op.split()[1] for th in f.threads for op in th if not op.startswith("F")})
    lines = [f"// generated by benchmarks/device/runner_families.py: the public CUDA runner's {t.name}",
             f'.test {t.name} "{f.shape} {t.placement} {t.scope.lower()}-scope accesses, '
             f'{t.fence_scope.lower() + "-scope fences" if t.fence_scope else "no fence"}, {t.variant}"']
    lines += [f".global .u32 {loc} = 0;" for loc in locs] + [""]
    ctas = t.ctas
    for k, th in enumerate(f.threads):
        lines.append(f".thread T{k} .cta {ctas[k]} {{")
        lines += ["    " + s for op in th for s in _op(op, t)]
        lines.append("}")
    lines.append(f"exists ({f.weak})")
    return "\n".join(lines) + "\n"


def manifest_row(t: RunnerTest) -> dict:
    ctas = t.ctas
    fences = sum(1 for s in t.assignments if s.startswith("f"))
    return {"name": t.name, "file": f"{t.name}.ptx", "family": t.family.shape, "placement": t.placement,
            "ctas": len(set(ctas.values())), "scope": t.scope, "fence_scope": t.fence_scope,
            "variant": t.variant, "fences": fences}


def block_fences_between_device_accesses(row: dict) -> bool:
    """The issue's hard group: device-scope accesses with block-scope fences between them, threads
    over two or more CTAs."""
    return row["scope"] == "DEVICE" and row["fence_scope"] == "BLOCK" and row["ctas"] > 1


def generate(out: Path, only: set[str] | None = None) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for t in tests():
        if only is not None and t.name not in only:
            continue
        (out / f"{t.name}.ptx").write_text(render(t))
        rows.append(manifest_row(t))
    (out / "manifest.json").write_text(json.dumps(rows, indent=1))
    return rows


def read_runner_results(path: Path) -> dict[str, dict[str, bool]]:
    """The runner's results.csv: test -> {gpu: seen}."""
    lines = path.read_text().splitlines()
    head = lines[0].split(",")
    gpus = [h for h in head if h in ("a100", "h100", "gh200")]
    out = {}
    for ln in lines[1:]:
        cells = dict(zip(head, ln.split(",")))
        out[cells["test"]] = {g: cells[g] == "seen" for g in gpus}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["gen"])
    ap.add_argument("out")
    ap.add_argument("--only", default=None, help="a file of test names, one per line")
    a = ap.parse_args()
    only = set(Path(a.only).read_text().split()) if a.only else None
    rows = generate(Path(a.out), only)
    print(f"{len(rows)} runner tests written to {a.out}")


if __name__ == "__main__":
    main()
