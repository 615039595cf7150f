"""ESI-Bench's per-task prompting and stopping, called from its checkout at run time.

The Single-model agent's ``esibench_hooks`` option uses these instead of eviseek's own prompts, to
reproduce the official baseline through eviseek: the task's system prompt (``build_system_prompt``),
its reading of each reply (``parse_model_output``), its stopping rule (``should_stop``), its final
answer choice (``resolve_final_answer``) and when to ask its forced-choice prompt
(``needs_force_final_choice`` / ``build_force_choice_prompt``). Each goes through the official
pipeline's wrapper of the same name, so a task without a hook gets the pipeline's default.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from eviseek.envs.esibench.checkout import import_pipeline, runner_config, task_module
from eviseek.errors import ConfigError
from eviseek.types import Question


class ESIBenchTaskHooks:
    """One question's task hooks, with the payload, task state and camera info they read."""

    def __init__(
        self, pipeline: ModuleType, question: Question, *, max_steps: int, min_steps: int, threshold: float
    ) -> None:
        meta = question.metadata.get("esibench") or {}
        source, task = meta.get("source"), meta.get("task")
        if not source or not task or not Path(str(source)).is_file():
            raise ConfigError(
                f"{question.id}: the ESI-Bench hooks need a question loaded with esibench:PATH "
                f"whose record is on this machine (source={source!r})"
            )
        self.pipeline = pipeline
        self.task = task_module(pipeline, str(task))
        chosen = pipeline.select_question(Path(str(source)), 0, None)
        self.payload = chosen.payload
        self.config = runner_config(
            pipeline,
            task,
            chosen.source_path,
            threshold=threshold,
            min_steps=min_steps,
            max_steps=max_steps,
        )
        self.state = pipeline.task_preprocess(self.task, self.payload, chosen.source_path, self.config)
        self.camera_info = self.task.initial_camera(self.payload)[2]

    @classmethod
    def for_question(cls, question: Question, root: str | None = None, **settings: Any) -> ESIBenchTaskHooks:
        """Hooks for ``question`` from the checkout at ``root`` or ``$ESI_BENCH_ROOT``."""
        return cls(import_pipeline(root), question, **settings)

    def contents(
        self, image_path: Path, history: list[dict[str, Any]], prompt: str, references: list[Path]
    ) -> list[str | Path]:
        """One call's content as the official runner assembles it: text history, reference
        images, up to five earlier views, the current view, then ``prompt`` (strings and paths)."""
        items = self.pipeline.collect_contents(image_path, history, prompt, reference_image_paths=references)
        return [item if isinstance(item, str) else Path(item) for item in items]

    def system_prompt(self) -> str:
        """The task's per-step instruction (its own wording)."""
        c = self.config
        return str(
            self.pipeline.task_build_system_prompt(
                self.task, self.payload, c.threshold, c.min_steps, self.camera_info, self.state
            )
        )

    def forced_choice_prompt(self) -> str:
        """The task's last-chance prompt when the final answer is an abstention."""
        return str(
            self.pipeline.task_build_force_choice_prompt(
                self.task, self.payload, self.camera_info, self.state
            )
        )

    def read(self, reply: dict[str, Any]) -> dict[str, Any]:
        """The task's reading of one JSON reply (action, answer, confidence, reasoning, ...)."""
        return dict(self.pipeline.task_parse_model_output(self.task, reply, self.payload, self.state))

    def should_stop(
        self, parsed: dict[str, Any], history: list[dict[str, Any]], step: int
    ) -> tuple[bool, str]:
        """The task's stopping rule after the reply of ``step`` (1-based)."""
        stop, why = self.pipeline.task_should_stop(self.task, parsed, history, step, self.config)
        return bool(stop), str(why)

    def final_answer(self, history: list[dict[str, Any]]) -> tuple[Any, int]:
        """The answer the task keeps from the history, and its step."""
        answer, step = self.pipeline.task_resolve_final_answer(self.task, history)
        return answer, int(step)

    def needs_forced_choice(self, answer: Any, stop_reason: str) -> bool:
        """Whether the task asks its forced-choice prompt for this final answer."""
        return bool(self.pipeline.task_needs_force_final_choice(self.task, answer, stop_reason))
