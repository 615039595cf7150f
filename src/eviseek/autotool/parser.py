"""Read AutoTool replies: mode, reasoning, tool calls (valid or not), answer, format violations.

The parser is the boundary between model text and the program, so it must never raise on
whatever a model writes: every oddity becomes a violation code on the result. It scans the
text once for protocol tags (linear time; no backtracking regular expressions, no recursion
beyond what ``json`` does, whose ``RecursionError`` is caught).

Violation codes (each turn):

* ``missing_mode`` - the first turn has neither ``<tool_on>`` nor ``<tool_off>``
* ``mode_not_first`` - the mode token is not the first thing in the first turn
* ``multiple_modes`` - more than one mode token
* ``missing_think`` / ``unclosed_think`` / ``multiple_think``
* ``unclosed_tool_call`` / ``unclosed_answer`` - an opening tag without its closing tag
* ``invalid_tool_call`` - a ``<tool_call>`` block that is not a well-formed zoom call
* ``tool_call_in_tool_off`` - a tool call although the episode declared ``<tool_off>``
* ``answer_with_tool_call`` - an answer in the same turn as a tool call
* ``multiple_answers`` / ``empty_answer``
* ``no_action`` - a turn with neither a tool call nor an answer
* ``stray_tag`` - a closing tag with no opening tag
* ``stray_text`` - non-blank text outside the protocol blocks
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from eviseek.autotool.protocol import MODE_TOKENS, ZOOM_TOOL_NAME, Mode

_TAG = re.compile(r"<(/?)(think|tool_call|answer|tool_on|tool_off|tool_response)>")

VIOLATIONS: dict[str, str] = {
    "missing_mode": "the reply must start with <tool_on> or <tool_off>",
    "mode_not_first": "the mode token must come first, before any other text",
    "multiple_modes": "declare exactly one mode token",
    "missing_think": "reason inside <think>...</think> before acting",
    "unclosed_think": "<think> was opened but never closed",
    "multiple_think": "use a single <think> block per turn",
    "unclosed_tool_call": "<tool_call> was opened but never closed",
    "unclosed_answer": "<answer> was opened but never closed",
    "invalid_tool_call": "a <tool_call> block is not a well-formed image_zoom_in_tool call",
    "tool_call_in_tool_off": "<tool_off> was declared, so no tool may be called",
    "answer_with_tool_call": "do not answer in the same turn as a tool call; wait for the zoomed image",
    "multiple_answers": "give one <answer> block",
    "empty_answer": "the <answer> block is empty",
    "no_action": "each turn must end with a tool call or an answer",
    "stray_tag": "a closing tag appears without its opening tag",
    "stray_text": "text appears outside the <think>, <tool_call> and <answer> blocks",
}
"""Every violation code with a one-line explanation (usable as feedback to a model)."""


class ToolCall(BaseModel):
    """One tool call as the model wrote it, with its validity."""

    raw: str = ""
    """The text inside ``<tool_call>...</tool_call>`` (empty for structured calls)."""
    name: str | None = None
    arguments: dict[str, Any] | None = None
    bbox: list[float] | None = None
    """Four finite numbers when the arguments carry a well-formed ``bbox_2d``."""
    label: str | None = None
    valid: bool = False
    """Well-formed: right tool name and a four-number box with x2 > x1 and y2 > y1. Whether the
    box fits the image is the environment's business (it clamps or rejects)."""
    error: str | None = None


class ParsedTurn(BaseModel):
    """What one assistant turn contains."""

    text: str
    mode: Mode | None = None
    think: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    answer: str | None = None
    violations: list[str] = Field(default_factory=list)

    @property
    def well_formed(self) -> bool:
        """Whether the turn has no format violation."""
        return not self.violations


def _add(violations: list[str], code: str) -> None:
    if code not in violations:
        violations.append(code)


def parse_call_json(raw: str) -> ToolCall:
    """Parse the JSON inside one ``<tool_call>`` block into a :class:`ToolCall` (never raises)."""
    text = raw.strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        return ToolCall(raw=raw, error=f"the tool call is not valid JSON ({msg})")
    if not isinstance(data, dict):
        return ToolCall(
            raw=raw, error='the tool call must be a JSON object {"name": ..., "arguments": {...}}'
        )
    return check_call(data.get("name"), data.get("arguments"), raw=raw)


def check_call(name: Any, arguments: Any, raw: str = "") -> ToolCall:
    """Validate a call given as name and arguments (arguments may be a JSON string, as in OpenAI)."""
    call = ToolCall(raw=raw, name=name if isinstance(name, str) else None)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            call.error = "the tool call's arguments are not valid JSON"
            return call
    if not isinstance(name, str) or name != ZOOM_TOOL_NAME:
        call.error = f"unknown tool {name!r:.60}; the only tool is {ZOOM_TOOL_NAME}"
        if isinstance(arguments, dict):
            call.arguments = arguments
        return call
    if not isinstance(arguments, dict):
        call.error = 'the tool call needs "arguments": {"bbox_2d": [x1, y1, x2, y2]}'
        return call
    call.arguments = arguments
    label = arguments.get("label")
    if label is not None:
        call.label = str(label)[:200]
    box = arguments.get("bbox_2d")
    if not isinstance(box, list) or len(box) != 4:
        call.error = "bbox_2d must be a list of four numbers [x1, y1, x2, y2]"
        return call
    nums: list[float] = []
    for v in box:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            call.error = "bbox_2d values must be numbers"
            return call
        try:
            f = float(v)
        except OverflowError:
            call.error = "bbox_2d values are far too large"
            return call
        if f != f or f in (float("inf"), float("-inf")):
            call.error = "bbox_2d values must be finite numbers"
            return call
        nums.append(f)
    call.bbox = nums
    if nums[2] <= nums[0] or nums[3] <= nums[1]:
        call.error = "bbox_2d must satisfy x2 > x1 and y2 > y1 ([left, top, right, bottom])"
        return call
    call.valid = True
    return call


# Long because it is one pass over a turn's tags (mode tokens, then the blocks, then the rules for
# the whole turn), and each block updates state the later rules read (the declared mode, unclosed
# tags, text outside blocks); split, that state would have to travel between the parts.
def parse_turn(text: Any, *, first: bool = True, mode: Mode | None = None) -> ParsedTurn:
    """Parse one assistant turn.

    Args:
        text: the model's reply (anything that is not a string is read as empty text).
        first: whether this is the episode's first turn, which must start with a mode token.
        mode: the mode declared earlier in the episode (for later turns).
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    out = ParsedTurn(text=text)
    v = out.violations
    matches = list(_TAG.finditer(text))

    # Mode tokens: the first one counts.
    mode_tags = [m for m in matches if m.group(2) in ("tool_on", "tool_off") and not m.group(1)]
    if mode_tags:
        out.mode = MODE_TOKENS["<" + mode_tags[0].group(2) + ">"]
        if len(mode_tags) > 1:
            _add(v, "multiple_modes")
        if first and text[: mode_tags[0].start()].strip():
            _add(v, "mode_not_first")
    elif first:
        _add(v, "missing_mode")
    declared = out.mode or mode

    # Blocks: walk the tags; an opening tag consumes up to its matching closing tag.
    answers: list[str] = []
    thinks: list[str] = []
    outside: list[str] = []
    pos = 0
    i = 0
    while i < len(matches):
        m = matches[i]
        closing, tag = m.group(1), m.group(2)
        outside.append(text[pos : m.start()])
        pos = m.end()
        i += 1
        if tag in ("tool_on", "tool_off"):
            if closing:
                _add(v, "stray_tag")
            continue
        if closing:
            _add(v, "stray_tag")
            continue
        if tag == "tool_response":
            # A model that writes the tool's answer itself: skip it as stray text.
            _add(v, "stray_text")
            continue
        # Find the matching closing tag of this block.
        j = i
        while j < len(matches) and not (matches[j].group(1) and matches[j].group(2) == tag):
            j += 1
        if j < len(matches):
            body = text[m.end() : matches[j].start()]
            pos = matches[j].end()
            i = j + 1
            unclosed = False
        else:
            body = text[m.end() :]
            pos = len(text)
            i = len(matches)
            unclosed = True
        if tag == "think":
            thinks.append(body)
            if unclosed:
                _add(v, "unclosed_think")
        elif tag == "tool_call":
            call = parse_call_json(body)
            out.tool_calls.append(call)
            if unclosed:
                _add(v, "unclosed_tool_call")
            if not call.valid:
                _add(v, "invalid_tool_call")
        elif tag == "answer":
            answers.append(body)
            if unclosed:
                _add(v, "unclosed_answer")
    outside.append(text[pos:])

    if thinks:
        out.think = thinks[0].strip()
        if len(thinks) > 1:
            _add(v, "multiple_think")
    else:
        _add(v, "missing_think")
    if answers:
        out.answer = answers[-1].strip()
        if len(answers) > 1:
            _add(v, "multiple_answers")
        if not out.answer:
            _add(v, "empty_answer")
    if out.tool_calls and declared == "tool_off":
        _add(v, "tool_call_in_tool_off")
    if out.tool_calls and answers:
        _add(v, "answer_with_tool_call")
    if not out.tool_calls and not answers:
        _add(v, "no_action")
    if "".join(outside).strip():
        _add(v, "stray_text")
    return out


class ParsedEpisode(BaseModel):
    """A whole (possibly multi-turn) rollout read back: what reward functions look at."""

    turns: list[ParsedTurn] = Field(default_factory=list)
    mode: Mode | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_results: list[bool | None] = Field(default_factory=list)
    """Per tool call, whether the environment returned an image (``None``: not visible here)."""
    answer: str | None = None
    violations: list[str] = Field(default_factory=list)
    """``"<turn>:<code>"`` for every violation, turns counted from 0."""

    @property
    def n_calls(self) -> int:
        """How many tool calls the rollout made (valid or not)."""
        return len(self.tool_calls)

    @property
    def n_valid_calls(self) -> int:
        """Calls that were well-formed and, where the tool's replies are visible, returned an image."""
        count = 0
        for k, call in enumerate(self.tool_calls):
            result = self.tool_results[k] if k < len(self.tool_results) else None
            if call.valid and result is not False:
                count += 1
        return count

    @property
    def well_formed(self) -> bool:
        """No format violation in any turn."""
        return not self.violations


def parse_turns(turns: Sequence[str], tool_results: Sequence[bool | None] | None = None) -> ParsedEpisode:
    """Parse the assistant turns of one rollout (the first turn carries the mode)."""
    ep = ParsedEpisode()
    mode: Mode | None = None
    for k, text in enumerate(turns):
        turn = parse_turn(text, first=(k == 0), mode=mode)
        if k == 0:
            mode = turn.mode
        elif turn.mode is not None and mode is not None and turn.mode != mode:
            # Repeating the mode later is tolerated; switching it is not.
            _add(turn.violations, "multiple_modes")
        ep.turns.append(turn)
        ep.tool_calls += turn.tool_calls
        ep.violations += [f"{k}:{c}" for c in turn.violations]
        if turn.answer is not None:
            ep.answer = turn.answer
    ep.mode = mode
    if tool_results is not None:
        ep.tool_results = list(tool_results)
    # Only the last turn may answer; a tool call after which the rollout stopped with no
    # answer is simply an unfinished episode (the answer stays None).
    return ep


def parse_completion(completion: Any, *, error_prefix: str | None = None) -> ParsedEpisode:
    """Parse a TRL-style completion: a string, or a list of chat messages (tool turns included).

    In the conversational form, assistant messages are the turns (structured ``tool_calls``
    fields count as calls when the text has no ``<tool_call>`` block), and each ``tool``
    message (or a user message that carries a ``<tool_response>``) tells whether the call it
    answers returned an image. Never raises on content.
    """
    from eviseek.autotool.prompts import ZOOM_ERROR_PREFIX

    prefix = error_prefix or ZOOM_ERROR_PREFIX
    if completion is None:
        return parse_turns([""])
    if isinstance(completion, str):
        return _parse_text(completion)
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, (list, tuple)):
        return parse_turns([str(completion)])
    turns: list[str] = []
    structured: list[list[ToolCall]] = []
    results: list[bool | None] = []
    for msg in completion:
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        content = msg.get("content")
        if role == "assistant":
            turns.append(_content_text(content))
            calls = []
            for tc in msg.get("tool_calls") or []:
                fn = tc.get("function", tc) if isinstance(tc, dict) else {}
                if isinstance(fn, dict):
                    calls.append(check_call(fn.get("name"), fn.get("arguments")))
            structured.append(calls)
        elif role == "tool" or (role == "user" and "<tool_response>" in _content_text(content)):
            has_image = _content_has_image(content)
            failed = _content_text(content).lstrip().startswith(prefix) or (
                prefix in _content_text(content) and not has_image
            )
            results.append(False if failed else (True if has_image else None))
    if not turns:
        return parse_turns([""])
    ep = parse_turns(turns, results)
    # Add structured calls that the text did not carry as <tool_call> blocks (TRL strips them).
    for k, calls in enumerate(structured):
        if calls and not ep.turns[k].tool_calls:
            ep.turns[k].tool_calls = calls
            ep.turns[k].violations = [c for c in ep.turns[k].violations if c != "no_action"]
            if ep.turns[k].answer is not None:
                _add(ep.turns[k].violations, "answer_with_tool_call")
            if ep.mode == "tool_off":
                _add(ep.turns[k].violations, "tool_call_in_tool_off")
            if any(not c.valid for c in calls):
                _add(ep.turns[k].violations, "invalid_tool_call")
    ep.tool_calls = [c for t in ep.turns for c in t.tool_calls]
    ep.violations = [f"{k}:{c}" for k, t in enumerate(ep.turns) for c in t.violations]
    return ep


@functools.lru_cache(maxsize=16384)
def _parse_text(text: str) -> ParsedEpisode:
    """Parse a single-string rollout once: TRL hands the same completions to every reward
    function, so the three AutoTool rewards share one parse. Callers must not mutate the result."""
    return parse_turns([text])


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, dict) and p.get("type") == "text":
                parts.append(str(p.get("text", "")))
            elif isinstance(p, str):
                parts.append(p)
        return "".join(parts)
    return "" if content is None else str(content)


def _content_has_image(content: Any) -> bool:
    if isinstance(content, list):
        return any(isinstance(p, dict) and p.get("type") in ("image", "image_url") for p in content)
    return False
