"""The package layout: one declared layer order that every import follows, function bodies included; no
import cycle between modules; the research harness (benchmarks/) outside the wheel; nothing shadows
Hugging Face's `tokenizers` when Python runs from the repository root."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Bottom to top: a module may import its own layer and the layers below it, never one above. Layers that
# share a tuple are one floor and do not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "io", "plotting"),
    ("backbone",),
    ("tokenizers",),
    ("training",),
    ("data",),
    ("pretrained",),
    ("tasks",),
    ("deploy",),
    ("inspect",),
    ("serve",),
    ("cli",),
    ("__init__",),  # tabrasa.load, the package's one-call API
)


def floor_of(layer: str) -> int:
    for index, names in enumerate(LAYERS):
        if layer in names:
            return index
    raise AssertionError(f"tabrasa/{layer} is in no layer of tests/test_layout.py; add it to LAYERS")


def module_name(path: Path, package_root: Path) -> str:
    parts = path.relative_to(package_root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, package: str) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of `package` in the file, at any depth (function bodies, if
    blocks, TYPE_CHECKING); `from a import b` yields a.b as well, since b may be a submodule."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            yield node.lineno, f"<relative import in {package}>"


def import_graph(package_root: Path) -> dict[str, dict[str, int]]:
    """module → {imported module of the same package → line}, for every module file under package_root."""
    package = package_root.name
    files = {module_name(p, package_root): p for p in package_root.rglob("*.py")}
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        edges: dict[str, int] = {}
        for line, target in imports_of(path, package):
            if target.startswith("<relative"):
                raise AssertionError(f"{path}:{line} uses a relative import; write it absolute")
            if (target == package or target.startswith(package + ".")) and target in files and target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def wrong_way_imports(package_root: Path) -> list[str]:
    found = []
    for source, edges in import_graph(package_root).items():
        for target, line in edges.items():
            if target == package_root.name:
                continue  # the package's own __init__ (tabrasa.__version__) is not a layer import
            low, high = layer_of(source), layer_of(target)
            if floor_of(high) > floor_of(low) or (high != low and floor_of(high) == floor_of(low)):
                found.append(f"{source}:{line} imports {target} ({layer_of(source)} → {layer_of(target)})")
    return sorted(found)


def import_cycles(package_root: Path) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each a cycle of imports."""
    graph = import_graph(package_root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_every_import_points_down_the_declared_layers() -> None:
    found = wrong_way_imports(ROOT / "tabrasa")
    assert not found, "wrong-way imports:\n" + "\n".join(found)


def test_no_import_cycle_between_modules() -> None:
    cycles = import_cycles(ROOT / "tabrasa")
    assert not cycles, "import cycles:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def test_every_layer_folder_is_declared() -> None:
    for path in (ROOT / "tabrasa").iterdir():
        if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py":
            floor_of(path.stem if path.suffix == ".py" else path.name)


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "tabrasa"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_counter_a_planted_function_local_wrong_way_import_is_caught(tmp_path: Path) -> None:
    root = _plant(tmp_path, {
        "__init__.py": "",
        "backbone/__init__.py": "",
        "backbone/encoder.py": "def build():\n    from tabrasa.tasks.task import Task\n    return Task\n",
        "tasks/__init__.py": "",
        "tasks/task.py": "from tabrasa.backbone.encoder import build\nclass Task: ...\n",
    })  # fmt: skip
    found = wrong_way_imports(root)
    assert found == ["tabrasa.backbone.encoder:2 imports tabrasa.tasks.task (backbone → tasks)"]
    assert import_cycles(root) == [["tabrasa.backbone.encoder", "tabrasa.tasks.task"]]


def test_counter_a_cycle_inside_one_layer_is_caught(tmp_path: Path) -> None:
    root = _plant(tmp_path, {
        "__init__.py": "",
        "tasks/__init__.py": "",
        "tasks/base.py": "def end():\n    from tabrasa.tasks.export import save\n",
        "tasks/export.py": "from tabrasa.tasks.base import end\n",
    })  # fmt: skip
    assert not wrong_way_imports(root)
    assert import_cycles(root) == [["tabrasa.tasks.base", "tabrasa.tasks.export"]]


def test_the_package_never_imports_the_research_harness() -> None:
    for path in (ROOT / "tabrasa").rglob("*.py"):
        for line, target in imports_of(path, "tabrasa"):
            # scipy is the harness's (the [bench] extra); a library tabrasa uses may still import it itself
            assert target.split(".")[0] not in {"benchmarks", "scipy", "sklearn"}, f"{path}:{line}: {target}"
    code = (
        "import sys, tabrasa, tabrasa.cli.main, tabrasa.tasks, tabrasa.data, tabrasa.deploy, tabrasa.inspect;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'benchmarks'))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("name", ["scipy", "scikit-learn"])
def test_research_only_dependencies_are_not_core(name: str) -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.split(">")[0].split("=")[0].strip() == name for d in project["dependencies"])
    assert any(d.startswith(name) for d in project["optional-dependencies"]["bench"])


def test_the_wheel_packages_tabrasa_only() -> None:
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert found["include"] == ["tabrasa*"]
    assert (ROOT / "benchmarks" / "__init__.py").exists()


def test_import_tokenizers_from_repo_root_finds_hugging_face() -> None:
    code = "import tokenizers, sys; print(tokenizers.__file__); assert hasattr(tokenizers, 'Tokenizer')"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "site-packages" in out.stdout or "dist-packages" in out.stdout
    assert not (ROOT / "tokenizers").exists(), "a top-level tokenizers/ folder would shadow Hugging Face's"


def test_package_folders_follow_the_data_flow() -> None:
    for folder in ("tabrasa/tokenizers", "tabrasa/backbone", "tabrasa/tasks", "configs", "tests", "scripts"):
        assert (ROOT / folder).is_dir(), folder
