"""``eviseek env``'s errors go through the CLI's one boundary, each with its documented exit code:
2 for a bad flag or setting (nothing served or checked), 1 for any other error."""

from __future__ import annotations

import inspect
import os
import socket
import subprocess
import sys

from typer.testing import CliRunner

from eviseek.cli import env as env_cli
from eviseek.cli.errors import EXIT_ERROR, EXIT_USAGE
from eviseek.cli.main import app

TOKEN = {"EVISEEK_ENV_TOKEN": "a-test-token"}


def _serve(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["env", "serve", "--port", "0", *args], env=env or TOKEN)


def test_serve_refuses_bad_settings_with_2_and_other_errors_with_1() -> None:
    no_token = _serve("--env", "eviseek/Tabletop-v0", env={"EVISEEK_ENV_TOKEN": ""})
    assert no_token.exit_code == EXIT_USAGE and "error: EVISEEK_ENV_TOKEN is not set" in no_token.output
    bad_arg = _serve("--env", "eviseek/ImageZoom-v0", "--env-arg", "no_such_setting=1")
    assert bad_arg.exit_code == EXIT_USAGE, bad_arg.output
    assert "error: cannot build eviseek/ImageZoom-v0 with --env-arg no_such_setting=1" in bad_arg.output
    unknown = _serve("--env", "nope/Nothing-v0")
    assert (
        unknown.exit_code == EXIT_USAGE and "error: unknown environment 'nope/Nothing-v0'" in unknown.output
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = CliRunner().invoke(
            app, ["env", "serve", "--env", "eviseek/ImageZoom-v0", "--port", port], env=TOKEN
        )
    assert busy.exit_code == EXIT_ERROR, busy.output
    assert f"error: cannot listen on 127.0.0.1:{port}:" in busy.output


def test_check_refuses_a_malformed_url_with_2_and_a_missing_server_with_1(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = subprocess.run(
        [sys.executable, "-m", "eviseek", "env", "check", "127.0.0.1:9", "--dataset", "tabletop:dev"],
        capture_output=True,
        text=True,
        env={**os.environ, **TOKEN},
    )
    assert bad.returncode == EXIT_USAGE, bad.stderr
    assert "env check: Invalid value for 'url': env server URL '127.0.0.1:9' must start" in bad.stderr
    assert len(bad.stderr.splitlines()) == 1, bad.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    down = CliRunner().invoke(
        app,
        ["env", "check", f"http://127.0.0.1:{port}", "--dataset", "tabletop:dev", "--timeout", "5"],
        env=TOKEN,
    )
    assert down.exit_code == EXIT_ERROR and down.output.startswith("error: "), down.output


def test_the_env_commands_print_no_error_of_their_own() -> None:
    # Only the boundary prints errors and picks codes: no command catches EviseekError or OSError.
    source = inspect.getsource(env_cli)
    assert "except EviseekError" not in source and "except OSError" not in source
    assert "typer.Exit(2)" not in source and "_fail(" not in source
