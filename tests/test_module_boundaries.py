"""Module boundaries, checked statically and in a fresh interpreter:

- the project's own modules import each other without cycles (function-level and TYPE_CHECKING
  imports count: a cycle hidden in a function still ties the modules together);
- no stage imports another stage, and helpers (`stages.common`, `stages.models`) never import one;
- no module-global state a second run in the same process could inherit;
- the executor and the evaluation logic run without Prefect;
- the command line (`cli/`) is the top layer: nothing else in the project imports it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("stages", "flows", "agents", "eval", "quality", "cli")
# Modules directly under stages/ that are not stages: the contracts, the store, the helpers.
NOT_STAGES = {
    "stages.contracts",
    "stages.store",
    "stages.common",
    "stages.models",
    "stages.formats",
    "stages.catalog",  # the ordered list of stages the layers above share; imports them all
}


def test_executor_and_eval_import_without_prefect():
    """Run in a fresh interpreter: this test process has imported Prefect already."""
    code = (
        "import sys\n"
        "import flows.executor, flows.revise, flows.results, flows.observability\n"
        "import eval.release_gate, eval.metrics, eval.report, eval.scoring, eval.frozen_sets\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'prefect'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_cli_and_the_guardrails_import_neither_prefect_nor_spacy():
    """spaCy's import (for its stop-word list) was 0.5 s of each `grounding ask`; it loads only
    when a name or PII check needs it. (tests/test_cli.py runs an ask without Prefect.)"""
    code = (
        "import sys\n"
        "import cli.app, flows.executor, stages.guardrails\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'prefect', 'spacy', 'thinc'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _project_modules() -> dict[str, Path]:
    return {
        _module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
    }


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its body."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return cycles


def test_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package):
    cycles = import_cycles(import_graph(_project_modules()))
    touching = [c for c in cycles if any(m.split(".")[0] == package for m in c)]
    assert touching == [], touching


def _stage_graph() -> dict[str, set[str]]:
    return {n: t for n, t in import_graph(_project_modules()).items() if n.startswith("stages")}


def _stage_modules(graph: dict[str, set[str]]) -> set[str]:
    """Each stage's own module: stages.<name>, a package's __init__ included."""
    return {n for n in graph if n.count(".") == 1} - NOT_STAGES


def _owning_stage(module: str, stages: set[str]) -> str | None:
    return next((s for s in stages if module == s or module.startswith(s + ".")), None)


def test_no_stage_imports_another_stage():
    graph = _stage_graph()
    stages = _stage_modules(graph)
    offenders = {}
    for module, targets in graph.items():
        own = _owning_stage(module, stages)
        others = {_owning_stage(t, stages) for t in targets} - {None, own}
        if own and others:
            offenders[module] = sorted(others)
    assert offenders == {}


def test_helpers_never_import_a_stage():
    graph = _stage_graph()
    stages = _stage_modules(graph)
    helpers = [
        n for n in graph if n.startswith(("stages.common", "stages.models", "stages.formats"))
    ]
    offenders = {h: sorted(t for t in graph[h] if _owning_stage(t, stages)) for h in helpers}
    assert {h: t for h, t in offenders.items() if t} == {}


def test_stages_and_models_rebind_no_module_state_at_run_time():
    """A `global` statement rebinds module state from inside a function: how a model client built
    for one run leaked into the next (rerank's and retrieval's old module-global clients). The
    CLI's progress switch (stages.common.progress) is process-wide on purpose, not model state."""
    offenders = [
        name
        for name, path in _project_modules().items()
        if name.startswith("stages")
        and not name.startswith("stages.common")
        and any(isinstance(node, ast.Global) for node in ast.walk(ast.parse(path.read_text())))
    ]
    assert offenders == []


def test_eval_imports_nothing_from_flows():
    """The evaluation sits beside the flows it is driven by, not below them: what it needs from
    the pipeline (the stage list) lives in `stages.catalog`."""
    graph = import_graph(_project_modules())
    upward = {
        m: sorted(t for t in targets if t.startswith("flows")) for m, targets in graph.items()
    }
    assert {m: t for m, t in upward.items() if m.startswith("eval") and t} == {}


def test_nothing_below_the_command_line_imports_it():
    """Commands call the flows, the stages, the agent wing and the quality loop; a flow or a
    server that imported a command would tie it to typer and to the terminal's output."""
    graph = import_graph(_project_modules())
    upward = {
        m: sorted(t for t in targets if t.split(".")[0] == "cli") for m, targets in graph.items()
    }
    assert {m: t for m, t in upward.items() if m.split(".")[0] != "cli" and t} == {}


def test_the_command_line_leaves_prefect_to_the_flows():
    """A command that runs a flow calls it in `flows/`; the CLI itself never imports Prefect."""
    offenders = []
    for path in sorted((ROOT / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            if any(name.split(".")[0] == "prefect" for name in names):
                offenders.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    assert offenders == []


# A backstop, not a target: a module is split when it holds two concerns, whatever its length
# (files packed to sit just under a tighter line cap were the smell this replaces). One past
# this many lines is read and split by concern before it grows further.
MAX_MODULE_LINES = 1000


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_grows_past_the_backstop(package):
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / package).rglob("*.py")
    }
    assert {p: n for p, n in sizes.items() if n > MAX_MODULE_LINES} == {}


@pytest.mark.parametrize("folder", ["scripts", "bench"])
def test_scripts_and_benches_import_the_project_never_tests_nor_edit_sys_path(folder):
    """They run against the installed project (`make setup` installs both as packages): a
    script that edits sys.path or a bench that borrows a test's helper breaks when moved."""
    offenders = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                imported = [node.module or ""]
            elif isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            else:
                continue
            if any(name.split(".")[0] == "tests" for name in imported):
                offenders.append(f"{path.name}: imports tests")
        if "sys.path.insert" in source or "sys.path.append" in source:
            offenders.append(f"{path.name}: edits sys.path")
    assert offenders == []


def _tracked_modules(*folders: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--", *(f"{f}/*.py" for f in folders)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / name for name in listed]


def _shared_names(paths: list[Path]) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(path.name, []).append(path.relative_to(ROOT).as_posix())
    return {name: sorted(where) for name, where in by_name.items() if len(where) > 1}


def _a_stage_config(path: str) -> bool:
    return path.startswith("stages/") and path.count("/") == 2 and path.endswith("/config.py")


def test_no_two_modules_share_a_name_outside_the_benches_and_the_command_line():
    """A newcomer finds the room for a change by its file name: a name means one thing. Each
    package's __init__ and each stage package's config.py (that stage's settings) are the one
    pattern allowed to repeat."""
    below = [p for p in PACKAGES if p != "cli"]
    shared = _shared_names(_tracked_modules(*below, "scripts"))
    shared.pop("__init__.py", None)
    if all(_a_stage_config(p) for p in shared.get("config.py", [])):
        shared.pop("config.py", None)
    assert shared == {}


def test_a_bench_module_named_like_a_project_module_is_the_bench_of_it():
    """`python -m bench tables` measures table ingestion, so bench/tables.py beside
    stages/formats/tables.py is one meaning; a bench helper is named for what it holds."""
    from bench import BENCHES

    project = {p.name for p in _tracked_modules(*PACKAGES, "scripts")}
    helpers = [
        p.name
        for p in _tracked_modules("bench")
        # __init__ and __main__ are Python's package protocol, not names a room chooses
        if p.stem not in BENCHES
        and p.name in project
        and p.name not in ("__init__.py", "__main__.py")
    ]
    assert helpers == []


def test_a_command_module_named_like_a_project_module_is_the_command_of_it():
    """`grounding backfill` lives in cli/backfill.py beside flows/backfill.py, the flow it runs:
    one meaning, two concerns. A command module that shares a name imports the module(s) of that
    name, so the name never means two unrelated things."""
    below = [p for p in PACKAGES if p != "cli"]
    by_name: dict[str, list[str]] = {}
    for path in _tracked_modules(*below, "scripts"):
        by_name.setdefault(path.stem, []).append(_module_name(path))
    graph = import_graph(_project_modules())
    strangers = {}
    for path in _tracked_modules("cli"):
        namesakes = by_name.get(path.stem, []) if path.stem != "__init__" else []
        command = _module_name(path)
        if namesakes and not any(n in graph[command] for n in namesakes):
            strangers[command] = namesakes
    assert strangers == {}


def test_every_stage_states_its_own_version():
    """A stage's VERSION (its cache identity) is assigned in the stage's own module, never
    imported from a library it runs: bumping the library is then a visible change to the stage."""
    from stages.catalog import STAGES

    borrowed = []
    for name, module in STAGES.items():
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        owned = any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "VERSION" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for node in tree.body
        )
        if not owned:
            borrowed.append(name)
    assert borrowed == []
