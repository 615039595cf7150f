"""Tokens, tool name and tool schema of AutoTool's dual-mode protocol.

A reply starts with a mode token, then reasons inside ``<think>``, then either calls the zoom
tool (``<tool_call>{json}</tool_call>``, tool-on mode only) or answers (``<answer>``, both
modes). The crop comes back in the next user turn wrapped in ``<tool_response>``.
"""

from __future__ import annotations

from typing import Any, Literal

from eviseek.envs.image.zoom import ZOOM_TOOL_NAME  # the environment owns its action name

TOOL_ON = "<tool_on>"
TOOL_OFF = "<tool_off>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE = "<tool_response>", "</tool_response>"

Mode = Literal["tool_on", "tool_off"]
MODE_TOKENS: dict[str, Mode] = {TOOL_ON: "tool_on", TOOL_OFF: "tool_off"}
TOKEN_OF_MODE: dict[Mode, str] = {"tool_on": TOOL_ON, "tool_off": TOOL_OFF}

SPECIAL_TOKENS: tuple[str, ...] = (
    TOOL_ON,
    TOOL_OFF,
    THINK_OPEN,
    THINK_CLOSE,
    TOOL_CALL_OPEN,
    TOOL_CALL_CLOSE,
    ANSWER_OPEN,
    ANSWER_CLOSE,
    TOOL_RESPONSE_OPEN,
    TOOL_RESPONSE_CLOSE,
)
"""Every tag of the protocol (for tokenizers that should keep them whole)."""


ZOOM_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": ZOOM_TOOL_NAME,
        "description": (
            "Crop the image to a rectangular region and return the crop at full resolution, "
            "so that small or distant details become legible."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "bbox_2d": {
                    "type": "array",
                    "items": {"type": "number"},
                    "minItems": 4,
                    "maxItems": 4,
                    "description": (
                        "The region as [x1, y1, x2, y2] in pixels of the image as you see it: "
                        "(x1, y1) is the top-left corner and (x2, y2) the bottom-right corner."
                    ),
                },
                "label": {
                    "type": "string",
                    "description": "Optional: what you expect to find in the region.",
                },
            },
            "required": ["bbox_2d"],
        },
    },
}
"""The zoom tool in OpenAI function format (the shape TRL, verl and vLLM accept)."""
