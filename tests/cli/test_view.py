"""``eviseek view`` on a run directory and on one episode folder."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from tests.viewer.conftest import episode, pristine_run, run_copy  # noqa: F401  (fixtures)


def test_view_run_dir_writes_pages_and_index(run_copy: Path) -> None:  # noqa: F811
    r = CliRunner().invoke(app, ["view", str(run_copy)])
    assert r.exit_code == 0, r.output
    index = run_copy / "report" / "episodes" / "index.html"
    assert "wrote 3 episode page(s)" in r.output and f"index: {index}" in r.output
    assert sorted(p.name for p in (run_copy / "report" / "episodes").rglob("*.html")) == [
        "align-007.html",
        "align-007.html",
        "align-007.html",
        "index.html",
    ]


def test_view_episode_dir_and_open(run_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)
    ep = episode(run_copy, "passive")
    r = CliRunner().invoke(app, ["view", str(ep), "--open", "--copy-images"])
    assert r.exit_code == 0, r.output
    page = ep / "episode.html"
    assert page.is_file() and (ep / "episode_files").is_dir()
    assert opened == [page.resolve().as_uri()]
    out = run_copy / "elsewhere" / "p.html"
    r = CliRunner().invoke(app, ["view", str(ep / "trajectory.json"), "--out", str(out)])
    assert r.exit_code == 0 and out.is_file(), r.output


def test_view_bad_paths_are_one_line_errors(run_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    r = CliRunner().invoke(app, ["view", str(tmp_path / "nothing")])
    assert r.exit_code == 1
    assert "is neither a run directory (with episodes/) nor an episode folder" in r.output
    r = CliRunner().invoke(app, ["view", str(run_copy), "--out", str(tmp_path / "x.html")])
    assert r.exit_code != 0 and "--out applies to one episode" in r.output
    (episode(run_copy, "passive") / "trajectory.json").write_text("{broken")
    r = CliRunner().invoke(app, ["view", str(run_copy)])
    assert r.exit_code == 1 and r.output.startswith("error: ") and "is not valid JSON" in r.output
