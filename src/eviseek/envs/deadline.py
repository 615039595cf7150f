"""A deadline for the environment call running on this thread, checked where the work loops.

Python cannot stop a thread from outside, so an env server whose call ran past its timeout
answered 504 and let the work go on, for as long as it took (a client-made scene cost 20 s of
CPU after the answer). Instead the server runs each call under :func:`running`, and the loops
that can take long (building a scene object by object, stepping the physics) call
:func:`check`, which raises :class:`DeadlineExceeded` once the call's time is up. Outside a
server call there is no deadline and :func:`check` costs one attribute lookup.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from eviseek.errors import EnvError

_state = threading.local()


class DeadlineExceeded(EnvError):
    """The environment call ran past the deadline it was given, and was stopped."""


@contextlib.contextmanager
def running(seconds: float) -> Iterator[None]:
    """Run the body with a deadline ``seconds`` from now on this thread (nested: the earlier wins)."""
    previous = getattr(_state, "deadline", None)
    deadline = time.monotonic() + seconds
    _state.deadline = deadline if previous is None else min(previous, deadline)
    try:
        yield
    finally:
        _state.deadline = previous


def check() -> None:
    """Raise :class:`DeadlineExceeded` when this thread's call is past its deadline."""
    deadline = getattr(_state, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise DeadlineExceeded("the environment call ran past its deadline and was stopped")
