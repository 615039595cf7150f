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


class UnknownQuestionError(ConfigError):
    """No question of the checkout has the id asked for (a bad value, not a missing file)."""


def _matches(qid: str, esi_id: str) -> bool:
    """Whether ``qid`` names ESI-Bench's id ``esi_id``: as written (``0123``), with eviseek's
    prefix (``esibench-0123``), or as the same number (``123``)."""
    wanted = qid.strip().removeprefix("esibench-")
    if wanted == esi_id:
        return True
    return wanted.isdigit() and esi_id.isdigit() and int(wanted) == int(esi_id)


def find_question(questions: list[Question], qid: str) -> Question:
    """A question by ESI-Bench id (``0123``) or eviseek id (``esibench-0123``)."""
    for q in questions:
        if _matches(qid, str((q.metadata.get("esibench") or {}).get("id"))):
            return q
    raise UnknownQuestionError(
        f"no ESI-Bench question {qid!r} here; ids look like 0123 (ESI-Bench's) or esibench-0123"
    )


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
    """The question ``qid`` of the checkout at ``path`` and each agent's first request on it.

    Only that question's record is read into a question and rendered by its task module (the
    other records are only scanned for the id), so a call costs one rendering, not 3,502; and
    that rendering is kept for the checkout's state, so a later call imports nothing of ESI-Bench
    (:mod:`eviseek.envs.esibench.text_cache`).
    """
    from eviseek.eval.esibench.dataset import LoadOptions, attach_task_text, task_checkout, to_question
    from eviseek.eval.esibench.records import find_dataset_root, iter_records

    checkout = task_checkout(path, "require")  # a clear error when no checkout supplies the text
    assert checkout is not None
    root = find_dataset_root(path)
    record = next((r for r in iter_records(root) if _matches(qid, r.id)), None)
    if record is None:
        raise UnknownQuestionError(
            f"no ESI-Bench question {qid!r} in {path}; ids look like 0123 (ESI-Bench's) or esibench-0123"
        )
    question, _ = to_question(record, root.parent if root.is_file() else root, LoadOptions(images="skip"))
    attach_task_text(question, record, checkout, cache=True)
    if not (question.metadata.get("esibench") or {}).get("task_text"):
        why = question.metadata["esibench"].get("task_text_error") or "no task text"
        raise ConfigError(f"{question.id}: the task module could not render its text ({why})")
    return question, [first_request(question, a) for a in (agents or list(DEFAULT_AGENTS))]
