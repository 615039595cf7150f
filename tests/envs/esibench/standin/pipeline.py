"""A stand-in for ESI-Bench's ``src/active_explore/pipeline.py``: the same function names and
signatures (checked against the real file when ESI_BENCH_ROOT is set), no simulator. Every call
is appended to ``CALLS`` as ``(name, details)`` so tests can see what the bridge asked for.
Written for eviseek's tests; no code is taken from ESI-Bench."""

from __future__ import annotations

import importlib
import json
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

CALLS: list[tuple[str, Any]] = []
CAMERA_ACTIONS = {
    "move_forward",
    "move_backward",
    "move_left",
    "move_right",
    "move_up",
    "move_down",
    "turn_left",
    "turn_right",
    "turn_up",
    "turn_down",
}


class _Camera:
    def add_modality(self, name: str) -> None:
        CALLS.append(("add_modality", name))


class _Sim:
    _viewer_camera = _Camera()

    def step(self) -> None:
        CALLS.append(("sim.step", None))

    def render(self) -> None:
        CALLS.append(("sim.render", None))


class _Environment:
    def __init__(self, configs: dict[str, Any]) -> None:
        CALLS.append(("Environment", configs))
        self.configs = configs


class _OG:
    sim = _Sim()
    app = object()
    Environment = _Environment

    def clear(self) -> None:
        CALLS.append(("og.clear", None))

    def shutdown(self) -> None:
        CALLS.append(("og.shutdown", None))


og = _OG()


@dataclass
class ActiveExploreConfig:
    task: str
    metadata: Path
    question_index: int
    json_root: Path | None
    results_root: Path
    step_image_root: Path
    provider: str
    model: str | None
    api_key: str | None
    max_steps: int
    min_steps: int
    threshold: float
    max_new_tokens: int
    temperature: float
    top_p: float
    robot: str
    overwrite: bool


@dataclass
class SelectedQuestion:
    payload: dict[str, Any]
    source_path: Path
    source_label: str


# Each of ESI-Bench's 19 task names is served by a copy of the one stand-in task module, whose
# prompt lists that task's actions in one of the layouts ESI-Bench's prompts use (bullets with a
# name, '|'-separated lists, an ACTIONS: block, phrases with object names in them). The wording
# is invented for these tests.
CAMERA_LINE = "move_forward | move_backward | turn_left | turn_right | stop"
TASK_ACTION_TEXT = {
    "slope": "You can take the following actions:\n"
    "  - put_on_slope: let go of the object on the ramp\n"
    f"  - {CAMERA_LINE}",
    "transparent": "You may also use these physical actions:\n"
    "- pickup: raise the vessel\n"
    "- pour: tip the item out\n\n"
    f"Available actions:\n{CAMERA_LINE} | pickup | pour",
    "pour": "Available actions:\n"
    "  fill water in red mug | fill water in tray\n"
    "  pour red mug into tray | pour tray into red mug\n"
    f"  {CAMERA_LINE}",
    "stacking": "Available actions: pick up <object> | place <object> on top of <object> | "
    f"place <object> on the floor | {CAMERA_LINE}",
    "storage": f"Available actions:\npick up <object> | put <object> inside <container> | {CAMERA_LINE}",
    "counting": "Reply template:\n{\n"
    '  "action": "<move_forward|turn_left|stop|pick up <object>|place <object> on top of <object>|'
    'put back <object>>",\n  "answer": "<count>"\n}',
    "size": "Rules:\n1. Look twice.\n2. Available pickup actions: pick_up_obj_near_red mug, "
    "pick_up_obj_near_tray.\n3. Stop when sure.",
    "action": "ACTIONS:\n"
    "  pick up <object>\n"
    "  place <object> on top of <object>\n"
    "  put back <object>\n"
    f"  {CAMERA_LINE}",
}
TASK_NAMES = (
    "action angle_confusion cognitivemap counting deformable distance line mirror multiagent occlusion pour "
    "size slope stacking storage touching transparent triangle unobserved_changes"
).split()


# The fields each task's own action results carry besides handled/operation/success, by the
# names ESI-Bench's modules use (9f35528), with made-up values; the sentinels mark what must
# never reach an agent (world pose, stacking's accepted orders, a task's answer bookkeeping).
SECRET_POSITION = [7.125, -3.5, 1.0625]
SECRET_QUATERNION = [0.0, 0.0, 0.3827, 0.9239]
SECRET_ORDERS = [["secretbottom", "secretmiddle", "secrettop"]]
_POSE = {"position": SECRET_POSITION, "quaternion_xyzw": SECRET_QUATERNION}
ACTION_RESULT_FIELDS: dict[str, dict[str, Any]] = {
    "stacking": {
        "object": "red mug",
        "target": "tray",
        "current_stack": ["tray", "red mug"],
        "gt_orders": SECRET_ORDERS,
        **_POSE,
    },
    "pour": {
        "side": "left",
        "source_side": "left",
        "scenario": "simulated",
        "n_left": 0,
        "n_right": 1,
        **_POSE,
    },
    "size": {
        "pair_index": 1,
        "object": "red mug",
        "reference": "tray",
        "navigation_success": True,
        "grasp_success": True,
        "visibility": True,
        **_POSE,
    },
    "slope": {
        "all_frame_paths": ["secret_frame.png"],
        "sampled_frame_paths": ["secret_frame.png"],
        "final_answer": {"answer": "secretanswer"},
        "history_update": {"answer": "secretanswer"},
        **_POSE,
    },
    "storage": {"object": "red mug", "container": "tray", "attempts": 1, "physical_state": "tray"},
    "transparent": {"lift_m": 0.2},
    "action": {"object": "red mug", "target": "tray"},
    "counting": {"object": "red mug", "target": "tray"},
}


def load_task_module(task_name: str):
    CALLS.append(("load_task_module", task_name))
    base = importlib.import_module("tasks.standin")
    if task_name not in TASK_NAMES:
        return base
    module = types.ModuleType(f"tasks.{task_name}")
    module.__dict__.update({k: v for k, v in vars(base).items() if not k.startswith("__")})
    module.TASK_NAME = task_name
    return module


def payload_from_hf_row(row: dict[str, Any]) -> dict[str, Any]:
    """The payload of a stored record's fields, as ``select_question`` builds it."""
    return {
        **json.loads(row.get("metadata_json") or "{}"),
        "scene": row["scene"],
        "room": row["room"],
        "_question": row["question"],
        "_ground_truth": row["answer"],
        "_options": row["options_json"],
    }


def select_question(metadata_path: Path, question_index: int, json_root: Path | None) -> SelectedQuestion:
    CALLS.append(("select_question", str(metadata_path)))
    row = json.loads(Path(metadata_path).read_text())
    payload = {
        **json.loads(row.get("metadata_json") or "{}"),
        "scene": row["scene"],
        "room": row["room"],
        "_question": row["question"],
        "_ground_truth": row["answer"],
        "_options": row["options_json"],
    }
    return SelectedQuestion(payload=payload, source_path=Path(metadata_path), source_label=str(metadata_path))


def task_preprocess(
    task_module, payload: dict[str, Any], question_json: Path, config: ActiveExploreConfig
) -> dict[str, Any]:
    CALLS.append(("task_preprocess", config.task))
    return {"skip_reason": "standin_skip"} if payload.get("standin_skip") else {"prepared": True}


def task_build_env_config(
    task_module,
    scene_name: str,
    room_name: str | None,
    robot: str,
    objects: list[dict[str, Any]],
    full_scene: bool = False,
) -> dict[str, Any]:
    CALLS.append(("task_build_env_config", (scene_name, room_name, robot, full_scene)))
    return {"scene": {"scene_model": scene_name, "room": room_name}, "objects": objects}


def task_initial_settle_steps(task_module) -> int:
    return 2


def task_postprocess_env(
    task_module, env, payload: dict[str, Any], camera_info: dict[str, Any], task_state: dict[str, Any]
) -> dict[str, Any]:
    CALLS.append(("task_postprocess_env", None))
    return {}


def task_reference_image_paths(
    task_module, payload: dict[str, Any], task_state: dict[str, Any]
) -> list[Path]:
    return []


def step_image_dir_for(
    task_module, payload: dict[str, Any], source_json: Path, step_image_root: Path
) -> Path:
    return Path(step_image_root) / task_module.TASK_NAME / payload["scene"] / Path(source_json).stem


def task_capture_image(
    task_module,
    env,
    payload: dict[str, Any],
    camera_info: dict[str, Any],
    pos: np.ndarray,
    quat: np.ndarray,
    image_path: Path,
    task_state: dict[str, Any],
) -> Path:
    CALLS.append(("task_capture_image", Path(image_path).name))
    image_path = Path(image_path)
    image_path.parent.mkdir(parents=True, exist_ok=True)
    shade = int(abs(hash((round(float(pos[0]), 3), round(float(pos[2]), 3), round(float(quat[2]), 3)))) % 200)
    pixels = np.zeros((24, 32, 3), np.uint8)
    pixels[:, :, 0] = shade
    pixels[:, :16, 1] = 255 - shade
    Image.fromarray(pixels).save(image_path)
    return image_path


def execute_action(
    task_module,
    env,
    payload: dict[str, Any],
    camera_info: dict[str, Any],
    pos: np.ndarray,
    quat: np.ndarray,
    action: str,
    task_state: dict[str, Any] | None = None,
    step: int | None = None,
    step_image_dir: Path | None = None,
):
    CALLS.append(("execute_action", action))
    pos, quat, result = _act(pos, quat, action, step, step_image_dir)
    if action not in CAMERA_ACTIONS and result.get("handled"):
        result = {**result, **ACTION_RESULT_FIELDS.get(getattr(task_module, "TASK_NAME", ""), {})}
    return pos, quat, result


def _act(
    pos: np.ndarray, quat: np.ndarray, action: str, step: int | None, step_image_dir: Path | None
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    if action in CAMERA_ACTIONS:
        pos = pos.copy()
        pos[0 if "move" in action else 2] += 0.25 if action.endswith(("forward", "up", "left")) else -0.25
        return pos, quat, {"handled": True, "operation": "camera", "action": action}
    if action.startswith("pick up "):
        return pos, quat, {"handled": True, "operation": "pick_up", "object": action[8:], "success": True}
    if action == "put_on_slope":
        # Like the slope task: the slide comes back as extra images, one per physics frame.
        folder = Path(step_image_dir or ".")
        folder.mkdir(parents=True, exist_ok=True)
        frames = []
        for k in range(3):
            path = folder / f"slide_{step}_{k}.png"
            Image.fromarray(np.full((24, 32, 3), 40 * (k + 1), np.uint8)).save(path)
            frames.append(str(path))
        return (
            pos,
            quat,
            {"handled": True, "operation": "put_on_slope", "success": True, "extra_image_paths": frames},
        )
    if action.startswith("pour "):
        return (
            pos,
            quat,
            {
                "handled": True,
                "operation": "pour",
                "success": False,
                "error": "nothing to pour",
                "extra_image_paths": [str(Path(step_image_dir or ".") / "pour.png")],
            },
        )
    if action.startswith(("place ", "put ", "fill ", "pickup", "pick_up_obj_near_")) or action == "pour":
        return pos, quat, {"handled": True, "operation": action.split()[0], "success": True}
    return pos, quat, {"handled": False, "operation": "noop", "action": action}


def object_display_names(task_module, payload: dict[str, Any], camera_info: dict[str, Any]) -> dict[str, str]:
    return {"obj_a": "red mug", "obj_b": "tray"}


def task_cleanup_runtime(task_module, env, payload: dict[str, Any], task_state: dict[str, Any]) -> bool:
    CALLS.append(("task_cleanup_runtime", None))
    return False


def task_build_system_prompt(
    task_module,
    payload: dict[str, Any],
    threshold: float,
    min_steps: int,
    camera_info: dict[str, Any],
    task_state: dict[str, Any],
) -> str:
    CALLS.append(("task_build_system_prompt", threshold))
    name = getattr(task_module, "TASK_NAME", "standin")
    actions = TASK_ACTION_TEXT.get(
        name, "Available movement actions: move_forward, move_backward, turn_left, stop."
    )
    return (
        f"STANDIN TASK PROMPT: {payload['_question']}\nSTANDIN ADVICE for {name}: look from another side.\n"
        f"{actions}\n\nReply with JSON: action, answer, confidence, reasoning.\n"
        '{"action": "<name>", "answer": "<answer>", "confidence": <float>}'
    )


def task_build_force_choice_prompt(
    task_module, payload: dict[str, Any], camera_info: dict[str, Any], task_state: dict[str, Any]
) -> str:
    CALLS.append(("task_build_force_choice_prompt", None))
    name = getattr(task_module, "TASK_NAME", "standin")
    return f"STANDIN FORCED CHOICE for {name}: give one final answer as JSON."


def task_parse_model_output(
    task_module, parsed: dict[str, Any], payload: dict[str, Any], task_state: dict[str, Any]
) -> dict[str, Any]:
    CALLS.append(("task_parse_model_output", parsed.get("answer")))
    answer = str(parsed.get("answer") or "not sure").strip().lower()
    return {
        **parsed,
        "action": str(parsed.get("action") or "move_forward").lower(),
        "answer": answer,
        "confidence": float(parsed.get("confidence") or 0.0),
        "reasoning": str(parsed.get("reasoning") or ""),
    }


def task_should_stop(
    task_module, parsed: dict[str, Any], history: list[dict[str, Any]], step: int, config: ActiveExploreConfig
) -> tuple[bool, str]:
    CALLS.append(("task_should_stop", step))
    if parsed["confidence"] >= config.threshold and step >= config.min_steps:
        return True, "confidence_threshold"
    if parsed["action"] == "stop":
        return True, "model_stop"
    if step == config.max_steps:
        return True, "max_steps"
    return False, ""


def task_resolve_final_answer(task_module, history: list[dict[str, Any]]) -> tuple[str, int]:
    for item in reversed(history):
        if item["answer"] != "not sure":
            return item["answer"], int(item["step"])
    return "not sure", -1


def task_needs_force_final_choice(task_module, answer: str, stop_reason: str) -> bool:
    return answer == "not sure"


def collect_contents(
    image_path: Path,
    history: list[dict[str, Any]],
    prompt: str,
    reference_image_paths: list[Path] | None = None,
    reference_image_path: Path | None = None,
) -> list[Any]:
    CALLS.append(("collect_contents", len(history)))
    contents: list[Any] = []
    if history:
        contents.append("HISTORY " + "; ".join(f"{h['step']}:{h['action']}:{h['answer']}" for h in history))
    contents += [p for p in reference_image_paths or [] if Path(p).exists()]
    contents += [Path(image_path).parent / h["image"] for h in history[-5:]]
    return [*contents, Path(image_path), prompt]
