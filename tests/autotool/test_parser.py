"""The dual-mode parser: well-formed, malformed and adversarial replies; it never raises."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eviseek.autotool import VIOLATIONS, parse_completion, parse_turn, parse_turns
from eviseek.autotool.prompts import tool_error_text

CALL = (
    '<tool_call>{"name": "image_zoom_in_tool", '
    '"arguments": {"bbox_2d": [10, 20, 110, 220], "label": "cat"}}</tool_call>'
)


def test_well_formed_tool_on_turn() -> None:
    t = parse_turn(f"<tool_on>\n<think>the cat is tiny</think>\n{CALL}")
    assert t.mode == "tool_on" and t.think == "the cat is tiny"
    assert len(t.tool_calls) == 1
    call = t.tool_calls[0]
    assert call.valid and call.bbox == [10, 20, 110, 220] and call.label == "cat"
    assert t.answer is None and t.violations == []


def test_well_formed_tool_off_turn() -> None:
    t = parse_turn("<tool_off> <think>plain to see</think> <answer>B</answer>")
    assert t.mode == "tool_off" and t.answer == "B" and t.well_formed


def test_later_turn_needs_no_mode() -> None:
    t = parse_turn("<think>now I see it</think><answer>red</answer>", first=False, mode="tool_on")
    assert t.well_formed and t.mode is None and t.answer == "red"


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("<think>x</think><answer>A</answer>", {"missing_mode"}),
        ("Sure! <tool_off><think>x</think><answer>A</answer>", {"mode_not_first", "stray_text"}),
        ("<tool_on><tool_off><think>x</think><answer>A</answer>", {"multiple_modes"}),
        ("<tool_off><answer>A</answer>", {"missing_think"}),
        ("<tool_off><think>x", {"unclosed_think", "no_action"}),
        ("<tool_off><think>x</think><answer>A", {"unclosed_answer"}),
        ("<tool_off><think>x</think><answer> </answer>", {"empty_answer"}),
        ("<tool_off><think>x</think><answer>A</answer><answer>B</answer>", {"multiple_answers"}),
        ("<tool_off><think>a</think><think>b</think><answer>A</answer>", {"multiple_think"}),
        (f"<tool_off><think>x</think>{CALL}", {"tool_call_in_tool_off"}),
        (f"<tool_on><think>x</think>{CALL}<answer>A</answer>", {"answer_with_tool_call"}),
        ("<tool_on><think>x</think><tool_call>{bad json</tool_call>", {"invalid_tool_call"}),
        ("<tool_on><think>x</think>", {"no_action"}),
        ("<tool_off><think>x</think></answer><answer>A</answer>", {"stray_tag"}),
        ("<tool_on><think>x</think><tool_call>" + CALL[11:-12], {"unclosed_tool_call"}),
    ],
)
def test_malformed_turns_report_violations(text: str, codes: set[str]) -> None:
    t = parse_turn(text)
    assert codes <= set(t.violations), t.violations
    assert all(c in VIOLATIONS for c in t.violations)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("{bad", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"name": "crop", "arguments": {"bbox_2d": [0, 0, 5, 5]}}', "unknown tool"),
        ('{"name": "image_zoom_in_tool"}', "arguments"),
        ('{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, 0, 5]}}', "four numbers"),
        ('{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, "a", 5, 5]}}', "numbers"),
        ('{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [9, 0, 5, 5]}}', "x2 > x1"),
        ('{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, 0, 1e999, 5]}}', "finite"),
        ('{"name": "image_zoom_in_tool", "arguments": "{not json"}', "arguments are not valid JSON"),
        ('{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, 0, 1' + "0" * 400 + ", 5]}}", "large"),
    ],
)
def test_invalid_calls_carry_an_error(body: str, error: str) -> None:
    t = parse_turn(f"<tool_on><think>x</think><tool_call>{body}</tool_call>")
    assert len(t.tool_calls) == 1
    call = t.tool_calls[0]
    assert not call.valid and call.error is not None and error in call.error


def test_arguments_as_json_string_are_accepted() -> None:
    args = json.dumps({"bbox_2d": [1, 2, 30, 40]})
    body = json.dumps({"name": "image_zoom_in_tool", "arguments": args})
    t = parse_turn(f"<tool_on><think>x</think><tool_call>{body}</tool_call>")
    assert t.tool_calls[0].valid


def test_deeply_nested_json_does_not_crash() -> None:
    body = "[" * 100_000 + "]" * 100_000
    t = parse_turn(f"<tool_on><think>x</think><tool_call>{body}</tool_call>")
    assert not t.tool_calls[0].valid


def test_multi_turn_episode_and_mode_switch() -> None:
    ep = parse_turns(
        [
            f"<tool_on><think>zoom</think>{CALL}",
            f"<think>again</think>{CALL}",
            "<tool_off><think>done</think><answer>cat</answer>",
        ]
    )
    assert ep.mode == "tool_on" and ep.n_calls == 2 and ep.answer == "cat"
    assert "2:multiple_modes" in ep.violations and not ep.well_formed


def test_conversational_completion_with_tool_turns() -> None:
    completion = [
        {"role": "assistant", "content": f"<tool_on><think>zoom</think>{CALL}"},
        {"role": "tool", "content": [{"type": "image"}, {"type": "text", "text": "zoomed"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "<think>ok</think><answer>cat</answer>"}]},
    ]
    ep = parse_completion(completion)
    assert ep.mode == "tool_on" and ep.n_calls == 1 and ep.n_valid_calls == 1
    assert ep.tool_results == [True] and ep.answer == "cat" and ep.well_formed


def test_failed_tool_response_makes_the_call_not_count() -> None:
    completion = [
        {"role": "assistant", "content": f"<tool_on><think>zoom</think>{CALL}"},
        {"role": "tool", "content": tool_error_text("the box is too small")},
        {"role": "assistant", "content": "<think>hm</think><answer>cat</answer>"},
    ]
    ep = parse_completion(completion)
    assert ep.n_calls == 1 and ep.n_valid_calls == 0 and ep.tool_results == [False]


def test_structured_tool_calls_count_when_text_has_no_block() -> None:
    completion = [
        {
            "role": "assistant",
            "content": "<tool_on><think>zoom</think>",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, 0, 50, 50]}},
                }
            ],
        },
        {"role": "tool", "content": [{"type": "image"}]},
        {"role": "assistant", "content": "<think>ok</think><answer>dog</answer>"},
    ]
    ep = parse_completion(completion)
    assert ep.n_calls == 1 and ep.n_valid_calls == 1 and ep.well_formed


@pytest.mark.parametrize("value", [None, 42, {"role": "assistant"}, [], [None, 3, "x"], b"bytes"])
def test_odd_completion_values(value: object) -> None:
    ep = parse_completion(value)
    assert ep.answer is None


# ---------------------------------------------------------------- property-based

TAGS = [
    "<tool_on>",
    "<tool_off>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<answer>",
    "</answer>",
    "<tool_response>",
    "</tool_response>",
    '{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [',
    "]}}",
    "1e999",
    "-0",
    ",",
    "{",
    "[",
    '"',
    "\\",
    "\x00",
]
fragments = st.lists(st.one_of(st.sampled_from(TAGS), st.text(max_size=12)), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(fragments, st.booleans())
def test_parse_turn_never_raises(text: str, first: bool) -> None:
    t = parse_turn(text, first=first)
    assert all(code in VIOLATIONS for code in t.violations)
    assert all((c.valid and c.bbox is not None) or (not c.valid and c.error) for c in t.tool_calls)


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.text(max_size=20) | st.integers(),
        lambda c: st.lists(c) | st.dictionaries(st.text(max_size=8), c),
        max_leaves=20,
    )
)
def test_parse_completion_never_raises(value: object) -> None:
    parse_completion(value)


@settings(max_examples=200, deadline=None)
@given(
    mode=st.sampled_from(["tool_on", "tool_off"]),
    think=st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=40),
    box=st.lists(st.integers(0, 5000), min_size=4, max_size=4),
    answer=st.text(alphabet=st.characters(blacklist_characters="<>"), min_size=1, max_size=20).filter(
        str.strip
    ),
)
def test_generated_well_formed_replies_parse_exactly(
    mode: str, think: str, box: list[int], answer: str
) -> None:
    if mode == "tool_on":
        x1, y1 = min(box[0], box[2]), min(box[1], box[3])
        x2, y2 = max(box[0], box[2]) + 1, max(box[1], box[3]) + 1
        call = json.dumps({"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [x1, y1, x2, y2]}})
        t = parse_turn(f"<tool_on><think>{think}</think><tool_call>{call}</tool_call>")
        assert t.well_formed and t.tool_calls[0].valid and t.tool_calls[0].bbox == [x1, y1, x2, y2]
    else:
        t = parse_turn(f"<tool_off><think>{think}</think><answer>{answer}</answer>")
        assert t.well_formed and t.answer == answer.strip() and t.think == think.strip()
