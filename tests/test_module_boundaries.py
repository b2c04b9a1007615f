"""Module boundaries of `stages/`, checked statically: no import cycles, helpers never import a
stage, and no module-global state that a second run in the same process could inherit."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES = ROOT / "stages"


def _modules() -> dict[str, ast.Module]:
    modules = {}
    for path in STAGES.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = ast.parse(path.read_text(encoding="utf-8"))
    return modules


def _imports(tree: ast.Module, known: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found |= {name for name in names if name in known}
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(tree, set(modules)) - {name} for name, tree in modules.items()}


def test_no_import_cycles_in_stages():
    graph = _graph()
    visiting, done, cycles = [], set(), []

    def visit(module: str) -> None:
        if module in visiting:
            cycles.append(visiting[visiting.index(module) :] + [module])
            return
        if module in done:
            return
        visiting.append(module)
        for target in sorted(graph[module]):
            visit(target)
        visiting.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    assert cycles == []


def test_helpers_never_import_a_stage():
    graph = _graph()
    stage_modules = {name for name in graph if name.count(".") == 1 and name != "stages.store"}
    stage_modules -= {"stages.contracts", "stages.common", "stages.models"}
    helpers = [n for n in graph if n.startswith(("stages.common", "stages.models"))]
    offenders = {h: sorted(graph[h] & stage_modules) for h in helpers if graph[h] & stage_modules}
    assert offenders == {}


def test_stages_and_models_rebind_no_module_state_at_run_time():
    """A `global` statement rebinds module state from inside a function: how a model client built
    for one run leaked into the next (rerank's and retrieval's old module-global clients). The
    CLI's progress switch (stages.common.progress) is process-wide on purpose, not model state."""
    offenders = [
        name
        for name, tree in _modules().items()
        if not name.startswith("stages.common")
        and any(isinstance(node, ast.Global) for node in ast.walk(tree))
    ]
    assert offenders == []
