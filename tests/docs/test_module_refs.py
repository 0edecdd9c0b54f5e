"""The docs name only modules that exist, and state the rooms' import contracts as configured.

Every backticked ``x.py`` or ``dir/x.py`` in README.md and docs/**/*.md must name a .py file
of this repository: a bare name matches any file with that name, a path matches the end of
a real path (``server/_http/asgi.py``), ``*`` matches anything (``_cli/*.py``), and a
``path:function`` reference is read for its path. So renaming or moving a module fails here
until the docs say where it went. Not checked: names inside fenced code blocks (examples),
files a page tells the reader to create (a ``# file: NAME`` block of the guide), and the few
names below that are the reader's, not ours. benchmarks/README.md is history, as measured
then, and is left out.

docs/architecture.md also quotes the layers of the import-linter contracts that keep the
server's and the client's rooms pointing down; they must read as pyproject.toml has them.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Names a page shows that are not modules of ours: the reader's own files.
NOT_OURS: dict[str, frozenset[str]] = {
    "README.md": frozenset({"mymodule.py"}),  # "Save this as `mymodule.py`": the first agent
    "docs/grpc.md": frozenset({"run_tck.py"}),  # the official TCK's script, in its own clone
}
#: Folders that hold no source of the repository.
SKIPPED_DIRS = frozenset({"site", "build", "dist", "node_modules", "__pycache__"})

_FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"`([^`]+)`")
_MODULE = re.compile(r"(?<![\w.*/-])([\w.*/-]*[\w*]\.py)(?!\w)")
_CREATED = re.compile(r"^# file: (\S+\.py)[ \t]*$", re.M)


def documents() -> list[Path]:
    """README.md and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def python_files() -> list[str]:
    """Every .py file of the repository, as a path relative to its root."""
    found: list[str] = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        relative = Path(folder).relative_to(ROOT)
        found.extend((relative / name).as_posix() for name in files if name.endswith(".py"))
    return found


def references(text: str) -> list[str]:
    """The module names of ``text``'s code spans, fenced code blocks left out."""
    prose = _FENCE.sub("", text)
    return [name for span in _CODE_SPAN.findall(prose) for name in _MODULE.findall(span)]


def relative(reference: str) -> str:
    """``reference`` without its leading ``./`` and ``../``."""
    while reference.startswith(("./", "../")):
        reference = reference.split("/", 1)[1]
    return reference


def exists(reference: str, files: list[str]) -> bool:
    """Whether ``reference`` (a name, or the end of a path) names one of ``files``."""
    name = relative(reference)
    if "/" not in name:
        return any(fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], name) for path in files)
    return any(
        fnmatch.fnmatchcase(path, name) or fnmatch.fnmatchcase(path, f"*/{name}") for path in files
    )


def stale(page: str, text: str, files: list[str]) -> list[str]:
    """The references of ``text`` (the page ``page``) that name no file."""
    allowed = NOT_OURS.get(page, frozenset()) | set(_CREATED.findall(text))
    return [
        f"{page}: `{reference}`"
        for reference in references(text)
        if relative(reference) not in allowed and not exists(reference, files)
    ]


def test_every_module_the_docs_name_exists() -> None:
    files = python_files()
    assert "a2a_actors/server/_http/asgi.py" in files
    found: list[str] = []
    missing: list[str] = []
    for document in documents():
        page = document.relative_to(ROOT).as_posix()
        text = document.read_text()
        found.extend(references(text))
        missing.extend(stale(page, text, files))
    assert len(found) > 150  # the references are really read
    assert missing == []


def test_a_stale_reference_is_caught() -> None:
    files = ["a2a_actors/server/_http/asgi.py", "a2a_actors/protocol/codec.py"]
    text = (
        "The core (`a2a_actors/server/_http/asgi.py:A2ACore.__call__`, `_http/asgi.py`,"
        " `asgi.py`, `server/_http/*.py`) decodes with `codec.py`; `server/asgi.py` moved,"
        " `cli_serve.py` is gone and `/tmp/asgi.py` is not ours.\n"
        "```python\n# file: mine.py\nimport gone  # `gone.py`, in a fenced block\n```\n"
        "Save `mine.py`, then run `python mine.py`.\n"
    )
    assert stale("docs/x.md", text, files) == [
        "docs/x.md: `server/asgi.py`",
        "docs/x.md: `cli_serve.py`",
        "docs/x.md: `/tmp/asgi.py`",
    ]


def test_the_docs_state_the_rooms_contracts_as_configured() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    for name in ("The server's rooms point down", "The client's rooms point down"):
        [contract] = [c for title, c in contracts.items() if title.startswith(name)]
        assert "(docs/architecture.md" in contract["name"]
        assert f'"{name}"' in architecture
        layers = "\n".join(contract["layers"])
        assert f"```\n{layers}\n```" in architecture, f"{name}: docs/architecture.md is stale"
