"""Which prompt produced a number: every run directory keeps the exact prompt templates it used
and the first request each agent rendered.

``prompts/templates/`` holds a copy of every template of :mod:`eviseek.agents` (the built-in
agents' stage prompts) as the run found it; ``prompts/first/<agent>.md`` the first request an
agent sent in this run, rendered (system and user text; images as ``[image N]``), with its stage
and question. Every later request is in the episodes' ``trajectory.json`` (``calls``). On an
ESI-Bench question the first request includes the task text the task module supplied.
"""

from __future__ import annotations

import contextlib
from importlib import resources
from pathlib import Path

from eviseek.types import ChatMessage, Trajectory
from eviseek.types.atomic import atomic_folder
from eviseek.types.rundir import RunDir, safe_name


def save_templates(run_dir: str | Path) -> Path:
    """Copy the agents' prompt templates into ``prompts/templates/`` (once per run directory)."""
    target = RunDir(run_dir).prompts_dir / "templates"
    if target.is_dir():
        return target  # a resumed run keeps the templates it started with
    folder = resources.files("eviseek.agents") / "prompts"
    with atomic_folder(target) as tmp:  # another process may publish it first: then that one stays
        for item in sorted(folder.iterdir(), key=lambda i: i.name):
            if item.name.endswith(".j2"):
                (tmp / item.name).write_text(item.read_text(encoding="utf-8"), encoding="utf-8")
    return target


def render_message(message: ChatMessage) -> tuple[str, int]:
    """A message as text, each image replaced by a numbered ``[image N]`` placeholder, and the
    number of images it held."""
    if isinstance(message.content, str):
        return message.content, 0
    out: list[str] = []
    n = 0
    for part in message.content:
        text = getattr(part, "text", None)
        if text is not None:
            out.append(str(text))
        else:
            n += 1
            out.append(f"[image {n}]")
    return "\n".join(out), n


def save_first_prompt(run_dir: str | Path, traj: Trajectory) -> Path | None:
    """Write ``prompts/first/<agent>.md`` from the episode's first call, unless the agent has one."""
    if not traj.calls:
        return None
    call = traj.calls[0]
    folder = RunDir(run_dir).prompts_dir / "first"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{safe_name(traj.agent)}.md"
    lines = [
        f"# {traj.agent}: first request of this run",
        "",
        f"question: {traj.question_id}; stage: {call.stage or '-'}; model: {traj.model or '-'}",
        "",
    ]
    for m in call.messages:
        lines += [f"## {m.role}", "", render_message(m)[0], ""]
    with contextlib.suppress(FileExistsError), open(path, "x", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
        return path
    return None
