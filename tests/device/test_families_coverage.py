"""tools/families.py: the generator is deterministic, and the coverage table classifies
variants by placement and by what their SASS leaves unordered (CPU only; gaps given by hand)."""

from support import tool_module

fam = tool_module("families")


def test_sample_is_deterministic_and_first_variant_is_the_baseline():
    a, b = fam.sample(3, 14), fam.sample(3, 14)
    assert [v.tag() for v in a] == [v.tag() for v in b] and len(a) == 3 * len(fam.SHAPES)
    assert a[0].tag() == "Wx.rlx.gpu Wy.rlx.gpu | Ry.rlx.gpu Rx.rlx.gpu @ctas 01"


def _m(tag: str) -> dict:
    return {"name": "X-00", "file": "X-00.ptx", "family": "X", "tag": tag,
            "ctas": len(set(tag.split("@ctas ")[1]))}


def test_hw_class():
    assert fam.hw_class(_m("a | b @ctas 00"), [["none"], ["none"]]) == "one CTA"
    ordered = fam.hw_class(_m("a | b @ctas 01"), [["membar.gpu"], ["load-wait"]])
    assert ordered == "across CTAs, every pair ordered at .gpu in SASS"
    # the weakly ordered reader (membar.cta only) shares CTA 1 with the other thread of CTA 1
    shared = fam.hw_class(_m("w | r | r2 @ctas 011"), [[], ["membar.cta"], ["membar.gpu"]])
    assert shared == "across CTAs, weakly ordered threads share a CTA"
    alone = fam.hw_class(_m("w | r | r2 @ctas 011"), [["none"], ["membar.gpu"], ["membar.gpu"]])
    assert alone == "across CTAs, a weakly ordered thread alone in its CTA"


def test_merge_keeps_the_first_run_and_unions_sightings_on_request():
    ran = {"status": "ran", "file": "d/X-00.ptx", "name": "X-00", "condition_instances": 0}
    seen = ran | {"file": "e/X-00.ptx", "condition_instances": 5}
    skipped = {"status": "not run", "file": "X-01.ptx"}
    first = fam.merge([{"tests": [ran, skipped]}, {"tests": [seen]}], union=False)["tests"]
    assert first[0]["condition_instances"] == 0 and first[1]["status"] == "not run"
    both = fam.merge([{"tests": [ran]}, {"tests": [seen]}])["tests"]
    assert both[0]["condition_instances"] == 5
