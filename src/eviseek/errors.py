"""Exceptions shared across eviseek.

Two kinds of failure are kept apart on purpose. A mistake the *model* made (bad JSON, an
unknown object, a box outside the image) is not an exception at all: it goes back into the
transcript as a failed observation and the episode continues. What is raised here is for
infrastructure and usage problems that a person has to fix.
"""

from __future__ import annotations


class EviseekError(Exception):
    """Base class of every error eviseek raises on purpose."""


class ConfigError(EviseekError, ValueError):
    """A setting or argument is wrong; the message says which and how to fix it."""


class SettingError(ConfigError):
    """A value the user gave is wrong: a flag, a setting, the content of a file they named, or a
    plugin; nothing was run. The command line exits with its usage code (2) for it, like a bad flag."""


class PluginError(SettingError):
    """A plugin could not be imported: it is missing, does not parse, raises, lacks a package or
    calls ``sys.exit`` while being imported."""


class MissingExtraError(EviseekError, ImportError):
    """An optional dependency is not installed; the message names the extra to add."""

    def __init__(self, package: str, extra: str, purpose: str = "") -> None:
        self.package = package
        self.extra = extra
        why = f" (needed for {purpose})" if purpose else ""
        super().__init__(
            f"The optional dependency '{package}' is not installed{why}. "
            # No package index serves eviseek: the install runs from a checkout.
            f"Install it from the eviseek checkout with: pip install -e '.[{extra}]'"
        )


class ModelError(EviseekError):
    """A model provider failed in a way retries did not fix (server down, bad reply)."""


class ModelConfigError(ModelError, ConfigError):
    """The provider refused the request for a reason retrying cannot fix (URL, key, model name)."""


class ScriptExhaustedError(ModelError):
    """A scripted model was asked for more replies than it was given."""


class EnvError(EviseekError):
    """An environment could not be built or driven (not a bad action: those become feedback)."""


class EnvArgumentError(EnvError, ValueError):
    """The arguments of an environment call are wrong (a reset's options or scene, its seed):
    the caller's mistake, which an env server answers with 400 rather than 500. Inside an
    evaluation it fails that episode only, like any :class:`EnvError`."""
