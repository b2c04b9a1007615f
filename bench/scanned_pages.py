"""Scanned pages made at test time: text and tables drawn with Pillow, wrapped into PDFs that
have no text layer (used by tests/test_pdf_ocr.py and `python -m bench ocr`)."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path

DPI = 200
A4_POINTS = (595.2756, 841.8898)
FONTS = Path(__import__("reportlab").__file__).parent / "fonts"  # Bitstream Vera, in reportlab


@dataclass
class PageSpec:
    """What a page shows: (kind, text) items top to bottom, kind heading|text|table."""

    items: list[tuple[str, object]]
    words: list[str] = field(default_factory=list)  # every word drawn, for recall


def _font(size_pt: float, bold: bool = False):
    from PIL import ImageFont

    return ImageFont.truetype(
        str(FONTS / ("VeraBd.ttf" if bold else "Vera.ttf")), round(size_pt * DPI / 72)
    )


def _wrap(draw, text: str, font, width: int) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if draw.textlength(candidate, font=font) <= width or not current:
            current = candidate
        else:
            lines.append(current)
            current = word
    return [*lines, current] if current else lines


def render_page(items: list[tuple[str, object]], body_pt: float = 11.0):
    """An A4 page at DPI as a grayscale PIL image: headings, wrapped paragraphs, ruled tables."""
    from PIL import Image, ImageDraw

    width, height = round(A4_POINTS[0] * DPI / 72), round(A4_POINTS[1] * DPI / 72)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    margin = round(60 * DPI / 72)
    body, bold = _font(body_pt), _font(body_pt, bold=True)
    line_px = round(body_pt * 1.45 * DPI / 72)
    y = margin
    for kind, content in items:
        if kind == "heading":
            font = _font(body_pt * 1.6, bold=True)
            draw.text((margin, y), str(content), font=font, fill=0)
            y += round(body_pt * 1.6 * 2.0 * DPI / 72)
        elif kind == "text":
            for line in _wrap(draw, str(content), body, width - 2 * margin):
                draw.text((margin, y), line, font=body, fill=0)
                y += line_px
            y += line_px
        elif kind == "table":
            rows = content  # type: ignore[assignment]
            y = _draw_table(draw, rows, margin, y, width - 2 * margin, body, bold, line_px)
    return image


def _draw_table(draw, rows, left: int, top: int, width: int, body, bold, line_px: int) -> int:
    """A ruled table whose columns are as wide as their content; returns the y below it."""
    needed = [
        max(draw.textlength(row[c], font=bold if r == 0 else body) for r, row in enumerate(rows))
        + 60
        for c in range(len(rows[0]))
    ]
    scale = min(1.0, width / sum(needed))
    columns = [round(w * scale) for w in needed]
    row_px = round(line_px * 1.5)
    y = top
    for r, row in enumerate(rows):
        x = left
        for c, cell in enumerate(row):
            draw.rectangle((x, y, x + columns[c], y + row_px), outline=0, width=2)
            offset = (row_px - line_px) // 2 + 2
            draw.text((x + 20, y + offset), cell, font=bold if r == 0 else body, fill=0)
            x += columns[c]
        y += row_px
    return y + line_px


def scan_like(image, seed: int = 0):
    """A rendered page made to look scanned: a slight skew, blur, noise and JPEG artefacts."""
    from PIL import Image, ImageFilter

    rng = random.Random(seed)
    page = image.rotate(rng.uniform(-0.6, 0.6), resample=Image.BICUBIC, fillcolor=255)
    page = page.filter(ImageFilter.GaussianBlur(0.6))
    pixels = page.load()
    for _ in range(page.size[0] * page.size[1] // 400):  # dust specks
        x, y = rng.randrange(page.size[0]), rng.randrange(page.size[1])
        pixels[x, y] = rng.choice((0, 90, 200))
    buffer = io.BytesIO()
    page.save(buffer, "JPEG", quality=70)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("L")


def image_only_pdf(images: list) -> bytes:
    """A PDF whose pages are just the images, A4, with no text layer (what a scanner writes)."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4_POINTS)
    for image in images:
        pdf.drawImage(ImageReader(image), 0, 0, width=A4_POINTS[0], height=A4_POINTS[1])
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def text_then_scanned_pdf(text_lines: list[str], scanned) -> bytes:
    """Page 1 a text layer, page 2 a scanned image without one."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4_POINTS)
    pdf.setFont("Helvetica-Bold", 16)
    pdf.drawString(60, 780, text_lines[0])
    pdf.setFont("Helvetica", 10)
    for number, line in enumerate(text_lines[1:]):
        pdf.drawString(60, 750 - 14 * number, line)
    pdf.showPage()
    pdf.drawImage(ImageReader(scanned), 0, 0, width=A4_POINTS[0], height=A4_POINTS[1])
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


PRICE_LIST = [
    ("heading", "Tailspin Hosting Price List 2027"),
    ("text", "All prices are in euros per user per month and exclude VAT."),
    (
        "table",
        [
            ["Plan", "Price per user per month", "Storage"],
            ["Basic", "€9", "20 GB"],
            ["Team", "€21", "250 GB"],
            ["Enterprise", "€49", "2 TB"],
        ],
    ),
    ("text", "Customers who pay yearly receive a discount of 12 percent on every plan."),
]

_WORDS = [
    "account",
    "audit",
    "backup",
    "billing",
    "budget",
    "cluster",
    "contract",
    "customer",
    "data",
    "delivery",
    "deployment",
    "discount",
    "encryption",
    "export",
    "invoice",
    "licence",
    "migration",
    "monitoring",
    "network",
    "notice",
    "onboarding",
    "payment",
    "policy",
    "quarter",
    "refund",
    "region",
    "release",
    "renewal",
    "report",
    "request",
    "retention",
    "review",
    "schedule",
    "security",
    "seat",
    "service",
    "storage",
    "subscription",
    "support",
    "ticket",
    "training",
    "upgrade",
    "usage",
]


def benchmark_pages(count: int, seed: int = 7) -> list[PageSpec]:
    """Pages of generated prose and a table each, varied by seed, with the words drawn."""
    rng = random.Random(seed)
    pages = []
    for number in range(count):
        items: list[tuple[str, object]] = [("heading", f"Section {number + 1} Operations Review")]
        for _ in range(3):
            sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(30, 45)))
            items.append(("text", sentence.capitalize() + "."))
        rows = [["Item", "Quantity", "Amount"]]
        for _ in range(4):
            rows.append(
                [
                    rng.choice(_WORDS).capitalize(),
                    str(rng.randint(1, 500)),
                    f"€{rng.randint(5, 999)}",
                ]
            )
        items.append(("table", rows))
        words = []
        for kind, content in items:
            if kind == "table":
                words.extend(w for row in content for cell in row for w in cell.split())  # type: ignore[union-attr]
            else:
                words.extend(str(content).split())
        pages.append(PageSpec(items, words))
    return pages


def text_image(words: str, size: tuple[int, int] = (600, 200)):
    """A chart-like picture: a frame, a bar and `words` written inside it (empty: no text)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((2, 2, size[0] - 3, size[1] - 3), outline="black", width=3)
    draw.rectangle((30, size[1] - 60, size[0] // 2, size[1] - 30), fill=(70, 110, 200))
    if words:
        draw.text((30, 30), words, font=_font(40 * 72 / DPI), fill="black")
    return image


def text_with_figure_pdf(
    paragraph: str,
    image,
    caption: str | None,
    pages_before: tuple[str, ...] = (),
    drawn: tuple[float, float] = (300, 100),
) -> bytes:
    """Text pages (`pages_before`, one line each), then a page with a paragraph, the image
    (`drawn` points wide and high, its top at 102 pt) and its caption line below it."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4_POINTS)
    for line in pages_before:
        pdf.setFont("Helvetica", 11)
        pdf.drawString(60, 780, line)
        pdf.showPage()
    pdf.setFont("Helvetica", 11)
    pdf.drawString(60, 780, paragraph)
    top = A4_POINTS[1] - 102
    pdf.drawImage(ImageReader(image), 60, top - drawn[1], width=drawn[0], height=drawn[1])
    if caption:
        pdf.drawString(60, top - drawn[1] - 18, caption)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()
