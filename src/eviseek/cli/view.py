"""``eviseek view``: write the HTML viewer for a run directory or a single episode folder."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from eviseek.types.rundir import TRAJECTORY_FILE, RunDir


def view(
    path: Path = typer.Argument(
        ...,
        help="A run directory (with episodes/) or one episode folder (with trajectory.json).",
        show_default=False,
    ),
    open_page: bool = typer.Option(False, "--open", help="Open the index (or the page) in a web browser."),
    out: Path | None = typer.Option(
        None, "--out", help="For one episode: the .html file to write (default EPISODE_DIR/episode.html)."
    ),
    copy_images: bool = typer.Option(
        False,
        "--copy-images",
        help="Copy full-resolution images next to the pages instead of embedding thumbnails.",
    ),
    thumb_size: int = typer.Option(
        480, "--thumb-size", min=16, max=4096, help="Longest side of embedded thumbnails."
    ),
) -> None:
    """Write an HTML page per episode: frames, subtasks, evidence board, answer against truth."""
    from eviseek.viewer import run_viewer_index, write_episode_page, write_run_viewer

    images: Literal["embed", "copy"] = "copy" if copy_images else "embed"
    try:
        is_episode = (path.is_file() and path.name == TRAJECTORY_FILE) or (path / TRAJECTORY_FILE).is_file()
        if is_episode:
            episode_dir = path.parent if path.is_file() else path
            target = write_episode_page(
                path, out or episode_dir / "episode.html", images=images, max_side=thumb_size
            )
            typer.echo(f"wrote {target}")
        elif RunDir(path).episodes_dir.is_dir():
            if out is not None:
                raise typer.BadParameter("--out applies to one episode; a run's pages go to RUN_DIR/report/")
            pages = write_run_viewer(path, images=images, max_side=thumb_size)
            target = run_viewer_index(path)
            typer.echo(f"wrote {len(pages)} episode page(s) under {target.parent}")
            typer.echo(f"index: {target}")
        else:
            from eviseek.cli.errors import fail

            fail(
                f"{path} is neither a run directory (with episodes/) nor an episode folder "
                "(with trajectory.json)"
            )
    except OSError as exc:  # read-only storage, a full disk
        from eviseek.cli.errors import fail, os_error

        fail(os_error(exc, f"write the pages for {path}"))
    if open_page:
        import webbrowser

        if not webbrowser.open(target.resolve().as_uri()):
            typer.echo(f"could not start a web browser; open {target} yourself", err=True)
