"""Task hooks reach agents through envs.base: asked for by name, typed by the TaskHooks protocol."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from eviseek.envs import base
from eviseek.envs.base import TaskHooks, register_task_hooks, task_hooks
from eviseek.errors import ConfigError
from eviseek.types import AnswerContract, Question


class _Fixed:
    """Hooks that stop at once with a fixed answer (a plugin's own rules)."""

    def __init__(self, question: Question, root: str | None, **settings: Any) -> None:
        self.question, self.root, self.settings = question, root, settings

    def contents(self, image_path: Path, history: list[dict[str, Any]], prompt: str, references: list[Path]):
        return [prompt, image_path]

    def system_prompt(self) -> str:
        return f"answer {self.question.text}"

    def forced_choice_prompt(self) -> str:
        return "choose"

    def read(self, reply: dict[str, Any]) -> dict[str, Any]:
        return dict(reply)

    def should_stop(
        self, parsed: dict[str, Any], history: list[dict[str, Any]], step: int
    ) -> tuple[bool, str]:
        return True, "fixed"

    def final_answer(self, history: list[dict[str, Any]]) -> tuple[Any, int]:
        return "yes", 1

    def needs_forced_choice(self, answer: Any, stop_reason: str) -> bool:
        return False


def test_hooks_are_built_by_name_with_the_question_root_and_settings() -> None:
    q = Question(id="q", text="is it red?", contract=AnswerContract(kind="yes_no"))
    register_task_hooks("fixed", _Fixed)
    try:
        hooks = task_hooks("fixed", q, "/opt/bench", max_steps=3)
        assert isinstance(hooks, _Fixed) and (hooks.root, hooks.settings) == ("/opt/bench", {"max_steps": 3})
        assert hooks.system_prompt() == "answer is it red?" and hooks.should_stop({}, [], 1) == (
            True,
            "fixed",
        )
    finally:
        del base._TASK_HOOKS["fixed"]
    with pytest.raises(ConfigError, match="no task hooks named 'fixed'; registered: esibench"):
        task_hooks("fixed", q)


def test_esibench_hooks_are_registered_lazily_and_fit_the_protocol() -> None:
    # The entry point is a string: asking envs.base for the name imports the bridge then, not before.
    assert base._TASK_HOOKS["esibench"] == "eviseek.envs.esibench.hooks:ESIBenchTaskHooks.for_question"
    from eviseek.envs.esibench.hooks import ESIBenchTaskHooks

    wanted = {n for n, _ in inspect.getmembers(TaskHooks, inspect.isfunction) if not n.startswith("_")}
    assert wanted == {
        "contents", "system_prompt", "forced_choice_prompt", "read", "should_stop", "final_answer",
        "needs_forced_choice",
    }  # fmt: skip
    for name in wanted:
        ours = inspect.signature(getattr(ESIBenchTaskHooks, name))
        assert list(ours.parameters) == list(inspect.signature(getattr(TaskHooks, name)).parameters), name
