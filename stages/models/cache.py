"""Model replies cached on disk: small JSON files, one per key, written atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

from stages.models.files import atomic_write_text


class AnswerCache:
    """Small JSON files under `root`, one per key, written atomically. Unreadable entries miss."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    @staticmethod
    def key(**parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            atomic_write_text(self._path(key), json.dumps(value, sort_keys=True, default=str))
