"""Markdown links written for the repository, pointed at the site's pages.

The README, docs/ and the notebooks link to each other by repository path (``docs/exam-map.md``,
``../README.md#notebook-map``). On the site the README is split into one page per section, and
files the site does not hold (``LICENSE``, ``tests/...``) are on the repository's web page, or plain
text while no repository is configured. A link that points nowhere stops the build here, before
Sphinx, with the file and the target named.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tools.site.layout import file_url

# `](target)` or `](target "title")`; the link text before it may hold brackets (badges, code).
LINK_TARGET = re.compile(r'(\]\()(<[^>]+>|[^)\s]+)((?:\s+"[^"]*")?\))')
# Fenced code blocks and inline code spans: their `](...)` is code, not a link.
CODE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$|(`+)[^`\n]+?\2", re.S | re.M)
SCHEME = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")
README = "README.md"


class BrokenLink(ValueError):
    """A repository link that names no file, or a README section that does not exist."""


def github_slug(title: str) -> str:
    """The anchor GitHub (and MyST with ``myst_heading_slug_func = "github"``) gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "").strip()
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", text.lower().replace(" ", "-"))


def rewrite_targets(text: str, rewrite: Callable[[str], str | None]) -> str:
    """``text`` with every markdown link target outside code passed through ``rewrite``; where it
    returns None the link becomes its text (its ``[`` and ``](target)`` are dropped)."""
    code = [(m.start(), m.end()) for m in CODE.finditer(text)]
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in the original text
    for match in LINK_TARGET.finditer(text):
        if any(start <= match.start() < end for start, end in code):
            continue
        target = rewrite(match.group(2).strip("<>"))
        if target is not None:
            edits.append((match.start(2), match.end(2), target))
        else:
            opening = _link_text_start(text, match.start())
            edits += [(opening, opening + 1, ""), (match.start(), match.end(), "")]
    for start, end, replacement in sorted(edits, reverse=True):  # from the end: earlier offsets hold
        text = text[:start] + replacement + text[end:]
    return text


def _link_text_start(text: str, close: int) -> int:
    """Where the ``[`` that the ``]`` at ``close`` closes is (link texts may hold brackets)."""
    depth = 0
    for position in range(close, -1, -1):
        depth += {"]": 1, "[": -1}.get(text[position], 0)
        if depth == 0:
            return position
    raise BrokenLink(f"a link target without its text: {text[close:close + 60]!r}")


@dataclass
class LinkMap:
    """What the site holds: repository path -> path in the site's source tree, and where each
    README section (by its anchor) went."""

    root: Path
    repository: str | None  # None: links to files the site does not hold become their text
    staged: dict[str, str] = field(default_factory=dict)
    readme_anchors: dict[str, str] = field(default_factory=dict)
    readme_page: str = "index.md"

    def target(self, link: str, source: str, staged_as: str) -> str | None:
        """Where ``link``, written in repository file ``source``, points from site page ``staged_as``
        (None: nowhere, the link becomes its text)."""
        if SCHEME.match(link):
            return link
        path, _, anchor = link.partition("#")
        repo_path = posixpath.normpath(posixpath.join(posixpath.dirname(source), path)) if path else source
        if repo_path == README:
            site_path = self.readme_anchors.get(anchor) if anchor else self.readme_page
            if site_path is None:
                raise BrokenLink(f"{source}: link {link!r}: the README has no section with the anchor #{anchor}")
        elif repo_path in self.staged:
            site_path = self.staged[repo_path]
        elif not path:
            return link
        elif (self.root / repo_path).exists():
            if self.repository is None:
                return None
            url = file_url(self.repository, repo_path, directory=(self.root / repo_path).is_dir())
            return url + (f"#{anchor}" if anchor else "")
        else:
            raise BrokenLink(f"{source}: link {link!r}: no file {repo_path} in the repository")
        suffix = f"#{anchor}" if anchor else ""
        if site_path == staged_as and anchor:
            return suffix
        return posixpath.relpath(site_path, posixpath.dirname(staged_as) or ".") + suffix

    def rewrite(self, text: str, source: str, staged_as: str) -> str:
        """Every link of ``text`` (from repository file ``source``) as seen from ``staged_as``."""
        return rewrite_targets(text, lambda link: self.target(link, source, staged_as))
