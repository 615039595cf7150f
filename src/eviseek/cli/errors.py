"""One-line errors for the commands: what went wrong and how to fix it, never a traceback.

Every command runs inside one error boundary (:func:`boundary`, applied to each command by
``eviseek.cli.main``), and every exit code means one thing (:data:`EXIT_CODES`, also in the
generated docs/reference/cli.md): commands raise, the boundary prints and chooses the code.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer

from eviseek.errors import ConfigError, EviseekError, SettingError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_FAILED_EPISODES = 3
EXIT_INTERRUPTED = 130

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_ERROR: "an error stopped the command (a missing file, run or key variable; a run directory, model, "
    "server or environment problem; storage that cannot be read or written); the message says what to fix",
    EXIT_USAGE: "a bad value: a flag, a setting, the content of a file given (a question set, a "
    "configuration) or a plugin that cannot be imported (nothing was run)",
    EXIT_FAILED_EPISODES: "`eval` (and its aliases) or `demo` finished, but some episodes failed; "
    "rerun with --retry-failed (`demo`: fix the cause and rerun)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); finished work is kept and the same command resumes",
}
"""The one exit-code table of the ``eviseek`` command."""


class BadSetting(SettingError):
    """A setting the user gave is wrong (exit code 2, like a bad flag); raised by commands that
    read settings from a file, so that such errors exit as usage errors."""


F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def require_folder(path: Path | None, flag: str = "--out") -> None:
    """Refuse a folder option that names an existing file (exit code 2, like other bad flags)."""
    if path is not None and path.exists() and not path.is_dir():
        fail(f"{flag} {path} is a file; give a folder (a new one is created)", EXIT_USAGE)


def os_error(exc: OSError, doing: str) -> str:
    """``exc`` as one line saying what could not be done and why (a read-only disk, say)."""
    where = f" ({exc.filename})" if exc.filename else ""
    why = exc.strerror or str(exc)
    hint = ""
    if isinstance(exc, PermissionError) or "read-only" in why.lower():
        hint = "; the storage is not writable: use a writable folder"
    return f"cannot {doing}: {why}{where}{hint}"


def number(
    *, above: float | None = None, at_least: float | None = None, below: float | None = None
) -> Callable[[float | None], float | None]:
    """A Typer callback that refuses a numeric flag that is not finite or out of range.

    Click reads ``nan``, ``inf`` and ``1e400`` as floats and its own ranges let ``nan`` through
    (every comparison with it is false), so each number is checked here, at the command line's
    edge: a bad one is a usage error (one line, exit code 2), never a traceback later on.
    """

    def check(value: float | None) -> float | None:
        if value is None:
            return value
        wanted = []
        if above is not None:
            wanted.append(f"above {above:g}")
        if at_least is not None:
            wanted.append(f"at least {at_least:g}")
        if below is not None:
            wanted.append(f"below {below:g}")
        ok = (
            math.isfinite(value)
            and (above is None or value > above)
            and (at_least is None or value >= at_least)
            and (below is None or value < below)
        )
        if not ok:
            need = " and ".join(wanted)
            raise typer.BadParameter(f"must be a finite number{' ' + need if need else ''}, got {value:g}")
        return value

    return check


POSITIVE = number(above=0)
"""A finite number above 0 (timeouts, sizes)."""


def env_url_option(value: str | None) -> str | None:
    """A Typer callback for an env server's URL (``--env-url``, ``env check URL``): the URL as
    the client will use it; a malformed one is a usage error (exit 2) naming the flag."""
    if value is None:
        return None
    from eviseek.envs.remote.client import check_env_url

    try:
        return check_env_url(value)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


def resource_amounts(pairs: dict[str, object], flag: str) -> dict[str, float]:
    """``KEY=AMOUNT`` resources as finite, non-negative numbers (``GPU=-1``, ``nan`` refused)."""
    out: dict[str, float] = {}
    for key, value in pairs.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise typer.BadParameter(f"{flag} {key}= needs a finite number, got {value!r}")
        if value < 0:
            raise typer.BadParameter(f"{flag} {key}= cannot be negative, got {value:g}")
        out[key] = float(value)
    return out


def first_error(exc: ValueError) -> str:
    """A pydantic validation error as ``where: what`` (its first error only)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        return f"{where}: {first.get('msg', exc)}"
    return str(exc)


def boundary(command: F, name: str = "eviseek") -> F:
    """``command`` with the CLI's one error boundary around it.

    What a command raises becomes one line on stderr and an exit code of :data:`EXIT_CODES`: a
    :class:`BadSetting` (a bad flag, file content or plugin) or any other ``ValueError`` (a
    pydantic validation error, a value a library refused, a file that is not UTF-8) exits 2; any
    other :class:`EviseekError`, or an :class:`OSError` (a missing file, a read-only or full
    disk), exits 1; Ctrl-C exits 130. Typer's own exits and Click's usage errors pass through
    untouched.
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SettingError as exc:  # BadSetting, and the library's bad values (an unknown benchmark)
            fail(str(exc), EXIT_USAGE)
        except EviseekError as exc:
            fail(str(exc), EXIT_ERROR)
        except UnicodeDecodeError as exc:
            # Python's own message names the codec and byte offset but never the file.
            why = f"{exc.reason} at byte {exc.start}"
            fail(f"a file given is not UTF-8 text ({why}); save it as UTF-8", EXIT_USAGE)
        except ValueError as exc:
            # A value the command's libraries refused: the value was bad, not the program, and
            # its message says which (pydantic's is shortened to its first error).
            fail(first_error(exc), EXIT_USAGE)
        except OSError as exc:
            fail(os_error(exc, f"finish `{name}`"), EXIT_ERROR)
        except KeyboardInterrupt:
            fail("interrupted; finished work is kept. Rerun the same command to resume.", EXIT_INTERRUPTED)

    return run  # type: ignore[return-value]
