"""Support-ticket exports in JSON, JSONL or CSV: one section per ticket thread, one per comment.

What counts as a ticket export (keys and columns are matched case-insensitively, with spaces and
dashes read as underscores):

- tickets with their comments: a JSON list of ticket objects, or an object holding that list
  under "tickets", "issues" or "items", or one ticket object per JSONL line. A ticket has an id
  (ticket_id, ticket, ticket_number, issue_id, issue_key, key or id) and a list of comments
  (comments, messages, replies or thread); it may have a subject (subject, title, summary), a
  description (description, body) with its reporter (reporter, author, created_by) and date
  (created_at, created, date), a status and a priority;
- one comment per row: CSV columns, JSON objects or JSONL lines with a ticket id (as above, but
  not a bare "id" or "key"), an author (author, from, user, commenter, created_by, sender) and a
  body (body, comment, text, message, content); optionally a date (date, created_at, created,
  timestamp, sent_at) and a subject. Rows are grouped by ticket id in file order.

A comment's author may be an object (its name, display_name, displayName, login or email is
used). Comments are numbered 1, 2, … in file order; a ticket's description is comment 0.
Anchors: {"ticket": id} on the thread heading, {"ticket", "comment", "author", "date"} on each
comment. JSON that is neither shape is refused as `unsupported_type`, saying what is expected.
"""

from __future__ import annotations

import json
from typing import Any

from stages.common.text import normalize_text
from stages.formats import Block, ParseError, ReadOptions

TICKET_ID_KEYS = ("ticket_id", "ticket", "ticket_number", "ticket_key", "issue_id", "issue_key")
OBJECT_ID_KEYS = TICKET_ID_KEYS + ("key", "id")
COMMENT_LIST_KEYS = ("comments", "messages", "replies", "thread")
SUBJECT_KEYS = ("subject", "title", "summary")
DESCRIPTION_KEYS = ("description", "body")
REPORTER_KEYS = ("reporter", "author", "created_by", "requester")
AUTHOR_KEYS = ("author", "from", "user", "commenter", "created_by", "sender")
BODY_KEYS = ("body", "comment", "text", "message", "content")
DATE_KEYS = ("date", "created_at", "created", "timestamp", "sent_at", "time")
DETAIL_KEYS = ("status", "priority")
LIST_KEYS = ("tickets", "issues", "items")
NAME_KEYS = ("name", "display_name", "displayname", "login", "email")

NOT_TICKETS = (
    "JSON that is not a ticket export: expected tickets with an id (ticket_id/id/key) and "
    "comments [{author, date, body}], or comments with ticket_id, author and body, one per "
    "object or JSONL line (see stages/formats/tickets.py)"
)


def _key(name: Any) -> str:
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def _pick(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if record.get(key) not in (None, "", []):
            return record[key]
    return None


def is_ticket_header(columns: list[str]) -> bool:
    """CSV columns of a ticket export: a ticket id, an author and a body."""
    names = {_key(c) for c in columns}
    return all(names & set(keys) for keys in (TICKET_ID_KEYS, AUTHOR_KEYS, BODY_KEYS))


def read(data: bytes, options: ReadOptions) -> list[Block]:
    text = options.text(data)
    if options.path.lower().endswith(".jsonl"):
        records = _jsonl(text, options)
    else:
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}"
            raise ParseError("parse_error", f"invalid JSON at {where}: {exc.msg}") from exc
        records = _records(loaded)
    return thread_blocks(_threads(records), options)


def read_table_rows(rows: list[list[str]], options: ReadOptions) -> list[Block]:
    """A CSV whose first non-empty row is a ticket export's header: one comment per row."""
    rows = [row for row in rows if any(row)]
    header = [_key(c) for c in rows[0]]
    records = [dict(zip(header, row, strict=False)) for row in rows[1:]]
    return thread_blocks(_threads(records), options)


def _jsonl(text: str, options: ReadOptions) -> list[Any]:
    records, bad = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            bad.append(number)
    if bad and not records:
        raise ParseError("parse_error", f"invalid JSONL: no line is JSON (line {bad[0]} first)")
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (" …" if len(bad) > 5 else "")
        options.warn("invalid_lines", f"{len(bad)} lines are not JSON and were skipped: {shown}")
    return records


def _records(loaded: Any) -> list[Any]:
    if isinstance(loaded, dict):
        normalized = {_key(k): v for k, v in loaded.items()}
        listed = _pick(normalized, LIST_KEYS)
        return listed if isinstance(listed, list) else [loaded]
    if isinstance(loaded, list):
        return loaded
    raise ParseError("unsupported_type", NOT_TICKETS)


def _threads(records: list[Any]) -> list[dict[str, Any]]:
    """Tickets as {id, subject, details, comments: [{author, date, body, number}]}."""
    if not records or not all(isinstance(r, dict) for r in records):
        raise ParseError("unsupported_type", NOT_TICKETS)
    records = [{_key(k): v for k, v in r.items()} for r in records]
    if all(_pick(r, OBJECT_ID_KEYS) is not None and _comment_list(r) is not None for r in records):
        return [_ticket(r) for r in records]
    if all(
        _pick(r, TICKET_ID_KEYS) is not None and _pick(r, AUTHOR_KEYS) is not None for r in records
    ) and any(_pick(r, BODY_KEYS) is not None for r in records):
        return _grouped(records)
    if all(_pick(r, OBJECT_ID_KEYS) is not None and _pick(r, DESCRIPTION_KEYS) for r in records):
        return [_ticket(r) for r in records]  # tickets without comments yet
    raise ParseError("unsupported_type", NOT_TICKETS)


def _comment_list(record: dict[str, Any]) -> list[Any] | None:
    for key in COMMENT_LIST_KEYS:
        if isinstance(record.get(key), list):
            return record[key]
    return None


def _ticket(record: dict[str, Any]) -> dict[str, Any]:
    comments = []
    description = _pick(record, DESCRIPTION_KEYS)
    if description is not None:
        reporter = _pick(record, REPORTER_KEYS)
        comments.append(_comment({"body": description, "author": reporter, **_date(record)}, 0))
    for item in _comment_list(record) or []:
        item = {_key(k): v for k, v in item.items()} if isinstance(item, dict) else {"body": item}
        comments.append(_comment(item, len([c for c in comments if c["number"]]) + 1))
    return {
        "id": _scalar(_pick(record, OBJECT_ID_KEYS)),
        "subject": _scalar(_pick(record, SUBJECT_KEYS)),
        "details": {k: _scalar(record[k]) for k in DETAIL_KEYS if record.get(k)},
        "comments": comments,
    }


def _grouped(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    threads: dict[str, dict[str, Any]] = {}
    for record in records:
        ticket_id = _scalar(_pick(record, TICKET_ID_KEYS))
        thread = threads.setdefault(
            ticket_id, {"id": ticket_id, "subject": "", "details": {}, "comments": []}
        )
        thread["subject"] = thread["subject"] or _scalar(_pick(record, SUBJECT_KEYS))
        for key in DETAIL_KEYS:
            if record.get(key):
                thread["details"][key] = _scalar(record[key])
        thread["comments"].append(_comment(record, len(thread["comments"]) + 1))
    return list(threads.values())


def _date(record: dict[str, Any]) -> dict[str, Any]:
    date = _pick(record, DATE_KEYS)
    return {"date": date} if date is not None else {}


def _comment(record: dict[str, Any], number: int) -> dict[str, Any]:
    return {
        "number": number,
        "author": _name(_pick(record, AUTHOR_KEYS)),
        "date": _scalar(_pick(record, DATE_KEYS)),
        "body": normalize_text(_scalar(_pick(record, BODY_KEYS))),
    }


def _name(author: Any) -> str:
    if isinstance(author, dict):
        author = _pick({_key(k): v for k, v in author.items()}, NAME_KEYS)
    return _scalar(author)


def _scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return " ".join(normalize_text(str(value)).split()) if not isinstance(value, str) else value


def thread_blocks(threads: list[dict[str, Any]], options: ReadOptions) -> list[Block]:
    options.title_hint = options.stem or None
    blocks = []
    for thread in threads:
        ticket = {"ticket": thread["id"]}
        heading = f"Ticket {thread['id']}" + (
            f": {_line(thread['subject'])}" if thread["subject"] else ""
        )
        blocks.append(Block("heading", heading, None, depth=1, anchor=ticket))
        if thread["details"]:
            details = "; ".join(
                f"{k.capitalize()}: {_line(v)}" for k, v in thread["details"].items()
            )
            blocks.append(Block("text", details + ".", None, anchor=ticket))
        for comment in thread["comments"]:
            if not comment["body"]:
                continue
            anchor = {**ticket, "comment": comment["number"]}
            anchor.update({k: _line(comment[k]) for k in ("author", "date") if comment[k]})
            blocks.append(Block("heading", _comment_heading(comment), None, depth=2, anchor=anchor))
            blocks.append(Block("text", comment["body"], None, anchor=anchor))
    return blocks


def _comment_heading(comment: dict[str, Any]) -> str:
    name = "Description" if comment["number"] == 0 else f"Comment {comment['number']}"
    if comment["author"]:
        name += f" by {_line(comment['author'])}"
    return name + (f", {_line(comment['date'])}" if comment["date"] else "")


def _line(text: str) -> str:
    return " ".join(normalize_text(str(text)).split())
