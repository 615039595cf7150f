"""Answer normalisation and scoring, shared by environments, agents and the evaluation harness."""

from eviseek.answers.normalize import (
    match_option,
    normalize_answer,
    normalize_text,
    parse_integer,
    parse_sequence,
    parse_yes_no,
    strip_wrappers,
)
from eviseek.answers.score import AnswerScore, accepted_answers, score_answer, soft_count_score

__all__ = [
    "AnswerScore",
    "accepted_answers",
    "match_option",
    "normalize_answer",
    "normalize_text",
    "parse_integer",
    "parse_sequence",
    "parse_yes_no",
    "score_answer",
    "soft_count_score",
    "strip_wrappers",
]
