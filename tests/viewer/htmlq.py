"""Read a written page back: elements by ``data-testid`` with their attributes and text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    """One element: tag, attributes, and the text inside it (entities decoded)."""

    tag: str
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = field(default_factory=list)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.all: list[Element] = []
        self.stack: list[Element] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = Element(tag, {k: v or "" for k, v in attrs})
        if self.stack:
            self.stack[-1].children.append(el)
        self.all.append(el)
        if tag not in _VOID:
            self.stack.append(el)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        for el in self.stack:
            el.text += data


class Page:
    """A parsed page."""

    def __init__(self, html: str) -> None:
        c = _Collector()
        c.feed(html)
        c.close()
        self.html = html
        self.elements = c.all

    def by_testid(self, testid: str, **attrs: str) -> list[Element]:
        """Elements with ``data-testid=testid`` (and the given ``data-*`` attribute values)."""
        out = [e for e in self.elements if e.attrs.get("data-testid") == testid]
        for key, value in attrs.items():
            name = "data-" + key.replace("_", "-")
            out = [e for e in out if e.attrs.get(name) == value]
        return out

    def one(self, testid: str) -> Element:
        """The single element with ``data-testid=testid``."""
        found = self.by_testid(testid)
        assert len(found) == 1, f"expected one [data-testid={testid}], found {len(found)}"
        return found[0]

    def text(self, testid: str) -> str:
        """Whitespace-collapsed text of the single element with this test id."""
        return " ".join(self.one(testid).text.split())

    def tags(self, tag: str) -> list[Element]:
        """All elements with this tag name."""
        return [e for e in self.elements if e.tag == tag]
