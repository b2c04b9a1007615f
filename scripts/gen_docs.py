"""Generate the docs site's reference pages from the code, so they cannot drift from it.

- `reference/cli.md`: every `grounding` command and option, read from the Typer app;
- `reference/configuration.md`: every file in configs/ and every model its keys are fields of:
  the pipeline's settings, each stage's pydantic `Config`, the agent-run check's, the serving
  surfaces' and the schedules' (field, type, default and description: the `Field` description,
  else the comment the source writes beside or above the field);
- `benchmarks.md` and its plots: one table of headline figures against their targets and
  anchors (bench/results_page.py), then each bench's own `summarize` of `bench/results/<bench>.json`
  in a collapsed block, and matplotlib plots;
- `models/cards/*.md`: the model and data cards that live beside the models and data.

mkdocs runs this file as a hook (`hooks:` in mkdocs.yml): the pages are added to the build in
memory and never written into docs/, and every page's tables get break points between the parts
of names (`soft_breaks`). `python -m scripts.gen_docs --out DIR` writes the pages to DIR to look
at.
"""

from __future__ import annotations

import argparse
import ast
import html
import importlib
import inspect
import io
import json
import re
import textwrap
import tokenize
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


CARDS = {  # page name -> the card's source, relative to the repository root
    "claim-judge-minilm-v1": "data/models/claim-judge-minilm-v1/README.md",
    "claim-judge-minilm-v2": "data/models/claim-judge-minilm-v2/README.md",
    "answerability-minilm-v4": "data/models/answerability-minilm-v4/README.md",
    "answerability-minilm-v2": "data/models/answerability-minilm-v2/README.md",
    "ranker-product-training-data": "data/training/ranker-product/README.md",
    "sample-knowledge-base": "data/sample/README.md",
    "eval-sets": "eval/README.md",
}


# ---------------------------------------------------------------- CLI reference


def cli_reference() -> str:
    """Every command of the `grounding` app with its usage, arguments and options."""
    import typer.main

    from cli.app import app

    root = typer.main.get_command(app)
    parts = [
        "# Command line reference",
        "",
        "Generated from the Typer app in `cli/app.py` when the site is built; "
        "`grounding COMMAND --help` prints the same.",
        "",
    ]
    with root.context_class(root, info_name="grounding") as context:
        parts += _command_section(root, context, "grounding", top=True)
    return "\n".join(parts) + "\n"


def _command_section(command: Any, context: Any, path: str, top: bool = False) -> list[str]:
    lines = [] if top else [f"## `{path}`", ""]
    help_text = inspect.cleandoc(command.help or "").split("\f")[0].strip()
    if help_text:
        lines += [_plain(help_text), ""]
    lines += ["```", command.get_usage(context).strip(), "```", ""]
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    params = [p for p in params if p.name != "help"]
    if params:
        lines += ["| argument or option | type | default | description |", "|---|---|---|---|"]
        for param in params:
            lines.append(_param_row(param))
        lines.append("")
    if hasattr(command, "list_commands"):  # a group: its commands follow
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            with sub.context_class(sub, info_name=name, parent=context) as sub_context:
                lines += _command_section(sub, sub_context, f"{path} {name}")
    return lines


def _param_row(param: Any) -> str:
    if param.param_type_name == "argument":
        name = f"`{param.name.upper()}`"
    else:
        name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
    kind = "flag" if getattr(param, "is_flag", False) else f"`{param.bare_type()}`"
    default = param.default
    if callable(default) or default is None or default == () or default == []:
        shown = "required" if param.required else ""
    else:
        shown = f"`{default}`"
    help_text = _plain(" ".join((getattr(param, "help", None) or "").split()))
    return f"| {name} | {kind} | {shown} | {_cell(help_text)} |"


def _plain(text: str) -> str:
    """Rich console markup ("[bold]x[/bold]") out of help text, and its placeholders
    ("runs/<run_id>/") shown as text instead of read as HTML tags."""
    return _text(re.sub(r"\[/?[a-z ]+\]", "", text))


def _text(text: str) -> str:
    """`<` and `>` outside code spans as text, never as an HTML tag."""
    parts = re.split(r"(`[^`]*`)", text)  # code spans show < and > as they are
    return "".join(
        part if part.startswith("`") else part.replace("<", "&lt;").replace(">", "&gt;")
        for part in parts
    )


def _cell(text: str) -> str:
    return _text(text).replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- configuration reference


CONFIG_MODELS = {  # config file -> (what reads it, the model its keys are fields of)
    "agents.yaml": (
        "`grounding api`, `mcp`, `tools`, `agent`",
        "agents.serving.agents_config:AgentsConfig",
    ),
    "schedules.yaml": ("`grounding serve`", "flows.serve:DeploymentSpec"),
    "quality.yaml": (
        "`grounding review sample-judge`",
        "quality.sampled_judging:SampledJudgingConfig",
    ),
}


def config_reference() -> str:
    """Every file in configs/ and every model its keys are fields of: the pipeline's settings,
    every stage's Config, the agent-run check's, the serving surfaces' and the schedules'."""
    import yaml

    from flows.pipeline_config import PipelineConfig, load_config
    from stages.catalog import STAGES

    configs = ROOT / "configs"
    configured = load_config(configs / "pipeline.yaml")
    raw_stages = yaml.safe_load((configs / "pipeline.yaml").read_text(encoding="utf-8"))["stages"]
    included = {  # stage -> the files its section pulls in with include:
        name: [Path(p).name for p in (section or {}).get("include", [])]
        for name, section in raw_stages.items()
    }
    files = _config_files(configs, included, STAGES)
    parts = [
        "# Configuration reference",
        "",
        "Generated from the pydantic models and `configs/` when the site is built. Each stage's "
        "settings live under `stages.<stage>` in `configs/pipeline.yaml` (or a file it pulls in "
        "with `include:`); one run overrides one with `--set <stage>.<field>=<value>`. Unknown "
        "keys are errors. *configured* is the value `configs/pipeline.yaml` sets where it "
        "differs from the default.",
        "",
        "## The files in configs/",
        "",
        "| file | read by | what it holds |",
        "|---|---|---|",
    ]
    for name, (reader, anchor) in files.items():
        summary = _first_comment(configs / name)
        parts.append(f"| [`configs/{name}`](#{anchor}) | {reader} | {_cell(summary)} |")
    parts += ["", "## Pipeline {#pipeline}", "", "Top-level keys of `configs/pipeline.yaml`.", ""]
    seen: set[type] = set()
    nested: list[tuple[str, type]] = []
    parts += _model_table(PipelineConfig, "", nested, configured, skip={"root", "stages"})
    for name, module in STAGES.items():
        summary = untracked((module.__doc__ or "").strip().split("\n\n")[0])
        where = f"`stages/{_source_name(module)}`, version {module.VERSION}"
        parts += [
            "",
            f"## {name}",
            "",
            f"{where}. {' '.join(summary.split())}",
        ]
        pulled = [f"`configs/{f}`" for f in included.get(name, [])]
        optional = [
            f"`configs/{f}`"
            for f, (_, a) in files.items()
            if a == name and f != "pipeline.yaml" and f not in included.get(name, [])
        ]
        if pulled:
            parts += ["", f"Its section includes {', '.join(pulled)}."]
        if optional:
            parts += [
                "",
                f"Opt-in variants, to include after those: {', '.join(optional)} (each file's "
                "header says what it was fitted on and measured at).",
            ]
        parts.append("")
        parts += _model_table(module.Config, f"{name}.", nested, configured.stages[name])
    parts += _agent_sections(nested)
    parts += [
        "",
        "## Settings blocks {#settings-blocks}",
        "",
        "The blocks nested in the tables above (the `llm` block, `vision`, the task runner…).",
    ]
    while nested:  # nested settings blocks (the `llm` block, vision, task runner), once each
        prefix, model = nested.pop(0)
        if model in seen:
            parts += ["", f"### `{prefix}`", "", f"The same fields as `{model.__name__}` above."]
            continue
        seen.add(model)
        doc = untracked(" ".join(inspect.cleandoc(model.__doc__ or "").split()))
        parts += ["", f"### `{prefix}` ({model.__name__})", ""] + ([doc, ""] if doc else [])
        parts += _model_table(model, f"{prefix}.", nested)
    return "\n".join(parts) + "\n"


def _config_files(
    configs: Path, included: dict[str, list[str]], stages: Any
) -> dict[str, tuple[str, str]]:
    """configs/<file> -> (what reads it, the anchor of the section with its fields). A file no
    stage includes and no model claims is matched to the stage whose Config has its keys."""
    import yaml

    files: dict[str, tuple[str, str]] = {}
    for path in sorted(configs.glob("*.y*ml")):
        name = path.name
        if name == "pipeline.yaml":
            files[name] = ("every command that runs the pipeline (`--config`)", "pipeline")
            continue
        if name in CONFIG_MODELS:
            reader, model = CONFIG_MODELS[name]
            files[name] = (reader, _anchor(model.split(":")[1]))
            continue
        stage = next((s for s, names in included.items() if name in names), None)
        how = "included by"
        if stage is None:
            keys = set(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
            stage = next(
                (s for s, m in stages.items() if keys and keys <= set(m.Config.model_fields)), None
            )
            how = "opt-in, included after the default by"
        if stage is None:
            files[name] = ("nothing: not a settings file of any model here", "pipeline")
            continue
        files[name] = (f"{how} `stages.{stage}`", stage)  # the heading's own anchor
    return files


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _first_comment(path: Path) -> str:
    """The file's first comment paragraph, as one line (its own words for what it holds)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        text = line.lstrip("#").strip()
        if not text:
            if lines:
                break
            continue
        lines.append(text)
    text = " ".join(lines)
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0]
    return re.sub(r"\s*\((?:issues?|#)\s*[\d, ]+\)", "", first)


def _agent_sections(nested: list[tuple[str, type]]) -> list[str]:
    """The agent wing's settings: the agent-run check and the serving surfaces, then the
    schedules of `grounding serve`."""
    from agents.checking.check import VERSION as CHECK_VERSION
    from agents.checking.check import Config as CheckConfig
    from agents.serving.agents_config import AgentsConfig, load_agents_config
    from flows.serve import DeploymentSpec

    serving = load_agents_config(ROOT / "configs" / "agents.yaml")
    parts = [
        "",
        "## Agent-run check {#checkconfig}",
        "",
        f"`agents/checking/check.py`, version {CHECK_VERSION}. "
        + " ".join(inspect.cleandoc(CheckConfig.__doc__ or "").split())
        + " `grounding check --config FILE` reads these keys from a YAML file; the serving "
        "surfaces' `/v1/check` and the MCP tool `check_answer` take them from the `check:` "
        "block of `configs/agents.yaml`.",
        "",
    ]
    parts += _model_table(CheckConfig, "check.", [])
    parts += [
        "",
        "## Serving agents {#agentsconfig}",
        "",
        "`configs/agents.yaml`, read by `grounding api`, `grounding mcp`, `grounding tools` and "
        "`grounding agent` (`agents/serving/agents_config.py`): the instruction texts a model gets "
        "with each tool result, API keys (stored as sha256) mapped to principals of "
        "`configs/principals.yaml`, request limits and server defaults. Its keys are top-level; "
        "the blocks below are named `agents.yaml:<key>`.",
        "",
    ]
    parts += _model_table(AgentsConfig, "agents.yaml:", nested, serving)
    import yaml

    schedules = yaml.safe_load((ROOT / "configs" / "schedules.yaml").read_text(encoding="utf-8"))
    names = ", ".join(
        f"`{n}` ({spec.get('flow')}, `{spec.get('cron')}`)"
        for n, spec in (schedules.get("deployments") or {}).items()
    )
    parts += [
        "",
        "## Schedules {#deploymentspec}",
        "",
        "`configs/schedules.yaml`, read by `grounding serve` (`flows/serve.py`): one entry under "
        f"`deployments:` per scheduled flow. Configured: {names}.",
        "",
    ]
    parts += _model_table(DeploymentSpec, "deployments.<name>.", [])
    from quality.sampled_judging import SampledJudgingConfig, load_config

    parts += [
        "",
        "## Sampled judging {#sampledjudgingconfig}",
        "",
        "`configs/quality.yaml`, read by `grounding review sample-judge` "
        "(`quality/sampled_judging.py`): which answers of a run the LLM judge checks again "
        "after the run, and with what settings; its keys sit under `sampled_judging:`.",
        "",
    ]
    configured = load_config(ROOT / "configs" / "quality.yaml")
    parts += _model_table(SampledJudgingConfig, "sampled_judging.", [], configured)
    return parts


def _source_name(module: Any) -> str:
    path = Path(inspect.getfile(module))
    return f"{path.parent.name}/" if path.name == "__init__.py" else path.name


def _model_table(
    model: type,
    prefix: str,
    nested: list[tuple[str, type]],
    configured: Any = None,
    skip: set[str] = frozenset(),
) -> list[str]:
    """One row per field; with `configured` (the loaded pipeline config's instance of the model)
    a column for the values configs/pipeline.yaml sets."""
    from pydantic import BaseModel

    notes = field_comments(model)
    header = "| field | type | default | configured | description |"
    rows = (
        [header, "|---|---|---|---|---|"]
        if configured is not None
        else [
            "| field | type | default | description |",
            "|---|---|---|---|",
        ]
    )
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        annotation = info.annotation
        inner = _model_in(annotation)
        if inner is not None and issubclass(inner, BaseModel):
            nested.append((f"{prefix}{name}", inner))
        description = info.description or notes.get(name, "")
        default = _default(info)
        cells = [f"`{name}`", _cell(_annotation(annotation)), _cell(default)]
        if configured is not None:
            value = getattr(configured, name)
            shown = "" if isinstance(value, BaseModel) else _shown(value)
            cells.append(_cell(shown if shown != default else ""))
        rows.append("| " + " | ".join([*cells, _cell(description)]) + " |")
    return rows if len(rows) > 2 else ["No settings."]


def _model_in(annotation: Any) -> type | None:
    if isinstance(annotation, type):
        return annotation
    for arg in typing.get_args(annotation):
        if isinstance(arg, type) and hasattr(arg, "model_fields"):
            return arg
    return None


def _annotation(annotation: Any) -> str:
    if typing.get_origin(annotation) is typing.Literal:
        return " | ".join(f"`{json.dumps(a)}`" for a in typing.get_args(annotation))
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    text = str(annotation).replace("typing.", "").replace("NoneType", "None")
    text = re.sub(r"\b(?:[a-z_]+\.)+([A-Za-z]\w*)", r"\1", text)  # pathlib.Path -> Path
    text = re.sub(r"<class '([\w.]+)'>", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    return text


def _shown(value: Any) -> str:
    from pydantic_core import to_jsonable_python

    if isinstance(value, Path) and value.is_relative_to(ROOT):
        value = value.relative_to(ROOT).as_posix()
    return f"`{json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)}`"


def _default(info: Any) -> str:
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    if info.default_factory is not None:
        value = info.default_factory()
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if isinstance(value, BaseModel):
        return "see below"
    return _shown(value)


def field_comments(model: type) -> dict[str, str]:
    """Field name -> the comment the source writes beside it, or in the lines right above it."""
    try:
        source = textwrap.dedent(inspect.getsource(model))
    except (OSError, TypeError):
        return {}
    comments: dict[int, tuple[str, bool]] = {}  # line -> (text, alone on its line)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            alone = not token.line[: token.start[1]].strip()
            comments[token.start[0]] = (token.string.lstrip("#").strip(), alone)
    notes: dict[str, str] = {}
    body = ast.parse(source).body[0]
    for node in getattr(body, "body", []):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above, line = [], node.lineno - 1
        while line in comments and comments[line][1]:
            above.insert(0, comments[line][0])
            line -= 1
        beside = [comments[n][0] for n in range(node.lineno, node.end_lineno + 1) if n in comments]
        text = " ".join(above + [c for c in beside if c])
        text = re.sub(r"\s*noqa\b.*$", "", text).strip()
        text = untracked(text)
        if text:
            notes[node.target.id] = text
    return notes


# ---------------------------------------------------------------- benchmarks


def benchmark_pages() -> dict[str, str | bytes]:
    """`benchmarks.md`: one table of headline figures against their targets and anchors, then
    each bench's own summary one click away (a collapsed block), plus the plots."""
    from bench import BENCHES
    from bench.results_page import (
        TITLES,
        _load,
        _machine_line,
        headline_table,
        measured_on,
        other_files_table,
        summary,
    )

    results = ROOT / "bench" / "results"
    plots = benchmark_plots(results)
    table, files = headline_table(results, link=lambda name, text: f"[{text}](#{_slug(name)})")
    parts = [
        "# Benchmarks",
        "",
        "Generated when the site is built from `bench/results/*.json`. Each row is one bench's "
        "headline figure against its target and, where one exists, an anchor: a published "
        "figure or the reference it is compared with. *measured* is the date and commit of "
        "the result file, and says **older version** where a stage the bench exercises has a "
        "newer version now (older results record indexing, retrieval and rerank; newer ones every "
        "stage and the agent-run check). "
        "`python -m bench NAME` measures one again; each bench's own summary is one click "
        "away below.",
        "",
        *table,
        "",
    ]
    if plots:
        parts += ['??? note "Plots"', ""]
        for name in plots:
            parts += [f"    ![{PLOT_TITLES[name]}](images/{name}.png)", ""]
    for name in BENCHES:
        paths = files.get(name)
        if not paths:
            continue
        module = importlib.import_module(BENCHES[name])
        result = _load(paths[0])
        parts += [
            "",
            f"## {TITLES.get(name, name)} {{#{_slug(name)}}}",
            "",
            getattr(module, "DESCRIPTION", name).rstrip(".") + f" (`{paths[0].name}`, "
            f"measured {measured_on(result)}).",
            "",
            '??? note "Details"',
            "",
            _indent(narrow_tables(_demote(summary(name, result)))),
            "",
            _indent(_machine_line(result.get("machine", {}))),
        ]
        if len(paths) > 1:
            parts += ["", f'??? note "Other result files of this bench ({len(paths) - 1})"', ""]
            for path in paths[1:]:
                other = _load(path)
                parts += [
                    f"    **`{path.name}`**, measured {measured_on(other)}.",
                    "",
                    _indent(narrow_tables(_demote(summary(name, other), levels=4))),
                    "",
                ]
    others = files.get("", [])
    if others:
        parts += [
            "",
            "## Fits and sweeps {#fits-and-sweeps}",
            "",
            "Result files that scripts in `scripts/` wrote while fitting a threshold or "
            "choosing a setting, and the pages that report the choice.",
            "",
            '??? note "The files"',
            "",
            _indent("\n".join(other_files_table(others, _docs_pages()))),
        ]
    pages: dict[str, str | bytes] = {"benchmarks.md": "\n".join(parts) + "\n"}
    pages.update({f"images/{name}.png": data for name, data in plots.items()})
    return pages


def _docs_pages() -> dict[str, str]:
    """Each written docs page as a link from the benchmarks page -> its text."""
    pages = {}
    for path in sorted((ROOT / "docs").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")
        pages[f"[{title or path.stem}]({path.relative_to(ROOT / 'docs').as_posix()})"] = text
    return pages


def narrow_tables(markdown: str, max_columns: int = 7) -> str:
    """A table too wide for a laptop screen, read another way: one of a few rows is turned
    on its side (a row per column), a longer one is split into tables of at most
    `max_columns` columns that each repeat the first."""
    lines, out, index = markdown.splitlines(), [], 0
    while index < len(lines):
        if not (lines[index].startswith("|") and index + 1 < len(lines)) or not re.match(
            r"\|[\s:|-]+\|?$", lines[index + 1]
        ):
            out.append(lines[index])
            index += 1
            continue
        end = index + 2
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        rows = [_cells(line) for line in lines[index:end]]
        header, align, body = rows[0], rows[1], rows[2:]
        if len(header) <= max_columns:
            out += lines[index:end]
        elif len(body) <= 3:
            out += _table([header[0], *(row[0] for row in body)], None)
            out += _table([name, *(row[i] for row in body)] for i, name in enumerate(header) if i)
        else:  # the key columns (the first, and the second where the first repeats) in each
            key = [0] if len({row[0] for row in body}) == len(body) else [0, 1]
            step = max_columns - len(key)
            for start in range(len(key), len(header), step):
                keep = [*key, *range(start, min(start + step, len(header)))]
                out += _table([header[i] for i in keep], [align[i] for i in keep])
                out += _table([row[i] if i < len(row) else "" for i in keep] for row in body)
                out.append("")
        index = end
    return "\n".join(out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _table(rows: Any, align: list[str] | None = None) -> list[str]:
    """`rows` is a header (a list) with `align`, or an iterable of body rows."""
    if isinstance(rows, list) and rows and isinstance(rows[0], str):
        marks = align or ["---"] * len(rows)
        return ["| " + " | ".join(rows) + " |", "|" + "|".join(marks) + "|"]
    return ["| " + " | ".join(row) + " |" for row in rows]


def _slug(name: str) -> str:
    return name.replace("_", "-")


def _indent(markdown: str) -> str:
    """A block's content inside a collapsible `???` block."""
    return "\n".join(f"    {line}" if line.strip() else "" for line in markdown.splitlines())


def _demote(markdown: str, levels: int = 2) -> str:
    """A summary's own headings go below the section's."""
    return re.sub(
        r"^(#+) ", lambda m: "#" * min(len(m.group(1)) + levels, 6) + " ", markdown, flags=re.M
    )


PLOT_TITLES = {
    "scale": "Large corpora: wall time by corpus size (runs on a quiet machine)",
    "ranking": "nDCG@10 on the frozen sets: dense, fused and the full stack",
    "judge_cost": "Seconds per guardrail judgement by judge focus words",
}


def benchmark_plots(results: Path) -> dict[str, bytes]:
    """A few figures people would rather look at than read; a plot whose file is missing or
    whose shape changed is left out (its table stays)."""
    import matplotlib

    matplotlib.use("Agg")
    plots = {}
    for name, draw in (
        ("scale", _plot_scale),
        ("ranking", _plot_ranking),
        ("judge_cost", _plot_judge),
    ):
        try:
            figure = draw(results)
        except (OSError, KeyError, TypeError, ValueError):
            continue
        buffer = io.BytesIO()
        figure.savefig(
            buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None}
        )
        import matplotlib.pyplot as plt

        plt.close(figure)
        plots[name] = buffer.getvalue()
    return plots


def _plot_scale(results: Path):
    import matplotlib.pyplot as plt

    sizes: dict[int, dict] = {}
    for path in sorted(results.glob("scale*.json")):
        result = json.loads(path.read_text())
        machine = result.get("machine", {})
        load = (machine.get("load_average_1_5_15min") or [0])[0]
        if load > 2 * (machine.get("nproc") or 1):
            continue  # measured on a busy machine: its times are not comparable
        for size, entry in result["sizes"].items():
            sizes[int(size)] = entry
    documents = sorted(sizes)
    figure, axis = plt.subplots(figsize=(6.5, 3.5))
    axis.plot(documents, [sizes[d]["full"]["wall_s"] for d in documents], "o-", label="full build")
    for kind in sizes[documents[0]]["reruns"]:
        walls = [sizes[d]["reruns"][kind]["wall_s"] for d in documents]
        axis.plot(documents, walls, "o--", label=f"re-run: {kind.replace('_', ' ')}")
    axis.set(xscale="log", yscale="log", xlabel="documents", ylabel="wall seconds")
    axis.set_title(PLOT_TITLES["scale"], fontsize=10)
    axis.legend(fontsize=8)
    return figure


def _plot_ranking(results: Path):
    import matplotlib.pyplot as plt

    sets = json.loads((results / "ranking.json").read_text())["sets"]
    kinds = ["dense", "fused", "fused+rerank"]
    figure, axis = plt.subplots(figsize=(6.5, 3.5))
    width = 0.25
    for offset, kind in enumerate(kinds):
        values = [s["metrics"][kind]["ndcg@10"] for s in sets]
        positions = [i + (offset - 1) * width for i in range(len(sets))]
        axis.bar(positions, values, width, label=kind)
    axis.set_xticks(range(len(sets)), [s["set"] for s in sets], fontsize=8)
    axis.set(ylabel="nDCG@10", ylim=(0.5, 1.0))
    axis.set_title(PLOT_TITLES["ranking"], fontsize=10)
    axis.legend(fontsize=8)
    return figure


def _plot_judge(results: Path):
    import matplotlib.pyplot as plt

    points = []
    for path in sorted(results.glob("judge_cost*.json")):
        result = json.loads(path.read_text())
        points.append((result["judge_focus_words"], result["mean_s_after_first"]))
    points.sort()
    figure, axis = plt.subplots(figsize=(6.5, 3.0))
    axis.plot([p[0] for p in points], [p[1] for p in points], "o-")
    axis.set(xlabel="judge focus words", ylabel="mean seconds per judgement", ylim=(0, None))
    axis.set_title(PLOT_TITLES["judge_cost"], fontsize=10)
    return figure


# ---------------------------------------------------------------- model and data cards


def card_pages() -> dict[str, str]:
    """The cards beside the models and data, as pages; links out of the site become text."""
    pages = {}
    for name, source in CARDS.items():
        path = ROOT / source
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"(?<!!)\[([^\]]+)\]\((?!https?://)([^)]+)\)", r"\1 (`\2`)", text)
        pages[f"models/cards/{name}.md"] = f"<!-- generated from {source} -->\n\n{untracked(text)}"
    return pages


def generated_pages() -> dict[str, str | bytes]:
    pages: dict[str, str | bytes] = {
        "reference/cli.md": cli_reference(),
        "reference/configuration.md": config_reference(),
    }
    pages.update(benchmark_pages())
    pages.update(card_pages())
    return pages


# ---------------------------------------------------------------- tracker references


def untracked(text: str) -> str:
    """Text from docstrings, comments and cards without a tracker's issue numbers, which a
    reader of the docs cannot follow: "(issue N)" and "; issue N" go, "(issue N: x" keeps x."""
    text = re.sub(r"\s*\((?:issues?|#)\s*\d+(?:\s*(?:,|and)\s*\d+)*\)", "", text)
    text = re.sub(r"\((?:issues?|#)\s*\d+[:;,]\s*", "(", text)
    text = re.sub(r"[;,]\s*\n?\s*issues?\s+\d+(?=\))", "", text)
    text = re.sub(r"\s*\bissues?\s+\d+(?=\))", "", text)
    return re.sub(r"\bissue \d+'s\s+", "the ", text)


# ---------------------------------------------------------------- line breaks in tables

# after a path's or a name's separator; never at a dot ("rerank.py", "60.0") nor inside a number
_BREAK_AFTER = re.compile(r"([/_,:=|]|(?<=[A-Za-z])-)(?=[A-Za-z0-9\"'])")
_HASH = re.compile(r"[0-9a-f]{32,}")
_IDENTIFIER = re.compile(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b")


def soft_breaks(markdown: str) -> str:
    """Table rows get break opportunities (`<wbr>`) after the `/`, `_`, `.` and `-` inside
    names and values, so that a narrow column wraps `data/sample/questions.jsonl` between its
    parts instead of pushing the table past the page or splitting a word. A row's first cell
    (the name the row is about) is left whole; the copy of a value stays the same text."""
    out = []
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("|") and not re.match(r"\|[\s:|-]+\|?$", stripped):
            indent = line[: len(line) - len(stripped)]
            first, sep, rest = stripped[1:].partition(" | ")
            line = f"{indent}|{first}{sep}{_breakable(rest)}" if sep else line
        out.append(line)
    return "\n".join(out) + ("\n" if markdown.endswith("\n") else "")


def _breakable(cells: str) -> str:
    parts = re.split(r"(`[^`]+`)", cells)
    result = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 2:
            text = part[1:-1].replace("\\|", "|")
            escaped = html.escape(text, quote=False).replace("|", "&#124;")
            escaped = _BREAK_AFTER.sub(r"\1<wbr>", escaped)
            escaped = _HASH.sub(lambda m: "<wbr>".join(textwrap.wrap(m.group(0), 16)), escaped)
            result.append(f"<code>{escaped}</code>")
        else:
            result.append(_breakable_text(part))
    return "".join(result)


def _breakable_text(text: str) -> str:
    """Identifiers break after `_`, paths after `/`; a Markdown link is left as written."""
    pieces = re.split(r"(\[[^\]]*\]\([^)]*\))", text)
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            piece = _IDENTIFIER.sub(lambda m: m.group(0).replace("_", "_<wbr>"), piece)
            pieces[index] = re.sub(r"(?<=\w)/(?=\w)", "/<wbr>", piece)
    return "".join(pieces)


# ---------------------------------------------------------------- mkdocs hook


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: add the generated pages to the build (in memory; docs/ stays as written)."""
    from mkdocs.structure.files import File

    for path, content in generated_pages().items():
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, path, content=content))
    return files


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """mkdocs hook: every page's tables wrap between the parts of a name, not inside a word."""
    return soft_breaks(markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the pages to")
    args = parser.parse_args(argv)
    for path, content in generated_pages().items():
        target = args.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
