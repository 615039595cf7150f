"""The scripted model used by every agent test."""

from __future__ import annotations

import pytest

from eviseek.errors import ConfigError, ScriptExhaustedError
from eviseek.models import ScriptedModel, generate_recorded, get_model
from eviseek.types import ChatMessage, GenerateConfig


async def test_replies_in_order_then_fails_loudly() -> None:
    model = ScriptedModel(["a", "b"])
    msgs = [ChatMessage.user("hi")]
    assert (await model.generate(msgs)).text == "a"
    assert (await model.generate(msgs)).text == "b"
    with pytest.raises(ScriptExhaustedError, match="given 2"):
        await model.generate(msgs, GenerateConfig(stage="answer"))


async def test_jsonl_file_and_registry(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.jsonl"
    path.write_text('"first"\n{"text": "second"}\n')
    model = get_model("scripted/file", path=path)
    completion, call = await generate_recorded(model, [ChatMessage.user("q")], GenerateConfig(stage="plan"))
    assert completion.text == "first"
    assert call.stage == "plan" and call.output == "first" and call.model == "scripted/file"


def test_bad_jsonl_names_the_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.jsonl"
    path.write_text('"ok"\n{broken\n')
    with pytest.raises(ConfigError, match=r"r.jsonl:2"):
        ScriptedModel.read_jsonl(path)


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match="known providers"):
        get_model("nope/x")
