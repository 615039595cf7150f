"""What a registration declares about one instance's compute needs."""

from __future__ import annotations

import pytest

from eviseek.envs import env_resources, registry
from eviseek.errors import ConfigError
from tests.eval.toy_plugin import RevealEnv


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_ENVS", dict(registry._ENVS))  # registrations stay in the test


def test_an_env_that_declares_nothing_needs_one_cpu() -> None:
    assert env_resources("eviseek/Tabletop-v0") == {"CPU": 1.0}
    registry.register("t/Plain-v0", RevealEnv)
    assert env_resources("t/Plain-v0") == {"CPU": 1.0}


def test_the_gpu_simulator_bridges_declare_a_gpu() -> None:
    for env_id in ("eviseek/ESIBench-v0", "eviseek/Express-v0"):
        assert env_resources(env_id) == {"CPU": 1.0, "GPU": 1.0}


def test_declared_resources_are_kept_and_not_passed_to_the_env() -> None:
    registry.register("t/Sim-v0", RevealEnv, resources={"GPU": 0.5, "CPU": 2, "sim_node": 1})
    assert env_resources("t/Sim-v0") == {"CPU": 2.0, "GPU": 0.5, "sim_node": 1.0}
    env_resources("t/Sim-v0")["GPU"] = 9.0  # a copy: the registration is unchanged
    assert env_resources("t/Sim-v0")["GPU"] == 0.5
    assert isinstance(registry.make("t/Sim-v0"), RevealEnv)  # RevealEnv takes no keyword arguments


@pytest.mark.parametrize("bad", [{"GPU": -1}, {"GPU": float("nan")}, {"GPU": "1"}, {"": 1}, {"GPU": True}])
def test_a_bad_declaration_is_refused_at_registration(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"environment 't/Bad-v0' declares resource .*at least 0"):
        registry.register("t/Bad-v0", RevealEnv, resources=bad)  # type: ignore[arg-type]
    assert "t/Bad-v0" not in registry.registered()


def test_an_unknown_id_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"unknown environment 'nope/X-v0'"):
        env_resources("nope/X-v0")
