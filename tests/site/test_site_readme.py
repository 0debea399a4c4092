"""The README read as pages: one per ``##`` section, headings one level up, code left alone."""

from __future__ import annotations

import re

from tools.site.readme import first_code_block, split_readme
from utils.base.paths import REPO_ROOT

TEXT = """# Course

[![Launch on Binder](https://mybinder.org/badge_logo.svg)](https://example.org)
<!-- a comment -->

Intro.

## For whom

People.

### Sub part

```bash
## not a heading
```

## The two commands

Before:

```bash
make lab
```

After.
"""


def test_sections_pages_and_anchors():
    readme = split_readme(TEXT)
    assert readme.title == "Course" and readme.intro == "Intro."
    assert [s.title for s in readme.sections] == ["For whom", "The two commands"]
    whom = readme.section("For whom")
    assert whom.page == "readme/for-whom.md" and whom.anchors() == ["for-whom", "sub-part"]
    assert whom.as_page() == "# For whom\n\nPeople.\n\n## Sub part\n\n```bash\n## not a heading\n```\n"
    assert first_code_block(readme.section("The two commands").body) == "Before:\n\n```bash\nmake lab\n```"


def test_the_real_readme_splits_at_every_section():
    text = (REPO_ROOT / "README.md").read_text()
    readme = split_readme(text)
    assert [s.title for s in readme.sections] == re.findall(r"^## (.+)$", text, re.M)
    assert {"For whom", "The two commands"} <= {s.title for s in readme.sections}
