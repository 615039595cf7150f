"""Stage 1: a short supervised fit on synthetic replies, so a random model writes the protocol.

The replies are built per row by :func:`ideal_conversation` in either mode: ``<tool_on>``, a
zoom call on the row's evidence box, the crop the real tool returns and the answer; or
``<tool_off>`` and the answer.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from eviseek._lazy import require
from eviseek.autotool.protocol import MODE_TOKENS
from eviseek.envs.image.zoom import ZOOM_TOOL_NAME
from eviseek.train.autotool_config import Coordinates, ModePriorConfig, WarmupConfig
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame, box_frame
from eviseek.train.rollouts import IM_END, IM_START
from eviseek.train.trl_autotool.dataset import prompt_for
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment
from eviseek.train.trl_autotool.mode_prior import ModePriorReport, fit_mode_prior

_log = logging.getLogger(__name__)


class WarmupReport(BaseModel):
    """Losses of the supervised warm-up (first and last step, and every step)."""

    steps: int = 0
    losses: list[float] = Field(default_factory=list)
    seconds: float = 0.0
    crop_steps: int = 0
    """Steps of the crop phase actually run (``warmup.crop_steps`` or more, with a crop check)."""
    crop_checks: list[dict[str, float]] = Field(default_factory=list)
    """Each crop-reading check: ``crop_step``, ``accuracy``, ``questions``, ``p_tool_on``."""
    crop_check_passed: bool | None = None
    """Whether the last check reached its target (``None``: no check configured)."""
    mode_prior: ModePriorReport | None = None
    """The kind-dependent mode-prior phase (``warmup.mode_prior``), run last; ``None``: not run."""


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
    return [
        ideal_conversation(r, env, coordinates, frame, m, compact=compact) for r, m in row_modes(rows, modes)
    ]


def row_modes(
    rows: Sequence[TrainingRow], modes: WarmupModes = "ideal"
) -> list[tuple[TrainingRow, Literal["tool_on", "tool_off"]]]:
    """Each warm-up conversation's row and mode, in :func:`warmup_conversations`' order (the one
    place that order is decided, so per-conversation settings line up with the conversations)."""
    if modes == "both":
        return [(r, m) for r in rows for m in ("tool_on", "tool_off")]
    if modes == "ideal":
        return [(r, "tool_on" if r.needs_zoom else "tool_off") for r in rows]
    return [(r, modes) for r in rows]


def trace_settings(
    rows: Sequence[TrainingRow],
    modes: WarmupModes = "ideal",
    *,
    mask_unseen_answers: bool = False,
    need_zoom_weight: float = 1.0,
    tool_off_weight: float = 1.0,
) -> tuple[list[bool], list[float]]:
    """Per conversation of :func:`warmup_conversations` (same order): whether its answer is left
    out of the loss, and its sampling weight.

    ``mask_unseen_answers`` leaves out the answer of every tool-off trace of a row that needs a
    zoom: the answer is not readable from the shown image, so fitting it only teaches the model to
    guess (the mode token and the reply's format are still learned). ``need_zoom_weight`` draws
    the traces of rows that need a zoom, in both modes alike, that many times as often as the
    others: it adds examples of reading the crop without changing the mode prior per question.
    ``tool_off_weight`` draws every ``<tool_off>`` trace that many times as often: a mode prior
    towards ``<tool_off>`` on every kind of question.
    """
    per_row = row_modes(rows, modes)
    masked = [
        bool(mask_unseen_answers and r.needs_zoom and (m == "tool_off" or not (r.target_boxes and r.images)))
        for r, m in per_row
    ]
    weights = [
        (need_zoom_weight if r.needs_zoom else 1.0) * (tool_off_weight if m == "tool_off" else 1.0)
        for r, m in per_row
    ]
    return masked, weights


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


def _answer_span(ids: list[int], open_id: int, close_id: int) -> list[int]:
    """Positions of the tokens between the last ``<answer>`` and the ``</answer>`` after it."""
    starts = [i for i, t in enumerate(ids) if t == open_id]
    if not starts:
        return []
    j = starts[-1] + 1
    out = []
    while j < len(ids) and ids[j] != close_id:
        out.append(j)
        j += 1
    return out


def encode_traces(
    processor: Any,
    conversations: Sequence[list[dict[str, Any]]],
    tools: list[Any] | None,
    *,
    answer_masked: Sequence[bool] | None = None,
    mode_masked: bool | Sequence[bool] = False,
    answer_only: bool = False,
) -> tuple[list[Any], list[tuple[Any, Any]], list[int]]:
    """Each conversation encoded as :func:`warmup_sft` trains on it: the model inputs, the positions
    whose next token is a target with those target tokens, and the target count (at least 1). The
    masks are :func:`warmup_sft`'s."""
    torch = require("torch", "train", "the AutoTool warm-up")
    tokenizer = getattr(processor, "tokenizer", processor)
    header = tokenizer.encode(f"{IM_START}assistant\n", add_special_tokens=False)
    end_id = tokenizer.convert_tokens_to_ids(IM_END)
    open_id = tokenizer.convert_tokens_to_ids("<answer>")
    close_id = tokenizer.convert_tokens_to_ids("</answer>")
    mode_ids = {tokenizer.convert_tokens_to_ids(t) for t in MODE_TOKENS}
    encoded: list[Any] = []
    targets: list[tuple[Any, Any]] = []
    n_targets: list[int] = []
    for k, convo in enumerate(conversations):
        enc = processor.apply_chat_template(
            convo, tools=tools, tokenize=True, return_dict=True, return_tensors="pt"
        )
        ids = enc["input_ids"][0].tolist()
        mask = torch.tensor(_assistant_mask(ids, header, end_id), dtype=torch.bool)
        if answer_masked is not None and answer_masked[k]:
            mask[_answer_span(ids, open_id, close_id)] = False
        if mode_masked if isinstance(mode_masked, bool) else mode_masked[k]:
            mask[[i for i, t in enumerate(ids) if t in mode_ids]] = False
        if answer_only:
            keep = torch.zeros_like(mask)
            keep[_answer_span(ids, open_id, close_id)] = True
            mask &= keep
        # Position i predicts token i + 1, so the targets are the masked tokens after the first
        # and the logits needed are those of the positions just before them.
        positions = mask[1:].nonzero().flatten()
        targets.append((positions, enc["input_ids"][0, positions + 1]))
        encoded.append(enc)
        n_targets.append(max(1, len(positions)))
    return encoded, targets, n_targets


def trace_loss(model: Any, enc: Any, positions: Any, target: Any) -> Any:
    """The mean cross-entropy of one encoded trace's targets (see :func:`warmup_sft`)."""
    torch = require("torch", "train", "the AutoTool warm-up")
    device = next(model.parameters()).device
    batch = {k: v.to(device) for k, v in enc.items()}
    logits = model(**batch, logits_to_keep=positions.to(device)).logits[0].float()
    return torch.nn.functional.cross_entropy(logits, target.to(device))


# Long because its docstring documents every masking and sampling option (about 20 lines) and the
# body is one plain loop in two parts, encoding with the masks and then the steps (with the
# optional check); both share the encoded examples, their target counts and the seeded generator.
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
    answer_masked: Sequence[bool] | None = None,
    weights: Sequence[float] | None = None,
    on_step: Callable[[int], None] | None = None,
    mode_masked: bool | Sequence[bool] = False,
    answer_only: bool = False,
    check: Callable[[int], bool] | None = None,
    check_every: int = 100,
    max_steps: int | None = None,
) -> WarmupReport:
    """Supervised steps on whole conversations, loss on the assistant tokens only.

    Each example is rendered with the same chat template and tool list that GRPO uses, so the
    tokens learned here are the tokens the rollouts produce. Examples are processed one at a
    time (they differ in image count); the loss is the mean over all target tokens of the
    ``batch_size`` examples, so long and short replies weigh by their length.

    ``answer_masked`` (per conversation) leaves the tokens between ``<answer>`` and ``</answer>``
    out of the loss; ``weights`` (per conversation) draws each batch with those sampling weights
    instead of uniformly (see :func:`trace_settings`). ``on_step`` is called with the number of
    steps done after each step (probes evaluate the model on the way). ``mode_masked`` (for all
    conversations, or per conversation) leaves the mode tokens out of the loss, so these steps
    leave the mode prior to what came before;
    ``answer_only`` keeps nothing but the final answer's tokens in it.

    ``check(steps_done)``, when given, runs after ``steps`` steps and every ``check_every`` steps
    after that; training goes on past ``steps`` until it returns true or ``max_steps`` steps are
    done (a constant schedule is held at its rate; a linear one has decayed to zero).
    """
    torch = require("torch", "train", "the AutoTool warm-up")
    report = WarmupReport()
    if steps <= 0 or not conversations:
        return report
    encoded, targets, n_targets = encode_traces(
        processor,
        conversations,
        tools,
        answer_masked=answer_masked,
        mode_masked=mode_masked,
        answer_only=answer_only,
    )
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    # Linear decay to zero: a constant rate large enough to learn the format quickly leaves the
    # loss bouncing on a plateau before the fine dependencies (mode -> text, image -> answer) fit.
    decay = (lambda k: max(0.0, 1.0 - k / steps)) if schedule == "linear" else (lambda k: 1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, decay)
    gen = torch.Generator().manual_seed(seed)
    draw = torch.tensor(list(weights), dtype=torch.float) if weights is not None else None
    was_training = model.training
    model.train()
    start = time.perf_counter()
    cap = max(steps, max_steps or steps) if check is not None else steps
    step = 0
    while True:
        if step >= steps:
            if check is None:
                break
            if ((step - steps) % check_every == 0 or step >= cap) and check(step):
                break
            if step >= cap:
                break
        if draw is None:
            order = torch.randperm(len(encoded), generator=gen)[:batch_size].tolist()
        else:
            k = min(batch_size, len(encoded))
            order = torch.multinomial(draw, k, replacement=False, generator=gen).tolist()
        optimizer.zero_grad()
        total = 0.0
        n_batch = sum(n_targets[idx] for idx in order)
        for idx in order:
            batch = {k: v.to(device) for k, v in encoded[idx].items()}
            positions, target = targets[idx]
            # Logits only where a target is predicted (transformers' ``logits_to_keep``), with
            # the cross-entropy the model's own loss computes (a float32 mean over the targets):
            # the same loss, without projecting the prompt's positions onto the vocabulary. The
            # prompt is most of a conversation (the system prompt and tool list), so this took
            # about a tenth off a step with the tiny test model; with a real model's vocabulary
            # of 150k the full logits are also a large share of the step's memory.
            logits = model(**batch, logits_to_keep=positions.to(device)).logits[0].float()
            # A mean over one example's targets, weighted by the target count, gives every token
            # of the batch the same weight. A mean per example instead weighs the mode token of a
            # short tool-off reply (17 tokens) 3.4x more than that of a tool-on reply (58): the
            # warm-up then taught a 0.22 tool-on prior although every question was shown in both
            # modes.
            loss = torch.nn.functional.cross_entropy(logits, target.to(device)) * (n_targets[idx] / n_batch)
            loss.backward()
            total += float(loss.detach())
        optimizer.step()
        scheduler.step()
        report.losses.append(total)
        step += 1
        if on_step is not None:
            on_step(step)
    report.steps = step
    report.seconds = time.perf_counter() - start
    if not was_training:
        model.eval()
    return report


# Long because its docstring explains why the crop phase rehearses the other rows (about 15
# lines), and the two phases are two calls of warmup_sft with about 15 arguments each, whose
# reports are merged; the body itself is short.
def run_warmup(
    model: Any,
    processor: Any,
    rows: Sequence[TrainingRow],
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
    cfg: WarmupConfig,
    tools: list[Any] | None,
    *,
    seed: int = 0,
    compact: bool = False,
    on_step: Callable[[int], None] | None = None,
) -> WarmupReport:
    """The whole warm-up of a config: the mixed phase, then the optional crop phase.

    The mixed phase fits :func:`warmup_conversations` of ``cfg.modes`` for ``cfg.steps`` steps.
    The crop phase (``cfg.crop_steps``) then fits only tool-on traces of the rows that need a
    zoom, with the mode token out of the loss: more practice at reading the answer from the crop,
    without teaching which mode to choose. ``cfg.crop_rehearsal`` of its draws are traces of the
    other rows in both modes, so their answers are not forgotten; their mode tokens stay in the
    loss (both modes, so no preference is taught). Without that, no position ever pulls the mode
    tokens up while every other position pushes them down, and after a 600-step phase the model
    stopped writing a mode token at all (probe P6 of docs/autotool_learning_in_depth.md). Losses of both
    phases go to one report. Last, ``cfg.mode_prior`` (when set) fits the kind-dependent mode prior
    of :mod:`eviseek.train.trl_autotool.mode_prior`; its own report goes to ``mode_prior``.
    """
    convos = warmup_conversations(rows, env, coordinates, frame, cfg.modes, compact=compact)
    masked, weights = trace_settings(
        rows,
        cfg.modes,
        mask_unseen_answers=cfg.mask_unseen_answers,
        need_zoom_weight=cfg.need_zoom_weight,
        tool_off_weight=cfg.tool_off_weight,
    )
    report = warmup_sft(
        model,
        processor,
        convos,
        tools,
        steps=cfg.steps,
        learning_rate=cfg.learning_rate,
        batch_size=cfg.batch_size,
        seed=seed,
        schedule=cfg.schedule,
        answer_masked=masked,
        weights=None if all(w == 1.0 for w in weights) else weights,
        on_step=on_step,
    )
    need = [r for r in rows if r.needs_zoom and r.target_boxes and r.images]
    if cfg.crop_steps and need:
        crop_convos = warmup_conversations(need, env, coordinates, frame, "tool_on", compact=compact)
        draw: list[float] | None = None
        mode_masked = [True] * len(crop_convos)
        others = [r for r in rows if not r.needs_zoom]
        if cfg.crop_rehearsal > 0 and others:
            # No-need traces in both modes, drawn with total weight crop_rehearsal of the phase.
            rehearse = warmup_conversations(others, env, coordinates, frame, "both", compact=compact)
            # The mode prior of the mixed phase is kept: tool-off traces weigh tool_off_weight
            # times as much, and the rehearsal's total weight is still crop_rehearsal of the phase.
            _, prior = trace_settings(others, "both", tool_off_weight=cfg.tool_off_weight)
            w = cfg.crop_rehearsal / (1 - cfg.crop_rehearsal) * len(crop_convos) / sum(prior)
            draw = [1.0] * len(crop_convos) + [w * x for x in prior]
            crop_convos += rehearse
            mode_masked += [False] * len(rehearse)
        check, checks = _crop_check(cfg, model, processor, env, coordinates, frame, tools, compact=compact)
        crop = warmup_sft(
            model,
            processor,
            crop_convos,
            tools,
            steps=cfg.crop_steps,
            learning_rate=cfg.crop_learning_rate,
            batch_size=cfg.batch_size,
            seed=seed + 1,
            schedule="constant",
            weights=draw,
            mode_masked=mode_masked,
            answer_only=cfg.crop_answer_only,
            on_step=None if on_step is None else (lambda k: on_step(cfg.steps + k)),
            check=check,
            check_every=cfg.crop_check.every if cfg.crop_check is not None else 100,
            max_steps=cfg.crop_check.max_crop_steps if cfg.crop_check is not None else None,
        )
        report = WarmupReport(
            steps=report.steps + crop.steps,
            losses=report.losses + crop.losses,
            seconds=report.seconds + crop.seconds,
            crop_steps=crop.steps,
            crop_checks=checks,
            crop_check_passed=(
                None
                if cfg.crop_check is None
                else bool(checks and checks[-1]["accuracy"] >= cfg.crop_check.target)
            ),
        )
    if cfg.mode_prior is not None:
        report.mode_prior = mode_prior_phase(
            model,
            processor,
            rows,
            env,
            coordinates,
            frame,
            cfg.mode_prior,
            tools,
            seed=seed + 2,
            compact=compact,
        )
    return report


def mode_prior_phase(
    model: Any,
    processor: Any,
    rows: Sequence[TrainingRow],
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
    cfg: ModePriorConfig,
    tools: list[Any] | None,
    *,
    seed: int = 0,
    compact: bool = False,
) -> ModePriorReport:
    """The warm-up's last phase, ``warmup.mode_prior`` (:func:`fit_mode_prior`), with whole traces
    of :func:`warmup_conversations` (``both`` modes, the order of :func:`mode_draws`) as its
    rehearsal, each encoded the first time it is drawn."""
    convos = warmup_conversations(rows, env, coordinates, frame, "both", compact=compact)
    cache: dict[int, tuple[Any, tuple[Any, Any]]] = {}

    def rehearsal(k: int) -> Any:
        if k not in cache:
            encoded, targets, _ = encode_traces(
                processor, [convos[k]], tools, mode_masked=not cfg.rehearsal_mode_token
            )
            cache[k] = (encoded[0], targets[0])
        enc, (positions, target) = cache[k]
        return trace_loss(model, enc, positions, target)

    return fit_mode_prior(
        model, processor, rows, env, coordinates, frame, cfg, seed=seed, compact=compact, rehearsal=rehearsal
    )


def _crop_check(
    cfg: WarmupConfig,
    model: Any,
    processor: Any,
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
    tools: list[Any] | None,
    *,
    compact: bool,
) -> tuple[Callable[[int], bool] | None, list[dict[str, float]]]:
    """The crop phase's stopping check of ``cfg.crop_check`` (``None`` without one) and the list
    each check's result is appended to."""
    checks: list[dict[str, float]] = []
    c = cfg.crop_check
    if c is None:
        return None, checks
    from eviseek.train.crop_check import crop_reading
    from eviseek.train.trl_autotool.dataset import rows_for

    rows = rows_for(c.data, where="warmup.crop_check.data")

    def check(crop_step: int) -> bool:
        start = time.perf_counter()
        result = crop_reading(model, processor, rows, env, coordinates, frame, tools, compact=compact)
        checks.append({"crop_step": float(crop_step), **result, "seconds": time.perf_counter() - start})
        _log.info("crop check after %d crop steps: %s", crop_step, json.dumps(checks[-1]))
        return result["accuracy"] >= c.target

    return check, checks
