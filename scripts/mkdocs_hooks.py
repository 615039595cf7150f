"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

Sphinx roles in docstrings. The package's docstrings cross-reference with Sphinx roles
(``:class:`~eviseek.types.Question```), which mkdocstrings' Google-style parser leaves as text:
the API pages showed them raw. After a page is rendered, each role becomes an *optional*
cross-reference of mkdocs-autorefs: a link where the name is documented on the site, the plain
name otherwise (never a warning, so strict builds stay strict about everything else). A short
name (``:class:`Question```) is linked when exactly one documented object ends with it.

The version. The footer of every page names the package version (from
``eviseek._version``), so a reader knows which release the guide describes.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

ROLES = ("class", "func", "meth", "attr", "mod", "data", "exc", "obj", "const", "type")
# A role as Python-Markdown renders it: the role name, then the backticked name as <code>.
RAW_ROLE = re.compile(r":(?:py:)?(?P<role>" + "|".join(ROLES) + r"):<code>(?P<target>[^<]+)</code>")
_AUTOREF = re.compile(r'<autoref identifier="(?P<ident>[^"]+)" optional>(?P<title>.*?)</autoref>', re.S)


def on_config(config: Any) -> Any:
    """Put the package version in every page's footer."""
    sys.path.insert(0, str(Path(config["config_file_path"]).parent / "src"))
    from eviseek._version import __version__

    config["copyright"] = f"eviseek {__version__} (see the Changelog page) · Apache-2.0 licence"
    # Edit links need the repository's address (repo_url, from EVISEEK_REPO_URL); without it the
    # pages get none rather than a broken one.
    if config.get("repo_url"):
        config["edit_uri"] = "edit/main/docs/"
    else:
        config["edit_uri"] = ""
    return config


def to_autoref(match: re.Match[str]) -> str:
    """One raw role as an optional cross-reference (shown as the role would show it)."""
    target = html.unescape(match["target"]).strip()
    short = target.startswith("~")
    ident = target.lstrip("~.").rstrip("()")
    shown = ident.rsplit(".", 1)[-1] if short else ident
    if match["role"] in ("func", "meth"):
        shown += "()"
    return f'<autoref identifier="{html.escape(ident)}" optional><code>{html.escape(shown)}</code></autoref>'


def replace_roles(text: str) -> str:
    """Every raw Sphinx role of rendered HTML as an optional cross-reference."""
    return RAW_ROLE.sub(to_autoref, text)


def on_page_content(html_text: str, **kwargs: Any) -> str:
    """Turn the raw roles of a rendered page into optional cross-references."""
    return replace_roles(html_text)


@event_priority(-40)  # after every page is rendered, before autorefs resolves (-50)
def on_env(env: Any, config: Any, files: Any) -> Any:
    """Resolve short names (``Question``) to the one documented identifier ending with them."""
    autorefs = config["plugins"].get("autorefs")
    urls: dict[str, list[str]] = dict(getattr(autorefs, "_primary_url_map", {}) or {})
    by_suffix: dict[str, set[str]] = {}
    for ident in urls:
        parts = ident.split(".")
        for k in range(1, len(parts)):
            by_suffix.setdefault(".".join(parts[-k:]), set()).add(ident)

    def resolve(match: re.Match[str]) -> str:
        ident, title = match["ident"], match["title"]
        if ident not in urls:
            found = by_suffix.get(ident, set())
            if len(found) != 1:
                return f'<span title="{ident}">{title}</span>'  # not documented here: the plain name
            ident = next(iter(found))
        if len(urls[ident]) > 1:
            # Documented on two pages (a reference page and an API page): autorefs would warn
            # that the target is ambiguous, so show the plain name.
            return f'<span title="{ident}">{title}</span>'
        return f'<autoref identifier="{ident}" optional>{title}</autoref>'

    for file in files:
        page = getattr(file, "page", None)
        if page is not None and page.content:
            page.content = _AUTOREF.sub(resolve, page.content)
    return env
