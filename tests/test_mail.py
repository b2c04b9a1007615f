"""Mail as documents: .eml and .mbox, one section per message, quoted replies folded,
attachments as documents of their own, the message date as the document's date."""

from __future__ import annotations

import datetime as dt
import json
import os
from email.message import EmailMessage
from pathlib import Path

from stages import ingestion
from stages.formats import ReadOptions, mail
from stages.formats.anchors import anchor_label
from tests import format_files as files

CRANE_LABEL = "message 3 of thread 'Replacement crane', from Kari Nilsen, 2026-11-30"


def ingest(root: Path, **config) -> dict[str, list[dict]]:
    outputs = ingestion.run(
        {"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config(**config)
    )
    return {name: table.to_pylist() for name, table in outputs.items()}


def _old_file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    stamp = dt.datetime(2020, 1, 1).timestamp()  # the file's own date must not be used
    os.utime(path, (stamp, stamp))
    return path


def _labels(document: dict) -> dict[str, str]:
    return {
        document["text"][a["start"] : a["end"]]: anchor_label(a["anchor"])
        for a in document["anchors"]
    }


def test_a_mailbox_is_one_section_per_message_in_thread_order():
    options = ReadOptions(path="crane.mbox")
    blocks = mail.read(files.mbox_bytes(), options)
    headings = [b.text for b in blocks if b.kind == "heading"]
    assert headings == [
        "Message 1 of 'Replacement crane': Ola Hansen, 2026-11-20",
        "Message 2 of 'Replacement crane': Kari Nilsen, 2026-11-25",
        "Message 1 of 'Canteen menu': Canteen, 2026-11-22",
        "Message 3 of 'Replacement crane': Kari Nilsen, 2026-11-30",
    ]
    delivery = next(b for b in blocks if "14 December" in b.text)
    assert anchor_label(delivery.anchor) == CRANE_LABEL
    assert delivery.anchor["subject"] == "RE: Re: Replacement crane"
    headers = blocks[blocks.index(delivery) - 1].text
    assert "To: Ola Hansen <ola@northwind.example>, Site Office <site@northwind.example>" in headers
    assert "Date: 2026-11-30 10:30" in headers
    assert options.date_hint == dt.date(2026, 11, 30)  # the latest message
    assert options.title_hint == "Replacement crane"


def test_quoted_replies_are_folded_so_a_fact_is_indexed_once():
    text = "\n".join(b.text for b in mail.read(files.mbox_bytes(), ReadOptions(path="c.mbox")))
    assert text.count("failed its inspection") == 1  # quoted with ">" in message 2
    assert text.count("asked Liebherr for a quote") == 1  # quoted Outlook-style in message 3
    assert "wrote:" not in text and "Original Message" not in text


def test_a_quote_of_a_message_not_in_the_file_is_kept():
    body = (
        "Agreed, let us go with that.\n\nOn Tue, 3 Nov 2026, Per <per@x.example> wrote:\n"
        "> The Oslo warehouse lease ends on 31 March 2027.\n"
    )
    spec = {"from": "Kari <k@x.example>", "subject": "Re: Lease", "body": body}
    blocks = mail.read(files.mail_message(spec), ReadOptions(path="lease.eml"))
    text = "\n".join(b.text for b in blocks)
    assert text.count("The Oslo warehouse lease ends on 31 March 2027.") == 1
    assert "Agreed, let us go with that." in text


def test_an_html_only_message_is_read_as_text():
    message = EmailMessage()
    message["From"] = "Site Office <site@northwind.example>"
    message["Subject"] = "Gate codes"
    message["Date"] = "Tue, 1 Dec 2026 07:00:00 +0000"
    message.set_content(
        "<html><head><style>p {color: red}</style></head><body><p>The gate code for "
        "the Bergen site is 4711.</p><p>Change it&nbsp;monthly.</p></body></html>",
        subtype="html",
    )
    blocks = mail.read(message.as_bytes(), ReadOptions(path="gate.eml"))
    body = blocks[-1].text
    assert "The gate code for the Bergen site is 4711." in body and "color" not in body
    assert "Change it\xa0monthly." in body or "Change it monthly." in body


def test_ingested_mail_is_dated_by_its_messages_and_its_attachments_are_documents(tmp_path):
    _old_file(tmp_path / "crane.mbox", files.mbox_bytes())
    outcome = ingest(tmp_path)
    errors = [e for e in outcome["ingestion_errors"] if e["severity"] == "error"]
    assert errors == []
    documents = {d["doc_id"]: d for d in outcome["documents"]}
    assert set(documents) == {"crane", "crane.attachment-1"}
    thread = documents["crane"]
    assert thread["title"] == "Replacement crane"
    assert thread["last_modified"] == dt.date(2026, 11, 30)  # not the file's 2020 date
    labels = _labels(thread)
    assert CRANE_LABEL in labels.values()
    quote = documents["crane.attachment-1"]
    assert quote["path"] == "crane.mbox#attachment-1/quote.csv"
    assert quote["title"] == (
        "quote.csv (attachment to message 2 of thread 'Replacement crane', from Kari Nilsen, "
        "2026-11-25)"
    )
    assert quote["last_modified"] == dt.date(2026, 11, 25)
    assert quote["doc_type"] == "mail_attachment"
    assert quote["permission_set"] == thread["permission_set"]
    assert "412000" in quote["text"]
    chunks = [c for c in outcome["chunks"] if c["doc_id"] == "crane.attachment-1"]
    assert chunks and all(c["title"] == quote["title"] for c in chunks)
    # the thread names its attachment, the attachment its message: linked both ways
    assert "Attachments: quote.csv" in thread["text"]


def test_a_catalog_date_wins_over_the_message_date(tmp_path):
    _old_file(tmp_path / "crane.mbox", files.mbox_bytes())
    catalog = {
        "documents": [
            {
                "path": "crane.mbox",
                "doc_id": "crane-thread",
                "permission_set": ["everyone"],
                "trust_tier": "verified",
                "last_modified": "2026-12-05",
            }
        ]
    }
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    documents = {d["doc_id"]: d for d in ingest(tmp_path)["documents"]}
    assert documents["crane-thread"]["last_modified"] == dt.date(2026, 12, 5)
    assert documents["crane-thread.attachment-1"]["trust_tier"] == "verified"


def test_attachments_that_cannot_be_read_are_warnings_and_the_mail_is_kept(tmp_path):
    spec = {
        "from": "Kari Nilsen <kari@northwind.example>",
        "date": "Mon, 30 Nov 2026 10:30:00 +0100",
        "subject": "Site photos",
        "body": "The photos of the Bergen site are in the archive.",
        "attachments": [("photos.zip", b"PK\x03\x04 zip"), ("plan.pptx", b"not a pptx")],
    }
    _old_file(tmp_path / "photos.eml", files.mail_message(spec))
    outcome = ingest(tmp_path)
    assert [d["doc_id"] for d in outcome["documents"]] == ["photos"]
    warnings = {
        e["error_kind"]: e for e in outcome["ingestion_errors"] if e["path"] == "photos.eml"
    }
    assert "photos.zip" in warnings["attachment_skipped"]["message"]
    assert "no parser for .zip" in warnings["attachment_skipped"]["message"]
    assert "plan.pptx" in warnings["attachment_error"]["message"]
    assert all(w["severity"] == "warning" for w in warnings.values())


def test_malformed_mail_is_a_clear_error_row(tmp_path):
    (tmp_path / "empty.mbox").write_bytes(b"\n\n")
    (tmp_path / "words.eml").write_bytes(b"just some words, no header at all\n")
    # a message without a body still says who wrote what, when: it is ingested
    (tmp_path / "headers-only.eml").write_bytes(b"From: a@b.example\nSubject: Kickoff\n\n")
    outcome = ingest(tmp_path)
    errors = {
        e["path"]: e["error_kind"] for e in outcome["ingestion_errors"] if e["severity"] == "error"
    }
    assert errors == {"empty.mbox": "empty_document", "words.eml": "parse_error"}
    assert [d["title"] for d in outcome["documents"]] == ["Kickoff"]
