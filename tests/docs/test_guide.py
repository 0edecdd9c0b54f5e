"""docs/guide.md runs as written: its files are saved, its commands run, their output checked.

The guide is read as a user would follow it. Each ``python`` block starts with
``# file: NAME`` and is saved under that name in a temporary folder. Each ``console`` block
is a list of ``$ command`` lines, each followed by what the command prints. Every ``##``
section is one test: its commands run in order in that folder, as real processes (the
``a2a-actors`` entry point, ``python``, ``hypercorn``, ``openssl``), and every server it
starts is stopped at its end by PID, whatever happened. Sections are independent, so two
run at a time (in threads: the work is in the processes).

Servers (``a2a-actors serve``, ``hypercorn``) keep running in the background; the guide's
fixed ports (``--port 8000``, ``--bind 127.0.0.1:8443``) are replaced by port 0, and the
port each server really got replaces the guide's everywhere afterwards: in commands, in the
files (re-saved before each command), in expected output. A second server on a port the
section already serves replaces the first (stopped with SIGINT, as Ctrl-C would).

Expected output: stdout must match the shown lines exactly (runs of spaces count as one);
a shown line that is not the next stdout line must be on stderr, in order (messages and
hints), and stderr may hold more (logs). ``<name>`` placeholders stand for one word, the
same wherever one command's output shows it; that value is remembered and replaces
``<name>`` in later commands. ``…`` stands for anything, and a line of only ``…`` for
any number of stdout lines. A command must exit 0, or with the status its comment states
(``$ command  # exits 2``; a server command with such a comment must refuse to start).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"
BIN = Path(sys.executable).parent
COMMAND_TIMEOUT = 30.0
START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0
SECTION_TIMEOUT = 300.0
#: Sections run at once (the machine has two cores; a section mostly waits for processes).
RUNNERS = 2

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_SECTION = re.compile(r"^## (.+)$", re.M)
_FILE = re.compile(r"\A# file: (\S+)\n")
_PLACEHOLDER = re.compile(r"<([a-z][a-z0-9-]*)>")
_FIXED_PORT = re.compile(r"(127\.0\.0\.1|localhost):(\d{4})\b")
_URL = re.compile(r"https?://127\.0\.0\.1:(\d+)")


@dataclass
class Step:
    command: str
    expected: list[str]


@dataclass
class Section:
    title: str
    files: dict[str, str] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)


def parse_guide(text: str) -> list[Section]:
    """The guide's ``##`` sections, with their files and console steps, in order."""
    sections: list[Section] = []
    starts = list(_SECTION.finditer(text))
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        section = Section(start.group(1).strip())
        for fence in _FENCE.finditer(text, start.end(), end):
            language, body = fence.group(1), fence.group(2)
            if language == "python":
                name = _FILE.match(body)
                assert name is not None, f"a python block of {section.title!r} names no file"
                section.files[name.group(1)] = body
            elif language == "console":
                section.steps.extend(_steps(body))
        sections.append(section)
    return sections


def _steps(body: str) -> list[Step]:
    steps: list[Step] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append(Step(line[2:], []))
        else:
            assert steps, f"console output before any command: {line!r}"
            steps[-1].expected.append(line)
    return steps


SECTIONS = parse_guide(GUIDE.read_text())


def _squash(line: str) -> str:
    return " ".join(line.split())


class Values:
    """What the guide's placeholders and fixed ports stand for so far in one section."""

    def __init__(self) -> None:
        self.words: dict[str, str] = {}
        self.ports: dict[str, str] = {}
        self.shown: dict[str, str] = {}

    def ports_in(self, text: str) -> str:
        return _FIXED_PORT.sub(
            lambda m: f"{m.group(1)}:{self.ports.get(m.group(2), m.group(2))}", text
        )

    def command(self, text: str) -> str:
        text = _PLACEHOLDER.sub(lambda m: self.words.get(m.group(1), m.group(0)), text)
        return self.ports_in(text)

    def start_output(self) -> None:
        """A command's output begins: its placeholders are free until it shows them."""
        self.shown = {}

    def pattern(self, expected: str) -> re.Pattern[str]:
        """A regex for one shown line; a placeholder this output has not shown yet is a
        named group, one it has shown must hold the same value again."""
        expected = _squash(self.ports_in(expected))
        parts: list[str] = []
        seen: set[str] = set()
        position = 0
        for match in re.finditer(r"<([a-z][a-z0-9-]*)>|…", expected):
            parts.append(re.escape(expected[position : match.start()]))
            position = match.end()
            name = match.group(1)
            group = (name or "").replace("-", "_")
            if name is None:
                parts.append(".*?")
            elif name in self.shown:
                parts.append(re.escape(self.shown[name]))
            else:
                parts.append(f"(?P={group})" if group in seen else f"(?P<{group}>\\S+)")
                seen.add(group)
        parts.append(re.escape(expected[position:]))
        return re.compile("".join(parts))

    def match(self, expected: str, actual: str) -> bool:
        found = self.pattern(expected).fullmatch(_squash(actual))
        if found is None:
            return False
        for group, value in found.groupdict().items():
            self.words[group.replace("_", "-")] = value
            self.shown[group.replace("_", "-")] = value
        return True


def check_output(values: Values, expected: list[str], stdout: str, stderr: str) -> None:
    """Shown lines: every stdout line, in order; the others found on stderr, in order."""
    values.start_output()
    out = [line for line in stdout.splitlines() if line.strip()]
    err = stderr.splitlines()
    o = e = 0
    skipping = False
    for line in expected:
        if line == "…":  # lines left out
            skipping = True
            continue
        while skipping and o < len(out) and not values.match(line, out[o]):
            o += 1
        if o < len(out) and (skipping or values.match(line, out[o])):
            o += 1
            skipping = False
            continue
        while e < len(err) and not values.match(line, err[e]):
            e += 1
        assert e < len(err), f"not printed: {line!r}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        e += 1
    if skipping:
        o = len(out)
    assert o == len(out), f"printed but not shown: {out[o:]}\nstderr:\n{stderr}"


class Server:
    """A background server process; its stdout and stderr are read as they come."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.argv = argv
        self.out: list[str] = []
        self.err: list[str] = []
        self.changed = threading.Condition()
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self.readers = [
            threading.Thread(target=self._read, args=(pipe, lines), daemon=True)
            for pipe, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err))
        ]
        for reader in self.readers:
            reader.start()

    def _read(self, pipe: IO[str], lines: list[str]) -> None:
        for line in pipe:
            with self.changed:
                lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        self.process.wait()  # the pipe's end comes just before the exit: see it in wait_port
        with self.changed:
            self.changed.notify_all()

    def output(self) -> tuple[str, str]:
        with self.changed:
            return "\n".join(self.out), "\n".join(self.err)

    def wait_port(self) -> str:
        """The port the server listens on, once it says so: our CLI prints its URL on
        stdout, Hypercorn logs ``Running on URL`` on stderr."""
        deadline = time.monotonic() + START_TIMEOUT
        logs = Path(self.argv[0]).name == "hypercorn"
        with self.changed:
            while True:
                for line in self.err if logs else self.out:
                    found = _URL.search(line)
                    if found is not None:
                        return found.group(1)
                if self.process.poll() is not None and not any(r.is_alive() for r in self.readers):
                    pytest.fail(f"{self.argv} exited:\n" + "\n".join(self.err))
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"{self.argv} printed no URL:\n" + "\n".join(self.err))
                self.changed.wait(left)

    def stop(self) -> int:
        """SIGINT (Ctrl-C), then the exit status; killed if it does not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            status = self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            for reader in self.readers:
                reader.join(STOP_TIMEOUT)
            for pipe in (self.process.stdout, self.process.stderr):
                if pipe is not None:
                    pipe.close()
        return status


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr in the order they were written
    env["PYTHONPATH"] = str(ROOT)  # `orchestrator` and `a2a_actors` from this checkout
    env.pop("SSL_CERT_FILE", None)
    env.update(extra)
    return env


def _argv(command: str) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(command)
    extra: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        name, _, value = words.pop(0).partition("=")
        extra[name] = value
    program = {"python": sys.executable}.get(words[0], words[0])
    if (BIN / words[0]).exists():
        program = str(BIN / words[0])
    elif shutil.which(program) is None:  # a system tool the guide uses (openssl)
        pytest.skip(f"{program} is not installed")
    return extra, [program, *words[1:]]


def _is_server(argv: list[str]) -> bool:
    name = Path(argv[0]).name
    return name == "hypercorn" or (name == "a2a-actors" and argv[1:2] == ["serve"])


def _port_zero(argv: list[str]) -> tuple[list[str], str | None]:
    """The argv with its fixed port made 0, and that port (None if it had none)."""
    port = None
    result = list(argv)
    for index, word in enumerate(result):
        if word == "--port" and index + 1 < len(result):
            port, result[index + 1] = result[index + 1], "0"
        elif word == "--bind" and index + 1 < len(result):
            host, _, port = result[index + 1].rpartition(":")
            result[index + 1] = f"{host}:0"
    return result, port


class Runner:
    def __init__(self, section: Section, folder: Path, stack: contextlib.ExitStack) -> None:
        self.section = section
        self.folder = folder
        self.stack = stack
        self.values = Values()
        self.servers: dict[str, Server] = {}

    def save_files(self, files: dict[str, str]) -> None:
        for name, body in files.items():
            (self.folder / name).write_text(self.values.ports_in(body))

    def run(self, step: Step, files: dict[str, str]) -> None:
        self.save_files(files)
        command, _, comment = step.command.partition("  # ")
        exits = re.fullmatch(r"exits (\d+)", comment.strip())
        status = int(exits.group(1)) if exits else 0
        extra, argv = _argv(self.values.command(command))
        if _is_server(argv) and status == 0:
            self.serve(argv, step, extra)
            return
        completed = subprocess.run(
            argv,
            cwd=self.folder,
            env=_environment(extra),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        check_output(self.values, step.expected, completed.stdout, completed.stderr)
        assert completed.returncode == status, (
            f"{step.command!r} exited {completed.returncode}\n{completed.stderr}"
        )

    def serve(self, argv: list[str], step: Step, extra: dict[str, str]) -> None:
        argv, port = _port_zero(argv)
        assert port is not None, f"a server in the guide needs a fixed port: {step.command}"
        previous = self.servers.pop(port, None)
        if previous is not None:  # Ctrl-C, then start again
            assert previous.stop() == 0, previous.output()[1]
        server = Server(argv, self.folder, _environment(extra))
        self.stack.callback(server.stop)
        self.servers[port] = server
        self.values.ports[port] = server.wait_port()
        stdout, stderr = server.output()
        check_output(self.values, step.expected, stdout, stderr)


def _all_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for section in SECTIONS:
        files.update(section.files)
    return files


def test_the_guide_is_parsed() -> None:
    titles = [s.title for s in SECTIONS]
    assert len(titles) >= 10, titles
    steps = [step for s in SECTIONS for step in s.steps]
    assert len(steps) >= 30
    files = _all_files()
    assert len(files) >= 10
    # Every file is used: served, run, or imported by another file.
    text = "\n".join(step.command for step in steps) + "\n".join(files.values())
    for name in files:
        stem = name.removesuffix(".py")
        assert re.search(rf"\b{re.escape(stem)}\b(\.py|:| import)", text), name


def test_the_checker_refuses_output_the_guide_does_not_show() -> None:
    shown = ["task <task-id> (context <context-id>): completed", "Hello, Ada!", "hint <task-id>"]
    values = Values()
    check_output(values, shown, "task t1 (context c1): completed\nHello, Ada!\n", "x\nhint t1\n")
    assert values.words == {"task-id": "t1", "context-id": "c1"}
    assert values.command("get <task-id>") == "get t1"
    wrong = [
        ("task t1 (context c1): failed\nHello, Ada!\n", "hint t1\n"),  # another line
        ("task t1 (context c1): completed\nHello, Ada!\nmore\n", "hint t1\n"),  # one more
        ("task t1 (context c1): completed\n", "hint t1\n"),  # one less
        ("task t1 (context c1): completed\nHello, Ada!\n", "hint t2\n"),  # another id
        ("task t1 (context c1): completed\nHello, Ada!\n", ""),  # no stderr line
    ]
    for stdout, stderr in wrong:
        with pytest.raises(AssertionError):
            check_output(Values(), shown, stdout, stderr)
    check_output(Values(), ["a", "…", "z"], "a\nb\nc\nz\n", "")
    with pytest.raises(AssertionError):
        check_output(Values(), ["a", "…", "z"], "a\nb\n", "")


def test_the_guide_is_found() -> None:
    """The README points to the guide; docs/README.md lists it first, and every page."""
    assert "(docs/guide.md)" in (ROOT / "README.md").read_text()
    index = (ROOT / "docs" / "README.md").read_text()
    guide, _, internals = index.partition("## Internals")
    assert "(guide.md)" in guide
    assert internals
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "README.md":
            assert f"({page.name})" in index, f"docs/README.md does not list {page.name}"


def run_section(section: Section, folder: Path) -> None:
    """Every command of ``section`` in order, in ``folder``; its servers stopped at the end."""
    files = _all_files()  # a section may use the files of the sections before it
    with contextlib.ExitStack() as stack:
        runner = Runner(section, folder, stack)
        for step in section.steps:
            runner.run(step, files)
        for port, server in list(runner.servers.items()):
            runner.servers.pop(port)
            assert server.stop() == 0, server.output()[1]


@pytest.fixture(scope="module")
def section_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[None]]]:
    """The selected sections, run RUNNERS at a time (each in its own folder, its servers on
    their own ports): the commands mostly wait for processes, so this halves the time."""
    selected: list[Section] = []
    for item in request.session.items:
        section = getattr(getattr(item, "callspec", None), "params", {}).get("section")
        if isinstance(section, Section):
            selected.append(section)
    with ThreadPoolExecutor(RUNNERS, thread_name_prefix="guide") as pool:
        futures = {
            s.title: pool.submit(run_section, s, tmp_path_factory.mktemp("guide")) for s in selected
        }
        yield futures
        for future in futures.values():
            future.cancel()


@pytest.mark.parametrize("section", [s for s in SECTIONS if s.steps], ids=lambda s: s.title)
def test_section(section: Section, section_runs: dict[str, Future[None]]) -> None:
    section_runs[section.title].result(timeout=SECTION_TIMEOUT)
