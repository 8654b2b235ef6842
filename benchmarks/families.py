"""Litmus families for device coverage: shapes x access qualifiers x fences x placement, as .ptx.

    python benchmarks/families.py OUT_DIR [--per-family N] [--seed S]
    python benchmarks/families.py coverage XVAL[,..] MANIFEST [HUNT[,..]] [--sass DIR] [--out MD]
    python benchmarks/families.py unseen CROSSVAL_JSON   (files whose allowed weak outcome was not seen)

Shapes: MP, SB, LB, IRIW, ISA2, RWC, WRC, WWC, 2+2W, 3.2W, Z6.3, WRW+2W (herd's definitions, each
with its weak outcome as the ``exists`` condition). Per variant, each access is relaxed, acquire
(loads) or release (stores) at ``.cta`` or ``.gpu``, each gap between two accesses of a thread holds
no fence or fence.acq_rel / fence.sc at ``.cta`` or ``.gpu``, and the threads are spread over 1 to 4
CTAs (at most one CTA per thread). Every variant uses only .cta/.gpu relaxed/acquire/release/fence
operations. The sample is deterministic (``--seed``): the first variant of each family is all
relaxed .gpu with one thread per CTA, the rest are drawn at random.

``coverage`` reads ``ptxmm crossval FAMILIES --json`` and the manifest, and writes the per-family
table: variants whose weak outcome the model allows, and how many of them the GPU showed."""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path

# an access: ("W", loc, value) or ("R", loc, register); a shape: threads of accesses + condition
Access = tuple[str, str, object]


@dataclass(frozen=True)
class Shape:
    name: str
    threads: tuple[tuple[Access, ...], ...]
    exists: str


def _w(loc: str, v: int) -> Access:
    return ("W", loc, v)


def _r(loc: str, reg: str) -> Access:
    return ("R", loc, reg)


SHAPES = [
    Shape("MP", ((_w("x", 1), _w("y", 1)), (_r("y", "%r0"), _r("x", "%r1"))),
          "T1:%r0 == 1 && T1:%r1 == 0"),
    Shape("SB", ((_w("x", 1), _r("y", "%r0")), (_w("y", 1), _r("x", "%r1"))),
          "T0:%r0 == 0 && T1:%r1 == 0"),
    Shape("LB", ((_r("x", "%r0"), _w("y", 1)), (_r("y", "%r1"), _w("x", 1))),
          "T0:%r0 == 1 && T1:%r1 == 1"),
    Shape("IRIW", ((_w("x", 1),), (_w("y", 1),), (_r("x", "%r0"), _r("y", "%r1")),
                   (_r("y", "%r2"), _r("x", "%r3"))),
          "T2:%r0 == 1 && T2:%r1 == 0 && T3:%r2 == 1 && T3:%r3 == 0"),
    Shape("ISA2", ((_w("x", 1), _w("y", 1)), (_r("y", "%r0"), _w("z", 1)),
                   (_r("z", "%r1"), _r("x", "%r2"))),
          "T1:%r0 == 1 && T2:%r1 == 1 && T2:%r2 == 0"),
    Shape("RWC", ((_w("x", 1),), (_r("x", "%r0"), _r("y", "%r1")), (_w("y", 1), _r("x", "%r2"))),
          "T1:%r0 == 1 && T1:%r1 == 0 && T2:%r2 == 0"),
    Shape("WRC", ((_w("x", 1),), (_r("x", "%r0"), _w("y", 1)), (_r("y", "%r1"), _r("x", "%r2"))),
          "T1:%r0 == 1 && T2:%r1 == 1 && T2:%r2 == 0"),
    Shape("WWC", ((_w("x", 2),), (_r("x", "%r0"), _w("y", 1)), (_r("y", "%r1"), _w("x", 1))),
          "T1:%r0 == 2 && T2:%r1 == 1 && x == 2"),
    Shape("2+2W", ((_w("x", 1), _w("y", 2)), (_w("y", 1), _w("x", 2))), "x == 1 && y == 1"),
    Shape("3.2W", ((_w("x", 2), _w("y", 1)), (_w("y", 2), _w("z", 1)), (_w("z", 2), _w("x", 1))),
          "x == 2 && y == 2 && z == 2"),
    Shape("Z6.3", ((_w("x", 1), _w("y", 1)), (_w("y", 2), _w("z", 1)), (_r("z", "%r0"), _r("x", "%r1"))),
          "y == 2 && T2:%r0 == 1 && T2:%r1 == 0"),
    Shape("WRW+2W", ((_w("x", 2),), (_r("x", "%r0"), _w("y", 1)), (_w("y", 2), _w("x", 1))),
          "T1:%r0 == 2 && y == 2 && x == 2"),
]

SCOPES = ("cta", "gpu")
FENCES = (None, "acq_rel", "sc")
ABBREV = {"relaxed": "rlx", "acquire": "acq", "release": "rel"}


@dataclass(frozen=True)
class Variant:
    shape: Shape
    sems: tuple[tuple[tuple[str, str], ...], ...]  # per thread, per access: (sem, scope)
    fences: tuple[tuple[tuple[str, str] | None, ...], ...]  # per thread, per gap: (kind, scope)
    ctas: tuple[int, ...]  # per thread

    @property
    def n_ctas(self) -> int:
        return len(set(self.ctas))

    def tag(self) -> str:
        """A compact description: per thread its accesses and fences, then the CTAs."""
        parts = []
        for t, acc in enumerate(self.shape.threads):
            ops = []
            for k, (kind, loc, _) in enumerate(acc):
                sem, sc = self.sems[t][k]
                ops.append(f"{kind}{loc}.{ABBREV[sem]}.{sc}")
                f = self.fences[t][k] if k < len(acc) - 1 else None
                if f:
                    ops.append(f"F.{f[0]}.{f[1]}")
            parts.append(" ".join(ops))
        return " | ".join(parts) + " @ctas " + "".join(map(str, self.ctas))


def _random_variant(shape: Shape, rng: random.Random) -> Variant:
    sems = []
    fences = []
    for acc in shape.threads:
        sems.append(tuple((rng.choice(["relaxed", "acquire" if a[0] == "R" else "release"]),
                           rng.choice(SCOPES)) for a in acc))
        gaps = []
        for _ in range(len(acc) - 1):
            f = rng.choice(FENCES)
            gaps.append(None if f is None else (f, rng.choice(SCOPES)))
        fences.append(tuple(gaps))
    n = len(shape.threads)
    k = rng.randint(1, min(4, n))
    ctas = list(range(k)) + [rng.randrange(k) for _ in range(n - k)]
    rng.shuffle(ctas)
    return Variant(shape, tuple(sems), tuple(fences), _canon(ctas))


def _canon(ctas: list[int]) -> tuple[int, ...]:
    """CTA ids renumbered in order of first use (0, 0, 1, ... )."""
    m: dict[int, int] = {}
    return tuple(m.setdefault(c, len(m)) for c in ctas)


def _baseline(shape: Shape) -> Variant:
    return Variant(shape, tuple(tuple(("relaxed", "gpu") for _ in acc) for acc in shape.threads),
                   tuple(tuple(None for _ in acc[1:]) for acc in shape.threads),
                   tuple(range(len(shape.threads))))


def sample(per_family: int, seed: int) -> list[Variant]:
    """``per_family`` distinct variants of each shape: the baseline, then random ones."""
    rng = random.Random(seed)
    out = []
    for shape in SHAPES:
        vs = [_baseline(shape)]
        tags = {vs[0].tag()}
        tries = 0
        while len(vs) < per_family and tries < 1000:
            v = _random_variant(shape, rng)
            tries += 1
            if v.tag() not in tags:
                tags.add(v.tag())
                vs.append(v)
        out += vs
    return out


def _instr(a: Access, sem: str, scope: str) -> str:
    kind, loc, x = a
    if kind == "W":
        return f"st.{sem}.{scope}.global.u32 [{loc}], {x};"
    return f"ld.{sem}.{scope}.global.u32 {x}, [{loc}];"


def render(v: Variant, name: str) -> str:
    locs = sorted({a[1] for acc in v.shape.threads for a in acc})
    lines = [f"// generated by benchmarks/families.py: {v.tag()}",
             f'.test {name} "{v.shape.name}: {v.tag()}"']
    lines += [f".global .u32 {loc} = 0;" for loc in locs]
    lines.append("")
    for t, acc in enumerate(v.shape.threads):
        lines.append(f".thread T{t} .cta {v.ctas[t]} {{")
        for k, a in enumerate(acc):
            lines.append("    " + _instr(a, *v.sems[t][k]))
            f = v.fences[t][k] if k < len(acc) - 1 else None
            if f:
                lines.append(f"    fence.{f[0]}.{f[1]};")
        lines.append("}")
    lines.append(f"exists ({v.shape.exists})")
    return "\n".join(lines) + "\n"


def _file_name(shape: str, i: int) -> str:
    return f"{shape.replace('+', 'p').replace('.', '_')}-{i:02d}"


def generate(out: Path, per_family: int, seed: int) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    counts: dict[str, int] = {}
    for v in sample(per_family, seed):
        i = counts[v.shape.name] = counts.get(v.shape.name, -1) + 1
        stem = _file_name(v.shape.name, i)
        name = f"{v.shape.name}-{i:02d}"
        (out / f"{stem}.ptx").write_text(render(v, name))
        manifest.append({"name": name, "file": f"{stem}.ptx", "family": v.shape.name, "tag": v.tag(),
                         "ctas": v.n_ctas,
                         "fences": sum(f is not None for fs in v.fences for f in fs)})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def locally_ordered(tag: str) -> bool:
    """Every thread with two accesses has a fence (any scope) between them, or an acquire first
    read, or a release second write: each thread's pair is ordered in hardware terms, and only the
    scope of that ordering can make the model allow the weak outcome."""
    for th in tag.split(" @ctas")[0].split(" | "):
        ops = th.split()
        if len(ops) < 2 or any(o.startswith("F.") for o in ops):
            continue
        a, b = ops[0], ops[1]
        if not (a.startswith("R") and ".acq." in a or b.startswith("W") and ".rel." in b):
            return False
    return True


def kind_of(m: dict) -> str:
    if m["ctas"] == 1:
        return "one CTA"
    return "across CTAs, locally ordered" if locally_ordered(m["tag"]) else "across CTAs, not ordered"


def _weak_seen(t: dict | None) -> bool:
    """The condition seen in the test's run or found by its hunt."""
    if t is None or t.get("status") != "ran":
        return False
    hunt = t.get("hunt") or {}
    return bool(t["condition_instances"]) or any(o["satisfies"] and o["status"] == "found"
                                                 for o in hunt.get("outcomes", []))


GPU_ORDERED = ("membar.gpu", "load-wait")  # sass.Gap.kind values that order a pair at .gpu


def hw_class(m: dict, gaps: list[list[str]]) -> str:
    """What the machine code leaves unordered, and where: ``gaps[t]`` is the ``sass.Gap.kind`` of
    each gap of thread t (its audit kernel). A pair is weakly ordered when no MEMBAR.*.GPU sits
    between its accesses and the second does not wait for the first (a load's) value."""
    if m["ctas"] == 1:
        return "one CTA"
    ctas = [int(c) for c in m["tag"].split("@ctas ")[1]]
    weak = [t for t, g in enumerate(gaps) if any(k not in GPU_ORDERED for k in g)]
    if not weak:
        return "across CTAs, every pair ordered at .gpu in SASS"
    if any(ctas.count(ctas[t]) == 1 for t in weak):
        return "across CTAs, a weakly ordered thread alone in its CTA"
    return "across CTAs, weakly ordered threads share a CTA"


def sass_gaps(fam: Path, manifest: list[dict]) -> dict[str, list[list[str]]]:
    """Per variant, per thread, the kinds of its gaps (needs nvcc and cuobjdump)."""
    import ptxmm
    from ptxmm.device import sass
    from ptxmm.device.build import compile_cubin
    from ptxmm.device.codegen import generate
    from ptxmm.device.layout import make_layout

    out = {}
    for m in manifest:
        prog = ptxmm.load(fam / m["file"])
        cubin = compile_cubin(generate(make_layout(prog)))
        out[m["name"]] = [[g.kind for g in r] for r in sass.role_gaps(cubin, len(prog.threads))]
    return out


def _row(key: str) -> dict:
    return {"family": key, "variants": 0, "ran": 0, "allowed": 0, "seen": 0, "hunted": 0,
            "forbidden": 0, "violations": 0, "missed": []}


def _key(m: dict, by: str, gaps: dict | None) -> str:
    if by == "family":
        return m["family"]
    return hw_class(m, gaps[m["name"]]) if by == "hw" and gaps else kind_of(m)


def coverage(xval: dict, manifest: list[dict], hunted: dict | None = None,
             by: str = "family", gaps: dict | None = None) -> list[dict]:
    """Per family (or per ``kind_of`` with by="kind", per ``hw_class`` with by="hw" and ``gaps``):
    variants, ran, weak outcome allowed by the model, seen within the run's budget, and found later
    by ``crossval --hunt`` (``hunted``: that run's JSON over the missed variants). Tests are matched
    by name, or by file name for rows that did not run."""
    by_name = {m["name"]: m for m in manifest}
    by_file = {Path(m["file"]).name: m for m in manifest}
    later = {_name(t, by_file): t for t in (hunted or {}).get("tests", [])}
    rows: dict[str, dict] = {}
    for m in manifest:
        rows.setdefault(_key(m, by, gaps), _row(""))
    for t in xval["tests"]:
        m = by_name.get(_name(t, by_file))
        if m is None or t.get("status") != "ran":
            continue
        r = rows[_key(m, by, gaps)]
        r["variants"] += 1
        r["ran"] += 1
        r["violations"] += t["violations"]
        if not t["condition_holds_in_model"]:
            r["forbidden"] += 1
            continue
        r["allowed"] += 1
        if _weak_seen(t):  # in the run, or by its own hunt (both inside the per-test budget)
            r["seen"] += 1
        elif _weak_seen(later.get(m["name"])):
            r["hunted"] += 1
        else:
            r["missed"].append(f"{m['name']} ({m['tag']})")
    for k, r in rows.items():
        r["family"] = k
    return list(rows.values())


def _name(t: dict, by_file: dict) -> str:
    if t.get("name"):
        return t["name"]
    m = by_file.get(Path(t.get("file", "")).name)
    return m["name"] if m else ""


def merge(runs: list[dict], union: bool = True) -> dict:
    """Several crossval JSONs as one: per test (by file), the first row that ran; with ``union``
    its weak outcome counts as seen if any run saw it (the condition count summed)."""
    out: dict[str, dict] = {}
    for run in runs:
        for t in run["tests"]:
            k = Path(t.get("file", "")).name
            if k not in out or out[k].get("status") != "ran":
                out[k] = t
            elif union and t.get("status") == "ran" and _weak_seen(t) and not _weak_seen(out[k]):
                out[k] = out[k] | {"hunt": t.get("hunt") or {}, "condition_instances":
                                   out[k]["condition_instances"] + t["condition_instances"]}
    return {"tests": list(out.values())}


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f} %" if b else "—"


def coverage_md(rows: list[dict], header: str, first: str = "family") -> str:
    lines = [header, "", f"| {first} | variants | weak allowed | seen within 1 s | coverage | "
             "+ found by --hunt | with hunt | weak forbidden | violations |",
             "|---|---|---|---|---|---|---|---|---|"]
    tot = {k: 0 for k in ("variants", "allowed", "seen", "hunted", "forbidden", "violations")}
    for r in rows:
        for k in tot:
            tot[k] += r[k]
        lines.append(f"| {r['family']} | {r['variants']} | {r['allowed']} | {r['seen']} | "
                     f"{_pct(r['seen'], r['allowed'])} | {r['hunted']} | "
                     f"{_pct(r['seen'] + r['hunted'], r['allowed'])} | {r['forbidden']} | "
                     f"{r['violations']} |")
    lines.append(f"| **all** | {tot['variants']} | {tot['allowed']} | {tot['seen']} | "
                 f"**{_pct(tot['seen'], tot['allowed'])}** | {tot['hunted']} | "
                 f"**{_pct(tot['seen'] + tot['hunted'], tot['allowed'])}** | {tot['forbidden']} | "
                 f"{tot['violations']} |")
    return "\n".join(lines) + "\n"


def missed_md(rows: list[dict]) -> str:
    out = ["| variant | kind |", "|---|---|"]
    for r in rows:
        out += [f"| `{x.replace(' | ', ' ∥ ')}` | {r['family']} |" for x in r["missed"]]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("args", nargs="+")
    ap.add_argument("--per-family", type=int, default=12)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", default=None)
    ap.add_argument("--sass", default=None, help="coverage: the families' directory; classify the "
                    "variants by what their SASS leaves unordered (needs nvcc and cuobjdump)")
    ap.add_argument("--header", default="# Coverage of the generated families")
    a = ap.parse_args()
    if a.args[0] == "unseen":
        for t in json.loads(Path(a.args[1]).read_text())["tests"]:
            if t.get("status") == "ran" and t["condition_holds_in_model"] and not _weak_seen(t):
                print(t["file"])
        return
    if a.args[0] == "coverage":
        def runs(arg: str, union: bool) -> dict:
            return merge([json.loads(Path(f).read_text()) for f in arg.split(",")], union)

        xval = runs(a.args[1], False)  # a test's row from the first file that ran it
        manifest = json.loads(Path(a.args[2]).read_text())
        hunted = runs(a.args[3], True) if len(a.args) > 3 else None
        gaps = sass_gaps(Path(a.sass), manifest) if a.sass else None
        text = coverage_md(coverage(xval, manifest, hunted), a.header)
        by = "hw" if gaps else "kind"
        kinds = coverage(xval, manifest, hunted, by=by, gaps=gaps)
        first = "what the SASS leaves unordered, and where" if gaps else "kind"
        text += "\n" + coverage_md(kinds, "By placement and machine-code ordering:", first)
        text += "\nAllowed, seen neither within 1 s nor by the hunt:\n\n" + missed_md(kinds)
        if a.out:
            Path(a.out).write_text(text)
        print(text)
        return
    man = generate(Path(a.args[0]), a.per_family, a.seed)
    print(f"{len(man)} variants written to {a.args[0]}")


if __name__ == "__main__":
    main()
