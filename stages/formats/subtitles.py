"""Transcripts: WebVTT (.vtt) and SubRip (.srt) with webvtt-py (MIT; pysrt is GPL, not used).

Consecutive cues of one speaker become one turn, "Ana: …", up to half a chunk; chunking then
groups turns into chunks. A turn's anchor is {"start", "end", "speaker"} over its cues, and each
cue keeps its own, so a citation names the seconds it quotes. The speaker is the WebVTT voice
(<v Ana>) or a leading "Ana:" in the cue text; a cue without one has no speaker.
"""

from __future__ import annotations

import io
import re
from typing import Any

from stages.common.text import normalize_text
from stages.formats import Block, ParseError, ReadOptions

# "Ana:", "Dr. Bo Lind:", "- ANA:" at the start of a cue: at most four words before the colon.
SPEAKER_RE = re.compile(r"^-?\s*([A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,3}):\s+(.+)$", re.DOTALL)
TAG_RE = re.compile(r"<[^>]+>")


def read(data: bytes, options: ReadOptions) -> list[Block]:
    import webvtt
    from webvtt.errors import MalformedFileError

    text = options.text(data)
    kind = "srt" if options.path.lower().endswith(".srt") else "vtt"
    try:
        captions = webvtt.WebVTT.from_buffer(io.StringIO(text), format=kind)
    except MalformedFileError as exc:
        raise ParseError("parse_error", f"not a valid {kind.upper()} file: {exc}") from exc
    cues = [cue for cue in (_cue(c) for c in captions) if cue["text"]]
    if not cues:
        raise ParseError("empty_document", f"the {kind.upper()} file holds no cues with text")
    options.title_hint = options.stem or None
    return [_turn_block(turn) for turn in turns(cues, max(options.chunk_size // 2, 100))]


def _cue(caption: Any) -> dict[str, Any]:
    text = " ".join(normalize_text(TAG_RE.sub("", caption.text)).split())
    speaker = caption.voice
    if not speaker:
        match = SPEAKER_RE.match(text)
        if match:
            speaker, text = match.group(1), match.group(2)
    return {"start": caption.start, "end": caption.end, "speaker": speaker, "text": text}


def turns(cues: list[dict[str, Any]], max_chars: int) -> list[list[dict[str, Any]]]:
    """Consecutive cues of one speaker, split where a turn would outgrow `max_chars`."""
    grouped: list[list[dict[str, Any]]] = []
    for cue in cues:
        last = grouped[-1] if grouped else None
        if (
            last
            and last[-1]["speaker"] == cue["speaker"]
            and sum(len(c["text"]) + 1 for c in last) + len(cue["text"]) <= max_chars
        ):
            last.append(cue)
        else:
            grouped.append([cue])
    return grouped


def _turn_block(turn: list[dict[str, Any]]) -> Block:
    speaker = turn[0]["speaker"]
    prefix = f"{speaker}: " if speaker else ""
    anchors, offset = [], len(prefix)
    for cue in turn:
        anchors.append({"start": offset, "end": offset + len(cue["text"]), "anchor": _anchor(cue)})
        offset += len(cue["text"]) + 1
    text = prefix + " ".join(cue["text"] for cue in turn)
    whole = _anchor({**turn[0], "end": turn[-1]["end"]})
    return Block("text", text, None, anchor=whole, meta={"anchors": anchors})


def _anchor(cue: dict[str, Any]) -> dict[str, Any]:
    anchor = {"start": cue["start"], "end": cue["end"]}
    if cue["speaker"]:
        anchor["speaker"] = cue["speaker"]
    return anchor
