"""Environment worker processes: the pool :class:`ProcessEnvProvider` and the proxies it leases.

Each worker is a ``python -m eviseek.eval._envworker`` process serving :func:`worker_main`; one
worker hosts several environments (one per leased episode) and serves their calls in order. A
worker that dies fails only the calls in flight on it, with an :class:`~eviseek.errors.EnvError`,
and the pool starts a fresh one for the next lease; a call that runs past ``call_timeout_s`` gets
its worker killed and restarted the same way. The providers' protocol and the in-process
provider are in :mod:`eviseek.eval.envpool`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import pickle
import socket
import struct
import threading
import traceback
from collections.abc import Sequence
from typing import Any

from eviseek.envs.base import Env
from eviseek.errors import ConfigError, EnvError, PluginError
from eviseek.eval.envpool import (
    LeasedEnv,
    close_quietly,
    import_plugins,
    question_env_id,
    strip_privileged,
    supports_support,
)
from eviseek.types import Action, ActionSpec, Observation, Question, StepResult

_READY = -1
"""Request id of the message a worker sends once it has imported everything."""
STARTUP_TIMEOUT_S = 120.0

# Calls a worker forwards; anything else is refused so a proxy cannot run arbitrary methods.
_FORWARDED = ("reset", "step", "legal_actions", "visual_support")


# --------------------------------------------------------------------------------------------
# Worker processes


def _portable_exception(exc: BaseException) -> BaseException:
    """``exc`` itself if it pickles, else an EnvError carrying its type, message and traceback."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return EnvError(f"{type(exc).__name__}: {exc}\n{tb}")


def encode_frames(value: Any) -> Any:
    """PNG-encode the frames an environment call returns, here in the worker process, and send
    each frame as that PNG alone.

    Every frame that reaches an episode is saved as PNG with its trajectory, and sent as PNG to
    a model at its own size (the usual case under the one-megapixel cap), so its bytes are needed
    anyway: encoding them where the frame is made moves that work off the runner's event loop
    onto the worker's CPU. The pixels stay behind (``Image.release_pixels``): the runner decodes
    them only where something reads them (a pixel-reading policy: 0.6 ms a 320x240 frame), and a
    frame crosses the pipe as about 8 KB rather than 230 KB. At 256 episodes in flight
    (``benchmarks/inflight_scale.py --waves 2 --timeline``) that cut the memory per in-flight
    episode from 2.2 to 0.4 MB, and the time until a wave's episodes have their first frames."""
    for item in value if isinstance(value, tuple) else (value,):
        obs = item.observation if isinstance(item, StepResult) else item
        if isinstance(obs, Observation) and obs.image.loaded:
            obs.image.release_pixels()
    return value


def worker_main(conn: Any, plugins: list[str], env_kwargs: dict[str, Any] | None = None) -> None:
    """Serve environment calls from the parent until told to stop or the connection closes;
    ``env_kwargs`` go to every environment built (``width``/``height`` of ``--image-size``)."""
    from eviseek.envs.registry import make

    try:
        import_plugins(plugins)
    except PluginError as exc:
        # Every episode would fail the same way: a bad plugin, which the CLI shows as one line.
        conn.send((_READY, False, PluginError(f"an environment worker could not import the plugins: {exc}")))
        return
    except BaseException as exc:
        # Anything else is a bug worth its traceback; it still stops the run.
        tb = traceback.format_exc()
        conn.send(
            (_READY, False, ConfigError(f"an environment worker could not import the plugins: {exc!r}\n{tb}"))
        )
        return
    # Start-up (imports) can be slow on a busy machine; it must not count against call timeouts.
    conn.send((_READY, True, os.getpid()))
    envs: dict[int, Env] = {}
    idle: dict[str, list[Env]] = {}
    while True:
        try:
            req_id, op, handle, payload = conn.recv()
        except (EOFError, OSError):
            break
        try:
            result: Any = None
            if op in ("call", "open_call"):
                env_id, name, args, kwargs = payload
                if name not in _FORWARDED:
                    raise EnvError(f"env worker refuses to call {name!r}")
                if op == "open_call":
                    # The first call of a lease opens it: one round trip fewer per episode.
                    pool = idle.get(env_id)
                    envs[handle] = pool.pop() if pool else make(env_id, **(env_kwargs or {}))
                value = encode_frames(strip_privileged(getattr(envs[handle], name)(*args, **kwargs)))
                result = (supports_support(envs[handle]), value) if op == "open_call" else value
            elif op == "release":
                env = envs.pop(handle, None)
                if env is None:
                    pass  # the episode never used its environment
                elif payload:  # healthy: keep for the next episode of this env id
                    idle.setdefault(env.env_id, []).append(env)
                else:
                    close_quietly(env)
            elif op == "stop":
                for env in [*envs.values(), *(e for pool in idle.values() for e in pool)]:
                    close_quietly(env)
                conn.send((req_id, True, None))
                break
            else:
                raise EnvError(f"unknown env worker operation {op!r}")
            conn.send((req_id, True, result))
        except BaseException as exc:
            if hasattr(exc, "add_note"):  # Python 3.11+: keep where it happened for the parent's log
                exc.add_note("raised in environment worker process:\n" + traceback.format_exc())
            conn.send((req_id, False, _portable_exception(exc)))


def receive_message(sock: socket.socket) -> Any:
    """The next object a worker sent through its ``multiprocessing.connection.Connection``
    (the same framing: a 4-byte big-endian size, or -1 and an 8-byte size, then the pickle).

    ``Connection.recv`` reads a frame of a few hundred KB in many ``read`` calls (as much as the
    socket's buffer holds each time), and each one releases the GIL and takes it back, which
    the runner's event loop then waits for; it also copies the chunks once more. Here each part
    is one ``recv_into`` that waits for all of it (``MSG_WAITALL``) straight into its buffer.
    """
    (size,) = struct.unpack("!i", _receive_exactly(sock, 4))
    if size == -1:
        (size,) = struct.unpack("!Q", _receive_exactly(sock, 8))
    return pickle.loads(_receive_exactly(sock, size))


def _receive_exactly(sock: socket.socket, size: int) -> bytearray:
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got, socket.MSG_WAITALL)
        if n == 0:
            if got == 0:
                raise EOFError
            raise OSError("got end of file during message")
        got += n
    return buf


class _Worker:
    """The parent's side of one worker process: a socket, a reader thread, pending calls.

    Workers are started as ``python -m eviseek.eval._envworker`` rather than through
    multiprocessing's spawn, so a user's script is never re-imported in them (spawn re-runs an
    unguarded ``__main__``), and they can be killed cleanly.
    """

    def __init__(
        self,
        index: int,
        plugins: list[str],
        loop: asyncio.AbstractEventLoop,
        env_kwargs: dict[str, Any] | None = None,
    ) -> None:
        import json
        import subprocess
        import sys
        from multiprocessing.connection import Connection

        self.index = index
        self.loop = loop
        parent, child = socket.socketpair()
        setup = json.dumps(
            {"fd": child.fileno(), "plugins": plugins, "sys_path": sys.path, "env_kwargs": env_kwargs or {}}
        )
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "eviseek.eval._envworker", setup],
                pass_fds=[child.fileno()],
                stdin=subprocess.DEVNULL,
                # Simulators chatter on stdout (pybullet prints its build time); errors use stderr.
                stdout=subprocess.DEVNULL,
            )
        finally:
            child.close()
        self.conn = Connection(parent.detach())
        self.ready: asyncio.Future[Any] = loop.create_future()
        self.ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.active: dict[int, str] = {}  # req_id -> operation, for messages
        self.leases = 0
        self.alive = True
        self._ids = itertools.count()
        self._send_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"eviseek-env-reader-{index}")
        self._reader.start()

    def _read(self) -> None:
        try:
            # The connection's socket, read a whole message at a time (see receive_message); the
            # Connection keeps owning the descriptor, so this object lets go of it, never closes it.
            sock: socket.socket | None = socket.socket(fileno=self.conn.fileno())
        except OSError:  # closed already
            sock = None
        try:
            while sock is not None and not self.conn.closed:
                try:
                    msg = receive_message(sock)
                except (EOFError, OSError):
                    break
                try:
                    self.loop.call_soon_threadsafe(self._resolve, msg)
                except RuntimeError:  # the loop closed: nobody is waiting any more
                    return
        finally:
            if sock is not None:
                sock.detach()
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._died)

    def _resolve(self, msg: tuple[int, bool, Any]) -> None:
        req_id, ok, value = msg
        if req_id == _READY:
            if self.ready.done():
                return
            if ok:
                self.ready.set_result(value)
            else:
                self.ready.set_exception(value)
            return
        fut = self.pending.pop(req_id, None)
        self.active.pop(req_id, None)
        if fut is None or fut.done():
            return
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def _died(self) -> None:
        self.alive = False
        try:
            code: int | None = self.process.wait(timeout=1.0)
        except Exception:
            code = None
        if not self.ready.done():
            self.ready.set_exception(
                EnvError(f"environment worker {self.index} exited with code {code} while starting")
            )
        for req_id, fut in list(self.pending.items()):
            if not fut.done():
                op = self.active.get(req_id, "call")
                fut.set_exception(
                    EnvError(
                        f"environment worker {self.index} (pid {self.process.pid}) exited with "
                        f"code {code} during {op}"
                    )
                )
        self.pending.clear()
        self.active.clear()

    async def request(self, op: str, handle: int, payload: Any, label: str, timeout: float | None) -> Any:
        if not self.ready.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.ready), STARTUP_TIMEOUT_S)
            except asyncio.TimeoutError:
                self.kill()
                raise EnvError(
                    f"environment worker {self.index} did not start within {STARTUP_TIMEOUT_S:g}s"
                ) from None
        self.ready.result()  # re-raises a start-up failure (e.g. a plugin that cannot be imported)
        if not self.alive:
            raise EnvError(f"environment worker {self.index} is no longer running")
        req_id = next(self._ids)
        fut: asyncio.Future[Any] = self.loop.create_future()
        self.pending[req_id] = fut
        self.active[req_id] = label
        try:
            with self._send_lock:
                self.conn.send((req_id, op, handle, payload))
        except (OSError, EOFError, pickle.PicklingError) as exc:
            self.pending.pop(req_id, None)
            self.active.pop(req_id, None)
            raise EnvError(f"could not send {label} to environment worker {self.index}: {exc}") from exc
        # The reply wakes this episode straight from the future: with ``wait_for(shield(...))``
        # it took three more rounds of the event loop (the shield's callback, wait_for's, then
        # the task), and with a hundred episodes in flight each round means running every
        # other ready episode first.
        timer = None
        if timeout is not None:
            timer = self.loop.call_later(timeout, self._expire, req_id, fut, label, timeout)
        try:
            return await fut
        finally:
            if timer is not None:
                timer.cancel()
            # The outcome counts as retrieved even when this episode was cancelled between the
            # reply and reading it; a call left before its reply (its future cancelled with the
            # episode, or the coroutine closed) drops the reply when it comes. Done here rather
            # than in a done-callback, which would cost every call one more event-loop round.
            if not fut.done():
                self.pending.pop(req_id, None)
                self.active.pop(req_id, None)
            elif not fut.cancelled():
                fut.exception()

    def _expire(self, req_id: int, fut: asyncio.Future[Any], label: str, timeout: float) -> None:
        """A call ran past its timeout: fail it and restart the worker (a simulator call that
        never returns would block every episode on this worker)."""
        if fut.done():
            return
        self.pending.pop(req_id, None)
        self.active.pop(req_id, None)
        fut.set_exception(
            EnvError(f"{label} took longer than {timeout:g}s; environment worker {self.index} was restarted")
        )
        self.kill()
        # The next lease starts a fresh worker at once; the reader thread still fails the other
        # calls in flight on this one when it sees the connection close.
        self.alive = False

    def send_nowait(self, op: str, handle: int, payload: Any) -> None:
        """Send a request whose reply nobody waits for (errors are ignored)."""
        req_id = next(self._ids)
        fut: asyncio.Future[Any] = self.loop.create_future()
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.pending[req_id] = fut
        self.active[req_id] = op
        try:
            with self._send_lock:
                self.conn.send((req_id, op, handle, payload))
        except (OSError, EOFError):
            self.pending.pop(req_id, None)
            self.active.pop(req_id, None)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()

    async def stop(self) -> None:
        if self.alive:
            try:
                await self.request("stop", -1, None, "stop", timeout=10.0)
            except EnvError:
                self.kill()
        try:
            await asyncio.to_thread(self.process.wait, 5.0)
        except Exception:
            self.kill()
            await asyncio.to_thread(self.process.wait)
        self.conn.close()


class ProcessLease:
    """The :class:`~eviseek.envs.AsyncEnv` proxy of an environment hosted by a worker process.

    The environment is made (or reused) in the worker by the lease's first call.
    """

    def __init__(self, worker: _Worker, handle: int, env_id: str, timeout: float | None):
        self.worker = worker
        self.handle = handle
        self.env_id = env_id
        self.supports_visual_support = False
        """Known after the first call (an episode that never reset its env has nothing to grade)."""
        self.opened = False
        self._timeout = timeout
        # Calls of one episode stay ordered even if an agent fires two at once.
        self._lock = asyncio.Lock()

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        async with self._lock:
            label = f"{self.env_id}.{name}"
            payload = (self.env_id, name, args, kwargs)
            if self.opened:
                return await self.worker.request("call", self.handle, payload, label, self._timeout)
            supports, value = await self.worker.request(
                "open_call", self.handle, payload, label, self._timeout
            )
            self.opened = True
            self.supports_visual_support = bool(supports)
            return value

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Reset in the worker."""
        result: tuple[Observation, dict[str, Any]] = await self._call("reset", seed=seed, options=options)
        return result

    async def step(self, action: Action) -> StepResult:
        """Step in the worker."""
        result: StepResult = await self._call("step", action)
        return result

    async def legal_actions(self) -> list[ActionSpec]:
        """Legal actions, from the worker."""
        result: list[ActionSpec] = await self._call("legal_actions")
        return result

    async def visual_support(self, frame_ids: list[int]) -> float:
        """Grade frames in the worker (privileged; harness only)."""
        result: float = await self._call("visual_support", list(frame_ids))
        return result

    async def close(self) -> None:
        """Agents may call close; the pool decides the environment's fate on release."""
        return None


def default_env_workers() -> int:
    """One simulator process per CPU this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class ProcessEnvProvider:
    """A pool of environment worker processes; each lease goes to the least-loaded worker."""

    def __init__(
        self,
        n_workers: int | None = None,
        *,
        plugins: Sequence[str] = (),
        call_timeout_s: float | None = None,
        env_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """``env_kwargs``: keyword arguments every environment is built with (the image size)."""
        self.n_workers = n_workers or default_env_workers()
        self.env_kwargs = dict(env_kwargs or {})
        if self.n_workers < 1:
            raise ConfigError("an environment pool needs at least one worker process")
        self.plugins = list(plugins)
        self.call_timeout_s = call_timeout_s
        self._workers: list[_Worker | None] = [None] * self.n_workers
        self._handles = itertools.count()
        self.restarts = 0

    def _worker(self) -> _Worker:
        loop = asyncio.get_running_loop()
        for i, w in enumerate(self._workers):
            if w is None or not w.alive:
                if w is not None:
                    self.restarts += 1
                    w.conn.close()
                self._workers[i] = _Worker(i, self.plugins, loop, self.env_kwargs)
        live = [w for w in self._workers if w is not None]
        return min(live, key=lambda w: w.leases)

    async def start(self) -> None:
        """Start every worker and wait until all have imported what they need (in parallel)."""
        self._worker()
        for w in self._workers:
            assert w is not None
            if not w.ready.done():
                try:
                    await asyncio.wait_for(asyncio.shield(w.ready), STARTUP_TIMEOUT_S)
                except asyncio.TimeoutError:
                    w.kill()
                    raise EnvError(
                        f"environment worker {w.index} did not start within {STARTUP_TIMEOUT_S:g}s"
                    ) from None
            w.ready.result()

    async def lease(self, question: Question) -> LeasedEnv:
        """A proxy bound to the least-loaded worker (the environment opens on its first call)."""
        env_id = question_env_id(question)
        worker = self._worker()
        worker.leases += 1
        return ProcessLease(worker, next(self._handles), env_id, self.call_timeout_s)

    async def release(self, env: LeasedEnv, *, healthy: bool) -> None:
        """Hand the environment back to its worker (closed there when unhealthy).

        Nothing waits for the reply: the worker handles requests in order, so the next lease
        on it sees the environment back in its idle pool.
        """
        assert isinstance(env, ProcessLease)
        worker = env.worker
        worker.leases -= 1
        if worker.alive and env.opened:
            worker.send_nowait("release", env.handle, healthy)

    async def close(self) -> None:
        """Stop every worker process."""
        await asyncio.gather(*(w.stop() for w in self._workers if w is not None))
        self._workers = [None] * self.n_workers
