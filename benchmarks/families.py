"""Litmus families for device coverage: shapes x access qualifiers x fences x placement, as .ptx.

    python benchmarks/families.py OUT_DIR [--per-family N] [--seed S]
    python benchmarks/families.py coverage CROSSVAL_JSON MANIFEST_JSON [HUNT_JSON] [--out MD]

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


def _row(key: str) -> dict:
    return {"family": key, "variants": 0, "ran": 0, "allowed": 0, "seen": 0, "hunted": 0,
            "forbidden": 0, "violations": 0, "missed": []}


def coverage(xval: dict, manifest: list[dict], hunted: dict | None = None,
             by: str = "family") -> list[dict]:
    """Per family (or per ``kind_of`` with by="kind"): variants, ran, weak outcome allowed by the
    model, seen within the run's budget, and found later by ``crossval --hunt`` (``hunted``: that
    run's JSON over the missed variants)."""
    by_name = {m["name"]: m for m in manifest}
    later = {t.get("name"): t for t in (hunted or {}).get("tests", [])}
    rows: dict[str, dict] = {}
    for m in manifest:
        rows.setdefault(m["family"] if by == "family" else kind_of(m), _row(""))
    for t in xval["tests"]:
        m = by_name.get(t.get("name", ""))
        if m is None or t.get("status") != "ran":
            continue
        r = rows[m["family"] if by == "family" else kind_of(m)]
        r["variants"] += 1
        r["ran"] += 1
        r["violations"] += t["violations"]
        if not t["condition_holds_in_model"]:
            r["forbidden"] += 1
            continue
        r["allowed"] += 1
        if t["condition_instances"]:
            r["seen"] += 1
        elif _weak_seen(later.get(m["name"])):
            r["hunted"] += 1
        else:
            r["missed"].append(f"{m['name']} ({m['tag']})")
    for k, r in rows.items():
        r["family"] = k
    return list(rows.values())


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
    ap.add_argument("--header", default="# Coverage of the generated families")
    a = ap.parse_args()
    if a.args[0] == "coverage":
        xval = json.loads(Path(a.args[1]).read_text())
        manifest = json.loads(Path(a.args[2]).read_text())
        hunted = json.loads(Path(a.args[3]).read_text()) if len(a.args) > 3 else None
        text = coverage_md(coverage(xval, manifest, hunted), a.header)
        kinds = coverage(xval, manifest, hunted, by="kind")
        text += "\n" + coverage_md(kinds, "By placement and local ordering:", "kind")
        text += "\nAllowed, seen neither within 1 s nor by the hunt:\n\n" + missed_md(kinds)
        if a.out:
            Path(a.out).write_text(text)
        print(text)
        return
    man = generate(Path(a.args[0]), a.per_family, a.seed)
    print(f"{len(man)} variants written to {a.args[0]}")


if __name__ == "__main__":
    main()
