"""docs/trust.md runs as written: its "Try it" section (openssl keys, JWKS files, a served
agent with JWT auth and a signed card, the client CLI with ``--verify``), by the machinery of
tests/docs/test_guide.py (files saved, commands run as real processes, output checked)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from ..docs.test_guide import ROOT, Runner, Section, parse_guide

DOC = ROOT / "docs" / "trust.md"
SECTIONS = parse_guide(DOC.read_text())


def test_the_doc_is_parsed_and_listed() -> None:
    runnable = [s for s in SECTIONS if s.steps]
    assert [s.title for s in runnable] == ["Try it: keys, a signed card, a JWT"]
    assert len(runnable[0].steps) >= 10
    assert "(trust.md)" in (ROOT / "docs" / "README.md").read_text()


@pytest.mark.parametrize("section", [s for s in SECTIONS if s.steps], ids=lambda s: s.title)
def test_section(section: Section, tmp_path: Path) -> None:
    files: dict[str, str] = {}
    for each in SECTIONS:
        files.update(each.files)
    with contextlib.ExitStack() as stack:
        runner = Runner(section, tmp_path, stack)
        for step in section.steps:
            runner.run(step, files)
        for port, server in list(runner.servers.items()):
            runner.servers.pop(port)
            assert server.stop() == 0, server.output()[1]
