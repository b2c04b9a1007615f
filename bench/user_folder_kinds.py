"""A user's own folder, no catalog: the four good sample documents (md, html, txt, pdf) next to
one file per bad-input kind, each with the outcome ingestion must give it.

Generated on demand (no committed binaries); `tests/test_user_folder.py` asserts each outcome and
`python -m bench user_folder` times ingestion over the same folder.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "data" / "sample" / "docs"
GOOD_FILES = {
    "price-list-2026.md": "pricing/price-list-2026.md",
    "service-level-agreement.html": "sla/service-level-agreement.html",
    "release-notes-2026.txt": "product/release-notes-2026.txt",
    "security-data-retention-policy.pdf": "policies/security-data-retention-policy.pdf",
}
# A budget small enough that the over-budget kinds stay small files.
TEST_BUDGET = {"max_file_bytes": 200_000, "max_text_chars": 100_000, "max_pdf_pages": 20}
INGESTED = "ingested"  # the expected outcome of a file that must become a document


@dataclass
class Kind:
    """One bad-input kind: the file it writes and what ingestion must make of it."""

    path: str
    make: Callable[[Path], None]
    expected: str  # INGESTED, or the error_kind of its row
    warning: str | None = None  # a warning row the file must also get
    severity: str = "error"


def _write(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


def _pdf(pages: list[str], password: str | None = None) -> bytes:
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for text in pages:
        if text:
            pdf.drawString(72, 720, text)
        pdf.showPage()
    pdf.save()
    data = buffer.getvalue()
    if password is None:
        return data
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _symlink(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


def _loop_pair(path: Path) -> None:
    path.symlink_to(path.with_name("loop-b.md"))
    path.with_name("loop-b.md").symlink_to(path)


def _nested(data: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    return make


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _deep_html(depth: int) -> bytes:
    body = "<div>" * depth + "<p>Deeply nested text that is still text.</p>" + "</div>" * depth
    return f"<html><head><title>Deep page</title></head><body>{body}</body></html>".encode()


def random_bytes(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


LATIN1 = "Preis: 49 € pro Nutzer für Müller & Söhne, gültig ab März.\n".encode("cp1252")
SIDECAR_DOC = b"# Sidecar document\n\nThis document has a sidecar with problems."


def bad_kinds(budget: dict[str, int] = TEST_BUDGET) -> list[Kind]:
    """Every kind of bad or odd input, each with its expected outcome."""
    too_big = budget["max_file_bytes"] + 1
    text_chars = budget["max_text_chars"]
    good_pdf = (SAMPLE_DOCS / GOOD_FILES["security-data-retention-policy.pdf"]).read_bytes()
    kinds = [
        Kind("empty.md", _write(b""), "empty_file"),
        Kind("whitespace.txt", _write(b"   \n\n\t \n"), "empty_document"),
        Kind("random-bytes.txt", _write(random_bytes(4096, 1)), "undecodable_text"),
        Kind(
            "elf-binary.md",
            _write(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 8),
            "undecodable_text",
        ),
        Kind(
            "controls.txt",
            _write(b"\x01\x02\x03\x04 text \x05\x06\x07\x08" * 50),
            "undecodable_text",
        ),
        Kind("pdf-as-html.html", _write(good_pdf), "undecodable_text"),
        Kind("random.pdf", _write(random_bytes(4096, 2)), "parse_error"),
        Kind("truncated.pdf", _write(good_pdf[: len(good_pdf) // 3]), "parse_error"),
        Kind("encrypted.pdf", _write(_pdf(["Secret text"], password="s3cret")), "encrypted"),
        Kind("scanned.pdf", _write(_pdf([""])), "no_text"),
        Kind(
            "many-pages.pdf", _write(_pdf(["page"] * (budget["max_pdf_pages"] + 1))), "too_complex"
        ),
        Kind("not-a-zip.docx", _write(b"PK\x03\x04 but not a zip archive"), "parse_error"),
        Kind("zip-not-docx.docx", _write(_zip({"hello.txt": b"hi"})), "parse_error"),
        Kind(
            "zip-bomb.docx",
            _write(_zip({"word/document.xml": b"<w:t>" + b"a" * (4 * too_big) + b"</w:t>"})),
            "too_complex",
        ),
        Kind("over-limit.txt", _write(b"word " * (too_big // 5 + 1)), "too_large"),
        Kind(
            "too-much-text.html",
            _write(b"<p>" + b"x " * (text_chars // 2 + 10) + b"</p>"),
            "too_large",
        ),
        Kind("notes.xyz", _write(b"text in an unknown format"), "unsupported_type"),
        Kind("no-suffix", _write(b"plain words without a suffix"), "unsupported_type"),
        Kind(
            "legacy.doc",
            _write(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64),
            "unsupported_type",
        ),
        # an image is OCR'd (stages/formats/images.py); a corrupt one is refused before OCR loads
        Kind("picture.png", _write(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64), "parse_error"),
        Kind(
            "script-only.html",
            _write(b"<html><script>var a = 1;</script></html>"),
            "empty_document",
        ),
        Kind("latin1.txt", _write(LATIN1), INGESTED, "encoding_detected"),
        Kind(
            "cp1252.md",
            _write("# Smart “quotes” – dash\n\nCosts 5 €.\n".encode("cp1252")),
            INGESTED,
        ),
        Kind(
            "utf16-bom.txt", _write("Text saved as UTF-16 with a BOM.\n".encode("utf-16")), INGESTED
        ),
        Kind(
            "utf8-bom-crlf.md",
            _write(b"\xef\xbb\xbf# Windows\r\n\r\nLines end in CRLF.\r\n"),
            INGESTED,
        ),
        Kind(
            "nul-bytes.txt",
            _write(b"Some text\x00 with a few\x00 NUL bytes in it.\n"),
            INGESTED,
            "nul_bytes_stripped",
        ),
        Kind("deep.html", _write(_deep_html(5000)), INGESTED, "html_too_deep"),
        Kind("long-line.txt", _write(b"x" * 50_000), INGESTED),
        Kind("a b.md", _write(b"# Same id\n\nFirst of two files with one doc id."), INGESTED),
        Kind(
            "a-b.md",
            _write(b"# Same id\n\nSecond of two files with one doc id."),
            "duplicate_doc_id",
        ),
        Kind("bad-yaml.md", _write(SIDECAR_DOC), "invalid_metadata"),
        Kind("bad-yaml.md.meta.yaml", _write(b"doc_id: [unclosed\n"), "skipped_metadata"),
        Kind("unknown-field.md", _write(SIDECAR_DOC), "invalid_metadata"),
        Kind(
            "unknown-field.md.meta.yaml",
            _write(b"doc_id: x\npermission_set: [everyone]\ntrust_tier: verified\ncolour: red\n"),
            "skipped_metadata",
        ),
        Kind("bad-tier.md", _write(SIDECAR_DOC), "invalid_metadata"),
        Kind(
            "bad-tier.md.meta.yaml",
            _write(b"doc_id: bad-tier\npermission_set: [everyone]\ntrust_tier: gold\n"),
            "skipped_metadata",
        ),
        Kind(
            "README.md",
            _write(b"# About this folder\n\nNotes for people."),
            "skipped",
            severity="warning",
        ),
        Kind(".hidden.md", _write(b"# Hidden\n\nNot read."), "hidden", severity="warning"),
        Kind("passwd-link.txt", _symlink("/etc/passwd"), "symlink_outside_root"),
        Kind("outside-dir", _symlink("/etc"), "symlink_outside_root"),
        Kind("loop-a.md", _loop_pair, "symlink_loop"),
        Kind("loop-b.md", lambda path: None, "symlink_loop"),
        Kind("self-dir", _symlink("."), "symlink_loop"),
        Kind("broken-link.md", _symlink("does-not-exist.md"), "broken_symlink"),
        Kind(
            "link-to-good.md", _symlink("price-list-2026.md"), "duplicate_link", severity="warning"
        ),
        Kind("pipe.txt", _fifo, "not_a_file"),
        Kind("report.md", _write(b"# Report\n\nThe markdown version of the report."), INGESTED),
        Kind("report.txt", _write(b"Report\n\nThe plain text version of the report."), INGESTED),
        Kind("run-on.txt", _write(b"word " * 15_000), INGESTED),
        Kind("sub/nested.md", _nested(b"# Nested\n\nA document in a subfolder."), INGESTED),
        Kind("sub-link", _symlink("sub"), "duplicate_link", severity="warning"),
        Kind("sub/up-link", _symlink(".."), "symlink_loop"),
        Kind(
            b"caf\xe9-latin1-name.txt".decode("utf-8", "surrogateescape"),
            _write(b"A file name that is not UTF-8."),
            INGESTED,
        ),
    ]
    return kinds


def build_user_folder(root: Path, budget: dict[str, int] = TEST_BUDGET) -> list[Kind]:
    """The four good sample documents and one file per bad kind, without any catalog."""
    root.mkdir(parents=True, exist_ok=True)
    for name, source in GOOD_FILES.items():
        shutil.copyfile(SAMPLE_DOCS / source, root / name)
    kinds = bad_kinds(budget)
    for kind in kinds:
        kind.make(root / kind.path)
    return kinds
