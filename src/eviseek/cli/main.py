"""The ``eviseek`` command. Subcommands live in sibling modules and stay thin.

Each subcommand module must import only light things at module level so that
``eviseek --help`` stays fast; heavy work is imported inside the command functions.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer

app = typer.Typer(
    name="eviseek",
    help="Vision-language agents that seek evidence before they answer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# (module, attribute, name, help). A module that exposes a Typer app is added as a group;
# one that exposes a function is added as a single command.
_SUBCOMMANDS: list[tuple[str, str, str, str]] = [
    ("eviseek.cli.demo", "demo", "demo", "Compare Passive, Single-model and EviSeek on tabletop questions."),
    ("eviseek.cli.eval", "eval_command", "eval", "Evaluate agents on a question set (resumable)."),
    ("eviseek.cli.score", "score", "score", "Re-score a run directory offline from its trajectories."),
    ("eviseek.cli.report", "report", "report", "Write the paper's tables, figures and CSV from run dirs."),
    ("eviseek.cli.judge", "judge", "judge", "Grade answer-time visual support with an LLM judge."),
    ("eviseek.cli.replay", "replay", "replay", "Answer-only replays of EviSeek episodes (memory ablations)."),
    ("eviseek.cli.view", "view", "view", "Write HTML pages showing a run's episodes (or one episode)."),
    ("eviseek.cli.tabletop", "app", "tabletop", "Tabletop benchmark: generate, render, support stats."),
    ("eviseek.cli.models", "app", "models", "Check and inspect model providers."),
    ("eviseek.cli.env", "app", "env", "Serve an environment over HTTP; check an env server."),
    ("eviseek.cli.esibench", "app", "esibench", "ESI-Bench: question counts, import official results."),
    ("eviseek.cli.autotool", "app", "autotool", "AutoTool: evaluate dual-mode zoom-in models."),
    ("eviseek.cli.train", "app", "train", "Train models: AutoTool GRPO with TRL (one machine)."),
]


def _plain_flags_in_help() -> None:
    """Show no type next to on/off flags in ``--help``.

    Typer 0.29 prints ``<bool>`` in the type column of every flag (``--json``, ``--help``), which
    reads as if the flag took a value. A flag takes none, so its type column is left empty.
    """
    from typer.core import TyperOption

    if getattr(TyperOption.display_type_rich, "_eviseek_plain_flags", False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag and self.metavar is None else shown(self, ctx)

    display_type_rich._eviseek_plain_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign,assignment]


def _register() -> None:
    for module_name, attr, name, help_text in _SUBCOMMANDS:
        obj = getattr(importlib.import_module(module_name), attr)
        if isinstance(obj, typer.Typer):
            app.add_typer(obj, name=name, help=help_text)
        else:
            app.command(name=name, help=help_text)(obj)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        from eviseek import __version__

        typer.echo(__version__)
        raise typer.Exit()


_plain_flags_in_help()
_register()


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
