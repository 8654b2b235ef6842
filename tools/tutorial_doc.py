"""Generate docs/tutorial.md: the memory-consistency article step by step, with the programs of
examples/teaching/ and what the tool says about each — `ptxmm check`, `ptxmm explain`, a drawing —
and the H100 counts of `ptxmm crossval` (docs/device/teaching-crossval.json, a real run).

    python tools/tutorial_doc.py          # rewrite docs/tutorial.md (and its pictures)
    python tools/tutorial_doc.py --check  # exit 1 when docs/tutorial.md is stale

Every output block is the tool's own output, run here (file names relative, timings removed, so
the text is the same on every machine); tests/docs/test_tutorial_doc.py fails when it is stale."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "tutorial.md"
TEACH = "examples/teaching"
COUNTS = ROOT / "docs" / "device" / "teaching-crossval.json"
PICTURES = {"06-relaxed-store-is-not-release.ptx": "docs/img/teach-06-relaxed-not-release.svg",
            "05-release-acquire-ops.ptx": "docs/img/teach-05-release-acquire.svg"}


@dataclass(frozen=True)
class Step:
    file: str  # in examples/teaching
    text: str  # what the step teaches, in our words (markdown)
    explain: bool = True


@dataclass(frozen=True)
class Section:
    title: str
    intro: str
    steps: tuple[Step, ...]


SECTIONS = (
    Section("The bug", """\
A producer writes data, then a flag; a consumer waits for the flag, then reads the data. With
plain loads and stores nothing orders the two stores *for another thread*, so the consumer can see
the flag and still read the old data. ptxmm lists every outcome the model allows: the stale read
(`T1:%r1=0`) is one of them, and the unsynchronized accesses are a data race.""", (
        Step("01-mp-plain.ptx", "Plain (weak) accesses: the stale read is allowed."),
    )),
    Section("Half a contract is no contract", """\
A release fence on the producer alone, or an acquire fence on the consumer alone, changes
nothing: synchronization needs a *release pattern* on one side whose flag write is read by an
*acquire pattern* on the other (PTX ISA memory consistency model, §8.8 release and acquire
patterns, §8.9.4 synchronizes-with).""", (
        Step("02-release-fence-only.ptx", "`fence.release` before the flag store, but a relaxed flag "
             "load with no `fence.acquire`: still allowed."),
        Step("03-acquire-fence-only.ptx", "`fence.acquire` after the flag load, but no release before "
             "the flag store: still allowed."),
    )),
    Section("The bug, fixed", """\
Both halves together: `fence.release; st.relaxed [flag]` on the producer and
`ld.relaxed [flag]; fence.acquire` on the consumer. When the flag load reads the flag store, the
two patterns synchronize, the data store is causally before the data load, and the stale value is
forbidden. `ptxmm explain` shows the cycle the stale read would need and the axiom it breaks.""", (
        Step("04-both-fences.ptx", "Release pattern + acquire pattern: forbidden."),
    )),
    Section("Shorter forms: st.release and ld.acquire", """\
`st.release` and `ld.acquire` carry the patterns in one instruction each. The warning of the
article is the heart of this tutorial: **`st.relaxed` is not a release** and **`ld.relaxed` is
not an acquire**. A relaxed access is *strong* (it takes part in morally-strong relations, so the
flag value itself is communicated) but it orders nothing else.""", (
        Step("05-release-acquire-ops.ptx", "`st.release` + `ld.acquire`: forbidden."),
        Step("06-relaxed-store-is-not-release.ptx", "`st.relaxed` flag + `ld.acquire`: allowed — "
             "`ptxmm explain` names the missing release and `--fix` proposes the smallest repair."),
        Step("07-relaxed-load-is-not-acquire.ptx", "`st.release` + `ld.relaxed` flag with no fence: "
             "allowed."),
    )),
    Section("When the explicit fences pay off", """\
One `fence.release` followed by several strong flag stores is a release pattern for each of them;
and a consumer can spin with cheap relaxed loads and acquire once, after the loop.""", (
        Step("08-one-fence-two-flags.ptx", "One fence, two flags, two consumers: forbidden."),
        Step("09-relaxed-spin-then-fence-acquire.ptx", "Relaxed spin loop, then one "
             "`fence.acquire`: forbidden."),
    )),
    Section("Both at once: fence.acq_rel and atomics", """\
`fence.acq_rel` is a release fence and an acquire fence at one point; a fence without a semantics
qualifier *is* `fence.acq_rel`. A read-modify-write such as `atom.add.acq_rel` acquires with its
read and releases with its write. A lock needs only acquire to take it and `st.release` to give
it back.""", (
        Step("10-fence-acq-rel-relay.ptx", "A relay thread: acquire what the producer published, "
             "release it onward: forbidden."),
        Step("11-fence-default-is-acq-rel.ptx", "`fence.gpu` is `fence.acq_rel.gpu`: forbidden.",
             explain=False),
        Step("12-work-queue-atom-acq-rel.ptx", "Work-queue index advanced with `atom.add.acq_rel`: "
             "forbidden."),
        Step("13-work-queue-atom-relaxed.ptx", "The same with `atom.add.relaxed`: atomic, but "
             "publishes nothing — allowed."),
        Step("14-lock-acquire-release.ptx", "CAS lock with `atom.acquire.cas` and `st.release`: the "
             "counter always ends at 2.", explain=False),
    )),
    Section("Where the article's picture and the model part ways: fences are not walls", """\
The article pictures fences as one-way walls that stop reordering. The PTX model says something
narrower: release and acquire fences order memory only *through a flag that is read* (a release
pattern synchronizing with an acquire pattern). Two threads that each store, fence with
`fence.acq_rel`, and load the other's location read no flag of each other in the bad outcome — so
nothing synchronizes and both may read 0 (§8.9.4: only a release pattern whose write is observed
by an acquire pattern synchronizes). Only `fence.sc`, whose instances are totally ordered (§8.9.3
Fence-SC order, §8.10.2 the Fence-SC axiom), forbids it.""", (
        Step("19-acq-rel-is-not-a-full-fence.ptx", "Store buffering with `fence.acq_rel`: allowed."),
        Step("20-fence-sc.ptx", "Store buffering with `fence.sc`: forbidden."),
    )),
    Section("Things to remember", """\
The flag write must be a strong operation: a plain `st` after `fence.release` is not a release
pattern. The scope of both operations must include both threads: `.cta` between two CTAs
synchronizes nothing, `.cta` inside one CTA is enough. One thread never needs a fence for its
own same-address reads — *in the generic proxy*: the model departs from the article's "never"
for texture, surface and constant accesses, where even one thread needs a proxy fence (§8.6
proxies; examples/proxy/). The scope rule is the model's *morally strong* relation (§8.7): each
operation's scope must include the other's thread.""", (
        Step("18-weak-flag-store.ptx", "`fence.release` + plain `st` flag: allowed, and a data race."),
        Step("15-scope-too-narrow.ptx", "`.cta` release/acquire between two CTAs: allowed."),
        Step("16-scope-cta-same-cta.ptx", "`.cta` release/acquire inside one CTA: forbidden."),
        Step("17-single-thread-same-address.ptx", "One thread, same address: always 42.",
             explain=False),
    )),
)

_TIME = re.compile(r"\s+time [0-9.]+ ms")


def run(*args: str) -> str:
    """``ptxmm ARGS`` in the repository, stdout and stderr, timings removed."""
    env = dict(os.environ, COLUMNS="160", NO_COLOR="1", TERM="dumb")
    r = subprocess.run([sys.executable, "-m", "ptxmm.cli", *args], cwd=ROOT, capture_output=True,
                       text=True, env=env, timeout=300)
    out = (r.stdout + r.stderr).rstrip()
    return _TIME.sub("", out)


def _program(path: Path) -> str:
    return path.read_text().rstrip()


def _counts() -> tuple[str, dict]:
    """The crossval run's date and device (the first line of its markdown table) and its
    per-test results by file name."""
    if not COUNTS.exists():
        return "", {}
    data = json.loads(COUNTS.read_text())
    by_file = {Path(t["file"]).name: t for t in data.get("tests", [])}
    md = COUNTS.with_suffix(".md")
    head = next((ln.strip("_ ").split(";")[0] for ln in md.read_text().splitlines()
                 if ln.startswith("_")), "") if md.exists() else ""
    return head, by_file


_WORDS = {"exists": ("allowed", "forbidden"), "forall": ("required", "not required"),
          "~exists": ("never happens", "can happen")}


def _verdict_word(step: Step, holds: bool) -> str:
    import ptxmm

    q = ptxmm.load(ROOT / TEACH / step.file).condition.quantifier
    return _WORDS[q][0 if holds else 1]


def _hw_row(step: Step, by_file: dict) -> str:
    t = by_file.get(step.file)
    if t is None or t.get("status") != "ran":
        return f"| {step.file} | | not run | | |"
    return (f"| {step.file} | {_verdict_word(step, t['condition_holds_in_model'])} | "
            f"{t['instances']:,} | {t['condition_instances']:,} | {t['violations']} |")


def _hw_summary(steps: list[Step], by_file: dict) -> list[str]:
    """Which allowed bad outcomes the GPU showed and which it did not (exists tests)."""
    ran = [(s, by_file[s.file]) for s in steps if by_file.get(s.file, {}).get("status") == "ran"]
    mp = [(s, t) for s, t in ran if _verdict_word(s, t["condition_holds_in_model"]) == "allowed"]
    seen = [s.file[:2] for s, t in mp if t["condition_instances"] > 0]
    unseen = [s.file[:2] for s, t in mp if t["condition_instances"] == 0]
    viol = sum(t["violations"] for _, t in ran)
    out = [f"The GPU showed the outcome the model allows in steps {', '.join(seen)}"
           + (f"; it did not show it in steps {', '.join(unseen)}" if unseen else "")
           + f". Violations over all {len(ran)} programs: {viol}."]
    if unseen:
        out.append("An allowed outcome the hardware does not show is not a bug of either: the "
                   "model promises less than this chip does (a longer hunt over placements and "
                   "stress patterns did not find them either: device/hunt.md). Code must not rely "
                   "on it: another GPU, compiler or load may show it.")
    return ["", " ".join(out)]


def render(pictures: bool = False) -> str:
    out = ["# Learn the PTX memory model with ptxmm", "",
           "This tutorial follows the article *Programming Hopper GPUs: The Memory Consistency "
           "Model* step by step. Each claim is a small program in `examples/teaching/`; the blocks "
           "below are what `ptxmm` prints for it (regenerate with "
           "`python tools/tutorial_doc.py`). Run any of them yourself:", "",
           "```sh", "ptxmm check examples/teaching/06-relaxed-store-is-not-release.ptx",
           "ptxmm explain examples/teaching/06-relaxed-store-is-not-release.ptx --fix", "```", ""]
    steps = [s for sec in SECTIONS for s in sec.steps]
    for n, sec in enumerate(SECTIONS, 1):
        out += [f"## {n}. {sec.title}", "", sec.intro, ""]
        for st in sec.steps:
            out += _step(st, pictures)
    head, by_file = _counts()
    out += ["## On an H100", "",
            "`ptxmm crossval examples/teaching` runs every program on the GPU and compares each "
            "observed outcome with the model's: a *violation* would be an outcome the model forbids. "
            "*condition seen* counts the instances whose outcome satisfies the test's condition "
            "(for the message-passing tests: the stale read)."
            + (f" Run: {head}." if head else "")
            + " Every observed outcome per test: [device/teaching-crossval.md]"
              "(device/teaching-crossval.md).", "",
            "| test | condition (model) | instances | condition seen | violations |",
            "|---|---|---|---|---|"]
    out += [_hw_row(s, by_file) for s in steps]
    out += _hw_summary(steps, by_file)
    return "\n".join(out) + "\n"


def _step(st: Step, pictures: bool) -> list[str]:
    path = ROOT / TEACH / st.file
    rel = f"{TEACH}/{st.file}"
    lines = [f"### {st.file}", "", st.text, "", "```ptx", _program(path), "```", "",
             "```console", f"$ ptxmm check {rel}", run("check", rel), "```", ""]
    if st.explain:
        args = ["explain", rel] + (["--fix"] if st.file.startswith("06-") else [])
        lines += ["```console", f"$ ptxmm {' '.join(args)}", run(*args), "```", ""]
    pic = PICTURES.get(st.file)
    if pic:
        if pictures:
            run("graph", rel, "-o", pic)
        lines += [f"![execution of {st.file}]({Path(pic).relative_to('docs').as_posix()})", ""]
    return lines


def main() -> int:
    check = "--check" in sys.argv[1:]
    text = render(pictures=not check)
    if check:
        if not DOC.exists() or DOC.read_text() != text:
            print("docs/tutorial.md is stale: run python tools/tutorial_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
