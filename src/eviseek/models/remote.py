"""The base of every model behind a server: its settings, and retries and the rate limit around
one abstract ``send``.

A remote provider has the same needs whatever its wire format: a server URL, a key, a timeout, a
retry policy (:mod:`eviseek.models.retry`) and a cap on requests in flight that a 429 cuts for
the whole process (:mod:`eviseek.models.ratelimit`). :class:`RemoteSettings` holds the first
five; :class:`RemoteModel` owns the call loop, so a provider writes only what is its own:

* :meth:`RemoteModel.send`: one attempt of one request, in the provider's wire format;
* :meth:`RemoteModel.failure_of` (optional): which of its exceptions are transient. The default
  reads :class:`StatusError` (an HTTP status the send got back), timeouts and connection errors;
  the ``openai/`` provider reads the openai client's exceptions;
* :meth:`RemoteModel.check_reply` (optional): a reply of the wrong shape, retried like a 5xx.

Registering a provider whose settings subclass :class:`RemoteSettings` makes it remote
(``--base-url``, ``--api-key-env`` and the timeout reach it, and ``eval`` checks the server with
one request before the first episode). ``examples/plugins/plain_chat.py`` is a whole second
provider built this way.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, model_validator

from eviseek.errors import ConfigError, ModelConfigError, SettingError
from eviseek.models.ratelimit import request_limit
from eviseek.models.retry import Failure, RetryBudget, RetryPolicy
from eviseek.models.settings import ProviderSettings

__all__ = ["REMOTE_FIELDS", "RETRY_FIELDS", "RemoteModel", "RemoteSettings", "StatusError"]

RETRY_FIELDS = tuple(f.name for f in dataclasses.fields(RetryPolicy))
"""Settings given flat (``--model-arg max_retries=3``) that belong to the embedded policy."""
REMOTE_FIELDS = ("base_url", "api_key", "timeout_s")
"""The settings the registry passes to a remote provider (``--base-url``, the key, a timeout)."""

R = TypeVar("R")
S = TypeVar("S", bound="RemoteSettings")


class RemoteSettings(ProviderSettings):
    """What every remote provider accepts; a provider's own settings subclass it."""

    base_url: str | None = None
    """The server's URL; the provider's default when unset."""
    api_key: str | None = Field(None, repr=False)
    """The key (never printed); read from ``--api-key-env``'s variable by the registry."""
    timeout_s: float = Field(120.0, gt=0)
    """Seconds per attempt."""
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    max_concurrency: int = Field(16, ge=1)
    """Requests in flight at once to this server, per process (a 429 cuts it for all)."""

    @model_validator(mode="before")
    @classmethod
    def _lift_retry(cls, data: Any) -> Any:
        """Flat retry settings (``max_retries=3``) go into ``retry``, over its defaults."""
        if not isinstance(data, dict) or not any(k in data for k in RETRY_FIELDS):
            return data
        data = dict(data)
        given = {k: data.pop(k) for k in RETRY_FIELDS if k in data}
        base = data.get("retry") or RetryPolicy()
        if isinstance(base, dict):
            base = RetryPolicy(**base)
        data["retry"] = dataclasses.replace(base, **given)
        return data

    def out_of_range(self) -> list[str]:
        """Names of retry settings out of range (the dataclass itself checks nothing)."""
        r = self.retry
        checks = {
            "max_retries": r.max_retries >= 0,
            "max_connect_retries": r.max_connect_retries >= 0,
            "backoff_base_s": r.backoff_base_s >= 0,
            "backoff_max_s": r.backoff_max_s >= 0,
            "retry_after_cap_s": r.retry_after_cap_s >= 0,
            "max_throttled_s": r.max_throttled_s >= 0,
        }
        return [name for name, ok in checks.items() if not ok]

    @classmethod
    def parse(cls: type[S], model_id: str, **kwargs: Any) -> S:
        """Settings from keyword arguments; :class:`ConfigError` in one line naming ``model_id``
        and what is wrong (unknown settings, or those out of range)."""
        try:
            settings = cls.model_validate(kwargs)
        except (ValidationError, TypeError) as exc:
            errors = exc.errors() if isinstance(exc, ValidationError) else []
            unknown = [str(e["loc"][-1]) for e in errors if e["type"] == "extra_forbidden"]
            if unknown:
                known = sorted([*cls.model_fields, *RETRY_FIELDS])
                raise ConfigError(
                    f"{model_id}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(known)}"
                ) from None
            raise out_of_range_error(model_id, [str(e["loc"][-1]) for e in errors] or [str(exc)]) from None
        bad = settings.out_of_range()
        if bad:
            raise out_of_range_error(model_id, bad)
        return settings


def out_of_range_error(model_id: str, names: list[str]) -> ConfigError:
    """The one-line error for settings out of range."""
    return ConfigError(
        f"{model_id}: out-of-range setting(s) {', '.join(names)}; timeouts and the pixel "
        "budget must be positive, retries and delays non-negative, jpeg_quality in 1..100"
    )


class StatusError(Exception):
    """An HTTP status other than 2xx that :meth:`RemoteModel.send` got back; the default
    :meth:`RemoteModel.failure_of` retries 408, 409, 429 and 5xx and refuses the rest."""

    def __init__(self, status: int, message: str = "", retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.retry_after = retry_after


class RemoteModel(ABC, Generic[R]):
    """A model behind a server: :meth:`call` sends a request with the retry budget and the
    adaptive rate limit; subclasses give :meth:`send` (and build requests in ``generate``)."""

    provider: ClassVar[str] = "remote"
    """The registry prefix (``openai`` for ``openai/<model>``): names the model and its errors."""
    logger: ClassVar[logging.Logger] = logging.getLogger("eviseek.models.remote")

    def __init__(self, model: str, settings: RemoteSettings, *, default_base_url: str | None = None) -> None:
        if not model:
            raise SettingError(f"{self.provider}/<model> needs a model name after '{self.provider}/'")
        url = (settings.base_url or default_base_url or "").rstrip("/")
        if urlsplit(url).scheme not in ("http", "https"):
            raise SettingError(
                f"base URL {url!r} must start with http:// or https:// (and usually end in /v1)"
            )
        self.name = f"{self.provider}/{model}"
        self.model = model
        self.base_url = url
        self.settings = settings
        self.timeout_s = settings.timeout_s
        self.max_concurrency = settings.max_concurrency
        self._api_key = settings.api_key

    def __repr__(self) -> str:  # the key stays out on purpose
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r})"

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry settings of this model (see :mod:`eviseek.models.retry`)."""
        return self.settings.retry

    def redact(self, text: str) -> str:
        """``text`` with the API key replaced by ``***`` (for logs, errors and replies)."""
        return text.replace(self._api_key, "***") if self._api_key else text

    def one_line(self, text: str, limit: int = 300) -> str:
        """``text`` redacted, on one line, cut to ``limit`` characters."""
        text = " ".join(self.redact(str(text)).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    @abstractmethod
    async def send(self, request: R, timeout: float) -> Any:
        """One attempt of ``request``: the server's reply, or an exception :meth:`failure_of` reads."""

    def check_reply(self, reply: Any) -> Failure | None:
        """A transient :class:`Failure` for a reply of the wrong shape (default: every reply is fine)."""
        return None

    def failure_of(self, exc: Exception, request: R, notes: list[str]) -> Failure | None:
        """What ``exc`` (raised by :meth:`send`) means: a transient :class:`Failure` to retry,
        ``None`` to send again at once without counting (the request was corrected), or an
        exception raised here (a refusal retrying cannot fix). Unknown exceptions propagate."""
        if isinstance(exc, StatusError):
            message = self.one_line(exc.message)
            if exc.status in (408, 409, 429) or exc.status >= 500:
                return Failure(f"HTTP {exc.status}: {message}", exc.retry_after, throttled=exc.status == 429)
            raise ModelConfigError(
                f"{self.base_url} refused the request for {self.name} (HTTP {exc.status}): {message}; "
                "check --base-url, the key and the model name"
            )
        if isinstance(exc, TimeoutError):
            return Failure("no answer in time (timeout)")
        if isinstance(exc, ConnectionRefusedError):
            return Failure("connection refused", refused=True)
        if isinstance(exc, OSError):
            return Failure(f"connection dropped ({type(exc).__name__}: {self.one_line(str(exc), 120)})")
        raise exc

    async def call(self, request: R, *, timeout: float, notes: list[str]) -> Any:
        """Send ``request`` until a reply passes :meth:`check_reply`, under the retry budget and
        the server's shared rate limit; raises :class:`~eviseek.errors.ModelError` when spent.

        A 429 halves the requests in flight to this server for the whole process and pauses
        them (``Retry-After``, or a backoff), and does not count as a retry; other transient
        failures wait out an exponential backoff. ``notes`` gets a line when retries were needed.
        """
        limit = request_limit(self.base_url, self.max_concurrency)
        budget = RetryBudget(self.retry_policy, server=self.base_url, model=self.model)
        while True:
            ticket = await limit.acquire()
            failure: Failure | None = None
            try:
                reply = await self.send(request, timeout)
            except Exception as exc:
                try:
                    failure = self.failure_of(exc, request, notes)
                finally:
                    throttled = failure is not None and failure.throttled
                    pause = (
                        self.retry_policy.backoff(0, failure.retry_after) if failure and throttled else 0.0
                    )
                    # Shielded: a cancelled call must still give its slot back.
                    await asyncio.shield(limit.release(ticket, throttled=throttled, pause_s=pause))
                if failure is None:
                    continue
            except BaseException:  # cancelled (a timeout of the episode), Ctrl-C
                await asyncio.shield(limit.release(ticket))
                raise
            else:
                await limit.release(ticket)
                failure = self.check_reply(reply)
                if failure is None:
                    if budget.failures:
                        n = len(budget.failures)
                        notes.append(f"succeeded after {n} retr{'y' if n == 1 else 'ies'}")
                    return reply
            budget.record(failure)
            if failure.throttled:
                # The shared limit has paused this server and cut the requests in flight; waiting
                # does not use up retries, only the throttle budget.
                budget.check_throttle()
                waited = time.monotonic()
                await limit.wait_pause()
                budget.add_throttled(time.monotonic() - waited + 1e-3)
                continue
            delay = budget.next_delay(failure)  # raises once this failure's retries are spent
            self.logger.warning(
                "%s: %s; retrying in %.2fs (retry %d)",
                self.name,
                self.one_line(failure.reason, 200),
                delay,
                budget.attempts_retried,
            )
            await asyncio.sleep(delay)
