"""``eviseek env``: serve an environment over HTTP, and check a server against the protocol."""

from __future__ import annotations

import typer

from eviseek.cli.errors import POSITIVE, number

app = typer.Typer(no_args_is_help=True, help="Serve environments remotely and check env servers.")


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@app.command("serve")
# Long because Typer declares each flag as a parameter with its help text: the signature is the
# flag table (about 40 lines); the body is about 65.
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
) -> None:
    """Serve one environment id over HTTP until Ctrl-C (requests need the token)."""
    import contextlib
    import logging
    import os

    from eviseek.cli.eval import _pairs, _plugins
    from eviseek.envs.remote.server import LOOPBACK, serve_registered
    from eviseek.envs.remote.wire import first_error
    from eviseek.errors import EviseekError
    from eviseek.eval.envpool import import_plugins

    token = os.environ.get(token_env, "")
    if not token:
        raise _fail(
            f"{token_env} is not set: export a long random secret in it (e.g. "
            f"`export {token_env}=$(python -c 'import secrets; print(secrets.token_hex(32))')`) "
            "and give clients the same value",
            2,
        )
    try:
        import_plugins(_plugins(plugin))
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
        )
    except EviseekError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot listen on {host}:{port}: {exc}") from None
    try:
        # One environment built before serving: bad --env-arg settings stop the server here
        # (a usage error) instead of failing every client's session later.
        probe = server.factory()
        with contextlib.suppress(Exception):
            probe.close()
    except Exception as exc:
        server.httpd.server_close()
        settings = " ".join(f"--env-arg {a}" for a in env_arg) or "its defaults"
        raise _fail(f"cannot build {env} with {settings}: {first_error(exc)}", 2) from None
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


@app.command("check")
def check(
    url: str = typer.Argument(..., help="The env server, http://HOST:PORT"),
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
    from eviseek.envs.remote.client import check_env_url, server_info, token_from_env
    from eviseek.envs.remote.wire import ENCODINGS
    from eviseek.errors import ConfigError, EviseekError
    from eviseek.eval.datasets import load_dataset
    from eviseek.eval.envpool import import_plugins

    if env_images is not None and env_images not in ENCODINGS:
        raise typer.BadParameter(f"--env-images must be one of {', '.join(ENCODINGS)}")
    try:
        url = check_env_url(url)
    except ConfigError as exc:
        raise _fail(str(exc), 2) from None
    try:
        import_plugins(_plugins(plugin))
        token = token_from_env(token_env)
        served = server_info(url, token, timeout_s=timeout).env_id
        questions = [q for q in load_dataset(dataset) if not served or q.env_id in (served, None)]
        if not questions:
            raise _fail(f"no question of {dataset} is for {served!r}, the environment the server hosts")
        encodings = [env_images] if env_images else list(ENCODINGS)
        results = check_server(url, token, questions[0], timeout_s=timeout, encodings=encodings)
    except EviseekError as exc:
        raise _fail(str(exc)) from None
    typer.echo(results_json(results) if as_json else format_results(results))
    if not all(r.ok for r in results):
        raise typer.Exit(1)
