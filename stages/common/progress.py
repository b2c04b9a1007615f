"""Progress reporting for long loops inside stages, silent unless the caller turns it on.

Stages stay pure: the flow decides whether a bar is drawn (`enable(True)` from the CLI).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
_enabled = False
_console: Any = None


def enable(on: bool, console: Any = None) -> None:
    """`console`: the rich Console whose live display draws the caller's own bars. A stage's bar
    then nests inside that display; on a console of its own, the two displays fought over the
    same lines and left blank lines above the stage bars."""
    global _enabled, _console
    _enabled, _console = on, console


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    if not _enabled:
        yield from items
        return
    from rich.progress import track as rich_track

    yield from rich_track(
        items, description=f"  {description}", total=total, transient=True, console=_console
    )
