#!/usr/bin/env bash
# AutoTool GRPO on a GPU cluster with verl (one node of 8 GPUs by default).
#
#   pip install "eviseek[verl]"        # or: bash scripts/setup_verl.sh for a CPU test env
#   python -c "from eviseek.train.data import synthetic_rows; from eviseek.train.verl_autotool.data import write_verl_parquet; write_verl_parquet(synthetic_rows(512), 'data/autotool/train.parquet'); write_verl_parquet(synthetic_rows(64, seed=1), 'data/autotool/test.parquet', split='test')"
#   bash examples/verl/autotool_grpo.sh [hydra overrides...]
#
# Real data: convert DeepEyes-style parquet (eviseek.train.data.load_training_rows) with
# write_verl_parquet. Extra arguments are Hydra overrides, e.g.
#   bash examples/verl/autotool_grpo.sh actor_rollout_ref.model.path=/models/Qwen2.5-VL-7B-Instruct trainer.nnodes=2
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PY=${PYTHON:-python}
PKG="$("$PY" -c 'import eviseek.train.verl_autotool as m, os; print(os.path.dirname(m.__file__))')"
# <tool_on>/<tool_off> must be whole tokens (paper section 3.3). A checkpoint (a folder, or a hub
# id already downloaded) that lacks them is copied once, with the tokens added, to
# $EVISEEK_MODE_TOKEN_DIR/<name>, and verl trains from that copy. A hub id that is not downloaded
# stops the launch with one error line.
MODEL="$(sed -n 's/^ *path: \(.*Qwen.*\)$/\1/p' "$HERE/autotool_grpo.yaml" | head -n1)"
ARGS=()
for arg in "$@"; do
  case "$arg" in
    actor_rollout_ref.model.path=*) MODEL="${arg#*=}" ;;
    *) ARGS+=("$arg") ;;
  esac
done
MODEL="$("$PY" -m eviseek.train.mode_tokens "$MODEL" "${EVISEEK_MODE_TOKEN_DIR:-$HOME/.cache/eviseek/mode-tokens}/$(basename "$MODEL")")" || exit 1
exec "$PY" -m verl.trainer.main_ppo \
  --config-path="$HERE" --config-name=autotool_grpo \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.rollout.multi_turn.tool_config_path="$PKG/zoom_tool.yaml" \
  reward.custom_reward_function.path="$PKG/reward.py" \
  reward.reward_manager.module.path="$PKG/manager.py" \
  ${ARGS[@]+"${ARGS[@]}"}
