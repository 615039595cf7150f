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
    from eviseek.answers.esibench import saved_rule_set
    from eviseek.types import AnswerContract, Question

    q = Question(
        id="q",
        text="How many?",
        contract=AnswerContract(kind="integer"),
        ground_truth="3",
        metadata={"rules": "esibench", "esibench": {"rule": {"task": "counting", "truth": "3"}}},
    )
    rules = saved_rule_set(q.metadata)  # what older runs saved: the official rules
    assert rules == "esibench:official"
    assert score_answer(q, "three", rules=rules).correct is False
    assert score_answer(q, "three").correct is True  # eviseek's own rules accept it
    assert score_answer(q, "4", rules=rules).score == pytest.approx(2 / 3)
    assert not score_answer(q, "4", rules=rules).correct
    assert score_answer(q, "3", rules=rules).score == 1.0


# --------------------------------------------------------------------------------------------
# The paper's rule set (app. A's two answer-format normalisations)


def test_paper_rules_accept_pipe_separated_stacking_orders() -> None:
    from eviseek.answers.esibench import OFFICIAL_RULES, PAPER_RULES

    rule = ESIRule(task="stacking", labels=["box", "book", "cup"], orders=[["box", "book", "cup"]])
    assert esibench_score(rule, "box, book, cup").correct is True
    assert esibench_score(rule, "box | book | cup", OFFICIAL_RULES).correct is False
    assert esibench_score(rule, "box | book | cup", PAPER_RULES).correct is True
    assert esibench_score(rule, "cup | book | box", PAPER_RULES).correct is False


def test_route_steps_read_both_navigation_question_forms() -> None:
    from eviseek.answers.esibench import route_steps

    q1 = (
        "You are beginning in the bathroom 1. You want to navigate to the storage room 1. At each step, "
        "choose the next region you should explore. 1. Choose the next region to explore. bedroom_0 "
        "2. Choose the next region to explore. [please fill in] 3. Choose the next region to explore. "
        "storage_room_1 You have reached the final destination."
    )
    assert route_steps(q1) == ["bedroom 0", None, "storage room 1"]
    q2 = (
        "You will perform the following actions. For each blank, choose either 'turn back,' 'turn left,' "
        "or 'turn right.' 1. Go to the bedroom 0. 2. [please fill in] Choose the next turn direction. "
        "3. Go to the closet 2. You have reached the final destination."
    )
    assert route_steps(q2) == ["bedroom 0", None, "closet 2"]
    assert route_steps("Which room connects the kitchen 0 and the hall 0?") == []


def test_paper_rules_reduce_a_complete_route_to_its_blanks() -> None:
    from eviseek.answers.esibench import OFFICIAL_RULES, PAPER_RULES, paper_normalise

    rule = ESIRule(
        task="cognitivemap",
        truth="corridor_0 | playroom_0",
        options=[["corridor_0", "bathroom_1"], ["playroom_0", "bathroom_1"]],
        route=["bedroom 0", None, "childs room 1", None, "storage room 1"],
    )
    full = "bedroom_0 | corridor_0 | childs_room_1 | playroom_0 | storage_room_1"
    assert esibench_score(rule, full, OFFICIAL_RULES).correct is False
    assert esibench_score(rule, full, PAPER_RULES).correct is True
    assert paper_normalise(rule, full) == "corridor_0 | playroom_0"
    assert esibench_score(
        rule, ["bedroom 0", "corridor 0", "childs room 1", "playroom 0", "storage room 1"], PAPER_RULES
    ).correct
    # The blanks alone are read as before; a route whose supplied step differs, or a blank that
    # names no listed option, is left to the official reader (and so scores wrong).
    assert esibench_score(rule, "corridor_0 | playroom_0", PAPER_RULES).correct is True
    moved = "kitchen_0 | corridor_0 | childs_room_1 | playroom_0 | storage_room_1"
    assert paper_normalise(rule, moved) == moved
    odd = "bedroom_0 | garage_0 | childs_room_1 | playroom_0 | storage_room_1"
    assert paper_normalise(rule, odd) == odd
    # Neither normalisation looks at the truth: a wrong complete route is reduced to wrong blanks.
    wrong = "bedroom_0 | bathroom_1 | childs_room_1 | bathroom_1 | storage_room_1"
    assert paper_normalise(rule, wrong) == "bathroom_1 | bathroom_1"


def test_old_runs_rule_name_means_official() -> None:
    from eviseek.answers.esibench import OFFICIAL_RULES, PAPER_RULES, rule_set_of

    assert rule_set_of("esibench") == OFFICIAL_RULES
    assert rule_set_of(PAPER_RULES) == PAPER_RULES and rule_set_of("contract") is None
