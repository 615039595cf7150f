"""The documentation site builds in strict mode and every page opens in Chromium without errors.

Strict mode (``mkdocs.yml``) turns every warning into an error: a broken link or anchor, a page
left out of the nav, a snippet that names a missing file, a docstring mkdocstrings cannot read.
The built pages are then served on 127.0.0.1 and opened one by one in Debian's chromium; a
console error, an uncaught exception or a failed request fails the test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.docs.site import CHROMIUM, build_site, serve


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("site")
    proc = build_site(dest)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return dest


def test_site_builds_in_strict_mode(site: Path) -> None:
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    # The sections the guide promises, each a page of the build.
    for page in (
        "index.html",
        "getting-started.html",
        "tutorials/evaluate-your-vlm.html",
        "concepts/reference-policy.html",
        "reference/cli.html",
        "reference/api/types.html",
        "results.html",
        "fidelity.html",
    ):
        assert page in pages
    # The API pages hold the docstrings, not just their headings.
    api = (site / "reference" / "api" / "eval.html").read_text(encoding="utf-8")
    assert "paired_bootstrap_ci" in api and "McNemar" in api
    # The search index holds the generated CLI reference, flags included.
    index = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "retry-failed" in index


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail("Debian's chromium is missing (/usr/bin/chromium); scripts/setup.sh installs it")
        pytest.skip(
            "Debian's chromium is not installed (/usr/bin/chromium); scripts/setup.sh installs it as root"
        )
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


@pytest.mark.browser
def test_every_page_opens_in_chromium_without_errors(site: Path, browser: Any) -> None:
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html")
    problems: list[str] = []
    with serve(site) as base:
        page = browser.new_page()
        current = {"url": ""}
        page.on(
            "console",
            lambda msg: (
                problems.append(f"{current['url']}: console {msg.type}: {msg.text}")
                if msg.type == "error"
                else None
            ),
        )
        page.on("pageerror", lambda exc: problems.append(f"{current['url']}: {exc}"))
        # A request cut short because the test moved on to the next page (net::ERR_ABORTED) is not
        # a fault of the page; any other failure, and any error status, is.
        page.on(
            "requestfailed",
            lambda req: (
                problems.append(f"{current['url']}: failed request {req.url} ({req.failure})")
                if "ERR_ABORTED" not in (req.failure or "")
                else None
            ),
        )
        page.on(
            "response",
            lambda res: (
                problems.append(f"{current['url']}: HTTP {res.status} for {res.url}")
                if res.status >= 400
                else None
            ),
        )
        for rel in pages:
            current["url"] = rel
            response = page.goto(base + rel, wait_until="load")
            assert response is not None and response.ok, rel
            # Every image on the page decoded (screenshots and plots are part of the guide).
            broken = page.evaluate(
                "[...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
            )
            problems += [f"{rel}: broken image {src}" for src in broken]
        page.close()
    assert problems == []
    assert len(pages) >= 30
