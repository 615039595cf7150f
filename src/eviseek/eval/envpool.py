"""Where environments live during an evaluation: in worker processes or in threads.

Simulators are CPU-bound and not thread-safe, while agents spend most of their time waiting on
model calls. So the runner keeps the simulators in a small pool of worker processes sized to
the machine, and each episode talks to its environment through an :class:`~eviseek.envs.AsyncEnv`
proxy that forwards ``reset``, ``step``, ``legal_actions`` and ``visual_support`` to the worker
that hosts it. One worker hosts several environments (one per leased episode) and serves their
calls in order; many episodes overlap their model calls on top of a few simulator processes.

For pure-Python environments :class:`ThreadEnvProvider` keeps them in the runner's process
(each call in a thread). The worker processes and their pool are in :mod:`eviseek.eval.envprocess`
(re-exported here).

A worker that dies (a simulator crash) fails only the calls in flight on it, with an
:class:`~eviseek.errors.EnvError`; the pool starts a fresh worker for the next lease. A call that
runs past ``call_timeout_s`` gets its worker killed and restarted the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from eviseek.envs.base import AsyncEnv, Env, ThreadedEnv
from eviseek.errors import ConfigError, EviseekError, PluginError
from eviseek.types import Observation, Question, StepResult


class LeasedEnv(AsyncEnv, Protocol):
    """An environment leased to one episode, with the privileged grading call of the harness."""

    supports_visual_support: bool

    async def visual_support(self, frame_ids: list[int]) -> float:
        """Forwarded :meth:`~eviseek.envs.SupportGradingEnv.visual_support`."""
        ...


class EnvProvider(Protocol):
    """Hands out environments for episodes and takes them back."""

    async def start(self) -> None:
        """Get ready before the first lease (start worker processes)."""
        ...

    async def lease(self, question: Question) -> LeasedEnv:
        """An environment able to host ``question`` (the agent resets it)."""
        ...

    async def release(self, env: LeasedEnv, *, healthy: bool) -> None:
        """Return an environment; an unhealthy one (timed-out or failed episode) is closed."""
        ...

    async def close(self) -> None:
        """Close every environment and stop any worker."""
        ...


def question_env_id(question: Question) -> str:
    """The registered environment id a question needs."""
    if not question.env_id:
        raise ConfigError(
            f"question {question.id!r} names no env_id, so no environment can host it; "
            "set Question.env_id (e.g. eviseek/Tabletop-v0) in the dataset"
        )
    return question.env_id


def supports_support(env: object) -> bool:
    """Whether ``env`` implements :class:`~eviseek.envs.SupportGradingEnv` (a proxy such as
    :class:`~eviseek.envs.remote.RemoteEnv` says so in ``supports_visual_support``)."""
    declared = getattr(env, "supports_visual_support", None)
    if declared is not None:
        return bool(declared)
    return callable(getattr(env, "visual_support", None))


def import_plugins(plugins: Sequence[str]) -> None:
    """Import plugin modules (dotted names or ``.py`` files) that register envs, agents or models.

    A plugin that cannot be imported (missing, a syntax error, a package it needs absent, an
    exception or a ``sys.exit`` while it runs) raises :class:`PluginError` naming the plugin and
    the cause in one line: it is a bad value given to ``--plugin``, not a crash of eviseek.
    """
    import importlib
    import importlib.util
    import sys

    for plugin in plugins:
        if plugin.endswith(".py"):
            path = os.path.abspath(plugin)
            if not os.path.isfile(path):
                raise PluginError(f"plugin file {plugin} does not exist (give a .py file or a module)")
            name = "eviseek_plugin_" + os.path.splitext(os.path.basename(path))[0]
            if name in sys.modules:
                continue
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise PluginError(f"cannot import plugin file {plugin}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                with _plugin_failures(plugin):
                    spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
        else:
            with _plugin_failures(plugin):
                importlib.import_module(plugin)


@contextlib.contextmanager
def _plugin_failures(plugin: str) -> Iterator[None]:
    """What importing ``plugin`` raises, as one :class:`PluginError` (Ctrl-C passes through).

    ``SystemExit`` is caught too: a plugin that calls ``sys.exit(0)`` on import would otherwise
    end the command with success and nothing run."""
    try:
        yield
    except KeyboardInterrupt:
        raise
    except PluginError:
        raise
    except EviseekError as exc:  # its message already says what to fix (a registration refused)
        raise PluginError(f"plugin {plugin}: {exc}") from None
    except SyntaxError as exc:
        where = f" ({exc.filename}, line {exc.lineno})" if exc.lineno else ""
        raise PluginError(f"plugin {plugin} has a syntax error{where}: {exc.msg}") from None
    except ModuleNotFoundError as exc:
        missing = exc.name or str(exc)
        if missing == plugin:
            raise PluginError(
                f"plugin module {plugin!r} cannot be imported: no module of that name "
                "(give an installed module or a .py file)"
            ) from None
        raise PluginError(f"plugin {plugin} needs the package {missing!r}, which is not installed") from None
    except SystemExit as exc:
        raise PluginError(f"plugin {plugin} called sys.exit({exc.code!r}) while being imported") from None
    except BaseException as exc:
        why = f"{type(exc).__name__}: {exc}"
        raise PluginError(f"plugin {plugin} failed while being imported ({why})") from None


def import_run_plugins(plugins: Sequence[str]) -> list[str]:
    """Import the plugins a saved run was made with, so that their registrations (a plugin
    benchmark's scorer, taxonomy and report sections) apply when the run is scored or reported
    again. A plugin that cannot be imported any more is skipped: the line returned for it says
    so, and the run is read with what is registered."""
    problems = []
    for plugin in plugins:
        try:
            import_plugins([plugin])
        except (ConfigError, ImportError, OSError) as exc:
            problems.append(
                f"plugin {plugin} of the run was not imported ({exc}); its registrations do not apply"
            )
    return problems


def strip_privileged(value: Any) -> Any:
    """Drop depth and segmentation before an observation crosses to the agent's process.

    Agents must never see them, and they are the bulk of an observation's bytes. Copies are
    stripped, not the originals: an environment may keep its observations for grading.
    """

    def strip(obs: Observation) -> Observation:
        if obs.depth is None and obs.segmentation is None:
            return obs
        return obs.model_copy(update={"depth": None, "segmentation": None})

    if isinstance(value, StepResult):
        return value.model_copy(update={"observation": strip(value.observation)})
    if isinstance(value, tuple) and value and isinstance(value[0], Observation):
        return (strip(value[0]), *value[1:])
    return value


# --------------------------------------------------------------------------------------------
# In-process environments


class ThreadLease(ThreadedEnv):
    """An in-process environment driven from worker threads."""

    def __init__(self, env: Env) -> None:
        super().__init__(env)
        self.supports_visual_support = supports_support(env)

    async def visual_support(self, frame_ids: list[int]) -> float:
        """Grade frames with the wrapped environment."""
        grade: float = await self._call(self.env.visual_support, list(frame_ids))  # type: ignore[attr-defined]
        return grade


class ThreadEnvProvider:
    """Environments in the runner's own process; idle ones are reused across episodes.

    With ``reuse=False`` each environment is closed when its episode ends: a remote environment
    holds one of its server's limited sessions, and an idle one kept here would hold it while
    other episodes wait for a free slot.
    """

    def __init__(
        self,
        make: Callable[[str], Env] | None = None,
        *,
        reuse: bool = True,
        busy: tuple[type[Exception], ...] = (),
        busy_wait_s: float = 0.0,
    ) -> None:
        if make is None:
            from eviseek.envs.registry import make as registry_make

            make = registry_make
        self._make = make
        self._reuse = reuse
        self._busy = busy
        self._busy_wait_s = busy_wait_s
        self._idle: dict[str, list[Env]] = {}

    async def start(self) -> None:
        """Nothing to start: environments are built on first use."""

    async def lease(self, question: Question) -> LeasedEnv:
        """Reuse an idle environment of the question's id, or build one.

        A build that raises one of ``busy`` (a full env server) is tried again after a short,
        growing pause for up to ``busy_wait_s``; the pause is spent in the event loop, not in a
        worker thread, so the episodes that hold environments keep the threads they need."""
        env_id = question_env_id(question)
        pool = self._idle.get(env_id)
        if pool:
            return ThreadLease(pool.pop())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._busy_wait_s
        pause = 0.05
        while True:
            try:
                env = await asyncio.to_thread(self._make, env_id)
                return ThreadLease(env)
            except self._busy:
                left = deadline - loop.time()
                if left <= 0:
                    raise
                await asyncio.sleep(min(left, pause * (0.5 + random.random())))
                pause = min(pause * 2, 1.0)

    async def release(self, env: LeasedEnv, *, healthy: bool) -> None:
        """Keep a healthy environment for reuse; close an unhealthy one."""
        assert isinstance(env, ThreadLease)
        if healthy and self._reuse:
            self._idle.setdefault(env.env_id, []).append(env.env)
        elif healthy:
            await asyncio.to_thread(close_quietly, env.env)
        else:
            # Its thread may still be busy with a timed-out call; close it when that returns.
            asyncio.get_running_loop().run_in_executor(None, close_quietly, env.env)

    async def close(self) -> None:
        """Close every idle environment."""
        for envs in self._idle.values():
            for env in envs:
                await asyncio.to_thread(close_quietly, env)
        self._idle.clear()


def close_quietly(env: Env) -> None:
    """Close ``env``, ignoring any error (the episode is already recorded)."""
    with contextlib.suppress(Exception):  # best effort: the episode is already recorded
        env.close()
