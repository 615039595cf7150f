"""Every run directory keeps the exact prompt templates it used and each agent's first request."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path

from eviseek.eval.prompt_record import save_first_prompt, save_templates
from eviseek.eval.runner import run_eval
from eviseek.types import Question
from tests.agents.conftest import question  # noqa: F401  (the fixture)
from tests.agents.eviseek.test_agent import run, standard_script
from tests.eval.test_runner import _config, dataset  # noqa: F401  (the fixture)


def test_a_run_keeps_its_templates(tmp_path: Path, dataset: Path) -> None:  # noqa: F811
    out = tmp_path / "run"
    run_eval(_config(dataset, timeout_s=2.0), out, progress=False)
    kept = out / "prompts" / "templates"
    shipped = {
        p.name: p.read_text(encoding="utf-8")
        for p in (resources.files("eviseek.agents") / "prompts").iterdir()
        if p.name.endswith(".j2")
    }
    assert {p.name: p.read_text(encoding="utf-8") for p in kept.iterdir()} == shipped
    assert "seek.j2" in shipped and "forced_choice.j2" in shipped
    # A resumed run keeps the templates it started with.
    (kept / "seek.j2").write_text("as it was", encoding="utf-8")
    save_templates(out)
    assert (kept / "seek.j2").read_text(encoding="utf-8") == "as it was"


def test_the_first_request_of_each_agent_is_written_once(tmp_path: Path, question: Question) -> None:  # noqa: F811
    traj = asyncio.run(run(question, standard_script()))
    path = save_first_prompt(tmp_path, traj)
    assert path == tmp_path / "prompts" / "first" / "eviseek.md"
    text = path.read_text(encoding="utf-8")
    assert "stage: demands" in text and "## system" in text and "## user" in text and "[image 1]" in text
    assert question.text in text
    again = asyncio.run(run(question.model_copy(update={"id": "other"}), standard_script()))
    assert save_first_prompt(tmp_path, again) is None and path.read_text(encoding="utf-8") == text
