"""eviseek's verl integration against the REAL verl classes (runs in .venv-verl).

The main suite runs this file through ``tests/train/test_verl_autotool.py`` in the separate
environment made by ``scripts/setup_verl.sh`` (verl pins an older transformers than TRL).
``EVISEEK_TINY_VLM`` names a tiny model directory (for its tokenizer) built by the caller.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("verl")

import torch
from omegaconf import OmegaConf
from PIL import Image as PILImage
from verl import DataProto
from verl.tools.schemas import ToolResponse
from verl.tools.tool_registry import initialize_tools_from_config

import eviseek.train.verl_autotool as pkg
from eviseek.train.verl_autotool import TOOL_CONFIG

ROOT = Path(__file__).resolve().parents[3]
PKG_DIR = Path(pkg.__file__).parent

ZOOM_REPLY = (
    '<tool_on><think>The tag is tiny.</think><tool_call>\n{"name": "image_zoom_in_tool", '
    '"arguments": {"bbox_2d": [100, 80, 160, 120]}}\n</tool_call>'
)
TOOL_TURN = (
    "<|im_end|>\n<|im_start|>user\n<tool_response>\n<|vision_start|><|image_pad|><|vision_end|>"
    "Zoomed into [100, 80, 160, 120].\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
)


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    path = os.environ.get("EVISEEK_TINY_VLM")
    if not path:
        pytest.skip("EVISEEK_TINY_VLM is not set (tests/train/test_verl_autotool.py sets it)")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


def _png(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    PILImage.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


class _AgentData:
    """Stands in for verl's AgentData: the tool reads only ``image_data``."""

    def __init__(self, images: list[Any]) -> None:
        self.image_data = images


def test_zoom_tool_loads_from_its_yaml_and_crops_the_original() -> None:
    tools = initialize_tools_from_config(str(TOOL_CONFIG))
    assert len(tools) == 1
    tool = tools[0]
    assert tool.name == "image_zoom_in_tool"
    assert tool.get_openai_tool_schema().function.parameters.required == ["bbox_2d"]

    original = np.zeros((480, 640, 3), dtype=np.uint8)
    original[240:, 320:] = (255, 0, 0)
    shown = PILImage.fromarray(original).resize((320, 240))

    async def run() -> None:
        iid, _ = await tool.create(create_kwargs={"image": _png(original)})
        resp, reward, metrics = await tool.execute(
            iid, {"bbox_2d": [160, 120, 320, 240]}, agent_data=_AgentData([shown])
        )
        assert isinstance(resp, ToolResponse) and resp.image and len(resp.image) == 1
        crop = np.asarray(resp.image[0])
        # The box was in the shown (half-size) frame; the crop comes from original pixels.
        assert crop.shape[:2] == (240, 320) and (crop == (255, 0, 0)).all()
        assert reward == 0.0 and metrics["zoom_ok"] == 1.0 and "Zoomed into" in (resp.text or "")
        bad, penalty, m = await tool.execute(iid, {"bbox_2d": [5, 5, 6, 6]}, agent_data=_AgentData([shown]))
        assert bad.image is None and bad.text.startswith("Zoom failed:") and penalty == -0.05
        assert m["zoom_error"] == "too_small"
        junk, _, _ = await tool.execute(iid, {"bbox_2d": "left half"}, agent_data=_AgentData([shown]))
        assert junk.text.startswith("Zoom failed:")
        await tool.release(iid)
        # Without create_kwargs the tool crops the episode's own (shown) image.
        iid2, _ = await tool.create()
        resp2, _, _ = await tool.execute(
            iid2, {"bbox_2d": [160, 120, 320, 240]}, agent_data=_AgentData([shown])
        )
        assert np.asarray(resp2.image[0]).shape[:2] == (120, 160)
        await tool.release(iid2)

    asyncio.run(run())


def test_hermes_parser_reads_the_autotool_call(tokenizer: Any) -> None:
    from verl.experimental.agent_loop.tool_parser import ToolParser

    parser = ToolParser.get_tool_parser("hermes", tokenizer)
    ids = tokenizer.encode(ZOOM_REPLY, add_special_tokens=False)
    content, calls = asyncio.run(parser.extract_tool_calls(ids))
    assert [c.name for c in calls] == ["image_zoom_in_tool"]
    assert json.loads(calls[0].arguments) == {"bbox_2d": [100, 80, 160, 120]}
    assert content.startswith("<tool_on><think>")


def _batch(tokenizer: Any, responses: list[str], truths: list[str], split: str = "train") -> DataProto:
    prompt = tokenizer.encode(
        "<|im_start|>user\nWhich letter?<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False
    )
    resp = [tokenizer.encode(r, add_special_tokens=False) for r in responses]
    width = max(len(r) for r in resp)
    pad = tokenizer.pad_token_id
    prompts = torch.tensor([prompt] * len(resp))
    responses_t = torch.tensor([r + [pad] * (width - len(r)) for r in resp])
    mask = torch.tensor([[1] * len(prompt) + [1] * len(r) + [0] * (width - len(r)) for r in resp])
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": responses_t, "attention_mask": mask},
        non_tensors={
            "data_source": np.array(["synthetic"] * len(resp), dtype=object),
            "reward_model": np.array([{"ground_truth": t} for t in truths], dtype=object),
            "extra_info": np.array([{"answer_kind": "text", "split": split} for _ in resp], dtype=object),
        },
    )


ON_RIGHT = ZOOM_REPLY + TOOL_TURN + "<think>It reads K.</think><answer>K</answer><|im_end|>"
ON_WRONG = ZOOM_REPLY + TOOL_TURN + "<think>It reads X.</think><answer>X</answer><|im_end|>"
OFF_RIGHT = "<tool_off><think>Plain to see.</think><answer>K</answer><|im_end|>"
NO_MODE = "<think>hm</think><answer>K</answer><|im_end|>"


def test_batch_reward_through_verls_batch_reward_manager(tokenizer: Any) -> None:
    from verl.workers.reward_manager.batch import BatchRewardManager

    from eviseek.train.verl_autotool.reward import compute_score_batch

    kwargs = {"amb_base": 1.2, "amb_release_step": 1, "accuracy_weight": 0.8, "format_weight": 0.2}
    manager = BatchRewardManager(tokenizer, num_examine=0, compute_score=compute_score_batch, **kwargs)
    data = _batch(tokenizer, [ON_RIGHT, ON_WRONG, ON_RIGHT, OFF_RIGHT], ["K"] * 4)
    out = manager(data, return_dict=True)
    info = out["reward_extra_info"]
    # Batch tool-on share 3/4: AMB favours the rarer tool-off mode (lambda_off > lambda_on).
    lam_on, lam_off = info["lambda_on"][0], info["lambda_off"][0]
    assert info["ratio_on"][0] == 0.75 and lam_off > 1.2 > lam_on
    assert info["tool_on"] == [1.0, 1.0, 1.0, 0.0]
    assert info["acc"] == [1.0, 0.0, 1.0, 1.0] and info["format"] == [1.0, 1.0, 1.0, 1.0]
    assert info["tool"] == [1.0, -0.5, 1.0, 1.0]
    expected = [0.8 + 0.2 + lam_on, 0.2 - 0.5 * lam_on, 0.8 + 0.2 + lam_on, 0.8 + 0.2 + lam_off]
    # The score sits on each response's last real token.
    lengths = data.batch["attention_mask"][:, data.batch["prompts"].shape[1] :].sum(-1)
    got = [float(out["reward_tensor"][i, int(lengths[i]) - 1]) for i in range(4)]
    assert got == pytest.approx(expected)
    # Step 1 is the release step: both coefficients return to the base.
    out2 = manager(_batch(tokenizer, [OFF_RIGHT, NO_MODE], ["K", "K"]), return_dict=True)
    assert out2["reward_extra_info"]["lambda_on"][0] == out2["reward_extra_info"]["lambda_off"][0] == 1.2
    assert out2["reward_extra_info"]["tool_on"] == [0.0, -1.0]


def test_reward_loop_manager_regroups_single_calls_into_a_batch(tokenizer: Any, tmp_path: Path) -> None:
    from verl.trainer.ppo.reward import load_reward_manager

    cfg = OmegaConf.create(
        {
            "data": {"train_batch_size": 2},
            "actor_rollout_ref": {"rollout": {"n": 2}},
            "reward": {
                "num_workers": 1,
                "custom_reward_function": {
                    "path": str(PKG_DIR / "reward.py"),
                    "name": "compute_score_batch",
                    "reward_kwargs": {"amb_base": 2.0},
                },
                "reward_manager": {
                    "source": "importlib",
                    "name": "AutoToolRewardManager",
                    "module": {"path": str(PKG_DIR / "manager.py")},
                },
                "reward_model": {"enable": False},
            },
        }
    )
    manager = load_reward_manager(cfg, tokenizer)
    assert type(manager).__name__ == "AutoToolRewardManager" and manager.batch_size == 4
    data = _batch(tokenizer, [ON_RIGHT, OFF_RIGHT, OFF_RIGHT, OFF_RIGHT], ["K"] * 4)

    async def run() -> list[dict[str, Any]]:
        return await asyncio.gather(*(manager.run_single(data[i : i + 1]) for i in range(4)))

    results = asyncio.run(run())
    assert manager.batches_scored == [4]  # one batch of four, not four batches of one
    infos = [r["reward_extra_info"] for r in results]
    assert {i["ratio_on"] for i in infos} == {0.25}
    assert infos[0]["lambda_on"] > 2.0 > infos[0]["lambda_off"]  # tool-on is the rarer mode here
    assert results[0]["reward_score"] == pytest.approx(1.0 + infos[0]["lambda_on"])


def test_example_config_composes_with_verls_own_config() -> None:
    from hydra import compose, initialize_config_dir

    example = ROOT / "examples" / "verl"
    with initialize_config_dir(config_dir=str(example), version_base=None):
        cfg = compose(
            config_name="autotool_grpo",
            overrides=[
                f"actor_rollout_ref.rollout.multi_turn.tool_config_path={TOOL_CONFIG}",
                f"reward.custom_reward_function.path={PKG_DIR / 'reward.py'}",
                f"reward.reward_manager.module.path={PKG_DIR / 'manager.py'}",
            ],
        )
    assert cfg.algorithm.adv_estimator == "grpo"
    assert cfg.actor_rollout_ref.rollout.mode == "async" and cfg.actor_rollout_ref.rollout.multi_turn.enable
    assert cfg.actor_rollout_ref.rollout.agent.default_agent_loop == "tool_agent"
    # Every setting the example writes exists in verl's own schema (a typo would be silently
    # ignored by verl), except the reward kwargs verl passes through to the reward function.
    generated_path = Path(__import__("verl").__file__).parent / "trainer/config/_generated_ppo_trainer.yaml"
    # As plain dicts: OmegaConf's ``in`` says False for keys whose value is still missing ("???").
    generated = OmegaConf.to_container(OmegaConf.load(generated_path), resolve=False)
    mine = OmegaConf.to_container(OmegaConf.load(example / "autotool_grpo.yaml"), resolve=False)
    assert isinstance(mine, dict)
    mine.pop("hydra"), mine.pop("defaults")

    def walk(node: Any, ref: Any, path: str) -> None:
        for key, value in node.items():
            here = f"{path}.{key}" if path else key
            if here == "reward.custom_reward_function.reward_kwargs":
                continue
            assert key in ref, f"{here} is not a verl setting"
            if isinstance(value, dict):
                walk(value, ref[key], here)

    walk(mine, generated, "")
    from eviseek.train.verl_autotool.reward import VerlRewardSettings

    VerlRewardSettings(**mine["reward"]["custom_reward_function"]["reward_kwargs"])


def test_mode_tokens_are_whole_tokens_in_the_checkpoint_verl_loads(tmp_path: Path) -> None:
    """A checkpoint without ``<tool_on>``/``<tool_off>`` is prepared as the launch script does
    (``python -m eviseek.train.mode_tokens``, here with verl's own transformers), and verl's
    tokenizer and processor loaders then see each mode token as one token that survives decoding."""
    plain = os.environ.get("EVISEEK_TINY_VLM_PLAIN")
    if not plain:
        pytest.skip("EVISEEK_TINY_VLM_PLAIN is not set (tests/train/test_verl_autotool.py sets it)")
    from verl.utils import hf_processor, hf_tokenizer

    from eviseek.train.mode_tokens import prepare_checkpoint

    assert len(hf_tokenizer(plain).encode("<tool_on>", add_special_tokens=False)) > 1
    out = prepare_checkpoint(plain, tmp_path / "with-tokens")
    assert out == tmp_path / "with-tokens"
    tok = hf_tokenizer(str(out))
    proc = hf_processor(str(out))
    for t in (tok, proc.tokenizer if proc is not None else tok):
        ids = t.encode("<tool_on><think>x</think>", add_special_tokens=False)
        assert len(t.encode("<tool_on>", add_special_tokens=False)) == 1
        assert len(t.encode("<tool_off>", add_special_tokens=False)) == 1
        # verl's reward managers decode responses with skip_special_tokens=True.
        assert t.decode(ids, skip_special_tokens=True).startswith("<tool_on>")
    config = json.loads((out / "config.json").read_text())
    vocab = (config.get("text_config") or config)["vocab_size"]
    assert vocab >= len(tok)
    # The launch script finds the copy and trains from it; a second preparation reuses it.
    assert prepare_checkpoint(plain, out) == out
