"""The package's structure, read from its source: import circles and reaches into private fields.

Both checks parse the modules (``ast``), so imports under ``if TYPE_CHECKING:`` and imports
inside functions count like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import a2a_actors
import a2a_actors.runtime

PACKAGE = Path(a2a_actors.__file__).parent
RUNTIME = Path(a2a_actors.runtime.__file__).parent


def _imports(path: Path) -> list[tuple[ast.ImportFrom | ast.Import, bool]]:
    """Every import statement of ``path``, with whether it is under TYPE_CHECKING."""
    tree = ast.parse(path.read_text(), filename=str(path))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for inner in node.body:
                for sub in ast.walk(inner):
                    typing_only.add(id(sub))
    return [
        (node, id(node) in typing_only)
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]


def runtime_graph() -> dict[str, dict[str, bool]]:
    """Module -> {imported runtime module: typing only}, for a2a_actors.runtime."""
    # keyed by the module's name without its private underscore: ``_actor.py`` is "actor"
    files = {p.stem.removeprefix("_"): p for p in RUNTIME.glob("*.py") if p.stem != "__init__"}
    modules = set(files)
    graph: dict[str, dict[str, bool]] = {}
    for name in sorted(modules):
        edges: dict[str, bool] = {}
        for node, typing_only in _imports(files[name]):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    targets.append(node.module.split(".")[0].removeprefix("_"))
                else:
                    targets.extend(alias.name.removeprefix("_") for alias in node.names)
            else:
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and node.level == 0
                    else [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                for full in names:
                    parts = full.split(".")
                    if parts[:2] == ["a2a_actors", "runtime"] and len(parts) > 2:
                        targets.append(parts[2].removeprefix("_"))
            for target in targets:
                if target in modules and target != name:
                    edges[target] = edges.get(target, True) and typing_only
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_find_cycle_finds_one_and_only_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_runtime_imports_point_one_way() -> None:
    graph = runtime_graph()
    assert "environment" in graph
    assert "supervisor" in graph
    assert find_cycle({name: set(edges) for name, edges in graph.items()}) is None


def test_the_agent_api_names_its_peers_through_interfaces_only() -> None:
    graph = runtime_graph()
    # ctx.agent, ctx.supervisor and ctx.delegator are protocols of .interfaces: the context
    # imports neither the agent nor the supervisor (both import it), nor the actor.
    for peer in ("agent", "supervisor", "actor"):
        assert peer not in graph["context"], peer
    assert graph["interfaces"].keys() <= {"fanout"}
    # The runtime's parts never import the supervisor, whose fields they are.
    for part in ("actor", "publication", "slot", "environment", "roster", "streams", "queries"):
        assert "supervisor" not in graph[part], part


# -- reaching into other objects' private fields -------------------------------------------

# Modules owned outside the runtime that still read another object's underscore field,
# listed so that no new one goes unnoticed; each entry is its owner's to remove.
KNOWN_REACHES: dict[str, frozenset[str]] = {
    # argparse has no public way to list a parser's options (for "did you mean --port?").
    "cli.py": frozenset({"command._actions"}),
    "client/_cli/commands.py": frozenset({"argparse._SubParsersAction"}),
    "client/_client.py": frozenset({"client._own_http"}),
    "client/_remote_agent.py": frozenset(
        {
            "self._session._learn",
            "target._settle",
            "self._session._settle",
        }
    ),
    # The classmethod factories below start and stop the object they build.
    "cluster/_bucket.py": frozenset(
        {"bucket._follow", "bucket._unfollow", "bucket._stop_when_idle"}
    ),
    "cluster/_connection.py": frozenset({"conn._disconnects", "conn._reconnects", "conn._back"}),
    "cluster/_node.py": frozenset({"node._settle_lost_nodes"}),
    "cluster/_push_configs.py": frozenset({"store._bucket", "store._apply"}),
    "cluster/_task_store.py": frozenset({"store._apply"}),
    # AgentScope 2.0's Agent keeps its system prompt only privately (no accessor, no copy);
    # a task's agent is built with the served one's (frameworks/_agentscope_state.py).
    "frameworks/_agentscope_state.py": frozenset({"served._system_prompt"}),
    "loadtest/_cli.py": frozenset({"argparse._SubParsersAction"}),
    "loadtest/_histogram.py": frozenset(
        {
            "other._sum",
            "other._min",
            "other._max",
            "other._counts",
            "histogram._min",
            "histogram._max",
            "histogram._sum",
            "histogram._counts",
        }
    ),
    "stores/_sqlite.py": frozenset(
        {
            "self.push_configs._forget",
            "store._close_connections",
            "store._writer",
            "store._retain_until_closed",
        }
    ),
}


def private_reaches(source: str) -> list[str]:
    """Attribute reads of a single-underscore name on anything but ``self`` or ``cls``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append(ast.unparse(node))
    return found


def test_private_reaches_are_found() -> None:
    source = "self._a; cls._b; other._c; self._d._e; x.__dict__; y.z"
    assert private_reaches(source) == ["other._c", "self._d._e"]


def test_no_module_reads_another_objects_private_fields() -> None:
    offenders: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        allowed = KNOWN_REACHES.get(relative, frozenset())
        new = [r for r in private_reaches(path.read_text()) if r not in allowed]
        if new:
            offenders[relative] = new
    assert offenders == {}


def test_the_runtime_and_the_protocol_read_no_private_fields_at_all() -> None:
    for folder in ("runtime", "protocol"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            assert private_reaches(path.read_text()) == [], path


def test_the_runtime_asks_its_remote_seam_and_never_checks_for_a_cluster() -> None:
    """A single process and a cluster differ only in the ``RemoteTasks`` the environment
    holds (runtime/_local_tasks.py, cluster/_member.py): no branch on whether there is one."""
    branches = [
        f"{path.name}:{number}"
        for path in sorted(RUNTIME.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if ("remote is None" in line or "remote is not None" in line)
        and "LocalTasks(" not in line  # where the environment chooses the default
    ]
    assert branches == []


def test_no_folder_has_an_import_circle() -> None:
    """Within each package (a folder), its modules' imports form no circle; type-checking
    imports aside, as in the import-linter contracts (pyproject.toml)."""
    import grimp

    graph = grimp.build_graph("a2a_actors", exclude_type_checking_imports=True)
    folders: dict[str, set[str]] = {}
    for module in graph.modules:
        folders.setdefault(module.rpartition(".")[0], set()).add(module)
    circles = {}
    for folder, modules in folders.items():
        edges = {
            m: {t for t in graph.find_modules_directly_imported_by(m) if t in modules}
            for m in modules
        }
        cycle = find_cycle(edges)
        if cycle is not None:
            circles[folder] = cycle
    assert circles == {}
