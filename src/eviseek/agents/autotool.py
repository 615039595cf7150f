"""The AutoTool episode loop over any eviseek model and an image environment.

One episode: the model sees the (shown) image and the question, declares ``<tool_on>`` or
``<tool_off>``, reasons, and either answers or calls the zoom tool. Each valid call becomes an
environment step whose crop comes back to the model as a new user turn; an invalid call gets
an error message instead, and the episode goes on. The loop stops at an answer or after
``max_turns`` model calls (the last one is asked to answer without tools).

Everything lands in the shared :class:`~eviseek.types.Trajectory`: ``steps`` are the zoom
actions, ``calls`` the model calls, ``events`` the format violations and tool errors,
``answer_images`` the images in the answering call, and ``result.mode`` is ``tool_on`` or
``tool_off``.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eviseek.autotool.official import official_prompt
from eviseek.autotool.parser import ParsedTurn, ToolCall, parse_turn
from eviseek.autotool.prompts import (
    GROUNDING_SYSTEM,
    ForceHow,
    answer_format,
    final_answer_text,
    force_suffix,
    grounding_prompt,
    no_action_text,
    system_prompt,
    tool_error_text,
    tool_off_call_text,
    tool_response_text,
    user_prompt,
)
from eviseek.autotool.protocol import ZOOM_TOOL_NAME, ZOOM_TOOL_SCHEMA, Mode
from eviseek.autotool.scoring import uses_official_prompt
from eviseek.envs.base import AsyncEnv
from eviseek.models.base import Model, generate_recorded
from eviseek.types import (
    Action,
    ChatMessage,
    GenerateConfig,
    ImagePart,
    Question,
    Stage,
    StepRecord,
    TextPart,
    Trajectory,
)
from eviseek.types.image import SHOWN_MAX_PIXELS
from eviseek.types.plans import AutoToolPlan


class AutoToolReply(BaseModel):
    """The structure of one reply, for readers of ``GenerateConfig.response_schema``.

    Real providers never see this: the model writes tagged text, which the parser reads.
    """

    mode: Literal["tool_on", "tool_off"] | None = None
    think: str = ""
    tool_call: dict[str, Any] | None = None
    """``{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [...], "label": ...}}``"""
    answer: str | None = None


class AutoToolConfig(BaseModel):
    """Settings of the AutoTool agent built by name (``--agents autotool``, ``autotool:max_turns=3``).

    The fields mirror :class:`AutoToolAgent`'s arguments; ``temperature`` and ``max_tokens`` build
    its ``generate`` settings.
    """

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(5, ge=1)
    force_mode: Mode | None = None
    force_how: ForceHow = "token"
    max_calls_per_turn: int = Field(3, ge=1)
    max_pixels: int | None = Field(SHOWN_MAX_PIXELS, ge=784)
    """Pixel cap of the shown image and of each crop (Qwen-VL's usual 1280*28*28); ``None``
    leaves the environment's own."""
    temperature: float = Field(0.0, ge=0.0)
    max_tokens: int = Field(2048, ge=1)
    seed: int | None = None
    """Sampling seed sent with every request (providers that support one)."""


def autotool_agent(*, name: str = "autotool", **settings: Any) -> AutoToolAgent:
    """An :class:`AutoToolAgent` from :class:`AutoToolConfig` settings (the agent registry's factory)."""
    cfg = AutoToolConfig(**settings)
    agent = AutoToolAgent(
        max_turns=cfg.max_turns,
        force_mode=cfg.force_mode,
        force_how=cfg.force_how,
        max_calls_per_turn=cfg.max_calls_per_turn,
        max_pixels=cfg.max_pixels,
        generate=GenerateConfig(temperature=cfg.temperature, max_tokens=cfg.max_tokens, seed=cfg.seed),
    )
    agent.name = name
    return agent


class AutoToolAgent:
    """Dual-mode zoom-in agent (AutoTool's inference protocol).

    Args:
        max_turns: model calls per episode, the first included (paper's training used 5).
        force_mode: pin the mode (``tool_on``/``tool_off``) instead of letting the model choose.
        force_how: ``token`` appends the mode token to the input; ``instruction`` says it in words.
        max_calls_per_turn: zoom calls executed from one reply (extra ones get an error).
        max_pixels: pixel cap of the shown image and of each crop, sent to the environment at
            reset (``None``: the environment's own).
        generate: sampling settings for every call (``stage`` is always set to ``autotool``).
    """

    name = "autotool"

    def __init__(
        self,
        *,
        max_turns: int = 5,
        force_mode: Mode | None = None,
        force_how: ForceHow = "token",
        max_calls_per_turn: int = 3,
        max_pixels: int | None = None,
        generate: GenerateConfig | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if force_mode not in (None, "tool_on", "tool_off"):
            raise ValueError(f"force_mode must be tool_on, tool_off or None, not {force_mode!r}")
        if force_how not in ("token", "instruction"):
            raise ValueError(f"force_how must be 'token' or 'instruction', not {force_how!r}")
        self.max_turns = max_turns
        self.force_mode: Mode | None = force_mode
        self.force_how: ForceHow = force_how
        self.max_calls_per_turn = max_calls_per_turn
        self.max_pixels = max_pixels
        self.generate = generate or GenerateConfig(temperature=0.0, max_tokens=2048)

    def config(self) -> dict[str, Any]:
        """The settings, for ``Trajectory.config`` and run records."""
        return {
            "max_turns": self.max_turns,
            "force_mode": self.force_mode,
            "force_how": self.force_how,
            "max_calls_per_turn": self.max_calls_per_turn,
            "max_pixels": self.max_pixels,
            "generate": self.generate.model_dump(exclude_none=True),
        }

    # Long because it is the paper's episode as written (appendix A.2): the prompt by benchmark kind
    # (grounding, the benchmark's own, the protocol's), then the turns of model call, parse and zoom,
    # then the record. The turn loop's state (messages, mode, answer, images of the last call) is
    # read again after the loop.
    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        """Run one episode and return its trajectory (``result`` unscored)."""
        start = time.perf_counter()
        # The environment's step limit: every zoom call the turn limit allows.
        options: dict[str, Any] = {
            "question": question,
            "max_steps": self.max_turns * self.max_calls_per_turn,
        }
        if self.max_pixels is not None:
            options["max_pixels"] = self.max_pixels
        obs, info = await env.reset(seed=seed, options=options)
        shown = obs.image
        shown_size = (shown.width, shown.height)
        traj = Trajectory(
            episode_id=uuid.uuid4().hex[:12],
            question_id=question.id,
            agent=self.name,
            model=model.name,
            config=self.config(),
            initial_image=shown,
        )
        if question.contract.kind == "bbox" and question.metadata.get("expression"):
            # Grounding benchmarks are run as the paper ran them (appendix A.2): a plain system
            # prompt and the Seg-Zero-style grounding request, the same for every model.
            messages: list[ChatMessage] = [
                ChatMessage.system(GROUNDING_SYSTEM),
                ChatMessage.user(shown, grounding_prompt(str(question.metadata["expression"]))),
            ]
        elif uses_official_prompt(question):
            # The benchmark's own prompt (appendix A.2) after the protocol's system prompt, so the
            # model still chooses its mode; a forced mode token goes at the end, as usual.
            text = official_prompt(question)
            if self.force_mode is not None:
                text += "\n" + force_suffix(self.force_mode, self.force_how)
            messages = [ChatMessage.system(system_prompt()), ChatMessage.user(shown, text)]
        else:
            text = user_prompt(
                question.text,
                answer_format=answer_format(question.contract.kind, question.contract.options),
                image_size=shown_size,
                force_mode=self.force_mode,
                force_how=self.force_how,
            )
            messages = [ChatMessage.system(system_prompt()), ChatMessage.user(shown, text)]
        official = uses_official_prompt(question)
        frame_of: dict[int, int] = {id(shown): 0}
        mode: Mode | None = None
        declared = False
        answer: str | None = None
        last_text = ""
        final_call_images: list[Any] = []
        for turn in range(self.max_turns):
            last_turn = turn == self.max_turns - 1
            cfg = self.generate.merged(
                GenerateConfig(
                    stage=Stage.AUTOTOOL,
                    response_schema=AutoToolReply.model_json_schema(),
                    metadata={
                        "turn": turn,
                        "mode": mode,
                        "force_mode": self.force_mode,
                        "options": question.contract.options,
                        "answer_kind": question.contract.kind,
                        "image_size": list(shown_size),
                        "tools": [ZOOM_TOOL_SCHEMA] if mode != "tool_off" and not last_turn else [],
                    },
                )
            )
            completion, call = await generate_recorded(model, messages, cfg)
            traj.calls.append(call)
            final_call_images = [img for m in messages for img in m.images()]
            last_text = completion.text
            parsed = parse_turn(completion.text, first=(turn == 0), mode=mode)
            if turn == 0:
                mode, declared = self._settle_mode(parsed, traj)
            self._log_violations(parsed, traj, turn, forced_ok=self.force_mode is not None and turn == 0)
            messages.append(ChatMessage.assistant(completion.text))
            if parsed.answer is not None:
                answer = parsed.answer
            elif official and not parsed.tool_calls:
                # The benchmark's prompt asks for its own answer format: its scorer reads the reply.
                answer = completion.text
            if (parsed.answer is not None or official) and not parsed.tool_calls:
                break
            if last_turn:
                break
            reply = await self._act(env, parsed.tool_calls, mode, traj, turn, frame_of)
            if not parsed.tool_calls:
                reply = [TextPart(text=no_action_text())]
            if turn + 1 == self.max_turns - 1:
                reply.append(TextPart(text="\n" + final_answer_text()))
            messages.append(ChatMessage(role="user", content=reply))
        traj.answer_images = list(final_call_images)
        traj.answer_frame_ids = [frame_of.get(id(img), -1) for img in final_call_images]
        traj.plan = AutoToolPlan(
            mode=mode,
            declared=declared,
            forced=self.force_mode,
            shown_size=shown_size,
            original_size=info.get("original_size"),
            answer_text=answer,  # as written, for the scorer (the result's answer becomes canonical)
        )
        if answer is None:
            # A wrong answer, not a failed episode: the model was asked and did not answer.
            traj.log("no_answer", f"no <answer> within {self.max_turns} turn(s)", stage=Stage.AUTOTOOL)
        traj.result = traj.make_result(
            question,
            agent=self.name,
            model=model.name,
            answer=answer,
            raw_answer=last_text,
            mode=mode,
            wall_time_s=time.perf_counter() - start,
        )
        return traj

    def _settle_mode(self, parsed: ParsedTurn, traj: Trajectory) -> tuple[Mode, bool]:
        """The episode's mode from the first reply (declared, forced, or inferred from its actions)."""
        if parsed.mode is not None:
            if self.force_mode is not None and parsed.mode != self.force_mode:
                traj.log(
                    "mode_override",
                    f"the model declared {parsed.mode} although {self.force_mode} was forced",
                    stage=Stage.AUTOTOOL,
                )
            return parsed.mode, True
        if self.force_mode is not None:
            return self.force_mode, False
        inferred: Mode = "tool_on" if parsed.tool_calls else "tool_off"
        traj.log(
            "missing_mode",
            f"the first reply declared no mode; treated as {inferred} from what it did",
            stage=Stage.AUTOTOOL,
        )
        return inferred, False

    def _log_violations(self, parsed: ParsedTurn, traj: Trajectory, turn: int, *, forced_ok: bool) -> None:
        for code in parsed.violations:
            if forced_ok and code == "missing_mode":
                continue  # the forced token was part of the input, so the model need not repeat it
            traj.log("format", f"turn {turn}: {code}", stage=Stage.AUTOTOOL, at_step=len(traj.steps))

    async def _act(
        self,
        env: AsyncEnv,
        calls: list[ToolCall],
        mode: Mode | None,
        traj: Trajectory,
        turn: int,
        frame_of: dict[int, int],
    ) -> list[TextPart | ImagePart]:
        """Execute the turn's tool calls; return the content of the next user turn."""
        parts: list[TextPart | ImagePart] = []
        if not calls:
            return parts
        if mode == "tool_off":
            traj.log(
                "tool_error", "tool call in tool_off mode", stage=Stage.AUTOTOOL, at_step=len(traj.steps)
            )
            return [TextPart(text=tool_off_call_text())]
        for k, call in enumerate(calls):
            if k >= self.max_calls_per_turn:
                parts.append(
                    TextPart(text=tool_error_text(f"only {self.max_calls_per_turn} zoom calls run per turn"))
                )
                break
            if not call.valid or call.bbox is None:
                msg = call.error or "the tool call could not be read"
                traj.log(
                    "tool_error", msg, stage=Stage.AUTOTOOL, at_step=len(traj.steps), data={"raw": call.raw}
                )
                parts.append(TextPart(text=tool_error_text(msg)))
                continue
            args = {"bbox_2d": json.dumps(call.bbox)}
            if call.label:
                args["label"] = call.label
            action = Action(name=ZOOM_TOOL_NAME, args=args)
            result = await env.step(action)
            record = StepRecord.from_step(
                len(traj.steps) + 1,
                action,
                result,
                intent="zoom",
                decision=len(traj.calls) - 1,
                keep_failed_view=False,
            )
            traj.steps.append(record)
            if not result.feedback.success:
                traj.log("tool_error", result.feedback.reason, stage=Stage.AUTOTOOL, at_step=record.index)
                parts.append(TextPart(text=tool_error_text(result.feedback.reason)))
                continue
            crop = result.observation.image
            frame_of[id(crop)] = result.observation.frame_id
            before, after = tool_response_text(result.feedback.reason)
            parts += [TextPart(text=before), ImagePart(image=crop), TextPart(text=after)]
        return parts
