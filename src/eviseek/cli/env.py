"""``eviseek env``: serve an environment over HTTP, and check a server against the protocol.

Errors are raised, never printed here: the CLI's one boundary (:mod:`eviseek.cli.errors`) prints
them and picks the exit code (2 for a bad flag or setting, 1 for any other error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from eviseek.cli.errors import EXIT_ERROR, POSITIVE, BadSetting, env_url_option, number

if TYPE_CHECKING:
    from eviseek.envs.remote.server import EnvServer

app = typer.Typer(no_args_is_help=True, help="Serve environments remotely and check env servers.")


@app.command("serve")
# Long because Typer declares each flag as a parameter with its help text: the signature is the
# flag table (about 40 lines); the body is about 50.
def serve(
    env: str = typer.Option(..., "--env", help="Registered environment id, e.g. eviseek/Tabletop-v0"),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (default loopback only)"),
    port: int = typer.Option(8731, "--port", min=0, max=65535, help="Port (0 picks a free one)"),
    token_env: str = typer.Option(
        "EVISEEK_ENV_TOKEN", "--token-env", help="Environment variable holding the shared token"
    ),
    env_arg: list[str] = typer.Option([], "--env-arg", help="Environment setting KEY=VALUE (repeatable)"),
    plugin: list[str] = typer.Option([], "--plugin", help="Module or .py file registering environments"),
    max_sessions: int = typer.Option(64, "--max-sessions", min=1, help="Environments open at once"),
    max_request_mb: float = typer.Option(
        16.0,
        "--max-request-mb",
        callback=number(at_least=0.001, below=1e6),
        help="Largest request body in MiB",
    ),
    call_timeout: float = typer.Option(
        300.0, "--call-timeout", callback=POSITIVE, help="Seconds an environment call may take"
    ),
    idle_timeout: float = typer.Option(
        1800.0, "--idle-timeout", callback=POSITIVE, help="Close sessions idle this long"
    ),
    request_timeout: float = typer.Option(
        60.0,
        "--request-timeout",
        callback=POSITIVE,
        help="Seconds a client may take to send one whole request (headers and body); also how long "
        "a keep-alive connection may idle between requests",
    ),
    max_unauthenticated: int = typer.Option(
        32, "--max-unauthenticated", min=1, help="Connections at once that have not yet shown the token"
    ),
    max_client_connections: int = typer.Option(
        128, "--max-client-connections", min=1, help="Connections at once from one client address"
    ),
    max_image_mpx: float = typer.Option(
        32.0,
        "--max-image-mpx",
        callback=number(above=0, below=2**20),
        help="Megapixels (2^20) the images of one request may hold together; checked before decoding",
    ),
    asset_root: str | None = typer.Option(
        None,
        "--asset-root",
        help="Folder from which a reset may name images by relative path (default: none; images "
        "travel as bytes)",
    ),
) -> None:
    """Serve one environment id over HTTP until Ctrl-C (requests need the token)."""
    import logging
    import os
    from pathlib import Path

    from eviseek.cli.eval import _pairs, _plugins
    from eviseek.envs.remote.server import LOOPBACK, serve_registered
    from eviseek.eval.envpool import import_plugins

    token = os.environ.get(token_env, "")
    if not token:
        raise BadSetting(
            f"{token_env} is not set: export a long random secret in it (e.g. "
            f"`export {token_env}=$(python -c 'import secrets; print(secrets.token_hex(32))')`) "
            "and give clients the same value"
        )
    if asset_root is not None and not Path(asset_root).expanduser().is_dir():
        raise BadSetting(f"--asset-root {asset_root}: not a folder; give an existing folder of images")
    import_plugins(_plugins(plugin))
    # An unknown id or a port that cannot be listened on is an error (exit 1).
    server = serve_registered(
        env,
        _pairs(env_arg, "--env-arg"),
        token=token,
        host=host,
        port=port,
        max_sessions=max_sessions,
        max_request_bytes=int(max_request_mb * 2**20),
        call_timeout_s=call_timeout,
        idle_timeout_s=idle_timeout,
        read_timeout_s=request_timeout,
        request_timeout_s=request_timeout,
        max_unauthenticated=max_unauthenticated,
        max_client_connections=max_client_connections,
        max_pixels=max(1, int(max_image_mpx * 2**20)),
        asset_root=asset_root,
    )
    _build_one(server, env, env_arg)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    if host not in LOOPBACK:
        typer.echo(
            f"warning: listening on {host}, beyond this machine; traffic is plain HTTP (token and "
            "images unencrypted): use a private network or an SSH tunnel",
            err=True,
        )
    # The port line is what scripts wait for (with --port 0 it is the only way to learn it).
    typer.echo(f"serving {env} at {server.url} (token from ${token_env}); Ctrl-C stops", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def _build_one(server: EnvServer, env: str, env_arg: list[str]) -> None:
    """Build one environment before serving: bad ``--env-arg`` settings stop the server here, as
    a usage error (exit 2), instead of failing every client's session later. An environment may
    refuse its settings with any exception (a ``TypeError`` for an unknown keyword...)."""
    import contextlib

    from eviseek.envs.remote.wire import first_error

    try:
        probe = server.factory()
    except Exception as exc:
        server.httpd.server_close()
        settings = " ".join(f"--env-arg {a}" for a in env_arg) or "its defaults"
        raise BadSetting(f"cannot build {env} with {settings}: {first_error(exc)}") from None
    with contextlib.suppress(Exception):
        probe.close()


@app.command("check")
def check(
    url: str = typer.Argument(..., help="The env server, http://HOST:PORT", callback=env_url_option),
    dataset: str = typer.Option(
        ..., "--dataset", "-d", help="Questions to check with (the first one the server can host is used)"
    ),
    token_env: str = typer.Option(
        "EVISEEK_ENV_TOKEN", "--token-env", help="Environment variable holding the shared token"
    ),
    timeout: float = typer.Option(120.0, "--timeout", callback=POSITIVE, help="Seconds per request"),
    env_images: str | None = typer.Option(
        None,
        "--env-images",
        help="Check the Env protocol with this image encoding only: png, raw or jpeg (default: each)",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON"),
    plugin: list[str] = typer.Option([], "--plugin", help="Module or .py file to import first"),
) -> None:
    """Check an env server against the remote-environment protocol; exit 1 if any check fails."""
    from eviseek.cli.eval import _plugins
    from eviseek.envs.remote.check import check_server, format_results, results_json
    from eviseek.envs.remote.client import server_info, token_from_env
    from eviseek.envs.remote.wire import ENCODINGS
    from eviseek.errors import ConfigError
    from eviseek.eval.datasets import load_dataset
    from eviseek.eval.envpool import import_plugins

    if env_images is not None and env_images not in ENCODINGS:
        raise typer.BadParameter(f"--env-images must be one of {', '.join(ENCODINGS)}")
    import_plugins(_plugins(plugin))
    token = token_from_env(token_env)
    served = server_info(url, token, timeout_s=timeout).env_id
    questions = [q for q in load_dataset(dataset) if not served or q.env_id in (served, None)]
    if not questions:
        raise ConfigError(f"no question of {dataset} is for {served!r}, the environment the server hosts")
    encodings = [env_images] if env_images else list(ENCODINGS)
    results = check_server(url, token, questions[0], timeout_s=timeout, encodings=encodings)
    typer.echo(results_json(results) if as_json else format_results(results))
    if not all(r.ok for r in results):
        raise typer.Exit(EXIT_ERROR)
