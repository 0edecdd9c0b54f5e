"""No traceback from the ``a2a-actors`` command for user errors; ``--debug`` shows them.

Bad flags are refused by the parser (exit 2, one line naming the command, no usage block); a
served module that cannot be imported, or raises while importing, is one line and exit 2;
anything unexpected is one line and exit 1, with the traceback only under ``--debug``. Every
line starts ``a2a-actors COMMAND: ``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from a2a_actors.cli import main

ROOT = Path(__file__).resolve().parents[1]


class _Exploding:
    """An agent object whose ``handle`` cannot even be looked up: an unexpected error."""

    @property
    def handle(self) -> object:
        raise RuntimeError("handle is not ready")


exploding = _Exploding()


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The last stderr line of a command the parser refuses (asserting exit status 2)."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    (line,) = err.splitlines()  # one line, no usage block
    return line


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (
            ("--port", "70000"),
            "--port: a port is 0..65535 (0 picks a free one), not 70000",
        ),
        (("--port", "-1"), "--port: a port is 0..65535"),
        (("--port", "http"), "--port: not a port number: 'http'"),
        (("--max-tasks", "0"), "--max-tasks: must be at least 1, not 0"),
        (("--max-running", "-2"), "--max-running: must be at least 1, not -2"),
        (("--retention-ttl", "-1"), "--retention-ttl: must be a finite number >= 0"),
        (("--retention-ttl", "nan"), "--retention-ttl: must be a finite number >= 0"),
        (("--retention-max", "-1"), "--retention-max: must not be negative, not -1"),
    ],
)
def test_serve_flags_are_checked_by_the_parser(
    flags: tuple[str, ...], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error(capsys, "serve", "examples.echo:agent", *flags)
    assert line.startswith(f"a2a-actors serve: {says}")


def test_malformed_url_through_the_top_level_command(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error(capsys, "send", "http://[::1", "hi")
    assert line.startswith("a2a-actors send: url: malformed URL 'http://[::1'")


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current directory for throwaway modules (``serve`` imports from it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # serve adds the directory to it
    return tmp_path


def test_a_module_that_raises_at_import_is_one_line_and_exit_2(
    modules: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (modules / "raising_at_import.py").write_text('raise RuntimeError("no config file")\n')
    assert main(["serve", "raising_at_import:agent"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "a2a-actors serve: importing 'raising_at_import' raised RuntimeError: no config file\n"
    )


def test_debug_also_prints_the_import_traceback(
    modules: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (modules / "broken_syntax.py").write_text("def agent(:\n")
    for argv in (
        ["--debug", "serve", "broken_syntax:agent"],
        ["serve", "broken_syntax:agent", "--debug"],
    ):
        sys.modules.pop("broken_syntax", None)
        assert main(argv) == 2
        _, err = capsys.readouterr()
        assert "Traceback (most recent call last)" in err
        assert "SyntaxError" in err
        assert err.splitlines()[-1].startswith(
            "a2a-actors serve: importing 'broken_syntax' raised SyntaxError: "
        )


def test_a_module_that_imports_a_missing_package(
    modules: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (modules / "needs_missing.py").write_text("import no_such_package_here\n")
    assert main(["serve", "needs_missing:agent"]) == 2
    _, err = capsys.readouterr()
    assert err == (
        "a2a-actors serve: cannot import 'needs_missing': No module named 'no_such_package_here'\n"
    )


def test_a_file_path_instead_of_a_module_name_is_explained(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "examples/echo.py:agent"]) == 2
    _, err = capsys.readouterr()
    assert err == (
        "a2a-actors serve: MODULE is a dotted module name importable from the current "
        "directory (such as 'examples.echo'), not a file path: got 'examples/echo.py'\n"
    )


def test_an_unexpected_error_is_one_line_unless_debug(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "tests.test_cli_errors:exploding"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "a2a-actors serve: RuntimeError: handle is not ready (--debug shows the traceback)\n"
    )
    with pytest.raises(RuntimeError, match="handle is not ready"):
        main(["--debug", "serve", "tests.test_cli_errors:exploding"])


def test_the_command_in_a_subprocess_prints_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "raising_at_import.py").write_text("1 / 0\n")
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from a2a_actors.cli import main
        sys.exit(main())
        """
    )
    for argv, status in (
        (["serve", "raising_at_import:agent"], 2),
        (["serve", "raising_at_import:agent", "--port", "70000"], 2),
        (["send", "http://[::1", "hi"], 2),
    ):
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == status, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stdout == ""
