"""what a person reads: a table row is one unit of evidence (an abbreviation in any
language never cuts it), rendered answers list their sources as "title › section, page N" with
no bounding-box numbers (those stay in the citation object), and warnings are counted as
warnings in the run summary."""

from __future__ import annotations

import io
import json
import re

import pytest

from stages.common.citations import place_for_reader, render, source_label
from stages.common.text import sentence_spans

KRAKOW = "City: Krakow; Address: ul. Floriańska 15; Head count: 87; Opened: 2021."


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


@pytest.mark.parametrize(
    "row",
    [
        KRAKOW,
        "Stadt: Berlin; Adresse: Hauptstr. 5; Mitarbeiter: 12; z. B. Vertrieb: ja.",
        "Ville: Paris; Adresse: av. Foch 3; Effectif: 40.",
        "Ciudad: Madrid; Dirección: Avda. de América 2; Plantilla: 33.",
        "Plan: Enterprise; Note: Sold by Mr. Smith. Call him; Price: €49.",
    ],
)
def test_a_table_row_is_one_sentence_whatever_abbreviation_it_holds(row):
    text = f"Office | Address\n{row}\nThe next paragraph. It has two sentences."
    assert _sentences(text) == [
        "Office | Address",
        row,
        "The next paragraph.",
        "It has two sentences.",
    ]


def test_prose_still_splits_and_a_street_abbreviation_does_not_end_a_sentence():
    text = "Our office is at ul. Floriańska 15. It has 87 people. Note: open daily. Come by."
    assert _sentences(text) == [
        "Our office is at ul. Floriańska 15.",
        "It has 87 people.",
        "Note: open daily.",
        "Come by.",
    ]


def test_a_long_paragraph_is_split_in_linear_time():
    import time

    text = "This is a sentence about things. " * 20_000
    started = time.perf_counter()
    assert len(sentence_spans(text)) == 20_000
    # generous: the point is that each line's table-row check runs once, not per sentence
    assert time.perf_counter() - started < 10


def _citation(**changes) -> dict:
    import datetime as dt

    return {
        "title": "Security Policy",
        "section_path": "Security Policy > 2. Encryption",
        "page_number": 1,
        "version": "2.4",
        "published_at": dt.date(2026, 3, 1),
        "anchor": json.dumps({"page": 1, "box": [60.0, 206.1, 515.8, 216.1], "unit": "pt"}),
    } | changes


def test_a_rendered_answer_lists_its_sources_without_coordinates():
    citation = _citation()
    rendered = render("Data at rest is encrypted with AES-256. [E1]", {"E1": citation})
    assert rendered == (
        "Data at rest is encrypted with AES-256. [E1]\n\nSources:\n"
        "[E1] Security Policy › 2. Encryption, page 1 (version 2.4, dated 2026-03-01)"
    )
    assert "206.1" not in rendered and "box" not in rendered
    assert json.loads(citation["anchor"])["box"] == [60.0, 206.1, 515.8, 216.1]  # kept there


@pytest.mark.parametrize(
    ("anchor", "place"),
    [
        ({"slide": 3, "part": "notes"}, "slide 3, speaker notes"),
        ({"sheet": "Offices", "range": "A3:D3"}, "Offices!A3:D3"),
        (
            {"start": "00:01:05.000", "end": "00:01:09.500", "speaker": "Ana"},
            "00:01:05–00:01:09 (Ana)",
        ),
        ({"ticket": "T-42", "comment": 3, "author": "Bo"}, "ticket T-42, comment 3 by Bo"),
        ({"page": 2, "box": [1, 2, 3, 4], "origin": "ocr", "confidence": 0.9}, "page 2, OCR 90%"),
    ],
)
def test_each_kind_of_place_is_named_for_a_person(anchor, place):
    assert place_for_reader(json.dumps(anchor)) == place
    label = source_label(_citation(anchor=json.dumps(anchor), version="", published_at=None))
    assert label == f"Security Policy › 2. Encryption, {place}"


def _offices_xlsx() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Offices"
    sheet.append(["City", "Address", "Head count", "Opened"])
    sheet.append(["Warsaw", "ul. Marszałkowska 10", 140, 2015])
    sheet.append(["Krakow", "ul. Floriańska 15", 87, 2021])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def office_run(tmp_path_factory):
    from flows.executor import run_stages
    from flows.runs import summarize
    from stages import contracts
    from tests.conftest import load_test_config

    work = tmp_path_factory.mktemp("offices")
    corpus = work / "corpus"
    corpus.mkdir()
    (corpus / "offices.xlsx").write_bytes(_offices_xlsx())
    config = load_test_config(work, corpus=str(corpus))
    question = {
        "question_id": "krakow",
        "question": "How many people work in the Krakow office?",
        "principal": "employee",
        "query_type": "general",
    }
    result = run_stages(config, contracts.from_rows([question], "questions"))
    store = config.artifact_store()
    evidence = store.read_table(result.refs["evidence"], "evidence").to_pylist()
    return result, evidence, summarize(result, store, 1.0)


def test_the_krakow_row_is_evidence_whole_and_answers_the_head_count(office_run):
    result, evidence, _ = office_run
    assert any(e["text"] == KRAKOW for e in evidence), [e["text"] for e in evidence]
    assert not any(e["text"].endswith("ul.") for e in evidence)
    [final] = result.final_answers.to_pylist()
    assert final["status"] == "answered", final
    assert "87" in final["answer"]
    assert "Offices!A3:D3" in final["rendered_answer"]


def test_warnings_are_counted_as_warnings_in_the_summary(office_run):
    _, _, summary = office_run
    # a folder without a catalog: the file is ingested with default metadata, a warning
    assert (summary["ingestion_errors"], summary["ingestion_warnings"]) == (0, 1)
    rows = summary["stages"]["ingestion"]["rows"]
    assert (rows["ingestion_errors"], rows["ingestion_warnings"]) == (0, 1)
    assert rows["documents"] == 1


def test_the_sample_run_renders_no_bounding_box_numbers(shared_store, tmp_path):
    """What `make run` shows a person: no answer carries a PDF span's coordinates, though the
    citations keep them."""
    import pyarrow.compute as pc

    from flows.executor import load_questions, run_stages
    from tests.conftest import config_on_copy

    config = config_on_copy(shared_store, tmp_path, "sample")
    questions = load_questions(config.questions, config.default_principal, "general")
    asks_pdf = pc.match_substring(pc.utf8_lower(questions["question"]), "encrypt")
    table = questions.filter(asks_pdf)
    assert table.num_rows, "the sample question set asks about the PDF's encryption section"
    finals = run_stages(config, table).final_answers.to_pylist()
    boxed = [c for f in finals for c in f["citations"] if "box" in (c["anchor"] or "")]
    assert boxed, "no PDF citation with a bounding box: the test would prove nothing"
    for final in finals:
        rendered = final["rendered_answer"] or ""
        assert not re.search(r"\bbox\b", rendered), rendered
        for citation in final["citations"]:
            for value in json.loads(citation["anchor"] or "{}").get("box", []):
                assert f"{value:g}" not in rendered.split("Sources:")[-1], rendered


def test_reports_json_carries_the_run_id(office_run):
    from flows.runs import reports_json

    result, _, _ = office_run
    [report] = reports_json(result.reports, "run-44")
    assert report["run_id"] == "run-44" and report["question_id"] == "krakow"
    assert list(report)[:2] == ["run_id", "question_id"]


def test_a_stage_bar_draws_inside_the_callers_live_display():
    """The CLI's stage bars and a stage's own bar (`progress.track`) share one console, so the
    stage's bar nests in the live display instead of a second display fighting it for lines
    (blank lines above the bars)."""
    from rich.console import Console
    from rich.progress import Progress

    from stages.common import progress

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    bars = Progress(console=console)
    try:
        progress.enable(True, console)
        with bars:
            bars.add_task("ingestion", total=1)
            assert list(progress.track(range(3), "parsing documents")) == [0, 1, 2]
    finally:
        progress.enable(False)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "parsing documents" in plain and "ingestion" in plain
    first_bar = plain.replace("\r", "\n").lstrip("\n")
    assert first_bar.startswith(("ingestion", "  parsing")), first_bar[:80]


def test_prose_then_a_row_on_one_line_splits_before_the_row():
    row = "Plan: Business; Price: €29 per user; Seats: 5."
    assert _sentences(f"Plans are billed monthly. {row}") == ["Plans are billed monthly.", row]
