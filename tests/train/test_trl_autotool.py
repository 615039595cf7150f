"""AutoTool GRPO with TRL: real GRPO steps on a tiny local Qwen3-VL, plus the pieces around them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from eviseek.autotool.prompts import ZOOM_ERROR_PREFIX
from eviseek.models._hf_compat import NoVideoQwen3VLProcessor
from eviseek.testing.tiny_vlm import build_tiny_vlm
from eviseek.train.autotool_config import AutoToolTrainConfig, load_config
from eviseek.train.data import SyntheticConfig, synthetic_row
from eviseek.train.rewards import FormatReward, ToolReward
from eviseek.train.trl_autotool import (
    FullRolloutReward,
    ImageFrame,
    ZoomToolEnvironment,
    _assistant_mask,
    build_trainer,
    rollout_messages,
)

SMALL = SyntheticConfig(width=320, height=240, target_size=24, distractors=3)


@pytest.fixture(scope="module")
def processor() -> Any:
    return NoVideoQwen3VLProcessor.from_directory(build_tiny_vlm())


TINY_CONFIG = Path(__file__).resolve().parents[2] / "examples" / "configs" / "autotool_trl_tiny.yaml"


def _smoke_config(tmp: Path) -> AutoToolTrainConfig:
    """The shipped CPU smoke (``examples/configs/autotool_trl_tiny.yaml``), writing under ``tmp``."""
    return load_config(TINY_CONFIG, {"output_dir": str(tmp / "run")})


@pytest.mark.slow
def test_grpo_smoke_runs_real_steps_with_the_zoom_tool(tmp_path: Path) -> None:
    # Two questions that need a zoom and two that do not, so both modes appear.
    rows = [
        synthetic_row(s, SMALL, needs_zoom=z) for s, z in ((11, True), (12, False), (13, True), (14, False))
    ]
    cfg = _smoke_config(tmp_path)
    run = build_trainer(cfg, rows=rows)
    # Our default, not TRL's (whose GRPOConfig turns activation checkpointing on).
    assert not cfg.grpo.gradient_checkpointing and not run.trainer.args.gradient_checkpointing

    # The warm-up really fitted the ideal replies (cross-entropy of a random model is ~7.6).
    losses = run.warmup.losses
    assert len(losses) == 100 and losses[0] > 5 and max(losses[-5:]) < 0.5

    # Token-level loss aggregation by default, as verl's token-mean.
    assert cfg.grpo.loss_type == "dapo" and run.trainer.args.loss_type == "dapo"

    summary = run.train(save=True)
    assert summary.steps == 3
    steps = [h for h in summary.log_history if "loss" in h]
    assert len(steps) == 3
    # GRPO really stepped: some group's rollouts differed in reward, so the gradient is not zero
    # (a smoke whose every group scores the same logs loss 0 and grad_norm 0 at every step).
    assert any(h["grad_norm"] > 0 for h in steps), [h["grad_norm"] for h in steps]
    assert any(h["frac_reward_zero_std"] < 1 for h in steps)
    for h in steps:
        for key in ("loss", "reward", "rewards/accuracy/mean", "rewards/format/mean", "rewards/tool/mean"):
            assert isinstance(h[key], float) and math.isfinite(h[key]), (key, h)
        # AMB's ratio and both lambdas reach TRL's log every step.
        assert {"amb/lambda_on", "amb/lambda_off", "amb/released"} <= set(h)
    # The tool ran inside the rollouts and its crops reached the completions the rewards scored.
    assert summary.tool_crops_returned >= 1
    assert summary.crops_in_completions >= 1
    assert any(h.get("autotool/crops_in_completion", 0) > 0 for h in steps)
    assert any(h.get("tools/call_frequency", 0) > 0 for h in steps)

    # AMB's per-step log: adaptive before the release step, equal to the base from it on.
    amb_lines = [json.loads(x) for x in (Path(cfg.output_dir) / "amb.jsonl").read_text().splitlines()]
    assert [a["step"] for a in amb_lines] == [0, 1, 2]
    assert amb_lines[-1]["released"] and amb_lines[-1]["lambda_on"] == amb_lines[-1]["lambda_off"] == 1.2
    for a in amb_lines[:2]:
        assert not a["released"]
        if a["ratio_on"] is not None and a["ratio_on"] != 0.5:
            # The under-used mode gets the larger coefficient.
            assert (a["lambda_on"] > a["lambda_off"]) == (a["ratio_on"] < 0.5)
    saved = json.loads((Path(cfg.output_dir) / "summary.json").read_text())
    assert saved["steps"] == 3
    # Table 8's inputs: wall time and tokens per step, split by the mode each rollout chose.
    cost_lines = [json.loads(x) for x in (Path(cfg.output_dir) / "mode_cost.jsonl").read_text().splitlines()]
    assert [c["step"] for c in cost_lines] == [1, 2, 3] and all(c["seconds"] > 0 for c in cost_lines)
    per_step = [sum(m["rollouts"] for m in c["modes"].values()) for c in cost_lines]
    assert per_step == [8, 8, 8], cost_lines  # every rollout of the step counted in one mode
    modes = saved["mode_cost"]["modes"]
    assert sum(m["rollouts"] for m in modes.values()) == 24 and all(m["tokens"] > 0 for m in modes.values())
    assert (
        abs(sum(m["seconds_by_token_share"] for m in modes.values()) - saved["mode_cost"]["seconds"]) < 1e-6
    )
    # The run directory keeps the exact prompts it trained on.
    prompts = [json.loads(x) for x in (Path(cfg.output_dir) / "prompts.jsonl").read_text().splitlines()]
    assert len(prompts) == 4 and prompts[0]["prompt"][0]["role"] == "system"

    # The trained policy loads back through the hf/ provider.
    import asyncio

    from eviseek.models import get_model
    from eviseek.types import ChatMessage, GenerateConfig, Image

    model = get_model(f"hf/{summary.saved_model}")
    img = Image.from_array(np.asarray(rows[0].pil_images()[0]))
    out = asyncio.run(model.generate([ChatMessage.user(img, "hi")], GenerateConfig(max_tokens=4)))
    assert out.usage.output_tokens is not None and out.usage.output_tokens >= 1


def test_shown_frame_matches_what_the_processor_feeds_the_model(processor: Any) -> None:
    frame = ImageFrame.from_processor(processor)
    patch = processor.image_processor.patch_size
    from PIL import Image as PILImage

    for w, h in ((320, 240), (2048, 1536), (50, 700), (33, 33), (4000, 300)):
        pil = PILImage.new("RGB", (w, h))
        grid = processor.image_processor(images=[pil], return_tensors="pt")["image_grid_thw"][0].tolist()
        assert frame.shown_size(w, h) == (grid[2] * patch, grid[1] * patch), (w, h)


def test_zoom_environment_maps_boxes_and_reports_errors(processor: Any) -> None:
    from PIL import Image as PILImage

    arr = np.zeros((240, 320, 3), dtype=np.uint8)
    arr[120:240, 160:320] = (255, 0, 0)  # bottom-right quarter is red
    env = ZoomToolEnvironment("shown", ImageFrame.from_processor(processor))
    env.reset(images=[PILImage.fromarray(arr)], prompt=[], ground_truth="A")
    sw, sh = env.frame.shown_size(320, 240)
    out = env.image_zoom_in_tool([sw / 2, sh / 2, sw, sh], label="red")
    assert isinstance(out, list) and out[0]["type"] == "image"
    crop = np.asarray(out[0]["image"])
    assert crop.shape[:2] == (120, 160) and (crop == (255, 0, 0)).all()
    assert env.calls[-1]["box_original"] == [160, 120, 320, 240]
    bad = env.image_zoom_in_tool([10, 10, 11, 11])
    assert isinstance(bad, str) and bad.startswith(ZOOM_ERROR_PREFIX) and "too small" in bad
    nonsense = env.image_zoom_in_tool(["a", 1, 2, 3])  # type: ignore[list-item]
    assert isinstance(nonsense, str) and nonsense.startswith(ZOOM_ERROR_PREFIX)
    assert env.total_calls == 3 and env.total_crops == 1
    empty = ZoomToolEnvironment()
    empty.reset(prompt=[])
    assert empty.image_zoom_in_tool([0, 0, 10, 10]).startswith(ZOOM_ERROR_PREFIX)  # type: ignore[union-attr]


ROLLOUT = (
    '<tool_on><think>small</think><tool_call>\n{"name": "image_zoom_in_tool", "arguments": '
    '{"bbox_2d": [0, 0, 64, 64]}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n'
    "<|vision_start|><|image_pad|><|image_pad|><|vision_end|>Zoomed into [0, 0, 64, 64].\n"
    "</tool_response><|im_end|>\n<|im_start|>assistant\n<think>seen</think><answer>B</answer><|im_end|>"
)


def test_rollout_messages_rebuilds_turns_and_crops() -> None:
    msgs = rollout_messages(ROLLOUT)
    assert [m["role"] for m in msgs] == ["assistant", "user", "assistant"]
    assert msgs[0]["content"].startswith("<tool_on><think>small</think><tool_call>")
    assert msgs[1]["content"][0] == {"type": "image"}
    assert "<|image_pad|>" not in msgs[1]["content"][1]["text"]
    assert msgs[2]["content"] == "<think>seen</think><answer>B</answer>"
    failed = ROLLOUT.replace(
        "<|vision_start|><|image_pad|><|image_pad|><|vision_end|>Zoomed", "Zoom failed: no"
    )
    assert all(p.get("type") != "image" for p in rollout_messages(failed)[1]["content"])


def test_full_rollout_reward_scores_the_mode_token_trl_drops(processor: Any) -> None:
    tok = processor.tokenizer
    ids = [
        tok.encode(ROLLOUT, add_special_tokens=False),
        tok.encode(ROLLOUT.replace(">B<", ">C<"), add_special_tokens=False),
    ]
    # What TRL's parser hands the reward for such a turn: the mode token can be missing.
    trl_view = [[{"role": "assistant", "content": "<answer>B</answer>"}]] * 2
    tool = FullRolloutReward(ToolReward(), tok, monitor=True)
    fmt = FullRolloutReward(FormatReward(), tok)
    kwargs = {"completion_ids": ids, "ground_truth": ["B", "B"], "answer_kind": ["text", "text"]}
    logged: dict[str, float] = {}
    assert tool(trl_view, log_metric=logged.__setitem__, **kwargs) == [1.0, -0.5]
    assert fmt(trl_view, **kwargs) == [1.0, 1.0]
    assert tool.crops_in_completions == 2 and logged["autotool/crops_in_completion"] == 1.0
    assert tool.__name__ == "tool"


def test_assistant_mask_covers_replies_only() -> None:
    header = [1, 2]
    ids = [9, 1, 2, 5, 6, 0, 7, 1, 2, 8, 0]
    assert _assistant_mask(ids, header, 0) == [0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1]


def test_answer_span_is_the_last_answer_between_its_tags() -> None:
    from eviseek.train.trl_autotool.warmup import _answer_span

    # <answer>=7, </answer>=8: only the last answer's content, not its tags.
    assert _answer_span([7, 1, 8, 3, 7, 4, 5, 8, 0], 7, 8) == [5, 6]
    assert _answer_span([1, 2, 3], 7, 8) == []


def test_warmup_loss_equals_the_models_own_loss_on_the_assistant_tokens() -> None:
    """The warm-up computes logits at the target positions only; its loss must still be the
    model's own causal-LM loss with every non-assistant token labelled -100."""
    from eviseek.testing.tiny_vlm import load_tiny_vlm
    from eviseek.train.rollouts import IM_END, IM_START
    from eviseek.train.trl_autotool.warmup import warmup_conversations, warmup_sft

    model, proc = load_tiny_vlm(build_tiny_vlm())
    frame = ImageFrame.from_processor(proc)
    env = ZoomToolEnvironment("shown", frame)
    rows = [synthetic_row(31, SMALL, needs_zoom=True)]
    convos = warmup_conversations(rows, env, "shown", frame, "both")  # a long and a short reply
    tools = [env.image_zoom_in_tool]
    tok = proc.tokenizer
    header = tok.encode(f"{IM_START}assistant\n", add_special_tokens=False)
    end_id = tok.convert_tokens_to_ids(IM_END)
    losses, counts = [], []
    with torch.no_grad():
        for convo in convos:
            enc = proc.apply_chat_template(
                convo, tools=tools, tokenize=True, return_dict=True, return_tensors="pt"
            )
            labels = enc["input_ids"].clone()
            labels[0, torch.tensor(_assistant_mask(labels[0].tolist(), header, end_id)) == 0] = -100
            losses.append(float(model(**enc, labels=labels).loss))
            counts.append(int((labels[0, 1:] != -100).sum()))
    # One step over both conversations: the token-weighted mean of their losses, before the update.
    report = warmup_sft(model, proc, convos, tools, steps=1, learning_rate=1e-3, batch_size=2)
    expected = sum(loss * n for loss, n in zip(losses, counts, strict=True)) / sum(counts)
    assert counts[0] != counts[1] and report.losses[0] == pytest.approx(expected, rel=1e-5)


def test_trace_settings_mask_unseen_answers_and_weigh_need_zoom_rows_in_both_modes() -> None:
    from eviseek.train.tag_grid import TagGridConfig, tag_grid_row
    from eviseek.train.trl_autotool.warmup import trace_settings

    cfg = TagGridConfig(size=64, tag_size=2)
    need, no_need = tag_grid_row(0, cfg, needs_zoom=True), tag_grid_row(1, cfg, needs_zoom=False)
    masked, weights = trace_settings([need, no_need], "both", mask_unseen_answers=True, need_zoom_weight=3.0)
    # Order of warmup_conversations("both"): (need, on), (need, off), (no-need, on), (no-need, off).
    assert masked == [False, True, False, False]
    assert weights == [3.0, 3.0, 1.0, 1.0]
    assert trace_settings([need, no_need], "both") == ([False] * 4, [1.0] * 4)
    # A <tool_off> prior: every tool-off trace drawn three times as often, on both kinds.
    _, weights = trace_settings([need, no_need], "both", need_zoom_weight=2.0, tool_off_weight=3.0)
    assert weights == [2.0, 6.0, 1.0, 3.0]


@pytest.mark.slow
def test_force_mode_suppresses_the_other_mode_token_in_trls_sampling(tmp_path: Path) -> None:
    """``always_tool`` pins <tool_on>: a model warmed up to open with <tool_off> cannot sample it."""
    rows = [synthetic_row(s, SMALL, needs_zoom=True) for s in (21, 22)]
    cfg = _smoke_config(tmp_path).model_copy(deep=True)
    # 30 steps put p(<tool_off>) at about 0.99998 of the first token at this temperature (60 gave
    # 0.999999, measured with this seed): far enough that four samples never miss it.
    cfg.warmup = cfg.warmup.model_copy(update={"steps": 30, "modes": "tool_off"})
    cfg.grpo = cfg.grpo.model_copy(update={"temperature": 0.5})  # the temperature measured above
    free = build_trainer(cfg, rows=rows)
    forced_cfg = cfg.model_copy(deep=True)
    forced_cfg.grpo = forced_cfg.grpo.model_copy(update={"force_mode": "tool_on"})
    forced_cfg.warmup = forced_cfg.warmup.model_copy(update={"steps": 0})  # the free run's weights below
    tok = free.trainer.processing_class.tokenizer
    off_id = tok.convert_tokens_to_ids("<tool_off>")
    image_id = free.trainer.model.config.image_token_id
    forced = build_trainer(forced_cfg, rows=rows)
    forced.trainer.model.load_state_dict(free.trainer.model.state_dict())
    assert set(forced.trainer.generation_config.suppress_tokens) == {off_id, image_id}
    assert off_id not in (free.trainer.generation_config.suppress_tokens or [])

    from eviseek.train.trl_autotool.dataset import prompt_for

    def first_tokens(run: Any) -> set[int]:
        model, proc = run.trainer.model, run.trainer.processing_class
        prompt = prompt_for(rows[0], "shown", ImageFrame.from_processor(proc))
        user = [{"type": "image", "image": rows[0].pil_images()[0]}, *prompt[1]["content"][1:]]
        text = proc.apply_chat_template(
            [prompt[0], {"role": "user", "content": user}], add_generation_prompt=True, tokenize=False
        )
        inputs = proc(text=[text], images=rows[0].pil_images(), return_tensors="pt")
        gen = run.trainer.generation_config
        seen = set()
        for seed in range(4):
            torch.manual_seed(seed)
            out = model.generate(**inputs, generation_config=gen, max_new_tokens=1)
            seen.add(int(out[0, -1]))
        return seen

    assert first_tokens(free) == {off_id}  # the warm-up taught <tool_off>
    assert off_id not in first_tokens(forced)  # ... which the forced run can never sample


def test_text_only_prompt_offers_no_tool() -> None:
    from eviseek.train.trl_autotool.dataset import prompt_for

    row = synthetic_row(1, SMALL, needs_zoom=True)
    for compact in (False, True):
        system = prompt_for(row, "shown", ImageFrame(), compact=compact, offer_tool=False)[0]["content"][0][
            "text"
        ]
        assert "zoom" not in system.lower() and "tool-on" not in system and "<tool_on>" not in system
        offered = prompt_for(row, "shown", ImageFrame(), compact=compact)[0]["content"][0]["text"]
        assert "zoom" in offered.lower()
