"""Docs that a test keeps true: every page ends in a whole sentence (or a code block, table or
list) and no paragraph starts mid-sentence; every count the README and the docs state about the
release gate, the sample knowledge base and the formats ingestion reads is checked against the
code and data it describes; the configuration reference covers every file in configs/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
NUMBER = r"(\d+|" + "|".join(NUMBERS) + r")"


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word.lower()]


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _blocks(text: str) -> list[str]:
    """The page's blocks: a fenced code block whole, else paragraphs split on blank lines."""
    blocks, current, fence = [], [], None
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            if current:
                blocks.append("\n".join(current))
            current, fence = [line], stripped[:3]
            continue
        if fence is not None:
            current.append(line)
            if stripped.startswith(fence):
                blocks.append("\n".join(current))
                current, fence = [], None
            continue
        if not stripped:
            if current:
                blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return [b for b in blocks if b.strip()]


def _prose(block: str) -> bool:
    """A plain paragraph: not code, a table, a list, a heading, a quote, an image or HTML."""
    first = block.lstrip()
    return not (
        first.startswith(("```", "~~~", "|", "#", ">", "!", "<", "???", "!!!", "    "))
        or re.match(r"([-*+]|\d+\.)\s", first)
    )


def _sentences(text: str) -> list[str]:
    """Prose outside code blocks as sentences, and each table row as one (a rough split is
    enough to find a claim)."""
    sentences = []
    for block in _blocks(text):
        if block.lstrip().startswith(("```", "~~~", "#")):
            continue
        if block.lstrip().startswith("|"):
            sentences += block.splitlines()
            continue
        joined = " ".join(block.split())
        sentences += re.split(r"(?<=[.!?])\s+(?=[A-Z`*])", joined)
    return sentences


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_page_ends_in_a_whole_sentence(page):
    blocks = _blocks(page.read_text(encoding="utf-8"))
    assert blocks, f"{_name(page)} is empty"
    last = blocks[-1].rstrip()
    if _prose(last):
        assert re.search(r"[.!?:)]\**$|\.\)$|[.!?]`$", last), (
            f"{_name(page)} ends mid-sentence: ...{last[-120:]!r}"
        )


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_no_paragraph_starts_mid_sentence(page):
    for block in _blocks(page.read_text(encoding="utf-8")):
        if _prose(block):
            first = block.lstrip()[0]
            assert not first.islower(), (
                f"{_name(page)}: a paragraph starts mid-sentence: {block[:120]!r}"
            )


# ---------------------------------------------------------------- counts against the code


def gate_sets() -> list[str]:
    """The sets `make gate` gates: one `grounding eval --set NAME --gate` line each."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^gate:.*\n((?:\t.*\n)+)", makefile, flags=re.M)
    assert target, "the Makefile has a gate target"
    return re.findall(r"--set (\S+)(?: --set-override \S+)* --gate", target.group(1))


def sample_questions() -> int:
    path = ROOT / "data" / "sample" / "questions.jsonl"
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def sample_documents() -> list[Path]:
    import yaml

    docs = ROOT / "data" / "sample" / "docs"
    catalog = yaml.safe_load((docs / "catalog.yaml").read_text(encoding="utf-8"))
    entries = catalog["documents"] if isinstance(catalog, dict) else catalog
    paths = [docs / entry["path"] for entry in entries]
    assert all(p.is_file() for p in paths)
    return paths


def sample_formats() -> set[str]:
    """The sample's formats: each file suffix, a scanned PDF (read by OCR) counted apart."""
    formats = set()
    for path in sample_documents():
        suffix = path.suffix.lstrip(".")
        formats.add(f"scanned {suffix}" if "scanned" in path.stem else suffix)
    return formats


def reader_formats() -> set[str]:
    """The formats ingestion reads, by suffix (aliases such as .htm and .jpeg counted once)."""
    from stages.ingestion import DOCUMENT_SUFFIXES

    aliases = {"markdown": "md", "htm": "html", "jpeg": "jpg", "tif": "tiff", "yml": "yaml"}
    return {aliases.get(s.lstrip("."), s.lstrip(".")) for s in DOCUMENT_SUFFIXES}


def _claims(pattern: str, context: str) -> list[tuple[str, str, str]]:
    """(page, sentence, the number) for each sentence that matches `pattern` and `context`."""
    found = []
    for page in PAGES:
        for sentence in _sentences(page.read_text(encoding="utf-8")):
            if not re.search(context, sentence, flags=re.I):
                continue
            for match in re.finditer(pattern, sentence, flags=re.I):
                found.append((_name(page), sentence, match.group(1)))
    return found


def test_the_gate_target_gates_frozen_sets_that_exist():
    sets = gate_sets()
    assert len(sets) >= 2
    for name in sets:
        assert (ROOT / "eval" / "sets" / name / "manifest.json").is_file(), name
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make gate" in ci  # CI gates the same sets, through the same target


def test_every_count_of_gate_sets_matches_the_makefile():
    sets = gate_sets()
    claims = _claims(rf"\b{NUMBER} (?:frozen |eval |release-gate )*sets\b", r"\bgate")
    assert claims, "the README or docs say how many sets the gate runs"
    for page, sentence, number in claims:
        assert _number(number) == len(sets), (page, sentence, sets)
    # and a page that lists the gated sets names every one
    evaluation = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    for name in sets:
        assert f"`{name}`" in evaluation, name


def test_every_count_of_sample_questions_documents_and_formats_matches_the_data():
    questions, documents, formats = sample_questions(), sample_documents(), sample_formats()
    v1 = (ROOT / "eval" / "sets" / "sample-v1" / "questions.jsonl").read_text(encoding="utf-8")
    v1_questions = sum(1 for line in v1.splitlines() if line.strip())
    corpus = json.loads((ROOT / "eval/sets/sample-v1/corpus.json").read_text(encoding="utf-8"))
    v1_documents = sum(1 for name in corpus["files"] if not name.startswith("catalog."))
    sample = r"\bsample\b(?!-v1)"
    checked = 0
    for pattern, expected, v1_expected in (
        (rf"\b{NUMBER} (?:\w+ )?questions\b", questions, v1_questions),
        (rf"\b{NUMBER} documents\b", len(documents), v1_documents),
        (rf"\b{NUMBER} formats\b", len(formats), None),
    ):
        for page, sentence, number in _claims(pattern, sample):
            if "sample-v1" in sentence and _number(number) == v1_expected:
                continue  # the first frozen version of the sample, named as such
            assert _number(number) == expected, (page, sentence, expected)
            checked += 1
    assert checked >= 3


def test_a_list_of_the_sample_formats_names_each_one():
    formats = sample_formats()
    claims = _claims(rf"\b{NUMBER} formats \(([^)]*)\)", r"\bsample\b|\bdocs/")
    for page, sentence, _ in claims:
        listed = re.search(r"formats \(([^)]*)\)", sentence).group(1)
        for name in formats:
            assert re.search(rf"\b{name}\b", listed), (page, name, listed)


def test_the_formats_the_docs_say_ingestion_reads_are_the_ones_it_registers():
    formats = reader_formats()
    text = (ROOT / "docs" / "concepts" / "stages.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| 1 ingestion"))
    missing = {f for f in formats if not re.search(rf"\b{re.escape(f)}s?\b", row.lower())}
    assert not missing, f"the ingestion row of concepts/stages.md leaves out {sorted(missing)}"


LAYOUT_PAGE = ROOT / "docs" / "concepts" / "stages.md"
TOP_PACKAGES = ("stages", "flows", "agents", "quality", "cli", "eval", "bench", "scripts")


def layout_map() -> dict[str, str]:
    """The code block of concepts/stages.md that maps the tree: each entry (`stages/`,
    `stages/guardrails/`, `stages/catalog.py` …) and what its lines say about it."""
    text = LAYOUT_PAGE.read_text(encoding="utf-8")
    block = text[text.index("```\nstages/\n") + 4 :]
    block = block[: block.index("```")]
    entries: dict[str, str] = {}
    top = current = ""
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip())
        if indent >= 4:  # a description carried on
            entries[current] += " " + line.strip()
            continue
        name, _, description = line.strip().partition("  ")
        current = name if indent == 0 else top + name
        top = name if indent == 0 and name.endswith("/") else top
        entries[current] = description.strip()
    return entries


def _modules(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")


def test_the_layout_map_has_an_entry_for_every_package():
    entries = layout_map()
    folders = [f"{name}/" for name in TOP_PACKAGES]
    folders += [
        f"{top}/{sub.name}/"
        for top in ("stages", "agents")
        for sub in sorted((ROOT / top).iterdir())
        if (sub / "__init__.py").is_file()
    ]
    assert [f for f in folders if f not in entries] == []
    assert [e for e in entries if e.endswith("/") and not (ROOT / e).is_dir()] == []


def test_the_layout_map_names_every_module_of_the_packages_it_lists():
    """A package entry that lists its modules lists all of them, by their current names."""
    entries = layout_map()
    missing = {}
    for entry, description in entries.items():
        if entry.count("/") == 2 or entry in ("quality/", "cli/"):  # stages/<x>/, agents/<x>/
            unnamed = [m for m in _modules(ROOT / entry) if not re.search(rf"\b{m}\b", description)]
            if unnamed:
                missing[entry] = unnamed
    assert missing == {}


def test_the_layout_page_names_every_module_of_the_flows_the_cli_and_the_evaluation():
    text = LAYOUT_PAGE.read_text(encoding="utf-8")
    unnamed = [
        f"{folder}/{module}.py"
        for folder in ("flows", "cli", "eval")
        for module in _modules(ROOT / folder)
        if f"`{module}.py`" not in text and f"`{folder}/{module}.py`" not in text
    ]
    assert unnamed == []


def test_the_configuration_reference_covers_every_config_file():
    from scripts.gen_docs import config_reference

    page = config_reference()
    files = sorted(p.name for p in (ROOT / "configs").glob("*.y*ml"))
    assert files
    for name in files:
        assert f"`configs/{name}`" in page, f"configs/{name} is not in the configuration reference"
    from agents.checking.check import Config as CheckConfig
    from agents.serving.agents_config import AgentsConfig

    for model in (CheckConfig, AgentsConfig):
        for field in model.model_fields:
            assert f"| `{field}` |" in page, (model.__name__, field)


def test_the_landing_page_points_to_every_section_of_the_nav():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["nav"]
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for entry in nav:
        ((title, target),) = entry.items()
        pages = [target] if isinstance(target, str) else [next(iter(e.values())) for e in target]
        pages = [p for p in pages if isinstance(p, str)]
        if title in ("Home",):
            continue
        assert any(f"]({p})" in index for p in pages), f"docs/index.md has no row for {title}"


def test_no_page_cites_a_file_the_repository_lacks():
    """A path in backticks that looks like one of the repository's files exists."""
    top = {p.name for p in ROOT.iterdir()}
    missing = []
    for page in PAGES:
        for path in re.findall(
            r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|yaml|yml|md|json|txt|toml))`", page.read_text()
        ):
            if path.split("/")[0] in top and "<" not in path and not (ROOT / path).exists():
                missing.append((_name(page), path))
    assert missing == []


def test_pyproject_and_the_code_name_only_files_that_exist():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for path in re.findall(r"\b((?:stages|flows|agents|eval|bench|scripts)/[\w/]+\.py)\b", text):
        assert (ROOT / path).is_file(), f"pyproject.toml names {path}, which does not exist"
    import subprocess

    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in tracked:
        path = ROOT / name
        if path.suffix not in (".py", ".toml", ".txt") and path.name != "Makefile":
            continue
        if name.startswith(("data/", "tests/")) or not path.is_file():
            continue
        assert "OFFLINE-FACTS" not in path.read_text(encoding="utf-8", errors="replace"), (
            f"{name} cites OFFLINE-FACTS.md, which users do not have: "
            "cite docs/operations/offline.md"
        )


# ---------------------------------------------------------------- the benchmarks page


def test_the_benchmarks_page_opens_with_one_headline_table_and_no_raw_figures():
    from bench import BENCHES
    from scripts.gen_docs import benchmark_pages

    page = benchmark_pages()["benchmarks.md"]
    head, _, rest = page.partition("\n## ")
    tables = [line for line in head.splitlines() if line.startswith("| what |")]
    assert tables == ["| what | figure | target | anchor | measured |"]
    rows = [line for line in head.splitlines() if line.startswith("| [")]
    assert len(rows) == len(BENCHES)  # one row per bench, each linking to its details
    assert "??? note" in rest  # the details are one click away
    assert "| ? |" not in page and " ? s" not in page and "not run" not in page
    assert not re.search(r"\{'[^']+': ", page), "a Python dict printed as it is"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 5 and all(cells), row


def test_a_result_measured_on_older_stage_versions_is_marked_as_such():
    from bench.results_page import current_versions, measured_on

    now = current_versions()
    stage = next(iter(now))
    machine = {"date": "2026-01-02T03:04:05+00:00", "git_commit": "abcdef1234567"}
    old = measured_on({"machine": {**machine, "stage_versions": {stage: "0.0.0"}}}, now)
    assert "2026-01-02" in old and "`abcdef1`" in old
    assert f"measured on an older version**: {stage} 0.0.0 (now {now[stage]})" in old
    same = measured_on({"machine": {**machine, "stage_versions": dict(now)}}, now)
    assert "older" not in same
    assert "not recorded" in measured_on({"machine": machine}, now)


def test_a_summary_prints_dicts_as_words_and_an_unreadable_result_as_a_sentence():
    from bench.results_page import headline, readable, summary

    text = readable("Rerank states: {'not_found': 110, 'low_relevance': 116, 'x': {'a': 0.5}}.")
    assert text == "Rerank states: not_found 110, low_relevance 116, x (a 0.5)."
    row = headline("speed", {"bench": "speed"})  # a file of another shape
    assert row.figure.startswith("see the details") and "?" not in row.figure
    assert "python -m bench speed" in summary("speed", {"bench": "speed"})


def test_wide_tables_are_split_or_turned_and_names_get_break_points():
    from scripts.gen_docs import narrow_tables, soft_breaks

    wide = "| judge | a | b | c | d | e | f | g | h |\n|---|---|---|---|---|---|---|---|---|\n"
    turned = narrow_tables(wide + "| none | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |")
    assert turned.splitlines()[:3] == ["| judge | none |", "|---|---|", "| a | 1 |"]
    long = wide + "\n".join(f"| r{i} | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |" for i in range(5))
    split = narrow_tables(long)
    headers = [line for line in split.splitlines() if line.startswith("| judge")]
    assert headers == ["| judge | a | b | c | d | e | f |", "| judge | g | h |"]
    row = soft_breaks('| `path` | `"data/sample/questions.jsonl"` | answered_precision |')
    assert row.startswith("| `path` |")  # the row's own name stays whole
    assert '<code>"data/<wbr>sample/<wbr>questions.jsonl"</code>' in row
    assert "answered_<wbr>precision" in row


def test_no_page_names_a_tracker_issue_number():
    """A reader of the docs cannot follow "issue N": the pages say what was decided instead."""
    from scripts.gen_docs import generated_pages

    texts = {_name(page): page.read_text(encoding="utf-8") for page in PAGES}
    texts.update({n: t for n, t in generated_pages().items() if isinstance(t, str)})
    found = {
        name: hits
        for name, text in texts.items()
        if (hits := re.findall(r"\b[Ii]ssues? \d+\b|\(#\d+\)", text))
    }
    assert found == {}
