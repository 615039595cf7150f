"""Registries refuse silent replacement (issue 36, finding 2): environments, providers and agents
raise on a second registration of a name from another module unless ``replace=True``, and a run
records every replacement made that way. (Benchmarks: tests/eval/test_benchmark_registry.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import eviseek._registration as registration
from eviseek.agents import registry as agents
from eviseek.envs import registry as envs
from eviseek.errors import ConfigError
from eviseek.models import registry as models
from eviseek.types import Question

HERE = f"{__name__} ({Path(__file__).resolve()})"


@pytest.fixture(autouse=True)
def _no_replacements(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(registration, "_REPLACED", [])
    yield


def _restoring(table: dict[str, object], origins: registration.Origins, name: str) -> Callable[[], None]:
    entry, origin = table[name], origins.of(name)

    def restore() -> None:
        table[name] = entry
        if origin is not None:
            origins._origins[name] = origin

    return restore


def test_an_environment_id_is_not_silently_replaced() -> None:
    restore = _restoring(envs._ENVS, envs._ORIGINS, "eviseek/House-v0")  # type: ignore[arg-type]
    try:
        with pytest.raises(
            ConfigError, match=r"environment 'eviseek/House-v0' is already registered by eviseek\.envs"
        ):
            envs.register("eviseek/House-v0", "somewhere:Else")
        assert envs._ENVS["eviseek/House-v0"].entry_point == "eviseek.envs.house.env:HouseEnv"
        envs.register("eviseek/House-v0", "somewhere:Else", replace=True)
        assert registration.replacements() == [
            f"environment eviseek/House-v0: eviseek.envs replaced by {HERE}"
        ]
    finally:
        restore()


def test_a_provider_is_not_silently_replaced() -> None:
    restore = _restoring(models._PROVIDERS, models._ORIGINS, "reference")  # type: ignore[arg-type]
    try:
        with pytest.raises(ConfigError, match=r"model provider 'reference' is already registered"):
            models.register_provider("reference", lambda: None)  # type: ignore[arg-type,return-value]
        assert models.provider_of("reference").settings is not None  # still the built-in
        models.register_provider("reference", lambda: None, replace=True)  # type: ignore[arg-type,return-value]
        assert registration.replacements() == [
            f"model provider reference: eviseek.models.registry replaced by {HERE}"
        ]
    finally:
        restore()


def test_an_agent_registered_by_a_plugin_is_not_silently_replaced_by_another() -> None:
    try:
        # A module registering its own name again (a plugin imported twice) is fine.
        agents.register_agent("mine-36", lambda **kw: None)  # type: ignore[arg-type,return-value]
        agents.register_agent("mine-36", lambda **kw: None)  # type: ignore[arg-type,return-value]
        agents._ORIGINS._origins["mine-36"] = registration.Origin(
            "other_plugin", "/elsewhere/other_plugin.py"
        )
        with pytest.raises(ConfigError, match=r"agent 'mine-36' is already registered by other_plugin"):
            agents.register_agent("mine-36", lambda **kw: None)  # type: ignore[arg-type,return-value]
        with pytest.raises(ConfigError, match="built-in agent"):
            agents.register_agent("passive", lambda **kw: None)  # type: ignore[arg-type,return-value]
    finally:
        agents._AGENTS.pop("mine-36", None)


def test_a_run_records_the_replacements_its_plugins_made(tmp_path: Path) -> None:
    from eviseek.eval.config import new_run_config
    from eviseek.eval.runner import prepare_run_dir

    restore = _restoring(envs._ENVS, envs._ORIGINS, "eviseek/House-v0")  # type: ignore[arg-type]
    try:
        envs.register("eviseek/House-v0", "somewhere:Else", replace=True)
        config = new_run_config(agents=["blind"], model="scripted/x", dataset="q.jsonl")
        prepare_run_dir(tmp_path, config, [Question(id="q", text="?")])
    finally:
        restore()
    saved = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert saved["replaced"] == [f"environment eviseek/House-v0: eviseek.envs replaced by {HERE}"]
    assert saved["benchmark"] is None  # a question of no benchmark
