"""EXPRESS-Bench's answer judge: reply parsing, the request, retries, and a run over a real server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from eviseek.eval.express import (
    ExpressJudge,
    ExpressPromptInvalid,
    ExpressPromptMissing,
    judge_run_express,
    load_express_grades,
    load_express_prompt,
    parse_express_reply,
)
from eviseek.eval.express.judge import STAGE, build_express_request
from eviseek.models import get_model
from eviseek.testing.openai_server import OpenAITestServer, ServerReply, request_images
from eviseek.types import Action as Act
from eviseek.types import AnswerContract, EpisodeResult, Feedback, Image, Question, StepRecord, Trajectory


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"reason": "r", "grounding": 1, "score": 5}', (1.0, 5)),
        ('```json\n{"reason": "r", "grounding": "0.5", "score": "3"}\n```', (0.5, 3)),
        ("0.5, 4", (0.5, 4)),  # EXPRESS-Bench's own plain form
        ("Your mark: 1,2", (1.0, 2)),
        ('{"reason": "r", "grounding": 0.7, "score": 3}', None),
        ('{"reason": "r", "grounding": 1, "score": 6}', None),
        ('{"reason": "r", "grounding": 1, "score": 2.5}', None),
        ('{"reason": "r", "score": 2}', None),
        ("I cannot tell.", None),
    ],
)
def test_parse_express_reply(text: str, expected: tuple[float, int] | None) -> None:
    value, _, problem = parse_express_reply(text)
    assert value == expected
    assert (problem is None) == (expected is not None)


def _question(qid: str) -> Question:
    return Question(
        id=qid,
        text=f"What colour is the cup in the bedroom? ({qid})",
        contract=AnswerContract(kind="text"),
        ground_truth="red",
        env_id="eviseek/Other-v0",
        metadata={"shortest_path_m": 4.0},
    )


def _image(rgb: tuple[int, int, int]) -> Image:
    return Image.from_array(np.full((60, 80, 3), rgb, dtype=np.uint8))


def _episode(run: Path, agent: str, q: Question, answer: str, images: list[Image]) -> None:
    steps = [
        StepRecord(
            index=i + 1,
            action=Act(name="move_forward"),
            feedback=Feedback(operation="move_forward", success=True),
            image=img,
        )
        for i, img in enumerate(images)
    ]
    traj = Trajectory(
        episode_id=f"{agent}-{q.id}",
        question_id=q.id,
        agent=agent,
        steps=steps,
        result=EpisodeResult(question_id=q.id, agent=agent, answer=answer, raw_answer=answer),
    )
    traj.save(run / "episodes" / agent / q.id)


def test_request_carries_question_reference_response_and_one_image() -> None:
    q = _question("q")
    messages, config = build_express_request(q, "It is red.", _image((9, 9, 9)))
    assert config.stage == STAGE and config.metadata["response"] == "It is red."
    user = messages[1]
    text = user.text()
    assert "(q)" in text and "Correct answer: red" in text and "Agent's answer: It is red." in text
    assert len([p for p in user.content if getattr(p, "image", None) is not None]) == 1


def test_judge_run_against_a_local_openai_server(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    qs = {k: _question(k) for k in ("q_main", "q_retry", "q_blind", "q_bad")}
    (run / "questions.jsonl").write_text("".join(q.model_dump_json() + "\n" for q in qs.values()))
    _episode(run, "nav", qs["q_main"], "a red cup", [_image((0, 0, 200)), _image((200, 0, 0))])
    _episode(run, "nav", qs["q_retry"], "blue", [_image((0, 200, 0))])
    _episode(run, "blind", qs["q_blind"], "red", [])
    _episode(run, "nav", qs["q_bad"], "red", [_image((5, 5, 5))])
    seen: dict[str, int] = {}

    def handler(req: dict) -> ServerReply | str:
        text = json.dumps(req)
        qid = next(q for q in qs if f"({q})" in text)
        seen[qid] = seen.get(qid, 0) + 1
        if qid == "q_retry" and seen[qid] == 1:
            return ServerReply(text='{"reason": "the cup is', finish_reason="length")
        if qid == "q_bad":
            return "no idea"
        return '{"reason": "fine", "grounding": 1, "score": 5}'

    with OpenAITestServer(handler) as srv:
        model = get_model("openai/judge", base_url=srv.base_url, api_key="sk-test-express", max_pixels=None)
        grades = asyncio.run(judge_run_express(run, model, concurrency=2))
        requests = [r["json"] for r in srv.requests if r["path"].endswith("/chat/completions")]
        by_q = {g.question_id: g for g in grades}
        assert (by_q["q_main"].grounding, by_q["q_main"].score) == (1.0, 5)
        assert (by_q["q_retry"].score, by_q["q_retry"].attempts) == (5, 2)
        # No image: nothing can be grounded whatever the judge says; the answer is still scored.
        assert (by_q["q_blind"].grounding, by_q["q_blind"].score, by_q["q_blind"].had_image) == (
            0.0,
            5,
            False,
        )
        assert by_q["q_bad"].score is None and "no usable grade" in (by_q["q_bad"].error or "")
        main = next(r for r in requests if "(q_main)" in json.dumps(r))
        imgs = request_images(main)
        # Only the LAST image the agent took goes to the judge (the red one).
        assert len(imgs) == 1 and tuple(int(v) for v in np.asarray(imgs[0])[30, 40]) == (200, 0, 0)
        assert "a red cup" in json.dumps(main)
        blind = next(r for r in requests if "(q_blind)" in json.dumps(r))
        assert request_images(blind) == []
        for r in requests:
            assert "sk-test-express" not in json.dumps(r)
        # Durable and resumable: only the ungraded episode is asked again.
        assert load_express_grades(run)[("nav", "q_main")].score == 5
        before = len(srv.requests)
        again = asyncio.run(judge_run_express(run, model))
        assert [g.question_id for g in again] == ["q_bad"] and len(srv.requests) - before == 2


def test_reference_policy_plays_the_judge_without_a_key(tmp_path: Path) -> None:
    judge = ExpressJudge(get_model("reference/tabletop"))
    q = _question("q")
    right = Trajectory(
        episode_id="e",
        question_id="q",
        agent="a",
        result=EpisodeResult(question_id="q", agent="a", raw_answer="It is red."),
        answer_images=[_image((1, 2, 3))],
    )
    wrong = right.model_copy(update={"result": EpisodeResult(question_id="q", agent="a", raw_answer="green")})
    good = asyncio.run(judge.grade(q, right))
    bad = asyncio.run(judge.grade(q, wrong))
    assert (good.grounding, good.score) == (1.0, 5)
    assert (bad.grounding, bad.score) == (0.0, 1)
    assert "text rule" in good.reason


PROMPT_FILE = (
    "[system]:\n"
    "You check a robot's answers against the scene it saw.\n"
    "[user]:\n"
    "Give a grounding grade (0, 0.5 or 1) and an accuracy score (1 to 5).\n"
    "Reply with the two numbers separated by a comma.\n"
)
"""A judge prompt file in EXPRESS-Bench's layout (our own words, not its text)."""


def _checkout(root: Path, text: str = PROMPT_FILE) -> Path:
    (root / "prompt").mkdir(parents=True)
    (root / "prompt" / "evaluation.txt").write_text(text, encoding="utf-8")
    return root


def test_express_benchs_own_prompt_is_sent_as_its_code_lays_it_out(tmp_path: Path) -> None:
    prompt = load_express_prompt(_checkout(tmp_path / "EXPRESS-Bench"))
    assert prompt.source == "express-bench" and prompt.label.startswith(
        "express-bench:prompt/evaluation.txt@"
    )
    run = tmp_path / "run"
    q = _question("q_main")
    (run / "questions.jsonl").parent.mkdir(parents=True, exist_ok=True)
    (run / "questions.jsonl").write_text(q.model_dump_json() + "\n")
    _episode(run, "nav", q, "a red cup", [_image((0, 0, 200)), _image((200, 0, 0))])
    with OpenAITestServer(["Your mark: 1, 4"]) as srv:
        model = get_model("openai/judge", base_url=srv.base_url, api_key="sk-test-express", max_pixels=None)
        grades = asyncio.run(judge_run_express(run, model, prompt=prompt))
        body = srv.chat_requests[0]
    assert [(g.grounding, g.score, g.prompt) for g in grades] == [(1.0, 4, prompt.label)]
    system, user = body["messages"]
    assert system == {"role": "system", "content": "You check a robot's answers against the scene it saw."}
    texts = [p["text"] for p in user["content"] if p["type"] == "text"]
    assert texts == [
        "Give a grounding grade (0, 0.5 or 1) and an accuracy score (1 to 5).\n"
        "Reply with the two numbers separated by a comma.\n"
        f"Question: {q.text}\nAnswer: red\nResponse: a red cup\nYour mark: "
    ]
    assert user["content"][-1]["type"] == "image_url"  # the image after the text, as its code sends it
    assert "response_format" not in body  # a plain "g, s" reply, not JSON
    assert load_express_grades(run)[("nav", "q_main")].prompt == prompt.label


def test_eviseeks_prompt_is_named_when_no_checkout_is_given() -> None:
    grade = asyncio.run(
        ExpressJudge(get_model("reference/tabletop")).grade(
            _question("q"), Trajectory(episode_id="e", question_id="q", agent="a")
        )
    )
    assert grade.prompt == "eviseek"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Grade the answer.\n", "fewer than 4"),
        ("[system]\nx\n[user]:\ny\n", "not '[system]:'"),
        ("[system]:\nx\n[assistant]:\ny\n", "not '[user]:'"),
        ("[system]:\nx\n[user]:\n\n", "user text"),
    ],
)
def test_a_prompt_file_that_does_not_parse_says_why(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ExpressPromptInvalid, match="does not read as EXPRESS-Bench's judge prompt") as err:
        load_express_prompt(_checkout(tmp_path, text))
    assert problem in str(err.value)
    with pytest.raises(ExpressPromptMissing, match="not a folder"):
        load_express_prompt(tmp_path / "nowhere")
