"""Tensor copies on a GPU (skipped without CuPy and a device; issue 27, item 4): the four
tma-tensor examples cross-validate with 0 violations, every histogram total equals the instances
run, and the copies move the box (the load's consumer reads the box's words, the store's reader
the stored word) — proof that the encoded map, the scaled coordinates and the instance row work."""

from __future__ import annotations

import pytest
from support import ROOT, gpu_test_marks

pytestmark = gpu_test_marks()

HOP = ROOT / "examples" / "hopper"
NAMES = ("tma-tensor-load-2d", "tma-tensor-load-2d-no-expect-tx", "tma-tensor-store",
         "tma-tensor-store-no-fence")


@pytest.fixture(scope="module")
def results():
    from ptxmm.device.batch import Job, plan
    from ptxmm.device.crossval import crossval
    from ptxmm.device.env import PRESETS

    out = {}
    for item in plan([HOP / f"{n}.ptx" for n in NAMES], model="ptx"):
        assert isinstance(item, Job), item  # none of the four is refused any more
        out[item.prog.name] = crossval(item.prog, PRESETS["barrier"], 0.3,
                                       prepared=(item.check, item.layout), timeout_s=30)
    return out


def _values(cr, key: str) -> dict[int | None, int]:
    seen: dict[int | None, int] = {}
    for o in cr.run.observed:
        v = dict(o.outcome.values)[key]
        seen[v] = seen.get(v, 0) + o.count
    return seen


def test_tensor_examples_never_violate(results):
    assert len(results) == 4
    for name, cr in results.items():
        run = cr.run
        assert not cr.violations, (name, cr.violations)
        assert run.checksum_ok and run.instances > 0, name
        assert sum(o.count for o in run.observed) + run.dnf == run.instances, name


def test_the_copies_move_the_box(results):
    load = results["TMA-tensor-load-2d"]
    assert load.weak == 0  # forbidden: the consumer never misses the box
    assert _values(load, "T1:%r0").get(2, 0) > 0 and _values(load, "T1:%r3").get(7, 0) > 0
    store = results["TMA-tensor-store"]
    assert store.weak == 0 and _values(store, "T0:%r0").get(9, 0) > 0
