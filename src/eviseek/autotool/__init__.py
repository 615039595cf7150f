"""AutoTool: dual-mode (``<tool_on>``/``<tool_off>``) zoom-in reasoning over high-resolution images.

Light names are re-exported here; the episode loop, dataset loaders and metrics live in
submodules (``.datasets``, ``.metrics``...); the dataset specs, scorer and report section are
registered by ``eviseek.eval.benchmarks.autotool``; the agent is ``eviseek.agents.autotool``.
Evaluation runs through the shared harness (``eviseek eval --agents autotool``, or its alias
``eviseek autotool eval``).
"""

from eviseek.autotool.parser import (
    VIOLATIONS,
    ParsedEpisode,
    ParsedTurn,
    ToolCall,
    parse_completion,
    parse_turn,
    parse_turns,
)
from eviseek.autotool.prompts import ZOOM_ERROR_PREFIX, system_prompt, tool_error_text, user_prompt
from eviseek.autotool.protocol import (
    SPECIAL_TOKENS,
    TOOL_OFF,
    TOOL_ON,
    ZOOM_TOOL_NAME,
    ZOOM_TOOL_SCHEMA,
    Mode,
)

__all__ = [
    "SPECIAL_TOKENS",
    "TOOL_OFF",
    "TOOL_ON",
    "VIOLATIONS",
    "ZOOM_ERROR_PREFIX",
    "ZOOM_TOOL_NAME",
    "ZOOM_TOOL_SCHEMA",
    "Mode",
    "ParsedEpisode",
    "ParsedTurn",
    "ToolCall",
    "parse_completion",
    "parse_turn",
    "parse_turns",
    "system_prompt",
    "tool_error_text",
    "user_prompt",
]
