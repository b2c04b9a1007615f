"""Pptx, xlsx, csv, vtt, srt and ticket exports are ingested with anchors into
the original file; tables are first-class chunks; citations name their anchor end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from stages import contracts, ingestion
from stages.formats import READER_MODULES, Block
from stages.formats.anchors import anchor_for_span, anchor_label, merge_anchors
from stages.formats.tables import table_blocks
from tests import format_files as files
from tests.conftest import load_test_config


def corpus_files() -> dict[str, bytes]:
    return {
        "deck.pptx": files.pptx_bytes(),
        "prices.xlsx": files.xlsx_bytes(),
        "hubs.csv": files.csv_bytes(),
        "onboarding-call.vtt": files.VTT.encode(),
        "drill.srt": files.SRT.encode(),
        "tickets.json": files.tickets_json(),
        "vpn.jsonl": files.tickets_jsonl(),
        "printer-tickets.csv": files.tickets_csv(),
        "crane.mbox": files.mbox_bytes(),
    }


# documents a file carries: a mail's attachments
ATTACHMENTS = {"crane.mbox#attachment-1/quote.csv"}


def write_corpus(root: Path, extra: dict[str, bytes] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in {**corpus_files(), **(extra or {})}.items():
        (root / name).write_bytes(data)
    return root


def ingest(root: Path, **config) -> dict[str, list[dict]]:
    outputs = ingestion.run(
        {"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config(**config)
    )
    return {name: table.to_pylist() for name, table in outputs.items()}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> dict[str, list[dict]]:
    return ingest(write_corpus(tmp_path_factory.mktemp("formats")))


def _document(ingested, path: str) -> dict:
    return next(d for d in ingested["documents"] if d["path"] == path)


def _labels(document: dict) -> dict[str, str]:
    """Each anchored span's text -> its label."""
    return {
        document["text"][a["start"] : a["end"]]: anchor_label(a["anchor"])
        for a in document["anchors"]
    }


# ---------------------------------------------------------------- readers


def test_every_new_format_is_ingested_without_errors(ingested):
    assert {d["path"] for d in ingested["documents"]} == set(corpus_files()) | ATTACHMENTS
    errors = [e for e in ingested["ingestion_errors"] if e["severity"] == "error"]
    assert errors == []
    for chunk in ingested["chunks"]:
        text = _document(ingested, chunk["source_id"].removeprefix("file:"))["text"]
        assert text[chunk["char_start"] : chunk["char_end"]] == chunk["text"]
        for anchor in chunk["anchors"]:
            assert anchor["start"] < chunk["char_end"] and anchor["end"] > chunk["char_start"]


def test_pptx_slides_titles_bullets_tables_notes_and_alt_text(ingested):
    deck = _document(ingested, "deck.pptx")
    assert deck["title"] == "Quarterly sales review"
    labels = _labels(deck)
    assert labels["Pipeline summary"] == "slide 1"
    assert "Twelve new logos signed this quarter\n– Three of them in the Nordics" in deck["text"]
    notes = "Speaker notes: Remind the team that the Oslo office opens in May."
    assert labels[notes] == "slide 1, speaker notes"
    assert labels["Region: Nordics; Discount ceiling: 18%."] == "slide 2, table row 1"
    assert labels["Image: Bar chart of discounts by region"] == "slide 2"
    assert deck["text"].count("Image:") == 1  # the picture without alt text adds nothing
    pages = {c["page_number"] for c in ingested["chunks"] if c["doc_id"] == "deck"}
    assert pages == {1, 2}


def test_xlsx_sheets_are_sections_rows_carry_their_cell_range(ingested):
    book = _document(ingested, "prices.xlsx")
    labels = _labels(book)
    row = "Plan: Enterprise; Price per user per month: €49; Minimum seats: 25."
    assert labels[row] == "Prices!A4:D4"
    assert labels["Plan: Enterprise; Storage per user: 1 TB."] == "'Storage limits'!A3:B3"
    sections = {c["section_path"] for c in ingested["chunks"] if c["doc_id"] == "prices"}
    assert sections == {"Prices", "Storage limits"}
    warnings = [e for e in ingested["ingestion_errors"] if e["path"] == "prices.xlsx"]
    assert [w["error_kind"] for w in warnings] == ["missing_metadata", "formula_without_value"][
        -len(warnings) :
    ]
    formula = next(w for w in warnings if w["error_kind"] == "formula_without_value")
    assert "Prices!D2" in formula["message"] and "not computed" in formula["message"]
    assert "Yearly:" not in book["text"]  # the unsaved formula is not invented


def test_csv_is_one_sheet_decoded_with_the_encoding_rules(ingested):
    hubs = _document(ingested, "hubs.csv")
    assert _labels(hubs)["Warehouse: South hub; City: München; Dock doors: 17."] == (
        "hubs.csv!A3:C3"
    )
    kinds = {e["error_kind"] for e in ingested["ingestion_errors"] if e["path"] == "hubs.csv"}
    assert "encoding_detected" in kinds


def test_vtt_and_srt_cues_keep_speaker_and_time(ingested):
    call = _document(ingested, "onboarding-call.vtt")
    assert call["text"].startswith("Ana: Welcome to the onboarding call")
    labels = _labels(call)
    sentence = "The Lisbon office keeps its badge readers offline on Sundays."
    assert labels[sentence] == "00:01:05–00:01:09 (Ana)"
    drill = _document(ingested, "drill.srt")
    assert "00:00:01–00:00:04 (Carla)" in _labels(drill).values()


def test_ticket_exports_are_threads_of_comments(ingested):
    tickets = _document(ingested, "tickets.json")
    labels = _labels(tickets)
    body = "The exporter runs out of memory above 2 million rows; a fix ships in version 4.6."
    assert labels[body] == "ticket T-42, comment 3 by Bo, 2026-01-02"
    assert labels["Exports of large workspaces stop at 80 percent."] == (
        "ticket T-42, description by Ana, 2026-01-01"
    )
    sections = [c["section_path"] for c in ingested["chunks"] if c["doc_id"] == "tickets"]
    assert "Ticket T-42: Export to Parquet fails > Comment 3 by Bo, 2026-01-02" in sections
    vpn = _labels(_document(ingested, "vpn.jsonl"))
    assert vpn["The VPN gateway in Vienna was replaced on 2 March 2026."].startswith(
        "ticket S-7, comment 2 by Finn"
    )
    printer = _labels(_document(ingested, "printer-tickets.csv"))
    assert printer["A new fuser unit for floor 3 arrives Friday."] == (
        "ticket K-9, comment 2 by Hal, 2026-04-02"
    )


MALFORMED = {
    "broken.pptx": (b"PK\x03\x04 not really a zip", "parse_error"),
    "wrong-zip.pptx": (None, "parse_error"),  # a zip without ppt/presentation.xml
    "broken.xlsx": (b"\x00\x01 garbage", "parse_error"),
    "open-quote.csv": (b'Plan,Price\n"Starter,12\n', "parse_error"),
    "no-header.vtt": (b"00:00:01.000 --> 00:00:02.000\nhello\n", "parse_error"),
    "garbage.srt": (b"this is not a subtitle file\n", "parse_error"),
    "bad.json": (b'{"tickets": [', "parse_error"),
    "settings.json": (b'{"theme": "dark", "font_size": 12}', "unsupported_type"),
    "numbers.jsonl": (b"not json\nstill not\n", "parse_error"),
    "empty-cues.vtt": (b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n\n", "empty_document"),
}


def test_malformed_files_of_each_kind_are_clear_error_rows(tmp_path):
    import zipfile

    for name, (data, _) in MALFORMED.items():
        if data is None:
            with zipfile.ZipFile(tmp_path / name, "w") as archive:
                archive.writestr("hello.txt", "hi")
        else:
            (tmp_path / name).write_bytes(data)
    (tmp_path / "good.srt").write_bytes(files.SRT.encode())
    outcome = ingest(tmp_path)
    errors = {e["path"]: e for e in outcome["ingestion_errors"] if e["severity"] == "error"}
    for name, (_, kind) in MALFORMED.items():
        assert errors[name]["error_kind"] == kind, (name, errors.get(name))
        assert errors[name]["message"]
    assert "not a ticket export" in errors["settings.json"]["message"]
    assert "line 1 column" in errors["bad.json"]["message"]
    assert [d["path"] for d in outcome["documents"]] == ["good.srt"]  # the run went on


# ---------------------------------------------------------------- tables


def test_a_table_that_fits_is_one_block_and_a_large_one_row_groups_with_the_header():
    header = ["Plan", "Price"]
    rows = [[f"Plan {i}", f"€{i}"] for i in range(1, 41)]
    [whole] = table_blocks(header, rows[:3], None, 900)
    assert whole.text.splitlines() == [
        "Plan | Price",
        "Plan: Plan 1; Price: €1.",
        "Plan: Plan 2; Price: €2.",
        "Plan: Plan 3; Price: €3.",
    ]
    cell = next(c for c in whole.meta["cells"] if c["row"] == 2 and c["column"] == 2)
    assert cell == {"row": 2, "column": 2, "header": "Price", "text": "€2"}
    groups = table_blocks(header, rows, None, 200)
    assert len(groups) > 2
    assert all(g.text.startswith("Plan | Price\n") and len(g.text) <= 200 for g in groups)
    body = [line for g in groups for line in g.text.splitlines()[1:]]
    assert body == [f"Plan: Plan {i}; Price: €{i}." for i in range(1, 41)]


def test_a_large_sheet_is_chunked_by_row_groups_never_mid_row(tmp_path):
    lines = ["Region,Office,Head count"] + [f"R{i},Office {i},{i * 3}" for i in range(1, 121)]
    (tmp_path / "offices.csv").write_text("\n".join(lines))
    outcome = ingest(tmp_path, chunk_size=400, chunk_overlap=0)
    chunks = [c for c in outcome["chunks"] if c["is_table"]]
    assert len(chunks) > 5
    tables = [c["text"].split("\n\n")[-1] for c in chunks]  # the first opens with the heading
    for table in tables:
        text_lines = table.splitlines()
        assert text_lines[0] == "Region | Office | Head count"
        assert all(line.endswith(".") for line in text_lines[1:])
    rows = [line for table in tables for line in table.splitlines()[1:]]
    assert len(rows) == 120  # every row once, none cut


def test_html_tables_keep_every_value_with_its_header(tmp_path):
    (tmp_path / "plans.html").write_text(
        "<html><body><h1>Plans</h1><table>"
        "<tr><th>Plan</th><th colspan='2'>Price</th></tr>"
        "<tr><td>Enterprise</td><td>€49</td><td>per user per month</td></tr>"
        "</table></body></html>"
    )
    outcome = ingest(tmp_path)
    [table] = [c for c in outcome["chunks"] if c["is_table"]]
    # unstructured drops the colspan; the cell beyond the header is kept (it used to be lost)
    assert "Plan | Price\nPlan: Enterprise; Price: €49; per user per month." in table["text"]


# ---------------------------------------------------------------- anchors


def test_anchors_merge_over_a_span_and_are_named_for_a_reader():
    cues = [
        {"start": "00:01:02.000", "end": "00:01:05.500", "speaker": "Ana"},
        {"start": "00:01:05.500", "end": "00:01:09.000", "speaker": "Ana"},
    ]
    assert anchor_label(merge_anchors(cues)) == "00:01:02–00:01:09 (Ana)"
    rows = [{"sheet": "Prices", "range": "A3:C3"}, {"sheet": "Prices", "range": "A4:C4"}]
    assert anchor_label(merge_anchors(rows)) == "Prices!A3:C4"
    spans = [
        {"start": 0, "end": 10, "anchor": json.dumps({"slide": 1})},
        {"start": 12, "end": 30, "anchor": json.dumps({"slide": 1, "part": "notes"})},
    ]
    assert anchor_label(anchor_for_span(spans, 14, 20)) == "slide 1, speaker notes"
    assert anchor_label(anchor_for_span(spans, 5, 20)) == "slide 1, speaker notes"  # most overlap
    assert anchor_for_span(spans, 40, 50) is None


def read(data: bytes, options) -> list[Block]:
    """A stand-in OCR reader: the anchor plumbing must carry page boxes, origin and confidence."""
    return [
        Block("heading", "Scanned invoice", 2, depth=1),
        Block(
            "text",
            "Total due: €1,250 by 30 June 2026.",
            2,
            anchor={"page": 2, "box": [72, 100, 300, 120]},
            origin="ocr",
            confidence=0.87,
        ),
    ]


def test_ocr_blocks_anchors_flow_through_unchanged(tmp_path, monkeypatch):
    monkeypatch.setitem(READER_MODULES, ".scan", __name__)
    monkeypatch.setattr(
        ingestion.assembly, "DOCUMENT_SUFFIXES", (*ingestion.DOCUMENT_SUFFIXES, ".scan")
    )
    (tmp_path / "invoice.scan").write_bytes(b"pixels")
    outcome = ingest(tmp_path)
    [document] = outcome["documents"]
    [anchor] = document["anchors"]
    assert json.loads(anchor["anchor"]) == {
        "page": 2,
        "box": [72, 100, 300, 120],
        "origin": "ocr",
        "confidence": 0.87,
    }
    assert anchor_label(anchor["anchor"]) == "page 2, box 72, 100, 300, 120, OCR 87%"


def test_plain_formats_have_no_anchors_and_the_contracts_carry_the_columns():
    assert "anchors" in contracts.schema_of("documents").names
    assert "anchors" in contracts.schema_of("chunks").names
    assert "anchor" in contracts.schema_of("evidence").names
    assert "anchor" in [f.name for f in contracts.CITATION]


# ---------------------------------------------------------------- end to end

QUESTIONS = {
    "pptx-table": ("What is the discount ceiling for the Nordics?", "slide 2, table row 1"),
    "pptx-notes": ("When does the Oslo office open?", "slide 1, speaker notes"),
    "xlsx": ("What is the Enterprise price per user per month?", "Prices!A4:D4"),
    "csv": ("How many dock doors does the North hub have?", "hubs.csv!A2:C2"),
    "vtt": (
        "When are the badge readers of the Lisbon office offline?",
        "00:01:05–00:01:09 (Ana)",
    ),
    "srt": ("When is the fire drill in Porto scheduled?", "00:00:01–00:00:04 (Carla)"),
    "ticket-json": (
        "Which version fixes the exporter running out of memory?",
        "ticket T-42, comment 3 by Bo, 2026-01-02",
    ),
    "ticket-jsonl": (
        "When was the VPN gateway in Vienna replaced?",
        "ticket S-7, comment 2 by Finn, 2026-03-02",
    ),
    "ticket-csv": (
        "When does the new fuser unit for floor 3 arrive?",
        "ticket K-9, comment 2 by Hal, 2026-04-02",
    ),
    "mail": (
        "When will the replacement crane be delivered to the Bergen site?",
        "message 3 of thread 'Replacement crane', from Kari Nilsen, 2026-11-30",
    ),
}


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    from flows.executor import run_stages
    from flows.runs import summarize, write_run

    work = tmp_path_factory.mktemp("formats-e2e")
    corpus = write_corpus(work / "corpus")
    config = load_test_config(work, corpus=str(corpus))
    questions = contracts.from_rows(
        [
            {"question_id": qid, "question": q, "principal": "employee", "query_type": "general"}
            for qid, (q, _) in QUESTIONS.items()
        ],
        "questions",
    )
    result = run_stages(config, questions)
    store = config.artifact_store()
    run_dir = write_run(config.runs_dir, "formats", result, store, summarize(result, store, 1.0))
    return {a["question_id"]: a for a in result.final_answers.to_pylist()}, run_dir


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_a_question_on_each_format_is_answered_citing_its_anchor(answered, question_id):
    answers, _ = answered
    answer = answers[question_id]
    expected = QUESTIONS[question_id][1]
    assert answer["status"] == "answered", answer
    labels = [anchor_label(c["anchor"]) for c in answer["citations"]]
    assert labels[0] == expected, labels
    assert expected in answer["rendered_answer"]


def test_answers_parquet_trace_and_report_lines_show_the_anchor(answered):
    import pyarrow.parquet as pq

    from cli.trace import render_trace

    _, run_dir = answered
    rows = pq.read_table(run_dir / "answers.parquet").to_pylist()
    xlsx = next(r for r in rows if r["question_id"] == "xlsx")
    assert json.loads(xlsx["citations"][0]["anchor"]) == {"sheet": "Prices", "range": "A4:D4"}
    ticket = next(r for r in rows if r["question_id"] == "ticket-json")
    # the comment's section is not repeated beside the anchor that names it
    assert ticket["rendered_answer"].casefold().count("comment 3 by bo") == 1
    traces = [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    trace = next(t for t in traces if t["question_id"] == "vtt")
    assert "(00:01:05–00:01:09 (Ana))" in render_trace(trace)


if __name__ == "__main__":  # pragma: no cover - a handy way to look at one format
    print(ingest(write_corpus(Path(sys.argv[1])))["documents"][0]["text"])


def test_a_sheet_with_two_tables_and_a_headerless_block(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Q3"
    rows = (["Team", "Budget"], ["Ops", 1200], ["Sales", 3400], [], [None, 7, 8, 9], [])
    for row in (*rows, ["Note"], ["Prices exclude VAT."]):
        sheet.append(row)
    book.save(tmp_path / "budget.xlsx")
    outcome = ingest(tmp_path)
    [document] = outcome["documents"]
    labels = _labels(document)
    assert labels["Team: Sales; Budget: 3400."] == "Q3!A3:B3"
    assert labels["7 | 8 | 9"] == "Q3!B5:D5"  # numbers are not a header: no labels invented
    assert document["title"] == "budget"
    assert labels["Note: Prices exclude VAT."] == "Q3!A8:A8"  # one full stop, not two


def _docx_with_pictures(alt_texts: list[str]) -> bytes:
    """A .docx: a heading, a paragraph, one picture per alt text ("" = no alt text), a heading."""
    import io

    from docx import Document
    from docx.shared import Inches
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (200, 100), "white").save(png, "PNG")
    document = Document()
    document.add_heading("Annual results", 1)
    document.add_paragraph("Tailspin Hosting reports its yearly results below.")
    for number, alt_text in enumerate(alt_texts):
        png.seek(0)
        document.add_picture(png, width=Inches(2))
        document.inline_shapes[number]._inline.docPr.set("descr", alt_text)
    document.add_heading("Outlook", 1)
    document.add_paragraph("Growth is expected to continue.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_docx_pictures_are_read_from_their_alt_text_in_place_and_never_invented(tmp_path):
    (tmp_path / "report.docx").write_bytes(
        _docx_with_pictures(["Bar chart: revenue grew 18% in 2026", ""])
    )
    result = ingest(tmp_path)
    (document,) = result["documents"]
    assert document["text"].count("Figure:") == 1, "a picture without alt text adds nothing"
    figure = next(c for c in result["chunks"] if "Figure:" in c["text"])
    assert "Figure: Bar chart: revenue grew 18% in 2026." in figure["text"]
    assert figure["section_path"] == "Annual results", "read where the picture sits"


def test_a_docx_without_alt_text_is_passed_to_the_parser_unchanged():
    data = _docx_with_pictures([""])
    assert ingestion.word._with_alt_text(data) is data
