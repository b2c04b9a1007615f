"""An identifier of a claim one or two characters off one a result holds: that identifier,
changed ("i-0c6b…" for the result's "i-0c4b…", "gmaql.com" for "gmail.com"), never a new one."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from stages.common import values

# an identifier as written: letters and digits together, or an address, at least this long
IDENT_TOKEN_RE = re.compile(r"(?<![\w@.\-/])[A-Za-z0-9][\w.\-/@]*[A-Za-z0-9]")
IDENT_MIN_CHARS = 6
NEAR_EDITS = 2  # an identifier this few edits from a result's, and not it, is that one changed


def edits(one: str, two: str, limit: int) -> int:
    """Levenshtein distance of two strings, counted up to `limit` + 1."""
    if abs(len(one) - len(two)) > limit:
        return limit + 1
    row = list(range(len(two) + 1))
    for i, a in enumerate(one, 1):
        prev, row[0] = row[0], i
        for j, b in enumerate(two, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (a != b))
        if min(row) > limit:
            return limit + 1
    return row[-1]


def changed_identifiers(
    claim: str,
    strings: list[Any],
    covered: Callable[[int, int], bool],
    context_words: set[str],
) -> list[tuple[str, Any, int, int]]:
    """(text, leaf, start, end) of each identifier of the claim (letters with digits, or an
    address) that no leaf (`strings`: leaves with a `value`) and no argument holds, a character
    or two away from one a leaf holds; `covered(start, end)`: the span is already checked."""
    found: list[tuple[str, Any, int, int]] = []
    idents = [(leaf, values.ident_key(leaf.value)) for leaf in strings]
    held = {key for _, key in idents}
    for match in IDENT_TOKEN_RE.finditer(claim):
        text = match.group(0).rstrip(".")
        if len(text) < IDENT_MIN_CHARS or covered(match.start(), match.end()):
            continue
        if not ("@" in text or (re.search(r"\d", text) and re.search(r"[A-Za-z]", text))):
            continue
        key = values.ident_key(text)
        if key in held or key in context_words or any(key in other for other in held):
            continue
        for leaf, other in idents:
            if len(other) >= IDENT_MIN_CHARS and edits(key, other, NEAR_EDITS) <= NEAR_EDITS:
                found.append((text, leaf, match.start(), match.start() + len(text)))
                break
    return found
