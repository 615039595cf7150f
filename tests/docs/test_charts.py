"""The site's charts are drawn from the committed results files, and none is stale.

``scripts/docs_charts.py`` draws ``docs/images/charts/NAME.svg`` from ``docs/results/NAME.json``
and records the results file's SHA-256 in the chart (``dc:source``). A results file rewritten
after a rerun, without the charts redrawn, fails here; so does a chart left without its file.
The diagrams the pages show are drawn by the same command.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from eviseek.eval.results_file import (
    AgentResult,
    Estimate,
    ResultsFile,
    SliceResult,
    file_sha256,
    read_results_file,
)

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
CHARTS = ROOT / "docs" / "images" / "charts"
DIAGRAMS = ROOT / "docs" / "images" / "diagrams"
_SOURCE = re.compile(r"<dc:source>([^<]*)</dc:source>")
_SLOT = re.compile(r"^<!-- chart: [A-Za-z0-9_.-]+ -->\n", flags=re.M)


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_charts", ROOT / "scripts" / "docs_charts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def recorded_source(chart: Path) -> str:
    found = _SOURCE.findall(chart.read_text(encoding="utf-8"))
    return found[0] if len(found) == 1 else ""


def stale_charts(results: Path, charts: Path) -> list[str]:
    """Results files whose chart is missing or was drawn from other contents, and orphan charts."""
    problems = []
    for path in sorted(results.glob("*.json")):
        chart = charts / f"{path.stem}.svg"
        if not chart.exists():
            problems.append(f"{path.name}: no chart {chart.name}")
        elif recorded_source(chart) != f"results file sha256:{file_sha256(path)}":
            problems.append(f"{path.name}: {chart.name} was drawn from other contents")
    for chart in sorted(charts.glob("*.svg")):
        if not (results / f"{chart.stem}.json").exists():
            problems.append(f"{chart.name}: no results file {chart.stem}.json")
    return problems


def test_every_chart_is_current_with_its_results_file() -> None:
    assert sorted(p.stem for p in RESULTS.glob("*.json")), "no results file under docs/results"
    problems = stale_charts(RESULTS, CHARTS)
    assert problems == [], "redraw with: .venv/bin/python scripts/docs_charts.py\n" + "\n".join(problems)


def test_every_results_file_is_valid_and_its_intervals_hold_their_values() -> None:
    for path in sorted(RESULTS.glob("*.json")):
        res = read_results_file(path)
        assert res.agents and res.n_questions > 0, path.name
        for agent in res.agents:
            assert sum(s.n for s in agent.slices) == agent.overall.n == res.n_questions
            for s in [*agent.slices, agent.overall]:
                for est in (s.accuracy, s.C):
                    if est is not None:
                        assert est.low <= est.value <= est.high, (path.name, agent.agent, s.name)


def test_the_chart_command_draws_every_chart_and_diagram_and_the_check_sees_a_stale_one(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    source = sorted(RESULTS.glob("*.json"))[0]
    shutil.copy(source, results / source.name)
    out = tmp_path / "images"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "docs_charts.py"),
            "--results",
            str(results),
            "--out",
            str(out),
            "--pages",
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (out / "diagrams").glob("*.svg")) == sorted(
        p.name for p in DIAGRAMS.glob("*.svg")
    )
    chart = out / "charts" / f"{source.stem}.svg"
    assert stale_charts(results, out / "charts") == []
    # The committed chart is what the command draws from the committed file, byte for byte.
    assert chart.read_bytes() == (CHARTS / chart.name).read_bytes()
    # A rerun changes the results file: its chart is stale until drawn again.
    (results / source.name).write_text(source.read_text(encoding="utf-8").replace('"seed"', '"seed" '))
    assert stale_charts(results, out / "charts") == [
        f"{source.name}: {chart.name} was drawn from other contents"
    ]
    (results / "extra.json").write_text(source.read_text(encoding="utf-8"))
    chart.unlink()
    assert stale_charts(results, out / "charts") == [
        "extra.json: no chart extra.svg",
        f"{source.name}: no chart {chart.name}",
    ]


def test_the_chart_command_refuses_an_empty_or_bad_results_folder(tmp_path: Path) -> None:
    script = [sys.executable, str(ROOT / "scripts" / "docs_charts.py"), "--out", str(tmp_path / "o")]
    empty = subprocess.run([*script, "--results", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert empty.returncode == 1 and empty.stderr.startswith("error: no results file")
    (tmp_path / "bad.json").write_text('{"name": "x"}')
    bad = subprocess.run([*script, "--results", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("page", "image"),
    [
        ("index.md", "images/diagrams/eviseek-loop.svg"),
        ("concepts/agents.md", "../images/diagrams/eviseek-loop.svg"),
        ("concepts/run-directories.md", "../images/diagrams/run-directory.svg"),
        ("tutorials/remote-and-ray.md", "../images/diagrams/scale-out.svg"),
    ],
)
def test_pages_show_the_diagrams(page: str, image: str) -> None:
    assert f"]({image})" in (ROOT / "docs" / page).read_text(encoding="utf-8")


def lead_with_charts(results: Path, results_page: str, readme: str) -> list[str]:
    """What is wrong with how the two pages show the charts of the results files in ``results``:
    every chart on both pages, each results section opening with its chart (the first thing
    after the heading, its slot marker aside, is the image, not a table), no chart shown that
    has no results file."""
    problems = []
    stems = sorted(p.stem for p in results.glob("*.json"))
    for stem in stems:
        if f"](images/charts/{stem}.svg)" not in results_page:
            problems.append(f"docs/results.md does not show {stem}.svg")
        if f"](docs/images/charts/{stem}.svg)" not in readme:
            problems.append(f"README.md does not show {stem}.svg")
    sections = re.split(r"^## ", results_page, flags=re.M)[1:]
    for stem in stems:
        section = next((s for s in sections if f"images/charts/{stem}.svg" in s), None)
        if section is None:
            continue
        body = _SLOT.sub("", section.split("\n", 1)[1], count=1).lstrip()
        if not body.startswith("!["):
            problems.append(f"results section {section.splitlines()[0]!r} does not open with its chart")
    for page, text in (("docs/results.md", results_page), ("README.md", readme)):
        for shown in re.findall(r"\]\((?:docs/)?images/charts/([^)/]+)\.svg\)", text):
            if shown not in stems:
                problems.append(f"{page} shows {shown}.svg, which has no results file")
    return problems


def test_the_results_page_and_the_readme_lead_with_the_charts() -> None:
    """Holds for every results file there is: once docs/results/house-test.json is committed, the
    houses' chart must be on both pages (``scripts/docs_charts.py`` puts it in their slots)."""
    results_page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert lead_with_charts(RESULTS, results_page, readme) == []


def test_both_pages_hold_a_chart_slot_for_every_split_the_results_script_knows() -> None:
    """``scripts/results_file.py --preset P`` writes docs/results/P.json (':' as '-'); both pages
    hold the slot its chart goes into, in the section about that split."""
    spec = importlib.util.spec_from_file_location("results_file_script", ROOT / "scripts" / "results_file.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results_page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for preset in module.PRESETS:
        slot = f"<!-- chart: {preset.replace(':', '-')} -->"
        assert readme.count(slot) == 1, (preset, "README.md")
        section = next(s for s in re.split(r"^## ", results_page, flags=re.M)[1:] if slot in s)
        assert preset in section.splitlines()[0] or preset.split(":")[0] in section.splitlines()[0].lower()


def test_the_chart_command_fills_the_slots_of_a_new_results_file_and_empties_a_gone_ones(
    tmp_path: Path,
) -> None:
    """The lead's step after a complete house:test run: write its results file, run the chart
    command, commit. The pages then show the chart (and pass the check above); a results file
    taken away takes its image off the pages, its slot kept."""
    docs = tmp_path / "docs"
    results = docs / "results"
    results.mkdir(parents=True)
    shutil.copy(RESULTS / "tabletop-paper.json", results / "tabletop-paper.json")
    # A house results file, as scripts/results_file.py --preset house:test writes one (its slices
    # are the question kinds the run held, whatever they are).
    house = read_results_file(RESULTS / "tabletop-paper.json").model_copy(
        update={"name": "house:test", "slice_level": "subcategory", "c_metric": "express"}
    )
    (results / "house-test.json").write_text(house.model_dump_json(indent=1) + "\n", encoding="utf-8")
    page, readme = docs / "results.md", tmp_path / "README.md"
    # The pages as they are before the houses' first complete run: their slot, no image yet.
    no_image = re.compile(r"(<!-- chart: house-test -->\n)!\[[^\n]*\n\n?")
    original_page = no_image.sub(r"\1\n", (ROOT / "docs" / "results.md").read_text(encoding="utf-8"))
    original_readme = no_image.sub(r"\1\n", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert "chart: house-test" in original_page and "house-test.svg" not in original_page
    page.write_text(original_page, encoding="utf-8")
    readme.write_text(original_readme, encoding="utf-8")
    command = [
        sys.executable,
        str(ROOT / "scripts" / "docs_charts.py"),
        "--results",
        str(results),
        "--out",
        str(docs / "images"),
        "--pages",
        str(page),
        str(readme),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert f"{page}: shows images/charts/house-test.svg" in proc.stdout
    assert f"{readme}: shows docs/images/charts/house-test.svg" in proc.stdout
    assert lead_with_charts(results, page.read_text(), readme.read_text()) == []
    assert "house:test: accuracy and C per question kind for Passive, Blind" in page.read_text()
    # Drawing again changes nothing.
    before = (page.read_text(), readme.read_text())
    proc = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0 and (page.read_text(), readme.read_text()) == before
    # Without the house results file (and its chart) the pages are as they were.
    (results / "house-test.json").unlink()
    (docs / "images" / "charts" / "house-test.svg").unlink()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert (page.read_text(), readme.read_text()) == (original_page, original_readme)
    assert lead_with_charts(results, page.read_text(), readme.read_text()) == []


def test_the_drawing_is_deterministic(tmp_path: Path) -> None:
    charts = _script()
    for name, draw in charts.DIAGRAMS.items():
        draw(tmp_path / "a" / name)
        draw(tmp_path / "b" / name)
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert (tmp_path / "a" / name).read_bytes() == (DIAGRAMS / name).read_bytes(), f"redraw {name}"


def _table_rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the first Markdown table whose header starts with ``first_header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header}"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _agent_of(cell: str) -> str:
    named = re.findall(r"`([^`]+)`", cell)
    if named:
        return named[0]
    return "eviseek:paper" if "paper-exact" in cell else cell.split(" ")[0]


def test_the_tabletop_numbers_the_pages_quote_are_the_results_files() -> None:
    """The README's tabletop table and the results page's per-family table quote
    docs/results/tabletop-paper.json: a rerun that rewrites the file fails here until the
    pages say the same."""
    res = read_results_file(RESULTS / "tabletop-paper.json")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = {
        _agent_of(row[0]): (row[1], row[2])
        for row in _table_rows(readme, "agent (reference policy, `tabletop:paper`")
    }
    assert set(quoted) == {a.agent for a in res.agents}
    for agent in res.agents:
        assert agent.overall.C is not None
        assert quoted[agent.agent] == (f"{agent.overall.accuracy.value:.1f}", f"{agent.overall.C.value:.1f}")
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    order = ["passive", "blind", "single-model", "eviseek", "eviseek:paper"]
    rows = {row[0].strip("*"): row for row in _table_rows(page, "family | #Q | passive")}
    for i, name in enumerate([s.name for s in res.agents[0].slices] + ["Overall"]):
        row = rows[name]
        slices = [a.overall if name == "Overall" else a.slices[i] for a in map(res.agent, order)]
        assert row[1] == str(slices[0].n), name
        assert row[2:7] == [f"{s.accuracy.value:.1f}" for s in slices], name
    support = {_agent_of(row[0]): (row[1], row[2]) for row in _table_rows(page, "agent | accuracy | C")}
    assert support == quoted


def _table(text: str, first_header: str) -> tuple[list[str], list[list[str]]]:
    """The header cells and body rows of the first table whose header starts with ``first_header``."""
    line = next(x for x in text.splitlines() if x.startswith(f"| {first_header}"))
    return [c.strip() for c in line.strip().strip("|").split("|")], _table_rows(text, first_header)


def house_quote_problems(res: ResultsFile, readme: str, results_page: str) -> list[str]:
    """Where the README's house table or the results page's house table quotes another exact
    accuracy or C than the results file (a dash where the file has no C)."""

    def shown(est: Estimate | None) -> str:
        return "—" if est is None else f"{est.value:.1f}"

    problems = []
    for page, first, key in (
        ("README.md", "agent (reference policy, `house:test`", lambda row: _agent_of(row[0])),
        ("docs/results.md", "Method | C | C*", lambda row: row[0]),
    ):
        try:
            header, rows = _table(readme if page == "README.md" else results_page, first)
            exact, c = header.index("exact %"), header.index("C")
        except (StopIteration, ValueError):
            problems.append(f"{page}: no house table whose header starts '| {first}' with 'exact %' and 'C'")
            continue
        quoted = {key(row): (row[exact], row[c]) for row in rows}
        for agent in res.agents:
            name = agent.agent if page == "README.md" else agent.label
            want = (shown(agent.overall.accuracy), shown(agent.overall.C))
            if quoted.pop(name, None) != want:
                problems.append(f"{page}: {name} should read exact {want[0]}, C {want[1]}")
        problems += [f"{page}: {name} is not in the results file" for name in quoted]
    return problems


def test_the_house_numbers_the_pages_quote_are_the_results_file() -> None:
    """Once docs/results/house-test.json is committed, the README's and the results page's house
    tables must quote its exact accuracy and C (rewrite them from the file after a rerun)."""
    path = RESULTS / "house-test.json"
    if not path.exists():
        pytest.skip("no house:test results file yet (scripts/results_file.py --preset house:test)")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert house_quote_problems(read_results_file(path), readme, page) == []


def test_the_house_quote_check_reads_both_tables() -> None:
    """The check above, on a results file holding the numbers both pages quote today: it agrees,
    and it names a number that differs and an agent the file lacks."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    header, rows = _table(readme, "agent (reference policy, `house:test`")
    exact, c = header.index("exact %"), header.index("C")
    labels = {row[0]: row for row in _table(page, "Method | C | C*")[1]}

    def est(cell: str) -> Estimate | None:
        return None if cell == "—" else Estimate(value=float(cell), low=0.0, high=100.0)

    agents = []
    for row, label in zip(rows, labels, strict=True):  # both tables list the agents in one order
        overall = SliceResult(name="Overall", n=200, correct=0, accuracy=est(row[exact]), C=est(row[c]))
        agents.append(AgentResult(agent=_agent_of(row[0]), label=label, slices=[], overall=overall))
    res = read_results_file(RESULTS / "tabletop-paper.json").model_copy(
        update={"name": "house:test", "c_metric": "express", "slice_level": "subcategory", "agents": agents}
    )
    assert house_quote_problems(res, readme, page) == []
    first = agents[1]
    moved = first.overall.model_copy(update={"accuracy": Estimate(value=99.9, low=0.0, high=100.0)})
    changed = res.model_copy(
        update={"agents": [agents[0], first.model_copy(update={"overall": moved}), *agents[2:]]}
    )
    assert house_quote_problems(changed, readme, page) == [
        f"README.md: {first.agent} should read exact 99.9, C {first.overall.C.value:.1f}",
        f"docs/results.md: {first.label} should read exact 99.9, C {first.overall.C.value:.1f}",
    ]
    assert house_quote_problems(res, "# no table here\n", page) == [
        "README.md: no house table whose header starts '| agent (reference policy, `house:test`' "
        "with 'exact %' and 'C'"
    ]
    fewer = res.model_copy(update={"agents": agents[1:]})
    assert house_quote_problems(fewer, readme, page) == [
        f"README.md: {agents[0].agent} is not in the results file",
        f"docs/results.md: {agents[0].label} is not in the results file",
    ]
