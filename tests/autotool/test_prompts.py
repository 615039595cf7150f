"""The AutoTool prompts."""

from __future__ import annotations

from eviseek.autotool.prompts import system_prompt


def test_compact_system_prompt_holds_no_reply_tags() -> None:
    # The reply's own mode token must be the only one in the context (see autotool.prompts).
    text = system_prompt(tools=False, compact=True)
    assert "tool-on" in text and "tool-off" in text
    assert not any(tag in text for tag in ("<tool_on>", "<tool_off>", "<think>", "<answer>", "<tool_call>"))
