"""HTML specifics: nesting depth, `<figure>` text, a flat reading of HTML too deep for lxml,
and skipping unstructured's narrative-text check.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from stages.formats.figures import figure_text

TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*?(/?)>")
VOID_TAGS = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "table",
        "section",
        "article",
        "br",
        "pre",
        "blockquote",
    ]
)


def html_depth(html: str) -> int:
    """Deepest tag nesting (void and self-closing tags do not nest)."""
    depth = deepest = 0
    for match in TAG_RE.finditer(html):
        closing, tag, self_closing = match.groups()
        if tag.lower() in VOID_TAGS or self_closing:
            continue
        depth = max(depth - 1, 0) if closing else depth + 1
        deepest = max(deepest, depth)
    return deepest


def _with_figure_text(html: str) -> str:
    """The HTML with each `<figure>` read as a paragraph of figure text (its `<figcaption>`
    and its images' alt text, `figure_text`) followed by the rest of its content:
    unstructured drops a `<figure>` whole. A figure with neither caption nor alt text adds no
    text. Images outside a figure are read by unstructured as Image elements (`_blocks`)."""
    if "<figure" not in html.lower():
        return html
    import lxml.html
    from lxml import etree

    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return html  # unstructured reports what it cannot read as it always has
    for figure in list(root.iter("figure")):
        captions = list(figure.iter("figcaption"))
        caption = " ".join(c.text_content() for c in captions)
        images = list(figure.iter("img"))
        text = figure_text(caption, [image.get("alt") or "" for image in images])
        for element in captions + images:
            element.drop_tree()  # keeps the text that follows it
        figure.tag = "div"
        if text:
            paragraph = lxml.html.Element("p")
            paragraph.text = text
            figure.insert(0, paragraph)
    return lxml.html.tostring(root, encoding="unicode")


class _FlatText(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "title"):
            self._skip += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n\n")
        elif tag == "img" and (text := figure_text("", [dict(attrs).get("alt") or ""])):
            self.parts.append(f"\n\n{text}\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "title"):
            self._skip = max(self._skip - 1, 0)
        elif tag in BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _flat_html_text(html: str) -> str:
    parser = _FlatText()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def _not_narrative(text: str, *args: Any, **kwargs: Any) -> bool:
    return False


def _skip_narrative_check() -> None:
    """unstructured's HTML parser (html and Markdown) runs spaCy's tagger and parser over every
    paragraph, most of a small Markdown file's parse time, only to call it NarrativeText rather
    than Text. Both are plain text here (`_blocks` reads Title, Table, Image and page furniture
    only, and the HTML parser never derives a Title from text), so that check answers "no"."""
    import unstructured.partition.html.parser as html_parser

    html_parser.is_possible_narrative_text = _not_narrative
