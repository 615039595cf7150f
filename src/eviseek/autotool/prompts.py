"""System and user prompts of the dual-mode protocol, written for eviseek.

The wording is the project's own; the structure follows the AutoTool paper's appendix: the
system prompt names the two modes, says when each fits, and lists the zoom tool in OpenAI
function format inside ``<tools>``; the user prompt states the question and the reply format.

Everything the training side needs to build identical prompts is here: :func:`system_prompt`,
:func:`user_prompt`, :func:`tool_response_text` and :func:`tool_error_text`.
"""

from __future__ import annotations

import json
from typing import Literal

from eviseek.autotool.protocol import (
    TOKEN_OF_MODE,
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_OPEN,
    ZOOM_TOOL_NAME,
    ZOOM_TOOL_SCHEMA,
    Mode,
)

ForceHow = Literal["token", "instruction"]

ZOOM_ERROR_PREFIX = "Zoom failed:"
"""Every error text the zoom tool sends back starts with this (reward code looks for it)."""

_SYSTEM = """You answer questions about images. Every first reply begins with a mode token that \
says whether you will use a tool:
- <tool_on>: you will look closer with the zoom tool before answering;
- <tool_off>: you will answer from the image as it is, with no tool.

Pick <tool_on> when the answer hangs on fine detail: a small or distant object, text or marks \
that are hard to read, one object that must be told apart from similar ones, a colour or \
texture that the full view does not show clearly.
Pick <tool_off> when the whole picture is enough: the scene, the layout, where large things \
are relative to each other, or a detail that is already plain to see. Zooming then adds \
nothing and can hide the context you need.

Reply format:
- tool mode: <tool_on> <think>your reasoning</think> <tool_call>{"name": "%(tool)s", \
"arguments": {"bbox_2d": [x1, y1, x2, y2], "label": "what you expect there"}}</tool_call>
  Then stop: the zoomed image comes back in the next message inside <tool_response>. After it \
you may zoom again or finish with <think>...</think> <answer>...</answer>.
- direct mode: <tool_off> <think>your reasoning</think> <answer>your answer</answer>

Boxes use the pixel coordinates of the image as you see it, (x1, y1) top-left and (x2, y2) \
bottom-right. Make a box a little larger than the object so that nothing is cut off.

The tool you may call, as a function signature:
<tools>
%(schema)s
</tools>"""


# The compact prompt names the reply's tags in words, never as the tags themselves: a tiny model
# finds what it wrote earlier in its reply by looking for that token, and a copy of both mode
# tokens in the system prompt hides which one the reply chose (the learning run's 1.6M-parameter
# model then wrote the same first words after either mode token).
_COMPACT_SYSTEM = """Start with the tool-on mode token to zoom into the image with the tool before \
answering (small or unclear details), or the tool-off mode token to answer from the image as it \
is (the whole view is enough). Then think, then call the tool (tool-on) or give the answer."""


_NO_TOOL_SYSTEM = """You answer questions about images. Begin your reply with <tool_off>, then reason \
in <think>...</think>, then give your final answer in <answer>...</answer>."""

_COMPACT_NO_TOOL_SYSTEM = """Start with the tool-off mode token, then think, then give the answer."""


def system_prompt(*, tools: bool = True, compact: bool = False, offer_tool: bool = True) -> str:
    """The system prompt; ``tools=False`` drops the tool list (for a model served with native tools).

    ``compact=True`` gives a three-line version with the same choices (the two modes, when each
    fits, the reply order) and no tool list: for tiny models trained on a CPU, where the full
    prompt would be most of every sequence. Ours; the paper's prompt is the full one.

    ``offer_tool=False`` gives a prompt that mentions no tool and no mode choice, only the reply
    order after ``<tool_off>`` (the text-only row of the paper's component table: GRPO without
    the tool). The mode token stays, so the same parser and format reward apply.
    """
    if not offer_tool:
        return _COMPACT_NO_TOOL_SYSTEM if compact else _NO_TOOL_SYSTEM
    if compact:
        return _COMPACT_SYSTEM
    text = _SYSTEM % {"tool": ZOOM_TOOL_NAME, "schema": json.dumps(ZOOM_TOOL_SCHEMA)}
    if not tools:
        text = text.split("\n\nThe tool you may call")[0]
    return text


_FORMAT = (
    "Follow this order: first the mode token (<tool_on> or <tool_off>), then your reasoning in "
    "<think>...</think>, then either one <tool_call>...</tool_call> (tool mode; do not answer in "
    "that message, wait for the zoomed image) or your final answer in <answer>...</answer>."
)

_FORCE_INSTRUCTION: dict[Mode, str] = {
    "tool_on": "For this question use <tool_on> and zoom in at least once before you answer.",
    "tool_off": "For this question use <tool_off> and answer directly without calling any tool.",
}


def user_prompt(
    question: str,
    *,
    answer_format: str = "",
    image_size: tuple[int, int] | None = None,
    force_mode: Mode | None = None,
    force_how: ForceHow = "token",
    compact: bool = False,
) -> str:
    """The text of the first user turn (the image goes before it in the same message).

    Args:
        question: the question, options included if the caller formats them in.
        answer_format: a line about the answer's shape, e.g. "Answer with the option's letter.".
        image_size: ``(width, height)`` of the image as shown, stated so boxes use that frame.
        force_mode: pin the mode instead of letting the model choose.
        force_how: ``"token"`` appends the mode token at the very end of the input (the paper's
            second forcing method); ``"instruction"`` says it in words.
        compact: leave out the reply-order reminder (the compact system prompt states it).
    """
    lines = [f"Question: {question.strip()}"]
    if answer_format:
        lines.append(answer_format.strip())
    if image_size is not None:
        lines.append(f"The image is {image_size[0]}x{image_size[1]} pixels (width x height).")
    if not compact:
        lines.append(_FORMAT)
    if force_mode is not None and force_how == "instruction":
        lines.append(_FORCE_INSTRUCTION[force_mode])
    text = "\n".join(lines)
    if force_mode is not None and force_how == "token":
        text += "\n" + TOKEN_OF_MODE[force_mode]
    return text


def force_suffix(mode: Mode, how: ForceHow = "token") -> str:
    """What pins a mode at the end of a user turn: the mode token, or the sentence that asks for it."""
    return TOKEN_OF_MODE[mode] if how == "token" else _FORCE_INSTRUCTION[mode]


def tool_response_text(description: str) -> tuple[str, str]:
    """Text before and after the crop image in the user turn that returns a zoom.

    Returns ``(before, after)``; the image goes between them.
    """
    before = f"{TOOL_RESPONSE_OPEN}Zoomed view of the {description}:\n"
    after = (
        f"\n{TOOL_RESPONSE_CLOSE}\nThink about the zoomed view in <think>...</think>, then either "
        "zoom again with <tool_call>...</tool_call> or give the final answer in <answer>...</answer>."
    )
    return before, after


def tool_error_text(message: str) -> str:
    """The user turn that tells the model its tool call failed and how to go on."""
    return (
        f"{TOOL_RESPONSE_OPEN}{ZOOM_ERROR_PREFIX} {message}{TOOL_RESPONSE_CLOSE}\n"
        "Fix the call and try again, or answer in <answer>...</answer> if you can."
    )


def tool_off_call_text() -> str:
    """The reply to a tool call made after declaring ``<tool_off>``."""
    return tool_error_text(
        "this episode is in <tool_off> mode, so no tool is available. "
        "Give your answer in <answer>...</answer>."
    )


def no_action_text() -> str:
    """The reply to a turn that neither called the tool nor answered."""
    return (
        "Your reply had neither a <tool_call> nor an <answer>. "
        "Continue: call the zoom tool or give your final answer in <answer>...</answer>."
    )


def final_answer_text() -> str:
    """The reply that asks for an answer when the turn limit is reached."""
    return (
        "You have used all zoom steps. Give your final answer now in <think>...</think> "
        "<answer>...</answer>, without calling the tool."
    )


_ANSWER_FORMATS = {
    "option": "Answer with the letter of the correct option.",
    "yes_no": "Answer yes or no.",
    "integer": "Answer with a single integer.",
    "sequence": "Answer with the names in order, separated by commas.",
    "bbox": 'Answer with the box as JSON, e.g. {"bbox_2d": [x1, y1, x2, y2]}, in image coordinates.',
    "text": "Answer with a short phrase.",
}


def answer_format(kind: str, options: list[str] | None = None) -> str:
    """The line of the user prompt that says what shape the answer takes."""
    if options:
        return _ANSWER_FORMATS["option"]
    return _ANSWER_FORMATS.get(kind, _ANSWER_FORMATS["text"])


GROUNDING_SYSTEM = "You are a helpful assistant."
"""The plain system prompt the paper pairs with the grounding request (appendix A.2)."""


def grounding_prompt(expression: str) -> str:
    """User prompt for grounding questions (RefCOCO, RefCOCO+, RefCOCOg): find the referred object,
    compare it with similar ones, reason, and answer with its box as JSON. The content of the
    Seg-Zero-style prompt the paper used (appendix A.2), in our words."""
    return (
        f'Find "{expression.strip()}" in the image. Compare the candidate objects and pick the one '
        "that matches best. Reason in <think>...</think>, then give its box as JSON inside "
        '<answer>...</answer>, e.g. <answer>{"bbox_2d": [10, 100, 200, 210]}</answer>.'
    )
