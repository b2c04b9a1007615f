"""Bytes to text: a BOM, the configured encodings, else charset-normalizer's guess; binary
data is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stages.ingestion.config import IngestError

BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
BINARY_NUL_SHARE = 0.1  # more NUL bytes than this is binary data (or UTF-16 without a BOM)
MAX_CONTROL_SHARE = 0.02  # control characters in decoded text beyond this: not text


@dataclass
class Decoded:
    text: str
    encoding: str
    nul_bytes: int = 0  # stripped before decoding


def decode_text(
    data: bytes, encodings: Sequence[str], legacy: Sequence[str] = ("cp1252",)
) -> Decoded:
    """Bytes to text: a BOM, else the configured encodings, else charset-normalizer's guess.

    A few NUL bytes (a botched export) are stripped; many mean binary data.
    """
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return _checked(Decoded(data.decode(encoding).lstrip("\ufeff"), encoding))
            except UnicodeDecodeError as exc:
                raise IngestError("undecodable_text", f"{encoding} BOM but {exc.reason}") from exc
    nul_bytes = data.count(b"\x00")
    if nul_bytes > len(data) * BINARY_NUL_SHARE:
        guess = _guess(data, [])  # UTF-16/32 without a BOM is mostly NUL bytes
        if guess is None:
            raise IngestError("undecodable_text", f"binary data ({nul_bytes} NUL bytes), not text")
        return _checked(guess)
    if nul_bytes:
        data = data.replace(b"\x00", b"")
    for encoding in encodings:
        try:
            return _checked(Decoded(data.decode(encoding), encoding, nul_bytes))
        except (UnicodeDecodeError, LookupError):
            continue
    guess = _guess(data, legacy)
    if guess is None:
        raise IngestError(
            "undecodable_text", f"not valid {'/'.join(encodings)} and no text encoding fits"
        )
    return _checked(Decoded(guess.text, guess.encoding, nul_bytes))


def _guess(data: bytes, preferred: Sequence[str]) -> Decoded | None:
    """charset-normalizer's best guess, unless a preferred encoding reads the bytes as cleanly.

    On short texts the detector cannot tell cp1252 from cp1250 / cp775 (all read 'fÃ¼r' bytes
    without mess); the preferred legacy encoding breaks that tie, and loses to a cleaner guess
    (cp1251 Cyrillic read as cp1252 is full of mess).
    """
    from charset_normalizer import from_bytes
    from charset_normalizer.md import mess_ratio

    best = from_bytes(data).best()
    if best is None:
        return None  # no encoding reads these bytes as text: binary data
    guess_mess = mess_ratio(str(best), 1.0)
    for encoding in preferred:
        try:
            text = data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
        if mess_ratio(text, 1.0) <= guess_mess:
            return Decoded(text, encoding)
    return Decoded(str(best), best.encoding)


def _checked(decoded: Decoded) -> Decoded:
    text = decoded.text
    sample = text[:100_000]
    controls = sum(1 for ch in sample if ch < " " and ch not in "\t\n\r\f\v")
    if sample and controls > len(sample) * MAX_CONTROL_SHARE:
        raise IngestError(
            "undecodable_text", f"binary data: {controls} control characters, not text"
        )
    return decoded
