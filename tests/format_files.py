"""Files of the formats in stages/formats, generated at test time (no committed binaries)."""

from __future__ import annotations

import csv
import io
import json

from PIL import Image


def pptx_bytes() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    presentation.core_properties.title = "Quarterly sales review"
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])  # title and content
    slide.shapes.title.text = "Pipeline summary"
    body = slide.placeholders[1].text_frame
    body.text = "Twelve new logos signed this quarter"
    sub = body.add_paragraph()
    sub.text = "Three of them in the Nordics"
    sub.level = 1
    slide.notes_slide.notes_text_frame.text = "Remind the team that the Oslo office opens in May."

    slide = presentation.slides.add_slide(presentation.slide_layouts[5])  # title only
    slide.shapes.title.text = "Discount matrix"
    rows = [
        ("Region", "Discount ceiling"),
        ("Nordics", "18%"),
        ("DACH", "12%"),
        ("Benelux", "9%"),
    ]
    shape = slide.shapes.add_table(len(rows), 2, Inches(0.5), Inches(1.5), Inches(6), Inches(2))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    picture = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(picture, format="PNG")
    image = slide.shapes.add_picture(io.BytesIO(picture.getvalue()), Inches(7), Inches(5))
    image._element.nvPicPr.cNvPr.set("descr", "Bar chart of discounts by region")
    bare = slide.shapes.add_picture(io.BytesIO(picture.getvalue()), Inches(8), Inches(5))
    bare._element.nvPicPr.cNvPr.set("descr", "")
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def xlsx_bytes() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Prices"
    sheet.append(["Plan", "Price per user per month", "Minimum seats"])
    for row in (["Starter", 12, 1], ["Business", 29, 5], ["Enterprise", 49, 25]):
        sheet.append(row)
    for cell in ("B2", "B3", "B4"):
        sheet[cell].number_format = '"€"#,##0'
    sheet["D1"] = "Yearly"
    sheet["D2"] = "=B2*12"  # written without a saved value: never invented
    limits = book.create_sheet("Storage limits")
    limits.append(["Plan", "Storage per user"])
    limits.append(["Starter", "50 GB"])
    limits.append(["Enterprise", "1 TB"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def csv_bytes() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["Warehouse", "City", "Dock doors"])
    writer.writerow(["North hub", "Hamburg", "42"])
    writer.writerow(["South hub", "München", "17"])
    return out.getvalue().encode("cp1252")  # a legacy export: decoded, the encoding recorded


VTT = """WEBVTT

00:01:02.000 --> 00:01:05.500
<v Ana>Welcome to the onboarding call for the Lisbon office.</v>

00:01:05.500 --> 00:01:09.000
<v Ana>The Lisbon office keeps its badge readers offline on Sundays.</v>

00:01:09.000 --> 00:01:12.000
<v Bo>Thanks, I will tell the night shift.</v>
"""

SRT = """1
00:00:01,000 --> 00:00:04,000
Carla: The fire drill in Porto is scheduled for the ninth of June.

2
00:00:04,500 --> 00:00:06,000
Dev: Noted.
"""

TICKETS = {
    "tickets": [
        {
            "id": "T-42",
            "subject": "Export to Parquet fails",
            "status": "open",
            "description": "Exports of large workspaces stop at 80 percent.",
            "reporter": {"name": "Ana"},
            "created_at": "2026-01-01",
            "comments": [
                {"author": "Cy", "date": "2026-01-01", "body": "Could you share the log?"},
                {"author": "Ana", "date": "2026-01-02", "body": "Log attached, see line 40."},
                {
                    "author": {"displayName": "Bo"},
                    "created_at": "2026-01-02",
                    "body": "The exporter runs out of memory above 2 million rows; "
                    "a fix ships in version 4.6.",
                },
            ],
        },
        {
            "id": "T-43",
            "subject": "Invoice address",
            "comments": [{"author": "Dee", "date": "2026-02-03", "body": "Please update it."}],
        },
    ]
}


def tickets_json() -> bytes:
    return json.dumps(TICKETS).encode()


def tickets_jsonl() -> bytes:
    rows = [
        {"ticket_id": "S-7", "author": "Eve", "date": "2026-03-01", "body": "VPN drops hourly."},
        {
            "ticket_id": "S-7",
            "author": "Finn",
            "date": "2026-03-02",
            "body": "The VPN gateway in Vienna was replaced on 2 March 2026.",
        },
    ]
    return "\n".join(json.dumps(r) for r in rows).encode()


def tickets_csv() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["Ticket ID", "Subject", "Author", "Created At", "Body"])
    writer.writerow(["K-9", "Printer", "Gus", "2026-04-01", "The printer on floor 3 jams."])
    writer.writerow(
        ["K-9", "Printer", "Hal", "2026-04-02", "A new fuser unit for floor 3 arrives Friday."]
    )
    return out.getvalue().encode()


# ---------------------------------------------------------------- mail

CRANE_THREAD = [
    {
        "from": "Ola Hansen <ola@northwind.example>",
        "to": "Kari Nilsen <kari@northwind.example>",
        "date": "Fri, 20 Nov 2026 09:12:00 +0100",
        "subject": "Replacement crane",
        "body": "Kari, the tower crane at the Bergen site failed its inspection on 19 November. "
        "Can you order a replacement?\n\nOla",
    },
    {
        "from": "Kari Nilsen <kari@northwind.example>",
        "to": "Ola Hansen <ola@northwind.example>",
        "date": "Wed, 25 Nov 2026 14:02:00 +0100",
        "subject": "Re: Replacement crane",
        "body": "Ola, I asked Liebherr for a quote; it is attached.\n\nKari\n\n"
        "On Fri, 20 Nov 2026 at 09:12, Ola Hansen <ola@northwind.example> wrote:\n"
        "> Kari, the tower crane at the Bergen site failed its inspection on 19 November.\n"
        "> Can you order a replacement?\n>\n> Ola\n",
        "attachments": [("quote.csv", b"Item,Price\nLiebherr 172 EC-B tower crane,EUR 412000\n")],
    },
    {
        "from": "Canteen <canteen@northwind.example>",
        "to": "all@northwind.example",
        "date": "Sun, 22 Nov 2026 08:00:00 +0100",
        "subject": "Canteen menu",
        "body": "Fish soup is served on Thursdays in the Bergen canteen.",
    },
    {
        "from": "Kari Nilsen <kari@northwind.example>",
        "to": "Ola Hansen <ola@northwind.example>",
        "cc": "Site Office <site@northwind.example>",
        "date": "Mon, 30 Nov 2026 10:30:00 +0100",
        "subject": "RE: Re: Replacement crane",
        "body": "The replacement crane will be delivered to the Bergen site on 14 December 2026.\n"
        "\nKari\n\n-----Original Message-----\nFrom: Kari Nilsen\nSent: 25 November 2026\n"
        "Ola, I asked Liebherr for a quote; it is attached.\n",
    },
]


def mail_message(spec: dict) -> bytes:
    from email.message import EmailMessage

    message = EmailMessage()
    for header in ("from", "to", "cc", "date", "subject"):
        if spec.get(header):
            message[header.capitalize()] = spec[header]
    message.set_content(spec["body"])
    if spec.get("html"):
        message.add_alternative(spec["html"], subtype="html")
    for name, data in spec.get("attachments", []):
        message.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return message.as_bytes()


def mbox_bytes(specs: list[dict] = CRANE_THREAD) -> bytes:
    parts = []
    for spec in specs:
        sender = spec["from"].split("<")[-1].rstrip(">")
        body = mail_message(spec).replace(b"\nFrom ", b"\n>From ")
        parts.append(b"From " + sender.encode() + b" Mon Nov 30 10:30:00 2026\n" + body + b"\n")
    return b"".join(parts)
