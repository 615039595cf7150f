"""The documentation site builds in strict mode and every page opens in Chromium without errors.

Strict mode (``mkdocs.yml``) turns every warning into an error: a broken link or anchor, a page
left out of the nav, a snippet that names a missing file, a docstring mkdocstrings cannot read.
The built pages are then served on 127.0.0.1 and opened one by one in Debian's chromium; a
console error, an uncaught exception or a failed request fails the test.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eviseek import __version__
from tests.docs.site import CHROMIUM, REPO_URL, ROOT, build_site, serve

# A Sphinx role left as text by the docstring renderer, as it shows in HTML and on screen.
RAW_ROLE_HTML = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|type):(?:<code>|`)")
RAW_ROLE_TEXT = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|type):`?[~A-Za-z_]")


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
        "changelog.html",
    ):
        assert page in pages
    # The API pages hold the docstrings, not just their headings.
    api = (site / "reference" / "api" / "eval.html").read_text(encoding="utf-8")
    assert "paired_bootstrap_ci" in api and "McNemar" in api
    # The search index holds the generated CLI reference, flags included.
    index = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "retry-failed" in index


def test_no_page_shows_a_raw_sphinx_role(site: Path) -> None:
    raw = {
        p.relative_to(site).as_posix(): len(RAW_ROLE_HTML.findall(p.read_text(encoding="utf-8")))
        for p in site.rglob("*.html")
    }
    assert {page: n for page, n in raw.items() if n} == {}
    # The roles became links where the name is documented on the site.
    api = (site / "reference" / "api" / "types.html").read_text(encoding="utf-8")
    assert 'class="autorefs autorefs-internal"' in api


def test_the_home_page_says_what_it_is_and_where_to_go(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "seek evidence before they answer" in home
    assert 'src="images/diagrams/eviseek-loop.svg"' in home
    shown = html.unescape(re.sub(r"<[^>]+>", "", home))  # code is highlighted token by token
    for command in ("bash scripts/setup.sh", ". .venv/bin/activate", "eviseek demo"):
        assert command in shown
    for way in (
        "tutorials/evaluate-your-vlm.html",
        "tutorials/esibench.html",
        "tutorials/train-autotool.html",
        "tutorials/plugins.html",
    ):
        assert f'href="{way}"' in home


def test_every_page_names_the_version_and_links_the_repository(site: Path) -> None:
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(site).as_posix()
        assert f"eviseek {__version__}" in text, rel
        assert f'href="{REPO_URL}"' in text, rel
        source = rel.removesuffix(".html") + ".md"
        assert f'href="{REPO_URL}/edit/main/docs/{source}"' in text, rel
    changelog = (site / "changelog.html").read_text(encoding="utf-8")
    assert f'<h2 id="{__version__.replace(".", "")}-unreleased">{__version__} (unreleased)' in changelog
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence


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
            # What a reader sees: no role left as text (the API pages showed 81).
            text = page.evaluate("document.body.innerText")
            problems += [f"{rel}: raw role {m}" for m in RAW_ROLE_TEXT.findall(text)]
        page.close()
    assert problems == []
    assert len(pages) >= 30


@pytest.mark.browser
def test_the_home_page_says_it_all_in_one_screen(site: Path, browser: Any) -> None:
    """At 1280x900, a laptop's browser window, the whole home page (the four ways in included)
    is in view without scrolling; the fourth card used to be cut at the bottom."""
    with serve(site) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(base + "index.html", wait_until="load")
        seen = page.evaluate(
            """() => {
              const content = document.querySelector('.md-content article');
              const bottoms = [...content.querySelectorAll('*')]
                .filter(e => e.getClientRects().length)
                .map(e => e.getBoundingClientRect().bottom);
              const cards = [...document.querySelectorAll('.grid.cards li')]
                .map(e => e.getBoundingClientRect());
              return {bottom: Math.max(...bottoms), cards: cards.map(r => [r.top, r.bottom]),
                      height: window.innerHeight, scrollY: window.scrollY};
            }"""
        )
        page.close()
    assert seen["scrollY"] == 0 and len(seen["cards"]) == 4
    assert all(bottom <= seen["height"] for _, bottom in seen["cards"]), seen
    assert seen["bottom"] <= seen["height"], seen
