"""Issue "nothing silently wrong": each mistake a user reported, with its exact input, is a located
error (message and file:line:col asserted) or gets the right verdict."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.errors import PtxmmError


def _err(text: str) -> PtxmmError:
    with pytest.raises(PtxmmError) as e:
        ptxmm.parse(text, "t.ptx")
    return e.value


CASES = [
    # (name, program, message fragment, line, col)
    ("register never written",
     ".global .u32 x = 0;\n.thread T0 { st.global.u32 [x], %r5; }\nexists (x == 0)\n",
     "reads %r5, which thread T0 never writes", 2, 14),
    ("condition register never written",
     ".global .u32 x = 0;\n.thread T0 { ld.global.u32 %r0, [x]; }\nexists (T0:%r1 == 0)\n",
     "the condition names T0:%r1, which thread T0 never writes", 3, 9),
    ("duplicate label",
     ".global .u32 x = 0;\n.thread T0 { L: st.global.u32 [x], 1; bra L2; L: st.global.u32 [x], 2; L2: }\n"
     "exists (x == 1)\n",
     "label L is defined twice in thread T0", 2, 47),
    ("two .expect",
     ".expect allowed\n.expect forbidden\n.global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\n"
     "exists (x == 1)\n",
     "a second .expect", 2, 9),
    ("u64 store to a u32 location",
     ".global .u32 x = 0;\n.thread T0 { st.global.u64 [x], 1; }\nexists (x == 1)\n",
     "accesses x with 64 bits, but x is a .u32", 2, 14),
    ("u32 location initialised to 2^32",
     ".global .u32 x = 4294967296;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n",
     "4294967296 does not fit location x (.u32)", 1, 18),
    ("u32 location initialised to -1",
     ".global .u32 x = 0;\n.global .u32 y = -1;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n",
     "-1 does not fit location y (.u32)", 2, 18),
    ("predicate never set",
     ".global .u32 x = 0;\n.thread T0 { @%p0 st.global.u32 [x], 1; }\nexists (x == 1)\n",
     "reads %p0, which thread T0 never writes", 2, 19),
    ("unknown location in the condition, on its own line",
     ".global .u32 x = 0;\n.thread T0 {\n  st.global.u32 [x], 1;\n}\nexists (y == 1)\n",
     "the condition names unknown location y", 5, 9),
    ("unknown thread in the condition",
     ".global .u32 x = 0;\n.thread T0 { ld.global.u32 %r0, [x]; }\nexists (T7:%r0 == 1)\n",
     "the condition names unknown thread T7", 3, 9),
    ("2000 nested negations",
     ".global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\nexists (" + "!" * 2000 + "(x == 1))\n",
     "nests operators more than 100 deep", 3, 105),
]


@pytest.mark.parametrize("name,text,message,line,col", CASES, ids=[c[0] for c in CASES])
def test_mistake_is_a_located_error(name, text, message, line, col):
    e = _err(text)
    assert message in str(e), str(e)
    assert (e.pos.file, e.pos.line, e.pos.col) == ("t.ptx", line, col), str(e)
    assert e.hint, f"{name}: no hint"


def test_initial_register_value_is_used():
    p = ptxmm.parse(".global .u32 x = 0;\n.thread T0 { .reg .u32 %r5 = 7; st.global.u32 [x], %r5; }\n"
                    "exists (x == 7)\n")
    assert ptxmm.check(p).holds
