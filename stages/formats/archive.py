"""Office files are zip archives: refuse one that is not, or that unpacks far beyond the budget,
before a parser holds it in memory."""

from __future__ import annotations

import io
import zipfile

from stages.formats import ParseError

UNPACKED_PER_FILE_BYTE = 4  # an archive may unpack to this many times the file-size budget


def check_zip(data: bytes, member: str, kind: str, max_file_bytes: int) -> None:
    """`member` must be in the archive (e.g. "ppt/presentation.xml" for a .pptx)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            unpacked = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile as exc:
        raise ParseError("parse_error", f"not a {kind} (not a zip archive): {exc}") from exc
    if member not in names:
        raise ParseError("parse_error", f"not a {kind}: the zip has no {member}")
    limit = max_file_bytes * UNPACKED_PER_FILE_BYTE
    if unpacked > limit:
        raise ParseError(
            "too_complex",
            f"unpacks to {unpacked} bytes, over {UNPACKED_PER_FILE_BYTE} x "
            f"max_file_bytes={max_file_bytes}",
        )
