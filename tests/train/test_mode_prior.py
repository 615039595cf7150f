"""The kind-dependent mode prior (``warmup.mode_prior``): the shares it draws, and that fitting it
on a real tiny Qwen3-VL makes p(<tool_on>) depend on the question's kind."""

from __future__ import annotations

import pytest
import torch
from pydantic import ValidationError

from eviseek.testing.tiny_vlm import build_tiny_vlm, load_tiny_vlm
from eviseek.train.autotool_config import ModePriorConfig
from eviseek.train.tag_grid import TagGridConfig, tag_grid_rows
from eviseek.train.trl_autotool import ImageFrame, ZoomToolEnvironment
from eviseek.train.trl_autotool.mode_prior import (
    first_token_inputs,
    fit_mode_prior,
    mean_p_tool_on,
    mode_draws,
)

STEPS = 100  # at 3e-3 (the drawn loss, or 30 steps at 1e-2, left this random model's kinds together)
GRID = TagGridConfig(size=256, grid=4, tag_size=16, noise=40, zoom_share=0.5, hurt_share=0.25)


def test_mode_draws_give_each_kind_its_stated_tool_on_share() -> None:
    rows = tag_grid_rows(40, seed=5, config=GRID)
    cfg = ModePriorConfig(steps=1, tool_on_need_zoom=0.4, tool_on_other=0.2)
    draws = mode_draws(rows, cfg)
    assert len(draws) == 2 * len(rows)
    weights = torch.tensor([w for _, _, w in draws])
    picks = torch.multinomial(weights, 40_000, replacement=True, generator=torch.Generator().manual_seed(0))
    drawn: dict[bool, list[bool]] = {True: [], False: []}
    for k in picks.tolist():
        row, mode, _ = draws[k]
        drawn[bool(row.needs_zoom)].append(mode == "tool_on")
    assert sum(drawn[True]) / len(drawn[True]) == pytest.approx(0.4, abs=0.015)
    assert sum(drawn[False]) / len(drawn[False]) == pytest.approx(0.2, abs=0.015)
    # Every question is drawn as often as any other (its two weights sum to 1).
    per_row: dict[str, float] = {}
    for row, _, w in draws:
        per_row[row.id] = per_row.get(row.id, 0.0) + w
    assert len(per_row) == len(rows) and all(w == pytest.approx(1.0) for w in per_row.values())


@pytest.mark.parametrize("field", ["tool_on_need_zoom", "tool_on_other"])
def test_a_share_of_one_half_or_more_is_refused(field: str) -> None:
    # At 0.5 or above greedy decoding could pick <tool_on>: the prior must stay <tool_off>.
    with pytest.raises(ValidationError, match=field):
        ModePriorConfig.model_validate({"steps": 1, field: 0.5})


@pytest.mark.slow
def test_fitting_the_prior_separates_the_kinds_on_a_real_tiny_model() -> None:
    model, proc = load_tiny_vlm(build_tiny_vlm())
    torch.manual_seed(0)
    frame = ImageFrame.from_processor(proc)
    env = ZoomToolEnvironment("shown", frame)
    rows = tag_grid_rows(8, seed=1, config=GRID)
    cfg = ModePriorConfig(steps=STEPS, learning_rate=3e-3, batch_size=2, loss="expected")
    report = fit_mode_prior(model, proc, rows, env, "shown", frame, cfg, seed=0, compact=True)
    before, after = report.p_tool_on_before, report.p_tool_on_after
    assert report.steps == STEPS and len(report.losses) == STEPS
    assert abs(before["need_zoom"] - before["other"]) < 0.05  # a random model: no kind-dependent prior
    assert after["need_zoom"] - after["other"] > 0.1
    assert after["need_zoom"] < 0.5  # greedy stays <tool_off>
    # The report's numbers are the model's own first-token probabilities.
    tok = proc.tokenizer
    encoded = [
        (first_token_inputs(r, proc, env, "shown", frame, compact=True), bool(r.needs_zoom)) for r in rows
    ]
    on, off = tok.convert_tokens_to_ids("<tool_on>"), tok.convert_tokens_to_ids("<tool_off>")
    assert mean_p_tool_on(model, encoded, on, off) == pytest.approx(after, abs=1e-4)


def test_each_step_adds_rehearsal_batch_whole_traces_from_the_same_draws() -> None:
    model, proc = load_tiny_vlm(build_tiny_vlm())
    frame = ImageFrame.from_processor(proc)
    env = ZoomToolEnvironment("shown", frame)
    rows = tag_grid_rows(4, seed=2, config=GRID)
    cfg = ModePriorConfig(
        steps=3, batch_size=1, rehearsal_batch=5, tool_on_need_zoom=0.45, tool_on_other=0.05
    )
    drawn: list[int] = []
    head = model.get_output_embeddings().weight

    def rehearsal(k: int) -> torch.Tensor:
        drawn.append(k)
        return head.sum() * 0.0

    fit_mode_prior(model, proc, rows, env, "shown", frame, cfg, seed=0, compact=True, rehearsal=rehearsal)
    assert len(drawn) == 15
    draws = mode_draws(rows, cfg)
    assert all(0 <= k < len(draws) for k in drawn)
