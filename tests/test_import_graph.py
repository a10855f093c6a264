"""No import circle among mwperf's modules (issue 23: a 14-file circle ran config <-> bridges
<-> transports <-> emulation.network <-> remote.plan <-> subscribers <-> clocksync). Every import
counts: at module level, inside functions, and under TYPE_CHECKING — a circle that only the type
checker sees is still two modules that cannot be understood, or moved, one without the other."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "python"


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The mwperf modules ``name`` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return {m for m in found if m in known and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle() -> None:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(
        " <-> ".join(c) + "\n  " + "; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c)
        for c in found)


def test_the_check_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
