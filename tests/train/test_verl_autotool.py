"""The verl integration: pure-Python parts here, the real-verl checks in .venv-verl via subprocess."""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eviseek.train.data import SyntheticConfig, synthetic_row
from eviseek.train.rollouts import rollout_messages
from eviseek.train.verl_autotool.batching import StepBatcher, StepIncomplete, is_training
from eviseek.train.verl_autotool.data import verl_record, write_verl_parquet
from eviseek.train.verl_autotool.reward import AutoToolVerlReward, VerlRewardSettings, compute_score

ROOT = Path(__file__).resolve().parents[2]
VERL_PY = ROOT / ".venv-verl" / "bin" / "python"

CALL = (
    '<tool_on><think>tiny</think><tool_call>\n{"name": "image_zoom_in_tool", '
    '"arguments": {"bbox_2d": [1, 2, 60, 70]}}\n</tool_call>'
)
# What verl's reward managers decode: special tokens (chat markers, image pads) stripped.
ON_OK = (
    CALL + "\nuser\n<tool_response>\nZoomed into [1, 2, 60, 70].\n</tool_response>\nassistant\n"
    "<think>K it is.</think><answer>K</answer>"
)
ON_FAILED = (
    CALL + "\nuser\n<tool_response>\nZoom failed: too small\n</tool_response>\nassistant\n"
    "<think>guess</think><answer>K</answer>"
)
OFF_OK = "<tool_off><think>plain</think><answer>K</answer>"


def test_plain_rollout_text_splits_into_turns() -> None:
    msgs = rollout_messages(ON_OK)
    assert [m["role"] for m in msgs] == ["assistant", "user", "assistant"]
    assert msgs[0]["content"] == CALL
    assert msgs[2]["content"] == "<think>K it is.</think><answer>K</answer>"
    assert rollout_messages(OFF_OK) == [{"role": "assistant", "content": OFF_OK}]


def test_batch_reward_applies_amb_to_the_batch_it_scores() -> None:
    reward = AutoToolVerlReward(VerlRewardSettings(amb_base=1.2, amb_release_step=2))
    truths = ["K"] * 4
    out = reward.score_batch([ON_OK, ON_FAILED, OFF_OK, OFF_OK], truths, [{"answer_kind": "text"}] * 4)
    assert [o["tool_on"] for o in out] == [1.0, 1.0, 0.0, 0.0]
    assert out[0]["ratio_on"] == 0.5 and out[0]["lambda_on"] == out[0]["lambda_off"] == 1.2
    # A failed zoom with a right answer earns no tool reward; a good zoom earns lambda_on * 1.
    assert [o["tool"] for o in out] == [1.0, 0.0, 1.0, 1.0]
    assert out[0]["score"] == pytest.approx(0.8 + 0.2 + 1.2)
    skew = reward.score_batch([OFF_OK] * 4, truths, None)
    assert skew[0]["ratio_on"] == 0.0 and skew[0]["lambda_on"] > skew[0]["lambda_off"]
    # Validation batches leave AMB and its step alone.
    before = (reward.step, reward.amb.lambdas)
    val = reward.score_batch([ON_OK], ["K"], [{"split": "test"}])
    assert (reward.step, reward.amb.lambdas) == before and math.isnan(val[0]["ratio_on"])
    released = reward.score_batch([ON_OK, OFF_OK], ["K", "K"], None)
    assert released[0]["amb_released"] == 1.0 and released[0]["lambda_on"] == 1.2
    single = compute_score("synthetic", ON_OK, "K", {"answer_kind": "text"}, amb_base=1.5)
    assert single["lambda_on"] == 1.5 and single["score"] == pytest.approx(1.0 + 1.5)
    with pytest.raises(ValueError, match="lengths differ"):
        reward.score_batch([ON_OK], ["K", "K"], None)
    with pytest.raises(ValueError):
        VerlRewardSettings(amb_bse=1.0)  # type: ignore[call-arg]


def test_verl_rows_carry_what_the_dataset_tool_and_reward_read(tmp_path: Path) -> None:
    row = synthetic_row(
        3, SyntheticConfig(width=256, height=192, target_size=16, distractors=2), needs_zoom=True
    )
    rec = verl_record(row, 7)
    assert (
        rec["prompt"][1]["content"].startswith("<image>")
        and rec["prompt"][1]["content"].count("<image>") == 1
    )
    assert "<tools>" not in rec["prompt"][0]["content"]  # verl renders the tool list itself
    assert rec["reward_model"]["ground_truth"] == row.ground_truth and rec["agent_name"] == "tool_agent"
    assert rec["extra_info"]["tools_kwargs"]["image_zoom_in_tool"]["create_kwargs"]["image"] == row.images[0]
    assert json.loads(rec["extra_info"]["options"]) == row.options
    import pyarrow.parquet as pq

    path = write_verl_parquet([row, row], tmp_path / "train.parquet")
    table = pq.read_table(path).to_pylist()
    assert len(table) == 2 and table[1]["extra_info"]["index"] == 1
    assert table[0]["images"][0]["bytes"] == row.images[0]
    plain = write_verl_parquet([row], tmp_path / "plain.parquet", original_image_in_tool=False)
    assert "tools_kwargs" not in pq.read_table(plain).to_pylist()[0]["extra_info"]


def _wait_for_verl_setup() -> None:
    """Under scripts/test.sh, wait for its background ``setup_verl.sh`` and fail if that failed.

    test.sh names a file in ``EVISEEK_VERL_SETUP_STATUS`` and writes the setup's exit status
    there when it ends, so this test can run beside the others instead of after them.
    """
    status_path = os.environ.get("EVISEEK_VERL_SETUP_STATUS")
    if not status_path:
        return
    status, log = Path(status_path), Path(status_path + ".log")
    deadline = time.monotonic() + 1200
    while not status.exists() or not status.read_text().strip():
        if time.monotonic() > deadline:
            pytest.fail(f"scripts/setup_verl.sh did not finish in 20 min; its log ends:\n{_tail(log)}")
        time.sleep(1)
    if status.read_text().strip() != "0":
        pytest.fail(f"scripts/setup_verl.sh failed; its log ends:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:] if log.exists() else f"({log} is missing)"


@pytest.mark.slow
def test_against_real_verl_classes_in_their_own_env() -> None:
    _wait_for_verl_setup()
    if not VERL_PY.exists():
        why = ".venv-verl does not exist: run scripts/setup_verl.sh (scripts/test.sh does) to test with verl"
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail(why)  # scripts/test.sh (CI) sets verl up: its absence there is a breakage
        pytest.skip(why)
    from eviseek.testing.tiny_vlm import build_tiny_vlm
    from eviseek.train.tiny_model import TinyVLMConfig

    env = {
        **os.environ,
        "EVISEEK_TINY_VLM": str(build_tiny_vlm()),
        # A checkpoint without the mode tokens, which the verl path must add (paper section 3.3).
        "EVISEEK_TINY_VLM_PLAIN": str(build_tiny_vlm(config=TinyVLMConfig(mode_tokens=False))),
        "PYTHONPATH": str(ROOT / "src"),
    }
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(
        [str(VERL_PY), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests/train/verl_env"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout and "skipped" not in proc.stdout, tail
    print(tail, file=sys.stderr)


@pytest.mark.slow
def test_launch_script_trains_verl_from_a_copy_with_the_mode_tokens(tmp_path: Path) -> None:
    """examples/verl/autotool_grpo.sh with Hydra's ``--cfg job`` (compose and print, no training):
    a local checkpoint without the mode tokens is replaced by its prepared copy, once."""
    _wait_for_verl_setup()
    if not VERL_PY.exists():
        why = ".venv-verl does not exist: run scripts/setup_verl.sh to test with verl"
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail(why)
        pytest.skip(why)
    import transformers
    import yaml

    from eviseek.testing.tiny_vlm import build_tiny_vlm
    from eviseek.train.mode_tokens import missing_mode_tokens
    from eviseek.train.tiny_model import TinyVLMConfig

    plain = build_tiny_vlm(tmp_path / "plain-ckpt", TinyVLMConfig(mode_tokens=False))
    env = {
        **os.environ,
        "PYTHON": str(VERL_PY),
        "PYTHONPATH": str(ROOT / "src"),
        "EVISEEK_MODE_TOKEN_DIR": str(tmp_path / "prepared"),
    }
    env.pop("VIRTUAL_ENV", None)
    script = str(ROOT / "examples/verl/autotool_grpo.sh")
    proc = subprocess.run(
        ["bash", script, f"actor_rollout_ref.model.path={plain}", "trainer.nnodes=1", "--cfg", "job"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = yaml.safe_load(proc.stdout)
    copy = tmp_path / "prepared" / "plain-ckpt"
    assert cfg["actor_rollout_ref"]["model"]["path"] == str(copy)  # one path, the user's replaced
    assert cfg["trainer"]["nnodes"] == 1  # other overrides pass through
    assert missing_mode_tokens(transformers.AutoTokenizer.from_pretrained(str(copy))) == []


def _batcher(reward: AutoToolVerlReward, batch_size: int, **kw: float) -> StepBatcher:
    def score(entries: list[dict]) -> list[dict]:
        return reward.score_batch(
            [e["solution_str"] for e in entries],
            [e["ground_truth"] for e in entries],
            [e["extra_info"] for e in entries],
        )

    return StepBatcher(score, batch_size, **kw)


def _entry(text: str, split: str = "train") -> dict:
    return {"solution_str": text, "ground_truth": "K", "extra_info": {"answer_kind": "text", "split": split}}


def test_a_step_delivered_in_parts_with_gaps_advances_amb_once() -> None:
    """verl hands rollouts over one by one as they finish; gaps longer than the flush interval
    must not split a training step (the split advanced AMB twice and gave equal rollouts
    different rewards)."""
    reward = AutoToolVerlReward(VerlRewardSettings(amb_base=1.2, amb_release_step=2))
    flush = 0.05
    batcher = _batcher(reward, 4, flush_after_s=flush, step_timeout_s=30.0)
    step = [ON_OK, OFF_OK, OFF_OK, OFF_OK]

    async def deliver(parts: list[list[str]]) -> list[dict]:
        tasks = []
        for part in parts:
            tasks += [asyncio.ensure_future(batcher.submit(_entry(t), training=True)) for t in part]
            await asyncio.sleep(3 * flush)  # longer than the flush interval
        return list(await asyncio.gather(*tasks))

    first = asyncio.run(deliver([step[:3], step[3:]]))
    assert batcher.batches_scored == [4] and batcher.steps_scored == 1
    assert reward.step == 1 and len(reward.amb.history) == 1  # AMB advanced exactly once
    assert {(r["lambda_on"], r["lambda_off"], r["ratio_on"]) for r in first} == {
        (first[0]["lambda_on"], first[0]["lambda_off"], 0.25)
    }
    # The three identical right tool-off rollouts earn the same reward.
    assert first[1]["score"] == first[2]["score"] == first[3]["score"]
    assert first[0]["lambda_on"] > 1.2 > first[0]["lambda_off"]  # tool-on is the rarer mode

    second = asyncio.run(deliver([step[:1], step[1:2], step[2:]]))
    assert batcher.batches_scored == [4, 4] and reward.step == 2 and len(reward.amb.history) == 2
    assert len({(r["lambda_on"], r["lambda_off"]) for r in second}) == 1
    assert second[0]["amb_released"] == 0.0  # step 1 of a release at step 2: not released early


def test_validation_rollouts_flush_on_the_timer_without_moving_amb() -> None:
    reward = AutoToolVerlReward(VerlRewardSettings(amb_base=1.2))
    batcher = _batcher(reward, 4, flush_after_s=0.05, step_timeout_s=30.0)

    async def run() -> list[dict]:
        return list(
            await asyncio.gather(
                *(batcher.submit(_entry(t, "test"), training=False) for t in (ON_OK, OFF_OK))
            )
        )

    out = asyncio.run(run())
    assert batcher.batches_scored == [2] and batcher.steps_scored == 0
    assert reward.step == 0 and reward.amb.history == [] and math.isnan(out[0]["ratio_on"])
    assert is_training({"split": "train"}) and is_training(None) and not is_training({"split": "VAL"})


def test_a_stalled_step_fails_with_a_message_instead_of_scoring_a_part() -> None:
    reward = AutoToolVerlReward(VerlRewardSettings())
    batcher = _batcher(reward, 4, flush_after_s=0.01, step_timeout_s=0.1)

    async def run() -> None:
        await asyncio.gather(*(batcher.submit(_entry(OFF_OK), training=True) for _ in range(3)))

    with pytest.raises(StepIncomplete, match=r"stopped at 3 of 4 rollouts .*reward\.num_workers=1"):
        asyncio.run(run())
    assert batcher.batches_scored == [] and reward.amb.history == []


def test_a_judge_can_be_named_for_verl_and_decides_what_the_rules_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from eviseek.testing.openai_server import OpenAITestServer

    off_kettle = "<tool_off><think>plain</think><answer>a kettle</answer>"
    with OpenAITestServer(['{"equivalent": true}']) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        judged = AutoToolVerlReward(VerlRewardSettings(judge="openai/judge-model"))
        out = judged.score_batch(
            [off_kettle], ["teapot"], [{"answer_kind": "text", "question": "What pours?"}]
        )
        assert out[0]["acc"] == 1.0
        assert len(server.requests) == 1 and server.requests[0]["json"]["model"] == "judge-model"
        assert "Question: What pours?" in json.dumps(server.requests[0]["json"]["messages"])
    # Without a judge (the default) the rules alone decide: no equivalence, no reward.
    plain = AutoToolVerlReward(VerlRewardSettings())
    assert plain.score_batch([off_kettle], ["teapot"], [{"answer_kind": "text"}])[0]["acc"] == 0.0
