"""A mode prior that depends on the kind of question: a short phase after the warm-up (ours).

Why it exists (issue 39, docs/autotool_learning_in_depth.md, "Fourth session"): the warm-up draws
``<tool_off>`` traces 1.5 times as often on every kind of question, so the tiny model's first reply
token has the same distribution on every kind (p(``<tool_on>``) 0.279 on need-zoom and on no-need
questions, seed 4). The state it reads the mode from does hold the kind, but only along a direction
so small that neither GRPO's pulls nor a push on the mode tokens' output rows alone separate the
kinds in 60 idealised steps. The paper's pretrained base model reads the kind of question before
its first token; ours has to be given that. This phase gives it, and nothing more: it fits only
the reply's first token, to ``<tool_on>`` with a stated share per kind, both shares below one half
so that the greedy choice stays ``<tool_off>`` on every kind (the paper's section 3.3 prior).

Each step draws ``batch_size`` (question, mode) pairs: a need-zoom question with ``<tool_on>`` at
weight ``tool_on_need_zoom`` and ``<tool_off>`` at ``1 - tool_on_need_zoom``, every other question
likewise with ``tool_on_other``. The loss is the cross-entropy of the drawn mode token at the reply's
first position, with the prompt rendered exactly as GRPO and the held-out evaluation render it
(the same chat template, tool list and image); every weight of the model is trained, since the
point is to change the state the mode token is read from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from eviseek._lazy import require
from eviseek.train.autotool_config import Coordinates, ModePriorConfig
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame
from eviseek.train.trl_autotool.dataset import prompt_for
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment

Mode = Literal["tool_on", "tool_off"]


class ModePriorReport(BaseModel):
    """What the mode-prior phase did: its steps and losses, the shares it was given, and the mean
    p(``<tool_on>``) (over the two mode tokens) per kind of its questions before and after."""

    steps: int = 0
    learning_rate: float = 0.0
    losses: list[float] = Field(default_factory=list)
    seconds: float = 0.0
    tool_on_share: dict[str, float] = Field(default_factory=dict)
    """The stated share of ``<tool_on>`` draws per kind (``need_zoom``, ``other``)."""
    p_tool_on_before: dict[str, float] = Field(default_factory=dict)
    p_tool_on_after: dict[str, float] = Field(default_factory=dict)


def mode_draws(rows: Sequence[TrainingRow], cfg: ModePriorConfig) -> list[tuple[TrainingRow, Mode, float]]:
    """Every (question, mode) pair the phase draws from, with its sampling weight: per question the
    two weights sum to 1, and ``<tool_on>``'s is the share stated for the question's kind."""
    out: list[tuple[TrainingRow, Mode, float]] = []
    for row in rows:
        share = cfg.tool_on_need_zoom if row.needs_zoom else cfg.tool_on_other
        out += [(row, "tool_on", share), (row, "tool_off", 1.0 - share)]
    return out


def first_token_inputs(
    row: TrainingRow,
    processor: Any,
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
    *,
    compact: bool,
) -> Any:
    """The model inputs whose last position predicts the reply's first token (the mode token),
    rendered as the held-out evaluation renders its first turn."""
    images = row.pil_images()
    prompt = prompt_for(row, coordinates, frame, compact=compact)
    it = iter(images)
    user = [{"type": "image", "image": next(it)} if p["type"] == "image" else p for p in prompt[1]["content"]]
    messages = [prompt[0], {"role": "user", "content": user}]
    text = processor.apply_chat_template(
        messages, tools=[env.image_zoom_in_tool], add_generation_prompt=True, tokenize=False
    )
    return processor(text=[text], images=images or None, return_tensors="pt")


def mean_p_tool_on(
    model: Any, encoded: Sequence[tuple[Any, bool]], on_id: int, off_id: int
) -> dict[str, float]:
    """Mean p(``<tool_on>``) renormalised over the two mode tokens, per kind (``need_zoom`` and
    ``other``), of the first reply token of each encoded prompt."""
    torch = require("torch", "train", "the mode-prior phase")
    sums: dict[str, list[float]] = {"need_zoom": [], "other": []}
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for enc, need in encoded:
            logits = model(**enc, logits_to_keep=1).logits[0, -1, [on_id, off_id]].float()
            sums["need_zoom" if need else "other"].append(float(torch.softmax(logits, 0)[0]))
    if was_training:
        model.train()
    return {k: round(sum(v) / len(v), 4) for k, v in sums.items() if v}


def _first_token_loss(
    model: Any, inputs: dict[str, Any], row: TrainingRow, mode: str, cfg: ModePriorConfig, ids: dict[str, int]
) -> Any:
    """The phase's loss on one drawn question: the first reply token against the drawn mode, or
    (``cfg.loss == "expected"``) against both modes at the question's shares."""
    torch = require("torch", "train", "the mode-prior phase")
    logits = model(**inputs, logits_to_keep=1).logits[0, -1].float()
    if cfg.loss == "expected":
        # The draw's expectation: both modes of the question at their shares (no draw noise).
        share = cfg.tool_on_need_zoom if row.needs_zoom else cfg.tool_on_other
        lp = torch.log_softmax(logits, 0)
        return -(share * lp[ids["tool_on"]] + (1 - share) * lp[ids["tool_off"]])
    target = torch.tensor([ids[mode]], device=logits.device)
    return torch.nn.functional.cross_entropy(logits[None], target)


def fit_mode_prior(
    model: Any,
    processor: Any,
    rows: Sequence[TrainingRow],
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
    cfg: ModePriorConfig,
    *,
    seed: int = 0,
    compact: bool = False,
    rehearsal: Callable[[int], Any] | None = None,
) -> ModePriorReport:
    """Run the phase on ``rows`` (the warm-up's own questions) and return its report.

    ``rehearsal(k)``, when given, is the whole-trace loss of the ``k``-th pair of
    :func:`mode_draws` (its question answered in its mode); ``cfg.rehearsal_batch`` pairs are
    drawn each step and their loss added: at the stated shares when their mode token is in the
    loss (``cfg.rehearsal_mode_token``), else both modes alike.
    Without it, the first token alone is fitted and every weight is free to forget the rest of the
    reply: 60 steps at 3e-3 left a warm-up that never closed a reply (held-out accuracy 0.00,
    every reply 64 tokens long; seed 4, docs/autotool_learning_in_depth.md, "Fourth session")."""
    torch = require("torch", "train", "the mode-prior phase")
    tok = getattr(processor, "tokenizer", processor)
    ids = {
        "tool_on": tok.convert_tokens_to_ids("<tool_on>"),
        "tool_off": tok.convert_tokens_to_ids("<tool_off>"),
    }
    device = next(model.parameters()).device
    prompts = {
        row.id: {
            k: v.to(device)
            for k, v in first_token_inputs(row, processor, env, coordinates, frame, compact=compact).items()
        }
        for row in rows
    }
    draws = mode_draws(rows, cfg)
    encoded = [(prompts[r.id], bool(r.needs_zoom)) for r in rows]
    report = ModePriorReport(
        learning_rate=cfg.learning_rate,
        tool_on_share={"need_zoom": cfg.tool_on_need_zoom, "other": cfg.tool_on_other},
        p_tool_on_before=mean_p_tool_on(model, encoded, ids["tool_on"], ids["tool_off"]),
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate)
    gen = torch.Generator().manual_seed(seed)
    weights = torch.tensor([w for _, _, w in draws], dtype=torch.float)
    # Rehearsal traces whose mode token is out of the loss teach no prior, so both modes are drawn
    # alike: the tool-on reply (the longer one, with the call) gets as much practice as the direct
    # one. At the shares (0.2 on most questions) seed 4's warm-up stopped writing valid calls.
    rehearse = weights if cfg.rehearsal_mode_token else torch.full_like(weights, 0.5)
    was_training = model.training
    model.train()
    start = time.perf_counter()
    for _ in range(cfg.steps):
        picks = torch.multinomial(weights, min(cfg.batch_size, len(draws)), replacement=True, generator=gen)
        optimizer.zero_grad()
        total = 0.0
        for k in picks.tolist():
            row, mode, _ = draws[k]
            loss = _first_token_loss(model, prompts[row.id], row, mode, cfg, ids)
            (loss / len(picks)).backward()
            total += float(loss.detach()) / len(picks)
        if rehearsal is not None and cfg.rehearsal_batch:
            again = torch.multinomial(rehearse, cfg.rehearsal_batch, replacement=True, generator=gen)
            for k in again.tolist():
                loss = rehearsal(k) / cfg.rehearsal_batch
                loss.backward()
                total += float(loss.detach())
        optimizer.step()
        report.losses.append(total)
    report.steps = cfg.steps
    report.seconds = time.perf_counter() - start
    if not was_training:
        model.eval()
    report.p_tool_on_after = mean_p_tool_on(model, encoded, ids["tool_on"], ids["tool_off"])
    return report
