"""Run configurations: which settings may change on resume, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from eviseek.errors import ConfigError
from eviseek.eval.config import RunConfig, check_resumable, config_differences, load_config, save_config


def _cfg(**kw: object) -> RunConfig:
    base: dict[str, object] = {
        "agents": ["passive", "eviseek"],
        "model": "scripted/echo",
        "dataset": "d.jsonl",
    }
    base.update(kw)
    return RunConfig.model_validate(base)


def test_execution_settings_may_differ() -> None:
    a = _cfg(concurrency=4, timeout_s=60, backend="local", base_url="http://a/v1")
    b = _cfg(concurrency=32, timeout_s=900, backend="ray", base_url="http://b/v1", env_workers=0)
    assert config_differences(a, b) == []
    check_resumable(a, b, "RUN")


def test_each_result_setting_is_named() -> None:
    a = _cfg(budget=30, seed=0)
    b = _cfg(budget=20, seed=1, model="openai/gpt-4o-mini")
    with pytest.raises(ConfigError) as err:
        check_resumable(a, b, "RUN")
    text = str(err.value)
    assert "budget: the run directory has 30, this command asks for 20" in text
    assert "seed: the run directory has 0, this command asks for 1" in text
    assert "model:" in text and "dataset" not in text and "new --out" in text


def test_bad_settings_are_refused_with_reasons() -> None:
    with pytest.raises(ValidationError, match="listed twice"):
        _cfg(agents=["passive", "passive"])
    with pytest.raises(ValidationError, match="at least one agent"):
        _cfg(agents=[" "])
    with pytest.raises(ValidationError, match="api-key-env"):
        _cfg(model_args={"api_key": "sk-secret"})
    with pytest.raises(ValidationError, match="concurrency"):
        _cfg(concurrency=0)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    cfg = _cfg(limit=5, model_args={"delay_s": 0.1})
    save_config(cfg, tmp_path)
    assert load_config(tmp_path) == cfg
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not a valid run configuration"):
        load_config(tmp_path)
    with pytest.raises(ConfigError, match=r"run\.json is missing"):
        load_config(tmp_path / "nowhere")


def test_navigation_datasets_default_to_the_120_step_budget() -> None:
    from eviseek.eval.config import default_budget

    assert default_budget("house:dev") == 120 and default_budget(" Express:/data/q.json") == 120
    assert default_budget("tabletop:test") == 30 and default_budget("runs/demo/x") == 30


def test_new_runs_take_the_model_defaults_and_the_dataset_budget() -> None:
    from eviseek.eval.config import new_run_config

    cfg = new_run_config(
        agents=["passive"], model="reference", dataset="tabletop:dev", concurrency=None, limit=None
    )
    defaults = RunConfig(agents=["passive"], model="reference", dataset="x")
    assert (cfg.concurrency, cfg.timeout_s, cfg.backend, cfg.seed) == (
        defaults.concurrency,
        defaults.timeout_s,
        defaults.backend,
        defaults.seed,
    )
    assert cfg.budget == 30 and cfg.limit is None
    assert new_run_config(agents=["blind"], model="reference", dataset="house:dev").budget == 120
    assert (
        new_run_config(agents=["blind"], model="reference", dataset="house:dev", budget=7, seed=3).budget == 7
    )


def test_a_resume_keeps_saved_settings_and_what_was_given_again() -> None:
    from eviseek.eval.config import resume_config

    saved = _cfg(plugins=["my_plugin"])
    same = resume_config(saved, limit=None, budget=None, agent_config={}, plugins=[], concurrency=2)
    assert same.concurrency == 2 and same.plugins == ["my_plugin"]
    assert config_differences(saved, same) == []
    changed = resume_config(saved, budget=saved.budget + 1)
    assert [d.split(":")[0] for d in config_differences(saved, changed)] == ["budget"]


def test_an_empty_key_variable_is_refused_by_the_library_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from eviseek.eval.runner import model_from_config

    monkeypatch.setenv("EVISEEK_EMPTY_KEY", "")
    cfg = _cfg(model="openai/some-vlm", api_key_env="EVISEEK_EMPTY_KEY", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r"EVISEEK_EMPTY_KEY .*is not set or empty"):
        model_from_config(cfg)


def test_a_refused_resume_never_lists_the_questions_hash() -> None:
    # A changed limit changes the question set's hash too; only the setting itself is named.
    a = _cfg(limit=4, questions_sha256="a" * 64)
    b = _cfg(limit=2, questions_sha256="b" * 64)
    (line,) = config_differences(a, b)
    assert line == "limit: the run directory has 4, this command asks for 2"
    # With nothing else changed, the questions themselves differ: said in words, no hashes.
    (only,) = config_differences(_cfg(questions_sha256="a" * 64), _cfg(questions_sha256="b" * 64))
    assert only.startswith("questions: the dataset's questions differ") and "aaaa" not in only


def test_budget_zero_is_refused_in_plain_words() -> None:
    with pytest.raises(ValidationError, match=r"budget must be at least 1 primitive step"):
        _cfg(budget=0)
