"""Greedy rollouts of a trained AutoTool policy on held-out rows, rendered exactly as in training.

The learning run compares the warm-up model with the GRPO model on questions neither saw. The
conversation is built the way TRL builds it during GRPO (the same prompt, chat template, tool
list and tool replies, crops inline), so a held-out score measures the policy that was trained,
not a different prompt. ``force_mode`` appends a mode token to the generation prompt (the
paper's section 3.5: a mode can be chosen by appending ``<tool_on>`` or ``<tool_off>``), which
measures what each mode is worth on each kind of question.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from eviseek._lazy import require
from eviseek.autotool.parser import parse_completion
from eviseek.autotool.scoring import check_answer
from eviseek.envs.image.zoom import ZOOM_TOOL_NAME
from eviseek.train.data import TrainingRow
from eviseek.train.frames import Coordinates, ImageFrame
from eviseek.train.rollout_stats import rollout_stats
from eviseek.train.rollouts import IM_END
from eviseek.train.trl_autotool.dataset import prompt_for
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


class HeldOutRollout(BaseModel):
    """One held-out question answered by the policy."""

    id: str
    needs_zoom: bool | None
    mode: str | None
    answer: str | None
    correct: bool
    calls: int
    valid_calls: int
    output_tokens: int
    seconds: float
    box_iou: float | None = None
    """IoU, in original pixels, of the first crop with the row's first evidence box (0 when the
    rollout called the tool but no call returned a crop; ``None`` without a call or a box)."""
    text: list[str] = Field(default_factory=list)
    """The assistant turns as generated."""


class HeldOutResult(BaseModel):
    """All rollouts of one evaluation and their :func:`rollout_stats`."""

    force_mode: str | None = None
    rollouts: list[HeldOutRollout] = Field(default_factory=list)
    stats: dict[str, float] = Field(default_factory=dict)


# Long because it is one greedy rollout per row with the real zoom tool (render, generate, run the
# tool call, repeat up to max_turns), then the row's scores and the summary; the turn loop and the
# scoring share the rendered messages, the shown images and the tool's call log.
def evaluate_policy(
    model: Any,
    processor: Any,
    rows: Sequence[TrainingRow],
    *,
    coordinates: Coordinates,
    frame: ImageFrame,
    env: ZoomToolEnvironment,
    tools: bool = True,
    max_new_tokens: int = 64,
    max_turns: int = 2,
    force_mode: Literal["tool_on", "tool_off"] | None = None,
    compact: bool = False,
) -> HeldOutResult:
    """Greedy multi-turn rollouts with the real zoom tool; never raises on what the model writes."""
    torch = require("torch", "train", "held-out evaluation")
    was_training = model.training
    model.eval()
    tool_list = [env.image_zoom_in_tool] if tools else None
    result = HeldOutResult(force_mode=force_mode)
    episodes = []
    for row in rows:
        images = row.pil_images()
        env.reset(images=images)
        prompt = prompt_for(row, coordinates, frame, compact=compact, offer_tool=tools)
        it = iter(images)
        user = [
            {"type": "image", "image": next(it)} if p["type"] == "image" else p for p in prompt[1]["content"]
        ]
        messages: list[dict[str, Any]] = [prompt[0], {"role": "user", "content": user}]
        shown_images = list(images)
        turns: list[str] = []
        completion: list[dict[str, Any]] = []
        out_tokens = 0
        start = time.perf_counter()
        for k in range(max_turns):
            text = processor.apply_chat_template(
                messages, tools=tool_list, add_generation_prompt=True, tokenize=False
            )
            prefix = f"<{force_mode}>" if force_mode and k == 0 else ""
            inputs = processor(text=[text + prefix], images=shown_images or None, return_tensors="pt")
            with torch.no_grad():
                generated = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
            new = generated[0, inputs["input_ids"].shape[1] :]
            out_tokens += int(new.shape[0])
            reply = prefix + processor.tokenizer.decode(new, skip_special_tokens=False).split(IM_END)[0]
            reply = reply.replace("<|endoftext|>", "")
            turns.append(reply)
            messages.append({"role": "assistant", "content": reply})
            completion.append({"role": "assistant", "content": reply})
            call = _CALL.search(reply)
            if not tools or call is None or "<answer>" in reply:
                break
            tool_out = _run_call(env, call.group(1))
            messages.append({"role": "tool", "name": ZOOM_TOOL_NAME, "content": tool_out})
            completion.append({"role": "tool", "name": ZOOM_TOOL_NAME, "content": tool_out})
            if isinstance(tool_out, list):
                shown_images += [p["image"] for p in tool_out if p.get("type") == "image"]
        ep = parse_completion(completion)
        episodes.append(ep)
        crops = [c["box_original"] for c in env.calls if c.get("ok")]
        iou = None
        if env.calls and row.target_boxes:
            iou = box_iou(crops[0], row.target_boxes[0]) if crops else 0.0
        ok, _ = check_answer(ep.answer, row.ground_truth, row.answer_kind, row.options)
        result.rollouts.append(
            HeldOutRollout(
                id=row.id,
                needs_zoom=row.needs_zoom,
                mode=ep.mode,
                answer=ep.answer,
                correct=ok,
                calls=ep.n_calls,
                valid_calls=ep.n_valid_calls,
                output_tokens=out_tokens,
                seconds=time.perf_counter() - start,
                box_iou=iou,
                text=turns,
            )
        )
    result.stats = rollout_stats(
        episodes, [r.correct for r in result.rollouts], [r.needs_zoom for r in result.rollouts]
    )
    result.stats["output_tokens_mean"] = sum(r.output_tokens for r in result.rollouts) / max(1, len(rows))
    ious = [r.box_iou for r in result.rollouts if r.needs_zoom and r.box_iou is not None]
    if ious:
        result.stats["box_iou_need_zoom"] = sum(ious) / len(ious)
    if was_training:
        model.train()
    return result


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two ``[x1, y1, x2, y2]`` boxes (0 for empty ones)."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _run_call(env: ZoomToolEnvironment, raw: str) -> Any:
    """The tool's reply to a call the model wrote, or an error text for a malformed call."""
    try:
        payload = json.loads(raw)
        args = payload.get("arguments", {}) if isinstance(payload, dict) else {}
        if not isinstance(args, dict):
            raise ValueError("arguments is not an object")
        return env.image_zoom_in_tool(args.get("bbox_2d"), str(args.get("label") or ""))  # type: ignore[arg-type]
    except (ValueError, TypeError, AttributeError) as exc:
        return f"Zoom failed: the call is not valid JSON with bbox_2d ({exc})."
