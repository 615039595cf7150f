"""``eviseek models check`` and ``eviseek models list`` end to end, in a subprocess.

The server runs in this process; the CLI is a separate process with its own event loop, so
this is exactly what a user typing the command gets. The first check runs in a fresh
``python -m eviseek``; the others in processes forked from one that has already imported the
CLI (``tests/cli/preloaded.py``), which saves only that import (about a second) per command.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from eviseek.testing import OpenAITestServer, ServerReply, request_images, request_texts
from tests.cli.preloaded import PreloadedCli

KEY = "sk-cli-9dQv2secret"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    full_env.update(extra or {})
    return full_env


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eviseek", "models", *args],
        capture_output=True,
        text=True,
        env=_env(env),
        timeout=60,
    )


@pytest.fixture(scope="module")
def cli() -> Iterator[PreloadedCli]:
    with PreloadedCli(_env()) as preloaded:
        yield preloaded


def _forked(
    cli: PreloadedCli, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return cli.run("models", *args, env=_env(env), timeout=60)


def _check_with_key(cli: PreloadedCli, base_url: str) -> subprocess.CompletedProcess[str]:
    """``models check`` against ``base_url`` with KEY in the variable ``--api-key-env`` names."""
    return _forked(
        cli, "check", "--model", "openai/m", "--base-url", base_url, "--api-key-env", "K", env={"K": KEY}
    )


def test_check_against_a_local_server() -> None:
    def answer(body: dict[str, Any]) -> ServerReply:
        return ServerReply(text="Red.", prompt_tokens=300, completion_tokens=2, reasoning_tokens=0)

    with OpenAITestServer(answer) as srv:
        out = _run(
            "check",
            "--model",
            "openai/Qwen/Qwen3-VL-8B-Instruct",
            "--base-url",
            srv.base_url,
            "--api-key-env",
            "MY_VLM_KEY",
            "--image-size",
            "64",
            env={"MY_VLM_KEY": KEY},
        )
    assert out.returncode == 0, out.stderr
    assert "reply:   Red." in out.stdout
    assert "usage:   input=300 output=2 reasoning=0 images=1" in out.stdout
    assert "latency:" in out.stdout
    assert KEY not in out.stdout + out.stderr
    (body,) = srv.chat_requests
    assert body["model"] == "Qwen/Qwen3-VL-8B-Instruct"
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    (img,) = request_images(body)
    assert img.size == (64, 64)
    assert img.convert("RGB").getpixel((32, 32)) == (220, 30, 30)  # the red square in the middle
    assert "colour" in request_texts(body)[0]


def test_check_with_the_server_down_is_a_one_line_error(cli: PreloadedCli) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = _forked(cli, "check", "--model", "openai/m", "--base-url", f"http://127.0.0.1:{port}/v1")
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: the server at") and "unreachable" in lines[0]


def test_check_with_a_wrong_key_is_a_one_line_error_without_the_key(cli: PreloadedCli) -> None:
    reply = ServerReply.error(401, f"Incorrect API key provided: {KEY}")
    with OpenAITestServer([reply]) as srv:
        out = _check_with_key(cli, srv.base_url)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "HTTP 401" in lines[0] and "--api-key-env" in lines[0]
    assert KEY not in out.stderr + out.stdout
    assert len(srv.requests) == 1


def test_check_with_an_unset_key_variable_names_it(cli: PreloadedCli) -> None:
    out = _forked(
        cli,
        "check",
        "--model",
        "openai/m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "NOPE_UNSET",
    )
    assert out.returncode == 1
    assert out.stderr.strip() == (
        "error: environment variable NOPE_UNSET (from --api-key-env) is not set or empty; "
        "export it, or name another variable with --api-key-env"
    )


def test_list_names_every_provider(cli: PreloadedCli) -> None:
    out = _forked(cli, "list")
    assert out.returncode == 0, out.stderr
    names = [line.split()[0] for line in out.stdout.splitlines()]
    assert {"openai/", "scripted/"} <= set(names)
    assert "OpenAI-compatible" in out.stdout


def test_check_redacts_a_key_echoed_in_the_reply(cli: PreloadedCli) -> None:
    with OpenAITestServer(lambda body: ServerReply(text=f"Red. (key {KEY})")) as srv:
        out = _check_with_key(cli, srv.base_url)
    assert out.returncode == 0, out.stderr
    assert "reply:   Red. (key ***)" in out.stdout
    assert KEY not in out.stdout + out.stderr
