"""Litmus families for device coverage: shapes x access qualifiers x fences x placement, as .ptx
(``ptxmm gen --families N``; tools/families.py reads the GPU's coverage of them).

Shapes: MP, SB, LB, IRIW, ISA2, RWC, WRC, WWC, 2+2W, 3.2W, Z6.3, WRW+2W (herd's definitions, each
with its weak outcome as the ``exists`` condition). Per variant, each access is relaxed, acquire
(loads) or release (stores) at ``.cta`` or ``.gpu``, each gap between two accesses of a thread holds
no fence or fence.acq_rel / fence.sc at ``.cta`` or ``.gpu``, and the threads are spread over 1 to 4
CTAs (at most one CTA per thread). Every variant uses only .cta/.gpu relaxed/acquire/release/fence
operations. The sample is deterministic (``seed``): the first variant of each family is all
relaxed .gpu with one thread per CTA, the rest are drawn at random."""

from __future__ import annotations

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
    lines = [f"// generated by ptxmm gen --families: {v.tag()}",
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


def generate(out: Path, per_family: int, seed: int, may_write=None) -> list[dict]:
    """Write the sample's tests and manifest.json into ``out``; ``may_write(path, text)`` is asked
    before each file is written (it raises to refuse)."""
    may_write = may_write or (lambda path, text: None)
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    counts: dict[str, int] = {}
    for v in sample(per_family, seed):
        i = counts[v.shape.name] = counts.get(v.shape.name, -1) + 1
        stem = _file_name(v.shape.name, i)
        name = f"{v.shape.name}-{i:02d}"
        text = render(v, name)
        may_write(out / f"{stem}.ptx", text)
        (out / f"{stem}.ptx").write_text(text)
        manifest.append({"name": name, "file": f"{stem}.ptx", "family": v.shape.name, "tag": v.tag(),
                         "ctas": v.n_ctas,
                         "fences": sum(f is not None for fs in v.fences for f in fs)})
    text = json.dumps(manifest, indent=1)
    may_write(out / "manifest.json", text)
    (out / "manifest.json").write_text(text)
    return manifest
