"""Word (.docx) internals: the zip's structure and size budget, and pictures' alt text (or a
vision model's description) written in as runs beside the picture.
"""

from __future__ import annotations

import io
from typing import Any

from stages.formats.figures import FigureDescriber, figure_text
from stages.ingestion.config import Config, IngestError


def _check_docx_structure(data: bytes, config: Config) -> None:
    """A .docx is a zip: refuse a non-zip and one that unpacks far beyond the size budget."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            unpacked = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile as exc:
        raise IngestError("parse_error", f"not a .docx (not a zip archive): {exc}") from exc
    if "word/document.xml" not in names:
        raise IngestError("parse_error", "not a .docx: the zip has no word/document.xml")
    if unpacked > config.max_file_bytes * 4:
        raise IngestError(
            "too_complex",
            f"unpacks to {unpacked} bytes, over 4 x max_file_bytes={config.max_file_bytes}",
        )


WORD_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DRAWING_NS = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
MAIN_DRAWING_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
RELATIONSHIP_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_RELS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"


def _with_alt_text(data: bytes, describer: FigureDescriber | None = None) -> bytes:
    """The .docx with each picture's alt text (`wp:docPr/@descr`, written by its author) as a
    run "Figure: <alt text>." beside the picture, so it is read in place, under its section.
    A picture without alt text stays unread: its description is never invented. With a vision
    model configured, its description follows as "Figure (described by <model>): ..."."""
    import zipfile

    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        try:
            root = etree.fromstring(archive.read("word/document.xml"), parser)
        except etree.XMLSyntaxError:
            return data  # unstructured reports the broken document as it always has
        media = _docx_media(archive, parser) if describer is not None and describer.active else {}
        described = 0
        for doc_pr in root.iter(f"{{{DRAWING_NS}}}docPr"):
            run = next(doc_pr.iterancestors(f"{{{WORD_NS}}}r"), None)
            if run is None:
                continue
            texts = [figure_text("", [doc_pr.get("descr") or ""])]
            if media:
                picture = _docx_picture(doc_pr, media, archive)
                description = describer.describe(picture) if picture else None
                if description:
                    texts.append(f"Figure (described by {describer.model}): {description}.")
            for text in reversed([t for t in texts if t]):
                # the final stop keeps unstructured from taking a short alt text for a title
                figure_run = etree.Element(f"{{{WORD_NS}}}r")
                element = etree.SubElement(figure_run, f"{{{WORD_NS}}}t")
                element.text = f" {text} "
                element.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
                run.addnext(figure_run)
                described += 1
        if not described:
            return data
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as rewritten:
            for info in archive.infolist():
                content = archive.read(info.filename)
                if info.filename == "word/document.xml":
                    content = etree.tostring(root, xml_declaration=True, standalone=True)
                rewritten.writestr(info, content)
    return buffer.getvalue()


def _docx_media(archive: Any, parser: Any) -> dict[str, str]:
    """Relationship id -> the part name of each image the document body refers to."""
    from lxml import etree

    try:
        rels = etree.fromstring(archive.read("word/_rels/document.xml.rels"), parser)
    except (KeyError, etree.XMLSyntaxError):
        return {}
    return {
        rel.get("Id"): "word/" + rel.get("Target", "").removeprefix("/word/").lstrip("/")
        for rel in rels.iter(f"{{{PACKAGE_RELS_NS}}}Relationship")
        if rel.get("Type", "").endswith("/image") and rel.get("TargetMode") != "External"
    }


def _docx_picture(doc_pr: Any, media: dict[str, str], archive: Any) -> bytes | None:
    """The image bytes of the picture whose `wp:docPr` this is, if the package holds them."""
    blip = next(doc_pr.getparent().iter(f"{{{MAIN_DRAWING_NS}}}blip"), None)
    name = media.get(blip.get(f"{{{RELATIONSHIP_NS}}}embed")) if blip is not None else None
    try:
        return archive.read(name) if name else None
    except KeyError:
        return None
