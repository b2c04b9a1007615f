"""Figure text, shared by every format that has pictures: only what is true offline (a caption,
an alt text written by the document's author), and, when an endpoint is configured, what a
vision model says about the picture, marked as coming from that model.

- `figure_text(caption, alt_texts)`: "Figure: <caption>. <alt text>." without saying anything
  twice; None when there is nothing to say (a picture is never described from nothing).
- `FigureDescriber`: asks the configured vision model (`stages.models.vision`, ingestion's
  `vision` block) for one document's figures, within `max_images`. The first failure is one
  warning for the document and ends asking; the figure keeps its offline description.
- `model_block(...)`: the model's description as a Block of its own beside the figure, whose
  anchor carries `origin: "model"` and the model's name, so a citation says who described it.
"""

from __future__ import annotations

import re
from typing import Any

from stages.common.text import normalize_text
from stages.formats import Block, ReadOptions

# A caption that already names itself ("Figure 2: ...", "Fig. 3", "Chart 1") needs no label.
CAPTION_RE = re.compile(r"^(figure|fig\.|chart|table)\s*\d*", re.IGNORECASE)


def _clean(text: str | None) -> str:
    return " ".join(normalize_text(text or "").split()).rstrip(". ")


def figure_text(caption: str | None, alt_texts: list[str] | tuple[str, ...] = ()) -> str | None:
    """One sentence or two for a picture from its caption and alt text(s); None with neither.

    An alt text that repeats the caption (or is contained in it) is not said twice."""
    caption = _clean(caption)
    parts = [caption] if caption else []
    for alt in map(_clean, alt_texts):
        if alt and not any(alt.casefold() in part.casefold() for part in parts):
            parts.append(alt)
    if not parts:
        return None
    text = ". ".join(parts) + "."
    return text if caption and CAPTION_RE.match(caption) else f"Figure: {text}"


def model_block(
    description: str, model: str, page: int | None, anchor: dict[str, Any] | None
) -> Block:
    """The vision model's description of a figure, said to be the model's."""
    return Block(
        "text",
        f"Figure (described by {model}): {description}.",
        page,
        anchor={**(anchor or {}), "model": model},
        origin="model",
        meta={"figure": True, "described_by": model},
    )


class FigureDescriber:
    """One document's figure descriptions from the configured vision model, if any.

    `describe(image)` returns the model's text, or None when no model is configured, the
    document's `max_images` are spent, or the endpoint failed (reported once, as a warning row:
    the figure keeps its offline description, nothing is made up in its place)."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        settings = getattr(options, "vision", None)
        self.settings = settings if settings is not None and settings.enabled else None
        self.left = self.settings.max_images if self.settings else 0
        self.failed = False
        self._client: Any = None
        self._over_budget = 0

    @property
    def active(self) -> bool:
        return self.settings is not None and not self.failed

    @property
    def model(self) -> str:
        return self.settings.model if self.settings else ""

    def describe(self, image: Any) -> str | None:
        if not self.active:
            return None
        if self.left <= 0:
            self._over_budget += 1
            return None
        self.left -= 1
        from stages.models.errors import LLMError
        from stages.models.vision import VisionClient

        try:
            if self._client is None:
                self._client = VisionClient(self.settings)
            return _clean(self._client.describe(image)) or None
        except (OSError, ValueError, SyntaxError):
            return (
                None  # a picture Pillow cannot decode (EMF, a broken file): not the model's fault
            )
        except LLMError as exc:
            self.failed = True
            self.options.warn(
                "vision_failed",
                f"vision model {self.model} at {self.settings.base_url} failed: "
                f"{str(exc)[:300]}; figures keep their offline description",
            )
            return None

    def close(self) -> None:
        """Report the figures left undescribed by the budget, and drop the HTTP client."""
        if self._over_budget:
            self.options.warn(
                "vision_budget",
                f"{self._over_budget} figures not sent to the vision model: over "
                f"vision.max_images={self.settings.max_images}",
            )
            self._over_budget = 0
        if self._client is not None:
            self._client.close()
            self._client = None
