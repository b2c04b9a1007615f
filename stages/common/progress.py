"""Progress reporting for long loops inside stages, silent unless the caller turns it on.

Stages stay pure: the flow decides whether a bar is drawn (`enable(True)` from the CLI).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
_enabled = False


def enable(on: bool) -> None:
    global _enabled
    _enabled = on


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    if not _enabled:
        yield from items
        return
    from rich.progress import track as rich_track

    yield from rich_track(items, description=f"  {description}", total=total, transient=True)
