"""PDF reader: the text layer with pdfplumber (pdfminer), scanned pages through OCR.

Per page: words with their font size and weight become spans (see `layout`), ruled tables come
from pdfplumber's table finder with their cell boxes, tables without rules from the alignment
of their columns. A page with a text layer is never OCR'd. A page without one that holds an
image is rendered (pypdfium2) and OCR'd when `ocr_engine` is not "none", up to `max_ocr_pages`
per document. Anchors are page boxes in PDF points, origin at the page's top-left corner.

Figures (images on a page with a text layer, at least FIGURE_MIN_POINTS on each side, up to
`max_figures` per document) are described only from what is true offline: their caption (a
line starting "Figure", "Fig.", "Chart" or "Table" right below or above the image) and the
text OCR recognises inside the image, which counts against `max_ocr_pages`. A figure with
neither becomes no block: a description is never invented. The caption line moves into its
figure's block (it is not left in the page's text as well, so it is indexed once). When
ingestion's `vision` block names an endpoint, each figure's region is also sent to that vision
model, and its answer becomes a block of its own after the figure's, said to be the model's
(`stages.formats.figures`); a failing endpoint is one warning and the offline text stays.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from stages.formats import Block, ParseError, ReadOptions, layout
from stages.formats.figures import CAPTION_RE, FigureDescriber, model_block

OCR_DPI = 200  # PP-OCR reads 10 pt text reliably at 200 dpi (about 28 px per line)
PLACEHOLDER_TITLES = {"untitled", "untitled document", "document"}
RULED_TABLES = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}
FIGURE_MIN_POINTS = 50.0  # smaller images are icons, bullets and logos, not figures
CAPTION_MAX_GAP = 36.0  # points between an image's edge and its caption line


def read(data: bytes, options: ReadOptions) -> list[Block]:
    """Blocks of a PDF; limits and the OCR engine come from ingestion's Config via `options`."""
    options.title_hint = check_structure(data, options.max_pdf_pages)
    engine_name = options.ocr_engine
    max_ocr_pages = options.max_ocr_pages
    max_table_chars = options.chunk_size
    max_figures = options.max_figures
    pages, scanned, figures = _text_layer_pages(data, max_figures)
    ocr_budget = max_ocr_pages
    if scanned and engine_name != "none":
        to_ocr = scanned[:max_ocr_pages]
        ocr_budget -= len(to_ocr)
        if len(scanned) > len(to_ocr):
            skipped = len(scanned) - len(to_ocr)
            options.warn(
                "ocr_budget",
                f"{skipped} scanned pages not OCR'd: over max_ocr_pages={max_ocr_pages}",
            )
        pages.extend(_ocr_pages(data, to_ocr, engine_name))
        pages.sort(key=lambda page: page.number)
    blocks = [b for b in layout.document_blocks(pages, max_table_chars) if b.text.strip()]
    ocr_figures = 0 if engine_name == "none" else min(len(figures), max(ocr_budget, 0))
    if engine_name != "none" and len(figures) > ocr_figures:
        skipped = len(figures) - ocr_figures
        options.warn(
            "ocr_budget", f"{skipped} figures not OCR'd: over max_ocr_pages={max_ocr_pages}"
        )
    describer = FigureDescriber(options)
    _read_figures(data, figures, engine_name, ocr_figures, describer)
    describer.close()
    described = [f for f in figures if f.caption or f.ocr_text or f.model_text]
    blocks = _with_figures(blocks, described, describer.model)
    if not blocks:
        raise ParseError("no_text", _no_text_message(scanned, engine_name))
    if any(page.origin == "ocr" for page in pages):
        ocr_numbers = ", ".join(str(p.number) for p in pages if p.origin == "ocr")
        options.warn("ocr_used", f"text recognised by OCR on page(s) {ocr_numbers}")
    return blocks


def _no_text_message(scanned: list[int], engine_name: str) -> str:
    if not scanned:
        return "the PDF has no text layer (scanned images?)"
    if engine_name == "none":
        return (
            f"the PDF has no text layer: {len(scanned)} page(s) are images and OCR is off "
            "(ingestion.ocr_engine: none)"
        )
    return f"the PDF has no text layer and OCR found no text on its {len(scanned)} scanned page(s)"


def check_structure(data: bytes, max_pages: int) -> str | None:
    """Refuse encrypted, corrupt and over-long PDFs before reading them; the PDF's own title."""
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PyPdfError

    from stages.common.text import normalize_text

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ParseError("encrypted", "password-protected PDF: cannot read its text")
        pages = len(reader.pages)
        title = (reader.metadata or {}).get("/Title")
    except FileNotDecryptedError as exc:
        raise ParseError("encrypted", "password-protected PDF: cannot read its text") from exc
    except (PyPdfError, ValueError, OSError, KeyError, TypeError) as exc:
        raise ParseError("parse_error", f"corrupt PDF: {type(exc).__name__}: {exc}") from exc
    if pages == 0:
        raise ParseError("parse_error", "corrupt PDF: no pages")
    if pages > max_pages:
        raise ParseError("too_complex", f"{pages} pages exceed max_pdf_pages={max_pages}")
    title = normalize_text(str(title)) if title else ""
    if title.lower() in PLACEHOLDER_TITLES:
        return None  # what a PDF library writes when nobody set a title
    return title[: layout.HEADING_MAX_CHARS] or None


# ---------------------------------------------------------------- the text layer


def _text_layer_pages(
    data: bytes, max_figures: int
) -> tuple[list[layout.Page], list[int], list[Figure]]:
    """Pages with a text layer as spans, the numbers of image-only pages (to OCR) and the
    figures on text pages (at most `max_figures`)."""
    import pdfplumber

    pages, scanned, figures = [], [], []
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            try:
                if any(ch["text"].strip() for ch in page.chars):
                    pages.append(_text_page(page))
                    if len(figures) < max_figures:
                        figures.extend(_page_figures(page)[: max_figures - len(figures)])
                elif page.images:
                    scanned.append(page.page_number)
            finally:
                page.close()  # drop the page's cached layout objects
    return pages, scanned, figures


def _text_page(page: Any) -> layout.Page:
    result = layout.Page(page.page_number, float(page.width), float(page.height), [])
    ruled = [t for t in page.find_tables(RULED_TABLES) if _is_real_table(t)]
    result.tables = [_ruled_table_block(t, result) for t in ruled]
    boxes = [t.bbox for t in ruled]
    words = page.extract_words(extra_attrs=["size", "fontname"], keep_blank_chars=False)
    for word in words:
        middle = ((word["x0"] + word["x1"]) / 2, (word["top"] + word["bottom"]) / 2)
        if any(_inside(middle, box) for box in boxes):
            continue  # read as part of its ruled table
        result.spans.append(
            layout.Span(
                word["text"],
                float(word["x0"]),
                float(word["top"]),
                float(word["x1"]),
                float(word["bottom"]),
                float(word["size"]),
                bold=_is_bold(word["fontname"]),
            )
        )
    return result


def _is_bold(fontname: str) -> bool:
    name = fontname.split("+", 1)[-1].lower()  # subset prefix "ABCDEF+Font-Bold"
    return any(mark in name for mark in ("bold", "black", "heavy", "semibold", "demi"))


def _inside(point: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _is_real_table(table: Any) -> bool:
    """A ruled box around a paragraph is a 1x1 'table'; a table has two rows and two columns."""
    rows = table.rows
    return len(rows) >= 2 and max(len(row.cells) for row in rows) >= 2


def _ruled_table_block(table: Any, page: layout.Page) -> Block:
    from stages.common.text import normalize_text

    texts = table.extract()
    rows = [[normalize_text(cell or "").replace("\n", " ") for cell in row] for row in texts]
    boxes = [
        [[round(v, 1) for v in cell] if cell else None for cell in row.cells] for row in table.rows
    ]
    return layout.table_block(rows, boxes, page, has_header=True)


# ---------------------------------------------------------------- scanned pages


def _ocr_pages(data: bytes, numbers: list[int], engine_name: str) -> list[layout.Page]:
    """Render each image-only page and OCR it; spans in PDF points, like the text layer."""
    import pypdfium2

    from stages.formats import ocr

    engine = ocr.get_engine(engine_name)
    document = pypdfium2.PdfDocument(data)
    try:
        pages = []
        for number in numbers:
            page = document[number - 1]
            width, height = page.get_size()
            image = page.render(scale=OCR_DPI / 72).to_pil()
            page.close()
            spans = ocr.spans(ocr.recognize(engine, image), scale=72 / OCR_DPI)
            pages.append(layout.Page(number, width, height, spans, unit="pt", origin="ocr"))
        return pages
    finally:
        document.close()


# ---------------------------------------------------------------- figures on text pages


@dataclass
class Figure:
    """An image on a page with a text layer: where it is, its caption, the text inside it."""

    page: int
    number: int  # 1, 2, ... in the document
    box: tuple[float, float, float, float]  # x0, top, x1, bottom in points
    caption: str = ""
    ocr_text: str = ""
    confidence: float | None = None
    model_text: str = ""  # what the configured vision model said it shows


def _page_figures(page: Any) -> list[Figure]:
    """The page's images large enough to be figures, each with its caption when it has one."""
    images = [
        image
        for image in page.images
        if image["x1"] - image["x0"] >= FIGURE_MIN_POINTS
        and image["bottom"] - image["top"] >= FIGURE_MIN_POINTS
    ]
    if not images:
        return []
    lines = page.extract_text_lines()
    figures = []
    for image in sorted(images, key=lambda i: (i["top"], i["x0"])):
        box = (
            max(float(image["x0"]), 0.0),
            max(float(image["top"]), 0.0),
            min(float(image["x1"]), float(page.width)),
            min(float(image["bottom"]), float(page.height)),
        )
        figures.append(Figure(page.page_number, 0, box, caption=_caption(box, lines)))
    return figures


def _caption(box: tuple[float, float, float, float], lines: list[dict]) -> str:
    """The caption line nearest the image, below it first, then above it; "" without one."""
    from stages.common.text import normalize_text

    def overlaps(line: dict) -> bool:
        return line["x0"] < box[2] and line["x1"] > box[0]

    below = [ln for ln in lines if overlaps(ln) and 0 <= ln["top"] - box[3] <= CAPTION_MAX_GAP]
    above = [ln for ln in lines if overlaps(ln) and 0 <= box[1] - ln["bottom"] <= CAPTION_MAX_GAP]
    for candidates, distance in (
        (below, lambda ln: ln["top"] - box[3]),
        (above, lambda ln: box[1] - ln["bottom"]),
    ):
        for line in sorted(candidates, key=distance):
            text = normalize_text(line["text"]).strip()
            if CAPTION_RE.match(text):
                return text
    return ""


def _read_figures(
    data: bytes,
    figures: list[Figure],
    engine_name: str,
    ocr_count: int,
    describer: FigureDescriber,
) -> None:
    """Render each figure's region of its page once: the first `ocr_count` are OCR'd (filling
    `ocr_text`), and each is shown to the vision model when one is configured (`model_text`)."""
    wanted = figures if describer.active else figures[:ocr_count]
    if not wanted:
        return  # no engine loaded, no page rendered for nothing
    import pypdfium2

    from stages.formats import ocr

    engine = ocr.get_engine(engine_name) if ocr_count else None
    document = pypdfium2.PdfDocument(data)
    scale = OCR_DPI / 72
    try:
        for index, figure in enumerate(wanted):
            page = document[figure.page - 1]
            width, height = page.get_size()
            x0, top, x1, bottom = figure.box
            # crop is what to cut off each side, in points: left, bottom, right, top
            crop = (x0, height - bottom, width - x1, top)
            region = page.render(scale=scale, crop=crop).to_pil()
            page.close()
            if engine is not None and index < ocr_count:
                _ocr_figure(engine, region, figure)
            figure.model_text = describer.describe(region) or ""
    finally:
        document.close()


def _ocr_figure(engine: Any, region: Any, figure: Figure) -> None:
    from stages.formats import ocr

    lines = layout.group_lines(ocr.spans(ocr.recognize(engine, region)))
    text = " ".join(line.text for line in lines).strip()
    if text:
        scores = [s.confidence for line in lines for s in line.spans if s.confidence]
        figure.ocr_text = text
        figure.confidence = round(sum(scores) / len(scores), 4) if scores else None


def _figure_anchor(figure: Figure) -> dict[str, Any]:
    box = [round(v, 1) for v in figure.box]
    return {"page": figure.page, "unit": "pt", "box": box, "figure": figure.number}


def _figure_block(figure: Figure) -> Block:
    parts = [f"Figure (page {figure.page})"]
    if figure.caption:
        parts[0] += f": {figure.caption.rstrip('.')}"
    if figure.ocr_text:
        parts.append(f"Text in the image: {figure.ocr_text}")
    return Block(
        "text",
        ". ".join(parts),
        figure.page,
        anchor=_figure_anchor(figure),
        origin="ocr" if figure.ocr_text else "text",
        confidence=figure.confidence if figure.ocr_text else None,
        meta={"figure": True},
    )


def _without_caption(blocks: list[Block], figure: Figure) -> list[Block]:
    """The blocks without the figure's caption line, which its figure block says instead: a
    block that is the caption goes; one that starts with it (the caption ran on into the next
    line) keeps the rest."""
    caption = " ".join(figure.caption.split())
    result = []
    for block in blocks:
        text = " ".join(block.text.split())
        if block.page == figure.page and block.kind in ("text", "heading"):
            if text == caption:
                continue
            if text.startswith(caption + " "):
                block.text = text[len(caption) :].strip()
        result.append(block)
    return result


def _with_figures(blocks: list[Block], figures: list[Figure], model: str = "") -> list[Block]:
    """The page's blocks with each figure's block after the last block that starts above it,
    its caption line taken out of the page's text, and the vision model's description (if any)
    right after the figure's own block."""
    result = list(blocks)
    for number, figure in enumerate(figures, start=1):
        figure.number = number
        if figure.caption:
            result = _without_caption(result, figure)
        position = len(result)
        for index, block in enumerate(result):
            top = ((block.anchor or {}).get("box") or [0.0, 0.0])[1]
            if (block.page or 0) > figure.page or (
                block.page == figure.page and top > figure.box[1]
            ):
                position = index
                break
        added = [_figure_block(figure)] if figure.caption or figure.ocr_text else []
        if figure.model_text:
            added.append(model_block(figure.model_text, model, figure.page, _figure_anchor(figure)))
        result[position:position] = added
    return result
