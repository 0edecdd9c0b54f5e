"""The protocol core stays sans-I/O: no event loop, no network, no ``async def``.

Three checks: importing every module of ``a2a_actors.protocol`` in a fresh interpreter pulls
in none of the I/O modules; no source file of the package defines a coroutine; and the
import-linter contracts of ``pyproject.toml`` hold (run on the packages that exist so far).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import pathlib
import subprocess
import sys
import tomllib
from typing import Any

import pytest

import a2a_actors.protocol

PACKAGE_DIR = pathlib.Path(a2a_actors.protocol.__file__).parent
ROOT = pathlib.Path(__file__).resolve().parents[2]
FORBIDDEN = (
    "anyio",
    "trio",
    "asyncio",
    "quart",
    "quart_trio",
    "hypercorn",
    "httpx",
    "httpcore",
    "h11",
    "h2",
    "socket",  # (the C module _socket is imported by typing_extensions, via msgspec)
    "ssl",
    "selectors",
    "select",
)
# _protobuf.py and _grpc_service.py (the gRPC binding's conversions and RPC table) do no I/O
# themselves, but importing the SDK's generated a2a.types.a2a_pb2 runs the a2a-sdk
# package's __init__, which loads anyio and asyncio; only gRPC code imports them
# (tests/grpc/test_protobuf.py checks their own imports).
MODULES = sorted(
    f"a2a_actors.protocol.{p.stem}"
    for p in PACKAGE_DIR.glob("*.py")
    if p.stem not in ("__init__", "_protobuf", "_grpc_service")
)


def test_the_package_has_the_expected_modules() -> None:
    """Guards the scan below against looking at an empty directory."""
    names = {m.rsplit(".", 1)[1] for m in MODULES}
    assert {"_models", "codec", "_jsonrpc", "_state", "_sse", "_legacy_v0_3"} <= names


def test_importing_the_protocol_imports_no_io_modules() -> None:
    script = (
        "import importlib, json, sys\n"
        f"for name in {['a2a_actors.protocol', *MODULES]!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded: list[str] = json.loads(out.stdout)
    assert "a2a_actors.protocol._state" in loaded  # the import really happened
    leaked = sorted(name for name in loaded if name in FORBIDDEN or name.split(".")[0] in FORBIDDEN)
    assert leaked == []


def test_a_forbidden_import_would_be_caught() -> None:
    """The subprocess check above is not vacuous: ``asyncio`` shows up when imported."""
    script = "import asyncio, json, sys; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True)
    assert "asyncio" in json.loads(out.stdout)


@pytest.mark.parametrize("path", sorted(PACKAGE_DIR.glob("*.py")), ids=lambda p: p.name)
def test_no_coroutines_in_the_protocol(path: pathlib.Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = [
        f"{type(node).__name__} at line {getattr(node, 'lineno', '?')}"
        for node in ast.walk(tree)
        if isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith)
    ]
    assert found == []


def _existing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _contracts_for_existing_packages(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The pyproject import-linter config, restricted to packages that exist today."""
    linter = json.loads(json.dumps(config["tool"]["importlinter"]))
    missing = [p for p in linter["root_packages"] if not _existing(p)]
    linter["root_packages"] = [p for p in linter["root_packages"] if _existing(p)]
    for contract in linter["contracts"]:
        if contract["type"] == "layers":
            layers = []
            for layer in contract["layers"]:
                parts = [m.strip() for m in layer.split("|")]
                missing += [m for m in parts if not _existing(m)]
                kept = [m for m in parts if _existing(m)]
                if kept:
                    layers.append(" | ".join(kept))
            contract["layers"] = layers
        if contract["type"] == "forbidden":
            # External forbidden modules need the external graph (pyproject lacks this flag).
            linter["include_external_packages"] = True
    return linter, missing


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def test_import_linter_contracts(tmp_path: pathlib.Path) -> None:
    exe = pathlib.Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("import-linter is not installed")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    linter, missing = _contracts_for_existing_packages(config)
    lines = ["[tool.importlinter]"]
    lines += [f"{k} = {_toml(v)}" for k, v in linter.items() if k != "contracts"]
    for contract in linter["contracts"]:
        lines += ["", "[[tool.importlinter.contracts]]"]
        lines += [f"{k} = {_toml(v)}" for k, v in contract.items()]
    (tmp_path / "importlinter.toml").write_text("\n".join(lines) + "\n")
    result = subprocess.run(
        [str(exe), str(tmp_path / "importlinter.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    kept = [c["name"] for c in linter["contracts"]]
    for name in kept:
        assert f"{name} KEPT" in result.stdout
    assert "The protocol core does no I/O" in kept
    # Packages named by the contracts that do not exist yet were left out, not failed on;
    # the layers that remain still end with the protocol at the bottom.
    layers = next(c["layers"] for c in linter["contracts"] if c["type"] == "layers")
    assert layers[-1] == "a2a_actors.protocol"
    assert "a2a_actors.protocol" not in missing
