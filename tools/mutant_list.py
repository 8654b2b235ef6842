"""The mutants of tools/mutants.py, as data: ``Mutant(name, kind, description, patches)`` — every
axiom line of each model dropped in turn, targeted model edits, and the engine mutants (the
semantics, the engines, the queries, the kernel front end), each with the meaning it breaks; a
patch names the file it applies to (``(relative path, old text, new text)``). EQUIVALENT lists the
mutants argued to change no outcome (not run)."""

from __future__ import annotations

from dataclasses import dataclass, field


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
           [(PTX, "flag ~empty (conflict \\ (ms | (same-op ; (cause | cause^-1) ; same-op))) as data-race\n",
             "\n")]),
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
           [(PTX, "flag ~empty (conflict \\ (ms | (same-op ; (cause | cause^-1) ; same-op))) as data-race",
             "flag ~empty (conflict \\ (same-op ; (cause | cause^-1) ; same-op)) as data-race")]),
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
    drop(PTX, r"acyclic (po | sync_barrier | sync_cluster_barrier | exit_barrier) as Barrier-progress",
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
Z3SAT = "src/ptxmm/engines/z3/satenum.py"
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
           [(CTRL, '            return None\n        st.assumes.append(mk("lnot", cond))\n',
             '            return None\n        st.assumes.append(cond)\n')]),
    Mutant("data-dep-dropped", "engine",
           "a store's data dependency on the register whose value it stores is not recorded",
           [(MEM, '        b.dep(gdeps, w, "ctrl")\n        b.dep(vdeps, w, "data")\n',
             '        b.dep(gdeps, w, "ctrl")\n')]),
    Mutant("addr-dep-dropped", "engine", "address dependencies are not recorded",
           [(BUILDER, "return self.name_of_addr[e.v], None, deps",
             "return self.name_of_addr[e.v], None, frozenset()")]),
    Mutant("ctrl-dep-dropped", "engine",
           "control dependencies from branch conditions are not recorded",
           [(BUILDER, '    kept_ctrl = {(c, e, "ctrl") for e in keep for c in b.ctrl_of.get(e, ())}',
             "    kept_ctrl = set()")]),
    Mutant("barrier-phase-ignored", "engine",
           "barrier arrivals of different phases (k-th and j-th use of one barrier) synchronize",
           [(Z3P, "            return self.eg.events[a].barrier[2] == self.eg.events[b].barrier[2]\n",
             "            return True\n"),
            (EXE, "        return self.eg.events[a].barrier[2] == self.eg.events[b].barrier[2]"
                  "  # k-th arrivals",
             "        return True")]),
    Mutant("barrier-cta-ignored", "engine",
           "barriers of different CTAs with the same id synchronize",
           # same_barrier's CTA test, and the CTA in the keys its callers group waits by (barrier
           # groups, the partner index): each alone is now redundant with the others
           [("src/ptxmm/semantics/barrier_waits.py",
             "if self.cta(a) != self.cta(w) or len(a.barrier[0]) != len(w.barrier[0]) \\\n",
             "if len(a.barrier[0]) != len(w.barrier[0]) \\\n"),
            ("src/ptxmm/semantics/barrier_waits.py",
             "        return (self.cta(w), tuple(x.v for x in w.barrier[0]), w.barrier[2])\n",
             "        return (0, tuple(x.v for x in w.barrier[0]), w.barrier[2])\n"),
            ("src/ptxmm/semantics/barrier_waits.py",
             "                    waits.setdefault(self.cta(w), []).append(w)\n",
             "                    waits.setdefault(0, []).append(w)\n"),
            ("src/ptxmm/semantics/barrier_waits.py",
             "            for w in _partners(a, waits.get(self.cta(a), ()), buckets):\n",
             "            for w in _partners(a, waits.get(0, ()), buckets):\n")]),
    Mutant("final-not-co-maximal", "engine",
           "a location's final value may come from any executed write, not only a co-maximal one",
           [(EXE, "        cs.append(u.any([u.not1(v), u.all([u.ex[w]] + [u.not1(x) for x in after])]))",
             "        cs.append(u.any([u.not1(v), u.ex[w]]))"),
            (EXE, "if u.ex[w] is not False and not co_must(w) & u.sure]", "if u.ex[w] is not False]")]),
    Mutant("po-immediate-only", "engine", "program order only relates consecutive events",
           [(VOCAB, "                    rows[a.eid] = later\n",
             "                    rows[a.eid] = later & -later\n"),
            (VOCAB, "                rows[a.eid] = later & self.together.of(a.eid)\n",
             "                rows[a.eid] = later & -later & self.together.of(a.eid)\n")]),
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
    Mutant("sat-blocking-skips-an-observable", "engine",
           "the SAT enumeration blocks outcomes over every observable but the first (outcomes that "
           "differ only there are lost; killed where python-sat is installed: a dependency)",
           [(Z3SAT, "obs = {k for i, j in lay.terms for", "obs = {k for i, j in lay.terms[1:] for")]),
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
           [(Z3PB, "            if self.s is s and not self._stopped():  # not yet closed (close() pops "
                  "every scope of\n                s.pop()  # a pooled solver; an interrupted one is "
                  "dropped, and its pop would fail)\n", "            pass\n")]),
]

# Liveness (src/ptxmm/queries/hangs.py, issue 26): killed by tests/queries/test_hangs.py and the Dat3M
# liveness corpus (tests/models/test_dat3m_conformance.py).
LIVE = "src/ptxmm/queries/hangs.py"
LIVENESS_MUTANTS = [
    Mutant("liveness-no-fairness", "engine",
           "a stuck iteration's strong reads need not read a co-maximal write (memory fairness "
           "dropped: a relaxed spin may read a stale flag forever)",
           [(LIVE, 'x.agent < 0 and (self.mem_fair and x.sem != "weak") \\',
             'x.agent < 0 and (False and x.sem != "weak") \\')]),
    Mutant("liveness-loops-terminate", "engine",
           "every loop is declared terminating: no stuck iteration is ever a hang",
           [(LIVE, "                self.cs.append(z3.Implies(s, self.stuck(p.end)))",
             "                self.cs.append(z3.Not(s))")]),
    Mutant("liveness-fairness-unscoped", "engine",
           "a strong read is bound to see every write, whatever its scope (Dat3M's reading)",
           [(LIVE, "x.thread == r.thread or not self.scoped:", "x.thread == r.thread or True:")]),
]
# Loops on the control-flow graph, registers that matter, "undecided" (issue 37): killed by
# tests/queries/test_hang_loops.py (and test_hangs.py)
LOOPS = "src/ptxmm/semantics/loops.py"
LIVENESS_MUTANTS += [
    Mutant("liveness-rotated-loop-unseen", "engine",
           "a rotated loop's back edge (its body falling through into its test) ends no iteration: "
           "a rotated wait that never ends is not a hang",
           [("src/ptxmm/semantics/builder.py",
             "if not (isinstance(u, Branch) and self.labels[u.target] == st.pc):", "if False:")]),
    Mutant("liveness-every-register-matters", "engine",
           "the stuck test compares every register the iteration carries: a spin that counts its "
           "iterations is never stuck",
           [(LOOPS, "            if r in rel or not b.relevance:", "            if True:")]),
    Mutant("liveness-seen-atom-read-loose", "engine",
           "an atom whose destination matters nothing may read stale values even when another "
           "thread reads the location it keeps changing",
           [(LIVE, "            if w is None or not any(", "            if True or not any(")]),
    Mutant("liveness-writing-loop-exact", "engine",
           "a loop that writes memory in each iteration counts as exact: no hang found means "
           "\"terminates\" for it",
           [(LOOPS, "        if x.kind == Kind.W and not (", "        if False and not (")]),
    Mutant("liveness-never-undecided", "engine",
           "a cut loop that is not exact never leaves the verdict undecided",
           [(LIVE, '    why = "; ".join(eg.undecided) or None', "    why = None")]),
]

# One barrier semantics (issue 37, src/ptxmm/semantics/barrier_waits.py): killed by
# tests/queries/test_barrier_waits.py
WAITS = "src/ptxmm/semantics/barrier_waits.py"
BARRIER_MUTANTS = [
    Mutant("exit-releases-unordered", "engine",
           "a count-less wait released by an exiting thread is not ordered after its events "
           "(threads at different count-less barriers pass them)",
           [(WAITS, "                g = u.all((u.ex[w.eid], self.finishes(t), u.not1(self.arrives(t, w))))",
             "                g = False")]),
    Mutant("countless-wait-waits-for-exited", "engine",
           "liveness: a count-less wait waits for threads that exit without arriving",
           [(WAITS, "                g = u.and2(u.not1(f), u.not1(self.arrives(t, w)))",
             "                g = u.not1(self.arrives(t, w))")]),
    Mutant("cluster-hang-forbids-blocking", "engine",
           "CB_HANG forbids the liveness path that blocks at a cluster wait never arrived in",
           [(WAITS, "if (g := self.passes(w)) is not False})", "if (g := self.u.ex[w.eid]) is not False})")]),
    Mutant("halt-does-not-end-grid", "engine",
           "liveness: a thread may hang after another one's assertion failed or it trapped",
           [(LIVE, "z3.Or([h for t in ts for h in self.hangs[t]]), z3.Not(z3.Or(self.halts))])",
             "z3.Or([h for t in ts for h in self.hangs[t]])])")]),
    Mutant("trap-is-exit", "engine", "trap decodes as exit (no finding, no halt)",
           [("src/ptxmm/syntax/decode/control.py",
             "    return Halt(stop=Stop(StopKind.TRAP, pos.line if pos is not None else 0), **c)",
             "    return Ret(**c)")]),
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
                         + LIVENESS_MUTANTS + BARRIER_MUTANTS + KERNEL_MUTANTS)
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

# Issue 37: a data race is between operations (models/ptx-common.cat same-op; queries/races.py):
# killed by tests/queries/test_races.py and tests/kernel/test_kernel_corpus.py (last-block-reset)
MUTANTS += [
    Mutant("race-between-rmw-halves", "model",
           "ptx.cat's data-race flag compares events, not operations: the read half of the first "
           "block's atom races with the last block's counter reset",
           [(PTX, "flag ~empty (conflict \\ (ms | (same-op ; (cause | cause^-1) ; same-op))) as data-race",
             "flag ~empty (conflict \\ (ms | cause | cause^-1)) as data-race")]),
    Mutant("race-halves-reported-twice", "engine",
           "a store racing with both halves of an atom counts as two event pairs of the one race "
           "(killed by tests/queries/test_races.py::test_a_plain_access_still_races_with_an_atom)",
           [("src/ptxmm/queries/races.py", "        if key in seen:\n            continue\n", "")]),
]

# Issue 37: the Dat3M dialect's count-less bar.cta.sync waits for no thread that does not arrive
# (Dat3M's ControlBarrier), PTX's bar.sync for every non-exited thread of the CTA: killed by
# tests/models/test_departures.py and the Dat3M conformance test
MUTANTS += [
    Mutant("dat3m-countless-barrier-waits-for-cta", "engine",
           "the Dat3M dialect's bar.cta.sync c without a quorum waits for every thread of the CTA, "
           "as PTX's bar.sync does: SB+bar-const-diff deadlocks instead of being allowed",
           [("src/ptxmm/semantics/barrier_waits.py",
             '        if "INSTANCE" in w.tags:\n            return []\n', "")]),
]

# Issue 37: exact loops — a changed register that matters nothing to the loop and is dead after it
# (a back-off delay) does not make the loop inexact; a predicated register operation's guard
# matters only through its result: killed by tests/queries/test_hang_loops.py
MUTANTS += [
    Mutant("liveness-dead-backoff-counts", "engine",
           "every changed carried register makes its loop inexact, even a back-off delay nothing "
           "reads after the loop: a libcu++-style wait is 'not decided'",
           [("src/ptxmm/semantics/loops.py",
             "    changed = [r for r in changed if (r in rel or r in b.loops.live_out[target] "
             "or not b.relevance)\n               and not (b.relevance and "
             "refreshed(b, st, target, events, st.regs[r]))]\n",
             "    changed = list(changed)\n")]),
    Mutant("liveness-pure-guard-seeds", "engine",
           "the guard of a predicated register operation always matters to its loop",
           [("src/ptxmm/semantics/loops.py",
             "(_regs(operands(ins)) | guard)\n            continue",
             "(_regs(operands(ins)) | guard)\n            seeds |= guard\n            continue")]),
]

# Issue 40 (the neighbour exchange at 1,024 threads): the barrier proof that spares the hang query,
# barrier groups, and sr by placement — killed by tests/queries/test_barrier_proof.py,
# tests/queries/test_barrier_waits.py and tests/semantics/test_scope_rows.py
MUTANTS += [
    Mutant("barrier-proof-any-order", "engine",
           "the barrier proof holds whatever sequence each thread of a CTA uses: two threads meeting "
           "barriers 0 and 1 in opposite orders (a deadlock) are said to terminate",
           [("src/ptxmm/semantics/barrier_waits.py",
             "        if seq.setdefault(eg.program.threads[t].placement.cta_key, mine) != mine:\n"
             "            return False\n", "")]),
    Mutant("barrier-proof-divergent", "engine",
           "the barrier proof takes a barrier some paths skip (predicated on a loaded value) for one "
           "every path meets: a divergent barrier's deadlock is said to terminate",
           [("src/ptxmm/semantics/barrier_waits.py",
             "e.agent >= 0 or len(e.paths) != every \\\n                or e.cond != TRUE:",
             "e.agent >= 0:")]),
    Mutant("barrier-groups-exit-holds", "engine",
           "a barrier group's phase completes only when every thread arrives: an exited thread no "
           "longer releases a count-less bar.sync",
           [("src/ptxmm/semantics/barrier_waits.py",
             "u.all(u.any((self.finishes(t), g))", "u.all(u.any((False, g))")]),
    Mutant("sr-rows-strict-scope", "engine",
           "sr by placement leaves out the sites at exactly an event's scope (two .cta accesses of one "
           "CTA are not morally strong)",
           [("src/ptxmm/semantics/vocab.py", "                    if lv <= top:\n",
             "                    if lv < top:\n")]),
]

# Issue 41: explain reuses the verdict of a check it is handed (a kernel's findings' check) where that
# verdict says the explained outcome is forbidden — killed by tests/explanation/test_explain_reuse.py
MUTANTS += [
    Mutant("explain-reuses-any-verdict", "engine",
           "explain takes any verdict of the check it is handed for 'forbidden': an allowed "
           "outcome is explained as forbidden",
           [("src/ptxmm/explanation/explain.py",
             '    return checked.holds is (cond.quantifier != "exists")\n', "    return True\n")]),
    Mutant("explain-reuse-reads-exists-only", "engine",
           "explain reads every handed verdict as an exists condition's: a ~exists or forall "
           "condition that holds (its target unreachable) is explained as allowed, one that fails "
           "as forbidden",
           [("src/ptxmm/explanation/explain.py",
             '    return checked.holds is (cond.quantifier != "exists")\n',
             "    return checked.holds is False\n")]),
]

# Issue 40, session 16 (the exchange at 1,024 threads ≤ 10 s): the grid-ending sites the barrier
# proof spares, symmetry classes by signature, static closures successors first — killed by
# tests/queries/test_barrier_sites.py, tests/engines/test_symmetry_signatures.py and
# tests/models/test_closure_dag.py
MUTANTS += [
    Mutant("barrier-sites-any-graph", "engine",
           "the grid-ending sites of the liveness graph are never asked, whatever the program: a trap "
           "reached only while another thread waits at a barrier some path skips is not reported",
           [("src/ptxmm/queries/sites.py", "        return False\n    return never_blocks(graph)\n",
             "        return False\n    return True\n")]),
    Mutant("barrier-sites-any-model", "engine",
           "the proof that spares the grid-ending site query is taken for a user's .cat model too, "
           "whose axioms the argument does not cover",
           [("src/ptxmm/queries/sites.py",
             "    if where.resolve() not in {p.resolve() for p in builtin_files().values()}:\n"
             "        return False\n", "")]),
    Mutant("symmetry-signature-private-locations", "engine",
           "the symmetry signature names every location, also those only one thread touches: two "
           "threads that swap their private locations are never compared, a class is split",
           [("src/ptxmm/semantics/symmetry.py", "e.agent, e.at, where(e.loc)) for e in evs)",
             "e.agent, e.at, e.loc) for e in evs)")]),
    Mutant("closure-dag-cycle-unseen", "engine",
           "the successors-first closure does not see a cycle: the pairs around it are left out",
           [("src/ptxmm/cat/relalg.py",
             "                    return None  # a cycle\n", "                    continue\n"),
            ("src/ptxmm/cat/relalg.py",
             "                if (acc >> a) & 1:\n                    return None\n", "")]),
]

# Issue 40 (a warp-collective kernel at <<<2, 64>>>): the collective proof that spares the hang query
# — killed by tests/queries/test_collective_proof.py
MUTANTS += [
    Mutant("collective-proof-any-order", "engine",
           "the collective proof holds whatever sequence each thread of a CTA uses: a lane that "
           "branches around a shfl.sync, or meets two collectives in the other order, is said to "
           "terminate",
           [("src/ptxmm/semantics/collective_proof.py",
             "        if seq.setdefault(eg.program.threads[t].placement.cta_key, mine) != mine:\n"
             "            return False\n", "")]),
    Mutant("collective-proof-spin-ignored", "engine",
           "the collective proof takes every stuck candidate for one the hang query encodes as false: "
           "a lane spinning for a flag no one sets, before a collective, is said to terminate",
           [("src/ptxmm/semantics/collective_proof.py",
             "    return any(ev[e].kind == Kind.B for e in events) or any(q == Const(0, 1) for q in eqs)",
             "    return True")]),
]
MUTANTS += [
    Mutant("sure-arrivals-some-path", "engine",
           "a thread that arrives at a wait's barrier instance on some finishing path is taken to arrive "
           "on every one: the exit pairs of a thread that may exit before it are dropped, and an exit no "
           "longer releases the wait",
           [("src/ptxmm/semantics/barrier_waits.py", "and done <= set(a.paths)", "and done & set(a.paths)")]),
]
MUTANTS += [
    Mutant("partner-index-constants-only", "engine",
           "the arrive → wait pairs of an arrive with constant operands leave out the waits whose "
           "operand is a register: a bar.sync on a loaded barrier number no longer synchronizes",
           [("src/ptxmm/semantics/barrier_waits.py",
             "        if kind is None or (kind != mine[0] and kind[0] == mine[0][0]):",
             "        if kind != mine[0] and kind is not None and kind[0] == mine[0][0]:")]),
]

# Issue 40 (the grid barrier): the counting lemmas of RMW chains (engines/z3/chains.COUNTING) —
# killed by tests/engines/test_rmw_chains.py
MUTANTS += [
    Mutant("chain-count-one-high", "engine",
           "the RMW at position k of a chain of adds reads init + c·(k+1): a grid barrier's last "
           "arrival is never seen",
           [("src/ptxmm/engines/z3/chains.py", "    return init + c * k\n",
             "    return init + c * (k + 1)\n")]),
]

# Issue 41 (explain in seconds): the fix search stopped at its cheapest solution, explain reusing
# the check `ptxmm explain` made for a kernel's findings, the fenced candidates built with the
# original's read-only fold — killed by
# tests/explanation/test_explain_known_check.py
MUTANTS += [
    Mutant("explain-cheapest-stop-early", "engine",
           "the missing ordering's fix search stops at the first dearer candidate even before a "
           "solution is found: MP's missing ordering is lost",
           [("src/ptxmm/explanation/fix.py",
             "return CHEAPEST_STOP and rank is None and bool(found) and \\\n"
             "        sum(c.cost for c in cs) > min(s.cost for s in found)",
             "return CHEAPEST_STOP and rank is None and \\\n"
             "        sum(c.cost for c in cs) > min((s.cost for s in found), default=0)")]),
    Mutant("fix-fold-hint-empty", "engine",
           "a fix candidate's fenced program is built with no read-only fold at all (and not "
           "unfolded first): its loads of read-only inputs read any value",
           [("src/ptxmm/explanation/fixjudge.py",
             "        if FOLD_HINT and fold is not None:\n",
             "        if FOLD_HINT and fold is not None:\n"
             "            fold = Fold((), fold.written, fold.waits)\n")]),
]

# Issue 42 (the missing mbarrier wait as a checked fix, explanation/waitfix.py): the parity of a
# slot's first wait, and the check of the waits — killed by tests/explanation/test_wait_fix.py
MUTANTS += [
    Mutant("wait-first-parity-zero", "engine",
           "the wait before a slot's first write names parity 0 (the fresh barrier's current phase) "
           "instead of the phase before it: the producer waits for an arrive that needs its own write",
           [("src/ptxmm/explanation/waitfix.py",
             "        return (mbar, *addr, 1)  # the phase before the first: complete on a fresh barrier",
             "        return (mbar, *addr, 0)  # the phase before the first: complete on a fresh barrier")]),
    Mutant("wait-fix-unchecked", "engine",
           "the derived waits are reported as a fix without the check of the changed kernel: wrong "
           "parities would be proposed as checked",
           [("src/ptxmm/explanation/fixfind.py",
             "    fixed = applied(prog, (c,))\n",
             "    return None\n    fixed = applied(prog, (c,))\n")]),
]

# Issue 40 (the grid barrier at 16 blocks): RMW chains in the liveness problem (queries.hangs.CHAINS) —
# killed by tests/queries/test_liveness_chains.py
MUTANTS += [
    Mutant("liveness-chain-read-unbound", "engine",
           "the hang query's stuck test leaves a chain RMW read (its rf derived from the chain's "
           "positions) unbound to a co-maximal write: a fetch-and-add poll in a loop hangs",
           [("src/ptxmm/queries/hangs.py", "        for (w, r) in [*pb.ch.rfv, *pb.ch.rf_chain]:\n",
             "        for (w, r) in pb.ch.rfv:\n")]),
]

# Issue 41 (explain and graph of the cub-tile-state kernels in seconds): a known witness fits a
# candidate's graph when every read it executes has a value (the reads of an acquire/release
# vector's element orders not chosen have none) — killed by tests/explanation/test_fix_vector_witness.py
MUTANTS += [
    Mutant("fix-witness-every-read-valued", "engine",
           "a witness fits a fix candidate's graph only with a value for every read on its paths, "
           "executed or not: no witness of a program with an acquire/release vector fits, and the "
           "engine judges every candidate (CUB's packed acq_rel tile state: 46 s to explain)",
           [("src/ptxmm/explanation/fixjudge.py",
             "                   and (not EXECUTED_READS or _may_run(e, vals)) for e in eg2.events)",
             "                   for e in eg2.events)")]),
]
MUTANTS += [
    Mutant("fix-split-no-witness", "engine",
           "a fix candidate that splits a vector access gets no map of the original's events: the "
           "engine judges every split (CUB's packed tile states: 43 engine checks to explain)",
           [("src/ptxmm/explanation/fixjudge.py",
             "            if not SPLIT_WITNESSES or not all(c.kind == \"split\" for c in changes):\n",
             "            if True:\n")]),
]
MUTANTS += [
    Mutant("fix-split-witness-wrong-copy", "engine",
           "a split candidate's engine witness is carried back to the copies of its elements that "
           "the split's order does NOT run: the kept witness reads nothing where the original runs",
           [("src/ptxmm/explanation/fixjudge.py",
             "runs = xs if len(xs) == 1 else [x for x in xs if evaluate(eg.events[x].cond, vals)]",
             "runs = xs if len(xs) == 1 else [x for x in xs if not evaluate(eg.events[x].cond, vals)]")]),
]

# Issue 41 (the 4-thread SC shape): the SAT enumeration's preprocessing must freeze every digit it
# reads — killed by tests/engines/test_sat_enumeration.py (where python-sat is installed: a dependency)
MUTANTS += [
    Mutant("sat-preprocess-freezes-one-digit", "engine",
           "the SAT enumeration's preprocessing freezes only the first varying digit: it may "
           "eliminate the observables' and the witness's digits, which the models then leave free",
           [(Z3SAT, "out = proc.process(rounds=1, freeze=frozen)",
             "out = proc.process(rounds=1, freeze=frozen[:1])")]),
]

# Issue 41 (the 4-thread SC shape): a report row's witness text read from the packed digits must be
# the decoded witness's — killed by tests/report/test_witness_text.py
MUTANTS += [
    Mutant("witness-text-rf-reversed", "engine",
           "a packed witness's JSON text writes each rf pair read-first: the report's rows name "
           "the wrong write for every read",
           [("src/ptxmm/engines/z3/witness.py",
             'rf = [(k, f"[{a}, {b}]") for (a, b), k in lay.rf]',
             'rf = [(k, f"[{b}, {a}]") for (a, b), k in lay.rf]')]),
]

# Issue 41 (explain and graph of CUB's unpacked tile state without fences in seconds): a fence
# inserted where the thread's build never came near takes the original's graph, unbuilt — killed
# by tests/explanation/test_fix_unreached.py; the candidate pairs shared between graphs of one
# shape re-read the fence.sc events — killed by tests/explanation/test_fix_shared_candidates.py
MUTANTS += [
    Mutant("fix-fence-reached-taken-unreached", "engine",
           "a fence inserted at a place the thread's build stepped (or fell through to) is taken as "
           "unreached: the candidate is judged on the original's graph, without the fence's event",
           [("src/ptxmm/semantics/unreached.py",
             "    if i <= 0 or i - 1 in at or i in at:",
             "    if i <= 0:")]),
    Mutant("fix-shared-candidates-stale-scf", "engine",
           "a fix candidate's graph patched from another of its shape keeps the other's fence.sc "
           "events: a fence made sc takes no place in the sc order of the witnesses judged",
           [("src/ptxmm/explanation/fixjudge.py",
             "        return Candidates(kept.rf, kept.co, scf, kept.writes_at)",
             "        return Candidates(kept.rf, kept.co, kept.scf, kept.writes_at)")]),
]

# Issue 41 (the 4-thread SC shape): a long SAT enumeration goes on in cubes, one per value of an
# observable; each cube's solver must hold that value — killed by
# tests/engines/test_sat_enumeration.py (the cubes' outcomes are one solver's, each once)
MUTANTS += [
    Mutant("sat-cubes-without-their-value", "engine",
           "the cubes of a long SAT enumeration do not fix the value they stand for: each cube "
           "enumerates every outcome not found before the split, so outcomes come several times",
           [("src/ptxmm/engines/z3/satenum.py",
             "run.swap(_solver(base + [[u] for u in units] + done))",
             "run.swap(_solver(base + done))")]),
]

# Issue 41 (explain and graph of CUB's packed acq_rel tile state in seconds): a split whose graph's
# paths are not the original's one for one takes the known witnesses path by path — killed by
# tests/explanation/test_fix_split_paths.py
MUTANTS += [
    Mutant("fix-split-paths-no-witness", "engine",
           "a split candidate whose graph has a path fewer than the original's (an out-of-bounds "
           "acquire vector's order no longer forks) gets no witness: the engine judges it (CUB's "
           "packed acq_rel tile state: 4 engine checks more to explain)",
           [("src/ptxmm/explanation/fixjudge.py",
             "                return eg2, PathSplit(self.eg, eg2, changes)",
             "                return eg2, {}")]),
    Mutant("fix-split-paths-compared", "engine",
           "a witness's path is matched with a changed graph's path only where their events lie on "
           "the same sets of paths: a split with a path fewer matches none",
           [("src/ptxmm/explanation/fixjudge.py",
             "self.elem2.get(t, {}), m, {}, same_paths=False):",
             "self.elem2.get(t, {}), m, {}, same_paths=True):")]),
]

# Issue 41 (explain and graph of CUB's packed acq_rel tile state in seconds): a split candidate's
# read-only fold found from the edited thread's unfolded build alone — killed by
# tests/explanation/test_fix_one_thread_fold.py
MUTANTS += [
    Mutant("fix-one-thread-fold-own-writes-dropped", "engine",
           "the read-only fold of a program whose one thread is edited leaves that thread's own "
           "writes out: a location only it writes is folded to its initial value, or the graph "
           "misses it among the locations written",
           [("src/ptxmm/semantics/unreached.py",
             "    writes = {e.loc for e in own if e.kind == Kind.W}.union(",
             "    writes = set().union(")]),
]

# Issue 41 (explain of CUB's unpacked tile state without fences in seconds): a witness that runs
# none of a patched candidate's changed events keeps its verdict from the graph patched from —
# killed by tests/explanation/test_fix_unchanged_witness.py
MUTANTS += [
    Mutant("fix-unchanged-witness-runs-changed", "engine",
           "a known witness's verdict on a graph patched from another is taken from that graph "
           "even when the witness runs an event the candidate changed: a strengthened access it "
           "runs is judged with its old semantics",
           [("src/ptxmm/explanation/fixjudge.py",
             "    if not ids:\n        return False\n    vals = dict(exe.values)\n",
             "    if True:\n        return False\n    vals = dict(exe.values)\n")]),
]
MUTANTS += [
    Mutant("fix-split-paths-co-not-transitive", "engine",
           "a witness carried path by path is taken as well formed though its co is not transitive "
           "(co(a, b) and co(b, c) without co(a, c))",
           [("src/ptxmm/explanation/fixjudge.py",
             "    if any((a, c) not in co for a, b in co for c in after.get(b, ()) if c != a):",
             "    if False:")]),
]

# Issue 42 (the playground over every example): a path guard's later operand names a read of a path
# not taken — killed by tests/ir/test_evaluate_guards.py; the page's drawing after its check reuses
# the check of the same text only — killed by tests/web/test_reuse.py; the pool hands a text's next
# request to the worker that checked it — killed by tests/web/test_reuse.py
MUTANTS += [
    Mutant("evaluate-guard-eager", "engine",
           "land/lor evaluate every operand: an execution's value that names a read of a path not "
           "taken (a lane's second try_wait, through shfl) raises KeyError",
           [("src/ptxmm/ir/values.py", "    if e.op in _SHORT:", "    if False and e.op in _SHORT:")]),
    Mutant("web-reuse-key-without-unroll", "engine",
           "a worker's kept check is taken for a request of another unroll bound: its graph and verdict "
           "are another program's",
           [("src/ptxmm/web/reuse.py", 'model_text if model_text is not None else "\\0", str(unroll)):',
             'model_text if model_text is not None else "\\0", ""):')]),
    Mutant("web-pool-no-preference", "engine",
           "the pool hands a text's next request to the first idle worker, not the one that checked it: "
           "the drawing after a check does the check's work again",
           [("src/ptxmm/web/pool.py",
             "            i = next((i for i, w in enumerate(self.free) if w is prefer), 0)",
             "            i = 0")]),
]

# Issue 40 (the grid barrier at 16 blocks): the value bounds of RMW chains
# (engines/z3/chains.VALUE_BOUNDS) — killed by tests/engines/test_rmw_chains.py
MUTANTS += [
    Mutant("chain-value-bound-one-high", "engine",
           "an RMW of a chain of adds that reads M + c·j needs j + 1 adds before it: the grid "
           "barrier's last arrival (it read n - 1) has no place left",
           [("src/ptxmm/engines/z3/chains.py", "z3.PbGe(before, j))", "z3.PbGe(before, j + 1))")]),
]

# Issue 41 (the slowest bundled kernels): the warp collectives' resolution remembers each
# instance's lanes (warp_collectives.FILL_MEMO) — killed by tests/kernel/test_build_shortcuts.py
# (and tests/kernel/test_warp_collectives.py); the loop analysis kept per tuple of instructions
# (builder.ANALYSE_BY_CODE) — killed by tests/kernel/test_build_shortcuts.py
MUTANTS += [
    Mutant("warp-lanes-memo-per-thread", "engine",
           "the lanes of a warp collective are remembered per thread, not per instance: every "
           "shuffle of a lane combines what its partners gave to its first one",
           [("src/ptxmm/semantics/warp_collectives.py", "hit = self.lane_memo.get((t, arrive))",
             "hit = self.lane_memo.get((t, -1))"),
            ("src/ptxmm/semantics/warp_collectives.py",
             "hit = self.lane_memo[(t, arrive)] = self._lanes(t, arrive)",
             "hit = self.lane_memo[(t, -1)] = self._lanes(t, arrive)")]),
    Mutant("loop-analysis-shared-by-all-code", "engine",
           "the loop analysis is kept under a key every thread shares: a kernel built after another "
           "takes the other's loops (headers, bodies, awaits)",
           [("src/ptxmm/semantics/builder.py", "    of = t.instrs if ANALYSE_BY_CODE else t",
             "    of = Thread if ANALYSE_BY_CODE else t")]),
    Mutant("barrier-phase-first-inverted", "engine",
           "the arrive → wait pairs of count-less barriers in the same phase are skipped instead of "
           "those in different phases: warp collectives and bar.sync release no wait",
           [("src/ptxmm/semantics/barrier_waits.py", "and self.ch.same_phase(a.eid, b.eid) is False",
             "and self.ch.same_phase(a.eid, b.eid) is True")]),
]

# Issue 40 (the grid barrier at 16 blocks, session 19): a chain write that does not run has
# position -1 (engines/z3/chains.IDLE_POSITION) — killed by tests/engines/test_chain_idle_positions.py
MUTANTS += [
    Mutant("chain-idle-position-zero", "engine",
           "a chain write that does not run takes position 0, the first write's place: an execution "
           "in which the grid barrier's reset does not run in some block has no first arrival",
           [("src/ptxmm/engines/z3/chains.py", "self.cs.append(z3.Implies(z3.Not(runs), p == -1))",
             "self.cs.append(z3.Implies(z3.Not(runs), p == 0))")]),
]

# Issue 40 (session 19): the race query asked before the outcome enumeration (queries.races.EARLY)
# — killed by tests/queries/test_early_races.py
MUTANTS += [
    Mutant("early-races-timeout-ignored", "engine",
           "the race query asked first passes the time limit and the check goes on as if it had "
           "answered: the enumeration runs past the deadline and the status is not the limit's",
           [("src/ptxmm/queries/checker.py", "            return None, e.reason\n",
             "            pass\n")]),
]

# Issue 40 (session 19): the liveness problem's hang query before its grid-ending sites
# (queries.hangs.HANGS_FIRST) — killed by tests/queries/test_liveness_query_order.py
MUTANTS += [
    Mutant("hangs-first-one-witness", "engine",
           "the hang query asked first stops at its first witness: a thread that hangs only in "
           "another execution is not reported",
           [("src/ptxmm/queries/hangs.py", "HANGS_FIRST else _hangs(eg, pb, pr, every, mem_fair, scoped)",
             "HANGS_FIRST else _hangs(eg, pb, pr, False, mem_fair, scoped)")]),
]

# Issue 40 (session 19): the sites asked with the early race query (queries.checker.SITES_WITH_RACES)
# — killed by tests/queries/test_early_races.py (which now also kills race-query-in-enumeration-scope
# above: with races.EARLY the race query runs before the enumeration, so that test turns it off)
MUTANTS += [
    Mutant("joint-sites-forgotten", "engine",
           "the joint query before the enumeration asks for races only and its 'none' also answers "
           "the sites: an out-of-bounds access in a race-free kernel is not reported",
           [("src/ptxmm/queries/checker.py",
             "            if where and pb.none_raised(pb.on_paths(where), SYMMETRIC_JOINT):",
             "            if where and pb.none_raised(symmetric=SYMMETRIC_JOINT):")]),
    Mutant("early-races-share-ends-the-check", "engine",
           "the race query asked first past its share of the time left ends the check: the "
           "verdict the plain order decides within the limit is lost",
           [("src/ptxmm/queries/checker.py", "        if not races.within_check(r.deadline):",
             "        if True:")]),
    Mutant("web-job-in-the-workers-context", "web",
           "a playground job runs in the Z3 context its worker's earlier jobs left: its witnesses "
           "(a finding's example outcome) follow what the worker checked before",
           [("src/ptxmm/web/jobs.py", "        start_fresh()  # the witnesses a fresh",
             "        pass  # the witnesses a fresh")]),
]

# Issue 41 (session 20): an enumeration split only where two parts hold observables — killed by
# tests/engines/test_enumeration_in_parts.py (test_a_part_without_observables_...)
MUTANTS += [
    Mutant("parts-without-observables-split", "engine",
           "a part without observables (the early race query's guarded clause) splits the "
           "enumeration: the part holding every observable is enumerated a Z3 model per outcome, "
           "not in SAT (x1l3 under ptx 2 s → 21 s)",
           [("src/ptxmm/engines/z3/enumerate.py",
             "        if sum(1 for _, o, _ in groups.values() if o) < 2:", "        if len(groups) < 2:")]),
]

# Issue 40 (session 20): the early race query's conflict budget (queries.races.EARLY_CONFLICTS) and
# the joint query under the symmetry breaking (queries.checker.SYMMETRIC_JOINT) — killed by
# tests/queries/test_early_races.py
MUTANTS += [
    Mutant("early-budget-stops-the-check", "engine",
           "an early race query past its conflict budget stops the check (status 'budget') instead "
           "of going on in the plain order",
           [("src/ptxmm/queries/checker.py", "    except OverBudget:\n        r.early.clear()\n", "")]),
    Mutant("early-budget-left-on", "engine",
           "the early race query's conflict budget is left on the solver: the enumeration and the "
           "later queries give up at it",
           [("src/ptxmm/engines/z3/problem.py", '            s.set("max_conflicts", _NO_TIMEOUT)',
             "            pass")]),
    Mutant("joint-symmetric-forgets-races", "engine",
           "the joint race-or-site query under the symmetry breaking asks for sites only: a racy "
           "kernel that reaches no site is reported race-free",
           [("src/ptxmm/engines/z3/problem.py",
             "self.s.add(z3.Implies(q, z3.Or(terms + ([] if goal is None else [goal]))))",
             "self.s.add(z3.Implies(q, z3.Or(([] if symmetric else terms)"
             " + ([] if goal is None else [goal]))))")]),
]

# Issue 40 (session 20): the co analysis's guarded closures on pair keys alone (cat.relalg.KEYS_ONLY)
# — killed by tests/engines/test_grid_keys_closure.py
MUTANTS += [
    Mutant("keys-closure-ignores-apart", "engine",
           "the keys-only closure adds a guarded pair through a guarded one whose ends never run "
           "together: the co analysis's closure has pairs the guarded Warshall does not",
           [("src/ptxmm/cat/relalg.py", "            more = (rk | dk) & ~apart(i) & ~rows.get(i, 0)",
             "            more = (rk | dk) & ~rows.get(i, 0)")]),
    Mutant("keys-closure-static-through-conditional", "engine",
           "the keys-only closure makes a path through a sometimes-executed pivot static: pairs "
           "the co analysis takes as known in every execution are not",
           [("src/ptxmm/cat/relalg.py", "                new = rk & impk & ~rows[i]",
             "                new = rk & ~rows[i]")]),
]

# Issue 40 (session 20): demand-driven closures (cat.interp.DEMAND_CLOSURES, cat/demand.py) —
# killed by tests/engines/test_grid_demand.py
MUTANTS += [
    Mutant("demand-skips-pairs-read-later", "engine",
           "the demand-driven Warshall skips an unwanted pair whose end is a pivot still to come: "
           "a later pivot composes through it, and wanted pairs lose disjuncts",
           [("src/ptxmm/cat/relalg.py",
             "not ((fut >> i) & 1 or (fut >> j) & 1 or (want(i, 0) >> j) & 1)",
             "not ((want(i, 0) >> j) & 1)")]),
    Mutant("demand-union-first-operand-only", "engine",
           "a union hands its demand to its first operand only: a closure read through a later "
           "operand computes too few pairs",
           [("src/ptxmm/cat/demand.py", "            case Union():\n                for c in node.args:",
             "            case Union():\n                for c in node.args[:1]:")]),
    Mutant("demand-intersection-own-skeleton", "engine",
           "an intersection restricts each operand's demand by that operand's own skeleton instead "
           "of the others': pairs read through the intersection are not computed",
           [("src/ptxmm/cat/demand.py", "                di = _restrict(di, self._s(o))",
             "                di = _restrict(di, self._s(c))")]),
]

# Issue 40 (session 20, the lead's mend of the s20-grid merge): the demand only up to
# interp.DEMAND_MAX_EVENTS events — killed by tests/engines/test_grid_demand.py
MUTANTS += [
    Mutant("demand-without-event-bound", "engine",
           "the demand of the closures is computed on graphs of any size: the __syncthreads exchange "
           "at 1,024 threads spends 62 s finding it (the whole check 7 s → 69 s)",
           [("src/ptxmm/cat/interp.py",
             "return closure_demands(stmts, base, live) if live.bit_count() <= DEMAND_MAX_EVENTS else None",
             "return closure_demands(stmts, base, live)")]),
]

# Trust (session 20, the lead): a stopped check's partial result is built without the watchdog's
# poke — killed by tests/cli/test_limits.py (test_a_stopped_check_is_not_poked_...)
MUTANTS += [
    Mutant("poke-while-reporting", "engine",
           "the watchdog pokes a check that has stopped while it builds its partial result: a "
           "check stopped with many outcomes found ends in the stop's exception, not its report",
           [("src/ptxmm/engines/watch.py", "or not self.main or self.stop.settled:", "or not self.main:")]),
]

# Issue 40 (session 21, the lead): base causality through the fence.sc order (cat/fence_order.py)
# — killed by tests/engines/test_fence_order.py
MUTANTS += [
    Mutant("fence-order-any-edge", "engine",
           "the rewrite applies when the closure's operand has a sync edge between two accesses (a "
           "release store, an acquire load): paths through it are no longer composed",
           [("src/ptxmm/cat/fence_order.py",
             "    return all((fences >> a) & 1 and (fences >> b) & 1 for a, b in r.may)",
             "    return True")]),
    Mutant("fence-order-without-ms", "engine",
           "the rewrite applies to fences that are not morally strong (.cta fences of two CTAs), "
           "which Fence-SC does not order",
           [("src/ptxmm/cat/fence_order.py", "        if (ms.must.get(f, 0) & others) != others:",
             "        if False:")]),
    Mutant("fence-order-unexecuted-fence", "engine",
           "a fence-order disjunct leaves out the execution of its first fence: a fence on a path "
           "not taken orders the pair through its free rank",
           [("src/ptxmm/cat/fence_order.py",
             "        exf = True if f == a or (implied[a] >> f) & 1 else ex[f]", "        exf = True")]),
    Mutant("fence-order-drops-sync-edges", "engine",
           "the rewritten closure leaves out the operand's own fence-to-fence edges (sync patterns): "
           "Fence-SC no longer puts them in the fence order",
           [("src/ptxmm/cat/fence_order.py", "    terms = [] if edge is None else [edge]",
             "    terms = []")]),
    Mutant("fence-order-not-monotone", "engine",
           "the model's Fence-SC operand may subtract the closure it reaches through a union",
           [("src/ptxmm/cat/fence_order.py", "            if ok and _monotone_in(b, name, once, set(defs)):",
             "            if ok:")]),
    Mutant("fence-order-rebound-names", "engine",
           "sc, ms, Fsc or po may be bound again after the closure: the axiom reads another value",
           [("src/ptxmm/cat/fence_order.py",
             "            ok = all(at.get(n, -1) < at[name] for n in fixed)  # bound before the closure",
             "            ok = True")]),
]
MUTANTS += [
    Mutant("fence-order-po-not-closed", "engine",
           "the rewrite applies where po's static pairs are not transitive: a fence two po steps "
           "after an event is not among its fences",
           [("src/ptxmm/cat/fence_order.py",
             "            if rows.get(b, 0) & ~row:\n                return False",
             "            if False:\n                return False")]),
]
