"""tests/durations.py: the slowest-first file order that scripts/test.sh gives xdist."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import durations

TABLE = """
============================= slowest durations ==============================
30.10s call     tests/docs/test_site.py::test_site_builds_in_strict_mode
12.00s setup    tests/docs/test_site.py::test_every_page_opens_in_chromium_without_errors
2.50s call     tests/eval/test_a.py::test_x[a::b]
0.60s call     tests/eval/test_b.py::test_y
0.40s teardown tests/eval/test_b.py::test_y
26.80s call     tests/train/test_verl_autotool.py::test_against_real_verl_classes_in_their_own_env
(12 durations < 0.005s hidden.  Use -vv to show these durations.)
"""


def test_parse_sums_setup_call_and_teardown_per_file() -> None:
    table = durations.parse(TABLE.splitlines())
    assert table == {
        "tests/docs/test_site.py": 42.1,
        "tests/eval/test_a.py": 2.5,
        "tests/eval/test_b.py": 1.0,
    }
    assert list(table) == ["tests/docs/test_site.py", "tests/eval/test_a.py", "tests/eval/test_b.py"]
    # The verl test waits for the background set-up: never recorded, so it never starts first.
    assert "tests/train/test_verl_autotool.py" not in table


class _Item:  # the one attribute of pytest.Item that the order reads
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_order_puts_slow_files_first_and_keeps_each_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "d.json").write_text('{"tests/slow.py": 50.0, "tests/mid.py": 5.0}')
    monkeypatch.setattr(durations, "FILE", tmp_path / "d.json")
    ids = [
        "tests/a.py::t1", "tests/a.py::t2",  # unknown, 2 tests
        "tests/mid.py::t1",
        "tests/b.py::t1", "tests/b.py::t2", "tests/b.py::t3",  # unknown, 3 tests
        "tests/slow.py::t2", "tests/slow.py::t1",
    ]  # fmt: skip
    items = [_Item(i) for i in ids]
    durations.order_slowest_first(items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        "tests/slow.py::t2", "tests/slow.py::t1",  # slowest recorded first, its own order kept
        "tests/mid.py::t1",
        "tests/b.py::t1", "tests/b.py::t2", "tests/b.py::t3",  # then unknown files, more tests first
        "tests/a.py::t1", "tests/a.py::t2",
    ]  # fmt: skip
