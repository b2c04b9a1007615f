"""PDFs, scanned pages and images: text layers are read with their layout,
scans and pictures through OCR; every file is generated here (reportlab, Pillow)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from bench import scanned_pages
from stages import ingestion
from stages.formats import ReadOptions, ocr, pdf

ROOT = Path(__file__).resolve().parent.parent
PRICE_LIST_2025 = ROOT / "data" / "sample" / "docs" / "pricing" / "price-list-2025.pdf"


def _options(**config) -> ReadOptions:
    """What ingestion hands a reader: its Config, and where warnings and the title go."""
    return ReadOptions(config=ingestion.Config(**config))


def _ingest(root: Path, **config) -> dict[str, list[dict]]:
    outputs = ingestion.run(
        {"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config(**config)
    )
    return {name: table.to_pylist() for name, table in outputs.items()}


def _errors(ingested: dict[str, list[dict]], path: str) -> dict[str, str]:
    return {
        e["error_kind"]: e["message"] for e in ingested["ingestion_errors"] if e["path"] == path
    }


class _CountingEngine:
    """The real engine, counting the pages it is asked to read."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.calls = 0

    def recognize(self, image):
        self.calls += 1
        return self.engine.recognize(image)


@pytest.fixture
def no_ocr(monkeypatch):
    """OCR that fails the test if anything asks for it."""

    def refuse(name):
        raise AssertionError("the OCR engine was requested")

    monkeypatch.setattr(ocr, "get_engine", refuse)


@pytest.fixture
def counting_ocr(monkeypatch) -> _CountingEngine:
    engine = _CountingEngine(ocr.get_engine("rapidocr"))
    monkeypatch.setattr(ocr, "get_engine", lambda name: engine)
    return engine


def _ruled_table_pdf() -> bytes:
    """A text PDF: a title, a paragraph and a fully ruled price table (reportlab platypus)."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    table = Table(
        [
            ["Plan", "Price per user per month", "Seats"],
            ["Starter", "€12", "1-10"],
            ["Business", "€29", "5-500"],
            ["Enterprise", "€49", "20+"],
        ]
    )
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4).build(
        [
            Paragraph("Fabrikam Price List", styles["Title"]),
            Paragraph("Prices exclude VAT and are billed monthly.", styles["Normal"]),
            Spacer(1, 12),
            table,
        ]
    )
    return buffer.getvalue()


# ---------------------------------------------------------------- text PDFs


def test_a_ruled_table_becomes_a_table_chunk_with_cells_and_boxes(no_ocr):
    blocks = pdf.read(_ruled_table_pdf(), _options())
    table = next(b for b in blocks if b.kind == "table")
    assert "Plan: Enterprise | Price per user per month: €49 | Seats: 20+" in table.text.split("\n")
    assert table.page == 1 and table.origin == "text" and table.confidence is None
    cells = {(c["row"], c["column"]): c for c in table.meta["cells"]}
    assert cells[(3, 1)]["text"] == "€49" and cells[(3, 1)]["header"] == "Price per user per month"
    assert cells[(0, 0)]["is_header"] and not cells[(1, 0)]["is_header"]
    x0, top, x1, bottom = cells[(3, 1)]["box"]
    assert 0 <= x0 < x1 <= 595.3 and 0 <= top < bottom <= 841.9
    assert table.anchor["unit"] == "pt" and len(table.anchor["box"]) == 4
    heading = next(b for b in blocks if b.kind == "heading")
    assert heading.text == "Fabrikam Price List"


def test_an_unruled_table_keeps_each_value_with_its_header_and_sections_follow_headings(no_ocr):
    blocks = pdf.read(PRICE_LIST_2025.read_bytes(), _options())
    table = next(b for b in blocks if b.kind == "table")
    assert (
        "Plan: Enterprise | Monthly list price: €42 per user per month | Minimum seats: 20 | "
        "Storage per user: 1 TB"
    ) in table.text.split("\n")
    headings = [(b.depth, b.text) for b in blocks if b.kind == "heading"]
    assert headings[0] == (0, "Northwind Cloud Price List 2025")
    assert (1, "Annual discount") in headings
    assert not any("Page 1" in b.text for b in blocks), "the running footer is dropped"


def test_pdf_chunks_carry_section_paths_pages_and_the_text_origin(tmp_path, no_ocr):
    (tmp_path / "price-list-2025.pdf").write_bytes(PRICE_LIST_2025.read_bytes())
    chunks = _ingest(tmp_path)["chunks"]
    table = next(c for c in chunks if c["is_table"])
    assert table["section_path"] == "Northwind Cloud Price List 2025 > Plans and per-seat prices"
    assert table["page_number"] == 1
    assert {c["origin"] for c in chunks} == {"text"}
    assert all(c["ocr_confidence"] is None for c in chunks)


def test_a_pdf_without_text_or_image_stays_no_text_without_ocr(tmp_path, no_ocr):
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    blank = canvas.Canvas(buffer)
    blank.showPage()
    blank.save()
    (tmp_path / "blank.pdf").write_bytes(buffer.getvalue())
    errors = _errors(_ingest(tmp_path), "blank.pdf")
    assert errors["no_text"] == "the PDF has no text layer (scanned images?)"


# ---------------------------------------------------------------- scanned PDFs


@pytest.fixture(scope="module")
def mixed_pdf() -> bytes:
    """Page 1 has a text layer; page 2 is a scanned price list (an image, no text layer)."""
    scan = scanned_pages.render_page(scanned_pages.PRICE_LIST)
    return scanned_pages.text_then_scanned_pdf(
        ["Tailspin Hosting overview", "Tailspin Hosting runs its servers in Dublin and Oslo."],
        scan,
    )


def test_only_the_page_without_a_text_layer_is_ocr_d(mixed_pdf, counting_ocr):
    options = _options()
    blocks = pdf.read(mixed_pdf, options)
    assert counting_ocr.calls == 1, "the text page must never be OCR'd"
    assert {b.origin for b in blocks if b.page == 1} == {"text"}
    recognised = [b for b in blocks if b.page == 2]
    assert recognised and {b.origin for b in recognised} == {"ocr"}
    table = next(b for b in recognised if b.kind == "table")
    assert "Plan: Enterprise | Price per user per month: €49 | Storage: 2 TB" in table.text
    assert table.confidence > 0.9
    assert table.anchor["unit"] == "pt" and table.anchor["page"] == 2
    x0, top, x1, bottom = table.anchor["box"]
    assert 0 < x0 < x1 < 595.3 and 0 < top < bottom < 841.9
    assert ("ocr_used", "text recognised by OCR on page(s) 2") in options.warnings


def test_ocr_off_leaves_a_scanned_pdf_as_a_no_text_error(tmp_path, no_ocr):
    scan = scanned_pages.render_page(scanned_pages.PRICE_LIST[:2])
    (tmp_path / "scan.pdf").write_bytes(scanned_pages.image_only_pdf([scan]))
    errors = _errors(_ingest(tmp_path, ocr_engine="none"), "scan.pdf")
    assert "OCR is off" in errors["no_text"]


def test_the_ocr_page_budget_is_kept_and_reported(tmp_path, counting_ocr):
    pages = [scanned_pages.render_page([("text", f"Scanned note number {n}.")]) for n in (1, 2)]
    (tmp_path / "notes.pdf").write_bytes(scanned_pages.image_only_pdf(pages))
    ingested = _ingest(tmp_path, max_ocr_pages=1)
    assert counting_ocr.calls == 1
    assert "over max_ocr_pages=1" in _errors(ingested, "notes.pdf")["ocr_budget"]
    assert "Scanned note number 1" in ingested["documents"][0]["text"]


def test_a_question_is_answered_from_the_scanned_page_with_its_page(tmp_path, mixed_pdf):
    from flows.executor import questions_table, run_stages
    from tests.conftest import load_test_config

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tailspin-prices.pdf").write_bytes(mixed_pdf)
    config = load_test_config(tmp_path, corpus=str(corpus))
    question = {
        "question_id": "q1",
        "question": "How much does the Enterprise plan cost per user per month?",
    }
    table = questions_table([question], "employee", "general")
    answer = run_stages(config, table).final_answers.to_pylist()[0]
    assert answer["status"] == "answered", answer["rendered_answer"]
    assert "€49" in answer["answer"]
    assert {c["page_number"] for c in answer["citations"]} == {2}


# ---------------------------------------------------------------- figures on text pages

REVENUE_WORDS = "Revenue 2026 grew 18%"
REVENUE_CAPTION = "Figure 1: Revenue growth"


def _figure_blocks(blocks):
    return [b for b in blocks if b.anchor and "figure" in b.anchor]


@pytest.fixture(scope="module")
def revenue_pdf() -> bytes:
    """Page 1 plain text; page 2 a paragraph, a chart with words in it and its caption."""
    return scanned_pages.text_with_figure_pdf(
        "Tailspin Hosting reports its yearly results below.",
        scanned_pages.text_image(REVENUE_WORDS),
        REVENUE_CAPTION,
        pages_before=("Tailspin Hosting annual report.",),
    )


def test_a_figure_is_described_by_its_caption_and_the_text_inside_it(revenue_pdf, counting_ocr):
    blocks = pdf.read(revenue_pdf, _options())
    assert counting_ocr.calls == 1, "only the figure is OCR'd, never the text layer"
    (figure,) = _figure_blocks(blocks)
    assert figure.text == (
        f"Figure (page 2): {REVENUE_CAPTION}. Text in the image: {REVENUE_WORDS}"
    )
    assert figure.kind == "text" and figure.origin == "ocr" and figure.confidence > 0.9
    assert figure.anchor == {
        "page": 2,
        "unit": "pt",
        "box": [60.0, 102.0, 360.0, 202.0],
        "figure": 1,
    }
    texts = [b.text for b in blocks if b.page == 2]
    # after the paragraph above it; its caption line is said by the figure, not again alone
    assert texts == ["Tailspin Hosting reports its yearly results below.", figure.text]


def test_an_image_without_caption_or_text_becomes_no_block(counting_ocr):
    data = scanned_pages.text_with_figure_pdf(
        "Tailspin Hosting reports its yearly results below.", scanned_pages.text_image(""), None
    )
    blocks = pdf.read(data, _options())
    assert counting_ocr.calls == 1
    assert _figure_blocks(blocks) == []
    assert [b.text for b in blocks] == ["Tailspin Hosting reports its yearly results below."]


def test_with_ocr_off_a_figure_is_described_by_its_caption_only(revenue_pdf, no_ocr):
    blocks = pdf.read(revenue_pdf, _options(ocr_engine="none"))
    (figure,) = _figure_blocks(blocks)
    assert figure.text == f"Figure (page 2): {REVENUE_CAPTION}"
    assert figure.origin == "text" and figure.confidence is None
    assert sum(REVENUE_CAPTION in b.text for b in blocks) == 1, "the caption is indexed once"


def test_a_caption_that_runs_on_into_the_next_line_gives_only_its_own_words(no_ocr):
    """The caption line leaves the page's text; the words after it in the same block stay."""
    first = pdf.Block("text", "Figure 1: Revenue growth Source: annual accounts.", 2)
    other = pdf.Block("text", "Figure 1: Revenue growth", 3)  # another page: not this caption
    figure = pdf.Figure(2, 1, (60.0, 102.0, 360.0, 202.0), caption="Figure 1: Revenue growth")
    kept = pdf._without_caption([first, other], figure)
    assert [b.text for b in kept] == ["Source: annual accounts.", "Figure 1: Revenue growth"]


def test_figures_over_the_ocr_budget_keep_their_caption_and_are_reported(revenue_pdf, no_ocr):
    options = _options(max_ocr_pages=0)
    (figure,) = _figure_blocks(pdf.read(revenue_pdf, options))
    assert figure.text == f"Figure (page 2): {REVENUE_CAPTION}"
    assert ("ocr_budget", "1 figures not OCR'd: over max_ocr_pages=0") in options.warnings


def test_tiny_images_are_not_figures_and_figures_are_capped(revenue_pdf, no_ocr):
    logo = scanned_pages.text_with_figure_pdf(
        "A page with a logo.", scanned_pages.text_image(""), "Figure 1: Logo", drawn=(40, 40)
    )
    assert _figure_blocks(pdf.read(logo, _options(ocr_engine="none"))) == []
    capped = pdf.read(revenue_pdf, _options(ocr_engine="none", max_figures=0))
    assert _figure_blocks(capped) == []
    assert REVENUE_CAPTION in [b.text for b in capped], "the caption stays in the page's text"


def test_a_question_is_answered_from_a_figure_with_its_page(tmp_path, revenue_pdf):
    from flows.executor import questions_table, run_stages
    from tests.conftest import load_test_config

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tailspin-report.pdf").write_bytes(revenue_pdf)
    config = load_test_config(tmp_path, corpus=str(corpus))
    question = {"question_id": "q1", "question": "How much did Tailspin revenue grow in 2026?"}
    table = questions_table([question], "employee", "general")
    answer = run_stages(config, table).final_answers.to_pylist()[0]
    assert answer["status"] == "answered", answer["rendered_answer"]
    assert "18%" in answer["answer"]
    assert {c["page_number"] for c in answer["citations"]} == {2}


# ---------------------------------------------------------------- images


@pytest.fixture(scope="module")
def note_image():
    items = [
        ("heading", "Maintenance Window"),
        ("text", "Planned maintenance takes place every second Sunday from 02:00 to 04:00."),
    ]
    return scanned_pages.render_page(items).crop((0, 0, 1654, 700))


@pytest.mark.parametrize("suffix,kind", [(".png", "PNG"), (".jpg", "JPEG"), (".tiff", "TIFF")])
def test_an_image_is_ocr_d_into_chunks_that_say_so(tmp_path, note_image, suffix, kind):
    note_image.save(tmp_path / f"maintenance{suffix}", kind)
    ingested = _ingest(tmp_path)
    document = ingested["documents"][0]
    assert document["title"] == "Maintenance Window"
    assert "every second Sunday from 02:00 to 04:00" in document["text"]
    chunk = ingested["chunks"][0]
    assert chunk["origin"] == "ocr" and 0.8 < chunk["ocr_confidence"] <= 1.0
    assert chunk["page_number"] == 1
    assert "ocr_used" in _errors(ingested, f"maintenance{suffix}")


def test_image_blocks_have_pixel_boxes_and_each_tiff_frame_is_a_page(note_image):
    from stages.formats import images

    second = scanned_pages.render_page([("text", "The second frame names Oslo.")]).crop(
        (0, 0, 1654, 400)
    )
    buffer = io.BytesIO()
    note_image.save(buffer, "TIFF", save_all=True, append_images=[second])
    blocks = images.read(buffer.getvalue(), _options())
    assert {b.page for b in blocks} == {1, 2}
    oslo = next(b for b in blocks if "Oslo" in b.text)
    assert oslo.page == 2 and oslo.anchor["unit"] == "px" and oslo.origin == "ocr"
    x0, top, x1, bottom = oslo.anchor["box"]
    assert 0 <= x0 < x1 <= 1654 and 0 <= top < bottom <= 400


def test_a_thin_strip_is_read_at_its_own_scale():
    """Detection scales an image up to 736 px on its short side; the engine pads instead."""
    from PIL import Image, ImageDraw, ImageFont

    from stages.formats import images

    strip = Image.new("L", (900, 120), 255)
    font = ImageFont.load_default(48)  # Pillow's own font: scaled up 6x, it came back split
    ImageDraw.Draw(strip).text((20, 30), "Enterprise 49 EUR", font=font, fill=0)
    buffer = io.BytesIO()
    strip.save(buffer, "PNG")
    (block,) = images.read(buffer.getvalue(), _options())
    assert block.text == "Enterprise 49 EUR"
    x0, top, x1, bottom = block.anchor["box"]
    assert 0 <= x0 < x1 <= 900 and 0 <= top < bottom <= 120


CORRUPT_IMAGES = {
    "header-only.png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
    "random.jpg": bytes(range(256)) * 8,
    "truncated.tiff": b"II*\x00\x08\x00\x00\x00\x05\x00",
}


def test_corrupt_images_become_error_rows_without_loading_ocr(tmp_path, no_ocr):
    for name, data in CORRUPT_IMAGES.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "fine.md").write_text("# Fine\n\nA document that is fine.")
    ingested = _ingest(tmp_path)
    assert [d["path"] for d in ingested["documents"]] == ["fine.md"]
    for name in CORRUPT_IMAGES:
        assert "corrupt image" in _errors(ingested, name)["parse_error"], name


def test_an_oversized_image_is_refused_before_decoding(tmp_path, no_ocr):
    from PIL import Image

    Image.new("L", (3000, 2000), 255).save(tmp_path / "poster.png")
    errors = _errors(_ingest(tmp_path, max_image_pixels=1_000_000), "poster.png")
    assert "exceed max_image_pixels=1000000" in errors["too_complex"]


def test_a_corpus_without_scans_never_imports_an_ocr_library(tmp_path):
    (tmp_path / "price-list-2025.pdf").write_bytes(PRICE_LIST_2025.read_bytes())
    (tmp_path / "broken.png").write_bytes(CORRUPT_IMAGES["header-only.png"])
    code = (
        "import sys\nfrom stages import ingestion\n"
        f"root = {str(tmp_path)!r}\n"
        "files = ingestion.snapshot_corpus(root)\n"
        "out = ingestion.run({'corpus_files': files}, ingestion.Config())\n"
        "assert out['documents'].num_rows == 1\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('rapidocr', 'pypdfium2', 'unstructured_inference', 'cv2')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


# ---------------------------------------------------------------- layout rules


def _span(text: str, x0: float, top: float, size: float = 10.0):
    from stages.formats import layout

    return layout.Span(text, x0, top, x0 + len(text) * size * 0.5, top + size, size)


def _layout_blocks(spans):
    from stages.formats import layout

    return layout.document_blocks([layout.Page(1, 595.0, 842.0, spans)], 900)


def test_aligned_columns_become_a_table_whose_header_names_each_value():
    rows = [("Region", "Uptime"), ("Frankfurt", "99.95%"), ("Dublin", "99.9%")]
    spans = [
        _span(text, 60 + 200 * c, 100 + 16 * r)
        for r, row in enumerate(rows)
        for c, text in enumerate(row)
    ]
    (table,) = _layout_blocks(spans)
    assert table.kind == "table"
    assert table.text == "Region: Frankfurt | Uptime: 99.95%\nRegion: Dublin | Uptime: 99.9%"


def test_two_columns_of_prose_are_not_a_table():
    left = "running prose in the left column of a two-column page"
    right = "and more running prose in the right column beside it"
    spans = []
    for line in range(5):
        spans += [_span(left, 50, 100 + 14 * line), _span(right, 340, 100 + 14 * line)]
    blocks = _layout_blocks(spans)
    assert [b.kind for b in blocks] == ["text"]
