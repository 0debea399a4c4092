"""Check the built site's links offline: every internal link and anchor must exist; external links
are listed, never fetched (CI reaches no web site, and a page's correctness should not depend on
another's uptime).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

LINK_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src", "iframe": "src"}
NOT_CHECKED = ("javascript:", "data:")
# The theme copies its Jinja macro files (``webpack-macros.html``) into _static/: templates, not pages.
NOT_PAGES = "_static/"


class _Page(HTMLParser):
    """The ids (anchors) a page defines and the links it makes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("id", "name") if tag == "a" else ("id",):
            if values.get(name):
                self.ids.add(values[name])
        target = values.get(LINK_ATTRIBUTES.get(tag, ""))
        if target is not None and (tag != "link" or "preconnect" not in (values.get("rel") or "")):
            self.links.append(target.strip())


@dataclass
class LinkReport:
    """Broken internal links (page, link, why), external links (link -> pages), pages and links seen."""

    broken: list[tuple[str, str, str]] = field(default_factory=list)
    external: dict[str, set[str]] = field(default_factory=dict)
    pages: int = 0
    internal: int = 0

    def summary(self) -> str:
        return (f"{self.pages} pages, {self.internal} internal links and anchors checked, "
                f"{len(self.broken)} broken; {len(self.external)} distinct external links listed, not fetched")


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    return page


def check_site(root: Path) -> LinkReport:
    """Every link of every HTML page under ``root``."""
    report = LinkReport()
    pages = {path.relative_to(root).as_posix(): parse(path) for path in sorted(root.rglob("*.html"))
             if not path.relative_to(root).as_posix().startswith(NOT_PAGES)}
    report.pages = len(pages)
    for name, page in pages.items():
        for link in page.links:
            if not link or link.startswith(NOT_CHECKED):
                continue
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                report.external.setdefault(link, set()).add(name)
                continue
            report.internal += 1
            problem = _problem(root, pages, name, unquote(parts.path), unquote(parts.fragment))
            if problem:
                report.broken.append((name, link, problem))
    return report


def _problem(root: Path, pages: dict[str, _Page], name: str, path: str, fragment: str) -> str | None:
    if path.startswith("/"):
        return "an absolute path: breaks when the site is served from a sub-folder (GitHub Pages)"
    target = posixpath.normpath(posixpath.join(posixpath.dirname(name), path)) if path else name
    if target.startswith(".."):
        return "points outside the site"
    if (root / target).is_dir():
        target = posixpath.join(target, "index.html")
    if not (root / target).is_file():
        return f"no file {target}"
    if fragment and target.endswith(".html") and fragment not in pages[target].ids:
        return f"no anchor #{fragment} in {target}"
    return None


def write_report(report: LinkReport, path: Path) -> None:
    """The external links, one a line with the pages that make them, and the broken ones."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"# {report.summary()}", "", "## broken internal links", ""]
    lines += [f"{page}: {link} ({why})" for page, link, why in report.broken] or ["none"]
    lines += ["", "## external links (not fetched)", ""]
    lines += [f"{link}  <- {', '.join(sorted(pages)[:3])}{' ...' if len(pages) > 3 else ''}"
              for link, pages in sorted(report.external.items())]
    path.write_text("\n".join(lines) + "\n")
