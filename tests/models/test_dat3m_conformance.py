"""The Dat3M PTX corpus (../shared/conformance, read in place, never copied) against its expected
results. Skips cleanly when the corpus is absent. The asserted agreement is what the closing
note of the conformance issue reports, so a regression cannot pass silently."""

from __future__ import annotations

import pytest

from ptxmm.testing.runner import run_tests

# Known disagreements, each argued next to its entry (none at present).
KNOWN: set[str] = set()


# (model, CSV column, tests rated in that column): the current model is compared with the newest
# rated version. Dat3M rates the 102 mixed-proxy tests under 7.5 only.
MODELS = [("ptx", "ptx-v7.5", 189), ("ptx-v7.5", "ptx-v7.5", 189), ("ptx-v6.0", "ptx-v6.0", 87)]


@pytest.fixture(scope="module", params=MODELS, ids=[m for m, _, _ in MODELS])
def results(request, dat3m):
    model, column, rated = request.param
    dirs = [str(dat3m / "PTX" / d) for d in ("Manual", "Barrier", "Nvidia")]
    return rated, run_tests(dirs, model, str(dat3m / "expected.csv"), column, jobs=2)


def test_every_test_parses_and_every_rated_one_agrees(results):
    rated, rs = results
    assert len(rs) == 189
    assert not [(r.path, r.status, r.error) for r in rs if r.status not in ("agree", "DISAGREE", "unrated")]
    disagree = {r.path.rsplit("/", 1)[1].removesuffix(".litmus") for r in rs if r.status == "DISAGREE"}
    assert disagree <= KNOWN, disagree - KNOWN
    assert sum(r.status == "agree" for r in rs) == rated
    assert sum(r.status == "unrated" for r in rs) == 189 - rated


def test_proxy_tests_are_checked_not_rejected(results):
    rated, rs = results
    proxy = [r for r in rs if "/proxy/" in r.path]
    assert len(proxy) == 102
    assert all(r.status == ("agree" if rated == 189 else "unrated") for r in proxy)


BRUTE_MAX = 3000  # candidate executions: the corpus tests brute force enumerates in well under 1 s


@pytest.mark.slow  # ~50 s; Z3 = brute force by default: tests/engines/, every bundled litmus test
def test_both_engines_give_the_same_outcomes_on_the_corpus(dat3m):
    """Every corpus test small enough for brute force: Z3 and the enumerator give the same outcome
    set (they once differed on the quorum barrier tests, where the enumerator fixed each
    arrival's phase instead of choosing it; `ptxmm check`'s auto engine then picked the wrong one)."""
    import ptxmm
    from ptxmm.engines import candidate_space
    from ptxmm.semantics.builder import build
    from ptxmm.semantics.vocab import candidates

    compared, differ = 0, []
    for f in sorted((dat3m / "PTX").rglob("*.litmus")):
        prog = ptxmm.load(str(f))
        eg = build(prog)
        if candidate_space(eg, candidates(eg), BRUTE_MAX) is None:
            continue
        z3, brute = (ptxmm.check(prog, "ptx", engine=e, flags=False) for e in ("z3", "brute"))
        compared += 1
        if z3.outcome_set != brute.outcome_set:
            differ.append(f.name)
    assert not differ
    assert compared >= 120, compared


@pytest.mark.parametrize("model", ["ptx-v7.5", "ptx-v6.0"])
def test_liveness_corpus_agrees_everywhere(model, dat3m_liveness):
    """Dat3M's PTX liveness tests (issue 26): 'no execution hangs' under fair progress, 100 %
    agreement, 0 errors; both verdicts occur (the barrier tests rated 0 hang)."""
    rs = run_tests([str(dat3m_liveness / "PTX")], model, str(dat3m_liveness / "expected.csv"), model, jobs=2,
                   liveness="fair")
    assert len(rs) == 47
    assert [(r.path, r.status, r.error) for r in rs if r.status != "agree"] == []
    assert {r.holds for r in rs} == {True, False}
