"""`ptxmm test -j N`: tests go to the workers by shape hint (so that each worker's shape memo answers
the tests of a shape it has seen), and the results are those of one process, in file order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptxmm.campaigns.gen import GenOptions, generate
from ptxmm.cat.parser import builtin_files, load_model
from ptxmm.syntax import ptx_fast
from ptxmm.testing import runner
from ptxmm.testing.runner import TASK_MIN, TASK_SPLIT, run_tests, shape_hint, tasks

HOLDS = ".global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n"
TYPO = ".global .u32 x = 0;\n.thread T0 { st.glbal.u32 [x], 1; }\nexists (x == 1)\n"


def test_the_hint_drops_each_relaxations_semantics_and_scope():
    assert shape_hint("d/MP+fence.sc.cta+addr.ptx") == "MP+fence+addr"
    assert shape_hint("MP+fence.acq_rel.gpu+addr.litmus") == "MP+fence+addr"
    assert shape_hint("SB+po+po.ptx") == "SB+po+po"
    assert shape_hint("x/mp-relaxed-acquire.ptx") == "mp-relaxed-acquire"


names = st.lists(st.sampled_from(["MP+po+addr", "MP+fence.sc.cta+addr", "SB+po+po", "LB+addrs",
                                  "Z6+fence.sc.gpu+po+fence.acq_rel.cta", "odd.name", "x"]),
                 max_size=300)


@settings(max_examples=60, deadline=None)
@given(names, st.integers(1, 8))
def test_every_test_is_in_one_task_and_a_small_group_is_never_split(paths, jobs):
    ts = tasks(paths, jobs)
    flat = sorted(i for t in ts for i in t)
    assert flat == list(range(len(paths)))
    assert [len(t) for t in ts] == sorted((len(t) for t in ts), reverse=True)
    cap = max(TASK_SPLIT, -(-len(paths) // (4 * jobs)))
    task_of = {i: k for k, t in enumerate(ts) for i in t}
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(paths):
        groups.setdefault(shape_hint(p), []).append(i)
    for g in groups.values():
        if len(g) <= cap:
            assert len({task_of[i] for i in g}) == 1
        else:
            assert len({task_of[i] for i in g}) <= -(-len(g) // cap) + 1
    assert all(len(t) >= TASK_MIN for t in ts[:-1])


def _suite(tmp_path, n=40):
    files = []
    for g in list(generate(GenOptions(size=4)))[:n]:
        f = tmp_path / f"{g.name}.ptx"
        f.write_text(g.text())
        files.append(f)
    (tmp_path / "typo.ptx").write_text(TYPO)
    (tmp_path / "holds.ptx").write_text(HOLDS)
    return files


def _rows(results):
    return [(r.path, r.status, r.holds, r.expected, r.error, r.unknown) for r in results]


def test_two_workers_give_the_results_of_one_process_in_file_order(tmp_path):
    _suite(tmp_path)
    one = run_tests([str(tmp_path)], "sc", jobs=1)
    two = run_tests([str(tmp_path)], "sc", jobs=2)
    assert _rows(two) == _rows(one)
    assert [r.path for r in two] == sorted(r.path for r in two)
    assert any(r.status == "error" for r in two) and any(r.holds for r in two)
    assert any(r.holds is False for r in two)


def test_an_interrupted_parallel_run_keeps_what_finished_in_file_order(tmp_path):
    _suite(tmp_path)
    results: list = []
    calls = []

    def progress():
        calls.append(1)
        if len(calls) == 12:
            raise KeyboardInterrupt

    try:
        run_tests([str(tmp_path)], "sc", jobs=2, progress=progress, results=results)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    assert len(results) == 12
    paths = [r.path for r in results]
    assert paths == sorted(paths)


def test_the_workers_are_given_the_checker_loaded(monkeypatch):
    seen = []
    monkeypatch.setattr(runner, "_preload", seen.append)
    monkeypatch.setattr(runner, "ProcessPoolExecutor", _InProcess)
    assert list(runner._in_workers([("a.ptx", "sc"), ("b.ptx", "sc")], 2)) == [([0, 1], ["a.ptx", "b.ptx"])]
    assert seen == ["sc"]


class _InProcess:
    """A pool that runs each task here, at once, on a stand-in for the worker's function."""

    def __init__(self, **_):
        pass

    def submit(self, _fn, work):
        from concurrent.futures import Future

        f = Future()
        f.set_result([w[0] for w in work])
        return f

    def shutdown(self, **_):
        pass


def test_a_built_in_model_by_name_is_the_model_of_its_path():
    assert load_model("sc") is load_model(str(builtin_files()["sc"]))
    assert load_model("ptx") is not load_model("sc")


def test_a_test_name_line_is_read_where_it_stands_and_not_kept():
    before = len(ptx_fast._CACHE)
    a = ptx_fast.parse_fast("\n.test Unique_Name_1\n.global .u32 x = 0;\n")
    b = ptx_fast.parse_fast(".test Unique_Name_2 \"d\";\n")
    assert not any(".test Unique_Name" in k[0] for k in ptx_fast._CACHE)
    assert len(ptx_fast._CACHE) <= before + 1
    tok = a.children[0].children[0]
    assert (tok.value, tok.line, tok.column, tok.start_pos, tok.end_pos) == ("Unique_Name_1", 2, 7, 7, 20)
    assert [t.type for t in b.children[0].children] == ["TESTNAME", "STRING"]


def test_a_generated_tests_key_and_a_windows_path_have_a_hint_too():
    assert shape_hint("gen:MP+fence.sc.cta+addr") == shape_hint("gen:MP+fence.acq_rel.gpu+addr")
    assert shape_hint("gen:MP+fence.sc.cta+addr") != shape_hint("gen:MP+po+addr")
    assert shape_hint("d\\MP+fence.sc.cta+addr.litmus") == "MP+fence+addr"


@settings(max_examples=30, deadline=None)
@given(names, st.integers(1, 4), st.integers(1, 9))
def test_a_stream_is_batched_by_shape_a_window_at_a_time(keys, jobs, batch):
    from ptxmm.campaigns.executors import WINDOW_BATCHES, by_shape
    from ptxmm.campaigns.stream import Item

    items = [Item(f"gen:{k}#{i}") for i, k in enumerate(keys)]
    got = list(by_shape(iter(items), batch, jobs))
    assert sorted(it.key for b in got for it in b) == sorted(it.key for it in items)
    window = WINDOW_BATCHES * jobs * batch
    pos = {it.key: i for i, it in enumerate(items)}
    for b in got:  # never a batch across two windows
        assert len({pos[it.key] // window for it in b}) == 1


def _scan(s: str, expected: dict) -> tuple:
    """The lookup as a scan of every row (the rule, stated plainly)."""
    for k, v in expected.items():
        if s.endswith("/" + k) or s == k:
            return True, v
    return False, None


parts = st.sampled_from(["PTX", "Manual", "MP.litmus", "SB.litmus", "a", "", "x.ptx"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(parts, min_size=1, max_size=4), st.sampled_from([True, False, None])),
                max_size=12), st.lists(parts, min_size=1, max_size=5))
def test_the_csv_lookup_is_the_first_row_the_path_ends_with(rows, path):
    from pathlib import PurePosixPath

    expected: dict = {}
    for k, v in rows:
        expected.setdefault("/".join(k), v)
    s = "/".join(path)
    assert runner._lookup(PurePosixPath(s), expected) == _scan(PurePosixPath(s).as_posix(), expected)
