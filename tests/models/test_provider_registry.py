"""Providers declare what they are (remote, settings); eval and the CLI ask them, not the name."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from eviseek.errors import ConfigError
from eviseek.eval.judge import judge_model_args
from eviseek.models.hf_local import HFLocalModel
from eviseek.models.openai_compat import OpenAICompatModel
from eviseek.models.openai_settings import OpenAISettings
from eviseek.models.reference import ReferenceModel
from eviseek.models.registry import _PROVIDERS, get_model, provider_kwargs, provider_of, register_provider
from eviseek.models.remote import RemoteSettings
from eviseek.models.retry import RetryPolicy
from eviseek.models.scripted import ScriptedModel
from eviseek.models.settings import HFSettings, ReferenceSettings, ScriptedSettings
from eviseek.types.image import DEFAULT_MAX_PIXELS


def test_builtin_providers_declare_remote_and_settings() -> None:
    declared = {
        "openai/x": OpenAISettings,
        "scripted/a": ScriptedSettings,
        "hf/some-dir": HFSettings,
        "reference": ReferenceSettings,
    }
    for model_id, settings in declared.items():
        assert provider_of(model_id).settings is settings
    assert provider_of("openai/x").remote and provider_of("openai/x").accepts("image_format")
    for local in ("reference", "scripted/a", "hf/some-dir"):
        assert not provider_of(local).remote and not provider_of(local).accepts("image_format")
    # The image cap is declared where a provider has one: the wire's, and the processor's.
    assert provider_of("openai/x").default("max_pixels") == DEFAULT_MAX_PIXELS
    assert provider_of("hf/d").accepts("max_pixels") and provider_of("hf/d").default("max_pixels") is None
    assert not provider_of("reference").accepts("max_pixels")
    with pytest.raises(ConfigError, match="unknown model provider 'nope'"):
        provider_of("nope/x")


def test_get_model_checks_settings_once_into_the_providers_object() -> None:
    model = get_model("scripted/s", replies=["a"], delay_s=0.5)
    assert isinstance(model, ScriptedModel) and model.delay_s == 0.5
    ref = get_model("reference", delay_s=0.25)
    assert isinstance(ref, ReferenceModel) and ref.delay_s == 0.25
    hf = get_model("hf/./no-such-dir", dtype="bfloat16", max_pixels=4096)  # loads on first call only
    assert isinstance(hf, HFLocalModel) and hf.settings == HFSettings(dtype="bfloat16", max_pixels=4096)
    unknown = r"scripted/s: unknown setting\(s\) replys; known: delay_s, path, replies"
    with pytest.raises(ConfigError, match=unknown):
        get_model("scripted/s", replys=["a"])
    with pytest.raises(ConfigError, match=r"reference/tabletop: setting delay_s: .*greater than or equal"):
        get_model("reference", delay_s=-1)
    with pytest.raises(ConfigError, match=r"hf/m: setting dtype"):
        get_model("hf/m", dtype="float8")
    with pytest.raises(ConfigError, match=r"openai/m: unknown setting\(s\) max_retry\b"):
        get_model("openai/m", base_url="http://127.0.0.1:9/v1", max_retry=3)


def test_a_plugin_provider_gets_server_settings_and_judge_encoding_by_declaring_them() -> None:
    class FarSettings(RemoteSettings):
        image_format: str = "png"
        jpeg_quality: int = 90

    class HalfSettings(BaseModel):  # remote, but without the key and the timeout the registry passes
        base_url: str | None = None

    with pytest.raises(ConfigError, match=r"lack api_key, timeout_s; subclass eviseek\.models\.remote"):
        register_provider("half", lambda: ScriptedModel.from_spec, remote=True, settings=HalfSettings)
    register_provider("far", lambda: ScriptedModel.from_spec, "a test server", settings=FarSettings)
    assert _PROVIDERS["far"].remote  # RemoteSettings make it remote
    try:
        assert provider_kwargs("far/m", base_url="http://127.0.0.1:1/v1") == {
            "base_url": "http://127.0.0.1:1/v1"
        }
        assert provider_kwargs("scripted/m", base_url="http://127.0.0.1:1/v1") == {}
        assert judge_model_args("far/m") == {"image_format": "jpeg", "jpeg_quality": 90}
        assert judge_model_args("scripted/m") == {}
    finally:
        del _PROVIDERS["far"]


def test_openai_settings_embed_the_retry_policy_and_the_image_cap() -> None:
    s = OpenAISettings.parse("m")
    assert s.retry == RetryPolicy() and s.max_pixels == DEFAULT_MAX_PIXELS
    flat = OpenAISettings.parse("m", max_retries=1, backoff_base_s=0.0)
    assert flat.retry == dataclasses.replace(RetryPolicy(), max_retries=1, backoff_base_s=0.0)
    model = OpenAICompatModel.from_spec(
        "m", base_url="http://127.0.0.1:9/v1", max_retries=2, image_format="jpg"
    )
    assert model.retry_policy.max_retries == 2 and model.image_format == "jpeg"
    same = OpenAICompatModel("m", OpenAISettings.parse("openai/m", base_url="http://127.0.0.1:9/v1"))
    assert same.base_url == "http://127.0.0.1:9/v1" and same.retry_policy == RetryPolicy()
    with pytest.raises(ConfigError, match=r"out-of-range setting.*max_retries"):
        OpenAISettings.parse("m", max_retries=-1)
    with pytest.raises(ConfigError, match=r"out-of-range setting.*jpeg_quality"):
        OpenAISettings.parse("m", jpeg_quality=0)
    with pytest.raises(ConfigError, match=r"unknown setting.*max_retry\b"):
        OpenAISettings.parse("m", max_retry=3)
