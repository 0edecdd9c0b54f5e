"""A usage mistake is one line naming the command, with the closest right spelling.

``a2a-actors serve examples.echo:agent --prot 8000`` says ``a2a-actors serve: unknown option
--prot (did you mean --port?)`` and exits 2: no usage block. ``--help`` still prints the
whole usage. The parser refuses before anything runs, so no server is needed here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from a2a_actors.cli import main

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = "serve, card, send, get, list, cancel, subscribe, agents, bench"


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """What the parser printed refusing ``argv`` (asserting exit status 2, nothing on
    stdout)."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    return err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["serve", "examples.echo:agent", "--prot", "8000"],
            "a2a-actors serve: unknown option --prot (did you mean --port?)",
        ),
        (
            ["send", "http://127.0.0.1:8000", "hi", "--strem"],
            "a2a-actors send: unknown option --strem (did you mean --stream?)",
        ),
        (
            ["list", "http://127.0.0.1:8000", "--staus=working"],
            "a2a-actors list: unknown option --staus (did you mean --status?)",
        ),
        (
            ["bench", "http://127.0.0.1:8000", "--concurency", "4"],
            "a2a-actors bench: unknown option --concurency (did you mean --concurrency?)",
        ),
        (
            ["serve", "examples.echo:agent", "--xyzzy"],
            "a2a-actors serve: unknown option --xyzzy (see a2a-actors serve --help)",
        ),
        (
            ["card", "http://127.0.0.1:8000", "extra"],
            "a2a-actors card: unexpected argument 'extra' (see a2a-actors card --help)",
        ),
        (
            ["sevre", "examples.echo:agent"],
            "a2a-actors: unknown command 'sevre' (did you mean serve?)",
        ),
        (["--debug", "sedn", "x"], "a2a-actors: unknown command 'sedn' (did you mean send?)"),
        (["frobnicate"], f"a2a-actors: unknown command 'frobnicate' (one of: {COMMANDS})"),
        ([], f"a2a-actors: no command given; one of: {COMMANDS} (see a2a-actors --help)"),
        (
            ["send"],
            "a2a-actors send: the following arguments are required: url, text "
            "(see a2a-actors send --help)",
        ),
        (
            ["serve", "examples.echo:agent", "--port", "70000"],
            "a2a-actors serve: --port: a port is 0..65535 (0 picks a free one), not 70000",
        ),
        (
            ["serve", "m:a", "--api-key", "k", "--bearer-token", "t"],
            "a2a-actors serve: --bearer-token: not allowed with argument --api-key",
        ),
    ],
)
def test_a_usage_mistake_is_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    assert refused(capsys, *argv) == line + "\n"


def test_help_still_prints_the_whole_usage(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, first in ((["--help"], "usage: a2a-actors "), (["serve", "--help"], "usage: ")):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 0
        out, err = capsys.readouterr()
        assert err == ""
        assert out.startswith(first)
    assert "--grpc-port PORT" in out  # the serve command's options, all of them
    assert "--port PORT" in out


def test_the_installed_command_says_it_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "a2a_actors.cli", "serve", "examples.echo:agent", "--prot", "8000"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "a2a-actors serve: unknown option --prot (did you mean --port?)\n"
