"""Hopper synchronization (docs/hopper.md): every example of examples/hopper/ gets its expected
verdict from both engines, with equal outcome sets. Each rule on a small program of its own is in
this folder by family: test_mbarrier, test_cluster_barriers, test_async_proxy, test_bulk_copies,
test_tensor_copies, test_wgmma_and_async_forms, test_isa_async_proxy, test_instruction_forms."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import ROOT, agree

import ptxmm

EXAMPLES = sorted((ROOT / "examples" / "hopper").glob("*.ptx"))
# every example with both engines: the brute-force engine's model-guarded pruning (issue 27,
# src/ptxmm/engines/prune.py) brings the largest (PipelineTmaAsync, 44 events) within seconds;
# tests/engines/test_pruned_rf_search.py compares their findings as well


def test_examples_are_there():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_verdict_both_engines(path: Path):
    prog = ptxmm.load(path)
    assert prog.expect is not None
    assert agree(prog).holds == prog.expect
