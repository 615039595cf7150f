"""``scripts/tabletop_passive_check.py`` on a real Passive run of the reference policy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import binomtest

from eviseek.envs.tabletop.generate import generate_questions
from eviseek.eval.rundir import load_run
from eviseek.types import Question
from eviseek.types.question_file import GENERATED_IMAGE_DIR, write_questions

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def run_and_check(
    tmp_path: Path, qs: list[Question], agent: str
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Evaluate ``agent`` on ``qs`` with the reference policy, then run the checker on that run."""
    write_questions(tmp_path / "set", qs, image_dir=GENERATED_IMAGE_DIR)
    run = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-m", "eviseek", "eval", "--agents", agent, "--model", "reference",
         "--dataset", str(tmp_path / "set"), "--out", str(run), "-c", "1", "--env-workers", "0"],
        check=True, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "tabletop_passive_check.py"), str(run)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    return run, out


def test_each_subcategory_is_tested_against_its_chance(tmp_path: Path) -> None:
    qs = generate_questions(4, 17, subcategories=["spatial_distance", "physical_contact"])
    run, out = run_and_check(tmp_path, qs, "passive")
    results = load_run(run).results["passive"]
    for sub, chance in (("Spatial Distance", 0.5), ("Physical Contact", 0.5)):
        group = [q for q in qs if q.subcategory == sub]
        hits = sum(bool(results[q.id].correct) for q in group)
        pval = binomtest(hits, len(group), chance, alternative="greater").pvalue
        assert f"{sub}: passive {hits}/{len(group)}, chance 2.0 (p={pval:.4f})" in out.stdout, out.stdout
    assert out.returncode == (1 if "FAIL" in out.stdout else 0), out.stdout


def test_an_agent_missing_from_the_run_is_one_error_line(tmp_path: Path) -> None:
    _, out = run_and_check(tmp_path, generate_questions(1, 17, subcategories=["physical_contact"]), "blind")
    assert out.returncode == 1
    assert out.stdout.strip().startswith("error: the run has no results of agent 'passive'")
