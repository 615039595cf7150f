"""Bad flag values stop at the command line's edge: one line, exit code 2, nothing run.

Outside testing found ``nan``/``inf`` timeouts and sizes giving tracebacks, negative or infinite
Ray resources accepted, an ``--env-url`` checked only inside every episode (or, when empty,
silently ignored), a token in the URL saved in ``run.json``, a server whose every reset failed on
``--env-arg width=-5``, and ``--compare A:A`` accepted. Each command here runs as a process of
its own (``python -m eviseek``), so the exit code and stderr are the real ones: the runs in fresh
processes, the many one-line refusals in processes forked from one that has imported the CLI
(``tests/cli/preloaded.py``; one refusal runs both ways and must come out the same).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eviseek.envs.remote import EnvServer
from eviseek.envs.remote.client import check_env_url, redact_url
from eviseek.errors import ConfigError
from tests.cli.preloaded import PreloadedCli
from tests.eval.toy_plugin import RevealEnv

SECRET = "S3CRET-token-in-url"
TOKEN_ENV = {"EVISEEK_ENV_TOKEN": "t0123456789"}


def _cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eviseek", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **TOKEN_ENV, **(env or {})},
    )


@pytest.fixture(scope="module")
def cli() -> Iterator[PreloadedCli]:
    with PreloadedCli({**os.environ, **TOKEN_ENV}) as preloaded:
        yield preloaded


def _one_line_usage_error(run: subprocess.CompletedProcess[str], *words: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("", ["empty"]),
        ("http://h:99999", ["Port out of range"]),
        ("http://h:abc", ["Port could not be cast"]),
        ("http://[::1", ["Invalid IPv6"]),
        ("http://h:8731/v1", ["has a path"]),
        ("https://h:8731", ["must start with http://"]),
        ("h:8731", ["must start with http://"]),
        ("http://:8731", ["no host"]),
        ("http://h:0", ["port 0"]),
        (f"http://user:{SECRET}@h:8731", ["carries credentials"]),
        (f"http://h:8731/?token={SECRET}", ["query"]),
    ],
)
def test_a_bad_env_url_is_a_usage_error_before_anything_runs(
    cli: PreloadedCli, tmp_path: Path, url: str, words: list[str]
) -> None:
    run = cli.run(
        "eval", "--agents", "passive", "--model", "reference", "--dataset", "tabletop:dev",
        "--out", str(tmp_path / "run"), "--env-url", url,
    )  # fmt: skip
    _one_line_usage_error(run, *words)
    assert SECRET not in run.stderr and not (tmp_path / "run").exists()


def test_a_fresh_process_refuses_a_bad_env_url_the_same_way(cli: PreloadedCli, tmp_path: Path) -> None:
    args = (
        "eval", "--agents", "passive", "--model", "reference", "--dataset", "tabletop:dev",
        "--out", str(tmp_path / "run"), "--env-url", f"http://user:{SECRET}@h:8731",
    )  # fmt: skip
    fresh, forked = _cli(*args), cli.run(*args)
    _one_line_usage_error(fresh, "carries credentials")
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (forked.returncode, forked.stdout, forked.stderr)


def test_env_urls_are_normalised_and_secrets_never_shown() -> None:
    assert check_env_url(" http://127.0.0.1:8731/ ") == "http://127.0.0.1:8731"
    assert check_env_url("http://[::1]:9") == "http://[::1]:9"
    assert check_env_url("http://sim") == "http://sim:80"
    assert SECRET not in redact_url(f"http://u:{SECRET}@h:1/?token={SECRET}#{SECRET}")
    with pytest.raises(ConfigError) as err:
        check_env_url(f"http://{SECRET}@h:1")
    assert SECRET not in str(err.value)


def test_an_unreachable_env_server_stops_the_run_at_once_with_one_line(tmp_path: Path) -> None:
    with EnvServer(RevealEnv, token="t0123456789") as server:
        port = server.port  # a port that was just free: nothing listens there once it stops
    run = _cli(
        "eval", "--agents", "passive", "--model", "reference", "--dataset", "tabletop:dev", "--limit", "2",
        "--out", str(tmp_path / "run"), "--env-url", f"http://127.0.0.1:{port}", "--no-progress",
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "refused the connection" in lines[0], run.stderr
    wrong = _cli(
        "eval", "--agents", "passive", "--model", "reference", "--dataset", "tabletop:dev", "--limit", "2",
        "--out", str(tmp_path / "run2"), "--env-url", "http://127.0.0.1:9", "--no-progress",
        env={"EVISEEK_ENV_TOKEN": ""},
    )  # fmt: skip
    assert wrong.returncode == 1 and "EVISEEK_ENV_TOKEN is not set" in wrong.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--timeout", "nan"], ["--timeout", "finite"]),
        (["--timeout", "inf"], ["--timeout", "finite"]),
        (["--timeout", "0"], ["--timeout", "above 0"]),
        (["--ray-resource", "GPU=-1"], ["cannot be negative"]),
        (["--ray-resource", "GPU=NaN"], ["finite number"]),
        (["--ray-resource", "GPU=1e400"], ["finite number"]),
        (["--ray-resource", "GPU=lots"], ["finite number"]),
    ],
)
def test_eval_numbers_are_finite_and_in_range(
    cli: PreloadedCli, tmp_path: Path, args: list[str], words: list[str]
) -> None:
    run = cli.run(
        "eval", "--agents", "passive", "--model", "reference", "--dataset", "tabletop:dev",
        "--out", str(tmp_path / "run"), *args,
    )  # fmt: skip
    _one_line_usage_error(run, *words)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--max-request-mb", "nan"], ["--max-request-mb", "finite"]),
        (["--max-request-mb", "inf"], ["--max-request-mb", "finite"]),
        (["--call-timeout", "inf"], ["--call-timeout", "finite"]),
        (["--idle-timeout", "-1"], ["--idle-timeout"]),
        (["--request-timeout", "nan"], ["--request-timeout"]),
        (["--max-image-mpx", "0"], ["--max-image-mpx"]),
        (["--max-unauthenticated", "0"], ["--max-unauthenticated"]),
        (["--max-client-connections", "0"], ["--max-client-connections"]),
        (["--asset-root", "/no/such/eviseek/folder"], ["--asset-root", "not a folder"]),
        (["--env-arg", "width=-5"], ["width must be", "--env-arg width=-5"]),
        (["--env-arg", "height=1e400"], ["height must be"]),
    ],
)
def test_env_serve_refuses_bad_settings_before_serving(
    cli: PreloadedCli, args: list[str], words: list[str]
) -> None:
    run = cli.run("env", "serve", "--env", "eviseek/Tabletop-v0", "--port", "0", *args)
    _one_line_usage_error(run, *words)


def test_env_check_refuses_a_bad_url_and_judge_a_bad_timeout(cli: PreloadedCli, tmp_path: Path) -> None:
    _one_line_usage_error(cli.run("env", "check", "http://h:1/x", "--dataset", "tabletop:dev"), "has a path")
    _one_line_usage_error(
        cli.run("env", "check", "http://h:1", "--dataset", "tabletop:dev", "--timeout", "nan")
    )
    _one_line_usage_error(
        cli.run("judge", str(tmp_path), "--model", "openai/x", "--timeout", "inf"), "--timeout"
    )
    _one_line_usage_error(cli.run("report", str(tmp_path), "--confidence", "nan"), "--confidence")
    _one_line_usage_error(cli.run("models", "check", "--model", "reference", "--timeout", "-2"), "--timeout")


def test_compare_refuses_a_system_against_itself(cli: PreloadedCli, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    made = _cli(
        "eval", "--agents", "passive,eviseek", "--model", "reference", "--dataset", "tabletop:dev",
        "--limit", "1", "--out", str(run_dir), "--no-progress", "--env-workers", "0",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    same = cli.run("report", str(run_dir), "--compare", "eviseek:eviseek", "--resamples", "10")
    assert same.returncode == 2 and "compares a system with itself" in same.stderr, same.stderr
    swapped = cli.run(
        "report", str(run_dir), "--compare", "eviseek:passive,passive:eviseek", "--resamples", "10"
    )
    assert swapped.returncode == 2 and "listed twice" in swapped.stderr, swapped.stderr
