"""ESI-Bench's official answer rules, as eviseek implements them: expectations written by hand
from the official code's behaviour (the full comparison against the official functions runs in
tests/eval/esibench/test_official_agreement.py when ESI_BENCH_ROOT is set)."""

from __future__ import annotations

import pytest

from eviseek.answers.esibench import ESIRule, esibench_final_answer, esibench_score, esibench_verdict


def correct(rule: ESIRule, raw: object) -> bool | None:
    return esibench_score(rule, raw).correct


def test_counting_reads_digits_not_words_and_gives_soft_credit() -> None:
    rule = ESIRule(task="counting", truth="3")
    assert correct(rule, "3") is True and correct(rule, "There are 3 apples.") is True
    assert correct(rule, "three") is False  # a number word is kept as text, so it never matches
    assert esibench_score(rule, "three").soft_score is None
    assert esibench_score(rule, "4").soft_score == pytest.approx(2 / 3)
    assert esibench_score(rule, "7").soft_score == 0.0
    assert esibench_final_answer(rule, "Not sure") == "not sure"
    # A final answer with nothing in it is None; but a reply with no answer is first read as
    # "not sure", which the counting verdict then scores as a wrong count (False).
    assert esibench_verdict(rule, None).correct is None and esibench_verdict(rule, "").correct is None
    assert correct(rule, None) is False


def test_lettered_choices_map_letters_and_names_and_abstain_to_none() -> None:
    rule = ESIRule(
        task="angle_confusion",
        truth="teapot",
        choices=[["A", "teapot", "teapot"], ["B", "kettle", "kettle"], ["C", "not_sure", "not sure"]],
    )
    assert correct(rule, "A") is True and correct(rule, "b") is False
    assert correct(rule, "Teapot") is True and correct(rule, "teapot.") is None
    assert correct(rule, "C") is None and correct(rule, "I think a teapot") is None


def test_exact_match_tasks_take_no_letters_and_steps_split_on_bars_only() -> None:
    rooms = ESIRule(
        task="cognitivemap", truth="hall_0 | den_1", options=[["hall_0", "den_1"], ["den_1", "hall_0"]]
    )
    assert correct(rooms, "HALL_0|den_1") is True
    assert correct(rooms, "hall_0, den_1") is False  # only | separates steps
    one = ESIRule(task="cognitivemap", truth="attic_0", options=["hall_0", "attic_0"])
    assert correct(one, "B") is False and correct(one, " Attic_0 ") is True
    mirror = ESIRule(task="mirror", truth="B", options=None)
    assert correct(mirror, "b") is True and correct(mirror, "not sure") is False


def test_stacking_accepts_commas_and_position_labels_not_bars() -> None:
    rule = ESIRule(task="stacking", labels=["bowl", "cup", "tray"], orders=[["tray", "bowl", "cup"]])
    assert correct(rule, "tray, bowl, cup") is True
    assert correct(rule, "bottom: tray, middle: bowl, top: cup") is True
    assert correct(rule, "tray | bowl | cup") is False  # the paper says | works; the code does not
    assert correct(rule, "cup, bowl, tray") is False


def test_yes_no_readers_keep_their_phrase_order() -> None:
    line = ESIRule(task="line", truth="yes")
    assert correct(line, "Collinear") is True and correct(line, "not in a line") is False
    assert correct(line, "non-collinear points") is True  # 'collinear' is found before any 'no' phrase
    assert correct(line, "maybe") is None
    touching = ESIRule(task="touching", truth="no")
    assert correct(touching, "they are separate") is True and correct(touching, "in contact") is False
    assert esibench_verdict(ESIRule(task="transparent", truth="yes"), "inside").correct is True


def test_sides_sizes_and_counts() -> None:
    pour = ESIRule(task="pour", truth="left", labels=["mug", "glass"])
    assert correct(pour, "the mug") is True and correct(pour, "Right") is False and correct(pour, "?") is None
    size = ESIRule(task="size", truth="near the die", labels=["coin", "die"])
    assert correct(size, "the die") is True and correct(size, "ref_obj1") is False
    agents = ESIRule(task="multiagent", truth=2)
    assert correct(agents, "2 plates") is True and correct(agents, "4") is None and correct(agents, 2) is True
    slope = ESIRule(task="slope", truth="no")
    assert correct(slope, "it will slide down") is True and correct(slope, "maybe") is False


def test_option_ids_containers_changes_distance_and_action() -> None:
    cloth = ESIRule(task="deformable", truth="B", choices=[["A", "fork"], ["B", "spoon"]])
    assert correct(cloth, "B. spoon") is True and correct(cloth, "spoon") is True
    assert esibench_final_answer(cloth, "unsure") == "A"  # the official reader's fallback id
    box = ESIRule(
        task="storage",
        truth="obj_container_1",
        unique_categories=True,
        containers=[
            {"name": "obj_container_2", "display": "crate", "fit": "big", "category": "crate"},
            {"name": "obj_container_1", "display": "basket", "fit": "fit", "category": "basket"},
        ],
    )
    assert (
        correct(box, "The basket") is True and correct(box, "crate") is False and correct(box, "bag") is None
    )
    change = ESIRule(task="unobserved_changes", truth="red box", options=["brown box", "red box"])
    assert correct(change, "B) Red box") is True and correct(change, "brown box") is False
    distance = ESIRule(task="distance", truth="red_mug", secondary="mug", labels=["mug", "red_mug"])
    assert esibench_final_answer(distance, "red mug") == "mug"  # 'mug' is tried first and is inside it
    assert correct(distance, "the near one") is True
    action = ESIRule(task="action", truth="right", secondary="left", n_objects=3)
    assert correct(action, "Right, then left") is True and correct(action, "right") is False
    assert correct(ESIRule(task="action", truth="above", n_objects=2), "above it") is True


def test_scoring_through_eviseek_uses_the_rule_set() -> None:
    from eviseek.answers import score_answer
    from eviseek.types import AnswerContract, Question

    q = Question(
        id="q",
        text="How many?",
        contract=AnswerContract(kind="integer"),
        ground_truth="3",
        metadata={"rules": "esibench", "esibench": {"rule": {"task": "counting", "truth": "3"}}},
    )
    assert score_answer(q, "three").correct is False  # eviseek's own rules would accept it
    assert score_answer(q, "4").score == pytest.approx(2 / 3) and not score_answer(q, "4").correct
    assert score_answer(q, "3").score == 1.0
