"""The viewer opened in a real headless browser: Debian's chromium driven by playwright.

The report folder is moved before it is opened, every request the pages make is recorded, and
screenshots are kept as test artifacts (``$EVISEEK_TEST_ARTIFACTS`` or ``artifacts/`` at the
repository root, which git ignores).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eviseek.viewer import run_viewer_index, write_run_viewer
from tests.viewer.synthetic import QID, SCRIPT_IN_REPLY, TAG_IN_ANSWER

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        # scripts/test.sh (CI) installs chromium, so there a missing browser fails the test instead.
        not CHROMIUM.exists() and not os.environ.get("EVISEEK_FULL_TEST"),
        reason="Debian's chromium is not installed (/usr/bin/chromium); scripts/setup.sh installs it as root",
    ),
]


def _artifacts() -> Path:
    root = os.environ.get("EVISEEK_TEST_ARTIFACTS")
    path = Path(root) if root else Path(__file__).resolve().parents[2] / "artifacts"
    path = path / "viewer"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def moved_report(run_copy: Path, tmp_path: Path) -> Path:
    """The run's viewer, written and then moved away from the run it came from."""
    write_run_viewer(run_copy)
    dest = tmp_path / "moved" / "report"
    shutil.move(str(run_copy / "report"), str(dest))
    shutil.rmtree(run_copy)  # nothing may still point into the run directory
    return dest


def test_viewer_in_chromium(browser: Any, moved_report: Path) -> None:
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    requests: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    index = moved_report / "episodes" / run_viewer_index(Path(".")).name
    page.goto(index.as_uri())
    assert page.locator("[data-testid=episode-row]").count() == 3
    page.locator("[data-testid=episode-row][data-agent=eviseek] a").click()
    page.wait_for_load_state("load")
    assert page.url.endswith(f"/episodes/eviseek/{QID}.html")

    # What the EviSeek page shows: seven frames, two kept, the answer against the truth.
    assert page.locator("[data-testid=frame]").count() == 7
    kept = page.locator("[data-testid=frame][data-kept=true]")
    assert kept.count() == 2 and [kept.nth(i).get_attribute("data-frame-id") for i in range(2)] == ["4", "6"]
    assert page.get_by_test_id("answer").inner_text() == "yes"
    assert page.get_by_test_id("verdict").inner_text().startswith("correct")
    assert page.get_by_test_id("support").inner_text().startswith("full")
    assert page.locator("[data-testid=board-item][data-removed=false]").count() == 2
    assert page.locator("[data-testid=answer-image]").count() == 2
    assert page.locator("[data-testid=subtask]").count() == 3

    # Kept frames are drawn with the evidence border; every image decoded.
    border = page.locator("[data-testid=frame][data-kept=true]").first.evaluate(
        "e => getComputedStyle(e).borderTopColor"
    )
    assert border == "rgb(26, 158, 58)"
    broken = page.evaluate("[...document.images].filter(i => !i.complete || i.naturalWidth === 0).length")
    assert broken == 0 and page.evaluate("document.images.length") == 12
    page.screenshot(path=str(_artifacts() / "eviseek_episode.png"), full_page=True)

    # The Single-model page: markup from the model shows as text and never runs.
    page.locator("[data-testid=links] a", has_text="single_model").click()
    page.wait_for_load_state("load")
    assert page.locator("[data-testid=frame]").count() == 5
    assert page.locator("[data-testid=frame][data-kept=true]").count() == 0
    assert page.locator("[data-testid=board]").count() == 0
    assert page.get_by_test_id("raw-answer").inner_text() == TAG_IN_ANSWER + " no"
    assert SCRIPT_IN_REPLY in page.locator("[data-testid=event]").first.inner_text()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    page.screenshot(path=str(_artifacts() / "single_model_episode.png"), full_page=True)

    # Everything came from the moved folder itself: no network, no path back into the run.
    assert all(url.startswith(("file://", "data:")) for url in requests), requests
    files = [url for url in requests if url.startswith("file://")]
    assert files and all(str(moved_report.as_uri()) in url for url in files), files
    assert errors == []
    page.close()


def test_phone_width_reference_images_placeholders_and_markers(browser: Any, run_copy: Path) -> None:
    from eviseek.eval.datasets import write_questions
    from tests.viewer.conftest import episode
    from tests.viewer.synthetic import alignment_question, frame

    # The run's questions carry reference images saved as question_images/... (as `eval` does),
    # and one frame file is gone, so its page shows a placeholder with a long unbroken path.
    write_questions(run_copy, [alignment_question().model_copy(update={"reference_images": [frame(50)]})])
    ep = episode(run_copy, "eviseek")
    gone = sorted((ep / "images").iterdir())[0]
    gone.unlink()
    write_run_viewer(run_copy)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto((run_copy / "report" / "episodes" / "eviseek" / f"{QID}.html").as_uri())

    refs = page.locator("[data-testid=reference-image] img")
    assert refs.count() == 1 and refs.first.evaluate("i => i.complete && i.naturalWidth > 0")
    holders = page.locator(".placeholder")
    assert holders.count() >= 1 and "file not found" in holders.first.inner_text()
    # Text stays inside its box, and nothing makes the whole page scroll sideways.
    assert page.evaluate(
        "[...document.querySelectorAll('.placeholder')].every(e => e.scrollWidth <= e.clientWidth)"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The subtask table is readable: its goal column is not squeezed to a sliver.
    goal = page.locator("[data-testid=subtask] td.goal").first.evaluate(
        "e => e.getBoundingClientRect().width"
    )
    assert goal >= 120
    # Collapsible model-call sections show an open/closed marker.
    marker = page.locator("summary.call-head").first.evaluate("e => getComputedStyle(e, '::before').content")
    assert marker not in ("none", "normal", "")
    page.locator("[data-testid=subtasks]").screenshot(path=str(_artifacts() / "subtasks_390px.png"))
    page.screenshot(path=str(_artifacts() / "eviseek_episode_390px.png"), full_page=True)
    page.close()
