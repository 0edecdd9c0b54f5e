"""The client CLI as a newcomer meets it: hints on stderr (each said once), timeouts, Ctrl-C,
honest output.

The agents run on a real server (127.0.0.1, port 0) in a background thread; the CLI runs
in-process through ``main(argv)`` (it runs its own event loop), or as a subprocess where a
signal is sent to it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path

import anyio
import pytest
from anyio.from_thread import start_blocking_portal

from a2a_actors.cli import main as cli_main
from a2a_actors.client._cli.commands import main
from a2a_actors.client._cli.deadline import INTERRUPTED, TIMED_OUT
from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentSkill
from a2a_actors.protocol._models import StreamResponse, TaskState
from a2a_actors.protocol._requests import SendMessageResponse
from a2a_actors.runtime import Agent, InProcessClient, Supervisor, TaskContext
from a2a_actors.server import ServedAgent, ServerConfig, serve
from examples import sleeper

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 30.0
QUESTION = "What is your name?"
SKILL = AgentSkill(id="talk", name="Talk", description="Answers", tags=("test",))


async def _talk(ctx: TaskContext) -> str | None:
    """``ask``: a question; ``auth``: AUTH_REQUIRED; ``both``: an artifact and a status
    message; ``forever``: works until canceled; anything else: echoed."""
    if ctx.text == "ask":
        reply = await ctx.ask(QUESTION)
        return f"Hello, {reply.text}!"
    if ctx.text == "auth":
        reply = await ctx.require_auth("Sign in at https://example.com, then say ok")
        return f"signed in: {reply.text}"
    if ctx.text == "both":
        await ctx.artifact("the answer", name="answer")
        return "all done"
    if ctx.text == "forever":
        await ctx.update("working on it")
        await anyio.sleep_forever()
    return ctx.text


talker = Agent(handler=_talk, name="talker", skills=(SKILL,))
bare = Agent(handler=_talk, name="bare")  # declares no skill


@asynccontextmanager
async def _serving(target: object) -> AsyncIterator[str]:
    async with anyio.create_task_group() as tg:
        url: str = await tg.start(partial(serve, target))
        yield url
        tg.cancel_scope.cancel()


@contextmanager
def served(target: object) -> Iterator[str]:
    """Serve ``target`` from a background thread (trio); yields its base URL."""
    with (
        start_blocking_portal(backend="trio") as portal,
        portal.wrap_async_context_manager(_serving(target)) as url,
    ):
        yield url


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(talker) as base:
        yield base


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def hinted_command(err: str) -> list[str]:
    """The arguments of the ``answer with:`` command printed on stderr (without the
    program name), with ``"<text>"`` still in place."""
    (line,) = [x for x in err.splitlines() if x.startswith("answer with: ")]
    words = shlex.split(line.removeprefix("answer with: "))
    assert words[0] == "a2a-actors"
    return words[1:]


# -- input required: the question once, and how to answer on stderr --------------------------


def test_send_tells_how_to_answer_a_question(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "send", url, "ask")
    assert status == 0
    state_line, question = out.splitlines()
    assert state_line.endswith(": input-required")
    assert question == QUESTION
    task_id = state_line.split()[1]
    assert (out + err).count(QUESTION) == 1  # shown with the task, not again on stderr
    answer = hinted_command(err)
    assert answer == ["send", url, "<text>", "--task-id", task_id]

    answer[answer.index("<text>")] = "Ada"
    status, out, err = run(capsys, *answer)
    assert status == 0
    assert out.splitlines() == [
        f"{state_line.removesuffix('input-required')}completed",
        "Hello, Ada!",
    ]
    assert "answer with" not in err


def test_json_and_stream_sends_hint_too(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "send", url, "ask", "--json")
    assert status == 0
    task = codec.decode(out.strip(), SendMessageResponse).task
    assert task is not None
    assert task.status.state is TaskState.INPUT_REQUIRED
    assert f"input-required: {QUESTION}" in err.splitlines()  # stdout is JSON: said here
    assert hinted_command(err)[-1] == task.id

    status, out, err = run(capsys, "send", url, "ask", "--stream")
    assert status == 0
    assert out.splitlines()[-1] == f"[input-required: {QUESTION}]"
    assert QUESTION not in err  # the stream showed it
    assert hinted_command(err)[-2:] == ["--task-id", out.split()[1]]


def test_auth_required_is_hinted_like_a_question(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "send", url, "auth")
    assert status == 0
    assert out.splitlines()[0].endswith(": auth-required")
    assert out.splitlines()[1] == "Sign in at https://example.com, then say ok"
    assert "Sign in" not in err
    answer = hinted_command(err)
    answer[answer.index("<text>")] = "ok"
    status, out, _ = run(capsys, *answer)
    assert out.splitlines()[1:] == ["signed in: ok"]


def test_subscribe_to_a_waiting_task_prints_its_question(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "send", url, "ask", "--return-immediately", "--json")
    task = codec.decode(out.strip(), SendMessageResponse).task
    assert task is not None
    status, out, err = run(capsys, "subscribe", url, task.id)
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"task {task.id} ")
    assert lines[-1] == f"[input-required: {QUESTION}]"
    assert QUESTION not in err
    assert hinted_command(err)[-1] == task.id

    status, out, err = run(capsys, "subscribe", url, task.id, "--json")
    events = [codec.decode(line, StreamResponse) for line in out.splitlines()]
    assert events[0].task is not None
    assert f"input-required: {QUESTION}" in err.splitlines()
    assert hinted_command(err)[-1] == task.id

    status, out, err = run(capsys, "get", url, task.id)
    assert out.splitlines()[1:] == [QUESTION]
    assert QUESTION not in err
    assert hinted_command(err)[-1] == task.id


# -- what a task prints as ---------------------------------------------------------------------


def test_blocking_send_shows_the_final_status_message(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "send", url, "both")
    assert status == 0
    state_line, *rest = out.splitlines()
    assert state_line.endswith(": completed")
    assert rest == ["the answer", "all done"]
    assert err.splitlines() == [f"{state_line.removesuffix('completed')}waiting for the task"] or (
        err == ""  # the task had settled by the time SendMessage answered
    )

    _, streamed, _ = run(capsys, "send", url, "both", "--stream")
    assert streamed.splitlines()[-1] == "[completed: all done]"


def test_cancel_prints_the_canceled_task_not_a_stale_message(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "send", url, "forever", "--return-immediately", "--json")
    task = codec.decode(out.strip(), SendMessageResponse).task
    assert task is not None
    status, out, _ = run(capsys, "cancel", url, task.id)
    assert status == 0
    assert out.splitlines() == [f"task {task.id} (context {task.context_id}): canceled"]


def test_card_lists_skills_or_says_none(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "card", url)
    lines = out.splitlines()
    assert lines[lines.index("skills:") + 1] == "  talk: Talk - Answers"
    with served(bare) as bare_url:
        _, out, _ = run(capsys, "card", bare_url)
    assert "skills: none" in out.splitlines()
    assert "skills:" not in out.splitlines()


def test_list_with_an_unknown_state_names_the_valid_ones(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli_main(["list", url, "--status", "bogus"])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (  # one line: no usage block
        "a2a-actors list: --status: unknown task state 'bogus'; one of: "
        "submitted, working, completed, failed, canceled, input-required, rejected, "
        "auth-required\n"
    )
    status, out, _ = run(capsys, "list", url, "--status", "TASK_STATE_CANCELED")
    assert status == 0


def test_malformed_urls_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for bad, says in (
        ("http://[::1", "malformed URL 'http://[::1'"),
        ("localhost:8000", "expected the agent's base URL, such as http://127.0.0.1:8000"),
        ("ftp://example.com", "expected the agent's base URL"),
    ):
        status, out, err = run(capsys, "send", bad, "hi")
        assert status == 2
        assert out == ""
        assert says in err.splitlines()[-1]
        assert "Traceback" not in err


# -- credentials -----------------------------------------------------------------------------


def test_an_auth_error_says_which_flags_are_expected(capsys: pytest.CaptureFixture[str]) -> None:
    secured = ServedAgent(talker, ServerConfig(api_keys={"s3cret": "ada"}))
    with served(secured) as base:
        status, _, err = run(capsys, "send", base, "hi")
        assert status == 1
        first, hint = err.splitlines()
        assert first.startswith("a2a-actors send: UnauthenticatedError (-32051): ")
        assert hint.startswith("  this agent needs credentials: ")
        assert "pass --api-key KEY or --bearer-token TOKEN" in hint
        assert f"a2a-actors card {base}" in hint

        status, _, err = run(capsys, "send", base, "hi", "--api-key", "wrong")
        assert status == 1
        assert err.splitlines()[1] == (
            "  the agent refused the credentials given (--api-key / --bearer-token)"
        )
        status, out, _ = run(capsys, "send", base, "hi", "--api-key", "s3cret")
        assert status == 0
        assert out.splitlines()[1] == "hi"


# -- a long blocking send: its id early, --timeout, Ctrl-C --------------------------------------


def _left_running(err: str, url: str) -> str:
    """The task id the stop message names (asserting its follow and cancel commands)."""
    # The last state seen: the interruption may come before the first update is seen.
    match = re.search(r"task (\S+) is left running \(last state: (submitted|working)\)", err)
    assert match is not None, err
    task_id = match.group(1)
    assert f"  follow it: a2a-actors subscribe {url} {task_id}" in err.splitlines()
    assert f"  cancel it: a2a-actors cancel {url} {task_id}" in err.splitlines()
    return task_id


def test_timeout_names_the_task_and_how_to_follow_or_cancel_it(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "send", url, "forever", "--timeout", "0.5")
    assert status == TIMED_OUT
    assert out == ""
    lines = err.splitlines()
    assert lines[0].endswith(": waiting for the task")  # printed as soon as it was known
    assert lines[1].startswith("a2a-actors send: no answer within 0.5 s; task ")
    task_id = _left_running(err, url)
    assert lines[0].startswith(f"task {task_id} (context ")

    status, out, _ = run(capsys, "get", url, task_id)  # it was left running
    assert out.splitlines() == [out.splitlines()[0], "working on it"]
    assert out.splitlines()[0].endswith(": working")
    assert run(capsys, "cancel", url, task_id)[0] == 0


def test_timeout_bounds_streams_too(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "send", url, "forever", "--stream", "--timeout", "0.5")
    assert status == TIMED_OUT
    assert out.splitlines()[-1] == "[working: working on it]"
    assert run(capsys, "cancel", url, _left_running(err, url))[0] == 0


def test_timeout_must_be_positive(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "send", url, "hi", "--timeout", "0")
    assert status == 2
    assert "--timeout: must be more than 0 seconds, not 0" in err


def test_ctrl_c_leaves_the_task_running_and_says_so(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    command = [sys.executable, "-m", "a2a_actors.cli", "send", url, "forever"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stderr is not None
            first = process.stderr.readline()  # blocks until the task id is announced
            assert first.endswith(": waiting for the task\n"), first
            process.send_signal(signal.SIGINT)
            out, rest = process.communicate(timeout=TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == INTERRUPTED
    assert out == ""
    assert rest.startswith("a2a-actors send: interrupted; task ")
    assert "Traceback" not in rest
    task_id = _left_running(rest, url)
    assert first.startswith(f"task {task_id} ")
    status, out, _ = run(capsys, "cancel", url, task_id)
    assert status == 0
    assert out.splitlines()[0].endswith(": canceled")


async def test_the_sleeper_says_it_sleeps_until_canceled() -> None:
    with anyio.fail_after(TIMEOUT):
        async with Supervisor(sleeper.agent) as sup:
            client = InProcessClient(sup)
            async with client.stream("forever") as events:
                async for event in events:
                    update = event.status_update
                    if update is not None and update.status.message is not None:
                        assert update.status.state is TaskState.WORKING
                        assert update.status.message.text == "sleeping until canceled"
                        await client.cancel_task(update.task_id)
                        break
            async with client.stream("2.5") as events:
                async for event in events:
                    update = event.status_update
                    if update is not None and update.status.message is not None:
                        assert update.status.message.text == "sleeping 2.5 s"
                        await client.cancel_task(update.task_id)
                        break


def test_subscribe_to_a_finished_task_shows_how_it_ended(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "send", url, "both", "--json")
    task = codec.decode(out.strip(), SendMessageResponse).task
    assert task is not None
    status, out, err = run(capsys, "subscribe", url, task.id)
    assert status == 0
    assert err == ""
    assert out.splitlines() == [
        f"task {task.id} (context {task.context_id}): completed",
        "the answer",
        "all done",
    ]
    status, out, _ = run(capsys, "subscribe", url, task.id, "--json")
    ended = codec.decode(out.strip(), StreamResponse).task
    assert ended is not None
    assert ended.status.state is TaskState.COMPLETED
    assert run(capsys, "subscribe", url, "no-such-task")[0] == 1


def test_timeout_with_an_agent_that_does_not_stream(capsys: pytest.CaptureFixture[str]) -> None:
    # Its task id comes only with the answer (a plain blocking SendMessage).
    with served(ServedAgent(talker, ServerConfig(streaming=False))) as base:
        status, out, err = run(capsys, "send", base, "forever", "--timeout", "0.5")
    assert status == TIMED_OUT
    assert out == ""
    assert err.splitlines() == [
        "waiting for the task (the agent does not stream; --timeout bounds the wait)",
        "a2a-actors send: no answer within 0.5 s, before the agent named a task",
        f"  (it does not stream: a2a-actors list {base} shows its tasks)",
    ]
