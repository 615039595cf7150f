"""``eviseek models``: list the providers, check that a model answers an image question."""

from __future__ import annotations

import asyncio

import typer

from eviseek.cli.errors import POSITIVE
from eviseek.types import Stage

app = typer.Typer(no_args_is_help=True)


def model_kwargs(model: str, base_url: str | None, api_key_env: str | None, timeout: float | None) -> dict:
    """Provider keyword arguments from the common CLI flags (see
    :func:`eviseek.models.registry.provider_kwargs`, which builds them for the library too)."""
    from eviseek.models.registry import provider_kwargs

    return provider_kwargs(model, base_url=base_url, api_key_env=api_key_env, timeout_s=timeout)


def _check_image(size: int):  # type: ignore[no-untyped-def]
    import numpy as np

    from eviseek.types import Image

    # A red square on a white background: a question with a checkable answer.
    arr = np.full((size, size, 3), 255, dtype=np.uint8)
    q = size // 4
    arr[q : 3 * q, q : 3 * q] = (220, 30, 30)
    return Image.from_array(arr)


@app.command("list")
def list_providers() -> None:
    """List the model providers: use them as provider/MODEL with --model."""
    from eviseek.models.registry import provider_descriptions

    for name, description in provider_descriptions().items():
        typer.echo(f"{name + '/':<11}{description}")


@app.command("check")
def check(
    model: str = typer.Option(..., "--model", "-m", help="provider/name, e.g. openai/gpt-4o-mini"),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    question: str = typer.Option(
        "What colour is the square in the middle of this image? Answer in one word.",
        "--question",
        help="Text sent with the image",
    ),
    image_size: int = typer.Option(
        256, "--image-size", min=16, max=4096, help="Side of the generated square image in pixels"
    ),
    timeout: float | None = typer.Option(None, "--timeout", callback=POSITIVE, help="Seconds per request"),
    max_tokens: int = typer.Option(64, "--max-tokens", min=1, help="Reply length cap sent to the server"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log retries and requests to stderr."),
) -> None:
    """Send one request with a small generated image; print the reply, usage and latency."""
    import logging

    if verbose:
        # INFO for libraries (the openai client's DEBUG lines carry whole base64 images).
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger("eviseek").setLevel(logging.DEBUG)
    else:
        # Without a handler Python prints warnings (e.g. each retry) to stderr; the contract
        # here is one line on failure, and retries still show up as notes on success.
        logging.getLogger("eviseek").addHandler(logging.NullHandler())
    from eviseek.models import generate_recorded, get_model
    from eviseek.types import ChatMessage, GenerateConfig

    m = get_model(model, **model_kwargs(model, base_url, api_key_env, timeout))
    msg = ChatMessage.user(_check_image(image_size), question)
    completion, call = asyncio.run(
        generate_recorded(m, [msg], GenerateConfig(max_tokens=max_tokens, temperature=0.0, stage=Stage.CHECK))
    )
    u = call.usage

    def fmt(v: int | None) -> str:
        return "unknown" if v is None else str(v)

    typer.echo(f"model:   {m.name}")
    typer.echo(f"reply:   {completion.text.strip()}")
    typer.echo(
        f"usage:   input={fmt(u.input_tokens)} output={fmt(u.output_tokens)} "
        f"reasoning={fmt(u.reasoning_tokens)} images={u.images_sent}"
    )
    typer.echo(f"latency: {call.latency_s:.3f}s")
    for note in call.notes:
        typer.echo(f"note:    {note}")
