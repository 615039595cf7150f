"""WeMath's four-dimensional metrics on a fixture in the release's own JSON form (rows with the
problem's ``ID``, the part's ``key``, ``option`` and ``answer``, as in testmini.json)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from eviseek.autotool.metrics import headline_metrics
from eviseek.autotool.official import official_score
from eviseek.autotool.reasoning import load_reasoning
from eviseek.autotool.wemath import classify, four_dimensional, wemath_part
from eviseek.types import EpisodeResult

# Per problem: whether each sub-problem, then the whole problem, is answered right.
#   2steps_1 CM (both readings)      2steps_2 IG      2steps_3 RM strict / CM loose
#   2steps_4 RM (both readings)      2steps_5 IK      3steps_1 CM      3steps_2 IK
#   3steps_3 lacks its sub-problems 2 and 3: incomplete, left out.
ANSWERS: dict[str, tuple[list[bool], bool]] = {
    "2steps_1": ([True, True], True),
    "2steps_2": ([True, True], False),
    "2steps_3": ([True, False], True),
    "2steps_4": ([False, False], True),
    "2steps_5": ([False, True], False),
    "3steps_1": ([True, True, True], True),
    "3steps_2": ([False, False, False], False),
}


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (255, 255, 255)).save(buf, format="PNG")
    return buf.getvalue()


def _release(tmp_path: Path) -> Path:
    rows = []
    number = 0
    for pid, (subs, _) in [*ANSWERS.items(), ("3steps_3", ([True, True, True], True))]:
        steps = pid[0]
        parts = [str(i) for i in range(1, len(subs) + 1)] + ["multi"]
        if pid == "3steps_3":
            parts = ["1", "multi"]
        for part in parts:
            number += 1
            image = tmp_path / f"{steps}steps" / "image" / f"{number}.png"  # beside the release, as shipped
            image.parent.mkdir(parents=True, exist_ok=True)
            image.write_bytes(_png())
            rows.append(
                {
                    "ID": pid,
                    "split": "testmini",
                    "knowledge concept": "Circumference of Circles",
                    "question": f"Problem {pid}, part {part}: what is the length?",
                    "option": "A. 1 cm;B. 2 cm;C. 3 cm;D. 4 cm; E. No correct answer",
                    "answer": "C",
                    "image_path": f"{steps}steps/image/{number}.png",
                    "key": f"{steps}steps_{part}",
                    "question number": number,
                }
            )
    path = tmp_path / "testmini.json"
    path.write_text(json.dumps(rows))
    return path


def _results(tmp_path: Path) -> tuple[list, list[EpisodeResult]]:
    questions = load_reasoning("wemath", _release(tmp_path), tmp_path / "img")
    results = []
    for q in questions:
        pid, part = q.metadata["wemath_id"], q.metadata["key"].split("_")[1]
        subs, whole = ANSWERS.get(pid, ([True, True, True], True))
        right = whole if part == "multi" else subs[int(part) - 1]
        reply = f"<Thought process>: measure it <Answer>: {'C' if right else 'A'}"
        correct, _ = official_score(reply, q)
        results.append(
            EpisodeResult(question_id=q.id, agent="autotool", model="m", correct=correct, answer=reply)
        )
    return questions, results


def test_loader_keeps_the_problem_and_gives_each_part_its_own_id(tmp_path: Path) -> None:
    questions = load_reasoning("wemath", _release(tmp_path), tmp_path / "img")
    ids = [q.id for q in questions]
    assert len(ids) == len(set(ids)) == 25
    assert ids[:3] == ["wemath-2steps_1-1", "wemath-2steps_1-2", "wemath-2steps_1-multi"]
    assert {q.metadata["wemath_id"] for q in questions[:3]} == {"2steps_1"}
    assert questions[2].metadata["key"] == "2steps_multi" and questions[2].ground_truth == "C"


def test_four_classes_rates_and_scores(tmp_path: Path) -> None:
    questions, results = _results(tmp_path)
    m = four_dimensional(results, questions)
    assert (m.problems, m.incomplete) == (7, 1)
    assert (m.insufficient_knowledge, m.inadequate_generalization) == (2, 1)
    assert (m.complete_mastery_strict, m.rote_memorization_strict) == (2, 2)
    assert (m.complete_mastery_loose, m.rote_memorization_loose) == (3, 1)
    h = headline_metrics(results, questions, "reasoning")
    expected = {
        "wemath_problems": 7,
        # (N - 0.5 IG - RM - IK) / N
        "wemath_score_strict": (7 - 0.5 - 2 - 2) / 7,
        "wemath_score_loose": (7 - 0.5 - 1 - 2) / 7,
        "wemath_insufficient_knowledge": 2 / 7,
        "wemath_inadequate_generalization": 1 / 7,
        "wemath_complete_mastery_strict": 2 / 7,
        "wemath_complete_mastery_loose": 3 / 7,
        # RM among the problems answered right
        "wemath_rote_memorization_strict": 2 / 4,
        "wemath_rote_memorization_loose": 1 / 4,
        "wemath_s1": 9 / 16,
        "wemath_s2": 3 / 5,
        "wemath_s3": 1 / 2,
    }
    for key, value in expected.items():
        assert h[key] == pytest.approx(value), key
    # 25 rows of which 15 are answered right (the incomplete problem's two included).
    assert h["accuracy"] == pytest.approx(15 / 25)


def test_each_reading_partitions_the_problems() -> None:
    for whole in (True, False):
        for subs in ([True, True], [True, False], [False, False], [False, True, True]):
            c = classify(whole, subs)
            common = c["insufficient_knowledge"] + c["inadequate_generalization"]
            assert common + c["complete_mastery_strict"] + c["rote_memorization_strict"] == 1
            assert common + c["complete_mastery_loose"] + c["rote_memorization_loose"] == 1


def test_part_names_and_other_benchmarks(tmp_path: Path) -> None:
    assert wemath_part("2steps_1") == (2, "1") and wemath_part("3steps_multi") == (3, "multi")
    assert wemath_part("3steps") is None and wemath_part(None) is None
    questions, results = _results(tmp_path)
    # Without the problem ids (e.g. a release that lacks them) nothing is counted.
    for q in questions:
        q.metadata.pop("wemath_id")
    assert four_dimensional(results, questions).problems == 0
    assert not any(k.startswith("wemath_") for k in headline_metrics(results, questions, "reasoning"))
