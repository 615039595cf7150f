"""The retry policy of remote model calls: which failures are retried, how long to wait, when to
give up.

The ``openai`` client's own retries are switched off, so this policy is the only one and can be
tested. A transient failure (429, 408/409, 5xx, a timeout, a dropped connection, a body that is
not valid JSON) is retried with exponential backoff and jitter, honouring ``Retry-After`` up to a
cap. A refused connection has its own, shorter budget: a server that is down rarely comes back
within a backoff. A 429 is not counted as a retry; it is waited out under the shared rate limit
(:mod:`eviseek.models.ratelimit`) until a time budget runs out.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from eviseek.errors import ModelError


@dataclass
class Failure:
    """A transient failure of one attempt: why, and how long the server asked us to wait."""

    reason: str
    retry_after: float | None = None
    refused: bool = False
    """The connection was refused (the server is not listening)."""
    throttled: bool = False
    """A 429: waited out with the shared limit, not counted as a retry."""


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry and how long to wait (see the module docstring)."""

    max_retries: int = 5
    max_connect_retries: int = 2
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    retry_after_cap_s: float = 60.0
    max_throttled_s: float = 900.0

    def backoff(self, retry: int, retry_after: float | None) -> float:
        """The wait before retry number ``retry`` (from 0): ``Retry-After`` up to the cap when
        the server sent one, else ``min(max, base * 2**retry)`` times a factor in [0.5, 1]."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.retry_after_cap_s)
        delay = min(self.backoff_max_s, self.backoff_base_s * (2**retry))
        return delay * (0.5 + random.random() / 2)


@dataclass
class RetryBudget:
    """One call's retries under a :class:`RetryPolicy`; raises :class:`ModelError` when spent.

    ``server`` and ``model`` only word the errors.
    """

    policy: RetryPolicy
    server: str
    model: str
    failures: list[str] = field(default_factory=list)
    retries: int = 0
    connect_retries: int = 0
    throttled_s: float = 0.0

    def record(self, failure: Failure) -> None:
        """Count a failed attempt."""
        self.failures.append(failure.reason)

    def check_throttle(self) -> None:
        """Raise once 429s have held this call up for longer than the policy allows."""
        if self.throttled_s >= self.policy.max_throttled_s:
            raise ModelError(
                f"the server at {self.server} kept answering 429 (rate limited) for "
                f"{self.throttled_s:.0f}s; lower --concurrency or raise the server's rate limit"
            )

    def add_throttled(self, seconds: float) -> None:
        """Charge time spent waiting out a 429 to the throttle budget."""
        self.throttled_s += seconds

    def next_delay(self, failure: Failure) -> float:
        """The wait before retrying after ``failure``; raises when its budget is spent."""
        if failure.refused:
            if self.connect_retries >= self.policy.max_connect_retries:
                raise ModelError(
                    f"the server at {self.server} is unreachable (connection refused): check that "
                    "it is running and that --base-url (or OPENAI_BASE_URL) points at it"
                )
            retry_no = self.connect_retries
            self.connect_retries += 1
        else:
            if self.retries >= self.policy.max_retries:
                raise ModelError(
                    f"the server at {self.server} kept failing for model {self.model!r}: "
                    f"{len(self.failures)} attempt(s), last: {failure.reason}"
                )
            retry_no = self.retries
            self.retries += 1
        return self.policy.backoff(retry_no, failure.retry_after)

    @property
    def attempts_retried(self) -> int:
        """Retries so far, connection retries included."""
        return self.retries + self.connect_retries


def parse_retry_after(headers: Any) -> float | None:
    """Seconds a response's ``Retry-After-Ms`` or ``Retry-After`` (seconds or an HTTP date) asks
    to wait, or ``None``."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes, outermost first."""
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def connection_refused(exc: BaseException) -> bool:
    """Whether no connection could be opened at all (httpx's ``ConnectError`` somewhere in the
    chain, or the OS's refusal)."""
    return any(
        isinstance(e, ConnectionRefusedError) or type(e).__name__ == "ConnectError"
        for e in exception_chain(exc)
    )


def root_cause(exc: BaseException) -> str:
    """``Type: message`` of the innermost cause."""
    root = exception_chain(exc)[-1]
    return f"{type(root).__name__}: {root}"
