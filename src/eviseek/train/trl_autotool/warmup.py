"""Stage 1: a short supervised fit on synthetic replies, so a random model writes the protocol.

The replies are built per row by :func:`ideal_conversation` in either mode: ``<tool_on>``, a
zoom call on the row's evidence box, the crop the real tool returns and the answer; or
``<tool_off>`` and the answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from eviseek._lazy import require
from eviseek.envs.image.zoom import ZOOM_TOOL_NAME
from eviseek.train.autotool_config import Coordinates
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame, box_frame
from eviseek.train.rollouts import IM_END, IM_START
from eviseek.train.trl_autotool.dataset import prompt_for
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment


class WarmupReport(BaseModel):
    """Losses of the supervised warm-up (first and last step, and every step)."""

    steps: int = 0
    losses: list[float] = Field(default_factory=list)
    seconds: float = 0.0


WarmupModes = Literal["ideal", "both", "tool_on", "tool_off"]


def ideal_conversation(
    row: TrainingRow,
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
    mode: Literal["tool_on", "tool_off"] | None = None,
    *,
    compact: bool = False,
) -> list[dict[str, Any]]:
    """A well-formed reply for a row in one mode, as a full chat (prompt included, images inline).

    ``tool_on``: the mode token, a zoom call on the row's first evidence box (widened by
    ``extra_info["zoom_pad"]`` of its size on each side, 0.5 by default), the crop the real tool
    returns, then the answer. ``tool_off``: the mode token and the answer. ``None`` picks
    ``tool_on`` for rows that need zooming and ``tool_off`` for the others. A row without an
    image or a box can only be answered in ``tool_off``.
    """
    images = row.pil_images()
    prompt = prompt_for(row, coordinates, frame, compact=compact)
    user_content = []
    it = iter(images)
    for part in prompt[1]["content"]:
        user_content.append({"type": "image", "image": next(it)} if part["type"] == "image" else part)
    convo: list[dict[str, Any]] = [prompt[0], {"role": "user", "content": user_content}]
    answer = _answer_text(row)
    if mode is None:
        mode = "tool_on" if row.needs_zoom else "tool_off"
    if mode == "tool_on" and row.target_boxes and images:
        img = images[0]
        env.reset(images=images)
        fw, fh = box_frame(coordinates, frame, img.width, img.height)
        x1, y1, x2, y2 = row.target_boxes[0]
        sx, sy = fw / img.width, fh / img.height
        pad = float(row.extra_info.get("zoom_pad", 0.5))
        pad_x, pad_y = (max(4.0, (x2 - x1) * pad), max(4.0, (y2 - y1) * pad)) if pad else (0.0, 0.0)
        box = [
            max(0, round((x1 - pad_x) * sx)),
            max(0, round((y1 - pad_y) * sy)),
            min(fw, round((x2 + pad_x) * sx)),
            min(fh, round((y2 + pad_y) * sy)),
        ]
        call = json.dumps({"name": ZOOM_TOOL_NAME, "arguments": {"bbox_2d": box}})
        # The first word after <think> differs by mode, so the mode token decides it directly.
        think = "<think>Zoom: the detail is small.</think>"
        result = env.image_zoom_in_tool(box)
        convo.append(
            {
                "role": "assistant",
                "content": f"<tool_on>{think}<tool_call>\n{call}\n</tool_call>",
            }
        )
        convo.append({"role": "tool", "name": ZOOM_TOOL_NAME, "content": result})
        convo.append(
            {"role": "assistant", "content": f"<think>Seen in the crop.</think><answer>{answer}</answer>"}
        )
    else:
        convo.append(
            {
                "role": "assistant",
                "content": (
                    f"<tool_off><think>Direct: the whole view is enough.</think><answer>{answer}</answer>"
                ),
            }
        )
    return convo


def warmup_conversations(
    rows: Sequence[TrainingRow],
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
    modes: WarmupModes = "ideal",
    *,
    compact: bool = False,
) -> list[list[dict[str, Any]]]:
    """The warm-up's conversations: one per row (``ideal``, ``tool_on``, ``tool_off``) or two
    (``both``: the same row answered in each mode, so the warm-up teaches no mode preference)."""
    if modes == "both":
        return [
            ideal_conversation(r, env, coordinates, frame, m, compact=compact)
            for r in rows
            for m in ("tool_on", "tool_off")
        ]
    mode: Literal["tool_on", "tool_off"] | None = None if modes == "ideal" else modes
    return [ideal_conversation(r, env, coordinates, frame, mode, compact=compact) for r in rows]


def _answer_text(row: TrainingRow) -> str:
    """The answer as the prompt asks for it: the option letter for option questions."""
    if row.options and row.ground_truth in row.options:
        return chr(65 + row.options.index(row.ground_truth))
    return row.ground_truth


def _assistant_mask(ids: list[int], header: list[int], end_id: int) -> list[int]:
    """1 on assistant reply tokens (up to and including the end-of-turn token), 0 elsewhere."""
    mask = [0] * len(ids)
    i, n, h = 0, len(ids), len(header)
    while i < n:
        if ids[i : i + h] == header:
            j = i + h
            while j < n and ids[j] != end_id:
                mask[j] = 1
                j += 1
            if j < n:
                mask[j] = 1
            i = j + 1
        else:
            i += 1
    return mask


def warmup_sft(
    model: Any,
    processor: Any,
    conversations: Sequence[list[dict[str, Any]]],
    tools: list[Any] | None,
    *,
    steps: int,
    learning_rate: float,
    batch_size: int,
    seed: int = 0,
    schedule: Literal["constant", "linear"] = "constant",
) -> WarmupReport:
    """Supervised steps on whole conversations, loss on the assistant tokens only.

    Each example is rendered with the same chat template and tool list that GRPO uses, so the
    tokens learned here are the tokens the rollouts produce. Examples are processed one at a
    time (they differ in image count); the loss is the mean over all target tokens of the
    ``batch_size`` examples, so long and short replies weigh by their length.
    """
    torch = require("torch", "train", "the AutoTool warm-up")
    report = WarmupReport()
    if steps <= 0 or not conversations:
        return report
    tokenizer = getattr(processor, "tokenizer", processor)
    header = tokenizer.encode(f"{IM_START}assistant\n", add_special_tokens=False)
    end_id = tokenizer.convert_tokens_to_ids(IM_END)
    encoded = []
    n_targets: list[int] = []
    for convo in conversations:
        enc = processor.apply_chat_template(
            convo, tools=tools, tokenize=True, return_dict=True, return_tensors="pt"
        )
        ids = enc["input_ids"][0].tolist()
        mask = torch.tensor(_assistant_mask(ids, header, end_id), dtype=torch.bool)
        labels = enc["input_ids"].clone()
        labels[0, ~mask] = -100
        enc["labels"] = labels
        encoded.append(enc)
        n_targets.append(max(1, int((labels[0, 1:] != -100).sum())))  # the model shifts labels by one
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    # Linear decay to zero: a constant rate large enough to learn the format quickly leaves the
    # loss bouncing on a plateau before the fine dependencies (mode -> text, image -> answer) fit.
    decay = (lambda k: max(0.0, 1.0 - k / steps)) if schedule == "linear" else (lambda k: 1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, decay)
    gen = torch.Generator().manual_seed(seed)
    was_training = model.training
    model.train()
    start = time.perf_counter()
    for _ in range(steps):
        order = torch.randperm(len(encoded), generator=gen)[:batch_size].tolist()
        optimizer.zero_grad()
        total = 0.0
        n_batch = sum(n_targets[idx] for idx in order)
        for idx in order:
            batch = {k: v.to(device) for k, v in encoded[idx].items()}
            # The model's loss is a mean over one example's targets; weighting it by the target
            # count gives every token of the batch the same weight. A mean per example instead
            # weighs the mode token of a short tool-off reply (17 tokens) 3.4x more than that
            # of a tool-on reply (58): the warm-up then taught a 0.22 tool-on prior although
            # every question was shown in both modes.
            loss = model(**batch).loss * (n_targets[idx] / n_batch)
            loss.backward()
            total += float(loss.detach())
        optimizer.step()
        scheduler.step()
        report.losses.append(total)
    report.steps = steps
    report.seconds = time.perf_counter() - start
    if not was_training:
        model.eval()
    return report
