"""The reasoning benchmarks' own prompts and scorers, on fixtures written here in each benchmark's
public file format (the same forms as tests/autotool/test_reasoning.py)."""

from __future__ import annotations

import json
from pathlib import Path

from eviseek.autotool.official import last_boxed, official_prompt, official_score
from eviseek.autotool.reasoning import load_reasoning
from eviseek.autotool.scoring import score_episode_answer, uses_official_prompt
from eviseek.types.plans import AutoToolPlan


def _one(tmp_path: Path, name: str, rows: list[dict], **kw: str) -> list:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(rows))
    return load_reasoning(name, path, tmp_path / "img", **kw)  # type: ignore[arg-type]


def test_mathvista_uses_its_query_and_normalises_as_its_evaluation_does(tmp_path: Path) -> None:
    rows = [
        {
            "pid": "1",
            "question": "Which bar is tallest?",
            "choices": ["red", "green", "blue"],
            "answer": "green",
            "question_type": "multi_choice",
            "answer_type": "text",
            "query": "Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, "
            "D, at the end.\nQuestion: Which bar is tallest?\nChoices:\n(A) red\n(B) green\n(C) blue",
        },
        {
            "pid": "2",
            "question": "What is the slope?",
            "answer": "0.25",
            "question_type": "free_form",
            "answer_type": "float",
            "precision": 2,
        },
        {
            "pid": "3",
            "question": "How many dots?",
            "answer": "7",
            "question_type": "free_form",
            "answer_type": "integer",
            "unit": "dots",
        },
    ]
    mc, flt, intq = _one(tmp_path, "mathvista", rows)
    assert all(q.metadata["prompt_style"] == "official" and uses_official_prompt(q) for q in (mc, flt, intq))
    assert official_prompt(mc) == rows[0]["query"]  # the release's own query, unchanged
    assert official_prompt(flt).startswith(
        "Hint: Please answer the question requiring a floating-point number with two decimal places"
    )
    assert "Question: How many dots? (Unit: dots)" in official_prompt(intq)
    # Option letter -> its choice text; a near miss in wording -> the most similar choice.
    assert official_score("The tallest is (B).", mc) == (True, "green")
    assert official_score("Answer: grean", mc) == (True, "green")
    assert official_score("Answer: A", mc) == (False, "red")
    # Floats rounded to the stated precision, integers via int(float(x)).
    assert official_score("So the slope is 0.2501.", flt) == (True, "0.25")
    assert official_score("slope 0.26", flt)[0] is False
    assert official_score("There are 7.0 dots in total.", intq) == (True, "7")


def test_mathvision_boxed_and_mathverse_query_cot(tmp_path: Path) -> None:
    (mv, free) = _one(
        tmp_path,
        "mathvision",
        [
            {"id": "3", "question": "How many?", "options": ["1", "2", "3"], "answer": "C"},
            {"id": "4", "question": "Find x.", "options": [], "answer": "2.5"},
        ],
    )
    prompt = official_prompt(mv)
    assert prompt.startswith('Please solve the problem step by step and put your answer in one "\\boxed{}"')
    assert prompt.endswith("How many?\n(A) 1\n(B) 2\n(C) 3\n")
    assert official_score("so it is \\boxed{C}", mv) == (True, "C")
    assert official_score("<answer>C</answer> but \\boxed{A}", mv)[0] is False  # the box decides
    assert official_score("x = \\boxed{5/2}", free)[0] is True
    assert last_boxed("\\boxed{\\frac{1}{2}} and \\boxed{x^{2}}") == "x^{2}"
    (verse,) = _one(
        tmp_path,
        "mathverse",
        [
            {
                "sample_index": "7",
                "question": "Find angle ABC.",
                "query_cot": "Please first conduct reasoning, "
                "and then answer the question.\nQuestion: Find angle ABC.",
                "answer": "45",
                "question_type": "free-form",
            }
        ],
    )
    assert official_prompt(verse).startswith("Please first conduct reasoning")
    assert official_score("... so the answer is 45", verse)[0] is True


def test_wemath_template_dynamath_json_and_logicvista_letters(tmp_path: Path) -> None:
    (we,) = _one(
        tmp_path,
        "wemath",
        [{"ID": "1@3", "question": "What is the area?", "option": "A. 3; B. 4; C. 5", "answer": "B"}],
    )
    prompt = official_prompt(we)
    assert "Question: What is the area?\nOption: A. 3; B. 4; C. 5\n" in prompt
    assert prompt.endswith("<Thought process>: <<your thought process>> <Answer>: <<your option>>")
    assert official_score("<Thought process>: 2x2 <Answer>: <B>", we) == (True, "B")
    assert official_score("<Thought process>: hmm <Answer>: A", we) == (False, "A")

    dyn = _one(
        tmp_path,
        "dynamath",
        [
            {"id": "9", "question": "Compute f(2).", "ground_truth": "12.000", "answer_type": "float"},
            {
                "id": "10",
                "question": "Which? A: 1 B: 2",
                "ground_truth": "B",
                "answer_type": "multiple choice",
            },
        ],
    )
    assert "'solution' and 'short answer'" in official_prompt(dyn[0]) and '"short answer"' in official_prompt(
        dyn[0]
    )
    assert official_score('```json\n{"solution": "3*4", "short answer": "12.0004"}\n```', dyn[0])[0] is True
    assert official_score('{"solution": "x", "short answer": "12.01"}', dyn[0])[0] is False
    assert official_score('{"solution": "x", "short answer": "B"}', dyn[1]) == (True, "B")

    (lv,) = _one(
        tmp_path,
        "logicvista",
        [{"index": "0", "question": "Which are red? A. x B. y C. z", "answer": "A, C"}],
    )
    assert official_prompt(lv) == "Which are red? A. x B. y C. z"
    assert official_score("The answer is C and A", lv) == (True, "AC")
    assert official_score("The answer is A", lv)[0] is False


def test_dual_mode_prompt_is_a_labelled_option_with_its_own_scorer(tmp_path: Path) -> None:
    rows = [{"id": "3", "question": "How many?", "options": ["1", "2", "3"], "answer": "C"}]
    (auto,) = _one(tmp_path, "mathvision", rows, prompt_style="autotool")
    (official,) = _one(tmp_path, "mathvision", rows)
    assert auto.metadata["prompt_style"] == "autotool" and not uses_official_prompt(auto)
    plan = AutoToolPlan()
    # The dual-mode path reads <answer>; the official one reads the \boxed{} of the reply.
    assert score_episode_answer(auto, "C", plan).correct
    assert not score_episode_answer(official, "<answer>C</answer> so \\boxed{A}", plan).correct
    assert score_episode_answer(official, "<tool_off><think>3</think> \\boxed{C}", plan).correct


def test_the_dataset_spec_selects_the_prompt_style(tmp_path: Path) -> None:
    import pytest

    from eviseek.errors import ConfigError
    from eviseek.eval.benchmarks.autotool import parse_spec_options

    assert parse_spec_options("mathvista", "/d?prompt=autotool") == ("/d", 0, True, "autotool")
    assert parse_spec_options("wemath", "/d")[3] == "official"
    with pytest.raises(ConfigError, match="prompt=official"):
        parse_spec_options("vstar", "/d?prompt=autotool")


def test_dynamath_worst_case_needs_every_variant_right(tmp_path: Path) -> None:
    from eviseek.autotool.metrics import headline_metrics
    from eviseek.types import EpisodeResult

    rows = [
        {
            "id": f"{qid}-{v}",
            "qid": qid,
            "varid": v,
            "question": "f(2)?",
            "ground_truth": "1.000",
            "answer_type": "float",
        }
        for qid in ("1", "2")
        for v in (1, 2)
    ]
    qs = _one(tmp_path, "dynamath", rows)
    assert qs[0].metadata["qid"] == "1" and qs[0].metadata["varid"] == "1"
    right = {"dynamath-1-1", "dynamath-1-2", "dynamath-2-1"}  # seed question 2 misses one variant
    results = [
        EpisodeResult(question_id=q.id, agent="autotool", model="m", correct=q.id in right) for q in qs
    ]
    head = headline_metrics(results, qs, "reasoning")
    assert head["accuracy"] == 0.75 and head["dynamath_worst_case"] == 0.5


def _mathvision_reference_layout(question: str, options: list[str]) -> str:
    """MathVision's own prompt rule, restated here: the boxed instruction line, the question, then
    an ``(X) text`` line per option unless the options are only the letters A-E."""
    instruction = (
        'Please solve the problem step by step and put your answer in one "\\boxed{}". '
        'If it is a multiple choice question, only one letter is allowed in the "\\boxed{}".'
    )
    body = ""
    if options and "".join(options) != "ABCDE":
        body = "".join(f"({'ABCDE'[i]}) {o}\n" for i, o in enumerate(options))
    return f"{instruction}\n{question}\n{body}"


def test_mathvision_prompt_matches_its_reference_layout_on_hand_made_cases(tmp_path: Path) -> None:
    cases = [
        ("Which shape is shaded?", ["cube", "cone", "ball", "ring", "pyramid"], "B"),
        ("Which net folds into the cube? Choose from the figure.", ["A", "B", "C", "D", "E"], "D"),
        ("What is the area of the square?", [], "16"),
        ("Compute $x^2$ when x = 3.", [], "9"),
    ]
    rows = [{"id": str(k), "question": q, "options": o, "answer": a} for k, (q, o, a) in enumerate(cases)]
    for q, (text, options, _) in zip(_one(tmp_path, "mathvision", rows), cases, strict=True):
        assert official_prompt(q) == _mathvision_reference_layout(text, options)
