"""The visual-support judge protocol, against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from eviseek.eval.judge import (
    MAX_HEIGHT,
    MAX_WIDTH,
    RETRY_MAX_TOKENS,
    SupportJudge,
    build_request,
    fit_image,
    judge_run,
    label_size,
    load_support_grades,
    number_image,
    parse_judge_reply,
    prepare_images,
    resolve_grade,
)
from eviseek.models import ScriptedModel, get_model
from eviseek.testing.openai_server import OpenAITestServer, ServerReply, request_images
from eviseek.types import AnswerContract, EpisodeResult, Question, Trajectory

from .synthetic import solid

PREDICTION = "ZEBRA-PREDICTION-7731"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1.0),
        (0.5, 0.5),
        (0, 0.0),
        ("1", 1.0),
        ("0.5-1", 0.5),
        ("between 0.5 and 1", 0.5),
        ("0 or 0.5", 0.0),
        ("1.0", 1.0),
        (".5", 0.5),
        ("half", 0.5),
        (2, None),
        ("high", None),
        (True, None),
        (None, None),
        ("10", None),
    ],
)
def test_resolve_grade_breaks_ties_downward(value, expected) -> None:
    assert resolve_grade(value) == expected


def test_parse_reply_reads_json_in_fences_and_reports_problems() -> None:
    assert parse_judge_reply('```json\n{"reason": "cube visible in 2", "grade": 1}\n```') == (
        1.0,
        "cube visible in 2",
        None,
    )
    assert parse_judge_reply('Sure. {"reason": "r", "grade": "0.5-1"} done')[0] == 0.5
    assert parse_judge_reply('{"reason": "the cube is vis')[2] is not None
    assert "no 'grade'" in (parse_judge_reply('{"reason": "x"}')[2] or "")
    assert "not 1, 0.5 or 0" in (parse_judge_reply('{"reason": "x", "grade": 3}')[2] or "")


def test_fit_image_shrinks_to_the_box_and_never_enlarges() -> None:
    wide = solid(2000, 1000, (200, 0, 0)).to_pil()
    fitted = fit_image(wide)
    assert fitted.size[0] == MAX_WIDTH and fitted.size[1] <= MAX_HEIGHT
    assert abs(fitted.size[0] / fitted.size[1] - 2.0) < 0.01
    tall = fit_image(solid(800, 1600, (0, 0, 200)).to_pil())
    assert tall.size == (384, 768)
    small = solid(320, 240, (0, 200, 0)).to_pil()
    assert fit_image(small).size == (320, 240)
    rgba = small.convert("RGBA")
    assert fit_image(rgba).mode == "RGB"


def test_number_label_sits_in_the_upper_left_and_differs_per_number() -> None:
    base = solid(400, 300, (0, 160, 0), corner=False).to_pil()
    one = np.asarray(number_image(base, 1))
    two = np.asarray(number_image(base, 2))
    s = label_size(400, 300)
    assert tuple(one[0, 0]) == (0, 0, 0)
    label = one[: s + s // 2, : 2 * s]
    assert (label == 255).all(axis=2).any(), "the number is drawn in white"
    assert not np.array_equal(one[: 2 * s, : 2 * s], two[: 2 * s, : 2 * s])
    # Everything away from the corner is untouched.
    np.testing.assert_array_equal(one[2 * s :, :], np.asarray(base)[2 * s :, :])
    np.testing.assert_array_equal(one[:, 3 * s :], np.asarray(base)[:, 3 * s :])


def test_prepare_images_dedupes_in_order_and_marks_references() -> None:
    a, b = solid(50, 40, (255, 0, 0)), solid(50, 40, (0, 255, 0))
    prepared = prepare_images([a, b, a], frame_ids=[-1, 4, -1])
    assert [j.number for j in prepared] == [1, 2]
    assert [j.frame_id for j in prepared] == [-1, 4]
    assert [j.source for j in prepared] == ["reference", "observation"]


def _question(qid: str, gt: str | list[str] = "left") -> Question:
    return Question(
        id=qid,
        text=f"Which side of the blue box is the red cube on? ({qid})",
        contract=AnswerContract(kind="option", options=["left", "right"]),
        family="Spatial Relations",
        subcategory="Linear Alignment",
        ground_truth=gt,
    )


def _write_episode(run: Path, agent: str, q: Question, images) -> None:
    traj = Trajectory(
        episode_id=f"{agent}-{q.id}",
        question_id=q.id,
        agent=agent,
        answer_images=images,
        answer_frame_ids=[-1, *range(1, len(images))] if images else [],
        result=EpisodeResult(
            question_id=q.id, agent=agent, answer=PREDICTION, raw_answer=PREDICTION, correct=True
        ),
    )
    # The prediction also sits in the trajectory's own record of the answer call.
    traj.log("answer", f"final answer {PREDICTION}")
    traj.save(run / "episodes" / agent / q.id)


def _colour(pil, x: int, y: int) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(pil)[y, x])


def test_judge_run_against_a_local_openai_server(tmp_path: Path) -> None:
    run = tmp_path / "run"
    red = solid(1600, 800, (200, 0, 0))  # shrunk to fit 1365 wide
    green = solid(320, 240, (0, 200, 0))  # already fits: sent at its own size
    blue = solid(500, 1000, (0, 0, 200))  # shrunk to fit 768 high
    yellow = solid(640, 480, (200, 200, 0))
    qs = {
        "q_main": _question("q_main", ["left", "LEFT of it"]),
        "q_retry": _question("q_retry"),
        "q_bad": _question("q_bad"),
        "q_empty": _question("q_empty"),
    }
    run.mkdir(parents=True)
    with open(run / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in qs.values():
            fh.write(q.model_dump_json() + "\n")
    _write_episode(run, "eviseek", qs["q_main"], [yellow, red, green, blue, green])
    _write_episode(run, "eviseek", qs["q_retry"], [green])
    _write_episode(run, "eviseek", qs["q_bad"], [red])
    _write_episode(run, "eviseek", qs["q_empty"], [])

    seen: dict[str, int] = {}

    def handler(req: dict) -> ServerReply | str:
        text = json.dumps(req)
        qid = next(q for q in qs if f"({q})" in text)
        seen[qid] = seen.get(qid, 0) + 1
        if qid == "q_main":
            return '{"reason": "image 2 shows the cube left of the box", "grade": "0.5-1"}'
        if qid == "q_retry" and seen[qid] == 1:
            return ServerReply(text='{"reason": "The cube in image 1 is', finish_reason="length")
        if qid == "q_retry":
            return '{"reason": "visible", "grade": 1}'
        return "I cannot grade this."

    with OpenAITestServer(handler) as srv:
        model = get_model(
            "openai/judge-model", base_url=srv.base_url, api_key="sk-test-judge", max_pixels=None
        )
        grades = asyncio.run(judge_run(run, model, concurrency=2))
        requests = [r["json"] for r in srv.requests if r["path"].endswith("/chat/completions")]

        by_q = {g.question_id: g for g in grades}
        assert set(by_q) == set(qs)
        assert by_q["q_main"].grade == 0.5  # "0.5-1" resolves downward
        assert by_q["q_main"].n_images == 4 and by_q["q_main"].frame_ids == [-1, 1, 2, 3]
        assert (by_q["q_retry"].grade, by_q["q_retry"].attempts) == (1.0, 2)
        assert by_q["q_bad"].grade is None and "no usable grade" in (by_q["q_bad"].error or "")
        assert by_q["q_bad"].attempts == 2
        assert by_q["q_empty"].grade == 0.0 and by_q["q_empty"].attempts == 0
        assert seen == {"q_main": 1, "q_retry": 2, "q_bad": 2}

        for req in requests:
            assert PREDICTION not in json.dumps(req), "the judge must never see the system's prediction"

        main = next(r for r in requests if "(q_main)" in json.dumps(r))
        text = json.dumps(main)
        assert "LEFT of it" in text and "(A) left" in text and "(B) right" in text
        received = request_images(main)
        # De-duplicated (green appeared twice), ordered, fitted without upscaling.
        assert [im.size for im in received] == [(640, 480), (1365, 682), (320, 240), (384, 768)]
        for im in received:
            assert im.size[0] <= MAX_WIDTH and im.size[1] <= MAX_HEIGHT
        centres = [_colour(im, im.size[0] // 2, im.size[1] // 2) for im in received]
        assert centres == [(200, 200, 0), (200, 0, 0), (0, 200, 0), (0, 0, 200)]
        # Scaled, not cropped: the white corner marker survives at the bottom-right.
        assert all(_colour(im, im.size[0] - 1, im.size[1] - 1) == (255, 255, 255) for im in received)
        # Numbered 1..4 in the upper-left corner: each matches the label drawn for its own number.
        for k, (im, orig) in enumerate(zip(received, [yellow, red, green, blue], strict=True), 1):
            s = label_size(*im.size)
            got = np.asarray(im)[: 2 * s, : 3 * s]
            want = np.asarray(number_image(fit_image(orig.to_pil()), k))[: 2 * s, : 3 * s]
            other = np.asarray(number_image(fit_image(orig.to_pil()), k % 4 + 1))[: 2 * s, : 3 * s]
            np.testing.assert_array_equal(got, want)
            assert not np.array_equal(got, other)
            assert _colour(im, 0, 0) == (0, 0, 0)
        # Each image is introduced by its number in the text, in order.
        texts = [
            p.get("text", "")
            for m in main["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
        ]
        joined = "\n".join(texts)
        assert (
            joined.index("Image 1 (task reference image)") < joined.index("Image 2") < joined.index("Image 4")
        )

        retry_reqs = [r for r in requests if "(q_retry)" in json.dumps(r)]
        budgets = [r.get("max_completion_tokens", r.get("max_tokens")) for r in retry_reqs]
        assert budgets == [4096, RETRY_MAX_TOKENS]
        for req in requests:
            assert "sk-test-judge" not in json.dumps(req)

        # Grades are durable and a rerun resumes: only the episode without a grade is asked again.
        stored = load_support_grades(run)
        assert stored[("eviseek", "q_main")].grade == 0.5
        assert "sk-test-judge" not in (run / "support.jsonl").read_text()
        before = len(srv.requests)
        again = asyncio.run(judge_run(run, model))
        assert [g.question_id for g in again] == ["q_bad"]
        assert len(srv.requests) - before == 2

    saved = sorted(p.name for p in (run / "judge" / "eviseek" / "q_main").iterdir())
    assert saved == ["image_1.png", "image_2.png", "image_3.png", "image_4.png"]


def test_judge_request_sets_stage_schema_and_metadata_without_prediction() -> None:
    q = _question("q1")
    prepared = prepare_images([solid(30, 20, (9, 9, 9))])
    messages, config = build_request(q, prepared)
    assert config.stage == "judge" and config.json_mode
    assert set(config.response_schema["properties"]) == {"reason", "grade"}  # type: ignore[index]
    assert config.metadata["options"] == ["left", "right"]
    assert config.metadata["reference_answer"] == "left"
    assert len(messages[1].images()) == 1


def test_judge_with_scripted_model_and_missing_reference() -> None:
    model = ScriptedModel(['{"reason": "clear", "grade": 0}'])
    judge = SupportJudge(model)
    grade = asyncio.run(judge.grade(_question("q1"), [solid(20, 20, (1, 2, 3))]))
    assert grade.grade == 0.0 and grade.attempts == 1
    assert model.requests[0][1].stage == "judge"
    no_truth = Question(id="x", text="?")
    with pytest.raises(ValueError, match="no ground_truth"):
        asyncio.run(judge.grade(no_truth, [solid(20, 20, (1, 2, 3))]))


def test_judge_run_needs_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="run directory"):
        asyncio.run(judge_run(tmp_path, ScriptedModel([])))


def test_judge_cli_against_a_local_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from eviseek.cli.main import app

    run = tmp_path / "run"
    run.mkdir()
    q = _question("q_cli")
    (run / "questions.jsonl").write_text(q.model_dump_json() + "\n")
    _write_episode(run, "single-model", q, [solid(100, 80, (5, 5, 5))])
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sk-secret-cli")
    with OpenAITestServer(['{"reason": "ok", "grade": 1}']) as srv:
        res = CliRunner().invoke(
            app,
            [
                "judge",
                str(run),
                "--model",
                "openai/j",
                "--base-url",
                srv.base_url,
                "--api-key-env",
                "JUDGE_KEY_FOR_TEST",
            ],
        )
        assert res.exit_code == 0, res.output
        assert "1 x 1" in res.output
        assert srv.requests[-1]["headers"]["authorization"] == "Bearer sk-secret-cli"
    assert "sk-secret-cli" not in res.output
    assert load_support_grades(run)[("single-model", "q_cli")].grade == 1.0
    missing = CliRunner().invoke(
        app, ["judge", str(tmp_path / "nope"), "--model", "openai/j", "--base-url", "http://127.0.0.1:9/v1"]
    )
    assert missing.exit_code == 1 and "not found" in missing.output


def test_the_papers_judge_settings_through_the_responses_api(tmp_path: Path) -> None:
    # App. A/B: Responses API, low reasoning effort, JSON output, images as JPEG quality 90;
    # the numbered copies kept for audit stay PNG.
    from typer.testing import CliRunner

    from eviseek.cli.main import app

    run = tmp_path / "run"
    run.mkdir()
    q = _question("q_resp")
    (run / "questions.jsonl").write_text(q.model_dump_json() + "\n")
    _write_episode(run, "eviseek", q, [solid(100, 80, (5, 5, 5))])
    with OpenAITestServer(['{"reason": "ok", "grade": 0.5}']) as srv:
        res = CliRunner().invoke(
            app,
            [
                "judge",
                str(run),
                "--model",
                "openai/gpt-j",
                "--base-url",
                srv.base_url,
                "--model-arg",
                "api=responses",
                "--model-arg",
                "reasoning_effort=low",
            ],
        )
        assert res.exit_code == 0, res.output
        (body,) = srv.responses_requests
    assert body["reasoning"] == {"effort": "low"} and body["max_output_tokens"] == 4096
    assert [p.format for p in request_images(body)] == ["JPEG"]
    assert load_support_grades(run)[("eviseek", "q_resp")].grade == 0.5
    assert [
        p.suffix for p in (run / "judge" / "eviseek" / "q_resp").iterdir() if p.name.startswith("image")
    ] == [".png"]
