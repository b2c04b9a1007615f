"""Generate the sample knowledge base's documents in the formats people have.

Usage:  .venv/bin/python scripts/make_sample_formats.py

Writes into data/sample/docs/: a slide deck (pptx), a spreadsheet (xlsx), a scanned page (a PDF
whose only content is an image, no text layer), a meeting transcript (vtt) and a support ticket
export (json). Output is deterministic: fixed ZIP timestamps and core properties for the Office
files, Pillow's built-in font for the scan and reportlab with invariant=1 for its PDF wrapper.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "data" / "sample" / "docs"
FIXED_DT = dt.datetime(2026, 1, 1, 0, 0, 0)
ZIP_DT = (2026, 1, 1, 0, 0, 0)
MODIFIED_RE = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*<")

REVIEW_SLIDES = [
    ("Q3 2026 Business Review", ["Northwind Cloud Ltd", "Prepared for the leadership team"], None),
    (
        "Customers",
        [
            "Active customers at the end of Q3 2026: 1,240",
            "Net revenue retention in Q3 2026: 112%",
            "Logo churn stayed below 2% for the third quarter in a row",
        ],
        "The Frankfurt region launched on 2 September 2026.",
    ),
    (
        "New customers by region, Q3 2026",
        [["Region", "New customers in Q3 2026", "Largest new account"]]
        + [
            ["EU", "85", "Alpenbahn AG"],
            ["UK", "40", "Harbourline plc"],
            ["US", "62", "Mesa Foods"],
        ],
        None,
    ),
]

TRAINING_PACKAGES = [
    ["Training package", "Duration in hours", "Price", "Format"],
    ["Admin Bootcamp", 8, "€1,200", "remote, live"],
    ["Developer Workshop", 16, "€2,900", "on site"],
    ["Executive Briefing", 2, "€0", "remote, live"],
    ["Security Deep Dive", 6, "€1,750", "remote, live"],
]

SCANNED_LINES = [
    "Northwind Cloud Partner Discounts 2026",
    "Signed copy, scanned on 3 March 2026",
    "Silver partners receive a 15% discount on list prices.",
    "Gold partners receive a 25% discount on list prices.",
    "Platinum partners receive a 35% discount on list prices.",
    "Discounts apply to new subscriptions only.",
]

TRANSCRIPT = [
    (
        "00:00:01.000",
        "00:00:06.000",
        "Priya Nair",
        "Welcome to the October customer advisory board.",
    ),
    (
        "00:00:06.500",
        "00:00:13.000",
        "Priya Nair",
        "The next release, version 4.6.0, is planned for 9 December 2026.",
    ),
    (
        "00:00:13.500",
        "00:00:21.000",
        "Tom Okafor",
        "In the first quarter of 2027 we will add a data residency option in Switzerland.",
    ),
    (
        "00:00:21.500",
        "00:00:27.000",
        "Lena Berg",
        "Customers asked for audit log exports to their own storage bucket.",
    ),
]

TICKETS = {
    "tickets": [
        {
            "id": "T-1042",
            "subject": "SSO login fails after certificate rotation",
            "status": "solved",
            "created_at": "2026-11-12",
            "comments": [
                {
                    "author": "Ana Costa (customer)",
                    "created_at": "2026-11-12",
                    "body": "Since this morning every SSO login fails with error SAML-403.",
                },
                {
                    "author": "Bo Lindqvist (support)",
                    "created_at": "2026-11-12",
                    "body": "The root cause was an expired SAML signing certificate. We rotated "
                    "it at 14:20 UTC and SSO logins work again.",
                },
            ],
        },
        {
            "id": "T-1057",
            "subject": "CSV export truncates long descriptions",
            "status": "open",
            "created_at": "2026-11-14",
            "comments": [
                {
                    "author": "Raj Patel (customer)",
                    "created_at": "2026-11-14",
                    "body": "Descriptions longer than 255 characters are cut off in the CSV "
                    "export.",
                },
                {
                    "author": "Bo Lindqvist (support)",
                    "created_at": "2026-11-15",
                    "body": "Confirmed. A fix is scheduled for release 4.6.0; until then use the "
                    "JSON export, which keeps the full text.",
                },
            ],
        },
    ]
}


def _repack_zip(data: bytes) -> bytes:
    """Fixed timestamps and member order, so re-running gives byte-identical Office files."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as zin,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout,
    ):
        for name in zin.namelist():
            info = zipfile.ZipInfo(name, date_time=ZIP_DT)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            member = zin.read(name)
            if name == "docProps/core.xml":  # openpyxl stamps the save time as "modified"
                member = MODIFIED_RE.sub(rb"\g<1>2026-01-01T00:00:00Z<", member)
            zout.writestr(info, member)
    return out.getvalue()


def write_pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.core_properties.created = deck.core_properties.modified = FIXED_DT
    deck.core_properties.last_printed = FIXED_DT
    deck.core_properties.revision = 1
    for title, body, notes in REVIEW_SLIDES:
        if body and isinstance(body[0], list):  # a table slide
            slide = deck.slides.add_slide(deck.slide_layouts[5])
            slide.shapes.title.text = title
            rows, cols = len(body), len(body[0])
            shape = slide.shapes.add_table(
                rows, cols, Inches(0.5), Inches(1.8), Inches(9), Inches(2)
            )
            for r, row in enumerate(body):
                for c, value in enumerate(row):
                    shape.table.cell(r, c).text = value
        else:
            slide = deck.slides.add_slide(deck.slide_layouts[1])
            slide.shapes.title.text = title
            frame = slide.placeholders[1].text_frame
            frame.text = body[0]
            for line in body[1:]:
                frame.add_paragraph().text = line
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    buffer = io.BytesIO()
    deck.save(buffer)
    path.write_bytes(_repack_zip(buffer.getvalue()))


def write_xlsx(path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    book.properties.created = book.properties.modified = FIXED_DT
    sheet = book.active
    sheet.title = "Training packages"
    for row in TRAINING_PACKAGES:
        sheet.append(row)
    notes = book.create_sheet("Notes")
    notes.append(["Note"])
    notes.append(["Prices exclude VAT and travel costs for on-site training."])
    buffer = io.BytesIO()
    book.save(buffer)
    path.write_bytes(_repack_zip(buffer.getvalue()))


def scanned_page_png() -> bytes:
    """The partner discount sheet as a 200 dpi greyscale scan: an image, no text layer."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = 1654, 2339  # A4 at 200 dpi
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    title, body = ImageFont.load_default(size=44), ImageFont.load_default(size=34)
    y = 180
    for index, line in enumerate(SCANNED_LINES):
        draw.text((150, y), line, fill=20, font=title if index == 0 else body)
        y += 110 if index == 0 else 80
    buffer = io.BytesIO()
    page.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def write_scanned_pdf(path: Path) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    pdf.drawImage(ImageReader(io.BytesIO(scanned_page_png())), 0, 0, width=A4[0], height=A4[1])
    pdf.showPage()
    pdf.save()
    path.write_bytes(buffer.getvalue())


def write_vtt(path: Path) -> None:
    lines = ["WEBVTT", ""]
    for start, end, speaker, text in TRANSCRIPT:
        lines += [f"{start} --> {end}", f"<v {speaker}>{text}", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def write_tickets(path: Path) -> None:
    path.write_text(json.dumps(TICKETS, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


FILES = {
    "slides/q3-2026-business-review.pptx": write_pptx,
    "training/training-packages-2026.xlsx": write_xlsx,
    "pricing/partner-discounts-2026-scanned.pdf": write_scanned_pdf,
    "meetings/customer-advisory-board-2026-10.vtt": write_vtt,
    "support/ticket-export-2026-11.json": write_tickets,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DOCS, help="the docs folder to write into")
    out = parser.parse_args().out
    for relative, write in FILES.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path)
        print("wrote", path)


if __name__ == "__main__":
    main()
