"""The first request each agent would send on an ESI-Bench question, without a simulator.

``eviseek esibench prompts PATH --id QID [--agent A]``: the question is loaded with its task text
from the checkout, the agent is started on :class:`~eviseek.envs.esibench.preview.PromptPreviewEnv`
(a placeholder first view; the bridge's offered actions), and its first model call is recorded and
not answered. That is the exact request the agent sends first (system and user text, images as
placeholders, the call's stage), with the actions on offer and which ESI-Bench hooks supplied the
task text.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek.errors import ConfigError
from eviseek.eval.prompt_record import render_message
from eviseek.types import ChatMessage, Completion, GenerateConfig, Question

DEFAULT_AGENTS = ("passive:paper", "single-model", "eviseek:paper")


class _FirstCallTaken(Exception):
    """Raised by the recorder after the first call: the preview needs nothing more."""


class _Recorder:
    """A model that records the first request and ends the episode there."""

    name = "preview/first-request"

    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []
        self.config: GenerateConfig | None = None

    async def generate(self, messages: Any, config: GenerateConfig | None = None) -> Completion:
        self.messages, self.config = list(messages), config
        raise _FirstCallTaken


class PromptMessage(BaseModel):
    role: str
    text: str
    """The message's text; each image is shown as ``[image N]`` where it stands."""
    images: int = 0


class FirstRequest(BaseModel):
    """One agent's first request on one question."""

    agent: str
    question_id: str
    stage: str = ""
    messages: list[PromptMessage] = Field(default_factory=list)
    offered_actions: list[str] = Field(default_factory=list)
    task_actions: list[str] = Field(default_factory=list)
    hooks: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


def _message(m: ChatMessage) -> PromptMessage:
    text, images = render_message(m)
    return PromptMessage(role=m.role, text=text, images=images)


def find_question(questions: list[Question], qid: str) -> Question:
    """A question by eviseek id (``esibench-123``) or ESI-Bench id (``123``)."""
    for q in questions:
        if qid in (q.id, str((q.metadata.get("esibench") or {}).get("id"))):
            return q
    raise ConfigError(f"no ESI-Bench question {qid!r} here (ids look like 123 or esibench-123)")


def first_request(question: Question, agent_spec: str) -> FirstRequest:
    """Run ``agent_spec`` on ``question`` up to its first model call and return that call."""
    from eviseek.agents import make_agent
    from eviseek.envs.base import as_async
    from eviseek.envs.esibench.preview import PromptPreviewEnv

    text = (question.metadata.get("esibench") or {}).get("task_text") or {}
    env = PromptPreviewEnv()
    model = _Recorder()
    record = FirstRequest(
        agent=agent_spec,
        question_id=question.id,
        task_actions=[str(a.get("phrase")) for a in text.get("actions") or []],
        hooks=dict(text.get("hooks") or {}),
    )
    agent = make_agent(agent_spec)
    try:
        asyncio.run(agent.run(as_async(env), question, model))  # type: ignore[arg-type]
    except _FirstCallTaken:
        pass
    except Exception as exc:  # an agent that wraps the stop in its own error still recorded the call
        if not model.messages:
            record.error = f"{type(exc).__name__}: {exc}"
    record.offered_actions = [
        s.name + (f"({', '.join(s.params)})" if s.params else "") for s in env.legal_actions()
    ]
    record.messages = [_message(m) for m in model.messages]
    if model.config is not None:
        record.metadata = dict(model.config.metadata or {})
        record.stage = str(model.config.stage or record.metadata.get("stage") or "")
    if not model.messages and record.error is None:
        record.error = "the agent made no model call"
    return record


def first_requests(
    path: str | Path, qid: str, agents: list[str] | None = None
) -> tuple[Question, list[FirstRequest]]:
    """The question ``qid`` of the checkout at ``path`` and each agent's first request on it."""
    from eviseek.eval.esibench.dataset import LoadOptions, load_with_exclusions, task_checkout

    task_checkout(path, "require")  # a clear error when no checkout supplies the task text
    kept, dropped = load_with_exclusions(str(path), LoadOptions(images="skip", all=True, tasktext="auto"))
    question = find_question(kept + dropped, qid)
    if not (question.metadata.get("esibench") or {}).get("task_text"):
        why = question.metadata["esibench"].get("task_text_error") or "no task text"
        raise ConfigError(f"{question.id}: the task module could not render its text ({why})")
    return question, [first_request(question, a) for a in (agents or list(DEFAULT_AGENTS))]
