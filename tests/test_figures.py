"""HTML and markdown figures from their alt text and captions, table
rows of html/docx/markdown anchored as "table n, row r", and a vision model pluggable by an
OpenAI-compatible endpoint (a fake one on loopback here; never the network). Every file is
generated at test time."""

from __future__ import annotations

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench import scanned_pages
from stages import ingestion
from stages.formats import ReadOptions, images, ocr, pdf
from stages.formats.anchors import anchor_for_span, anchor_label, merge_anchors
from stages.formats.figures import figure_text
from tests.conftest import load_test_config

REPORT_HTML = """<html><head><title>Tailspin annual report</title></head><body>
<h1>Annual results</h1><p>Tailspin Hosting reports its yearly results below.</p>
<h2>Revenue</h2>
<img src="revenue.png" alt="Bar chart: Tailspin revenue grew 18% in 2026">
<img src="spacer.png"><img src="divider.png" alt="">
<h2>Churn</h2>
<figure><img src="churn.png"
 alt="Line chart of Tailspin churn falling to 2.1% in the fourth quarter">
<figcaption>Figure 2: Churn by quarter</figcaption></figure>
<figure><img src="logo.png"></figure>
<h2>Plans</h2>
<table><tr><th>Plan</th><th>Price per user</th></tr>
<tr><td>Starter</td><td>€9</td></tr><tr><td>Enterprise</td><td>€49</td></tr>
<tr><td>Sovereign</td><td>€87</td></tr></table>
</body></html>
"""

GUIDE_MD = """# Field guide

Drivers read this guide before their first shift.

## Depot map

![Map of the Porto depot: the loading bay for refrigerated goods is on the north side](map.png)

![](blank.png)

## Rates

| Zone | Rate per stop |
|---|---|
| North | €12 |
| South | €15 |
| Islands | €31 |
"""


def _docx_table() -> bytes:
    from docx import Document

    document = Document()
    document.add_heading("Warehouse capacity", 1)
    document.add_paragraph("Capacity of each warehouse in pallet places.")
    rows = [["Warehouse", "Pallet places"], ["Leeds", "4,100"], ["Bristol", "7,350"]]
    rows.append(["Glasgow", "2,980"])
    table = document.add_table(rows=len(rows), cols=2)
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _write(root: Path, files: dict[str, bytes | str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (root / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return root


def _ingest(root: Path, **config) -> dict[str, list[dict]]:
    outputs = ingestion.run(
        {"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config(**config)
    )
    return {name: table.to_pylist() for name, table in outputs.items()}


def _labels(document: dict) -> dict[str, str]:
    return {
        document["text"][a["start"] : a["end"]]: anchor_label(a["anchor"])
        for a in document["anchors"]
    }


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> dict[str, dict]:
    root = _write(
        tmp_path_factory.mktemp("figures"),
        {"report.html": REPORT_HTML, "guide.md": GUIDE_MD, "capacity.docx": _docx_table()},
    )
    result = _ingest(root)
    assert [e for e in result["ingestion_errors"] if e["severity"] == "error"] == []
    return {
        d["path"]: {
            **d,
            "chunks": [c for c in result["chunks"] if c["source_id"] == d["source_id"]],
        }
        for d in result["documents"]
    }


# ---------------------------------------------------------------- figure text


def test_figure_text_says_caption_and_alt_text_once_and_nothing_from_nothing():
    assert (
        figure_text("", ["Bar chart: revenue grew 18%."]) == "Figure: Bar chart: revenue grew 18%."
    )
    assert figure_text("Figure 2: Churn", ["Line chart"]) == "Figure 2: Churn. Line chart."
    assert figure_text("Churn by quarter", ["churn by quarter"]) == "Figure: Churn by quarter."
    assert figure_text("", ["", "  "]) is None
    assert figure_text(None) is None


def test_html_images_are_figures_in_place_under_their_section(documents):
    report = documents["report.html"]
    text = report["text"]
    assert text.count("Figure") == 2, "images without alt text or caption add nothing"
    revenue = next(c for c in report["chunks"] if "revenue grew" in c["text"])
    assert "Figure: Bar chart: Tailspin revenue grew 18% in 2026." in revenue["text"]
    assert revenue["section_path"] == "Annual results > Revenue"
    churn = next(c for c in report["chunks"] if "Churn by quarter" in c["text"])
    # the <figure> is read where it sits: its caption, then its image's alt text, once each
    assert (
        "Figure 2: Churn by quarter. Line chart of Tailspin churn falling to 2.1% in the fourth "
        "quarter." in churn["text"]
    )
    assert churn["section_path"] == "Annual results > Churn"
    assert text.count("Churn by quarter") == 1


def test_markdown_images_are_figures_and_an_empty_alt_adds_nothing(documents):
    guide = documents["guide.md"]
    assert guide["text"].count("Figure") == 1
    chunk = next(c for c in guide["chunks"] if "Porto depot" in c["text"])
    assert "Figure: Map of the Porto depot: the loading bay" in chunk["text"]
    assert chunk["section_path"] == "Field guide > Depot map"


def test_a_too_deep_html_page_still_reads_its_alt_text():
    html = "<div>" * 30 + '<p>Intro.</p><img alt="Floor plan of level 3">' + "</div>" * 30
    assert "Figure: Floor plan of level 3." in ingestion.html_text._flat_html_text(html)


# ---------------------------------------------------------------- table row anchors


def test_html_markdown_and_docx_table_rows_carry_their_table_and_row(documents):
    assert _labels(documents["report.html"])["Plan: Enterprise; Price per user: €49."] == (
        "table 1, row 2"
    )
    md = _labels(documents["guide.md"])
    assert md["Zone: Islands; Rate per stop: €31."] == "table 1, row 3"
    assert md["Zone | Rate per stop"] == "table 1, header"
    docx = _labels(documents["capacity.docx"])
    assert docx["Warehouse: Bristol; Pallet places: 7,350."] == "table 1, row 2"


def test_row_anchors_merge_into_a_row_range_and_the_header_names_no_row():
    rows = [{"table": 2, "row": 0}, {"table": 2, "row": 3}, {"table": 2, "row": 4}]
    assert anchor_label(merge_anchors(rows)) == "table 2, rows 3–4"
    assert anchor_label(merge_anchors(rows[:2])) == "table 2, row 3"
    spans = [
        {"start": 0, "end": 10, "anchor": json.dumps({"table": 1, "row": 1})},
        {"start": 11, "end": 20, "anchor": json.dumps({"table": 2, "row": 1})},
    ]
    assert anchor_label(anchor_for_span(spans, 12, 18)) == "table 2, row 1"
    assert anchor_label({"page": 3, "table": 1, "row": 2}) == "page 3, table 1, row 2"


# ---------------------------------------------------------------- end to end

QUESTIONS = {
    "html-figure": (
        "How much did Tailspin revenue grow in 2026?",
        "18%",
        "report",
        "Annual results > Revenue",
        None,
    ),
    "md-figure": (
        "Where is the loading bay for refrigerated goods at the Porto depot?",
        "north",
        "guide",
        "Field guide > Depot map",
        None,
    ),
    "html-row": (
        "What is the price per user of the Sovereign plan?",
        "€87",
        "report",
        None,
        "table 1, row 3",
    ),
    "md-row": (
        "What is the rate per stop for the Islands zone?",
        "€31",
        "guide",
        None,
        "table 1, row 3",
    ),
    "docx-row": (
        "How many pallet places does the Glasgow warehouse have?",
        "2,980",
        "capacity",
        None,
        "table 1, row 3",
    ),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, dict]:
    from flows.executor import questions_table, run_stages

    work = tmp_path_factory.mktemp("figures-e2e")
    corpus = _write(
        work / "corpus",
        {"report.html": REPORT_HTML, "guide.md": GUIDE_MD, "capacity.docx": _docx_table()},
    )
    config = load_test_config(work, corpus=str(corpus))
    asked = [{"question_id": qid, "question": q[0]} for qid, q in QUESTIONS.items()]
    result = run_stages(config, questions_table(asked, "employee", "general"))
    return {a["question_id"]: a for a in result.final_answers.to_pylist()}


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_a_question_answered_from_a_figure_or_a_row_cites_its_place(answers, question_id):
    _, expected, doc_id, section, label = QUESTIONS[question_id]
    answer = answers[question_id]
    assert answer["status"] == "answered", answer["rendered_answer"]
    assert expected in answer["answer"]
    first = answer["citations"][0]
    assert first["doc_id"] == doc_id
    if section is not None:
        assert first["section_path"] == section
    if label is not None:
        assert anchor_label(first["anchor"]) == label
        assert label in answer["rendered_answer"]


# ---------------------------------------------------------------- a vision model by endpoint


class _FakeVision(ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint on loopback that describes every picture alike."""

    reply = "A bar chart titled Cargo volume: Lisbon handled 41,200 containers in 2026"
    status = 200

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: _FakeVision

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "body": body})
        if self.server.status != 200:
            payload = b'{"error": "model not loaded"}'
        else:
            message = {"role": "assistant", "content": self.server.reply}
            reply = {"choices": [{"message": message, "finish_reason": "stop"}]}
            payload = json.dumps(reply).encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake_vision():
    server = _FakeVision()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def no_ocr(monkeypatch):
    def refuse(name):
        raise AssertionError("the OCR engine was requested")

    monkeypatch.setattr(ocr, "get_engine", refuse)


def _vision(server: _FakeVision, **extra) -> dict:
    return {"base_url": server.url, "model": "fake-vision", "http_retries": 0, **extra}


def _options(**config) -> ReadOptions:
    return ReadOptions(config=ingestion.Config(**config))


def _chart_pdf(caption: str | None) -> bytes:
    return scanned_pages.text_with_figure_pdf(
        "Port of Lisbon yearly figures.", scanned_pages.text_image(""), caption
    )


def test_a_pdf_figure_gets_the_models_description_said_to_be_the_models(fake_vision, no_ocr):
    options = _options(ocr_engine="none", vision=_vision(fake_vision))
    blocks = pdf.read(_chart_pdf("Figure 1: Cargo volume"), options)
    texts = [b.text for b in blocks]
    assert texts == [
        "Port of Lisbon yearly figures.",
        "Figure (page 1): Figure 1: Cargo volume",
        f"Figure (described by fake-vision): {_FakeVision.reply}.",
    ]
    described = blocks[2]
    assert described.origin == "model" and described.meta["described_by"] == "fake-vision"
    assert described.anchor == {**blocks[1].anchor, "model": "fake-vision"}
    [request] = fake_vision.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "fake-vision"
    image_part = request["body"]["messages"][0]["content"][1]
    assert image_part["type"] == "image_url"
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]).startswith(b"\x89PNG")


def test_a_figure_with_nothing_offline_is_described_only_by_the_model(fake_vision, no_ocr):
    config = {"ocr_engine": "none", "vision": _vision(fake_vision)}
    blocks = pdf.read(_chart_pdf(None), _options(**config))
    assert [b.text for b in blocks][1].startswith("Figure (described by fake-vision): A bar chart")
    # without the model the same figure gives nothing (a description is never invented)
    assert len(pdf.read(_chart_pdf(None), _options(ocr_engine="none"))) == 1


def test_an_image_file_is_described_and_its_anchor_names_the_model(tmp_path, fake_vision, no_ocr):
    buffer = io.BytesIO()
    scanned_pages.text_image("").save(buffer, "PNG")
    _write(tmp_path, {"chart.png": buffer.getvalue()})
    result = _ingest(tmp_path, ocr_engine="none", vision=_vision(fake_vision))
    [document] = result["documents"]
    assert document["text"] == f"Figure (described by fake-vision): {_FakeVision.reply}."
    [anchor] = document["anchors"]
    assert anchor_label(anchor["anchor"]) == "page 1, box 0, 0, 600, 200, described by fake-vision"
    # offline, the same picture is what it always was: no text, an error row
    errors = _ingest(tmp_path, ocr_engine="none")["ingestion_errors"]
    assert [e["error_kind"] for e in errors if e["severity"] == "error"] == ["no_text"]


def test_a_failing_endpoint_is_one_warning_and_the_offline_description_stays(
    tmp_path, fake_vision, no_ocr
):
    fake_vision.status = 500
    chart = scanned_pages.text_with_figure_pdf(
        "Port of Lisbon yearly figures.", scanned_pages.text_image(""), "Figure 1: Cargo volume"
    )
    _write(tmp_path, {"port.pdf": chart, "second.pdf": chart})
    result = _ingest(tmp_path, ocr_engine="none", vision=_vision(fake_vision))
    [document] = [d for d in result["documents"] if d["path"] == "port.pdf"]
    assert "Figure (page 1): Figure 1: Cargo volume" in document["text"]
    assert "described by" not in document["text"], "no description in place of the model's"
    warnings = [e for e in result["ingestion_errors"] if e["error_kind"] == "vision_failed"]
    assert [w["path"] for w in warnings] == ["port.pdf", "second.pdf"]
    assert "HTTP 500" in warnings[0]["message"] and warnings[0]["severity"] == "warning"


def test_the_model_budget_is_kept_and_reported(fake_vision, no_ocr):
    frames = [scanned_pages.text_image(""), scanned_pages.text_image("")]
    buffer = io.BytesIO()
    frames[0].save(buffer, "TIFF", save_all=True, append_images=frames[1:])
    options = _options(ocr_engine="none", vision=_vision(fake_vision, max_images=1))
    blocks = images.read(buffer.getvalue(), options)
    assert [b.page for b in blocks] == [1]
    assert len(fake_vision.requests) == 1
    assert (
        "vision_budget",
        "1 figures not sent to the vision model: over vision.max_images=1",
    ) in options.warnings


def test_vision_is_off_by_default_and_its_model_is_in_the_parser_identity(fake_vision):
    assert not ingestion.Config().vision.enabled
    offline = ingestion._parser_identity(ingestion.Config())
    one = ingestion._parser_identity(ingestion.Config(vision=_vision(fake_vision)))
    other = ingestion._parser_identity(
        ingestion.Config(vision=_vision(fake_vision, model="other-vision"))
    )
    assert len({json.dumps(i, sort_keys=True) for i in (offline, one, other)}) == 3
    secret = ingestion._parser_identity(
        ingestion.Config(vision=_vision(fake_vision, api_key="sk-very-secret"))
    )
    assert "sk-very-secret" not in json.dumps(secret, sort_keys=True, default=str)
    pdf.read(_chart_pdf("Figure 1: Cargo volume"), _options(ocr_engine="none"))
    assert fake_vision.requests == [], "nothing is asked without a configured endpoint"


def _deck_with_picture() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    buffer = io.BytesIO()
    scanned_pages.text_image("").save(buffer, "PNG")
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Cargo"
    buffer.seek(0)
    slide.shapes.add_picture(buffer, Inches(1), Inches(2), width=Inches(4))  # no alt text
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def test_pptx_and_docx_pictures_are_described_by_the_model_beside_their_alt_text(
    tmp_path, fake_vision
):
    from tests.test_formats import _docx_with_pictures

    _write(
        tmp_path,
        {
            "deck.pptx": _deck_with_picture(),
            "report.docx": _docx_with_pictures(["Bar chart: revenue grew 18% in 2026", ""]),
        },
    )
    offline = {d["path"]: d["text"] for d in _ingest(tmp_path)["documents"]}
    assert "described by" not in offline["deck.pptx"] + offline["report.docx"]
    result = _ingest(tmp_path, vision=_vision(fake_vision))
    documents = {d["path"]: d for d in result["documents"]}
    deck = documents["deck.pptx"]
    described = f"Figure (described by fake-vision): {_FakeVision.reply}."
    assert _labels(deck)[described] == "slide 1, described by fake-vision"
    report = documents["report.docx"]["text"]
    assert report.count(described) == 2, "both pictures, the one without alt text too"
    assert report.index("Figure: Bar chart: revenue grew 18% in 2026.") < report.index(described)
    assert len(fake_vision.requests) == 3
