"""E-mail: one message (.eml, RFC 5322) or a mailbox of them (.mbox), with Python's own `email`
and `mailbox` packages.

Messages are grouped into threads by their subject without "Re:"/"Fwd:" prefixes and numbered in
date order within a thread. Each message is one section: a heading "Message 3 of 'Replacement
crane': Kari Nilsen, 2026-11-30", its From, To, Date and Subject lines, then its body (the plain
text part, or the HTML part as text). Its anchor is {"message": 3, "thread": "Replacement crane",
"from": "Kari Nilsen", "date": "2026-11-30", "subject": …}, named "message 3 of thread
'Replacement crane', from Kari Nilsen, 2026-11-30".

Quoted replies are folded: a quoted paragraph ("> …", or below "On … wrote:" / "-----Original
Message-----") whose text another message of the same file already holds is dropped, so a fact
is indexed once; a quote of a message that is not in the file is kept, since it is the only copy.

Attachments are handed to ingestion (`options.attachments`), which reads each with the reader
for its own type as a document of its own, linked to its message by id and title. The latest
message's date is the document's date (`options.date_hint`) for the freshness rules.
"""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import email.utils
import html
import re
import tempfile
from dataclasses import dataclass, field
from email.message import EmailMessage
from html.parser import HTMLParser
from typing import Any

from stages.formats import Block, ParseError, ReadOptions

VERSION = "1"
REPLY_PREFIX_RE = re.compile(r"^\s*((re|fw|fwd|aw|sv|vs|tr|antw|wg)\s*(\[\d+\])?\s*:\s*)+", re.I)
# "On Mon, 30 Nov 2026 at 10:02, Kari Nilsen <kari@…> wrote:" and its common translations
ATTRIBUTION_RE = re.compile(
    r"^\s*(on|am|le|el|den|op|il)\b.{0,200}\b(wrote|schrieb|a écrit|escribió|skrev|schreef|"
    r"ha scritto)\s*:\s*$",
    re.I,
)
ORIGINAL_RE = re.compile(
    r"^\s*-{2,}\s*(original message|forwarded message|ursprüngliche "
    r"nachricht|opprinnelig melding)\s*-{2,}\s*$",
    re.I,
)
OUTLOOK_HEADER_RE = re.compile(r"^\s*from:\s*\S.*$", re.I)
# the header lines of a message quoted below "-----Original Message-----"
QUOTED_HEADER_RE = re.compile(
    r"^\s*(from|sent|date|to|cc|subject|von|gesendet|an|fra|sendt|til|"
    r"emne|betreff)\s*:",
    re.I,
)
MAX_MESSAGES = 5_000


@dataclass
class Attachment:
    """A file attached to a message: ingestion reads it as a document of its own."""

    filename: str
    data: bytes
    message: int  # the message's number in its thread
    thread: str
    sender: str | None
    date: dt.date | None

    def described(self) -> str:
        return describe_message(self.message, self.thread, self.sender, self.date)


@dataclass
class _Message:
    subject: str
    thread: str
    sender: str | None
    sender_address: str | None
    to: list[str]
    sent: dt.datetime | None
    body: str
    quoted: list[str]
    attachments: list[tuple[str, bytes]] = field(default_factory=list)
    number: int = 0
    skipped: list[str] = field(default_factory=list)


def read(data: bytes, options: ReadOptions) -> list[Block]:
    raw = _raw_messages(data, options.path)
    if not raw:
        raise ParseError("empty_document", "the mailbox holds no messages")
    if len(raw) > MAX_MESSAGES:
        raise ParseError("too_complex", f"{len(raw)} messages, over {MAX_MESSAGES} in one file")
    messages = [_message(m, options) for m in raw]
    _number(messages)
    own = [_normalised(m.body) for m in messages]
    blocks: list[Block] = []
    for index, message in enumerate(messages):
        others = " ".join(text for i, text in enumerate(own) if i != index)
        kept = [q for q in message.quoted if not _held_elsewhere(q, others)]
        blocks.extend(_message_blocks(message, kept))
        for name, content in message.attachments:
            sent = message.sent.date() if message.sent else None
            options.attachments.append(
                Attachment(name, content, message.number, message.thread, message.sender, sent)
            )
    dates = [m.sent.date() for m in messages if m.sent]
    options.date_hint = max(dates) if dates else None
    first = min(messages, key=_order)
    options.title_hint = first.thread or options.stem or None
    return blocks


def describe_message(number: int, thread: str, sender: str | None, date: dt.date | None) -> str:
    """ "message 3 of thread 'Replacement crane', from Kari Nilsen, 2026-11-30" """
    label = f"message {number}" + (f" of thread '{thread}'" if thread else "")
    if sender:
        label += f", from {sender}"
    return label + (f", {date.isoformat()}" if date else "")


def thread_subject(subject: str) -> str:
    """The subject without its "Re:", "Fwd:", "SV:" prefixes: what a thread's messages share."""
    return " ".join(REPLY_PREFIX_RE.sub("", subject or "").split())


# ---------------------------------------------------------------- reading


def _raw_messages(data: bytes, path: str) -> list[EmailMessage]:
    if path.lower().endswith(".mbox") or data.startswith(b"From "):
        return _mbox(data)
    message = email.message_from_bytes(data, policy=email.policy.default)
    if not message.keys():
        raise ParseError("parse_error", "not an e-mail message: it has no header lines")
    return [message]


def _mbox(data: bytes) -> list[EmailMessage]:
    import mailbox

    # mailbox reads a file; the bytes were already read (and their sha256 checked) by ingestion
    with tempfile.NamedTemporaryFile(suffix=".mbox") as handle:
        handle.write(data)
        handle.flush()
        box = mailbox.mbox(handle.name, create=False)
        try:
            return [
                email.message_from_bytes(entry.as_bytes(), policy=email.policy.default)
                for entry in box
            ]
        finally:
            box.close()


def _message(message: EmailMessage, options: ReadOptions) -> _Message:
    subject = _header(message, "subject") or ""
    sender, address = _sender(message)
    text = _body(message)
    body, quoted = split_quoted(text)
    attachments, skipped = [], []
    for part in message.iter_attachments():
        name = part.get_filename() or _rfc822_name(part)
        content = _attachment_bytes(part)
        if not name or content is None:
            skipped.append(part.get_content_type())
            continue
        attachments.append((name, content))
    for kind in skipped:
        options.warn("attachment_skipped", f"an attachment without a file name ({kind})")
    return _Message(
        subject=subject,
        thread=thread_subject(subject),
        sender=sender,
        sender_address=address,
        to=_recipients(message),
        sent=_date(message),
        body=body,
        quoted=quoted,
        attachments=attachments,
    )


def _header(message: EmailMessage, name: str) -> str | None:
    try:
        value = message.get(name)
    except Exception:  # noqa: BLE001 - the email package raises many kinds on a broken header
        return None
    return " ".join(str(value).split()) if value else None


def _sender(message: EmailMessage) -> tuple[str | None, str | None]:
    raw = _header(message, "from")
    if not raw:
        return None, None
    name, address = email.utils.parseaddr(raw)
    return (name or address or raw), (address or None)


def _recipients(message: EmailMessage) -> list[str]:
    names = []
    for header in ("to", "cc"):
        raw = _header(message, header)
        for name, address in email.utils.getaddresses([raw] if raw else []):
            if name or address:
                names.append(f"{name} <{address}>" if name and address else name or address)
    return names


def _date(message: EmailMessage) -> dt.datetime | None:
    raw = _header(message, "date")
    if not raw:
        return None
    try:
        return email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):  # unknown charset, broken encoding
        payload = part.get_payload(decode=True) or b""
        content = payload.decode("utf-8", errors="replace")
    if not isinstance(content, str):
        return ""
    return html_to_text(content) if part.get_content_type() == "text/html" else content


def _rfc822_name(part: EmailMessage) -> str | None:
    if part.get_content_type() != "message/rfc822":
        return None
    inner = part.get_content()
    subject = thread_subject(str(inner.get("subject") or "")) or "forwarded message"
    return re.sub(r"[^\w .-]+", "_", subject)[:80] + ".eml"


def _attachment_bytes(part: EmailMessage) -> bytes | None:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_content()
        return inner.as_bytes() if hasattr(inner, "as_bytes") else None
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) and payload else None


# ---------------------------------------------------------------- quoted replies


def split_quoted(text: str) -> tuple[str, list[str]]:
    """A body's own text, and its quoted paragraphs (quote marks removed).

    Quoted is a line starting with ">", and everything below an attribution line ("On … wrote:")
    or an Outlook block ("-----Original Message-----", or a "From:" line followed by "Sent:" or
    "Date:") that begins the quoted history.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    own: list[str] = []
    quoted: list[str] = []
    for index, line in enumerate(lines):
        if ORIGINAL_RE.match(line) or _outlook_header(lines, index):
            history = lines[index + 1 :] if ORIGINAL_RE.match(line) else lines[index:]
            quoted.extend(line for line in history if not QUOTED_HEADER_RE.match(line))
            break
        if ATTRIBUTION_RE.match(line) and _quote_follows(lines, index):
            continue
        if line.lstrip().startswith(">"):
            quoted.append(re.sub(r"^(\s*>)+ ?", "", line))
        else:
            own.append(line)
    return "\n".join(own).strip(), _paragraphs("\n".join(quoted))


def _outlook_header(lines: list[str], index: int) -> bool:
    if not OUTLOOK_HEADER_RE.match(lines[index]):
        return False
    following = [line.strip().lower() for line in lines[index + 1 : index + 4]]
    return any(line.startswith(("sent:", "date:", "gesendet:", "sendt:")) for line in following)


def _quote_follows(lines: list[str], index: int) -> bool:
    rest = [line for line in lines[index + 1 : index + 3] if line.strip()]
    return bool(rest) and rest[0].lstrip().startswith(">")


def _paragraphs(text: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"\n\s*\n", text)]
    return [p for p in parts if p and not ATTRIBUTION_RE.match(p)]


def _held_elsewhere(paragraph: str, others: str) -> bool:
    """Whether another message holds every line of a quoted paragraph (line by line, so a quote
    re-wrapped at another width still matches)."""
    lines = [_normalised(line) for line in paragraph.split("\n")]
    return all(line in others for line in lines if line)


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"^(\s*>)+", "", text, flags=re.M).lower().split())


# ---------------------------------------------------------------- blocks


def _order(message: _Message) -> tuple[int, dt.datetime]:
    if message.sent is None:
        return (1, dt.datetime.min.replace(tzinfo=dt.UTC))
    sent = message.sent if message.sent.tzinfo else message.sent.replace(tzinfo=dt.UTC)
    return (0, sent)


def _number(messages: list[_Message]) -> None:
    """Number each message within its thread in date order (undated ones last, in file order)."""
    threads: dict[str, list[_Message]] = {}
    for message in messages:
        threads.setdefault(message.thread.lower(), []).append(message)
    for members in threads.values():
        for number, message in enumerate(sorted(members, key=_order), start=1):
            message.number = number


def _message_blocks(message: _Message, kept_quotes: list[str]) -> list[Block]:
    sent = message.sent.date() if message.sent else None
    anchor: dict[str, Any] = {"message": message.number, "thread": message.thread}
    if message.sender:
        anchor["from"] = message.sender
    if sent:
        anchor["date"] = sent.isoformat()
    if message.subject:
        anchor["subject"] = message.subject
    heading = f"Message {message.number}" + (f" of '{message.thread}'" if message.thread else "")
    heading += ": " + ", ".join(x for x in (message.sender, sent and sent.isoformat()) if x)
    header_lines = []
    if message.sender:
        shown = message.sender
        if message.sender_address and message.sender_address != message.sender:
            shown += f" <{message.sender_address}>"
        header_lines.append(f"From: {shown}")
    if message.to:
        header_lines.append(f"To: {', '.join(message.to)}")
    if message.sent:
        header_lines.append(f"Date: {message.sent.strftime('%Y-%m-%d %H:%M')}")
    if message.subject:
        header_lines.append(f"Subject: {message.subject}")
    if message.attachments:
        names = ", ".join(name for name, _ in message.attachments)
        header_lines.append(f"Attachments: {names}")
    blocks = [Block("heading", heading.rstrip(": "), None, depth=1, anchor=anchor)]
    blocks.append(Block("text", "\n".join(header_lines), None, anchor=anchor))
    if message.body:
        blocks.append(Block("text", message.body, None, anchor=anchor))
    if kept_quotes:  # quoted from a message not in this file: the only copy, so it is kept
        quoted = "\n\n".join(kept_quotes)
        blocks.append(Block("text", f"Quoted earlier message:\n{quoted}", None, anchor=anchor))
    return blocks


class _TextOfHtml(HTMLParser):
    BREAKS = {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "head"):
            self.skip += 1
        elif tag in self.BREAKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self.skip = max(0, self.skip - 1)
        elif tag in self.BREAKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """An HTML mail body as plain lines (quoted <blockquote>s keep their line breaks)."""
    parser = _TextOfHtml()
    parser.feed(markup)
    parser.close()
    text = html.unescape("".join(parser.parts))
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
