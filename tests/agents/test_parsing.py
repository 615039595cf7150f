"""The shared reply extractor: every near-miss a model produces, and no crash on anything."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eviseek.agents.parsing import extract_json, parse_reply
from eviseek.agents.replies import DemandsReply, KeepReply, SeekReply, SingleStepReply


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"keep": true, "note": "x"}', {"keep": True, "note": "x"}),
        ('Sure.\n```json\n{"keep": false,}\n```\nDone.', {"keep": False}),
        ("```\n{'keep': True, 'note': 'it\\'s clear'}\n```", {"keep": True, "note": "it's clear"}),
        (
            'I will keep it: {"keep": true, "frames": [1, 2,],} because it is clear',
            {"keep": True, "frames": [1, 2]},
        ),
        ('<think>maybe {"keep": false}</think>{"keep": true}', {"keep": True}),
        ('{"keep": True, "note": None}', {"keep": True, "note": None}),
        ('draft {"keep": false} final {"keep": true}', {"keep": True}),
        ('The cube\'s face is visible {"keep": true}', {"keep": True}),
    ],
)
def test_near_json_is_recovered(text: str, expected: dict) -> None:
    found = extract_json(text)
    assert found is not None
    assert found[0] == expected


def test_truncated_object_is_closed() -> None:
    value, repaired = extract_json('{"intent": "SWEEP", "args": {"direction": "left", "turns": 3')  # type: ignore[misc]
    assert repaired and value == {"intent": "SWEEP", "args": {"direction": "left", "turns": 3}}
    value, _ = extract_json('{"intent": "FACE", "args": {"direction": ')  # type: ignore[misc]
    assert value == {"intent": "FACE", "args": {}}


@pytest.mark.parametrize(
    "text", ["", "   ", "I think it is B.", "{{{{", "}}]]", "null", "42", '"just a string"']
)
def test_unreadable_replies_give_none(text: str) -> None:
    assert extract_json(text) is None
    result = parse_reply(text, KeepReply)
    assert result.value is None and result.error


def test_schema_errors_are_reported_not_raised() -> None:
    result = parse_reply('{"note": "no keep field"}', KeepReply)
    assert result.value is None and "keep" in (result.error or "")


def test_bare_list_fills_the_list_field() -> None:
    result = parse_reply('["see the top", {"text": "see the side"}]', DemandsReply)
    assert result.value is not None
    assert [d.text for d in result.value.demands] == ["see the top", "see the side"]


def test_lenient_fields() -> None:
    step = parse_reply(
        '{"action": "turn_left", "rationale": "look", "answer": 3, "confidence": "85%"}', SingleStepReply
    ).value
    assert step is not None and step.answer == "3" and step.confidence == pytest.approx(0.85)
    assert step.reasoning == "look"
    seek = parse_reply('{"action": "SWEEP", "arguments": null}', SeekReply).value
    assert seek is not None and seek.intent == "SWEEP" and seek.args == {}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_any_text_never_raises(text: str) -> None:
    for cls in (KeepReply, SeekReply, SingleStepReply, DemandsReply):
        result = parse_reply(text, cls)
        assert (result.value is None) == (result.error is not None)


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=8), json_values, min_size=1, max_size=5),
    st.text(max_size=40),
    st.text(max_size=40),
)
def test_objects_inside_prose_are_found(obj: dict, before: str, after: str) -> None:
    # Prose without braces around a JSON object: the object comes back exactly.
    before = before.replace("{", "").replace("}", "").replace("[", "").replace("]", "")
    after = after.replace("{", "").replace("}", "").replace("[", "").replace("]", "")
    found = extract_json(f"{before}\n{json.dumps(obj)}\n{after}")
    assert found is not None and found[0] == obj


# -- answers written in prose (no JSON) --------------------------------------------------------

PROSE_FORMS = [
    ("The cube is partly hidden, but its top shows.\nAnswer: A", "A", "answer label"),
    ("Looking at both views, the answer is (B). The rest is noise.", "(B)", "answer is"),
    ("Reasoning: the tower leans left.\n\n**Final answer:** yes", "yes", "answer label"),
    ("The red cube sits behind the box, so it is the second option.\n\nB", "B", "last line"),
    ("<think>count them</think>There are three cups in total: <answer>3</answer>", "3", "answer tag"),
    ("Counting the visible ones gives \\boxed{4}.", "4", "boxed"),
    ("First I thought Answer: A, but the second view shows otherwise.\nFinal answer: C", "C", "answer label"),
    ("Answer: left, because the shadow falls that way.", "left", "answer label"),
]


@pytest.mark.parametrize(
    ("reply", "span", "form"), PROSE_FORMS, ids=[f"{f[2]}-{i}" for i, f in enumerate(PROSE_FORMS)]
)
def test_answer_written_in_prose_is_read(reply: str, span: str, form: str) -> None:
    from eviseek.agents.parsing import extract_answer_text
    from eviseek.agents.replies import AnswerReply, ForcedChoiceReply

    assert extract_answer_text(reply) == (span, form)
    for model in (AnswerReply, ForcedChoiceReply):
        parsed = parse_reply(reply, model)
        assert parsed.ok and parsed.value.answer == span and parsed.prose == form  # type: ignore[union-attr]


def test_json_fragment_inside_prose_is_read_as_json() -> None:
    from eviseek.agents.replies import AnswerReply

    reply = 'I checked twice. {"answer": "B", "reasoning": "left view"} That is final.'
    parsed = parse_reply(reply, AnswerReply)
    assert parsed.ok and parsed.value.answer == "B" and parsed.prose is None  # type: ignore[union-attr]


def test_prose_without_an_answer_stays_a_parse_failure() -> None:
    from eviseek.agents.parsing import extract_answer_text
    from eviseek.agents.replies import AnswerReply, SingleStepReply

    for reply in ("I cannot tell from this view, the object is hidden.", "Which one do you mean?\nThe left?"):
        assert extract_answer_text(reply) is None
        assert not parse_reply(reply, AnswerReply).ok
    # Stages that are not answer replies never take an answer from prose.
    assert parse_reply("Answer: A", SingleStepReply).prose is None


def test_an_escaped_surrogate_pair_read_as_a_python_literal_is_one_character() -> None:
    # Found by Hypothesis: '#' after the object makes the reply a Python literal with a comment,
    # and Python keeps an escaped pair as two lone surrogates, which no encoder can write.
    reply = "\n" + json.dumps({"\U00010000": "x\U0001f600"}) + "\n#"
    found = extract_json(reply)
    assert found is not None and found[0] == {"\U00010000": "x\U0001f600"}
    json.dumps(found[0]).encode("utf-8")  # writable
