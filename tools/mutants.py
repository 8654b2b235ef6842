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

Mutants are data: ``Mutant(name, kind, description, patches=[(relative path, old, new), ...])``.
Model mutants edit models/*.cat text; engine mutants edit Python source in src/ptxmm. The engine
patches first targeted the old engine (commit 4a4a59e, where every one was killed) and were
retargeted to Engine 2 with the same meanings; each description states the mutant's *meaning*
(what wrong behaviour it introduces), which is what a later rewrite must re-express. Engine
mutants are collected in ENGINE_MUTANTS, one entry each, near the end of this file; --apply-only
checks that every patch still applies without running pytest.
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
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Mutant:
    name: str
    kind: str  # "model" | "engine"
    description: str
    patches: list[tuple[str, str, str]] = field(default_factory=list)


# ======================================================================================= models
# Every axiom line of each model, dropped one at a time (the text must occur exactly once).

PTX = "models/ptx.cat"
COMMON = "models/ptx-common.cat"
V75 = "models/ptx-v7.5.cat"
V60 = "models/ptx-v6.0.cat"
SC = "models/sc.cat"
PROXY = "models/ptx-proxy.cat"
ASYNC = "models/ptx-async.cat"


def drop(path: str, line: str, name: str, why: str) -> Mutant:
    """Delete one axiom (the whole line, newline included)."""
    return Mutant(name, "model", why, [(path, line + "\n", "\n")])


AXIOM_DROPS = [
    drop(PTX, r"empty ((([W] ; cause ; [W]) & loc) \ co) as Coherence", "ptx-drop-Coherence",
         "ptx.cat: no Coherence axiom (causality need not fix co)"),
    drop(PTX, r"empty ((([W] ; ms ; [W]) & loc) \ (co | co^-1)) as Coherence-ms",
         "ptx-drop-Coherence-ms", "ptx.cat: morally strong overlapping writes need not be co-ordered"),
    drop(PTX, r"empty (rmw & ((fr & ms) ; (co & ms))) as Atomicity", "ptx-drop-Atomicity",
         "ptx.cat: no rmw atomicity"),
    drop(PTX, r"acyclic (rf | dep) as No-Thin-Air", "ptx-drop-No-Thin-Air",
         "ptx.cat: out-of-thin-air values allowed"),
    drop(PTX, r"irreflexive ((rf | fr) ; cause) as Causality", "ptx-drop-Causality",
         "ptx.cat: no Causality axiom"),
    Mutant("ptx-drop-data-race-flag", "model", "ptx.cat: data races are never flagged",
           [(PTX, "flag ~empty (conflict \\ (ms | cause | cause^-1)) as data-race\n", "\n")]),
    drop(V75, r"empty ((([W] ; cause ; [W]) & loc) \ co) as Coherence", "v75-drop-Coherence",
         "ptx-v7.5.cat: no Coherence axiom"),
    drop(V75, r"empty ((([W] ; ms ; [W]) & loc) \ (co | co^-1)) as Coherence-ms",
         "v75-drop-Coherence-ms", "ptx-v7.5.cat: no Coherence-ms axiom"),
    drop(V75, r"empty (rmw & ((fr & ms) ; (co & ms))) as Atomicity", "v75-drop-Atomicity",
         "ptx-v7.5.cat: no rmw atomicity"),
    drop(V75, r"acyclic (rf | dep) as No-Thin-Air", "v75-drop-No-Thin-Air",
         "ptx-v7.5.cat: no No-Thin-Air axiom"),
    drop(V75, r"irreflexive ((rf | fr) ; cause) as Causality", "v75-drop-Causality",
         "ptx-v7.5.cat: no Causality axiom"),
    drop(V60, r"empty ((([W] ; cause ; [W]) & loc) \ co) as Coherence", "v60-drop-Coherence",
         "ptx-v6.0.cat: no Coherence axiom"),
    drop(V60, r"empty ((([W] ; ms ; [W]) & loc) \ (co | co^-1)) as Coherence-ms",
         "v60-drop-Coherence-ms", "ptx-v6.0.cat: no Coherence-ms axiom"),
    drop(V60, r"empty (rmw & ((fr & ms) ; (co & ms))) as Atomicity", "v60-drop-Atomicity",
         "ptx-v6.0.cat: no rmw atomicity"),
    drop(V60, r"acyclic (rf | dep) as No-Thin-Air", "v60-drop-No-Thin-Air",
         "ptx-v6.0.cat: no No-Thin-Air axiom"),
    drop(V60, r"acyclic (((rf | co | fr) & ms) | po-loc) as SC-per-Location",
         "v60-drop-SC-per-Location", "ptx-v6.0.cat: no SC-per-Location axiom"),
    drop(V60, r"irreflexive ((rf | fr) ; cause) as Causality", "v60-drop-Causality",
         "ptx-v6.0.cat: no Causality axiom"),
    drop(SC, r"empty ((((W * W) & loc) \ id) \ (co | co^-1)) as co-total", "sc-drop-co-total",
         "sc.cat: coherence need not be total"),
    drop(SC, r"empty (rmw & (fr ; co)) as Atomicity", "sc-drop-Atomicity",
         "sc.cat: no rmw atomicity"),
]

# Definitions changed (one meaning each).
RELPAT = "let relpat = [Rel] | ([Rel] ; po-loc ; [strong-write]) | ([FRel] ; po ; [strong-write])"
MODEL_EDITS = [
    Mutant("all-scopes-sys", "model",
           "every strong operation behaves as .sys: the scope relation sr holds for any two threads",
           [(COMMON, "let ms-scope = int | ([Strong] ; sr ; [Strong])",
             "let ms-scope = int | ([Strong] ; (_ * _) ; [Strong])")]),
    Mutant("cta-as-gpu", "model",
           ".cta scope treated as .gpu: a .cta operation's scope includes every thread of its GPU",
           [(COMMON, "let ms-scope = int | ([Strong] ; sr ; [Strong])",
             "let sr = sr | ([CTA] ; sgpu ; [CTA | CLUSTER | GPU | SYS])"
             " | ([CLUSTER | GPU | SYS] ; sgpu ; [CTA])\n"
             "let ms-scope = int | ([Strong] ; sr ; [Strong])")]),
    Mutant("ms-ignores-location", "model",
           "morally strong without the overlap clause: strong pairs on different locations are ms",
           [(COMMON, "let ms = (ms-scope & same-proxy & (vloc | ((_ * _) \\ (M * M)))) \\ id",
             "let ms = (ms-scope & same-proxy) \\ id")]),
    Mutant("fences-not-strong", "model", "memory fences are not strong operations",
           [(COMMON, "let Strong = Fm | (M & (RLX | ACQ | REL | ACQ_REL))",
             "let Strong = M & (RLX | ACQ | REL | ACQ_REL)")]),
    Mutant("fence-sc-as-acq_rel", "model",
           "fence.sc behaves as fence.acq_rel: no fence-SC order (Fsc empty), patterns kept",
           [(COMMON, "let Fsc = Fm & SC", "let Fsc = Fm & SC & ACQ_REL")]),
    Mutant("fence-sc-no-release", "model",
           "fence.sc is not a release fence (FRel without SC) in ptx.cat",
           [(COMMON, "let FRel = Fm & (REL | ACQ_REL | SC)", "let FRel = Fm & (REL | ACQ_REL)")]),
    Mutant("fence-sc-no-acquire", "model",
           "fence.sc is not an acquire fence (FAcq without SC) in ptx.cat",
           [(COMMON, "let FAcq = Fm & (ACQ | ACQ_REL | SC)", "let FAcq = Fm & (ACQ | ACQ_REL)")]),
    Mutant("acquire-fence-as-release", "model",
           "fence.acquire counts as a release fence and fence.release as an acquire fence",
           [(COMMON, "let FRel = Fm & (REL | ACQ_REL | SC)", "let FRel = Fm & (ACQ | ACQ_REL | SC)"),
            (COMMON, "let FAcq = Fm & (ACQ | ACQ_REL | SC)", "let FAcq = Fm & (REL | ACQ_REL | SC)")]),
    Mutant("obs-one-step", "model",
           "observation is one morally strong rf step: no release sequence through rmw chains",
           [(COMMON, "let obs = [W] ; ((rf & ms) | rmw)+ ; [R]", "let obs = [W] ; (rf & ms) ; [R]")]),
    Mutant("obs-weak-rf", "model", "observation through any rf, morally strong or not",
           [(COMMON, "let obs = [W] ; ((rf & ms) | rmw)+ ; [R]", "let obs = [W] ; (rf | rmw)+ ; [R]")]),
    Mutant("relpat-no-po-loc", "model",
           "release pattern without its po-loc part (release; later strong write to the same address)",
           [(COMMON, RELPAT,
             "let relpat = [Rel] | ([FRel] ; po ; [strong-write])")]),
    Mutant("relpat-no-fence", "model",
           "release pattern without its fence part (release fence; po; strong write)",
           [(COMMON, RELPAT,
             "let relpat = [Rel] | ([Rel] ; po-loc ; [strong-write])")]),
    Mutant("relpat-fence-po-reversed", "model",
           "release fence pattern with po reversed: the strong write precedes the release fence",
           [(COMMON, "| ([FRel] ; po ; [strong-write])", "| ([FRel] ; po^-1 ; [strong-write])")]),
    Mutant("acqpat-no-po-loc", "model",
           "acquire pattern without its po-loc part (strong read; later acquire of the same address)",
           [(COMMON, "           | ([strong-read \\ RedR] ; po-loc ; [Acq])\n", "")]),
    Mutant("acqpat-no-fence", "model",
           "acquire pattern without its fence part (strong read; po; acquire fence)",
           [(COMMON, "let acqpat = [Acq]\n           | ([strong-read \\ RedR] ; po-loc ; [Acq])\n"
                     "           | ([strong-read \\ RedR] ; po ; [FAcq])",
             "let acqpat = [Acq]\n           | ([strong-read \\ RedR] ; po-loc ; [Acq])")]),
    Mutant("sync-pat-without-ms", "model",
           "synchronizes-with does not require the release and acquire patterns to be morally strong",
           [(COMMON, "let sync-pat = ms & (relpat ; obs ; acqpat)", "let sync-pat = relpat ; obs ; acqpat")]),
    Mutant("sc-without-ms", "model", "fence-SC order relates fence.sc pairs that are not morally strong",
           [(COMMON, "let sc = ([Fsc] ; (scorder & ms) ; [Fsc])+", "let sc = ([Fsc] ; scorder ; [Fsc])+")]),
    Mutant("no-barrier-sync", "model", "CTA barriers do not synchronize",
           [(COMMON, "let sync = sync-pat | sc | sync-bar", "let sync = sync-pat | sc")]),
    Mutant("no-fence-sc-sync", "model", "fence-SC order does not synchronize",
           [(COMMON, "let sync = sync-pat | sc | sync-bar", "let sync = sync-pat | sync-bar")]),
    Mutant("bco-without-po", "model",
           "base causality without bare program order (the 6.0 form (po? ; sync ; po?)+) in ptx.cat",
           [(ASYNC, "let bco-sync = (po | sync | tm-sync | async_int | bulk_done)+",
             "let bco-sync = (po? ; (sync | tm-sync | async_int | bulk_done) ; po?)+")]),
    Mutant("release-without-preceding-po", "model",
           "base causality cannot start with program order before a synchronization: what precedes "
           "a release in its thread is not ordered before the acquiring side",
           [(ASYNC, "let bco-sync = (po | sync | tm-sync | async_int | bulk_done)+",
             "let bco-sync = po | ((sync | tm-sync | async_int | bulk_done) ; "
             "(po | sync | tm-sync | async_int | bulk_done)*)")]),
    Mutant("bco-not-transitive", "model", "base causality is one po or sync step (no closure)",
           [(ASYNC, "let bco-sync = (po | sync | tm-sync | async_int | bulk_done)+",
             "let bco-sync = po | sync | tm-sync | async_int | bulk_done")]),
    Mutant("ppcb-drop-generic", "model",
           "ppcb without clause (a): same address, both generic",
           [(PROXY, "         | (vloc & (from-gen ; bco ; into-gen))\n", "")]),
    Mutant("ppcb-drop-alias", "model",
           "ppcb without clause (c): aliases with a proxy fence on the path",
           [(PROXY, "\n                | (loc & (from-gen ; bco ; [ALIAS] ; bco ; into-gen))", "")]),
    Mutant("ppcb-drop-same-proxy", "model",
           "ppcb without clause (b): same address, same proxy, same CTA",
           [(PROXY, "let ppcb = bco & ((vloc & same-proxy & scta & ([M] ; bco ; [M]))\n                | ",
             "let ppcb = bco & (")]),
    Mutant("from-gen-no-proxy-fence", "model",
           "a proxy fence after a texture/surface/constant access does not bring it to the generic proxy",
           [(PROXY, "let from-gen = [M & GEN] | ((bco & PF^-1) ; [F \\ UNI])", "let from-gen = [M & GEN]")]),
    Mutant("into-gen-no-proxy-fence", "model",
           "a proxy fence before a texture/surface/constant access does not bring the generic proxy to it",
           [(PROXY, "let into-gen = [M & GEN] | (bco & PF)", "let into-gen = [M & GEN]")]),
    Mutant("proxy-fence-any-cta", "model", "a proxy fence covers accesses of every CTA, not only its own",
           [(COMMON, "let PF = ([F & PROXY] ; (same-proxy & scta) ; [M])",
             "let PF = ([F & PROXY] ; same-proxy ; [M])")]),
    Mutant("proxy-fence-any-proxy", "model", "a proxy fence covers accesses of every proxy",
           [(COMMON, "let PF = ([F & PROXY] ; (same-proxy & scta) ; [M])",
             "let PF = ([F & PROXY] ; scta ; [M])")]),
    Mutant("one-proxy", "model", "all proxies are the same proxy (texture = surface = constant = generic)",
           [(COMMON, "let same-proxy = (GEN * GEN) | (TEX * TEX) | (SUR * SUR) | (CON * CON)",
             "let same-proxy = _ * _")]),
    Mutant("cause-without-obs", "model", "causality order is ppcb only (observation dropped)",
           [(PTX, "let cause = ppcb | (obs ; ppcb)", "let cause = ppcb")]),
    Mutant("causality-without-fr", "model", "Causality axiom checks rf only, not fr",
           [(PTX, "irreflexive ((rf | fr) ; cause) as Causality", "irreflexive (rf ; cause) as Causality")]),
    Mutant("coherence-vloc", "model", "Coherence compares virtual addresses instead of physical locations",
           [(PTX, r"empty ((([W] ; cause ; [W]) & loc) \ co) as Coherence",
             r"empty ((([W] ; cause ; [W]) & vloc) \ co) as Coherence")]),
    Mutant("no-thin-air-without-data", "model", "No-Thin-Air ignores data dependencies",
           [(PTX, "let dep = addr | data | ctrl", "let dep = addr | ctrl")]),
    Mutant("no-thin-air-without-ctrl", "model", "No-Thin-Air ignores control dependencies",
           [(PTX, "let dep = addr | data | ctrl", "let dep = addr | data")]),
    Mutant("race-flag-ignores-ms", "model", "data-race flag also reports morally strong pairs",
           [(PTX, "flag ~empty (conflict \\ (ms | cause | cause^-1)) as data-race",
             "flag ~empty (conflict \\ (cause | cause^-1)) as data-race")]),
    Mutant("v75-fence-sc-release", "model",
           "ptx-v7.5.cat: fence.sc forms release/acquire patterns (the model's D5 lost)",
           [(V75, "let FRel = Fm & (REL | ACQ_REL)\nlet FAcq = Fm & (ACQ | ACQ_REL)",
             "let FRel = Fm & (REL | ACQ_REL | SC)\nlet FAcq = Fm & (ACQ | ACQ_REL | SC)")]),
    Mutant("v75-sync-obs-one-step", "model", "ptx-v7.5.cat: sync observes through one step only",
           [(V75, "let sync = (ms & (relpat ; obs1+ ; acqpat)) | sc | sync-bar",
             "let sync = (ms & (relpat ; obs1 ; acqpat)) | sc | sync-bar")]),
    Mutant("v75-cause-without-obs", "model", "ptx-v7.5.cat: causality is ppcb only",
           [(V75, "let cause = ppcb | (obs1? ; ppcb)", "let cause = ppcb")]),
    Mutant("v60-cause-without-obs", "model", "ptx-v6.0.cat: causality without the observation part",
           [(V60, "let cause = bco | (obs ; (bco | po-loc))", "let cause = bco")]),
    Mutant("v60-ms-scope-sys", "model", "ptx-v6.0.cat: all strong operations in scope of each other",
           [(V60, "let ms = ((int | ([Strong] ; sr ; [Strong]))",
             "let ms = ((int | ([Strong] ; (_ * _) ; [Strong]))")]),
    Mutant("sc-without-fr", "model", "sc.cat: the SC axiom ignores from-reads",
           [(SC, "acyclic (po | rf | co | fr) as SC", "acyclic (po | rf | co) as SC")]),
    Mutant("sc-without-po", "model", "sc.cat: the SC axiom ignores program order",
           [(SC, "acyclic (po | rf | co | fr) as SC", "acyclic (rf | co | fr) as SC")]),
]

# Equivalent mutants: considered, and not run by default (--equivalent runs them; they are expected
# to survive and are never counted). Each changes the model's text but, as argued, not the set of
# allowed outcomes of any program the engine accepts, so no test can kill it.
#
# * Fence-SC (A2) in ptx.cat, ptx-v7.5.cat and ptx-v6.0.cat is implied by the other axioms: a
#   violation needs F1 bco F2 with F2 sc-before F1. Since sc ⊆ sync ⊆ bco and the fence-SC order is
#   total on morally strong fence.sc pairs, re-choosing that order as a linear extension of bco
#   (restricted to the fences) only removes sync edges, so every other axiom still holds and
#   Fence-SC now does too, unless (po | sync-pat | sync-bar)+ is cyclic through two fences. Such a
#   cycle needs a sync-pat edge, i.e. the acquire read R is bco-before the release write W it
#   observes (same virtual address, as rf & ms requires), which Causality (direct rf) or
#   Coherence (through an rmw chain, whose co would become cyclic) already forbid; barrier-only
#   cycles break Barrier-progress. Stating it over cause (vacuous: ppcb relates memory operations only) is the
#   same as dropping it. A random differential search (3,000 programs with fences, barriers, atomics
#   and aliases) found no difference either.
# * SC-per-Location (A5) in ptx.cat: every (com | po) & ms & vloc cycle reduces to a Causality or
#   Coherence violation (po & vloc ⊆ ppcb, rf & ms ⊆ obs, co transitive, fr = rf^-1 ; co), so
#   dropping it or weakening it changes no outcome (the spec, §9 D2, calls it argued-redundant;
#   no random search found a difference).
# * ptx-v6.0.cat with bare po in base causality: bco60 already contains po around every sync, and
#   bare po pairs only matter for same-location pairs, which po-loc and SC-per-Location (int ⊆ ms)
#   already order; the difference shows only between two virtual aliases of one location, which
#   the 6.0 model (no proxies) does not define.
EQUIVALENT = [
    # Barrier blocking is what a program does, whatever the model (as Dat3M's program encoder has
    # it): the model loader gives every model that does not state Barrier-progress / Barrier-quorum
    # these axioms (cat/parser.py, _PROGRAM_SEMANTICS), so dropping them from a model file changes
    # nothing. The engine mutant no-implicit-barrier-semantics stands for them.
    drop(PTX, r"acyclic (po | sync_barrier | sync_cluster_barrier) as Barrier-progress",
         "ptx-drop-Barrier-progress",
         "ptx.cat: cyclically waiting barriers do not deadlock"),
    drop(PTX, r"empty QUORUM_UNMET as Barrier-quorum", "ptx-drop-Barrier-quorum",
         "ptx.cat: a barrier phase missing threads completes anyway"),
    drop(V75, r"empty QUORUM_UNMET as Barrier-quorum", "v75-drop-Barrier-quorum",
         "ptx-v7.5.cat: no barrier quorum"),
    # ptx-v7.5 states Barrier-progress without cluster barriers, which it does not have
    drop(PTX, r"empty ((([Fsc] ; bco ; [Fsc]) & ms) \ sc) as Fence-SC", "ptx-drop-Fence-SC",
         "ptx.cat: no Fence-SC axiom"),
    drop(V75, r"empty ((([Fsc] ; bco ; [Fsc]) & ms) \ sc) as Fence-SC", "v75-drop-Fence-SC",
         "ptx-v7.5.cat: no Fence-SC axiom"),
    drop(V60, r"empty ((([Fsc] ; cause ; [Fsc]) & ms) \ sc) as Fence-SC", "v60-drop-Fence-SC",
         "ptx-v6.0.cat: no Fence-SC axiom"),
    Mutant("fence-sc-over-cause", "model",
           "Fence-SC stated over cause (vacuous: ppcb relates memory operations only)",
           [(PTX, r"empty ((([Fsc] ; bco ; [Fsc]) & ms) \ sc) as Fence-SC",
             r"empty ((([Fsc] ; cause ; [Fsc]) & ms) \ sc) as Fence-SC")]),
    drop(PTX, r"acyclic ((com | po) & ms & vloc) as SC-per-Location", "ptx-drop-SC-per-Location",
         "ptx.cat: no SC-per-Location axiom"),
    Mutant("scpl-without-po", "model", "SC-per-Location without program order",
           [(PTX, "acyclic ((com | po) & ms & vloc) as SC-per-Location",
             "acyclic (com & ms & vloc) as SC-per-Location")]),
    Mutant("scpl-without-fr", "model", "SC-per-Location without from-reads",
           [(PTX, "acyclic ((com | po) & ms & vloc) as SC-per-Location",
             "acyclic ((rf | co | po) & ms & vloc) as SC-per-Location")]),
    Mutant("v60-bco-with-po", "model", "ptx-v6.0.cat: base causality gains bare po (the 7.5 form)",
           [(V60, "let bco = (po? ; sync ; po?)+", "let bco = (po | sync)+")]),
]

# ====================================================================================== engine
# Engine mutants: patches of src/ptxmm as of Engine 2 (retargeted from the old engine's; the
# meaning is in each description). Where the engines have one piece of code each (Z3 and brute
# force), both are patched alike, so that only tests of the *meaning* can kill the mutant.

CTRL = "src/ptxmm/semantics/control.py"
BUILDER = "src/ptxmm/semantics/builder.py"
REGS = "src/ptxmm/semantics/registers.py"
Z3PB = "src/ptxmm/engines/z3/problem.py"
MEM = "src/ptxmm/semantics/memory.py"
BULK = "src/ptxmm/semantics/bulk.py"
WGMMA = "src/ptxmm/semantics/wgmma.py"
VOCAB = "src/ptxmm/semantics/vocab.py"
VAL = "src/ptxmm/ir/values.py"
Z3V = "src/ptxmm/engines/z3/values.py"
Z3P = "src/ptxmm/engines/z3/program.py"
EXE = "src/ptxmm/semantics/executions.py"

ENGINE_MUTANTS = [
    Mutant("unroll-off-by-one", "engine",
           "a backward branch is taken at most unroll-1 times (unroll bound off by one)",
           [(CTRL, "if taken.back[st.pc] > b.unroll:", "if taken.back[st.pc] >= b.unroll:")]),
    Mutant("unroll-plus-one", "engine",
           "a backward branch is taken up to unroll+1 times (unroll bound off by one, upwards)",
           [(CTRL, "if taken.back[st.pc] > b.unroll:", "if taken.back[st.pc] > b.unroll + 1:")]),
    Mutant("predicate-guard-ignored", "engine",
           "a predicated instruction (@p / @!p, other than bra) always executes",
           [(BUILDER, "if ins.guard is not None and not isinstance(ins, Branch):",
             "if False and ins.guard is not None and not isinstance(ins, Branch):")]),
    Mutant("predicate-negation-ignored", "engine",
           "@!p on a non-branch instruction is read as @p",
           [(BUILDER, 'guard = mk("lnot", truth(g)) if ins.guard[1] else truth(g)', "guard = truth(g)")]),
    Mutant("failed-cas-writes", "engine",
           "a failed atom.cas still writes (the value it read) to memory",
           [(MEM, 'wguard = ok if guard is None else mk("land", guard, ok)', "wguard = guard")]),
    Mutant("signed-compare-as-unsigned", "engine",
           "signed comparisons (setp.lt/gt on .s types) compare as unsigned (both value semantics)",
           [(VAL, '"slt": lambda a, b, w: int(to_signed(a, w) < to_signed(b, w)),',
             '"slt": lambda a, b, w: int(a < b),'),
            (VAL, '"sgt": lambda a, b, w: int(to_signed(a, w) > to_signed(b, w)),',
             '"sgt": lambda a, b, w: int(a > b),'),
            (Z3V, '"slt": lambda a, b: a < b,', '"slt": z3.ULT,'),
            (Z3V, '"sgt": lambda a, b: a > b,', '"sgt": z3.UGT,')]),
    Mutant("setp-type-ignored", "engine",
           "setp on .u types compares as signed (the .u/.s distinction of setp lost)",
           [(REGS, 'return ("s" if type_signed(ty) else "u") + cmp', 'return "s" + cmp')]),
    Mutant("atom-min-unsigned-as-signed", "engine",
           "min/max (atom and register) on .u types compute a signed min/max",
           [(REGS, 'return ("s" if s else "u") + op', 'return "s" + op')]),
    Mutant("rf-any-location", "engine",
           "a read may read from a write to a different location",
           [(VOCAB, "c.rf += [(w, r.eid) for w in c.writes_at.get(r.loc, [])"
                    " if not exclusive(r, ev[w])]",
             "c.rf += [(w, r.eid) for ws in c.writes_at.values() for w in ws if ev[w].w == r.w\n"
             "                     and not exclusive(r, ev[w])]")]),
    Mutant("co-not-transitive", "engine",
           "coherence order need not be transitive (the one statement of transitivity, which the "
           "Z3 engine asserts and the enumerator filters by, states nothing)",
           [(EXE, "                out.append(u.any((u.not1(ab), u.not1(bc), ac)))\n",
             "                pass\n")]),
    Mutant("init-not-co-first", "engine",
           "the initial write is not co-before the program's writes to its location",
           [(VOCAB, "        known[w] = known.get(w, 0) | sum(1 << x for x in "
                    "cand.writes_at.get(ev[w].loc, []) if x != w)\n", "        pass\n"),
            (EXE, '        co |= {(w, b) for b in execd if ev[b].kind == Kind.W and b != w and '
                    'ev[b].loc == ev[w].loc}\n', "        pass\n")]),
    Mutant("await-wrong-exit", "engine",
           "the await reduction of a side-effect-free spin loop assumes the loop condition holds "
           "(the branch is taken) instead of the exit",
           [(CTRL, 'b.awaits += 1  # await: assume the loop exits in this iteration\n'
                   '        st.assumes.append(mk("lnot", cond))',
             'b.awaits += 1\n        st.assumes.append(cond)')]),
    Mutant("data-dep-dropped", "engine",
           "a store's data dependency on the register whose value it stores is not recorded",
           [(MEM, '        b.dep(gdeps, w, "ctrl")\n        b.dep(vdeps, w, "data")\n',
             '        b.dep(gdeps, w, "ctrl")\n')]),
    Mutant("addr-dep-dropped", "engine", "address dependencies are not recorded",
           [(BUILDER, "return self.name_of_addr[e.v], None, deps",
             "return self.name_of_addr[e.v], None, frozenset()")]),
    Mutant("ctrl-dep-dropped", "engine",
           "control dependencies from branch conditions are not recorded",
           [(BUILDER, '            self.edges.add((c, eid, "ctrl"))', "            pass")]),
    Mutant("barrier-phase-ignored", "engine",
           "barrier arrivals of different phases (k-th and j-th use of one barrier) synchronize",
           [(Z3P, "            return self.eg.events[a].barrier[2] == self.eg.events[b].barrier[2]\n",
             "            return True\n"),
            (EXE, "        return self.eg.events[a].barrier[2] == self.eg.events[b].barrier[2]"
                  "  # k-th arrivals",
             "        return True")]),
    Mutant("barrier-cta-ignored", "engine",
           "barriers of different CTAs with the same id synchronize",
           [(VOCAB, "if self.cta(a) != self.cta(w) or len(a.barrier[0]) != len(w.barrier[0]):",
             "if len(a.barrier[0]) != len(w.barrier[0]):")]),
    Mutant("final-not-co-maximal", "engine",
           "a location's final value may come from any executed write, not only a co-maximal one",
           [(EXE, "        cs.append(u.any([u.not1(v), u.all([u.ex[w]] + [u.not1(x) for x in after])]))",
             "        cs.append(u.any([u.not1(v), u.ex[w]]))"),
            (EXE, "if u.ex[w] is not False and not co_must(w) & u.sure]", "if u.ex[w] is not False]")]),
    Mutant("po-immediate-only", "engine", "program order only relates consecutive events",
           [(VOCAB, "                    rows[a.eid] = later\n",
             "                    rows[a.eid] = later & -later\n"),
            (VOCAB, "b.index > a.index and a.paths & b.paths",
             "b.index == a.index + 1 and a.paths & b.paths")]),
    Mutant("scope-one-sided", "engine",
           "scope inclusion checks only the first event's scope (not mutual)",
           [(VOCAB, "                    row |= by_level.get((sb, lv), 0)",
             "                    row |= by_level.get((sb, -1), 0)")]),
    Mutant("cta-as-gpu-engine", "engine", ".cta scope includes the whole GPU (engine scope levels)",
           [(VOCAB, "    return _LEVEL[pa.level_with(pb)]",
             "    lv = _LEVEL[pa.level_with(pb)]\n"
             "    return _LEVEL[\"cta\"] if lv <= _LEVEL[\"gpu\"] else lv")]),
    Mutant("shared-not-per-cta", "engine", ".shared locations are one copy for every CTA",
           [(BUILDER, '        if loc.space == "shared":\n            cta',
             "        if False:\n            cta")]),
    Mutant("atom-acquire-as-relaxed", "engine", "atom.acquire / atom.acq_rel reads are relaxed",
           [(MEM, '"acquire": ("acquire", "relaxed"),', '"acquire": ("relaxed", "relaxed"),'),
            (MEM, '"acq_rel": ("acquire", "release")}', '"acq_rel": ("relaxed", "release")}')]),
    Mutant("scorder-not-total", "engine",
           "fence-SC order need not be total (Z3 ranks may tie; brute force may leave fences out)",
           [(Z3P, "            self.cs.append(z3.Distinct(*self.rank.values()))\n", "            pass\n"),
            (EXE, "                for sc, ph in itertools.product(itertools.permutations(scf), phases):",
             "                for sc, ph in itertools.product(\n"
             "                        (p for k in range(len(scf) + 1)\n"
             "                         for p in itertools.permutations(scf, k)),\n"
             "                        phases):")]),
    Mutant("wraparound-lost", "engine",
           "concrete arithmetic does not wrap at the register width (the old engine's unbounded "
           "values; constant folding and brute force)",
           [(VAL, "    return mask(_CONCRETE[e.op](*vals, e.w), e.w)\n",
             "    return _CONCRETE[e.op](*vals, e.w)\n")]),
]

# Hopper synchronization (docs/hopper.md): killed by tests/hopper/test_examples.py and examples/hopper/
HOPPER_MUTANTS = [
    drop(PTX, r"empty (rmw & ((fr & mbar-loc) ; (co & mbar-loc))) as MBarrier-atomicity",
         "ptx-drop-MBarrier-atomicity", "ptx.cat: arrivals of different scopes may be lost"),
    drop(PTX, r"empty CB_HANG as Cluster-barrier-arrival", "ptx-drop-Cluster-barrier-arrival",
         "ptx.cat: a cluster wait completes though its own thread has not arrived"),
    Mutant("mbarrier-failed-wait-acquires", "model", "an mbarrier wait that returns False still acquires",
           [(COMMON, "let Acq = ((R & ACQ) \\ RedR) \\ (MBWAIT \\ MBOK)", "let Acq = (R & ACQ) \\ RedR")]),
    Mutant("cluster-relaxed-arrive-releases", "model", "barrier.cluster.arrive.relaxed releases",
           [(COMMON, "let sync-cbar = ([CBA \\ RLX] ;", "let sync-cbar = ([CBA] ;")]),
    Mutant("async-issue-continues", "model",
           "a bulk copy's complete-tx orders the issuer's earlier accesses (issue inside bco's closure)",
           [(ASYNC, "let bco-sync = (po | sync | tm-sync | async_int | bulk_done)+",
             "let bco-sync = (po | sync | tm-sync | async_int | bulk_done | issue)+")]),
    Mutant("async-fence-any-space", "model", "fence.proxy.async.global also covers shared memory",
           [(COMMON, " \\ ((PFG * SHM) | (PFS * (M \\ SHM)))", "")]),
    Mutant("async-events-in-po", "engine", "a bulk copy's events are in the issuing thread's po",
           [(VOCAB, "            mask &= ~self.agents\n", "")]),
    Mutant("mbarrier-tx-ignored", "engine",
           "a phase completes when the arrivals are in, whatever the tx-count",
           [("src/ptxmm/ir/mbarrier.py",
             'done = mk("land", mk("eq", pend, _c(0)), mk("eq", txc, _c(0)))',
             'done = mk("eq", pend, _c(0))')]),
    # issue 27: one mutant per D-fix (killed by tests/hopper/test_isa_async_proxy.py)
    Mutant("d1-wait-read-no-fence", "engine",
           "cp.async.bulk.wait_group.read waits for the copies' reads but no proxy fence follows them",
           [(BULK, '            b.edges.add((fr if ins.read else f, e, "done"))\n',
             '            if not ins.read:\n                b.edges.add((f, e, "done"))\n')]),
    Mutant("d2-wait-group-is-a-proxy-fence", "engine",
           "cp.async.bulk.wait_group is an async proxy fence even with nothing pending",
           [("src/ptxmm/semantics/bulk.py", 'tags=frozenset({"PROXY", "BULKWAIT"}))',
             'tags=frozenset({"PROXY", "BULKWAIT", "ASYNC"}))')]),
    Mutant("d3-ppcb-outside-bco", "model",
           "proxy-preserved base causality is not restricted to base causality (the issue edge leaks)",
           [(PROXY, "let ppcb = bco & ((vloc", "let ppcb = ((vloc")]),
    Mutant("d4-remote-copy-in-issuing-cta", "engine",
           "a copy into another CTA's shared memory is performed in the issuing CTA",
           [(BUILDER, "        return None if key == t.placement.cta_key else self.cta_place[key]\n",
             "        return None\n")]),
    # issue 27, the forms built last (killed by tests/hopper/test_wgmma_and_async_forms.py and
    # examples/hopper/)
    Mutant("wgmma-no-completion-fence", "engine",
           "wgmma.wait_group is not ordered after the mma's implicit completion fence",
           [(WGMMA, '            b.edges.add((f, e, "done"))\n            pending.pop',
             '            pending.pop')]),
    Mutant("rsr-cumulative", "model", "the restricted release fence releases everything before it",
           [(ASYNC, "let rsr-sync = [M & SHM] ; po ; [RSR]", "let rsr-sync = [M] ; po ; [RSR]")]),
    Mutant("asr-unrestricted", "model", "the restricted acquire fence is not an acquire",
           [(ASYNC, "let bco = bco0 | (bco0? ; issue) | (bco-sync? ; asr-sync)",
             "let bco = bco0 | (bco0? ; issue)")]),
    Mutant("inval-is-an-init", "model", "fence.mbarrier_init releases an mbarrier.inval too",
           [(ASYNC, "let mbinit-sync = [(MBAR & W & WEAK) \\ MBINV]",
             "let mbinit-sync = [MBAR & W & WEAK]")]),
    Mutant("reduce-weak", "engine", "cp.reduce.async.bulk's read-modify-write is weak",
           [("src/ptxmm/semantics/bulk.py", 'base = dict(sem="relaxed", scope="gpu", agent=agent, **dst)',
             'base = dict(sem="weak", scope=None, agent=agent, **dst)')]),
    # issue 27, hcopy: the tensormap proxy (killed by tests/hopper/test_tensor_copies.py)
    Mutant("tm-acquire-any-map", "model",
           "fence.proxy.tensormap::generic.acquire [addr], 128 covers every tensor map, not the one it names",
           [(PROXY, "let into-tm = [TMACQ] ; (bco & tm_range) ; [TMAP]",
             "let into-tm = [TMACQ] ; bco ; [TMAP]")]),
    Mutant("tm-acquire-fence-alone", "model",
           "the acquire tensormap proxy fence alone orders a generic write of a map before a copy's use",
           [(PROXY, "let tm-ppcb = vloc & ([M & GEN] ; bco ; [TMREL] ; bco ; into-tm)",
             "let tm-ppcb = vloc & ([M & GEN] ; bco ; into-tm)")]),
]

# Findings (Engine 3): the race query on the one formula; killed by tests/queries/test_races.py and
# tests/explanation/test_explain.py
AXIOMS = "src/ptxmm/cat/axioms.py"
RACE_MUTANTS = [
    Mutant("no-implicit-barrier-semantics", "engine",
           "a model that does not state the barrier axioms (Dat3M's cat files, sc.cat) lets a thread "
           "pass a barrier whose quorum is never met",
           [("src/ptxmm/cat/parser.py", "        if str(name) not in stated:\n",
             "        if False:\n")]),
    Mutant("race-query-one-witness", "engine",
           "the Z3 race query stops after its first witness (races needing another execution are lost)",
           [(Z3PB, "                yield Raised(k[0], k[1], exe)\n",
             "                yield Raised(k[0], k[1], exe)\n            terms = {}\n")]),
    Mutant("race-pair-ignores-execution", "engine",
           "a flag's pair is raised whether or not its events execute (races on paths never taken)",
           [(AXIOMS, "(a, b): _pair_guard(u, v, a, b) for (a, b), g in v.items()",
             "(a, b): g for (a, b), g in v.items()")]),
    Mutant("race-pair-twice", "engine", "a racing pair is reported once per direction",
           [(AXIOMS, "        if len(k) == 2 and k[0] > k[1]:", "        if False:")]),
    Mutant("findings-only-when-enumerating", "engine",
           "a one-query verdict (--observe condition) looks for no races",
           [("src/ptxmm/queries/races.py", '        if r.status not in ("ok", "stopped"):',
             '        if r.status not in ("ok", "stopped") or r.opts.verdict_only:')]),
    Mutant("race-query-in-enumeration-scope", "engine",
           "after an enumeration stopped at --max-outcomes, the race query runs under the "
           "enumeration's blocking constraints",
           [(Z3PB, "            if self.s is s:  # not yet closed (close() pops every scope of a "
                  "pooled solver)\n                s.pop()\n", "            pass\n")]),
]

# Liveness (src/ptxmm/queries/hangs.py, issue 26): killed by tests/queries/test_hangs.py and the Dat3M
# liveness corpus (tests/models/test_dat3m_conformance.py).
LIVE = "src/ptxmm/queries/hangs.py"
LIVENESS_MUTANTS = [
    Mutant("liveness-no-fairness", "engine",
           "a stuck iteration's strong reads need not read a co-maximal write (memory fairness "
           "dropped: a relaxed spin may read a stale flag forever)",
           [(LIVE, 'x.agent < 0 and (self.mem_fair and x.sem != "weak"):',
             'x.agent < 0 and (False and x.sem != "weak"):')]),
    Mutant("liveness-loops-terminate", "engine",
           "every loop is declared terminating: no stuck iteration is ever a hang",
           [(LIVE, "                self.cs.append(z3.Implies(s, self.stuck(p.end)))",
             "                self.cs.append(z3.Not(s))")]),
    Mutant("liveness-fairness-unscoped", "engine",
           "a strong read is bound to see every write, whatever its scope (Dat3M's reading)",
           [(LIVE, "x.thread == r.thread or not self.scoped:", "x.thread == r.thread or True:")]),
]

# Kernels (issue 25): the assert-fails and out-of-bounds findings; killed by
# tests/kernel/test_kernel_front_end.py
KERNEL_MUTANTS = [
    Mutant("assertfail-ignored", "engine",
           "a call of __assertfail is dropped (a failing assert is never found)",
           [("src/ptxmm/kernel/inline.py", '        if c.callee == "__assertfail":\n',
             '        if c.callee == "__assertfail":\n            return []\n')]),
    Mutant("out-of-bounds-unchecked", "engine",
           "an access outside every buffer is not stopped (nor found): it names no location",
           [(MEM, "if b.layout is not None and b.element(ins.addr, st, ins)[0] is None:", "if False:")]),
    # addresses computed from loaded data (semantics/memory.loaded_access); killed by
    # tests/kernel/test_loaded_addresses.py
    Mutant("loaded-address-no-oob-case", "engine",
           "an address computed from loaded data never stops out of bounds (the case is dropped)",
           [(MEM, "    if outside is not None:\n        stop = st.fork()",
             "    if False:\n        stop = st.fork()")]),
    Mutant("loaded-address-first-element-only", "engine",
           "an address computed from loaded data names only the first element it may name",
           [(MEM, "    for name, v in cases:\n", "    for name, v in cases[:1]:\n")]),
    Mutant("loaded-address-guard-dropped", "engine",
           "a predicated access with a loaded address assumes its address names an element even "
           "when its guard is false",
           [(MEM, "ADDR_W))\n        case.assumes.append(eq if guard is None else "
             "mk(\"lor\", mk(\"lnot\", guard), eq))", "ADDR_W))\n        case.assumes.append(eq)")]),
    Mutant("loaded-address-targets-ignore-bounds", "engine",
           "the elements a loaded address may name are computed without the path's conditions (a "
           "bounds test no longer narrows them: a bounded index into a large buffer is refused)",
           [("src/ptxmm/engines/addresses.py",
             "        for c in known:\n            s.add(vals.bool(c))\n", "")]),
    # explain and graph of a kernel's findings (explanation/findings.py, cli/explain.py); killed by
    # tests/explanation/test_kernel_findings_explained.py
    Mutant("finding-witness-hides-the-stop", "engine",
           "a finding's witness says every thread finishes, even one stopped by a failing assert or "
           "an out-of-bounds access",
           [("src/ptxmm/explanation/findings.py", "        if stop is not None:\n",
             "        if False:\n")]),
    Mutant("kernel-explain-without-findings", "engine",
           "`ptxmm explain`/`graph` of a kernel ignore its findings (--finding included)",
           [("src/ptxmm/cli/explain.py", "    if finding is None and (outcome is not None",
             "    if True or finding is None and (outcome is not None")]),
    # __constant__ data, predicated calls, dynamic shared memory; killed by
    # tests/kernel/test_calls_constant_and_dynamic_shared.py
    Mutant("constant-reads-zero", "engine",
           "a read of __constant__ data returns 0 instead of the module's initial value",
           [("src/ptxmm/ir/layout.py",
             "                        return (r.init[i] if i < len(r.init) else 0) & ",
             "                        return 0 & ")]),
    Mutant("constant-writable", "engine",
           "a store to __constant__ data is allowed (it reads back as the initial value, no finding)",
           [("src/ptxmm/ir/layout.py",
             '    if r.space == "const":\n        return isinstance(ins, Load)',
             '    if r.space == "const":\n        return True')]),
    Mutant("predicated-call-always-runs", "engine",
           "a predicated call of a .func runs its body whatever its predicate",
           [("src/ptxmm/kernel/inline.py", "        if g is not None:  # `@p call f`",
             "        if False:  # `@p call f`")]),
    Mutant("dynamic-shared-one-short", "engine",
           "the dynamic shared array is sized one element smaller than the launch says",
           [("src/ptxmm/kernel/memory.py", "count=b.count, dynamic=False)",
             "count=b.count - 1 or 1, dynamic=False)")]),
    # issue 27, hcu: nvcc's PTX of CUTLASS-style inline asm; killed by tests/kernel/test_hopper_idioms.py
    Mutant("scope-outer-declaration-wins", "engine",
           "a register declared in a nested { } block is shadowed by the enclosing block's declaration",
           [("src/ptxmm/kernel/module/reader.py", "        for k in chain:  # outer first",
             "        for k in reversed(chain):  # outer first")]),
    Mutant("vector-elements-one-address", "engine",
           "every element of a .v2/.v4 access is accessed at the vector's first address",
           [("src/ptxmm/kernel/module/lowering.py", "a = Addr(addr.base, addr.offset + k * width)",
             "a = Addr(addr.base, addr.offset + 0 * width)")]),
]

MUTANTS: list[Mutant] = (AXIOM_DROPS + MODEL_EDITS + ENGINE_MUTANTS + HOPPER_MUTANTS + RACE_MUTANTS
                         + LIVENESS_MUTANTS + KERNEL_MUTANTS)
# The H100 harness (issue 27, item 4): a multicast copy's ctaMask names test ranks, which the
# harness plays on rotated hardware ranks; killed by tests/device/test_hopper_remote_and_multicast.py
MUTANTS += [
    Mutant("multicast-mask-not-rotated", "engine",
           "the device harness passes a multicast ctaMask through unchanged: the copy lands in the "
           "CTAs whose hardware ranks the test's ranks name, not in the CTAs that play them",
           [("src/ptxmm/device/codegen_sync.py",
             'return f"(unsigned short)((({mask}U << RI) | ({mask}U >> (CS - RI))) & ((1U << CS) - 1U))"',
             'return f"(unsigned short){mask}U"')]),
]

# Model-guarded pruning of the brute-force engine (src/ptxmm/engines/prune.py, issue 27): killed by
# tests/engines/test_model_guarded_pruning.py (and the brute = Z3 comparisons on the Hopper examples)
MUTANTS += [
    Mutant("prune-difference-monotone", "engine",
           "the early checks treat the right operand of a difference as monotone: Coherence "
           "(`\\ co`) fails on the lower bound of a partial candidate and prunes executions the "
           "model accepts",
           [("src/ptxmm/engines/prune.py",
             "flip = (isinstance(node, Diff) and k > 0) or isinstance(node, Complement)",
             "flip = isinstance(node, Complement)")]),
]


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
