"""``eviseek autotool``: run a dual-mode zoom-in model on a high-resolution benchmark.

``eviseek autotool eval`` is a thin alias of ``eviseek eval --agents autotool``: it turns its
flags into the :class:`~eviseek.eval.config.RunConfig` the general command builds from the
matching flags (:func:`alias_config`), and runs it with the shared runner. A flag left at the
agent's or the provider's default is not written into the run, exactly as ``eviseek eval``
writes nothing it was not given; so a run started by either command resumes under the other.

Runs started by this command before issue 26 recorded every flag instead (and the budget as
``--max-turns``); :func:`legacy_config` rebuilds that form, so those runs still resume under
the command that created them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import BaseModel

from eviseek.cli.errors import POSITIVE, number
from eviseek.eval.config import RunConfig

if TYPE_CHECKING:
    from eviseek.autotool.metrics import EvalSummary
    from eviseek.eval.runner import EvalOutcome

SHOWN_MAX_PIXELS = 1280 * 28 * 28
"""The agent's default cap of the shown image (``AutoToolConfig.max_pixels``, which reads it from
:data:`eviseek.types.image.SHOWN_MAX_PIXELS`; quoted here so ``--help`` does not import the agent,
and checked equal by the tests)."""

app = typer.Typer(no_args_is_help=True)


@app.command("eval")
# Long because Typer declares each flag as a parameter with its help text: the signature is the
# flag table (about 50 lines); the body is about 45.
def eval_cmd(
    model: str = typer.Option(..., "--model", "-m", help="provider/name, e.g. openai/Qwen2.5-VL-7B-Instruct"),
    dataset: str = typer.Option(
        ...,
        "--dataset",
        "-d",
        help="NAME:PATH with NAME in vstar, hrbench4k, hrbench8k, pope, refcoco, refcoco+, refcocog, "
        "mathvista, mathverse, mathvision, wemath, dynamath, logicvista; or synthetic:N[:WIDTH]",
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions"),
    out: Path | None = typer.Option(None, "--out", help="Run directory (default runs/autotool-<dataset>)"),
    force_mode: str | None = typer.Option(
        None, "--force-mode", help="tool_on or tool_off: pin the mode instead of letting the model choose"
    ),
    vstar_shuffle: bool = typer.Option(
        True,
        "--vstar-shuffle/--no-vstar-shuffle",
        help="Shuffle V*'s options with --seed (default on: the source lists the correct one first)",
    ),
    force_how: str = typer.Option(
        "token", "--force-how", help="token (append the mode token) or instruction"
    ),
    max_turns: int = typer.Option(5, "--max-turns", min=1, help="Model calls per question"),
    max_pixels: int = typer.Option(
        SHOWN_MAX_PIXELS, "--max-pixels", min=784, help="Pixel cap of the shown image"
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Seed of the run, V*'s option shuffle, the synthetic images and sampling (default: "
        "the run's seed 0 and no sampling seed, as eval)",
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        help=f"Questions at once (default {RunConfig.model_fields['concurrency'].default})",
    ),
    temperature: float = typer.Option(
        0.0, "--temperature", callback=number(at_least=0), help="Sampling temperature"
    ),
    max_tokens: int = typer.Option(2048, "--max-tokens", min=1, help="Reply length cap per model call"),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        callback=POSITIVE,
        help="openai/ only: seconds per model request (episodes time out after 600 s)",
    ),
    image_format: str = typer.Option(
        "png", "--image-format", help="openai/ only: png (lossless) or jpeg (tens of times faster to encode)"
    ),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run failed episodes again"),
    progress: bool | None = typer.Option(
        None, "--progress/--no-progress", help="Show a progress bar (default: on in a terminal)"
    ),
) -> None:
    """Evaluate a model with AutoTool's protocol; print accuracy, tool-on share, calls, tokens, latency.

    An alias of ``eviseek eval --agents autotool``: the same run configuration, run directory,
    resume, lock, failure handling, exit codes (1 error, 2 bad flag, 3 failed episodes) and
    ``eviseek report``.
    """
    from eviseek.cli.errors import BadSetting, require_folder
    from eviseek.cli.eval import execute_run

    if force_mode not in (None, "tool_on", "tool_off"):
        raise BadSetting(f"--force-mode must be tool_on or tool_off, not {force_mode!r}")
    if force_how not in ("token", "instruction"):
        raise BadSetting(f"--force-how must be token or instruction, not {force_how!r}")
    run_dir = out or Path("runs") / f"autotool-{dataset.split(':', 1)[0]}"
    require_folder(run_dir)
    flags = AliasFlags(
        model=model,
        dataset=dataset,
        limit=limit,
        force_mode=force_mode,
        vstar_shuffle=vstar_shuffle,
        force_how=force_how,
        max_turns=max_turns,
        max_pixels=max_pixels,
        seed=seed,
        concurrency=concurrency,
        temperature=temperature,
        max_tokens=max_tokens,
        base_url=base_url,
        api_key_env=api_key_env,
        timeout=timeout,
        image_format=image_format,
    )
    config = resumable_config(flags, run_dir)

    def autotool_table(outcome: EvalOutcome) -> None:
        summary = write_summary(outcome.run_dir, config)
        typer.echo(summary.table())
        typer.echo(
            json.dumps({"accuracy": summary.overall.accuracy, "tool_on_share": summary.overall.tool_on_share})
        )

    execute_run(config, run_dir, progress=progress, retry_failed=retry_failed, after=autotool_table)


SUMMARY_FILE = "autotool_summary.json"


class AliasFlags(BaseModel):
    """The flags of ``eviseek autotool eval`` that shape its run (``None``: not given)."""

    model: str
    dataset: str
    limit: int | None = None
    force_mode: str | None = None
    vstar_shuffle: bool = True
    force_how: str = "token"
    max_turns: int = 5
    max_pixels: int = SHOWN_MAX_PIXELS
    seed: int | None = None
    concurrency: int | None = None
    temperature: float = 0.0
    max_tokens: int = 2048
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float | None = None
    image_format: str = "png"

    def agent_settings(self) -> dict[str, Any]:
        """The flags that are the AutoTool agent's settings (``AutoToolConfig`` fields)."""
        names = ("max_turns", "force_mode", "force_how", "max_pixels", "temperature", "max_tokens", "seed")
        return {name: getattr(self, name) for name in names}


def alias_config(flags: AliasFlags) -> RunConfig:
    """The run ``eviseek eval --agents autotool`` builds from the matching flags.

    Each flag maps to one flag of the general command, and is passed only when it is not the
    default there: an agent setting differing from ``AutoToolConfig``'s default becomes
    ``--agent-arg``; ``--seed S`` is ``--seed S --agent-arg seed=S`` (and ``?seed=S`` on V* and
    synthetic sets). For a provider that encodes images for the wire (its settings have
    ``max_pixels`` and ``image_format``), ``--max-pixels`` is also ``--model-arg max_pixels=``
    when it is above the provider's own cap, so the provider never shrinks the shown image
    again (the model's boxes refer to that frame), and ``--image-format`` is ``--model-arg
    image_format=`` when it is not the provider's default. ``--timeout`` is a remote provider's
    per-request ``timeout_s``. The step budget is the dataset's, as in ``eviseek eval``.
    """
    from eviseek import __version__
    from eviseek.agents.autotool import AutoToolConfig
    from eviseek.eval.config import new_run_config
    from eviseek.models.registry import provider_of

    defaults = AutoToolConfig()
    agent_config = {k: v for k, v in flags.agent_settings().items() if v != getattr(defaults, k)}
    provider = provider_of(flags.model)
    model_args: dict[str, Any] = {}
    if provider.accepts("max_pixels") and provider.accepts("image_format"):
        # A provider shrinks only images over its own cap, so the shown image's cap is passed
        # only when it is larger; the format only when it is not the provider's own.
        own_cap = provider.default("max_pixels")
        if own_cap is not None and flags.max_pixels > own_cap:
            model_args["max_pixels"] = flags.max_pixels
        if flags.image_format != provider.default("image_format"):
            model_args["image_format"] = flags.image_format
    if provider.remote and flags.timeout is not None:
        model_args["timeout_s"] = flags.timeout
    return new_run_config(
        agents=["autotool"],
        agent_config=agent_config,
        model=flags.model,
        model_args=model_args,
        dataset=dataset_spec(flags.dataset, seed=flags.seed or 0, vstar_shuffle=flags.vstar_shuffle),
        limit=flags.limit,
        seed=flags.seed,
        concurrency=flags.concurrency,
        base_url=flags.base_url,
        api_key_env=flags.api_key_env,
        eviseek_version=__version__,
    )


def legacy_config(flags: AliasFlags) -> RunConfig:
    """The run this command built from ``flags`` before issue 26: every agent setting written
    out (the sampling seed 0 included), the budget set to ``--max-turns``, the image cap and
    format always passed to a provider that encodes images, 4 questions at once. Only for
    resuming runs it started then (:func:`resumable_config`)."""
    from eviseek.models.registry import provider_of

    config = alias_config(flags)
    provider = provider_of(flags.model)
    model_args = {k: v for k, v in config.model_args.items() if k == "timeout_s"}
    if provider.accepts("max_pixels") and provider.accepts("image_format"):
        model_args.update(max_pixels=flags.max_pixels, image_format=flags.image_format)
    return config.model_copy(
        update={
            "agent_config": flags.agent_settings() | {"seed": flags.seed or 0},
            "model_args": model_args,
            "budget": flags.max_turns,
            "concurrency": flags.concurrency or 4,
        }
    )


def resumable_config(flags: AliasFlags, run_dir: Path) -> RunConfig:
    """:func:`alias_config`, unless ``run_dir`` holds a run this command started before issue 26
    with the same flags: then :func:`legacy_config`, so that run resumes as it began."""
    from eviseek.eval.config import RESULT_SETTINGS, load_config
    from eviseek.types.rundir import RunDir

    config = alias_config(flags)
    if not RunDir(run_dir).exists():
        return config
    saved = load_config(run_dir)
    compared = [name for name in RESULT_SETTINGS if name != "questions_sha256"]

    def same(candidate: RunConfig) -> bool:
        return all(getattr(saved, name) == getattr(candidate, name) for name in compared)

    if same(config):
        return config
    legacy = legacy_config(flags)
    return legacy if same(legacy) else config


def dataset_spec(dataset: str, *, seed: int, vstar_shuffle: bool) -> str:
    """The harness's dataset spec for ``--dataset``, ``--seed`` and ``--vstar-shuffle``: V*'s option
    shuffle and the synthetic images take the run's seed, as this command always did."""
    name = dataset.split(":", 1)[0].lower()
    options = []
    if name == "vstar" and not vstar_shuffle:
        options.append("shuffle=off")
    if name in ("vstar", "synthetic") and seed != 0 and "?" not in dataset:
        options.append(f"seed={seed}")
    if not options:
        return dataset
    return dataset + ("&" if "?" in dataset else "?") + "&".join(options)


def write_summary(run_dir: Path, config: RunConfig) -> EvalSummary:
    """Compute the run's AutoTool metrics and save them as ``RUN_DIR/autotool_summary.json``."""
    from eviseek.autotool.metrics import summarize
    from eviseek.eval.store import load_results
    from eviseek.types.question_file import read_questions

    questions = read_questions(run_dir)
    wanted = {q.id for q in questions}
    rows = [r for r in load_results(run_dir) if r.agent == "autotool" and r.question_id in wanted]
    summary = summarize(rows, questions, model=config.model, dataset=config.dataset)
    (run_dir / SUMMARY_FILE).write_text(summary.model_dump_json(indent=1), encoding="utf-8")
    return summary
