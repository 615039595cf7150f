"""The atomic writer's folder form: a reader sees no folder or the whole one."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.types.atomic import atomic_folder


def test_a_folder_is_published_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "split"
    with atomic_folder(target) as tmp:
        (tmp / "a.txt").write_text("a")
        assert not target.exists()  # nothing visible while it is filled
    assert sorted(p.name for p in target.iterdir()) == ["a.txt"]
    assert [p.name for p in target.parent.iterdir()] == ["split"]  # no temporary folder left

    failed = tmp_path / "failed"
    with pytest.raises(RuntimeError), atomic_folder(failed) as tmp:
        (tmp / "half.txt").write_text("half")
        raise RuntimeError("stopped half way")
    assert not failed.exists() and list(tmp_path.iterdir()) == [tmp_path / "deep"]


def test_the_first_folder_published_stays(tmp_path: Path) -> None:
    target = tmp_path / "templates"
    with atomic_folder(target) as mine:
        (mine / "x.j2").write_text("mine")
        target.mkdir()  # another process publishes first, with its own copy
        (target / "x.j2").write_text("theirs")
        (target / "y.j2").write_text("theirs")
    assert (target / "x.j2").read_text() == "theirs" and not mine.exists()
