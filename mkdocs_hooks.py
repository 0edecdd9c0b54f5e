"""MkDocs hooks (mkdocs.yml ``hooks:``): the documentation site from the repository as it is.

The pages under docs/ link to files outside docs/ for readers on the repository (the
project README, benchmarks/README.md, the examples): the site adds the two READMEs as
pages of its own (``project.md``, ``benchmarks.md``) and points those links at them, or at
the API reference, so that ``mkdocs build --strict`` finds every link.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent

#: Pages made from files outside docs/: the site's name for each.
OUTSIDE = {"README.md": "project.md", "benchmarks/README.md": "benchmarks.md"}
#: Links from docs/ to the repository that are not pages, and where the site sends them.
ELSEWHERE = {
    "../examples": "project.md#a-first-agent",
    "../a2a_actors/runtime/agent.py": "api/runtime.md",
}
_LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_files(files: Files, config: Any) -> Files:
    """Add the project README and the benchmarks' README as pages."""
    for source, name in OUTSIDE.items():
        text = (ROOT / source).read_text()
        files.append(File.generated(config, name, content=_relinked(text, Path(source).parent)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Point a docs/ page's links to files outside docs/ at the site's pages."""
    if page.file.src_uri in OUTSIDE.values():
        return markdown
    return _relinked(markdown, Path("docs"))


def _relinked(text: str, folder: Path) -> str:
    """``text`` (a Markdown file of the repository's ``folder``) with each relative link
    made relative to the site's root."""

    def relink(match: re.Match[str]) -> str:
        target, anchor = match.group(1), match.group(2) or ""
        if "://" in target or target.startswith("mailto:"):
            return match.group(0)
        if folder == Path("docs") and target in ELSEWHERE:
            return f"]({ELSEWHERE[target]})"
        path = _normal(folder / target)
        if path in OUTSIDE:
            return f"]({OUTSIDE[path]}{anchor})"
        if path.startswith("docs/"):
            return f"]({path.removeprefix('docs/')}{anchor})"
        return match.group(0)

    return _LINK.sub(relink, text)


def _normal(path: Path) -> str:
    """``path`` without ``..`` and ``.`` parts, as a repository path."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)
