"""The recipes of a documentation page, for the tests that run them as written: the files a
section shows (a line "`NAME`:" ends the paragraph right before the file's fenced block) and
the lines of its shell block."""

from __future__ import annotations

import re
from pathlib import Path

#: docs/, next to tests/ in a source checkout (absent where tests/ was copied alone).
DOCS = Path(__file__).resolve().parents[2] / "docs"

_FILE = re.compile(r"`([\w.-]+)`:\n\n(?:<!--[^\n]*-->\n)?```\w*\n(.*?)^```", re.M | re.S)
_SHELL = re.compile(r"```bash\n(.*?)^```", re.M | re.S)


def recipe(page: str, heading: str) -> tuple[dict[str, str], list[str]]:
    """The section ``## heading`` of ``docs/page``: its files (name -> text) and the lines of
    its one shell block."""
    text = (DOCS / page).read_text()
    section = text[text.index(f"## {heading}\n") :]
    end = section.find("\n## ", 1)
    section = section if end < 0 else section[:end]
    files = dict(_FILE.findall(section))
    (shell,) = _SHELL.findall(section)
    return files, [line.strip() for line in shell.splitlines() if line.strip()]
