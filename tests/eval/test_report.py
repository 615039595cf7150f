"""Reports built from synthetic run directories: tables, self-contained HTML, CSV, CLI."""

from __future__ import annotations

import csv
import importlib.util
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.errors import ConfigError
from eviseek.eval.judge import SupportGrade
from eviseek.eval.report import ReportData, build_report
from eviseek.eval.rundir import load_run
from eviseek.types import EpisodeResult, Trajectory

from .synthetic import make_questions, write_run

AGENTS = ["passive", "single-model", "eviseek"]


def _verdict(agent: str, i: int) -> tuple[bool | None, float | None, str | None]:
    if agent == "passive":
        return i % 3 == 0, (0.5 if i % 2 else 1.0), None
    if agent == "eviseek":
        return (
            i % 4 != 0,
            (1.0 if i % 5 else 0.0),
            ("TimeoutError: episode exceeded 600 s" if i == 7 else None),
        )
    return i % 2 == 0, None, None


@pytest.fixture
def run_one(tmp_path: Path) -> Path:
    return write_run(
        tmp_path / "run_qwen",
        "openai/qwen3-vl-32b",
        AGENTS,
        make_questions(24),
        _verdict,
        skip={("eviseek", "q005")},
    )


class _Refs(HTMLParser):
    """Collects every URL-bearing attribute and the tags that could pull in outside resources."""

    def __init__(self) -> None:
        super().__init__()
        self.srcs: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name == "src" and value is not None:
                self.srcs.append(value)
            if name == "href" and value is not None:
                self.hrefs.append(value)


def _expected_acc(agent: str, ids: list[int], skip: set[int] = frozenset()) -> float:  # type: ignore[assignment]
    right = 0
    for i in ids:
        correct, _, error = _verdict(agent, i)
        right += bool(correct) and error is None and i not in skip
    return 100.0 * right / len(ids)


def test_single_run_report_tables_files_and_self_contained_html(run_one: Path) -> None:
    files = build_report([run_one], n_resamples=2_000, episodes=True)
    out = run_one / "report"
    assert files.out_dir == out
    for name in ("index.html", "report.md", "results.csv", "summary.json"):
        assert (out / name).is_file()

    # Table 1 by hand: families cycle over 4 subcategories (two of them Perceptual Grounding).
    fam = {r.name: r for r in files.data.accuracy if r.level in ("family", "overall")}
    pg = [i for i in range(24) if i % 4 in (0, 1)]
    assert fam["Perceptual Grounding"].n["eviseek"] == 12
    assert fam["Perceptual Grounding"].acc["passive"] == pytest.approx(_expected_acc("passive", pg))
    assert fam["Overall"].acc["eviseek"] == pytest.approx(_expected_acc("eviseek", list(range(24)), {5}))
    assert fam["Overall"].acc["single-model"] == pytest.approx(50.0)

    md = (out / "report.md").read_text()
    assert "| Category | #Q | passive | single-model | eviseek |" in md
    best = max(fam["Overall"].acc.values())
    assert f"**{best:.1f}**" in md
    assert "| **Overall** | 24 |" in md
    assert "### Correctness and visual-support decomposition (%)" in md
    assert "single-model | n/a | n/a | n/a | n/a | n/a | n/a | 0/24 (none)" in md
    assert "### Mean resource use per episode" in md
    assert "| eviseek | 9.00 | 6.00 | 3,100 |" in md
    assert "23/24 (1 failed)" in md
    assert "### Paired comparisons" in md and "| eviseek | passive | 24 |" in md

    # Support decomposition: passive fully graded, parts sum to 100.
    overall = next(r for r in files.data.support if r.level == "overall")
    d = overall.parts["passive"]
    assert d.complete and pytest.approx(100.0) == d.C + d.GW + d.P + d.N
    assert not overall.parts["single-model"].available

    html = (out / "index.html").read_text()
    refs = _Refs()
    refs.feed(html)
    assert "script" not in refs.tags and "link" not in refs.tags and "iframe" not in refs.tags
    assert refs.srcs and all(s.startswith("data:image/png;base64,") for s in refs.srcs)
    assert not any(h.startswith(("http:", "https:", "//")) for h in refs.hrefs)
    assert "<style>" in html and "@import" not in html and "url(" not in html
    assert 'id="accuracy-family"' in html and 'id="paired"' in html and 'id="support-subcategory"' in html
    # Episode links point at viewer pages that exist next to the report (when the viewer exists).
    episode_links = [h for h in refs.hrefs if h.startswith("episodes/")]
    if importlib.util.find_spec("eviseek.viewer") is not None:
        assert len(files.episode_pages) == 3 * 24 - 1
        assert len(episode_links) == 3 * 24 - 1
        assert all((out / h).is_file() for h in episode_links)
        assert (out / "episodes" / "eviseek" / "q000.html").is_file()
    else:
        assert not episode_links and any("viewer" in w for w in files.data.warnings)

    with open(out / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3 * 24
    by_key = {(r["agent"], r["question_id"]): r for r in rows}
    assert by_key[("eviseek", "q005")]["status"] == "missing"
    assert by_key[("eviseek", "q007")]["status"] == "failed" and by_key[("eviseek", "q007")]["correct"] == "0"
    assert "TimeoutError" in by_key[("eviseek", "q007")]["error"]
    assert by_key[("single-model", "q000")]["support"] == ""
    summary = ReportData.model_validate_json((out / "summary.json").read_text())
    assert summary.settings["n_resamples"] == 2_000
    assert [s.label for s in summary.systems] == AGENTS


def test_two_runs_side_by_side(tmp_path: Path) -> None:
    qs = make_questions(16)
    a = write_run(tmp_path / "a", "openai/qwen3-vl-32b", AGENTS, qs, _verdict)
    b = write_run(
        tmp_path / "b", "openai/gemini-3.1-pro", AGENTS, qs, lambda agent, i: (i % 3 != 1, 1.0, None)
    )
    with pytest.raises(ValueError, match="--out"):
        build_report([a, b])
    with pytest.raises(ValueError, match="twice"):
        build_report([a, a], tmp_path / "cmp")
    files = build_report([a, b], tmp_path / "cmp", n_resamples=1_000, episodes=False)
    labels = [s.label for s in files.data.systems]
    assert labels[0] == "qwen3-vl-32b / passive" and labels[-1] == "gemini-3.1-pro / eviseek"
    pairs = [(t.a, t.b) for t in files.data.comparisons]
    # The paper's family: EviSeek against each baseline per backbone, four comparisons.
    assert pairs == [
        ("qwen3-vl-32b / eviseek", "qwen3-vl-32b / passive"),
        ("qwen3-vl-32b / eviseek", "qwen3-vl-32b / single-model"),
        ("gemini-3.1-pro / eviseek", "gemini-3.1-pro / passive"),
        ("gemini-3.1-pro / eviseek", "gemini-3.1-pro / single-model"),
    ]
    assert files.data.settings["family"] == "paper" and files.data.settings["seed"] == 20261012
    assert (
        "seed 20261012" in files.markdown.read_text() and "family: the paper's" in files.markdown.read_text()
    )
    assert "| Method | Acc | Tokens / step | Expl. steps | Steps / decision |" in files.markdown.read_text()
    assert "Cost per step" in files.html.read_text()
    wide = build_report([a, b], tmp_path / "all", n_resamples=200, episodes=False, compare="all")
    wide_pairs = [(t.a, t.b) for t in wide.data.comparisons]
    assert ("gemini-3.1-pro / eviseek", "qwen3-vl-32b / eviseek") in wide_pairs
    assert len(wide_pairs) == 3 + 3 + 3
    assert all(t.p_holm is not None for t in files.data.comparisons)
    html = files.html.read_text()
    assert '<th colspan="3" class="group">qwen3-vl-32b</th>' in html
    assert '<th colspan="3" class="group">gemini-3.1-pro</th>' in html
    md = files.markdown.read_text()
    assert "| Category | #Q | qwen3-vl-32b / passive |" in md
    assert "*qwen3-vl-32b*" in md  # resource rows grouped by run
    # Bold marks the best agent per run, not across runs.
    family = files.tables["accuracy-family"]
    overall_cells = family.rows[-1][2:]
    assert sum(c.bold for c in overall_cells[:3]) >= 1 and sum(c.bold for c in overall_cells[3:]) >= 1


def test_judge_grades_fill_missing_support_and_unscored_answers_are_scored(tmp_path: Path) -> None:
    qs = make_questions(8)
    run = write_run(tmp_path / "r", "openai/m", ["eviseek"], qs, lambda agent, i: (True, None, None))
    # One result saved unscored (correct=None): the report scores it with eviseek.answers.
    ep = run / "episodes" / "eviseek" / "q001"
    traj = Trajectory.load(ep)
    assert traj.result is not None
    traj.result = traj.result.model_copy(update={"correct": None, "answer": None, "raw_answer": "(B) right"})
    traj.save(ep)
    with open(run / "support.jsonl", "w") as fh:
        for i, grade in enumerate([1.0, 0.5, None, 0.0]):
            fh.write(
                SupportGrade(agent="eviseek", question_id=f"q{i:03d}", grade=grade).model_dump_json() + "\n"
            )
        fh.write('{"agent": "eviseek", "question_id": "q00')  # a torn line is ignored
    data = load_run(run)
    assert data.results["eviseek"]["q001"].correct is True
    assert data.results["eviseek"]["q001"].answer == "right"
    assert any("scored offline" in w for w in data.warnings)
    assert data.support_sources["eviseek"] == {"environment": 0, "judge": 3, "empty": 0, "none": 5}
    files = build_report([run], n_resamples=500, episodes=False)
    d = next(r for r in files.data.support if r.level == "overall").parts["eviseek"]
    assert (d.n, d.n_graded) == (8, 3)
    assert pytest.approx(100 * 1.5 / 3) == d.C
    assert "3/8 (partial)" in files.markdown.read_text()


def test_results_store_is_preferred_over_trajectories(tmp_path: Path) -> None:
    import eviseek.eval.store as store_mod

    qs = make_questions(4)
    run = write_run(tmp_path / "r", "openai/m", ["passive"], qs, lambda agent, i: (False, None, None))
    with store_mod.ResultsStore(run) as store:
        for q in qs:
            store.add(EpisodeResult(question_id=q.id, agent="passive", answer="left", correct=True))
    data = load_run(run)
    assert all(r.correct for r in data.results["passive"].values())
    assert not any("trajectories" in w for w in data.warnings)


def test_bad_run_directories_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"run\.json is missing"):
        load_run(tmp_path / "empty")
    (tmp_path / "empty" / "run.json").write_text(json.dumps({"agents": ["a"], "model": "m"}))
    with pytest.raises(ValueError, match="no finished episodes"):
        load_run(tmp_path / "empty")


def test_report_cli(run_one: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "cli-report"
    res = runner.invoke(
        app, ["report", str(run_one), "--out", str(out), "--resamples", "1000", "--no-episodes"]
    )
    assert res.exit_code == 0, res.output
    assert "eviseek" in res.output and "accuracy" in res.output
    assert "Holm family paper" in res.output and "bootstrap seed 20261012" in res.output
    mine = runner.invoke(
        app,
        [
            "report",
            str(run_one),
            "--out",
            str(tmp_path / "mine"),
            "--resamples",
            "100",
            "--no-episodes",
            "--compare",
            "single-model:passive",
            "--seed",
            "7",
        ],
    )
    assert mine.exit_code == 0, mine.output
    assert "paired comparisons: 1, Holm family custom" in mine.output and "seed 7" in mine.output
    wrong = runner.invoke(
        app, ["report", str(run_one), "--out", str(tmp_path / "w"), "--compare", "eviseek:nope"]
    )
    assert wrong.exit_code == 2 and "not two known systems" in wrong.output
    assert (out / "index.html").is_file() and not (out / "episodes").exists()
    bad = runner.invoke(app, ["report", str(tmp_path / "missing")])
    assert bad.exit_code == 1
    assert "does not exist" in bad.output


def test_report_of_a_real_eval_run_matches_the_live_summary(tmp_path: Path) -> None:
    import eviseek.eval.runner as runner_mod
    from eviseek.eval.config import RunConfig

    from . import toy_plugin

    special = {"q002": {"agent_crash": True}, "q004": {"scene": {"env_crash": True}}}
    data = toy_plugin.write_questions_jsonl(
        tmp_path / "q.jsonl", toy_plugin.make_questions(10, special=special)
    )
    config = RunConfig.model_validate(
        {
            "agents": ["toy-seeker", "toy-passive"],
            "model": "toy/oracle",
            "dataset": str(data),
            "env_workers": 0,
            "concurrency": 4,
            "timeout_s": 5.0,
            "plugins": [str(Path(toy_plugin.__file__).resolve())],
        }
    )
    run = tmp_path / "run"
    live = runner_mod.run_eval(config, run, progress=False)
    files = build_report([run], n_resamples=1_000)
    overall = next(r for r in files.data.accuracy if r.level == "overall")
    for agent in ("toy-seeker", "toy-passive"):
        summary = live.summary.agent(agent)
        assert overall.n[agent] == summary.overall.n == 10
        assert overall.acc[agent] == pytest.approx(100.0 * summary.overall.correct / summary.overall.n)
        assert files.data.resources[agent].calls == pytest.approx(summary.cost.calls)
    assert files.data.resources["toy-seeker"].n_failed == 2
    # The toy environment grades support exactly, so the decomposition is complete.
    parts = next(r for r in files.data.support if r.level == "overall").parts["toy-seeker"]
    assert parts.complete and parts.C is not None
    sources = load_run(run).support_sources["toy-seeker"]
    assert sources["empty"] == 2 and sources["none"] == 0
    assert len(files.episode_pages) == 20 or importlib.util.find_spec("eviseek.viewer") is None


def test_report_episode_pages_find_the_questions_reference_images(tmp_path: Path) -> None:
    # `eviseek eval` saves reference images beside questions.jsonl as question_images/...; the
    # report's episode pages must find them there, not in each episode folder.
    import numpy as np

    from eviseek.eval.datasets import write_questions
    from eviseek.types import Image

    ref = Image.from_array(np.full((40, 60, 3), 200, dtype=np.uint8))
    qs = [q.model_copy(update={"reference_images": [ref]}) for q in make_questions(2)]
    run = write_run(tmp_path / "r", "openai/m", ["passive"], qs, lambda agent, i: (True, None, None))
    write_questions(run, qs)
    assert '"question_images/' in (run / "questions.jsonl").read_text()
    (path,) = {str(q.reference_images[0].path) for q in load_run(run).questions}
    assert Path(path).is_absolute() and Path(path).is_file()
    files = build_report([run], tmp_path / "rep", n_resamples=100, episodes=True)
    assert len(files.episode_pages) == 2
    for page in files.episode_pages:
        html = Path(page).read_text(encoding="utf-8")
        assert 'data-testid="reference-image"' in html and "file not found" not in html


def test_a_run_with_the_blind_agent_reports_its_exact_and_soft_scores(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "run_blind", "reference/tabletop", ["blind", "eviseek"], make_questions(8), _verdict
    )
    files = build_report([run], n_resamples=200)
    md = (files.out_dir / "report.md").read_text(encoding="utf-8")
    assert "Blind baseline beside every agent, by subcategory" in md
    assert "blind exact" in md and "blind soft" in md and "eviseek soft" in md
    html = (files.out_dir / "index.html").read_text(encoding="utf-8")
    assert "blind soft" in html
    plain = write_run(tmp_path / "run_plain", "reference/tabletop", ["eviseek"], make_questions(8), _verdict)
    assert "Blind baseline" not in (build_report([plain], n_resamples=200).out_dir / "report.md").read_text()
