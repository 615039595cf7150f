"""The one class that drives ESI-Bench's simulator: every call into its pipeline and task hooks.

It replays the set-up and step sequence of the official ``pipeline.run_one`` for one question,
calling the official functions for each part (scene config, settle steps, post-processing,
reference images, camera moves of 0.25 m / 15 degrees, physical actions and their feedback, image
capture, clean-up); only the model loop is left to eviseek's agents. Nothing here knows about
OmniGibson beyond what the pipeline module exposes (``pipeline.og``), so tests drive it with a
stand-in module that has the same function names and signatures.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from eviseek.envs.budget import TABLETOP_BUDGET
from eviseek.envs.esibench.checkout import task_module
from eviseek.errors import EnvError

_MODALITIES = ("seg_semantic", "seg_instance", "seg_instance_id")


@dataclass
class EpisodeState:
    """The official pipeline's per-question variables, kept between calls."""

    task: ModuleType
    payload: dict[str, Any]
    question_json: Path
    task_state: dict[str, Any]
    camera_info: dict[str, Any]
    position: Any
    quaternion: Any
    step_image_dir: Path
    env: Any = None
    references: list[Path] = field(default_factory=list)
    postprocess: dict[str, Any] = field(default_factory=dict)


class ESIBenchSimulator:
    """Drives one ESI-Bench question at a time through the official pipeline functions."""

    def __init__(
        self,
        pipeline: ModuleType,
        *,
        step_image_root: Path,
        robot: str = "R1",
        max_steps: int = TABLETOP_BUDGET,
        min_steps: int = 3,
        threshold: float = 0.8,
    ) -> None:
        self.pipeline = pipeline
        self.step_image_root = Path(step_image_root)
        self.robot = robot
        self.max_steps, self.min_steps, self.threshold = max_steps, min_steps, threshold
        self.episode: EpisodeState | None = None
        self._used = False

    def config(self, task: str, question_json: Path) -> Any:
        """The official run configuration (the hooks read e.g. ``json_root`` from it)."""
        return self.pipeline.ActiveExploreConfig(
            task=task,
            metadata=question_json,
            question_index=0,
            json_root=None,
            results_root=self.step_image_root / "results",
            step_image_root=self.step_image_root,
            provider="eviseek",
            model=None,
            api_key=None,
            max_steps=self.max_steps,
            min_steps=self.min_steps,
            threshold=self.threshold,
            max_new_tokens=1024,
            temperature=0.2,
            top_p=0.9,
            robot=self.robot,
            overwrite=True,
        )

    def start(self, question_json: Path, task: str) -> EpisodeState:
        """Build the question's scene as the official pipeline does; the camera at its start pose."""
        p = self.pipeline
        if self.episode is not None:
            self.finish(between_episodes=True)
        module = task_module(p, task)
        chosen = p.select_question(question_json, 0, None)
        payload, source = chosen.payload, chosen.source_path
        config = self.config(task, source)
        task_state = p.task_preprocess(module, payload, source, config)
        if task_state.get("skip_reason"):
            raise EnvError(f"ESI-Bench skips {source}: {task_state['skip_reason']}")
        position, quaternion, camera_info = module.initial_camera(payload)
        scene, room = module.scene_room(payload)
        objects = module.build_env_objects(payload)
        full_scene = bool(getattr(module, "FULL_SCENE", False))
        og = p.og
        env_config = p.task_build_env_config(module, scene, room, self.robot, objects, full_scene=full_scene)
        state = EpisodeState(
            task=module,
            payload=payload,
            question_json=source,
            task_state=task_state,
            camera_info=camera_info,
            position=position,
            quaternion=quaternion,
            step_image_dir=p.step_image_dir_for(module, payload, source, self.step_image_root),
        )
        self.episode = state
        state.env = og.Environment(configs=env_config)
        self._used = True
        if not getattr(module, "DISABLE_VIEWER_CAMERA_MODALITIES", False):
            for modality in _MODALITIES:
                # The official pipeline ignores a modality the camera cannot add; so do we.
                with contextlib.suppress(Exception):
                    og.sim._viewer_camera.add_modality(modality)
        for _ in range(p.task_initial_settle_steps(module)):
            og.sim.step()
        state.postprocess = p.task_postprocess_env(module, state.env, payload, camera_info, task_state)
        override = state.postprocess.get("camera_override") if isinstance(state.postprocess, dict) else None
        if isinstance(override, dict) and override.get("position") and override.get("quaternion_xyzw"):
            state.position = np.array(override["position"], dtype=float)
            state.quaternion = np.array(override["quaternion_xyzw"], dtype=float)
            state.camera_info = {**camera_info, "postprocess_camera_override": override}
        state.references = list(p.task_reference_image_paths(module, payload, task_state))
        return state

    def capture(self, frame: int) -> Path:
        """Render the current view to ``step_NNN.png`` with the task's own capture hook."""
        s = self._current()
        return Path(
            self.pipeline.task_capture_image(
                s.task,
                s.env,
                s.payload,
                s.camera_info,
                s.position,
                s.quaternion,
                s.step_image_dir / f"step_{frame:03d}.png",
                s.task_state,
            )
        )

    def act(self, command: str, step: int) -> dict[str, Any]:
        """Run one action string (a camera move, a physical or a task action); its feedback dict."""
        s = self._current()
        s.position, s.quaternion, result = self.pipeline.execute_action(
            s.task,
            s.env,
            s.payload,
            s.camera_info,
            s.position,
            s.quaternion,
            command,
            task_state=s.task_state,
            step=step,
            step_image_dir=s.step_image_dir,
        )
        return dict(result) if isinstance(result, dict) else {"handled": False, "operation": "noop"}

    def object_names(self) -> dict[str, str]:
        """Scene object names and how the task shows them to the model."""
        s = self._current()
        return dict(self.pipeline.object_display_names(s.task, s.payload, s.camera_info))

    def finish(self, *, between_episodes: bool = False) -> None:
        """The task's clean-up hook, then clear the stage (between questions) or shut down."""
        s, self.episode = self.episode, None
        if s is None:
            return
        handled = False
        try:
            handled = bool(self.pipeline.task_cleanup_runtime(s.task, s.env, s.payload, s.task_state))
        except Exception:
            handled = False
        og = self.pipeline.og
        if between_episodes and hasattr(og, "clear"):
            og.clear()  # OmniGibson can load a new scene after clear(); shutdown() ends the app
        elif not handled and getattr(og, "app", None) is not None:
            og.shutdown()

    def close(self) -> None:
        """End the current question and release the simulator."""
        if self.episode is not None:
            self.finish()
        elif self._used and getattr(self.pipeline.og, "app", None) is not None:
            self.pipeline.og.shutdown()
        self._used = False

    def _current(self) -> EpisodeState:
        if self.episode is None:
            raise EnvError("no ESI-Bench question is loaded; call reset() first")
        return self.episode
