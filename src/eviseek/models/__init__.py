"""Models: the protocol, the ``provider/model`` registry and the built-in providers.

Providers: ``scripted/`` (replies from a list, callable or JSONL file), ``openai/`` (any
OpenAI-compatible chat-completions server) and ``hf/`` (a local transformers model, extra ``hf``).
"""

from eviseek.models.base import Model, generate_recorded
from eviseek.models.registry import get_model, providers, register_provider
from eviseek.models.scripted import ScriptedModel

__all__ = [
    "Model",
    "ScriptedModel",
    "generate_recorded",
    "get_model",
    "providers",
    "register_provider",
]
