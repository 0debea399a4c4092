"""The README, read as the site needs it: its intro, and one page per ``##`` section.

The README stays the one text for what the course is, for whom, and the two commands; the site
shows its sections as pages (headings one level up) and quotes parts of it on the landing page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tools.site.layout import BINDER_HINT
from tools.site.links import CODE, github_slug

HEADING = re.compile(r"^(#{1,6}) (.+?)[ \t]*$", re.M)


@dataclass(frozen=True)
class Section:
    """A ``## Title`` of the README and its text up to the next one."""

    title: str
    body: str

    @property
    def slug(self) -> str:
        return github_slug(self.title)

    @property
    def page(self) -> str:
        """Where the section's page sits in the site's source tree."""
        return f"readme/{self.slug}.md"

    def anchors(self) -> list[str]:
        """The section's own anchor and those of its subheadings (all on its page)."""
        return [self.slug, *(github_slug(title) for _, title in headings(self.body))]

    def as_page(self) -> str:
        """The section as a page: its title the page's ``#`` heading, subheadings one level up."""
        body = _outside_code(self.body, lambda text: HEADING.sub(lambda m: f"{m.group(1)[1:]} {m.group(2)}", text))
        return f"# {self.title}\n\n{body.strip()}\n"


@dataclass(frozen=True)
class Readme:
    title: str
    intro: str
    sections: tuple[Section, ...]

    def section(self, title: str) -> Section:
        found = [s for s in self.sections if s.title == title]
        if not found:
            raise ValueError(f"README.md has no section '## {title}' (it has {[s.title for s in self.sections]})")
        return found[0]


def headings(text: str) -> list[tuple[int, str]]:
    """(level, title) of every heading of ``text`` outside fenced code."""
    return [(len(m.group(1)), m.group(2)) for is_code, chunk in _chunks(text) if not is_code
            for m in HEADING.finditer(chunk)]


def split_readme(text: str) -> Readme:
    """Title, intro (without the Binder line and HTML comments: the site has its own launch buttons)
    and ``##`` sections of the README."""
    cuts = [m for m in HEADING.finditer(text) if len(m.group(1)) <= 2 and not _in_code(text, m.start())]
    if not cuts or len(cuts[0].group(1)) != 1:
        raise ValueError("README.md must start with a '# Title' line")
    title = cuts[0].group(2)
    ends = [m.start() for m in cuts[1:]] + [len(text)]
    intro = text[cuts[0].end():ends[0]]
    intro = "\n".join(line for line in re.sub(r"<!--.*?-->", "", intro, flags=re.S).splitlines()
                      if not line.startswith("[![") and line != BINDER_HINT).strip()
    sections = tuple(Section(m.group(2), text[m.end():end].strip("\n"))
                     for m, end in zip(cuts[1:], ends[1:], strict=True))
    return Readme(title, intro, sections)


def first_code_block(text: str) -> str:
    """``text`` up to the end of its first fenced code block (a command and what comes before it)."""
    match = re.search(r"^(`{3,})[^\n]*\n.*?^\1[ \t]*$", text, re.S | re.M)
    if match is None:
        raise ValueError("no fenced code block")
    return text[:match.end()].strip()


def _in_code(text: str, position: int) -> bool:
    return any(m.start() <= position < m.end() for m in CODE.finditer(text) if "\n" in m.group(0))


def _chunks(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (is fenced code, chunk); inline code never holds a heading, so it stays in prose."""
    chunks, last = [], 0
    for code in CODE.finditer(text):
        if "\n" in code.group(0):
            chunks += [(False, text[last:code.start()]), (True, code.group(0))]
            last = code.end()
    return [*chunks, (False, text[last:])]


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    return "".join(chunk if is_code else change(chunk) for is_code, chunk in _chunks(text))
