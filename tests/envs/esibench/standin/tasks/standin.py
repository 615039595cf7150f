"""A stand-in ESI-Bench task module for the bridge tests (written for eviseek)."""

from __future__ import annotations

from typing import Any

import numpy as np

TASK_NAME = "standin"


def initial_camera(payload: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    return np.array([1.0, 2.0, 1.5]), np.array([0.0, 0.0, 0.0, 1.0]), {"view_idx": 0}


def scene_room(payload: dict[str, Any]) -> tuple[str, str]:
    return payload["scene"], payload["room"]


def build_env_objects(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "obj_a", "category": "mug"}]
