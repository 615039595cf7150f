"""Requests in flight to one model server: a cap, cut when the server says "too many" (429).

Each base URL gets one :class:`AdaptiveLimit` per process (and event loop). It lets at most
``limit`` requests run at once. A 429 halves the limit (down to 1) and pauses *every* request to
that server for the ``Retry-After`` the server asked for (or a short backoff), so a rate-limit
storm slows the whole run down instead of each episode retrying on its own until its retries
run out. Every success raises the limit by ``1/limit`` (about one more request per round of
successes) back up to the configured maximum: TCP's additive-increase, multiplicative-decrease.

A burst of 429s answering requests sent *before* the last cut does not cut again: they report
the load that caused the cut, not new load.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger("eviseek.models.openai")


@dataclass
class Ticket:
    """One admitted request; ``sent_at`` tells whether a 429 it gets is news."""

    sent_at: float


class AdaptiveLimit:
    """An AIMD cap on concurrent requests to one server (see the module docstring)."""

    def __init__(self, max_limit: int, *, min_limit: int = 1) -> None:
        if max_limit < 1 or not 1 <= min_limit <= max_limit:
            raise ValueError(f"need 1 <= min_limit <= max_limit, got {min_limit} and {max_limit}")
        self.max_limit = max_limit
        self.min_limit = min_limit
        self.limit = float(max_limit)
        self.in_flight = 0
        self.paused_until = 0.0
        self.last_cut = -1.0
        self.cuts = 0
        """How many times a 429 cut the limit (for logs and tests)."""
        self.lowest = float(max_limit)
        """The lowest the limit went."""
        self._changed = asyncio.Condition()

    @property
    def allowed(self) -> int:
        """Requests allowed in flight right now."""
        return max(self.min_limit, int(self.limit))

    async def acquire(self) -> Ticket:
        """Wait for a free slot (and for the end of any pause); the ticket goes to :meth:`release`."""
        async with self._changed:
            while True:
                pause = self.paused_until - time.monotonic()
                if pause <= 0 and self.in_flight < self.allowed:
                    break
                if pause > 0:
                    # Woken early by a change, or at the end of the pause, whichever comes first.
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), pause)
                else:
                    await self._changed.wait()
            self.in_flight += 1
            return Ticket(sent_at=time.monotonic())

    async def wait_pause(self) -> None:
        """Return when no pause is in force (without taking a slot)."""
        async with self._changed:
            while (pause := self.paused_until - time.monotonic()) > 0:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), pause)

    async def release(self, ticket: Ticket, *, throttled: bool = False, pause_s: float = 0.0) -> None:
        """Free the slot; ``throttled`` (a 429) cuts the limit and pauses the server ``pause_s``."""
        async with self._changed:
            self.in_flight -= 1
            now = time.monotonic()
            if throttled:
                if ticket.sent_at >= self.last_cut:
                    self.limit = max(float(self.min_limit), self.limit / 2)
                    self.lowest = min(self.lowest, self.limit)
                    self.last_cut = now
                    self.cuts += 1
                self.paused_until = max(self.paused_until, now + pause_s)
            else:
                self.limit = min(float(self.max_limit), self.limit + 1.0 / self.limit)
            self._changed.notify_all()

    def slot(self, throttle_pause: Callable[[BaseException], float | None]) -> Slot:
        """Hold a slot around one request (``async with``). An exception for which
        ``throttle_pause`` returns a number of seconds (a 429) counts as a throttle; it is
        re-raised either way."""
        return Slot(self, throttle_pause)


class Slot:
    """What :meth:`AdaptiveLimit.slot` returns. A class rather than a generator-based context
    manager: every model request enters one, and the generator's frames cost the event loop's
    thread a few microseconds more each time."""

    __slots__ = ("_limit", "_throttle_pause", "_ticket")

    def __init__(self, limit: AdaptiveLimit, throttle_pause: Callable[[BaseException], float | None]) -> None:
        self._limit = limit
        self._throttle_pause = throttle_pause
        self._ticket: Ticket | None = None

    async def __aenter__(self) -> Ticket:
        self._ticket = await self._limit.acquire()
        return self._ticket

    async def __aexit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        ticket = self._ticket
        assert ticket is not None
        if exc is None:
            await self._limit.release(ticket)
            return
        pause = self._throttle_pause(exc)
        await asyncio.shield(self._limit.release(ticket, throttled=pause is not None, pause_s=pause or 0.0))


# One limit per (event loop, base URL): asyncio primitives belong to one loop, and tests
# (or a CLI calling asyncio.run twice) run several loops in one process.
_LIMITS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AdaptiveLimit]] = (
    weakref.WeakKeyDictionary()
)


_WARNED_LIMITS: set[tuple[str, int]] = set()


def request_limit(base_url: str, limit: int) -> AdaptiveLimit:
    """The process-wide :class:`AdaptiveLimit` for ``base_url``; the first model to ask sets its
    maximum. A 429 from that server cuts it for every model sharing the server."""
    loop = asyncio.get_running_loop()
    per_loop = _LIMITS.setdefault(loop, {})
    if base_url not in per_loop:
        per_loop[base_url] = AdaptiveLimit(limit)
    existing = per_loop[base_url]
    if existing.max_limit != limit and (base_url, limit) not in _WARNED_LIMITS:
        _WARNED_LIMITS.add((base_url, limit))
        logger.warning(
            "concurrency limit %d for %s ignored: another model already set it to %d in this process",
            limit,
            base_url,
            existing.max_limit,
        )
    return existing
