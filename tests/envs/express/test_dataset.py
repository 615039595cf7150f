"""``express:PATH`` reads EXPRESS-Bench's question records; bad files fail with one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eviseek.errors import ConfigError
from eviseek.eval.datasets import load_dataset
from tests.envs.express.conftest import FIXTURE


def test_fixture_records_become_questions() -> None:
    qs = load_dataset(f"express:{FIXTURE}")
    assert [q.id for q in qs] == ["express-0000", "express-0001", "express-0002"]
    q = qs[1]
    assert q.env_id == "eviseek/Express-v0" and q.family == "EXPRESS-Bench" and q.subcategory == "existence"
    assert q.contract.kind == "text" and q.ground_truth.startswith("Yes, a small potted plant")
    assert q.scene["scene_id"] == "00000-StandinA" and q.scene["start_rotation"] == [
        0.7071068,
        0.0,
        0.7071068,
        0.0,
    ]
    assert q.metadata["shortest_path_m"] == 2.0 and q.metadata["target"]["position"] == [-4.0, 0.0, 2.0]


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ({"question": "x"}, "expected a JSON list"),
        ([{"question": "q"}], "record 0 lacks answer, type, scene_id"),
        (
            [{**json.loads(FIXTURE.read_text())[0], "start_position": [0, 0]}],
            "'start_position' must be a list of 3",
        ),
        ([{**json.loads(FIXTURE.read_text())[0], "scene_id": "nodash"}], "not an HM3D folder name"),
        (
            [{**json.loads(FIXTURE.read_text())[0], "geodesic_distance": "far"}],
            "geodesic_distance must be a number",
        ),
    ],
)
def test_bad_records_are_named(tmp_path: Path, records: object, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records))
    with pytest.raises(ConfigError, match=message):
        load_dataset(f"express:{path}")


def test_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no EXPRESS-Bench question file"):
        load_dataset(f"express:{tmp_path / 'nope.json'}")
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_dataset(f"express:{broken}")
