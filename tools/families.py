"""Coverage of the litmus families on a GPU (the generator is in the product: ``ptxmm gen --families``,
src/ptxmm/campaigns/families.py).

    python tools/families.py OUT_DIR [--per-family N] [--seed S]   (= ptxmm gen --families N -o OUT_DIR)
    python tools/families.py coverage XVAL[,..] MANIFEST [HUNT[,..]] [--sass DIR] [--out MD]
    python tools/families.py unseen CROSSVAL_JSON   (files whose allowed weak outcome was not seen)

``coverage`` reads ``ptxmm crossval FAMILIES --json`` and the manifest, and writes the per-family
table: variants whose weak outcome the model allows, and how many of them the GPU showed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ptxmm.campaigns.families import (  # noqa: F401  (the generator, re-exported for its users)
    ABBREV,
    FENCES,
    SCOPES,
    SHAPES,
    Shape,
    Variant,
    generate,
    render,
    sample,
)


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
