"""The ``eviseek`` command. Subcommands live in sibling modules and stay thin.

Each subcommand module must import only light things at module level so that
``eviseek --help`` stays fast; heavy work is imported inside the command functions.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer

from eviseek.cli.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, boundary

app = typer.Typer(
    name="eviseek",
    help="Vision-language agents that seek evidence before they answer.",
    # The root callback shows the help itself when no command is given, so that ``--version``
    # alone works (a group that needs a command would refuse it as "Missing command").
    invoke_without_command=True,
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
    ("eviseek.cli.house", "app", "house", "House benchmark: generate questions with a seed, render views."),
    ("eviseek.cli.models", "app", "models", "Check and inspect model providers."),
    (
        "eviseek.cli.benchmarks",
        "app",
        "benchmarks",
        "List the registered benchmarks and where each comes from.",
    ),
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


def _guard(group: typer.Typer, path: str) -> None:
    """Put the one error boundary (:func:`eviseek.cli.errors.boundary`) around every command of
    ``group`` and of its sub-groups."""
    for info in group.registered_commands:
        if info.callback is not None and not getattr(info.callback, "__wrapped__", None):
            info.callback = boundary(info.callback, f"{path} {info.name or info.callback.__name__}")
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _guard(sub.typer_instance, f"{path} {sub.name}")


def _register() -> None:
    for module_name, attr, name, help_text in _SUBCOMMANDS:
        obj = getattr(importlib.import_module(module_name), attr)
        if isinstance(obj, typer.Typer):
            _guard(obj, f"eviseek {name}")
            app.add_typer(obj, name=name, help=help_text)
        else:
            app.command(name=name, help=help_text)(boundary(obj, f"eviseek {name}"))


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        from eviseek import __version__

        typer.echo(__version__)
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(EXIT_USAGE)


_plain_flags_in_help()
_register()


def main() -> None:
    """Console entry point.

    Click prints a usage error as a usage line, a hint and a boxed message; a user who typed a bad
    value needs one line saying what was wrong and where help is, so those errors are caught here
    and printed as one line (exit code 2, as Click uses). Everything else behaves as ``app()``.
    """
    import sys

    try:
        result = app(standalone_mode=False)
    except typer.Abort:
        typer.echo("eviseek: aborted", err=True)
        sys.exit(EXIT_ERROR)
    except typer.TyperException as error:  # Click's usage and parameter errors
        if type(error).__name__ == "NoArgsIsHelpError":
            # A group called without a command: Typer has already printed its help.
            sys.exit(EXIT_USAGE)
        ctx = getattr(error, "ctx", None)
        command = ctx.command_path if ctx is not None else "eviseek"
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        typer.echo(f"{command}: {message} (see '{command} --help')", err=True)
        sys.exit(getattr(error, "exit_code", EXIT_USAGE))
    # Without standalone mode Click hands back the code of ``typer.Exit`` (and ``--help``) instead
    # of exiting; commands themselves return None.
    sys.exit(result if isinstance(result, int) else EXIT_OK)


if __name__ == "__main__":
    main()
