"""Written pages: content, escaping, self-containment, the run layout, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eviseek.errors import ConfigError
from eviseek.viewer import episode_page_path, run_viewer_index, write_episode_page, write_run_viewer
from tests.viewer.conftest import episode
from tests.viewer.htmlq import Page
from tests.viewer.synthetic import (
    NOTE_WITH_MARKUP,
    QID,
    SCRIPT_IN_REPLY,
    TAG_IN_ANSWER,
    alignment_question,
)


def _page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def test_eviseek_page_shows_plan_frames_board_and_answer(pristine_run: Path, tmp_path: Path) -> None:
    out = write_episode_page(episode(pristine_run, "eviseek"), tmp_path / "ev.html", alignment_question())
    p = _page(out)
    assert p.text("question-text").startswith("Are the red cube, the blue ball")
    assert p.text("contract-kind") == "yes_no" and "(A) yes; (B) no" in p.text("contract")
    assert p.text("mode") == "active" and p.text("agent") == "eviseek"

    assert [d.attrs["data-demand-id"] for d in p.by_testid("demand")] == ["1", "2"]
    assert [s.attrs["data-status"] for s in p.by_testid("subtask")] == ["done", "timed_out", "pending"]
    assert len(p.by_testid("legend-entry")) == 3
    assert len(p.one("timeline").children) == 6  # one coloured segment per step

    frames = p.by_testid("frame")
    assert len(frames) == 7
    assert [f.attrs["data-frame-id"] for f in frames if f.attrs["data-kept"] == "true"] == ["4", "6"]
    assert [f.attrs["data-frame-id"] for f in frames if f.attrs["data-in-answer"] == "true"] == ["4", "6"]
    assert [f.attrs.get("data-subtask") for f in frames] == [None, "1", "1", "1", "1", "2", "2"]
    assert len(p.by_testid("subtask-bar")) == 6
    assert [" ".join(a.text.split()) for a in p.by_testid("action")][:2] == ["move_up", "move_up"]
    assert "blocked by the table edge" in " ".join(p.by_testid("feedback")[4].text.split())

    assert len(p.by_testid("board-item", removed="false")) == 2
    assert len(p.by_testid("board-item", removed="true")) == 1
    assert NOTE_WITH_MARKUP in [" ".join(n.text.split()) for n in p.by_testid("board-note")]
    assert [d.text for d in p.by_testid("board-demand")] == ["D1", "D2", "D1"]
    assert [a.attrs["data-frame-id"] for a in p.by_testid("answer-image")] == ["4", "6"]

    assert p.text("answer") == "yes" and p.text("truth") == "yes"
    assert p.text("verdict").startswith("correct") and p.text("support").startswith("full")
    assert (p.text("steps"), p.text("calls"), p.text("tokens")) == ("6", "6", "1,176")
    assert [e.attrs["data-kind"] for e in p.by_testid("event")] == ["parse_failure", "subtask_timeout"]
    assert [c.attrs["data-stage"] for c in p.by_testid("call")][-1] == "answer"


def test_model_text_is_escaped_not_executed(pristine_run: Path, tmp_path: Path) -> None:
    out = write_episode_page(episode(pristine_run, "single_model"), tmp_path / "sm.html")
    html = out.read_text(encoding="utf-8")
    assert SCRIPT_IN_REPLY not in html and TAG_IN_ANSWER not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=" in html
    p = Page(html)
    assert p.tags("script") == []  # the page carries no script at all
    assert all(not k.startswith("on") for e in p.elements for k in e.attrs)
    # The text survives intact for the reader.
    assert p.text("raw-answer") == TAG_IN_ANSWER + " no"
    assert SCRIPT_IN_REPLY in p.by_testid("call-output")[0].text
    ev = _page(write_episode_page(episode(pristine_run, "eviseek"), tmp_path / "ev.html"))
    assert "<b>bold?</b>" not in ev.html and "&lt;b&gt;bold?&lt;/b&gt;" in ev.html


def test_single_model_and_passive_pages_omit_what_does_not_apply(pristine_run: Path, tmp_path: Path) -> None:
    sm = _page(write_episode_page(episode(pristine_run, "single_model"), tmp_path / "sm.html"))
    for absent in ("plan", "demands", "subtasks", "legend", "timeline", "board", "mode"):
        assert sm.by_testid(absent) == [], absent
    assert len(sm.by_testid("frame")) == 5 and sm.by_testid("frame", kept="true") == []
    assert len(sm.by_testid("frame", in_answer="true")) == 3
    assert sm.text("verdict").startswith("incorrect") and sm.text("support").startswith("partial")

    pa = _page(write_episode_page(episode(pristine_run, "passive"), tmp_path / "pa.html"))
    assert len(pa.by_testid("frame")) == 1 and pa.by_testid("subtask-bar") == []
    assert pa.text("mode") == "passive" and pa.text("steps") == "0"
    assert len(pa.by_testid("answer-image")) == 1 and pa.by_testid("events-section") == []


def test_embedded_page_is_one_file_that_can_move(pristine_run: Path, tmp_path: Path) -> None:
    out = write_episode_page(episode(pristine_run, "eviseek"), tmp_path / "a" / "ev.html")
    p = _page(out)
    srcs = [img.attrs["src"] for img in p.tags("img")]
    assert len(srcs) == 7 + 3 + 2  # frames, board items (one removed), answer images
    assert all(s.startswith("data:image/jpeg;base64,") for s in srcs)
    assert "http://" not in p.html and "https://" not in p.html and "<link" not in p.html
    assert sorted(x.name for x in out.parent.iterdir()) == ["ev.html"]


def test_copy_mode_links_full_images_relatively(pristine_run: Path, tmp_path: Path) -> None:
    report = tmp_path / "report"
    out = write_episode_page(episode(pristine_run, "eviseek"), report / "ev.html", images="copy")
    srcs = {img.attrs["src"] for img in _page(out).tags("img")}
    assert len(srcs) == 7 and all(s.startswith("ev_files/") for s in srcs)
    moved = tmp_path / "elsewhere" / "report"
    shutil.move(str(report), str(moved))
    for s in srcs:
        assert (moved / s).is_file(), s  # links still resolve after the folder moved
    source = episode(pristine_run, "eviseek") / "images"
    copied = {f.read_bytes() for f in (moved / "ev_files").iterdir()}
    assert copied <= {f.read_bytes() for f in source.iterdir()}  # full-resolution originals


def test_question_is_found_in_the_run_or_shown_as_missing(run_copy: Path, tmp_path: Path) -> None:
    ep = episode(run_copy, "eviseek")
    found = _page(write_episode_page(ep, tmp_path / "a.html"))
    assert found.text("question-text").startswith("Are the red cube")
    (run_copy / "questions.jsonl").unlink()
    lost = _page(write_episode_page(ep / "trajectory.json", tmp_path / "b.html"))
    assert lost.by_testid("question-text") == [] and "was not found" in lost.text("question-missing")
    assert lost.text("answer") == "yes"  # the recorded verdict still shows
    (ep / "question.json").write_text(alignment_question().model_dump_json(), encoding="utf-8")
    own = _page(write_episode_page(ep, tmp_path / "c.html"))
    assert own.text("contract-kind") == "yes_no"


def test_run_viewer_writes_every_page_an_index_and_cross_links(run_copy: Path) -> None:
    (run_copy / "report").mkdir()
    (run_copy / "report" / "index.html").write_text("<p>run report</p>")
    pages = write_run_viewer(run_copy)
    agents = ("eviseek", "single_model", "passive")
    expected = {episode_page_path(run_copy, episode(run_copy, a)) for a in agents}
    assert set(pages) == expected
    assert episode_page_path(run_copy, episode(run_copy, "eviseek")) == (
        run_copy / "report" / "episodes" / "eviseek" / f"{QID}.html"
    )
    index = run_viewer_index(run_copy)
    rows = _page(index).by_testid("episode-row")
    assert sorted(r.attrs["data-agent"] for r in rows) == ["eviseek", "passive", "single_model"]
    for row in rows:
        href = next(e for e in row.children if e.tag == "td" and e.children and e.children[0].tag == "a")
        assert (index.parent / href.children[0].attrs["href"]).resolve() in {x.resolve() for x in pages}
    for page in pages:
        links = _page(page).one("links").children
        labels = [a.text for a in links]
        assert labels[:2] == ["all episodes", "run report"] and len(labels) == 4
        for a in links:
            assert (page.parent / a.attrs["href"]).is_file(), a.attrs["href"]


def test_bad_input_gets_a_clear_error(run_copy: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no trajectory\.json at .*pass an episode folder"):
        write_episode_page(tmp_path / "nowhere", tmp_path / "x.html")
    with pytest.raises(ConfigError, match="is not a run directory: it has no episodes/"):
        write_run_viewer(tmp_path)
    ep = episode(run_copy, "passive")
    with pytest.raises(ConfigError, match=r"is a folder; pass the path of the \.html file"):
        write_episode_page(ep, tmp_path)
    with pytest.raises(ConfigError, match="does not belong to this trajectory"):
        write_episode_page(ep, tmp_path / "x.html", alignment_question().model_copy(update={"id": "zz"}))
    with pytest.raises(ConfigError, match="image mode must be one of"):
        write_episode_page(ep, tmp_path / "x.html", images="inline")  # type: ignore[arg-type]

    (run_copy / "questions.jsonl").write_text('{"id": "q", "text": "ok?"}\n{"text": "no id"}\n')
    with pytest.raises(ConfigError, match=r"questions.jsonl:2: not a Question record \(id: Field required\)"):
        write_run_viewer(run_copy)

    data = json.loads((ep / "trajectory.json").read_text())
    del data["agent"]
    (ep / "trajectory.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="is not a trajectory record: agent: Field required"):
        write_episode_page(ep, tmp_path / "x.html")
    (ep / "trajectory.json").write_text("{not json")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        write_episode_page(ep, tmp_path / "x.html")


def test_reference_images_saved_with_the_runs_questions_are_found(run_copy: Path, tmp_path: Path) -> None:
    # `eviseek eval` writes questions.jsonl with the images beside it as question_images/...,
    # relative to the questions file, not to any episode folder.
    from eviseek.eval.datasets import write_questions
    from tests.viewer.synthetic import frame

    q = alignment_question().model_copy(update={"reference_images": [frame(50), frame(51)]})
    write_questions(run_copy, [q])
    assert '"question_images/' in (run_copy / "questions.jsonl").read_text()
    single = write_episode_page(episode(run_copy, "passive"), tmp_path / "p.html")
    for page in [*write_run_viewer(run_copy), single]:
        refs = _page(page).by_testid("reference-image")
        assert len(refs) == 2, page
        html = page.read_text(encoding="utf-8")
        assert "file not found" not in html and html.count("data:image/jpeg") >= 2


def test_frames_rendered_during_an_action_are_on_the_page(run_copy: Path, tmp_path: Path) -> None:
    from eviseek.viewer import load_trajectory
    from tests.viewer.synthetic import frame

    traj, _ = load_trajectory(episode(run_copy, "eviseek"))
    slide = [frame(70 + k) for k in range(4)]
    traj.steps[1] = traj.steps[1].model_copy(
        update={"action_frames": slide, "action_frame_ids": [41, 42, 43, 44]}
    )
    saved = tmp_path / "slide-episode"
    traj.save(saved)  # the frames go to files beside the record, as a run saves them
    p = _page(write_episode_page(saved, tmp_path / "slide.html", alignment_question()))
    strips = p.by_testid("action-frames")
    assert [s.attrs["data-count"] for s in strips] == ["4"]
    assert "4 frames while the action ran" in " ".join(strips[0].text.split())
    assert "frame 41" in strips[0].text and "frame 44" in strips[0].text
