"""The trust flags through the CLI: ``serve --jwks ... --sign-card ...`` as a subprocess,
``a2a-actors card/send --verify JWKS`` against it (exit 3 when the card is not signed by a
trusted key), and every inconsistent flag refused with one line and exit status 2."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import pytest

from a2a_actors.cli import main

from ..server.test_cli import GUARD, ROOT, cli_server
from .keys import AUDIENCE, ISSUER, SigningKey, jwks

pytestmark = pytest.mark.anyio

IDP = SigningKey.make("idp-1", "RS256")
CARD = SigningKey.make("card-1", "EdDSA")
AGENT = "tests.server.agents:scenario_agent"


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the harness side; the served backend is the --backend flag


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {
        "idp": tmp_path / "idp.jwks.json",
        "card": tmp_path / "card.jwks.json",
        "other": tmp_path / "other.jwks.json",
        "key": tmp_path / "card-key.pem",
    }
    paths["idp"].write_text(json.dumps(jwks(IDP)))
    paths["card"].write_text(json.dumps(jwks(CARD)))
    paths["other"].write_text(json.dumps(jwks(SigningKey.make(CARD.kid, "EdDSA"))))
    paths["key"].write_bytes(CARD.private_pem())
    return {name: str(path) for name, path in paths.items()}


async def _client(*argv: str) -> tuple[int, str, str]:
    command = [sys.executable, "-m", "a2a_actors.cli", *argv]
    done = await anyio.run_process(command, cwd=ROOT, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_serve_with_jwt_and_a_signed_card(backend: str, files: dict[str, str]) -> None:
    with anyio.fail_after(GUARD):
        async with cli_server(
            AGENT,
            "--backend",
            backend,
            "--jwks",
            files["idp"],
            "--jwt-issuer",
            ISSUER,
            "--jwt-audience",
            AUDIENCE,
            "--jwt-algorithms",
            "RS256",
            "--sign-card",
            files["key"],
            "--sign-kid",
            CARD.kid,
        ) as url:
            code, out, err = await _client("card", url, "--verify", files["card"], "--json")
            assert code == 0, err
            card = json.loads(out)
            scheme = card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]
            assert scheme["bearerFormat"] == "JWT"
            assert len(card["signatures"]) == 1

            code, out, err = await _client("card", url, "--verify", files["other"])
            assert code == 3
            assert "CardSignatureError" in err
            assert "does not match the card" in err

            token = IDP.token("alice")
            code, out, err = await _client(
                "send", url, "whoami", "--bearer-token", token, "--verify", files["card"]
            )
            assert (code, out.strip()) == (0, "alice|"), err

            expired = IDP.token("alice", exp=int(time.time()) - 3600)
            code, out, err = await _client("send", url, "whoami", "--bearer-token", expired)
            assert code == 1
            assert "The bearer token has expired" in err
            assert expired not in err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--jwks", "J", "--jwt-issuer", ISSUER], "--jwks needs --jwt-audience"),
        (["--jwks", "J", "--jwt-audience", AUDIENCE], "--jwks needs --jwt-issuer (or --oidc"),
        (["--jwt-issuer", ISSUER], "need --jwks or --oidc-discovery"),
        (
            ["--oidc-discovery", "https://idp.example/.well-known/openid-configuration"],
            "--oidc-discovery needs --jwt-audience",
        ),
        (
            ["--jwks", "J", "--jwt-issuer", "i", "--jwt-audience", "a", "--bearer-token", "t"],
            "both",
        ),
        (
            [
                "--jwks",
                "J",
                "--jwt-issuer",
                "i",
                "--jwt-audience",
                "a",
                "--jwt-algorithms",
                "HS256",
            ],
            "never 'none' or HMAC",
        ),
        (["--jwks", "missing.json", "--jwt-issuer", "i", "--jwt-audience", "a"], "missing.json"),
        (["--sign-card", "K"], "--sign-card needs --sign-kid"),
        (["--sign-kid", "k"], "need --sign-card"),
        (["--sign-card", "missing.pem", "--sign-kid", "k"], "missing.pem"),
        (["--sign-card", "K", "--sign-kid", "k", "--sign-jku", "ftp://x"], "https"),
    ],
)
def test_bad_trust_flags_are_one_line_and_status_2(
    flags: list[str], said: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [{"J": files["idp"], "K": files["key"]}.get(flag, flag) for flag in flags]
    assert main(["serve", AGENT, *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    assert said in err
    assert len(err.strip().splitlines()) == 1
